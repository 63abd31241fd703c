// SPDX-License-Identifier: GPL-2.0-only
/*
 * The target's completion thread against a queue its opener closes while
 * the thread reads it.  target.c is built into this test with read()
 * hooked, so that the hook can play the other threads at the one moment
 * that matters: the opener's release closing the queue, and a new queue of
 * another opener opened at once, which the kernel may give the same number.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static ssize_t hooked_read(int fd, void *buf, size_t len);
#define read hooked_read
#include "../../src/target.c"
#undef read

TestSuite(target, .timeout = 30);

static struct real_target rt;
static struct target_queue *closing; /* the queue whose file is released */
static struct target_queue other;    /* another opener's new queue */
static int other_pipe[2] = { -1, -1 };
static bool hook_armed, reused;

static void no_completion(struct scsi_cmd *c, int err)
{
	(void)c;
	(void)err;
	cr_assert(0, "no completion expected");
}

static ssize_t hooked_read(int fd, void *buf, size_t len)
{
	if (hook_armed && closing && fd == closing->fd) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &other };
		int num = closing->fd;

		hook_armed = false;
		/* the opener's release closes its idle queue */
		real_queue_close(&rt.base, closing);
		/* another opener's new queue: the lowest free number, which is
		 * this one if the close above freed it */
		cr_assert(zero(int, pipe2(other_pipe, O_NONBLOCK | O_CLOEXEC)));
		reused = other_pipe[0] == num;
		other.fd = other_pipe[0];
		cr_assert(zero(int, epoll_ctl(rt.epfd, EPOLL_CTL_ADD, other.fd, &ev)));
	}
	return read(fd, buf, len);
}

/*
 * A detaching sg wakes the thread with EPOLLHUP for an idle queue; its
 * opener closes that queue while the thread reads it.  The number must stay
 * the queue's until the read is over (the thread closes it then), so that
 * no other opener's descriptor is read as sg's, or taken out of the
 * thread's epoll set by the thread's removal of the idle queue.
 */
Test(target, a_queue_closed_while_the_thread_reads_it_keeps_its_number_until_then)
{
	struct epoll_event ev;
	int p[2], n;

	rt.epfd = epoll_create1(EPOLL_CLOEXEC);
	cr_assert(ge(int, rt.epfd, 0));
	pthread_mutex_init(&rt.lock, NULL);
	list_init(&rt.closed);
	rt.done = no_completion;
	closing = calloc(1, sizeof(*closing));
	cr_assert(zero(int, pipe2(p, O_NONBLOCK | O_CLOEXEC)));
	closing->fd = p[0];
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = closing };
	cr_assert(zero(int, epoll_ctl(rt.epfd, EPOLL_CTL_ADD, closing->fd, &ev)));

	hook_armed = true;
	reap_one(&rt, closing, EPOLLHUP);
	cr_assert(not(hook_armed), "the read was reached");
	cr_expect(not(reused), "the closed queue's number was free while the thread read it");
	/* the other opener's command completes: its queue still wakes the thread */
	cr_assert(eq(int, (int)write(other_pipe[1], "x", 1), 1));
	n = epoll_wait(rt.epfd, &ev, 1, 0);
	cr_expect(eq(int, n, 1), "the other queue is still in the thread's epoll set");
	cr_expect(eq(int, fcntl(p[0], F_GETFD), -1), "the closed queue's descriptor is closed");
	close(p[1]);
	close(other_pipe[0]);
	close(other_pipe[1]);
	free_closed(&rt);
	close(rt.epfd);
	pthread_mutex_destroy(&rt.lock);
}
