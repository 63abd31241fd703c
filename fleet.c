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
#include "log.h"
#include "udev.h"

/* A device udev reported, waiting for the owner's thread. */
struct queued {
	struct queued *next;
	struct uev_event e;
};

/* A node, and the device it serves. */
struct member {
	struct member *next;
	char syspath[PATH_MAX];
	struct node *node;
	struct fleet *f;
	struct uev_event *next_add; /* a device back at the same H:C:T:L, or NULL */
	bool gone;		    /* its device was removed */
	atomic_bool ended;	    /* its session is over: free it */
};

/* The queue is the one thing another thread touches. */
struct fleet {
	const struct node_config *cfg;
	void (*wake)(void *arg);
	void *arg;
	struct uev_watch *watch;
	pthread_mutex_t lock;
	struct queued *head, *tail; /* protected by lock */
	struct member *members;	    /* the owner's thread only */
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
	q->next = NULL;
	pthread_mutex_lock(&f->lock);
	if (f->tail)
		f->tail->next = q;
	else
		f->head = q;
	f->tail = q;
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
	for (struct member *m = f->members; m; m = m->next)
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
	for (struct member *m = f->members; m; m = m->next) {
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
	m->next = f->members;
	f->members = m;
	log_msg(LOG_NOTICE, "serving %s (%s) as /dev/%s", e->devnode, e->hctl, name);
}

static void member_remove(struct fleet *f, const struct uev_event *e)
{
	struct member *m = find_member(f, e->syspath);

	for (struct member *g = f->members; !m && g; g = g->next) {
		if (g->next_add && !strcmp(g->next_add->syspath, e->syspath)) {
			free(g->next_add); /* came back and went again before its turn */
			g->next_add = NULL;
		}
	}
	if (!m)
		return;
	m->gone = true;
	node_gone(m->node);
}

/* The nodes whose sessions are over. */
static void reap(struct fleet *f)
{
	struct member **pm = &f->members;

	while (*pm) {
		struct member *m = *pm;
		char name[128];

		if (!atomic_load(&m->ended)) {
			pm = &m->next;
			continue;
		}
		*pm = m->next;
		snprintf(name, sizeof(name), "%s", node_name(m->node));
		node_free(m->node);
		log_info("/dev/%s removed", name);
		if (m->next_add)
			member_add(f, m->next_add);
		free(m->next_add);
		free(m);
	}
}

static struct queued *take_queue(struct fleet *f)
{
	struct queued *q;

	pthread_mutex_lock(&f->lock);
	q = f->head;
	f->head = f->tail = NULL;
	pthread_mutex_unlock(&f->lock);
	return q;
}

static void apply_queued(struct fleet *f)
{
	struct queued *q = take_queue(f), *next;

	for (; q; q = next) {
		next = q->next;
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
	struct member *m, *next;

	uev_watch_free(f->watch);
	f->watch = NULL;
	for (m = f->members; m; m = m->next)
		node_stop(m->node);
	for (m = f->members; m; m = next) {
		next = m->next;
		node_free(m->node);
		free(m->next_add);
		free(m);
	}
	f->members = NULL;
	for (struct queued *q = take_queue(f), *qn; q; q = qn) {
		qn = q->next;
		free(q);
	}
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
	pthread_mutex_init(&f->lock, NULL);
	err = uev_watch_new(subsystem, on_event, f, &f->watch);
	if (err) {
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
	for (struct member *m = f->members; m; m = m->next)
		node_log_stats(m->node);
}

void fleet_free(struct fleet *f)
{
	stop_all(f);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
