/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's ioctls: SG_IO and the informational sg ioctls, answered as
 * drivers/scsi/sg.c answers them.  Runs on a libfuse worker thread; never
 * blocks (SG_IO goes to the pool).
 */
#ifndef CUSE_BSG_IOCTL_H
#define CUSE_BSG_IOCTL_H

#include <stddef.h>

struct ioctx;

/*
 * Answer one FUSE_IOCTL round for cmd.  Always replies, now or later.  An
 * ioctl that takes or hands over the file's commands is first checked as
 * read() and write() are (opener_check_caller()).
 */
void ioctl_dispatch(struct ioctx *x, unsigned cmd, unsigned flags);

/*
 * The numbers of those ioctls, from the table: at most max into cmds; the
 * count, which may be more.
 */
size_t ioctl_owner_cmds(unsigned *cmds, size_t max);

/* cmd's name if it is one of those, else NULL. */
const char *ioctl_owner_name(unsigned cmd);

#endif /* CUSE_BSG_IOCTL_H */
