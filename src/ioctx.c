// SPDX-License-Identifier: GPL-2.0-only
/*
 * One ioctl call's argument and answer: fetched and stored directly when
 * the caller is within reach, else through the kernel's retry exchange.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <string.h>

#include "bsgdev.h"
#include "ioctx.h"
#include "opener.h"
#include "uaccess.h"

void ioctx_reply(struct ioctx *x, int result)
{
	if (result < 0)
		fuse_reply_err(x->req, -result);
	else
		fuse_reply_ioctl(x->req, result, NULL, 0);
}

void ioctx_retry(struct ioctx *x, const struct iovec *in, size_t n_in, const struct iovec *out,
		 size_t n_out)
{
	stat_inc(x->o->d, STAT_IOCTL_RETRY);
	fuse_reply_ioctl_retry(x->req, in, n_in, out, n_out);
}

int ioctx_fetch(struct ioctx *x, void *buf, size_t len)
{
	struct iovec iov = { (void *)(uintptr_t)x->arg, len };

	if (x->direct) {
		int err = uaccess_read(x->tid, x->arg, buf, len);

		if (!err)
			return 1;
		if (err != -EPERM) {
			ioctx_reply(x, err);
			return 0;
		}
		x->direct = false; /* this caller is out of our reach: let the kernel copy */
	}
	if (x->in_len >= len) {
		memcpy(buf, x->in_buf, len);
		return 1;
	}
	ioctx_retry(x, &iov, 1, NULL, 0);
	return 0;
}

void ioctx_reply_out(struct ioctx *x, int result, const void *buf, size_t len)
{
	struct iovec iov = { (void *)(uintptr_t)x->arg, len };

	if (result < 0) {
		ioctx_reply(x, result);
		return;
	}
	if (x->direct) {
		int err = uaccess_write(x->tid, x->arg, buf, len);

		if (err != -EPERM) {
			ioctx_reply(x, err ? err : result);
			return;
		}
		x->direct = false;
	}
	if (x->out_len < len) {
		ioctx_retry(x, NULL, 0, &iov, 1);
		return;
	}
	fuse_reply_ioctl(x->req, result, buf, len);
}
