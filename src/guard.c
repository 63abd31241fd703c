// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watchdog: one thread per node, asleep until the oldest guarded copy
 * reaches its bound.  Every bound is its copy's start plus the same time,
 * so a copy begun later is never due sooner than the wake-up already set:
 * the thread is woken only from a sleep with nothing to watch, not once per
 * copy.  Guards are a list under one lock, newest at the
 * tail, so the oldest running one is found from the head.  Replies are made
 * outside the lock, from copies of the guard's fields: its owner may
 * return and unlink it as soon as the lock is let go.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <stdlib.h>

#include "deadline.h"
#include "guard.h"
#include "lockcheck.h"
#include "log.h"

/* COPYING: in a system call into the client; the watchdog may expire RUNNING or COPYING */
enum guard_state { GUARD_RUNNING, GUARD_COPYING, GUARD_DONE, GUARD_EXPIRED };

/* The calling thread's guard, from guard_begin() to guard_end(). */
static __thread struct guard *current;

static bool live(int state)
{
	return state == GUARD_RUNNING || state == GUARD_COPYING;
}

struct watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	 /* monotonic clock */
	struct list_head guards; /* protected by lock: oldest first */
	unsigned busy;		 /* protected by lock: guards registered */
	unsigned stalled;	 /* protected by lock: of which past the bound */
	/* protected by lock: expired guards whose EFAULT is being sent, the
	 * session still needed for it even if their copies have ended */
	unsigned answering;
	pthread_cond_t answered; /* answering fell to 0 */
	bool idle;		 /* protected by lock: asleep with no bound to wake at */
	bool stop;		 /* protected by lock */
	unsigned timeout_ms;
	const char *name;
};

/* Caller holds lock: the first running guard past its bound at now, or NULL; *next its bound otherwise. */
static struct guard *expired(struct watchdog *w, const struct timespec *now, struct timespec *next,
			     bool *have_next)
{
	struct guard *g;

	assert_held(&w->lock);
	*have_next = false;
	list_for_each_entry(g, &w->guards, node) {
		struct timespec end = g->start;

		if (!live(atomic_load(&g->state)))
			continue;
		timespec_add_ms(&end, w->timeout_ms);
		if (!timespec_before(now, &end))
			return g;
		*next = end;
		*have_next = true;
		return NULL; /* the oldest running one is not due: none is */
	}
	return NULL;
}

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	pthread_setname_np(pthread_self(), "bsg-watchdog"); /* top -H, ps -L */
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec now, next;
		struct guard *g;
		bool have_next;
		int expect;

		clock_gettime(CLOCK_MONOTONIC, &now);
		g = expired(w, &now, &next, &have_next);
		if (!g) {
			/* a guard begun meanwhile is due no sooner than next:
			 * only an idle watchdog needs a wake-up for it */
			w->idle = !have_next;
			if (have_next)
				pthread_cond_timedwait(&w->cond, &w->lock, &next);
			else
				pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		expect = atomic_load(&g->state);
		while (live(expect) &&
		       !atomic_compare_exchange_strong(&g->state, &expect, GUARD_EXPIRED))
			;
		if (live(expect)) {
			fuse_req_t req = g->req;
			int tid = g->tid;

			atomic_fetch_add(g->stuck, 1);
			w->stalled++;
			w->answering++;
			pthread_mutex_unlock(&w->lock);
			log_node(LOG_WARNING, w->name,
				 "tid %d: a copy to or from its memory did not end within %u ms: "
				 "EFAULT; its open file gets EFAULT until the copy ends",
				 tid, w->timeout_ms);
			fuse_reply_err(req, EFAULT);
			pthread_mutex_lock(&w->lock);
			if (--w->answering == 0)
				pthread_cond_broadcast(&w->answered);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int watchdog_new(unsigned timeout_ms, const char *name, struct watchdog **ret)
{
	struct watchdog *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	int err;

	if (!w)
		return -ENOMEM;
	w->timeout_ms = timeout_ms;
	w->name = name;
	w->idle = true;
	list_init(&w->guards);
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&w->answered, NULL);
	err = pthread_create(&w->thread, NULL, watchdog_main, w);
	if (err) {
		pthread_cond_destroy(&w->answered);
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -err;
	}
	*ret = w;
	return 0;
}

unsigned watchdog_busy(struct watchdog *w)
{
	unsigned n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	/* an EFAULT being sent ends soon, and needs the session until then */
	while (w->answering)
		pthread_cond_wait(&w->answered, &w->lock);
	n = w->busy;
	pthread_mutex_unlock(&w->lock);
	return n;
}

unsigned watchdog_stalled(struct watchdog *w)
{
	unsigned n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	n = w->stalled;
	pthread_mutex_unlock(&w->lock);
	return n;
}

unsigned watchdog_free(struct watchdog *w)
{
	unsigned left;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	left = watchdog_busy(w);
	if (left)
		return left; /* their threads still hold guards in the list */
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->answered);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return 0;
}

int guard_begin(struct watchdog *w, struct guard *g, fuse_req_t req, int tid, atomic_uint *stuck)
{
	if (!w)
		return 0;
	if (atomic_load(stuck))
		return -EFAULT;
	*g = (struct guard){ .req = req, .tid = tid, .stuck = stuck };
	/* a tick early at most: precise enough for a timeout */
	clock_gettime(TICK_CLOCK, &g->start);
	pthread_mutex_lock(&w->lock);
	list_add_tail(&g->node, &w->guards);
	w->busy++;
	if (w->idle) {
		w->idle = false;
		pthread_cond_signal(&w->cond); /* it slept with nothing to watch */
	}
	pthread_mutex_unlock(&w->lock);
	current = g;
	return 0;
}

bool guard_end(struct watchdog *w, struct guard *g)
{
	int expect = GUARD_RUNNING;
	bool mine;

	if (!w)
		return true;
	current = NULL;
	pthread_mutex_lock(&w->lock);
	mine = atomic_compare_exchange_strong(&g->state, &expect, GUARD_DONE);
	list_del(&g->node);
	w->busy--;
	if (!mine)
		w->stalled--;
	pthread_mutex_unlock(&w->lock);
	if (!mine)
		atomic_fetch_sub(g->stuck, 1); /* answered by the watchdog: no longer stuck */
	return mine;
}

int guard_copy_enter(void)
{
	int expect = GUARD_RUNNING;

	if (!current)
		return 0;
	return atomic_compare_exchange_strong(&current->state, &expect, GUARD_COPYING) ? 0
										       : -EFAULT;
}

bool guard_copy_leave(void)
{
	int expect = GUARD_COPYING;

	return !current || atomic_compare_exchange_strong(&current->state, &expect, GUARD_RUNNING);
}
