// SPDX-License-Identifier: GPL-2.0-only
/*
 * Worker pool: one mutex, one condition variable, a singly linked FIFO.
 * Stopped with a flag and a broadcast; workers drain the queue first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pool.h"

struct worker {
	struct pool *pool;
	pthread_t thread;
	unsigned slot;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct pool_work *head, *tail; /* protected by lock */
	unsigned backlog;	       /* protected by lock */
	bool stopping;		       /* protected by lock */
	unsigned nthreads;
	struct worker workers[];
};

static struct pool_work *take(struct pool *p)
{
	struct pool_work *w;

	pthread_mutex_lock(&p->lock);
	while (!p->head && !p->stopping)
		pthread_cond_wait(&p->wake, &p->lock);
	w = p->head;
	if (w) {
		p->head = w->next;
		if (!p->head)
			p->tail = NULL;
		p->backlog--;
	}
	pthread_mutex_unlock(&p->lock);
	return w;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct pool_work *w;

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

void pool_submit(struct pool *p, struct pool_work *w)
{
	w->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = w;
	else
		p->head = w;
	p->tail = w;
	p->backlog++;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

unsigned pool_backlog(struct pool *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->backlog;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
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
