// SPDX-License-Identifier: GPL-2.0-only
/*
 * A count that other threads add to and a test waits to reach.  The wait
 * has no bound of its own: the suite's timeout bounds it.  Header-only, as
 * root.h: each test program links only the modules it tests.
 */
#ifndef UNIT_COUNT_H
#define UNIT_COUNT_H

#include <pthread.h>

struct count {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned n; /* protected by lock */
};

#define COUNT_INIT                                                     \
	{                                                              \
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 \
	}

static inline void count_add(struct count *c)
{
	pthread_mutex_lock(&c->lock);
	c->n++;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static inline void count_wait(struct count *c, unsigned n)
{
	pthread_mutex_lock(&c->lock);
	while (c->n < n)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

#endif
