/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A node's CUSE session (session.c): a /dev/cuse descriptor of its own,
 * read by libfuse's multi-threaded loop on a thread of the session.  Its
 * workers read requests through fuseio.c, so that session_stop() ends
 * every worker of this session, and only those, from any thread.
 *
 * Lifetime: session_init() (empty), session_new(), session_start(); then
 * session_stop() from any thread, and the over function on the session's
 * thread once its loop has returned; session_join() from another thread,
 * and session_free().  The session's callbacks get the struct session as
 * their userdata: its owner embeds it, and finds itself with container_of.
 */
#ifndef CUSE_BSG_SESSION_H
#define CUSE_BSG_SESSION_H

#include <pthread.h>

#include "fuseio.h"

/*
 * libfuse workers a session at most.  Many, so that workers held in a copy
 * of a client's memory that stalls (guard.h) leave plenty for everyone else.
 */
#define FUSE_THREADS 128

struct cuse_lowlevel_ops;
struct fuse_session;
struct session;

/* Called on the session's thread once its loop is over: ret is 0, or -errno. */
typedef void session_over_fn(struct session *s, int ret);

struct session {
	struct fuse_session *se; /* NULL: none yet, or destroyed */
	struct fuseio io;	 /* its workers' reads, and the stop eventfd */
	pthread_t thread;
	session_over_fn *over;
};

/* An empty session: session_free() of it does nothing. */
void session_init(struct session *s);

/*
 * The session of /dev/NAME (char 21:sg_minor, or a number CUSE picks for
 * sg_minor -1) on a /dev/cuse descriptor of its own, ops's callbacks
 * called with s as userdata.  0, or -errno and s left empty.
 */
int session_new(struct session *s, const char *name, int sg_minor,
		const struct cuse_lowlevel_ops *ops);

/* Run the loop on a thread of its own, which calls over once it is over.  0 or -errno. */
int session_start(struct session *s, session_over_fn *over);

/* End the loop: every worker leaves.  Any thread; neither call it makes blocks.  Once. */
void session_stop(struct session *s);

/* Wait up to ms for the session's thread to end.  0, or -ETIMEDOUT. */
int session_join(struct session *s, unsigned ms);

/* Close /dev/cuse: the kernel removes the device.  From over, or once joined. */
void session_destroy(struct session *s);

/* Destroy what is left, close the stop eventfd.  Never while the thread runs. */
void session_free(struct session *s);

#endif /* CUSE_BSG_SESSION_H */
