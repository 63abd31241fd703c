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
#include "intr.h"
#include "list.h"
#include "pool.h"
#include "share.h"

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
	struct intr intr;      /* its interrupt (intr.h) */
	uint64_t charged;      /* bytes charged to the process's memory bound */
	uint64_t user_charged; /* and to its user's (share_mem_charge()) */
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
	intr_settle(&p->intr);
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

/*
 * A signal ends the call (intr.h): as sg's own sleeps, one that runs a
 * handler or kills; another left it parked, watched.  Answered here only if
 * it is parked: a call not parked yet is marked, and park() answers it.
 */
static void parked_end(struct intr *in)
{
	struct call_parked *p = container_of(in, struct call_parked, intr);

	if (share_cancel(p->cs->share, &p->w))
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
	intr_init(&p->intr, parked_end, cs->d, c->req, fuse_req_ctx(c->req)->pid);
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
	intr_arm(&p->intr);
	state = share_park(cs->share, &p->w);
	if (state == SHARE_PARKED)
		return; /* p is the share's now */
	intr_settle(&p->intr);
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

		intr_settle(&p->intr);
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
