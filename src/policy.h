/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's access policy, live: one object that every node and control
 * binding checks commands against, from any thread, and that the main
 * thread replaces whole when SIGHUP reloads --policy.  A command is checked
 * against one policy, the old or the new, never a mix: a check holds a read
 * lock only for the length of filter_check_as(), which is pure and calls
 * nothing out; a replacement copies the new table under the write lock.
 * Nothing is freed while a check may read it.
 */
#ifndef CUSE_BSG_POLICY_H
#define CUSE_BSG_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"

/* For policy_check(): the kernel rule the policy file names ('kernel'). */
#define POLICY_KERNEL_OWN (-1)

struct policy;

/* A live policy holding a copy of *first. */
int policy_new(const struct filter_policy *first, struct policy **ret);

/* Once no thread can check against p any more.  NULL is fine. */
void policy_free(struct policy *p);

/* Every check from now on is against a copy of *next.  Any thread. */
void policy_replace(struct policy *p, const struct filter_policy *next);

/*
 * filter_check_as() against the current policy, with kernel's rule where
 * it leaves an opcode to the kernel: an enum filter_kernel, or
 * POLICY_KERNEL_OWN.  A NULL p is the kernel's bsg rule.  Any thread.
 */
int policy_check(struct policy *p, int kernel, const uint8_t *cdb, unsigned cdb_len,
		 const struct filter_ctx *ctx);

/*
 * Read and parse the policy file path into *ret (written only on success).
 * A regular file only: it is opened O_NONBLOCK, so that a FIFO cannot hang
 * the caller, and refused unless fstat() says S_IFREG.  -errno, and one
 * line in why naming the file (and the line, for a malformed one).
 */
int policy_load(const char *path, struct filter_policy *ret, char *why, size_t why_len);

#endif /* CUSE_BSG_POLICY_H */
