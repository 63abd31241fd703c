/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The read(), write() and ioctl() calls of a node's files (calls.c): each
 * runs holding a share of threads, its file's and its user's (share.h), and
 * past either waits parked, with a copy of what libfuse gave and no thread,
 * until a share comes free; then it runs on a thread of the elastic pool.
 * So a copy of a client's memory that stalls holds only the staller's
 * share.  A parked call keeps the interrupt protocol of every waiting call
 * (intr.h): a signal that ends it answers it EINTR, another has it watched.
 */
#ifndef CUSE_BSG_CALLS_H
#define CUSE_BSG_CALLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct bsgdev;
struct fuse_req; /* libfuse's fuse_req_t */
struct node_file;
struct share;
struct share_file;

enum call_kind { CALL_READ, CALL_WRITE, CALL_IOCTL };

/* One read(), write() or ioctl() call as libfuse hands it over. */
struct call {
	enum call_kind kind;
	struct fuse_req *req;
	struct node_file *nf; /* its file, as fi->fh says */
	int fflags; /* fi->flags: the file's flags now (O_NONBLOCK set by fcntl() shows) */
	int cmd;
	void *arg;
	unsigned flags;
	const void *buf; /* write()'s bytes, ioctl()'s in_buf */
	size_t len;	 /* their length; read()'s size */
	size_t out_len;	 /* ioctl()'s out_bufsz */
};

/* What a node gives its calls. */
struct calls {
	struct bsgdev *d;    /* its memory bound, elastic pool, signal watcher and counters */
	struct share *share; /* the daemon's shares */
	/* Run c on this thread, which holds its shares. */
	void (*run)(struct calls *cs, struct call *c);
	atomic_bool warned_park; /* a call refused its parking by a memory bound was logged */
};

/*
 * Run c, whose file counts in sf, holding a share; or park it past one
 * (answered ENOMEM past the memory bounds, EINTR by a signal that ends it).
 */
void calls_enter(struct calls *cs, struct call *c, struct share_file *sf);

/* The calls parked on cs's session, which has ended: ENODEV, as for a device gone. */
void calls_drain(struct calls *cs);

#endif /* CUSE_BSG_CALLS_H */
