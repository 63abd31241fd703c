/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Synchronous SG_IO through the node, v3 or v4.  A command moves:
 * ioctl callback (decode, copy in) -> the same libfuse worker, or the pool
 * when too many of those are busy -> SG_IO on the target, copy out, reply.  The caller stays blocked in its ioctl throughout, so its
 * memory may be touched until the reply; an interrupt whose signal ends the
 * call (intr.h) ends it with EINTR at once and the command's result is
 * dropped, never copied (or kept for read(), under SG_SET_KEEP_ORPHAN).
 */
#ifndef CUSE_BSG_SGIO_H
#define CUSE_BSG_SGIO_H

struct ioctx;

/* Handle one FUSE_IOCTL round of SG_IO.  Always replies, now or later. */
void sgio_ioctl(struct ioctx *x);

#endif /* CUSE_BSG_SGIO_H */
