// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt protocol (intr.h) against the fake libfuse: an interrupt
 * before the registration is judged after it returns, never inside it
 * (the fake counts an answer there as misuse, as libfuse would free the
 * request); one after it is judged in the callback; a signal that ends
 * nothing is watched until one does; a settled call is ended by nothing.
 * The call here answers EINTR from its end function, as each caller does.
 * Waits are on a condition variable, bounded by FAKE_WAIT_SECONDS.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "bsgdev.h"
#include "count.h"
#include "fake.h"
#include "intr.h"
#include "list.h"
#include "sigwatch.h"

TestSuite(intr, .timeout = 30);

/* A call whose end function counts, and answers EINTR if answer says so. */
struct call {
	struct intr in;
	struct count ends;
	bool answer;
};

static atomic_bool ends_now; /* the judge's say, as the test sets it */

static bool judge_fake(pid_t tid)
{
	(void)tid;
	return atomic_load(&ends_now);
}

static void call_end(struct intr *in)
{
	struct call *c = container_of(in, struct call, in);

	if (c->answer)
		fuse_reply_err(in->req, EINTR);
	count_add(&c->ends);
}

struct rig {
	struct fake_session *fs;
	struct bsgdev d;
	struct call c;
	fuse_req_t req;
};

/* A call of its own request; signals judged by judge_fake if watched, else all end calls. */
static void rig_init(struct rig *g, bool watched, bool answer)
{
	*g = (struct rig){ .fs = fake_session_new() };
	g->d.name = "fake";
	g->d.signal_ends = watched ? judge_fake : NULL;
	atomic_store(&ends_now, false);
	g->req = fake_req_new(g->fs);
	g->c.ends = (struct count)COUNT_INIT;
	g->c.answer = answer;
	intr_init(&g->c.in, call_end, &g->d, g->req, fake_req_ctx(g->req)->pid);
}

static void rig_fini(struct rig *g)
{
	sigwatch_free(atomic_exchange(&g->d.sigwatch, NULL));
	cr_expect(zero(u32, fake_misuse_count(g->fs)), "a request used after its answer");
	fake_session_free(g->fs);
}

static unsigned ends_of(struct call *c)
{
	return fake_locked(&c->ends.lock, &c->ends.n);
}

/* Wait until c was ended n times; false after FAKE_WAIT_SECONDS. */
static bool wait_ends(struct call *c, unsigned n)
{
	return fake_wait_count(&c->ends.lock, &c->ends.cond, CLOCK_REALTIME, &c->ends.n, n);
}

/* The call was answered EINTR, once; then the rig's end. */
static void rig_fini_eintr(struct rig *g)
{
	struct fake_reply *rep = fake_req_wait(g->req);

	cr_assert(not(eq(ptr, rep, NULL)), "no answer");
	cr_expect(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINTR));
	cr_expect(eq(u32, fake_req_replies(g->req), 1));
	rig_fini(g);
}

/* A watched call, armed, then interrupted by a signal that ends nothing (a stop, say). */
static void rig_stopped(struct rig *g, bool answer)
{
	rig_init(g, true, answer);
	intr_arm(&g->c.in);
	fake_interrupt(g->req);
}

/* The judge says the signal ends the call now: the watcher ends it. */
static void signal_ends_it(struct rig *g)
{
	atomic_store(&ends_now, true);
	cr_assert(wait_ends(&g->c, 1), "the watcher never ended the call");
}

Test(intr, an_interrupt_before_the_registration_is_answered_after_it)
{
	struct rig g;

	rig_init(&g, false, true);
	fake_interrupt(g.req); /* no callback yet: libfuse calls it at registration */
	cr_expect(intr_arm(&g.c.in), "the early interrupt is reported");
	cr_expect(eq(u32, ends_of(&g.c), 1));
	rig_fini_eintr(&g); /* misuse 0: not answered inside fuse_req_interrupt_func() */
}

Test(intr, an_interrupt_after_the_registration_is_answered_in_the_callback)
{
	struct rig g;

	rig_init(&g, false, true);
	cr_expect(not(intr_arm(&g.c.in)));
	cr_expect(zero(u32, ends_of(&g.c)));
	fake_interrupt(g.req);
	cr_expect(eq(u32, ends_of(&g.c), 1));
	rig_fini_eintr(&g);
}

Test(intr, a_signal_that_ends_nothing_is_watched_until_one_does)
{
	struct rig g;

	rig_stopped(&g, true);
	cr_expect(zero(u32, ends_of(&g.c)), "a signal that ends nothing ended the call");
	cr_expect(zero(u32, fake_req_replies(g.req)));
	signal_ends_it(&g); /* then one with a handler */
	rig_fini_eintr(&g);
}

Test(intr, an_early_interrupt_that_ends_nothing_is_watched_too)
{
	struct rig g;

	rig_init(&g, true, true);
	fake_interrupt(g.req);
	cr_expect(intr_arm(&g.c.in));
	cr_expect(zero(u32, ends_of(&g.c)));
	signal_ends_it(&g);
	rig_fini_eintr(&g);
}

Test(intr, a_second_interrupt_leaves_a_watched_call_to_the_watcher)
{
	struct rig g;

	rig_stopped(&g, true); /* watched */
	atomic_store(&ends_now, true);
	fake_interrupt(g.req); /* FUSE sends none; it must not end the call under the watcher */
	cr_assert(wait_ends(&g.c, 1), "the watcher never ended the call");
	rig_fini_eintr(&g); /* the watcher gone: ended once, answered once */
	cr_expect(eq(u32, g.c.ends.n, 1));
}

Test(intr, a_settled_call_is_ended_by_nothing)
{
	struct rig g;

	rig_stopped(&g, false); /* watched */
	intr_settle(&g.c.in);
	atomic_store(&ends_now, true);
	sigwatch_free(atomic_exchange(&g.d.sigwatch, NULL)); /* fires every entry left */
	cr_expect(zero(u32, ends_of(&g.c)), "ended after intr_settle()");
	fuse_reply_err(g.req, EIO); /* answered another way */
	rig_fini(&g);
}

Test(intr, a_call_armed_again_judges_the_one_interrupt_anew)
{
	struct rig g;

	rig_stopped(&g, false);
	intr_settle(&g.c.in); /* taken off, not answered: parked again below */
	cr_expect(zero(u32, ends_of(&g.c)));
	cr_expect(intr_arm(&g.c.in), "FUSE sends no second interrupt: the first is judged");
	signal_ends_it(&g);
	cr_expect(eq(u32, ends_of(&g.c), 1));
	intr_settle(&g.c.in);
	fuse_reply_err(g.req, EINTR);
	rig_fini(&g);
}
