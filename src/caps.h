/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Keeping only the capabilities the daemon needs once it has started.
 * Capabilities belong to threads: call before any thread is created, so
 * that every thread inherits the reduced set.
 */
#ifndef CUSE_BSG_CAPS_H
#define CUSE_BSG_CAPS_H

#include <stddef.h>
#include <stdint.h>

#define CAPS_BIT(cap) (1ull << (cap))

/*
 * Reduce the effective and permitted sets to keep (what of it we have),
 * the inheritable and ambient sets to nothing, and the bounding set to
 * keep where we may.  Returns 0 or -errno.
 */
int caps_limit(uint64_t keep);

/* "CAP_SYS_RAWIO CAP_SYS_PTRACE" for a set, into buf. */
void caps_names(uint64_t set, char *buf, size_t len);

#endif /* CUSE_BSG_CAPS_H */
