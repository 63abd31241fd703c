/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Making an open file's struct opener: its own channel to the target, the
 * sg settings' defaults and its asynchronous state.  Freed by its last
 * reference (async_opener_put()).
 */
#ifndef CUSE_BSG_OPENER_H
#define CUSE_BSG_OPENER_H

#include <stdbool.h>
#include <sys/types.h>

#include "daemon.h"

/*
 * A new opener of d for a file opened with flags by thread tid.  ident, if
 * not NULL, is the security context its read() and write() callers must
 * match, taken over; else tid's is read now.  shared: --shared-queue's.
 * 0, or the positive errno to answer the open with (logged).
 */
int opener_new(struct daemon *d, int flags, bool shared, pid_t tid, struct uaccess_ident *ident,
	       struct opener **ret);

#endif /* CUSE_BSG_OPENER_H */
