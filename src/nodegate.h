/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The credential gate (gate.h) for one node's device d (nodegate.c): armed
 * for the node's number before any open of it is answered, then proved
 * live on the node itself, which settles where sg's test of d's calls is
 * made (d->cred, d->verdicts).  Each logs what it did under d's name.
 */
#ifndef CUSE_BSG_NODEGATE_H
#define CUSE_BSG_NODEGATE_H

#include <stdbool.h>
#include <sys/types.h>

struct bsgdev;
struct gate;

/* Arm g for dev, the number of /dev/NAME (d->name).  0, or -errno (logged). */
int nodegate_arm(struct gate *g, struct bsgdev *d, dev_t dev);

/*
 * Once the node answers opens: prove g live (the first node of a process),
 * and set d->cred and d->verdicts to what checks its calls.  0, or -errno
 * (logged) where required: then the node must not serve; not required, a
 * gate that is not live leaves the /proc check.
 */
int nodegate_prove(struct gate *g, bool required, struct bsgdev *d, dev_t dev);

#endif /* CUSE_BSG_NODEGATE_H */
