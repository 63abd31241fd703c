/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A node's device file, /dev/NAME, once CUSE has registered the device
 * (devnode.c).  Each returns 0 or -errno, and logs why not.
 */
#ifndef CUSE_BSG_DEVNODE_H
#define CUSE_BSG_DEVNODE_H

#include <sys/types.h>

/* devtmpfs creates it asynchronously: wait until it is there, its number in *ret. */
int devnode_wait(const char *name, dev_t *ret);

/*
 * udevd still has to run its rules on it (mode, group, links).  The node
 * is up only after that, so that a client started once we are ready finds
 * the node as the rules make it.
 */
int devnode_wait_udev(const char *name);

/*
 * --mode, --owner and --group, once udev's rules have run: the options win.
 * (mode_t)-1, (uid_t)-1, (gid_t)-1: leave it.
 */
int devnode_set_access(const char *name, mode_t mode, uid_t uid, gid_t gid);

#endif /* CUSE_BSG_DEVNODE_H */
