/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's ioctls: SG_IO and the informational sg ioctls, answered as
 * drivers/scsi/sg.c answers them.  Runs on a libfuse worker thread; never
 * blocks (SG_IO goes to the pool).
 */
#ifndef CUSE_BSG_IOCTL_H
#define CUSE_BSG_IOCTL_H

struct ioctx;

/* Answer one FUSE_IOCTL round for cmd.  Always replies, now or later. */
void ioctl_dispatch(struct ioctx *x, unsigned cmd, unsigned flags);

#endif /* CUSE_BSG_IOCTL_H */
