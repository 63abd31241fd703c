// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copy jobs (copyjob.h): a copy into a parked caller's memory, run on the
 * elastic pool holding a share of its file's and user's threads, or parked
 * without a thread until a share comes free.
 *
 * Locking: o->lock guards o->copy_waits and a job's listed; the share's
 * own lock its parked waits.
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "bsgdev.h"
#include "copyjob.h"
#include "list.h"
#include "lockcheck.h"
#include "opener.h"
#include "pool.h"
#include "share.h"

static void copy_unlist(struct copy_job *j)
{
	struct opener *o = j->o;

	pthread_mutex_lock(&o->lock);
	if (j->listed)
		list_del(&j->node);
	j->listed = false;
	pthread_mutex_unlock(&o->lock);
}

static void copy_run(struct pool_work *w, unsigned slot)
{
	struct copy_job *j = container_of(w, struct copy_job, work);
	struct share_call call = j->w.call;

	(void)slot;
	copy_unlist(j);
	j->run(j);
	share_end(&call);
}

/* A share came free for j, parked: to the elastic pool (share_end()'s thread). */
static void copy_resume(struct share_wait *w)
{
	struct copy_job *j = container_of(w, struct copy_job, w);

	pool_submit(j->o->d->serve, &j->work);
}

static void copy_dropped(struct copy_job *j)
{
	copy_unlist(j);
	j->drop(j);
}

/* The node whose pools d's copies use (a binding's: its control node's) is ending. */
static bool copies_ending(const struct bsgdev *d)
{
	return atomic_load(&(d->home ? d->home : d)->serve_ending);
}

void copyjob_submit(struct copy_job *j)
{
	struct opener *o = j->o;
	bool park = false;

	j->work.run = copy_run;
	j->w = (struct share_wait){ 0 };
	j->listed = false;
	pthread_mutex_lock(&o->lock);
	/* released: its calls have all been answered, and o->sf may be freed
	 * (the reader a completion saw may have taken EINTR since) */
	if (o->released) {
		pthread_mutex_unlock(&o->lock);
		j->drop(j);
		return;
	}
	if (o->sf && !share_enter(o->sf, o->uid, &j->w.call)) {
		j->w = (struct share_wait){ .uid = o->uid,
					    .f = o->sf,
					    .owner = o->d->serve,
					    .state = SHARE_NEW,
					    .resume = copy_resume };
		list_add_tail(&j->node, &o->copy_waits);
		j->listed = true;
		park = true;
	}
	pthread_mutex_unlock(&o->lock);
	if (park) {
		switch (share_park(o->share, &j->w)) {
		case SHARE_PARKED:
			/* parked after copyjob_drain() looked: run it now, unshared */
			if (!copies_ending(o->d) || !share_cancel(o->share, &j->w))
				return; /* j is the share's now */
			j->w.call = (struct share_call){ 0 };
			break;
		case SHARE_CANCELLED:
			copy_dropped(j); /* released */
			return;
		default:
			break; /* a share came free meanwhile: j holds it */
		}
	}
	pool_submit(o->d->serve, &j->work);
}

void copyjob_drain(struct bsgdev *d, struct share *s)
{
	struct list_head out = LIST_HEAD_INIT(out);
	struct share_wait *w, *next;

	if (!d->serve)
		return;
	atomic_store(&d->serve_ending,
		     true);		/* before the share's lock: copyjob_submit() sees it */
	share_drain(s, d->serve, &out); /* its bindings' too: they share the pool */
	list_for_each_entry_safe(w, next, &out, node) {
		list_del(&w->node);
		copy_dropped(container_of(w, struct copy_job, w));
	}
}

void copyjob_cancel(struct opener *o, struct list_head *dropped)
{
	struct copy_job *j, *jn;

	assert_held(&o->lock);
	list_for_each_entry_safe(j, jn, &o->copy_waits, node) {
		if (!share_cancel(o->share, &j->w))
			continue; /* running now, or parking: share_park() says cancelled */
		list_del(&j->node);
		list_add_tail(&j->node, dropped);
	}
}

void copyjob_drop(struct list_head *dropped)
{
	struct copy_job *j, *jn;

	list_for_each_entry_safe(j, jn, dropped, node)
		copy_dropped(j); /* still listed: unlisted from dropped */
}
