/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deadlines for timed waits: a time so many milliseconds on, on the clock
 * the wait uses (CLOCK_REALTIME for a plain pthread_cond_timedwait(),
 * CLOCK_MONOTONIC for a condition made with that clock).
 */
#ifndef CUSE_BSG_DEADLINE_H
#define CUSE_BSG_DEADLINE_H

#include <time.h>

/* *t moved ms milliseconds on. */
static inline void timespec_add_ms(struct timespec *t, unsigned ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* ms milliseconds from now on clock. */
static inline struct timespec deadline_ms(clockid_t clock, unsigned ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	timespec_add_ms(&t, ms);
	return t;
}

#endif /* CUSE_BSG_DEADLINE_H */
