/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deadlines for timed waits: a time so many milliseconds on, on the clock
 * the wait uses (CLOCK_REALTIME for a plain pthread_cond_timedwait(),
 * CLOCK_MONOTONIC for a condition made with that clock).
 */
#ifndef CUSE_BSG_DEADLINE_H
#define CUSE_BSG_DEADLINE_H

#include <stdbool.h>
#include <time.h>

/*
 * The clock of a command's and a call's times: the tick clock, sg's own
 * resolution (it counts a command's duration in jiffies).  It is read from
 * the vDSO's data page whatever the clock source, where the precise clock
 * costs a system call under some (hpet, acpi_pm), several per command.
 * It never runs ahead of CLOCK_MONOTONIC, at most a tick behind it.
 */
#define TICK_CLOCK CLOCK_MONOTONIC_COARSE

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

/* a comes before b. */
static inline bool timespec_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#endif /* CUSE_BSG_DEADLINE_H */
