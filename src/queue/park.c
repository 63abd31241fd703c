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
#include "intr.h"
#include "lockcheck.h"
#include "opener.h"
#include "park.h"

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

/* Caller holds o->lock.  Is p on one of o's lists? */
static bool listed(struct opener *o, const struct parked *p)
{
	struct list_head *lists[] = { &o->readers, &o->writers };
	struct parked *it;

	assert_held(&o->lock);
	for (unsigned i = 0; i < 2; i++)
		list_for_each_entry(it, lists[i], node)
			if (it == p)
				return true;
	return false;
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

/*
 * A signal ends p's call (intr.h: the interrupt callback, the signal
 * watcher, or park_add() after the registration): taken off its list and
 * answered EINTR if it is listed; else marked, for park_add(), which has
 * not listed it yet (a call taken off to be answered ignores the mark).
 */
static void parked_end(struct intr *in)
{
	struct parked *p = container_of(in, struct parked, intr);
	struct opener *o = p->o;
	bool mine;

	pthread_mutex_lock(&o->lock);
	mine = listed(o, p);
	if (mine)
		list_del(&p->node);
	else
		p->ended = true;
	pthread_mutex_unlock(&o->lock);
	if (mine)
		parked_eintr(o, p);
}

/*
 * Park p on list (at its head if front), unless ready() says, under the
 * same lock that a completion or a freed slot takes, that it can go on now
 * (then the caller retries).  The interrupt callback goes first, so that a
 * signal arriving at any point is seen: one that ends the call before it is
 * listed marks it, and it is answered here.  ANSWERED: p got EINTR.
 */
enum park_result park_add(struct opener *o, struct list_head *list, struct parked *p, bool front)
{
	enum park_result res = PARKED;

	p->o = o;
	p->ended = false;
	intr_init(&p->intr, parked_end, o->d, p->req, p->tid);
	intr_arm(&p->intr);
	pthread_mutex_lock(&o->lock);
	if (p->ended)
		res = ANSWERED;
	else if (p->ops->ready(o, p))
		res = READY;
	else if (front)
		list_add(&p->node, list);
	else
		list_add_tail(&p->node, list);
	pthread_mutex_unlock(&o->lock);
	if (res == PARKED)
		return res; /* p may be answered already */
	intr_settle(&p->intr);
	if (res == ANSWERED)
		parked_eintr(o, p);
	return res;
}

void park_taken(struct parked *p)
{
	intr_settle(&p->intr);
}
