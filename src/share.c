// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shares: a user's entry lives while it has a file open, a call running
 * or a call parked, in a small hash table under the one lock.  Resumed calls
 * are handed to their resume() outside the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lockcheck.h"
#include "share.h"

#define BUCKETS 64

struct share_user {
	struct list_head node; /* protected by the share's lock: in its bucket */
	uid_t uid;
	unsigned files, busy, parked; /* protected by the share's lock */
	uint64_t mem;		      /* protected by the share's lock: bytes held */
	struct list_head waiting;     /* protected by the share's lock: FIFO */
};

struct share_file {
	struct share *s;
	uid_t uid;		  /* who opened it */
	unsigned busy;		  /* protected by the share's lock: its calls holding a thread */
	bool closed;		  /* protected by the share's lock */
	struct list_head waiting; /* protected by the share's lock: its parked calls, FIFO */
};

struct share {
	pthread_mutex_t lock;
	struct share_limits lim;
	unsigned files; /* protected by lock */
	struct list_head buckets[BUCKETS];
};

static __thread struct share_call *current;

int share_new(const struct share_limits *lim, struct share **ret)
{
	struct share *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->lim = *lim;
	pthread_mutex_init(&s->lock, NULL);
	for (unsigned i = 0; i < BUCKETS; i++)
		list_init(&s->buckets[i]);
	*ret = s;
	return 0;
}

void share_free(struct share *s)
{
	struct share_user *u, *next;

	if (!s)
		return;
	for (unsigned i = 0; i < BUCKETS; i++)
		list_for_each_entry_safe(u, next, &s->buckets[i], node)
			free(u);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Caller holds lock: uid's entry, made if make; NULL if none (or no memory). */
static struct share_user *user_of(struct share *s, uid_t uid, bool make)
{
	struct list_head *b = &s->buckets[uid % BUCKETS];
	struct share_user *u;

	assert_held(&s->lock);
	list_for_each_entry(u, b, node)
		if (u->uid == uid)
			return u;
	if (!make)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	list_init(&u->waiting);
	list_add(&u->node, b);
	return u;
}

/* Caller holds lock: free u if nothing of it is left. */
static void user_put(struct share_user *u)
{
	if (u->files || u->busy || u->parked || u->mem)
		return;
	list_del(&u->node);
	free(u);
}

int share_file_open(struct share *s, uid_t uid, struct share_file **ret)
{
	struct share_file *f = calloc(1, sizeof(*f));
	struct share_user *u;
	int err = 0;

	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	u = user_of(s, uid, true);
	if (!u)
		err = -ENOMEM;
	else if (uid != 0 && s->files >= s->lim.max_files)
		err = -ENFILE; /* as the kernel's file table: root may pass */
	else if (u->files >= s->lim.files_per_user)
		err = -EMFILE;
	if (!err) {
		u->files++;
		s->files++;
	} else if (u) {
		user_put(u);
	}
	pthread_mutex_unlock(&s->lock);
	if (err) {
		free(f);
		return err;
	}
	f->s = s;
	f->uid = uid;
	list_init(&f->waiting);
	*ret = f;
	return 0;
}

void share_file_close(struct share_file *f)
{
	struct share *s = f->s;
	struct share_user *u;
	bool last;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, f->uid, false);
	if (u) {
		u->files--;
		user_put(u);
	}
	s->files--;
	f->closed = true;
	last = f->busy == 0;
	pthread_mutex_unlock(&s->lock);
	if (last)
		free(f);
}

/* Caller holds lock: may a call of u on the file counted by busy hold a thread? */
static bool fits(const struct share *s, const struct share_user *u, const struct share_file *f)
{
	assert_held(&s->lock);
	return u->busy < s->lim.calls_per_user && f->busy < s->lim.calls_per_file;
}

static void hold(struct share *s, struct share_user *u, struct share_file *f, struct share_call *c)
{
	u->busy++;
	f->busy++;
	*c = (struct share_call){ .s = s, .u = u, .f = f };
}

bool share_enter(struct share_file *f, uid_t uid, struct share_call *ret)
{
	struct share *s = f->s;
	struct share_user *u;
	bool ok = true;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, uid, true);
	/* no memory for its entry: admitted, unbounded, rather than refused */
	if (!u)
		*ret = (struct share_call){ 0 };
	else if (fits(s, u, f))
		hold(s, u, f, ret);
	else
		ok = false;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

int share_park(struct share *s, struct share_wait *w)
{
	struct share_user *u;
	int state;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, w->uid, true);
	if (w->state == SHARE_CANCELLED) {
		state = SHARE_CANCELLED;
	} else if (!u || fits(s, u, w->f)) {
		if (u)
			hold(s, u, w->f, &w->call);
		else
			w->call = (struct share_call){ 0 };
		state = w->state = SHARE_RUNNING;
	} else {
		list_add_tail(&w->node, &u->waiting);
		list_add_tail(&w->fnode, &w->f->waiting);
		u->parked++;
		state = w->state = SHARE_PARKED;
	}
	if (u && state == SHARE_CANCELLED)
		user_put(u);
	pthread_mutex_unlock(&s->lock);
	return state;
}

bool share_cancel(struct share *s, struct share_wait *w)
{
	struct share_user *u;
	bool mine = false;

	pthread_mutex_lock(&s->lock);
	if (w->state == SHARE_PARKED) {
		u = user_of(s, w->uid, false);
		list_del(&w->node);
		list_del(&w->fnode);
		if (u) {
			u->parked--;
			user_put(u);
		}
		mine = true;
	}
	if (w->state != SHARE_RUNNING)
		w->state = SHARE_CANCELLED;
	pthread_mutex_unlock(&s->lock);
	return mine;
}

/* Caller holds lock: w, of u, parked, now holds its share, unlinked. */
static struct share_wait *run_wait(struct share *s, struct share_user *u, struct share_wait *w)
{
	assert_held(&s->lock);
	list_del(&w->node);
	list_del(&w->fnode);
	u->parked--;
	hold(s, u, w->f, &w->call);
	w->state = SHARE_RUNNING;
	return w;
}

/* Caller holds lock: the first wait of u that fits now, holding its share, unlinked; or NULL. */
static struct share_wait *next_fit(struct share *s, struct share_user *u)
{
	struct share_wait *w;

	assert_held(&s->lock);
	if (u->busy >= s->lim.calls_per_user)
		return NULL;
	list_for_each_entry(w, &u->waiting, node)
		if (w->f->busy < s->lim.calls_per_file)
			return run_wait(s, u, w);
	return NULL;
}

/* Caller holds lock: the first wait on f, of any user, that fits now, as next_fit(); or NULL. */
static struct share_wait *next_fit_file(struct share *s, struct share_file *f)
{
	struct share_wait *w;
	struct share_user *u;

	assert_held(&s->lock);
	if (f->busy >= s->lim.calls_per_file)
		return NULL;
	list_for_each_entry(w, &f->waiting, fnode) {
		u = user_of(s, w->uid, false); /* there: it counts w as parked */
		if (u && u->busy < s->lim.calls_per_user)
			return run_wait(s, u, w);
	}
	return NULL;
}

void share_end(struct share_call *c)
{
	struct share *s = c->s;
	struct share_user *u = c->u;
	struct share_file *f = c->f;
	struct share_wait *w, *wf;
	bool gone;

	if (!s || c->taken)
		return;
	c->s = NULL;
	pthread_mutex_lock(&s->lock);
	u->busy--;
	f->busy--;
	w = next_fit(s, u);
	wf = next_fit_file(s, f); /* a closed file has none parked */
	gone = f->busy == 0 && f->closed;
	user_put(u);
	pthread_mutex_unlock(&s->lock);
	if (gone)
		free(f);
	if (w)
		w->resume(w);
	if (wf)
		wf->resume(wf);
}

void share_set_current(struct share_call *c)
{
	current = c;
}

bool share_holds(const struct share_file *f)
{
	return current && current->s && !current->taken && current->f == f;
}

void share_take(struct share_call *ret)
{
	if (!current || current->taken || !current->s) {
		*ret = (struct share_call){ 0 };
		return;
	}
	*ret = *current;
	current->taken = true;
}

void share_drain(struct share *s, const void *owner, struct list_head *out)
{
	struct share_user *u, *unext;
	struct share_wait *w, *next;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < BUCKETS; i++) {
		list_for_each_entry_safe(u, unext, &s->buckets[i], node) {
			list_for_each_entry_safe(w, next, &u->waiting, node) {
				if (w->owner != owner)
					continue;
				list_del(&w->node);
				list_del(&w->fnode);
				u->parked--;
				w->state = SHARE_CANCELLED;
				list_add_tail(&w->node, out);
			}
			user_put(u);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

int share_mem_charge(struct share *s, uid_t uid, uint64_t n)
{
	struct share_user *u;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, uid, true);
	if (!u)
		err = -ENOMEM;
	else if (uid != 0 && s->lim.mem_per_user && u->mem + n > s->lim.mem_per_user)
		err = -ENOMEM;
	else
		u->mem += n;
	if (u && err)
		user_put(u);
	pthread_mutex_unlock(&s->lock);
	return err;
}

void share_mem_uncharge(struct share *s, uid_t uid, uint64_t n)
{
	struct share_user *u;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, uid, false);
	if (u) {
		u->mem -= n < u->mem ? n : u->mem;
		user_put(u);
	}
	pthread_mutex_unlock(&s->lock);
}

void share_user_counts(struct share *s, uid_t uid, unsigned *busy, unsigned *parked,
		       unsigned *files)
{
	struct share_user *u;

	pthread_mutex_lock(&s->lock);
	u = user_of(s, uid, false);
	*busy = u ? u->busy : 0;
	*parked = u ? u->parked : 0;
	*files = u ? u->files : 0;
	pthread_mutex_unlock(&s->lock);
}

void share_totals(struct share *s, struct share_totals *ret)
{
	struct share_user *u;

	pthread_mutex_lock(&s->lock);
	*ret = (struct share_totals){ .files = s->files, .lim = s->lim };
	for (unsigned i = 0; i < BUCKETS; i++) {
		list_for_each_entry(u, &s->buckets[i], node) {
			ret->busy += u->busy;
			ret->parked += u->parked;
		}
	}
	pthread_mutex_unlock(&s->lock);
}
