// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuseio.c: the workers' waits for a request.  A non-blocking pipe stands
 * in for /dev/cuse (a readable descriptor is a readable descriptor to
 * epoll); the threads, their epoll sets, the stop and idle eventfds and
 * the timekeeper are real.  Each test takes a few of FUSE_IDLE_MS.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuseio.h"

TestSuite(fuseio, .timeout = 30);

#define WORKERS_MAX 32

static struct fuseio io;
static int pipefd[2];

struct worker {
	pthread_t thread;
	ssize_t ret;
	int err;
	_Alignas(8) char buf[256]; /* a request: its header's alignment */
	_Atomic pid_t tid;
	_Atomic bool done;
};

static struct worker workers[WORKERS_MAX];

static void setup(void)
{
	memset(&io, 0, sizeof(io));
	io.stopfd = eventfd(0, EFD_CLOEXEC);
	io.idlefd = eventfd(0, EFD_CLOEXEC);
	cr_assert(io.stopfd >= 0 && io.idlefd >= 0);
	cr_assert(eq(int, pipe2(pipefd, O_NONBLOCK | O_CLOEXEC), 0));
}

static void *work(void *arg)
{
	struct worker *w = arg;

	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	w->ret = fuseio_read(&io, pipefd[0], w->buf, sizeof(w->buf));
	w->err = errno;
	atomic_store(&w->done, true);
	return NULL;
}

static void start(int n)
{
	for (int i = 0; i < n; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		cr_assert(eq(int, pthread_create(&workers[i].thread, NULL, work, &workers[i]), 0));
	}
}

static int done(int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += atomic_load(&workers[i].done);
	return k;
}

/* Stop them all (those still waiting return -1, EINTR), and join them. */
static void stop_all(int n)
{
	cr_assert(eq(int, eventfd_write(io.stopfd, 1), 0));
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);
}

/* Of the first n workers, those blocked in epoll_wait(): with a bound, and without. */
static void epoll_waiters(int n, int *bounded, int *unbounded)
{
	*bounded = *unbounded = 0;
	for (int i = 0; i < n; i++) {
		char path[64], line[256];
		long nr;
		unsigned long a[4];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall",
			 (int)atomic_load(&workers[i].tid));
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%ld %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3]) == 5 &&
		    (nr == SYS_epoll_wait || nr == SYS_epoll_pwait)) {
			if ((int)a[3] < 0) /* an int, -1: no bound */
				(*unbounded)++;
			else
				(*bounded)++;
		}
		fclose(f);
	}
}

static void sleep_ms(int ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* Of n waiting workers, one waits with a bound (the timekeeper), the rest without. */
Test(fuseio, one_timekeeper_among_the_waiting, .init = setup)
{
	int bounded = 0, unbounded = 0, n = 6;

	start(n);
	for (int ms = 0; ms < 3000 && bounded + unbounded < n; ms += 10) {
		sleep_ms(10);
		epoll_waiters(n, &bounded, &unbounded);
	}
	cr_assert(eq(int, bounded + unbounded, n), "%d of %d workers in epoll_wait()",
		  bounded + unbounded, n);
	cr_assert(eq(int, bounded, 1), "%d workers wait with a bound", bounded);
	stop_all(n);
	for (int i = 0; i < n; i++) {
		cr_assert(eq(long, (long)workers[i].ret, -1L));
		cr_assert(eq(int, workers[i].err, EINTR));
	}
}

/* A request wakes a worker, which reads it; the others go on waiting. */
Test(fuseio, a_request_is_read_by_one, .init = setup)
{
	int n = 4, who = -1;

	start(n);
	sleep_ms(100);
	cr_assert(eq(long, (long)write(pipefd[1], "abc", 3), 3L));
	for (int ms = 0; ms < 3000 && done(n) == 0; ms += 10)
		sleep_ms(10);
	sleep_ms(100);
	cr_assert(eq(int, done(n), 1), "%d workers returned", done(n));
	for (int i = 0; i < n; i++)
		if (atomic_load(&workers[i].done))
			who = i;
	cr_assert(eq(long, (long)workers[who].ret, 3L));
	cr_assert(eq(int, memcmp(workers[who].buf, "abc", 3), 0));
	stop_all(n);
}

/*
 * More than FUSE_IDLE_THREADS idle: once the timekeeper's bound passes,
 * workers are handed the FORGET that lets libfuse end them, and only that;
 * at most FUSE_IDLE_THREADS idle: none is, however long they wait.
 */
Test(fuseio, extra_idle_workers_leave, .init = setup)
{
	int n = FUSE_IDLE_THREADS + 3, left;

	start(n);
	for (int ms = 0; ms < 3 * FUSE_IDLE_MS && done(n) == 0; ms += 10)
		sleep_ms(10);
	sleep_ms(200);
	left = done(n);
	cr_assert(left >= 1, "no idle worker was let go in %d ms", 3 * FUSE_IDLE_MS);
	for (int i = 0; i < n; i++) {
		struct fuse_in_header *h = (struct fuse_in_header *)(void *)workers[i].buf;

		if (!atomic_load(&workers[i].done))
			continue;
		cr_assert(eq(long, (long)workers[i].ret, (long)h->len));
		cr_assert(eq(u32, h->opcode, FUSE_FORGET));
	}
	stop_all(n);
}

Test(fuseio, few_idle_workers_stay, .init = setup)
{
	int n = 3;

	start(n);
	sleep_ms(FUSE_IDLE_MS * 2 + 500);
	cr_assert(eq(int, done(n), 0), "%d of %d idle workers returned", done(n), n);
	stop_all(n);
	for (int i = 0; i < n; i++)
		cr_assert(eq(int, workers[i].err, EINTR));
}
