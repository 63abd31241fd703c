// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's device file (devnode.h): devtmpfs makes it, udevd runs its
 * rules on it, then --mode, --owner and --group apply.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "devnode.h"
#include "log.h"
#include "udev.h"

#define NODE_WAIT_MS 5000
#define NODE_UDEV_S  60 /* for udevd to run its rules on the new node */

/* devtmpfs creates the node asynchronously; sysfs names it with '!' for '/'. */
static int wait_for_node(const char *name, dev_t *ret)
{
	char devpath[160], syspath[200], kname[128];
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned maj, min;
	struct stat st;

	snprintf(devpath, sizeof(devpath), "/dev/%s", name);
	snprintf(kname, sizeof(kname), "%s", name);
	for (char *p = kname; *p; p++)
		if (*p == '/')
			*p = '!';
	snprintf(syspath, sizeof(syspath), "/sys/class/cuse/%s/dev", kname);
	for (int waited = 0; waited < NODE_WAIT_MS; waited += 10) {
		FILE *f = fopen(syspath, "re");
		int k = f ? fscanf(f, "%u:%u", &maj, &min) : 0;

		if (f)
			fclose(f);
		if (k == 2 && stat(devpath, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(maj, min)) {
			*ret = st.st_rdev;
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	return -ENODEV;
}

int devnode_wait(const char *name, dev_t *ret)
{
	int err = wait_for_node(name, ret);

	if (err)
		log_node(LOG_ERR, name,
			 "/dev/%s did not appear: the kernel refused the device (name or number "
			 "taken? see dmesg)",
			 name);
	return err;
}

static int set_access(const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	char devpath[160];

	if (mode == (mode_t)-1 && uid == (uid_t)-1 && gid == (gid_t)-1)
		return 0;
	snprintf(devpath, sizeof(devpath), "/dev/%s", name);
	/* the mode first, while the node is root's: no CAP_FOWNER needed */
	if (mode != (mode_t)-1 && chmod(devpath, mode) < 0)
		return -errno;
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(devpath, uid, gid) < 0)
		return -errno;
	return 0;
}

int devnode_wait_udev(const char *name)
{
	int err = uev_wait_node(name, NODE_UDEV_S * 1000);

	if (err == -ETIMEDOUT)
		log_node(LOG_ERR, name,
			 "udev has not processed /dev/%s within %d s: its mode, owner and links "
			 "are not set; giving up",
			 name, NODE_UDEV_S);
	else if (err < 0)
		log_node(LOG_ERR, name, "cannot learn whether udev has processed /dev/%s: %s", name,
			 strerror(-err));
	else if (err > 0)
		log_node(LOG_DEBUG, name, "no udevd runs: /dev/%s stays as created", name);
	return err < 0 ? err : 0;
}

int devnode_set_access(const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	int err = set_access(name, mode, uid, gid);

	if (err)
		log_node(LOG_ERR, name, "cannot set owner and mode of /dev/%s: %s", name,
			 strerror(-err));
	return err;
}
