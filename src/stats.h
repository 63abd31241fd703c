/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A device's figures for the live view and the SIGUSR1 line: its counters,
 * its commands and their data, the latency windows (lat.h), and the
 * device's identity as read once at start.  Any thread: the figures are
 * relaxed atomics, read without a lock.
 */
#ifndef CUSE_BSG_STATS_H
#define CUSE_BSG_STATS_H

#include "bsgdev.h"
#include "show.h"

/*
 * Read d's target's serial number (VPD page 0x80, as the kernel keeps it in
 * sysfs) and size (its disk's, if it has one) into d->serial and d->size,
 * as of now: once, at start.  Quiet: what cannot be read stays unknown.
 */
void stats_read_device(struct bsgdev *d);

/* Fill s's counters, figures and the device's identity from d. */
void stats_show(struct bsgdev *d, struct show_node *s);

#endif /* CUSE_BSG_STATS_H */
