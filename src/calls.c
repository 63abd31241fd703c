// SPDX-License-Identifier: GPL-2.0-only
/*
 * A node's calls, within their shares of threads or parked past them
 * (calls.h).  A parked call is the share's (share_park()) until a share
 * comes free, a signal ends it, or the session ends: whoever takes it from
 * the share (share_cancel(), share_drain()) answers it.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsgdev.h"
#include "calls.h"
#include "list.h"
#include "park.h"
#include "pool.h"
#include "share.h"
#include "sigwatch.h"

/*
 * A call past its file's or its user's share of threads (share.h): parked
 * with a copy of what libfuse gave, and no thread, until a share comes
 * free; then run on a thread of the elastic pool.
 */
struct call_parked {
	struct share_wait w;
	struct pool_work work;
	struct calls *cs;
	struct call c;
	struct sigwatch_entry watch; /* interrupted by a signal that ends nothing (sigwatch.h) */
	uint64_t charged;	     /* bytes charged to the process's memory bound */
	uint64_t user_charged;	     /* and to its user's (share_mem_charge()) */
	char buf[];
};

/* Run c on this thread, which holds its share, then give the share back. */
static void run_held(struct calls *cs, struct call *c, struct share_call *held)
{
	share_set_current(held);
	cs->run(cs, c);
	share_set_current(NULL);
	share_end(held);
}

static void parked_free(struct call_parked *p)
{
	if (p->charged)
		atomic_fetch_sub(&p->cs->d->mem->used, p->charged);
	if (p->user_charged)
		share_mem_uncharge(p->cs->share, p->w.uid, p->user_charged);
	free(p);
}

/* On a thread of the elastic pool, holding the share the call was given. */
static void parked_run(struct pool_work *work, unsigned slot)
{
	struct call_parked *p = container_of(work, struct call_parked, work);

	(void)slot;
	/* waits out an interrupt callback running now; it sees the call running */
	park_settle(p->c.req, &p->watch);
	run_held(p->cs, &p->c, &p->w.call);
	parked_free(p);
}

static void parked_resume(struct share_wait *w)
{
	struct call_parked *p = container_of(w, struct call_parked, w);

	pool_submit(p->cs->d->serve, &p->work);
}

/* The call of p, parked, is the caller's now (share_cancel()): EINTR. */
static void parked_eintr(struct call_parked *p)
{
	stat_inc(p->cs->d, STAT_INTERRUPT);
	fuse_reply_err(p->c.req, EINTR);
	parked_free(p);
}

/* The signal watcher's: a signal that ends the call is pending now. */
static void parked_fired(fuse_req_t req, void *data)
{
	struct call_parked *p = data;

	if (!share_cancel(p->cs->share, &p->w))
		return;				  /* running, or answered by whoever cancelled it */
	fuse_req_interrupt_func(req, NULL, NULL); /* waits out the interrupt callback */
	parked_eintr(p);
}

/*
 * Called by libfuse with its request lock held; only a parked call is
 * answered here.  As sg's own sleeps, only a signal that runs a handler or
 * kills ends it; after another (a stop) it stays parked, watched so that a
 * later one ends it (FUSE sends one interrupt per request).
 */
static void parked_interrupted(fuse_req_t req, void *data)
{
	struct call_parked *p = data;

	if (!bsgdev_signal_ends(p->cs->d, fuse_req_ctx(req)->pid)) {
		p->watch = (struct sigwatch_entry){
			.req = req, .tid = fuse_req_ctx(req)->pid, .fire = parked_fired, .data = p
		};
		if (!sigwatch_watch(&p->cs->d->sigwatch, p->cs->d->signal_ends, &p->watch))
			return; /* p may be answered (freed) by the watcher already */
		p->watch = (struct sigwatch_entry){ 0 };
	}
	if (!share_cancel(p->cs->share, &p->w))
		return;
	parked_eintr(p);
}

/*
 * A copy of c to park, charged to the process's and uid's memory bounds;
 * NULL past either, *which saying whose.
 */
static struct call_parked *parked_new(struct calls *cs, const struct call *c, struct share_file *sf,
				      uid_t uid, const char **which)
{
	struct mem_budget *m = cs->d->mem;
	struct share *s = cs->share;
	size_t len = c->kind == CALL_READ ? 0 : c->len;
	uint64_t size = sizeof(struct call_parked) + len;
	struct call_parked *p = NULL;

	*which = "the daemon's";
	if (m && atomic_fetch_add(&m->used, size) + size > m->max) {
		atomic_fetch_sub(&m->used, size);
		return NULL;
	}
	if (s && share_mem_charge(s, uid, size)) {
		*which = "its user's";
	} else {
		p = malloc(size);
		if (!p && s)
			share_mem_uncharge(s, uid, size);
	}
	if (!p) {
		if (m)
			atomic_fetch_sub(&m->used, size);
		return NULL;
	}
	p->cs = cs;
	p->c = *c;
	p->charged = m ? size : 0;
	p->user_charged = s ? size : 0;
	if (len)
		memcpy(p->buf, c->buf, len);
	p->c.buf = p->buf;
	p->w = (struct share_wait){
		.uid = uid, .f = sf, .owner = cs, .state = SHARE_NEW, .resume = parked_resume
	};
	p->work.run = parked_run;
	p->watch = (struct sigwatch_entry){ 0 };
	return p;
}

/* c is past its share: park it, or run it if a share came free meanwhile. */
static void park(struct calls *cs, struct call *c, struct share_file *sf, uid_t uid)
{
	const char *which;
	struct call_parked *p = parked_new(cs, c, sf, uid, &which);
	int state;

	if (!p) {
		if (!atomic_exchange(&cs->warned_park, true))
			bsgdev_warn(cs->d,
				    "uid %u: a call past its share of threads is past %s "
				    "memory bound, parked: ENOMEM",
				    (unsigned)uid, which);
		else
			bsgdev_debug(
				cs->d,
				"uid %u: a call past its share of threads: no memory to park it",
				(unsigned)uid);
		fuse_reply_err(c->req, ENOMEM);
		return;
	}
	fuse_req_interrupt_func(c->req, parked_interrupted, p);
	state = share_park(cs->share, &p->w);
	if (state == SHARE_PARKED)
		return; /* p is the share's now */
	park_settle(c->req, &p->watch);
	if (state == SHARE_RUNNING)
		run_held(cs, &p->c, &p->w.call);
	else
		fuse_reply_err(c->req, EINTR);
	parked_free(p);
}

void calls_drain(struct calls *cs)
{
	struct list_head out = LIST_HEAD_INIT(out);
	struct share_wait *w, *next;

	share_drain(cs->share, cs, &out);
	list_for_each_entry_safe(w, next, &out, node) {
		struct call_parked *p = container_of(w, struct call_parked, w);

		park_settle(p->c.req, &p->watch);
		fuse_reply_err(p->c.req, ENODEV);
		parked_free(p);
	}
}

void calls_enter(struct calls *cs, struct call *c, struct share_file *sf)
{
	uid_t uid = fuse_req_ctx(c->req)->uid;
	struct share_call held;

	if (share_enter(sf, uid, &held))
		run_held(cs, c, &held);
	else
		park(cs, c, sf, uid);
}
