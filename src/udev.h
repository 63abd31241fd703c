/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SCSI devices as udev sees them: the ones present, then each one that
 * appears or goes away.  A watch enumerates the devices of one subsystem
 * (scsi_generic, or bsg where sg is not loaded) on the caller's thread,
 * then runs a thread of its own that reads libudev's monitor and hands
 * every event that matters to a function, on that thread.  It is stopped
 * through an eventfd and joined.  The classification and naming rules are
 * pure, for the unit tests.  The prefix is uev_: udev_ is libudev's.
 */
#ifndef CUSE_BSG_UDEV_H
#define CUSE_BSG_UDEV_H

#include <limits.h>
#include <stddef.h>

enum uev_action { UEV_IGNORE, UEV_ADD, UEV_REMOVE };

/* One device event, copied out of libudev. */
struct uev_event {
	enum uev_action action;
	char syspath[PATH_MAX]; /* names the device in its add and its remove */
	char devnode[128];	/* add: /dev/sgN or /dev/bsg/H:C:T:L */
	char hctl[64];		/* add: the SCSI device's H:C:T:L */
};

/*
 * What an event means: want is the subsystem watched; action is NULL for a
 * device found by enumeration; hctl is the sysname of the scsi_device above
 * the node, or NULL where there is none (not SCSI).  A partition, a node
 * that is not a SCSI device's, and any other action are ignored.
 */
enum uev_action uev_classify(const char *want, const char *action, const char *subsystem,
			     const char *devtype, const char *devnode, const char *hctl);

/* "H:C:T:L", four non-negative numbers and nothing else: 0, or -EINVAL. */
int uev_parse_hctl(const char *s, unsigned ret[4]);

/*
 * The node's name under /dev for the SCSI device hctl: "bsg/H:C:T:L-cuse",
 * what the one-target mode names /dev/bsg/H:C:T:L's node.  0, or -EINVAL
 * (not an H:C:T:L), or -ENAMETOOLONG.
 */
int uev_node_name(const char *hctl, char *buf, size_t len);

/* The subsystem to watch under sysfs root ("/sys"): scsi_generic, or bsg without sg. */
const char *uev_pick_subsystem(const char *sysfs);

struct uev_watch;

/* Called for every add and remove, first for each device present. */
typedef void uev_event_fn(const struct uev_event *e, void *arg);

/*
 * Watch subsystem: call fn for each device present (on this thread, before
 * returning), then for each event, on the watch's thread.  0 or -errno.
 */
int uev_watch_new(const char *subsystem, uev_event_fn *fn, void *arg, struct uev_watch **ret);

/* Stop and join the thread; no call of fn runs after.  NULL is fine. */
void uev_watch_free(struct uev_watch *w);

/*
 * Wait until udevd has processed the CUSE node /dev/NAME (e.g. "bsg/sg0-cuse"):
 * its rules have run, so the node has the mode, owner and links they give.
 * 1 at once when no udevd runs (nothing will change the node), 0 once
 * processed, -ETIMEDOUT after timeout_ms, or another -errno.
 */
int uev_wait_node(const char *name, int timeout_ms);

#endif /* CUSE_BSG_UDEV_H */
