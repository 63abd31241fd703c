/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lock preconditions, checked: assert_held(m) at the top of a function whose
 * caller must hold the mutex m, assert_not_held(m) at the top of one that
 * takes m itself.  Built with -DCUSE_BSG_LOCK_CHECKS (the Makefile's ASan
 * and TSan builds: make unit, and the VM suites' ASan daemon), a violation
 * prints the program, file, line, function, the lock's expression and the
 * threads' ids on stderr and aborts, as assert() does: a programming error,
 * not the log's business, in a header that needs no module.  Otherwise
 * both are a type check alone and no code.
 *
 * Who holds a mutex is glibc's own knowledge, not POSIX's: glibc's
 * pthread_mutex_t keeps its owner's thread id in __data.__owner while it is
 * locked, for default, recursive and error-checking mutexes alike, and
 * pthread_cond_wait() sets it again as it takes the mutex back.  Debian's
 * libc is glibc.  Lock elision (the glibc.elision.enable tunable, off by
 * default) would leave the owner unset and fail every assert_held().
 *
 * A reader-writer lock (policy.c's) names only its writer
 * (__data.__cur_writer); its readers are counted, not named, so a read hold
 * cannot be checked.  No function states a precondition on one, and there
 * is no assertion for one here.
 */
#ifndef CUSE_BSG_LOCKCHECK_H
#define CUSE_BSG_LOCKCHECK_H

#include <pthread.h>

#ifdef CUSE_BSG_LOCK_CHECKS

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define assert_held(m)	   lockcheck_owner((m), true, #m, __FILE__, __LINE__, __func__)
#define assert_not_held(m) lockcheck_owner((m), false, #m, __FILE__, __LINE__, __func__)

/* Abort unless the calling thread holds m (mine) or does not (!mine). */
static inline void lockcheck_owner(const pthread_mutex_t *m, bool mine, const char *expr,
				   const char *file, int line, const char *func)
{
	/* read while another thread may lock m: glibc writes it, not us */
	int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
	pid_t self = gettid();
	char why[40] = " (unlocked)";

	if ((owner == self) == mine)
		return;
	if (!mine)
		why[0] = '\0';
	else if (owner)
		snprintf(why, sizeof(why), " (thread %d holds it)", owner);
	fprintf(stderr, "%s: %s:%d: %s: lock precondition failed: %s %s by thread %d%s\n",
		program_invocation_short_name, file, line, func, expr,
		mine ? "not held" : "already held", (int)self, why);
	abort();
}

#else

#define assert_held(m)	   ((void)sizeof((m) == (const pthread_mutex_t *)0))
#define assert_not_held(m) ((void)sizeof((m) == (const pthread_mutex_t *)0))

#endif

#endif /* CUSE_BSG_LOCKCHECK_H */
