/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One ioctl call as libfuse hands it over, and the ways to answer it: its
 * argument fetched or stored directly (uaccess.h) when the caller is within
 * reach, else through the kernel's ioctl retry exchange.  On the libfuse
 * worker that took the call, or the thread the call was handed to.
 */
#ifndef CUSE_BSG_IOCTX_H
#define CUSE_BSG_IOCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct fuse_req; /* libfuse's fuse_req_t */

struct opener;

/* One ioctl call as libfuse hands it over. */
struct ioctx {
	struct fuse_req *req;
	struct opener *o;
	uint64_t arg;
	const void *in_buf;
	size_t in_len, out_len;
	pid_t tid;
	bool direct;
};

/*
 * Fetch len bytes at arg.  1: they are in buf.  0: the request was answered
 * (a retry round or an error), return without replying.
 */
int ioctx_fetch(struct ioctx *x, void *buf, size_t len);

/* Answer with result and len bytes for *arg.  Returns nothing: always replies. */
void ioctx_reply_out(struct ioctx *x, int result, const void *buf, size_t len);

/* Ask the kernel for another round with these regions of the caller's memory. */
void ioctx_retry(struct ioctx *x, const struct iovec *in, size_t n_in, const struct iovec *out,
		 size_t n_out);

/* Answer with a negative errno or a non-negative ioctl result. */
void ioctx_reply(struct ioctx *x, int result);

#endif /* CUSE_BSG_IOCTX_H */
