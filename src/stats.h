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
 * Where the precise clock costs a system call (stats_read_device()), the
 * device's own time of one command in this many is taken: its two reads
 * a command were a tenth of the daemon's time under qemu's hpet.
 */
#define STATS_DEV_TIME_EVERY 8

/*
 * Read d's target's serial number (VPD page 0x80, as the kernel keeps it in
 * sysfs) and size (its disk's, if it has one) into d->serial and d->size,
 * as of now: once, at start.  Quiet: what cannot be read stays unknown.
 * And how often its own time is taken (d->dev_time_every), said in the log.
 */
void stats_read_device(struct bsgdev *d);

/* Fill s's counters, figures and the device's identity from d. */
void stats_show(struct bsgdev *d, struct show_node *s);

#endif /* CUSE_BSG_STATS_H */
