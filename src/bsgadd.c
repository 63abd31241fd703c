// SPDX-License-Identifier: GPL-2.0-only
/*
 * BSG_IOC_ADD's argument decoded.  The 2004 bsg took the argument as a
 * descriptor number and looked it up with fget(), which never returns an
 * O_PATH file: such a descriptor only names a file, so binding it would pin
 * the daemon's descriptors to a device its caller may not open.
 */
#include "bsgadd.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>

int bsgadd_decode(uint64_t arg, int *ret_fd)
{
	/* a 64-bit caller's negative int arrives sign-extended: no descriptor */
	if (arg > INT_MAX)
		return -ENODEV;
	*ret_fd = (int)arg;
	return 0;
}

int bsgadd_check(const struct bsgadd_file *f, const char **why)
{
	if (f->flags & O_PATH) {
		*why = "is an O_PATH descriptor, which opens nothing";
		return -EBADF;
	}
	if (!S_ISCHR(f->mode) && !S_ISBLK(f->mode)) {
		*why = "is not an sg, bsg or SCSI disk node";
		return -EINVAL;
	}
	*why = NULL;
	return 0;
}

const char *bsgadd_mode_name(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return "read-only";
	case O_WRONLY:
		return "write-only";
	case O_RDWR:
		return "read-write";
	default:
		return "ioctl-only"; /* 3: neither FMODE_READ nor FMODE_WRITE */
	}
}
