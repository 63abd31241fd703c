/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A session's own reads of /dev/cuse (fuseio.c), for libfuse's custom I/O.
 * Each libfuse worker waits in an epoll set of its own: the /dev/cuse
 * descriptor, exclusive (a request wakes one idle worker), and the node's
 * stop eventfd, which wakes every one, so that the node stops every worker
 * of its session, and only those, from any thread.  One waiting worker at a
 * time waits with a bound: once FUSE_IDLE_MS pass with no request for it
 * while more than FUSE_IDLE_THREADS wait, it wakes the others and those
 * libfuse lets go leave; the heap is trimmed once no worker of any node has
 * read a request for as long.
 */
#ifndef CUSE_BSG_FUSEIO_H
#define CUSE_BSG_FUSEIO_H

#include <stdatomic.h>
#include <sys/types.h>

/*
 * Of libfuse's workers, how many may wait idle: one more, idle for
 * FUSE_IDLE_MS, leaves, so that a burst's workers and their descriptors go
 * back once it is over.
 */
#define FUSE_IDLE_THREADS 16
#define FUSE_IDLE_MS	  2000

struct fuseio {
	int stopfd;		 /* an eventfd, written once to stop: every worker returns */
	int idlefd;		 /* an eventfd: each write wakes every waiting worker once */
	atomic_bool timekeeper;	 /* a waiting worker waits with a bound */
	atomic_uint waiting;	 /* workers waiting for a request in fuseio_read() */
	atomic_bool trimmed;	 /* no request since the heap was last trimmed */
	atomic_ulong interrupts; /* INTERRUPTs read: at most as many late ones libfuse keeps */
};

/* The next request from fd into buf: its length, or -1 with errno (EINTR: stop). */
ssize_t fuseio_read(struct fuseio *io, int fd, void *buf, size_t len);

#endif /* CUSE_BSG_FUSEIO_H */
