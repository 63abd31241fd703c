/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sg v4 driver's asynchronous ioctls (README), on the opener's command
 * queue (cmdq_i.h): SG_IOSUBMIT (version 4) and SG_IOSUBMIT_V3 (3) take one
 * header or, for v4, an array; SG_IORECEIVE and SG_IORECEIVE_V3 answer with
 * completions of the caller's process, now or parked; SG_IOABORT.  Each
 * answers x's request, now or later.
 */
#ifndef CUSE_BSG_SGV4_H
#define CUSE_BSG_SGV4_H

struct ioctx;

void sgv4_iosubmit(struct ioctx *x, unsigned version);
void sgv4_ioreceive(struct ioctx *x, unsigned version);
void sgv4_ioabort(struct ioctx *x);

#endif /* CUSE_BSG_SGV4_H */
