// SPDX-License-Identifier: GPL-2.0-only
/*
 * A session's reads of /dev/cuse (fuseio.h).  The descriptor is
 * non-blocking, so that a worker waits in worker_wait(), where the stop
 * eventfd reaches it: EINTR with the session marked exited makes it leave
 * its loop.  Waiting first costs two calls a request; reading first costs
 * one when a request is there but three when none is, and at a queue depth
 * of 16 a worker mostly finds none.
 *
 * Only one waiting worker of a session, the timekeeper, waits with a
 * bound: a wait with a timeout reads the clock in the kernel, each time,
 * and the guest's clock (hpet) was a tenth of the daemon's time a
 * command.  Once the timekeeper has seen FUSE_IDLE_MS pass with more than
 * FUSE_IDLE_THREADS waiting, it wakes every waiting worker (the idle
 * eventfd), and those libfuse does not need leave.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fuseio.h"

/*
 * A libfuse worker's own epoll set: the session's /dev/cuse descriptor,
 * exclusive (a request wakes one idle worker, not all: poll() on the shared
 * descriptor woke every one, and all but one read nothing), the node's
 * stop eventfd, which wakes every one, and the idle eventfd, edge-triggered:
 * each write wakes every one once.  Freed when the worker thread ends.
 */
struct worker_wait {
	int epfd;
	int fd; /* the /dev/cuse descriptor it was made for */
};

static pthread_key_t worker_key;
static pthread_once_t worker_once = PTHREAD_ONCE_INIT;

static void worker_wait_free(void *p)
{
	struct worker_wait *w = p;

	close(w->epfd);
	free(w);
}

static void worker_key_init(void)
{
	if (pthread_key_create(&worker_key, worker_wait_free))
		abort(); /* only EAGAIN, with thousands of keys */
}

/* This worker's epoll descriptor for fd, or -1 (then it waits in poll()). */
static int worker_epoll(struct fuseio *io, int fd)
{
	struct epoll_event in = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = 0 };
	struct epoll_event stop = { .events = EPOLLIN, .data.u32 = 1 };
	struct epoll_event idle = { .events = EPOLLIN | EPOLLET, .data.u32 = 2 };
	struct worker_wait *w;

	pthread_once(&worker_once, worker_key_init);
	w = pthread_getspecific(worker_key);
	if (w && w->fd == fd)
		return w->epfd;
	if (w) /* not reached: a worker serves one session */
		worker_wait_free(w);
	pthread_setspecific(worker_key, NULL);
	w = malloc(sizeof(*w));
	if (!w)
		return -1;
	w->fd = fd;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &in) < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, io->stopfd, &stop) < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, io->idlefd, &idle) < 0) {
		if (w->epfd >= 0)
			close(w->epfd);
		free(w);
		return -1;
	}
	pthread_setspecific(worker_key, w);
	return w->epfd;
}

/* What a worker's wait ended with, but the stop. */
enum woken {
	WOKEN_REQUEST, /* fd may have a request */
	WOKEN_TIMEOUT, /* the bound passed: no request woke this worker */
	WOKEN_IDLE,    /* the timekeeper says the session was idle */
};

/*
 * Wait until fd may have a request, or ms pass (-1: no bound), or the
 * timekeeper says the session was idle: enum woken; or the node stops:
 * -1, EINTR.
 */
static int worker_wait(struct fuseio *io, int fd, int ms)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = io->stopfd, .events = POLLIN } };
	int epfd = worker_epoll(io, fd);
	struct epoll_event ev[3];
	int k, woken = WOKEN_TIMEOUT;

	if (epfd < 0) { /* no epoll set: poll(), always bounded */
		k = poll(p, 2, ms < 0 ? FUSE_IDLE_MS : ms);
		if (k < 0)
			return -1;
		if (p[1].revents)
			goto stopped;
		return p[0].revents ? WOKEN_REQUEST : WOKEN_TIMEOUT;
	}
	k = epoll_wait(epfd, ev, 3, ms);
	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		if (ev[i].data.u32 == 1)
			goto stopped;
		if (ev[i].data.u32 == 0)
			woken = WOKEN_REQUEST;
		else if (woken != WOKEN_REQUEST)
			woken = WOKEN_IDLE;
	}
	return woken;
stopped:
	errno = EINTR;
	return -1;
}

/*
 * libfuse lets a worker go only once it has handled a request, and then
 * only while more than its max_idle_threads wait.  A worker idle for
 * FUSE_IDLE_MS while more than FUSE_IDLE_THREADS wait hands libfuse a
 * FORGET of no inode instead of a request: CUSE answers a FORGET with
 * nothing, and the worker leaves after it.
 */
static ssize_t idle_request(void *buf, size_t len)
{
	struct {
		struct fuse_in_header h;
		struct fuse_forget_in f;
	} r = { .h = { .len = sizeof(r), .opcode = FUSE_FORGET } };

	if (len < sizeof(r)) {
		errno = EINTR; /* not reached: libfuse's buffer holds a request */
		return -1;
	}
	memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

/* Requests read so far by every worker of every node: the heap is the process's. */
static atomic_ulong requests_read;

/*
 * The timekeeper's wait passed its bound: with more than FUSE_IDLE_THREADS
 * waiting, every waiting worker is told (the idle eventfd) and this one
 * leaves (true); else, if no worker of any node has read a request for as
 * long and the extra workers are gone, what a burst took from malloc goes
 * back (glibc's arenas keep freed memory).  Not while requests come in:
 * the trim takes every arena's lock and gives back pages that their
 * workers would fault in again.
 */
static bool timed_out(struct fuseio *io, unsigned long seen)
{
	if (atomic_load(&io->waiting) > FUSE_IDLE_THREADS) {
		if (eventfd_write(io->idlefd, 1) < 0)
			abort(); /* not reached: the counter would take 2^64 writes */
		return true;
	}
	if (atomic_load_explicit(&requests_read, memory_order_relaxed) == seen &&
	    !atomic_exchange(&io->trimmed, true))
		malloc_trim(0);
	return false;
}

ssize_t fuseio_read(struct fuseio *io, int fd, void *buf, size_t len)
{
	ssize_t r = -1;

	atomic_fetch_add(&io->waiting, 1);
	for (;;) {
		unsigned long seen = atomic_load_explicit(&requests_read, memory_order_relaxed);
		bool keeper = !atomic_exchange(&io->timekeeper, true);
		int w = worker_wait(io, fd, keeper ? FUSE_IDLE_MS : -1);
		bool leave;

		if (keeper)
			atomic_store(&io->timekeeper, false);
		if (w < 0)
			break;
		leave = w == WOKEN_TIMEOUT
				? timed_out(io, seen)
				: w == WOKEN_IDLE && atomic_load(&io->waiting) > FUSE_IDLE_THREADS;
		if (leave) {
			atomic_store(&io->trimmed, false); /* once this one is gone */
			r = idle_request(buf, len);
			break;
		}
		if (w != WOKEN_REQUEST)
			continue;
		r = read(fd, buf, len);
		if (r >= 0)
			atomic_fetch_add_explicit(&requests_read, 1, memory_order_relaxed);
		if (r >= (ssize_t)sizeof(struct fuse_in_header) &&
		    ((struct fuse_in_header *)buf)->opcode == FUSE_INTERRUPT)
			atomic_fetch_add_explicit(&io->interrupts, 1, memory_order_relaxed);
		if (r >= 0 && atomic_load_explicit(&io->trimmed, memory_order_relaxed))
			atomic_store(&io->trimmed, false);
		if (r >= 0 || errno != EAGAIN)
			break;
	}
	atomic_fetch_sub(&io->waiting, 1);
	return r;
}
