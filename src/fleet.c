// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "list.h"
#include "log.h"
#include "udev.h"

/* A device udev reported, waiting for the owner's thread. */
struct queued {
	struct list_head node;
	struct uev_event e;
};

/* A node, and the device it serves. */
struct member {
	struct list_head link; /* in f->members */
	char syspath[PATH_MAX];
	struct node *node;
	struct fleet *f;
	struct uev_event *next_add; /* a device back at the same H:C:T:L, or NULL */
	bool gone;		    /* its device was removed */
	atomic_bool ended;	    /* its session is over: free it */
};

/*
 * The queue is the one thing another thread changes; the live view's
 * thread reads the members, which the owner's thread changes under
 * members_lock.
 */
struct fleet {
	const struct node_config *cfg;
	void (*wake)(void *arg);
	void *arg;
	struct uev_watch *watch;
	pthread_mutex_t lock;
	struct list_head queue; /* protected by lock */
	pthread_mutex_t members_lock;
	struct list_head members; /* changed under members_lock, by the owner's thread */
};

static void f_wake(struct fleet *f)
{
	f->wake(f->arg);
}

static void on_event(const struct uev_event *e, void *arg)
{
	struct fleet *f = arg;
	struct queued *q = malloc(sizeof(*q));

	if (!q) {
		log_err("out of memory: an event of %s is lost", e->syspath);
		return;
	}
	q->e = *e;
	pthread_mutex_lock(&f->lock);
	list_add_tail(&q->node, &f->queue);
	pthread_mutex_unlock(&f->lock);
	f_wake(f);
}

static void member_ended(struct node *n, void *arg)
{
	struct member *m = arg;

	(void)n;
	atomic_store(&m->ended, true);
	f_wake(m->f);
}

static struct member *find_member(struct fleet *f, const char *syspath)
{
	struct member *m;

	list_for_each_entry(m, &f->members, link)
		if (!m->gone && !strcmp(m->syspath, syspath))
			return m;
	return NULL;
}

/*
 * A device back at the address of a removed one whose node is still held
 * open: it gets the name once the old node is gone.  True if deferred.
 */
static bool defer_add(struct fleet *f, const struct uev_event *e, const char *name)
{
	struct member *m;

	list_for_each_entry(m, &f->members, link) {
		if (!m->gone || strcmp(node_name(m->node), name))
			continue;
		free(m->next_add);
		m->next_add = malloc(sizeof(*e));
		if (!m->next_add)
			return false;
		*m->next_add = *e;
		log_info("%s (%s): /dev/%s follows once its removed device's node is closed",
			 e->devnode, e->hctl, name);
		return true;
	}
	return false;
}

/* A device appeared (or was there): its node, or a line saying why not. */
static void member_add(struct fleet *f, const struct uev_event *e)
{
	char name[128], why[512];
	struct member *m;
	int err;

	if (find_member(f, e->syspath))
		return; /* found by the scan and reported again */
	if (uev_node_name(e->hctl, name, sizeof(name)) < 0 || defer_add(f, e, name))
		return;
	m = calloc(1, sizeof(*m));
	if (!m) {
		log_err("skipping %s (%s): out of memory", e->devnode, e->hctl);
		return;
	}
	m->f = f;
	snprintf(m->syspath, sizeof(m->syspath), "%s", e->syspath);
	err = node_new(f->cfg, e->devnode, name, &m->node, why, sizeof(why));
	if (err) {
		log_warn("skipping %s (%s): %s", e->devnode, e->hctl, why);
		free(m);
		return;
	}
	if (node_start(m->node, member_ended, m) < 0) {
		log_warn("skipping %s (%s): /dev/%s could not be set up", e->devnode, e->hctl,
			 name);
		node_free(m->node);
		free(m);
		return;
	}
	pthread_mutex_lock(&f->members_lock);
	list_add(&m->link, &f->members);
	pthread_mutex_unlock(&f->members_lock);
	log_msg(LOG_NOTICE, "serving %s (%s) as /dev/%s", e->devnode, e->hctl, name);
}

static void member_remove(struct fleet *f, const struct uev_event *e)
{
	struct member *m = find_member(f, e->syspath), *g;

	if (m) {
		m->gone = true;
		node_gone(m->node);
		return;
	}
	list_for_each_entry(g, &f->members, link) {
		if (g->next_add && !strcmp(g->next_add->syspath, e->syspath)) {
			free(g->next_add); /* came back and went again before its turn */
			g->next_add = NULL;
		}
	}
}

/* The nodes whose sessions are over. */
static void reap(struct fleet *f)
{
	struct member *m, *next;

	list_for_each_entry_safe(m, next, &f->members, link) {
		char name[128];

		if (!atomic_load(&m->ended))
			continue;
		pthread_mutex_lock(&f->members_lock);
		list_del(&m->link);
		pthread_mutex_unlock(&f->members_lock);
		snprintf(name, sizeof(name), "%s", node_name(m->node));
		node_free(m->node);
		log_info("/dev/%s removed", name);
		if (m->next_add)
			member_add(f, m->next_add);
		free(m->next_add);
		free(m);
	}
}

/* The events queued so far, moved to the back of to. */
static void take_queue(struct fleet *f, struct list_head *to)
{
	pthread_mutex_lock(&f->lock);
	list_splice_tail(&f->queue, to);
	pthread_mutex_unlock(&f->lock);
}

static void apply_queued(struct fleet *f)
{
	struct list_head events = LIST_HEAD_INIT(events);
	struct queued *q, *next;

	take_queue(f, &events);
	list_for_each_entry_safe(q, next, &events, node) {
		if (q->e.action == UEV_ADD)
			member_add(f, &q->e);
		else
			member_remove(f, &q->e);
		free(q);
	}
	reap(f);
}

/* Every node at once, then wait for each. */
static void stop_all(struct fleet *f)
{
	struct list_head events = LIST_HEAD_INIT(events), gone = LIST_HEAD_INIT(gone);
	struct member *m, *next;
	struct queued *q, *qn;

	uev_watch_free(f->watch);
	f->watch = NULL;
	list_for_each_entry(m, &f->members, link)
		node_stop(m->node);
	pthread_mutex_lock(&f->members_lock);
	list_splice_tail(&f->members, &gone);
	pthread_mutex_unlock(&f->members_lock);
	list_for_each_entry_safe(m, next, &gone, link) {
		node_free(m->node);
		free(m->next_add);
		free(m);
	}
	take_queue(f, &events);
	list_for_each_entry_safe(q, qn, &events, node)
		free(q);
}

int fleet_new(const struct node_config *cfg, const char *subsystem, void (*wake)(void *arg),
	      void *arg, struct fleet **ret)
{
	struct fleet *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	f->cfg = cfg;
	f->wake = wake;
	f->arg = arg;
	list_init(&f->queue);
	list_init(&f->members);
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->members_lock, NULL);
	err = uev_watch_new(subsystem, on_event, f, &f->watch);
	if (err) {
		pthread_mutex_destroy(&f->members_lock);
		pthread_mutex_destroy(&f->lock);
		free(f);
		return err;
	}
	*ret = f;
	return 0;
}

void fleet_work(struct fleet *f)
{
	apply_queued(f);
}

void fleet_log_stats(struct fleet *f)
{
	struct member *m;

	list_for_each_entry(m, &f->members, link)
		node_log_stats(m->node);
}

void fleet_each(struct fleet *f, void (*fn)(struct node *n, void *arg), void *arg)
{
	struct member *m;

	pthread_mutex_lock(&f->members_lock);
	list_for_each_entry(m, &f->members, link)
		fn(m->node, arg);
	pthread_mutex_unlock(&f->members_lock);
}

void fleet_free(struct fleet *f)
{
	stop_all(f);
	pthread_mutex_destroy(&f->members_lock);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
