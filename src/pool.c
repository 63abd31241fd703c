// SPDX-License-Identifier: GPL-2.0-only
/*
 * Worker pool: one mutex, one condition variable, a FIFO list.
 * Stopped with a flag and a broadcast; workers drain the queue first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "deadline.h"
#include "lockcheck.h"
#include "pool.h"

struct worker {
	struct pool *pool;
	pthread_t thread;
	unsigned slot;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct list_head queue; /* protected by lock */
	unsigned backlog;	/* protected by lock */
	bool stopping;		/* protected by lock */
	/* elastic: threads made as needed, detached; the last one out frees */
	bool elastic;
	unsigned max;	     /* elastic: threads at most */
	unsigned live, idle; /* protected by lock: elastic threads, of which waiting */
	pthread_cond_t gone; /* elastic: live went to 0 */
	bool orphaned;	     /* protected by lock: pool_free() gave up waiting */
	unsigned nthreads;
	struct worker workers[];
};

/* A waiting thread leaves the idle count with the queue's head, if any; unlocks p. */
static struct pool_work *stop_waiting(struct pool *p)
{
	struct pool_work *w;

	assert_held(&p->lock);
	p->idle--;
	w = list_first_entry_or_null(&p->queue, struct pool_work, node);
	if (w) {
		list_del(&w->node);
		p->backlog--;
	}
	pthread_mutex_unlock(&p->lock);
	return w;
}

static struct pool_work *take(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->idle++;
	while (list_empty(&p->queue) && !p->stopping)
		pthread_cond_wait(&p->wake, &p->lock);
	return stop_waiting(p);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct pool_work *w;

	pthread_setname_np(pthread_self(), "bsg-pool"); /* top -H, ps -L */
	while ((w = take(wk->pool)))
		w->run(w, wk->slot);
	return NULL;
}

int pool_new(unsigned nthreads, struct pool **ret)
{
	struct pool *p;
	unsigned i;
	int err;

	if (!nthreads)
		return -EINVAL;
	p = calloc(1, sizeof(*p) + nthreads * sizeof(p->workers[0]));
	if (!p)
		return -ENOMEM;
	list_init(&p->queue);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	for (i = 0; i < nthreads; i++) {
		p->workers[i].pool = p;
		p->workers[i].slot = i;
		err = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
		if (err)
			goto err_stop;
		p->nthreads++;
	}
	*ret = p;
	return 0;

err_stop:
	pool_free(p);
	return -err;
}

/*
 * An elastic thread's next item, or NULL: the pool stops, or the thread
 * waited POOL_IDLE_MS for one while more than POOL_KEEP_IDLE waited.
 */
static void idle_bound(struct timespec *end)
{
	*end = deadline_ms(CLOCK_MONOTONIC, POOL_IDLE_MS);
}

static struct pool_work *take_elastic(struct pool *p)
{
	struct timespec end;

	idle_bound(&end);
	pthread_mutex_lock(&p->lock);
	p->idle++;
	while (list_empty(&p->queue) && !p->stopping) {
		if (pthread_cond_timedwait(&p->wake, &p->lock, &end) != ETIMEDOUT ||
		    !list_empty(&p->queue))
			continue;
		if (p->idle > POOL_KEEP_IDLE)
			break;
		idle_bound(&end); /* kept: another period, not a wait that has already ended */
	}
	return stop_waiting(p);
}

static void *elastic_main(void *arg)
{
	struct pool *p = arg;
	struct pool_work *w;
	bool last_frees;

	pthread_setname_np(pthread_self(), "bsg-elastic"); /* top -H, ps -L */
	while ((w = take_elastic(p)))
		w->run(w, 0);
	pthread_mutex_lock(&p->lock);
	last_frees = --p->live == 0 && p->orphaned;
	pthread_cond_broadcast(&p->gone);
	pthread_mutex_unlock(&p->lock);
	if (last_frees) {
		pthread_cond_destroy(&p->gone);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	return NULL;
}

int pool_new_elastic(unsigned max, struct pool **ret)
{
	pthread_condattr_t ca;
	struct pool *p;

	if (!max)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	list_init(&p->queue);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* take_elastic()'s idle bound */
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&p->gone, NULL);
	p->elastic = true;
	p->max = max;
	*ret = p;
	return 0;
}

/* Caller holds lock: a thread for an elastic pool with none waiting. */
static void elastic_grow(struct pool *p)
{
	pthread_attr_t attr;
	pthread_t t;

	assert_held(&p->lock);
	if (p->idle >= p->backlog || p->live >= p->max)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, elastic_main, p) == 0)
		p->live++;
	pthread_attr_destroy(&attr);
}

void pool_submit(struct pool *p, struct pool_work *w)
{
	pthread_mutex_lock(&p->lock);
	list_add_tail(&w->node, &p->queue);
	p->backlog++;
	if (p->elastic)
		elastic_grow(p);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

/* Threads an elastic pool has now (a fixed pool: its workers). */
unsigned pool_threads(struct pool *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->elastic ? p->live : p->nthreads;
	pthread_mutex_unlock(&p->lock);
	return n;
}

unsigned pool_backlog(struct pool *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->backlog;
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* Elastic: wait for the threads to leave, at most ms; else leave them the pool. */
static bool elastic_free(struct pool *p, unsigned ms)
{
	struct timespec end;
	bool all_gone;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000 + 1;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->wake);
	while (p->live && pthread_cond_timedwait(&p->gone, &p->lock, &end) == 0)
		;
	all_gone = p->live == 0;
	p->orphaned = !all_gone;
	pthread_mutex_unlock(&p->lock);
	if (!all_gone)
		return false;
	pthread_cond_destroy(&p->gone);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return true;
}

bool pool_free_within(struct pool *p, unsigned ms)
{
	if (!p)
		return true;
	if (p->elastic)
		return elastic_free(p, ms);
	pool_free(p);
	return true;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	if (p->elastic) {
		elastic_free(p, 24u * 3600 * 1000);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->workers[i].thread, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
