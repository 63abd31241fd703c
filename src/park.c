// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls parked on an opener's queue and their interrupts (park.h).
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bsgdev.h"
#include "opener.h"
#include "park.h"
#include "sigwatch.h"

/*
 * Give back p's charge: before its call is answered, as the answer may let
 * the file, and o, go.
 */
void park_uncharge(struct opener *o, struct parked *p)
{
	if (p && p->charged)
		opener_mem_uncharge(o, p->charged);
	if (p)
		p->charged = 0;
}

void park_dispose(struct parked *p)
{
	if (p && p->mapped)
		munmap(p, p->mapped);
	else
		free(p);
}

/* Free p, a call no list has any more, its call not answered yet. */
void park_free(struct opener *o, struct parked *p)
{
	park_uncharge(o, p);
	park_dispose(p);
}

/* Caller holds o->lock.  The call of req taken off list, or NULL. */
static struct parked *unpark(struct list_head *list, fuse_req_t req)
{
	struct parked *p;

	list_for_each_entry(p, list, node) {
		if (p->req == req) {
			list_del(&p->node);
			return p;
		}
	}
	return NULL;
}

/*
 * p, taken off its list, ends with EINTR: a signal.  Its call holds o only
 * until it is answered (the client may close the file then), so what ends
 * with it is done first.
 */
static void parked_eintr(struct opener *o, struct parked *p)
{
	stat_inc(o->d, STAT_INTERRUPT);
	park_uncharge(o, p);
	if (p->ops->ended)
		p->ops->ended(o, p);
	fuse_reply_err(p->req, EINTR);
	park_dispose(p);
}

/* Caller holds no lock: the call of req, taken off o's lists, or NULL if it is answered. */
static struct parked *unpark_any(struct opener *o, fuse_req_t req)
{
	struct parked *p;

	pthread_mutex_lock(&o->lock);
	p = unpark(&o->readers, req);
	if (!p)
		p = unpark(&o->writers, req);
	pthread_mutex_unlock(&o->lock);
	return p;
}

/* The signal watcher: a watched call's signal ends it now. */
static void parked_fired(fuse_req_t req, void *data)
{
	struct opener *o = data;
	struct parked *p = unpark_any(o, req);

	if (p)
		parked_eintr(o, p);
}

/* The call of req, parked on o's lists, or NULL.  Caller holds o->lock. */
static struct parked *find_parked(struct opener *o, fuse_req_t req)
{
	struct list_head *lists[] = { &o->readers, &o->writers };
	struct parked *p;

	for (unsigned i = 0; i < 2; i++)
		list_for_each_entry(p, lists[i], node)
			if (p->req == req)
				return p;
	return NULL;
}

/*
 * Caller holds o->lock: p, parked and interrupted, goes to the signal
 * watcher, which answers it once a signal that ends the call is pending
 * (sigwatch.h: a stop signal does not).  False if it cannot: the caller
 * answers EINTR now.
 */
static bool watch_parked(struct opener *o, struct parked *p)
{
	if (p->watched)
		return true;
	p->watch = (struct sigwatch_entry){
		.req = p->req, .tid = p->tid, .fire = parked_fired, .data = o
	};
	p->watched = !sigwatch_watch(&o->d->sigwatch, o->d->signal_ends, &p->watch);
	return p->watched;
}

/*
 * libfuse, with the request's lock held: a parked call got a signal.  One
 * that ends it is answered now; another is watched.
 */
static void parked_interrupted(fuse_req_t req, void *data)
{
	struct opener *o = data;
	struct parked *p;
	bool watched = false;

	if (!bsgdev_signal_ends(o->d, fuse_req_ctx(req)->pid)) {
		pthread_mutex_lock(&o->lock);
		p = find_parked(o, req);
		watched = !p || watch_parked(o, p);
		pthread_mutex_unlock(&o->lock);
	}
	if (watched)
		return;
	p = unpark_any(o, req);
	if (!p)
		return; /* being answered already */
	if (p->watched)
		sigwatch_cancel(&p->watch); /* watched since an earlier interrupt */
	parked_eintr(o, p);
}

/*
 * Park p on list (at its head if front), unless ready() says, under the
 * same lock that a completion or a freed slot takes, that it can go on now
 * (then the caller retries).  The interrupt callback goes first, so that a
 * signal arriving at any point is seen by one of the two: an interrupt that
 * came before p was parked is judged here.  ANSWERED: p got EINTR.
 */
enum park_result park_add(struct opener *o, struct list_head *list, struct parked *p, bool front)
{
	enum park_result res = PARKED;
	bool ends;

	fuse_req_interrupt_func(p->req, parked_interrupted, o);
	ends = fuse_req_interrupted(p->req) && bsgdev_signal_ends(o->d, p->tid);
	pthread_mutex_lock(&o->lock);
	if (ends) {
		res = ANSWERED;
	} else if (p->ops->ready(o, p)) {
		res = READY;
	} else {
		if (front)
			list_add(&p->node, list);
		else
			list_add_tail(&p->node, list);
		/* interrupted since the look above, or by a signal that ends nothing */
		if (fuse_req_interrupted(p->req) && !watch_parked(o, p)) {
			list_del(&p->node);
			res = ANSWERED;
		}
	}
	pthread_mutex_unlock(&o->lock);
	if (res == ANSWERED)
		parked_eintr(o, p);
	return res;
}

/* Taken off a list to be answered: wait out a running interrupt callback. */
void park_settle(struct fuse_req *req, struct sigwatch_entry *watch)
{
	fuse_req_interrupt_func(req, NULL, NULL);
	sigwatch_cancel(watch);
}

void park_taken(struct parked *p)
{
	park_settle(p->req, &p->watch);
	p->watched = false; /* only its own thread has it now */
}
