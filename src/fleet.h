/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --all: a node for every SCSI device, following udev.  Devices come as
 * events on the udev watch's thread, which queues them and calls wake();
 * the owner's thread then calls fleet_work(), which makes, fails and frees
 * the nodes.  Every call but wake() and fleet_each() is made from that one
 * thread.
 */
#ifndef CUSE_BSG_FLEET_H
#define CUSE_BSG_FLEET_H

#include "node.h"

struct fleet;

/*
 * Watch subsystem's devices (uev_pick_subsystem()), enumerating those
 * there are as events; wake(arg) whenever fleet_work() has something to
 * do (from any thread).  0 or -errno.
 */
int fleet_new(const struct node_config *cfg, const char *subsystem, void (*wake)(void *arg),
	      void *arg, struct fleet **ret);

/* Serve the devices that came, fail those that went, free the nodes whose sessions ended. */
void fleet_work(struct fleet *f);

/* A stats line per node. */
void fleet_log_stats(struct fleet *f);

/*
 * fn(node, arg) for each node, from any thread (the live view's): the
 * nodes stay while it runs, and it must not call back into f.
 */
void fleet_each(struct fleet *f, void (*fn)(struct node *n, void *arg), void *arg);

/* Stop the watch, every node at once, then wait for each and free it all. */
void fleet_free(struct fleet *f);

#endif /* CUSE_BSG_FLEET_H */
