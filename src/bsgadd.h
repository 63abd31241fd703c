/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * BSG_IOC_ADD's argument and the file it names, decoded for control.c.
 * Pure: the caller has the ioctl's argument and, once it holds a duplicate
 * of the caller's descriptor, what fcntl(F_GETFL) and fstat() say of it.
 * No system calls, no allocation.
 */
#ifndef CUSE_BSG_BSGADD_H
#define CUSE_BSG_BSGADD_H

#include <stdint.h>

/* What the daemon learnt of the descriptor it took. */
struct bsgadd_file {
	int flags;     /* fcntl(F_GETFL): its open(2) flags */
	uint32_t mode; /* fstat(): st_mode */
};

/*
 * The descriptor number of the caller's that the argument arg names, into
 * *ret_fd: 0, or -ENODEV for one no process can have (the 2004 bsg's
 * answer when fget() found none).
 */
int bsgadd_decode(uint64_t arg, int *ret_fd);

/*
 * May the file f be bound?  0, or the errno with why (a static string that
 * follows the file's name in a sentence):
 * -EBADF for an O_PATH descriptor, which opens nothing (fget() refuses
 * one), -EINVAL for what is no device node at all.  Which devices a
 * command reaches is target.c's to say.
 */
int bsgadd_check(const struct bsgadd_file *f, const char **why);

/* "read-only", "write-only", "read-write" or "ioctl-only", for flags' access mode. */
const char *bsgadd_mode_name(int flags);

#endif /* CUSE_BSG_BSGADD_H */
