// SPDX-License-Identifier: GPL-2.0-only
/*
 * SCSI devices through libudev: enumeration, then a monitor read on the
 * watch's own thread.  The monitor listens to udevd's events where udevd
 * runs (its rules have run, so the node has its final owner and mode) and
 * to the kernel's otherwise.  The watch's libudev objects are used by one
 * thread at a time: the caller's until the thread starts, then the
 * thread's.
 */
#include <errno.h>
#include <libudev.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "udev.h"

struct uev_watch {
	const char *subsystem;
	uev_event_fn *fn;
	void *arg;
	struct udev *udev;
	struct udev_monitor *mon;
	int stopfd;
	pthread_t thread;
};

int uev_parse_hctl(const char *s, unsigned ret[4])
{
	unsigned v[4];
	int used = -1;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	if (sscanf(s, "%u:%u:%u:%u%n", &v[0], &v[1], &v[2], &v[3], &used) != 4 || used < 0 ||
	    s[used])
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (*p != ':' && (*p < '0' || *p > '9'))
			return -EINVAL; /* no signs, no spaces */
	memcpy(ret, v, sizeof(v));
	return 0;
}

int uev_node_name(const char *hctl, char *buf, size_t len)
{
	unsigned v[4];
	int n;

	if (uev_parse_hctl(hctl, v) < 0)
		return -EINVAL;
	n = snprintf(buf, len, "bsg/%u:%u:%u:%u-cuse", v[0], v[1], v[2], v[3]);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

enum uev_action uev_classify(const char *want, const char *action, const char *subsystem,
			     const char *devtype, const char *devnode, const char *hctl)
{
	unsigned v[4];

	if (!subsystem || strcmp(subsystem, want))
		return UEV_IGNORE;
	if (devtype && !strcmp(devtype, "partition"))
		return UEV_IGNORE; /* SG_IO on a partition reaches the whole disk */
	if (action && !strcmp(action, "remove"))
		return UEV_REMOVE;
	if (action && strcmp(action, "add"))
		return UEV_IGNORE; /* change, bind, move: the node stays as it is */
	if (!devnode || !*devnode || uev_parse_hctl(hctl, v) < 0)
		return UEV_IGNORE; /* no node, or not a SCSI device's (a transport's bsg) */
	return UEV_ADD;
}

const char *uev_pick_subsystem(const char *sysfs)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/class/scsi_generic", sysfs);
	return access(path, F_OK) == 0 ? "scsi_generic" : "bsg";
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Classify dev (action NULL: enumerated) and hand it on if it matters. */
static void classify_device(struct uev_watch *w, struct udev_device *dev, const char *action)
{
	struct udev_device *sdev;
	struct uev_event *e;
	const char *hctl = NULL;
	enum uev_action a;

	sdev = udev_device_get_parent_with_subsystem_devtype(dev, "scsi", "scsi_device");
	if (sdev)
		hctl = udev_device_get_sysname(sdev); /* owned by dev */
	a = uev_classify(w->subsystem, action, udev_device_get_subsystem(dev),
			 udev_device_get_devtype(dev), udev_device_get_devnode(dev), hctl);
	if (a == UEV_IGNORE)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->action = a;
	copy_str(e->syspath, sizeof(e->syspath), udev_device_get_syspath(dev));
	copy_str(e->devnode, sizeof(e->devnode), udev_device_get_devnode(dev));
	copy_str(e->hctl, sizeof(e->hctl), hctl);
	w->fn(e, w->arg);
	free(e);
}

static int enumerate(struct uev_watch *w)
{
	struct udev_enumerate *en = udev_enumerate_new(w->udev);
	struct udev_list_entry *l;
	int err;

	if (!en)
		return -ENOMEM;
	err = udev_enumerate_add_match_subsystem(en, w->subsystem);
	if (!err)
		err = udev_enumerate_scan_devices(en);
	udev_list_entry_foreach(l, err ? NULL : udev_enumerate_get_list_entry(en))
	{
		struct udev_device *dev =
			udev_device_new_from_syspath(w->udev, udev_list_entry_get_name(l));

		if (!dev)
			continue; /* gone since the scan: its remove event follows */
		classify_device(w, dev, NULL);
		udev_device_unref(dev);
	}
	udev_enumerate_unref(en);
	return err < 0 ? err : 0;
}

static void *watch_main(void *arg)
{
	struct uev_watch *w = arg;
	struct pollfd p[2] = {
		{ .fd = udev_monitor_get_fd(w->mon), .events = POLLIN },
		{ .fd = w->stopfd, .events = POLLIN },
	};

	pthread_setname_np(pthread_self(), "bsg-udev"); /* top -H, ps -L */
	for (;;) {
		struct udev_device *dev;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		dev = udev_monitor_receive_device(w->mon);
		if (!dev)
			continue; /* a message that was not for us */
		classify_device(w, dev, udev_device_get_action(dev));
		udev_device_unref(dev);
	}
}

/* A monitor of source's events ("udev" or "kernel") on subsystem, receiving. */
static int monitor_new(struct udev *udev, const char *source, const char *subsystem,
		       struct udev_monitor **ret)
{
	struct udev_monitor *mon;
	int err;

	mon = udev_monitor_new_from_netlink(udev, source);
	if (!mon)
		return errno ? -errno : -ENOMEM;
	err = udev_monitor_filter_add_match_subsystem_devtype(mon, subsystem, NULL);
	if (!err)
		err = udev_monitor_enable_receiving(mon);
	if (err < 0) {
		udev_monitor_unref(mon);
		return err;
	}
	*ret = mon;
	return 0;
}

/* udevd's events once its rules ran; the kernel's where no udevd runs. */
static int open_monitor(struct uev_watch *w)
{
	const char *source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";

	return monitor_new(w->udev, source, w->subsystem, &w->mon);
}

int uev_watch_new(const char *subsystem, uev_event_fn *fn, void *arg, struct uev_watch **ret)
{
	struct uev_watch *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->subsystem = subsystem;
	w->fn = fn;
	w->arg = arg;
	w->stopfd = eventfd(0, EFD_CLOEXEC);
	w->udev = udev_new();
	if (w->stopfd < 0 || !w->udev) {
		err = errno ? -errno : -ENOMEM;
		goto err_free;
	}
	/* listening first: a device that comes during the scan is not missed */
	err = open_monitor(w);
	if (!err)
		err = enumerate(w);
	if (!err)
		err = -pthread_create(&w->thread, NULL, watch_main, w);
	if (err)
		goto err_free;
	*ret = w;
	return 0;
err_free:
	udev_monitor_unref(w->mon);
	udev_unref(w->udev);
	if (w->stopfd >= 0)
		close(w->stopfd);
	free(w);
	return err;
}

void uev_watch_free(struct uev_watch *w)
{
	if (!w)
		return;
	if (eventfd_write(w->stopfd, 1) < 0)
		abort(); /* an eventfd takes this write */
	pthread_join(w->thread, NULL);
	udev_monitor_unref(w->mon);
	udev_unref(w->udev);
	close(w->stopfd);
	free(w);
}

/* The node's device in class cuse, "bsg/sg0-cuse" (sysfs: bsg!sg0-cuse). */
static bool node_processed(struct udev *udev, const char *sysname)
{
	struct udev_device *dev = udev_device_new_from_subsystem_sysname(udev, "cuse", sysname);
	bool done = dev && udev_device_get_is_initialized(dev) > 0;

	udev_device_unref(dev);
	return done;
}

int uev_wait_node(const char *name, int timeout_ms)
{
	const char *sysname = name; /* libudev's sysname has '/' where sysfs has '!' */
	struct udev *udev;
	struct udev_monitor *mon = NULL;
	struct timespec now, end;
	int err = 0;

	if (access("/run/udev/control", F_OK) < 0)
		return 1;
	udev = udev_new();
	if (!udev)
		return -ENOMEM;
	/* listening first, then the database: an event between them is not missed */
	err = monitor_new(udev, "udev", "cuse", &mon);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (timeout_ms % 1000) * 1000000L;
	for (bool done = !err && node_processed(udev, sysname); !err && !done;) {
		struct pollfd p = { .fd = udev_monitor_get_fd(mon), .events = POLLIN };
		struct udev_device *dev;
		long left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&p, 1, left) < 0) {
			err = errno == EINTR ? 0 : -errno;
			continue;
		}
		dev = p.revents & POLLIN ? udev_monitor_receive_device(mon) : NULL;
		if (dev && !strcmp(udev_device_get_sysname(dev), sysname)) {
			const char *action = udev_device_get_action(dev);

			done = !action || strcmp(action, "remove");
		}
		udev_device_unref(dev);
	}
	udev_monitor_unref(mon);
	udev_unref(udev);
	return err;
}
