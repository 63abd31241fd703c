/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fixed set of worker threads taking work items in FIFO order.  The item
 * is owned by the pool from pool_submit() until its run() is called on a
 * worker; run() then owns it.  Each worker has a slot number 0..n-1.
 */
#ifndef CUSE_BSG_POOL_H
#define CUSE_BSG_POOL_H

#include <stdbool.h>

#include "list.h"

struct pool_work {
	struct list_head node; /* the pool's, while queued */
	void (*run)(struct pool_work *w, unsigned slot);
};

struct pool;

/* Start nthreads workers.  0 or -errno. */
int pool_new(unsigned nthreads, struct pool **ret);

/*
 * An elastic pool: a thread is made whenever an item comes and none waits,
 * up to max; they are detached, and an item that never returns holds only
 * its own thread.  A thread that waited POOL_IDLE_MS for an item leaves,
 * unless it is one of the last POOL_KEEP_IDLE waiting.  Slot numbers are
 * all 0.  0 or -errno.
 */
#define POOL_IDLE_MS   2000
#define POOL_KEEP_IDLE 2
int pool_new_elastic(unsigned max, struct pool **ret);

/* Queue w; some worker will call w->run(w, slot). */
void pool_submit(struct pool *p, struct pool_work *w);

/* Number of items queued but not yet taken by a worker. */
unsigned pool_backlog(struct pool *p);

/* Threads it has now: an elastic pool's come and go. */
unsigned pool_threads(struct pool *p);

/* Run what is queued, stop and join the workers, free.  NULL is fine. */
void pool_free(struct pool *p);

/*
 * The same, but an elastic pool's threads get at most ms to leave: false
 * if some did not (items that never return), and the last of them frees
 * the pool.
 */
bool pool_free_within(struct pool *p, unsigned ms);

#endif /* CUSE_BSG_POOL_H */
