// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt protocol of every call that waits or runs (intr.h).
 */
#include <fuse3/fuse_lowlevel.h>

#include "bsgdev.h"
#include "intr.h"
#include "sigwatch.h"

void intr_init(struct intr *in, void (*end)(struct intr *in), struct bsgdev *d,
	       struct fuse_req *req, pid_t tid)
{
	*in = (struct intr){ .end = end, .d = d, .req = req, .tid = tid };
}

/*
 * The signal watcher's: a signal that ends the call is pending now.  The
 * callback that watched the call may not have returned yet: it is waited
 * out, and none runs after, before end() may answer the call.
 */
static void fired(fuse_req_t req, void *data)
{
	struct intr *in = data;

	fuse_req_interrupt_func(req, NULL, NULL);
	in->end(in);
}

/*
 * The caller got a signal: one that ends the call does so now; another is
 * watched (sigwatch.h) until the call's answerer cancels that.  Once per
 * registration: FUSE sends one interrupt per request, and another judge
 * could neither end a watched call (its entry still on the watcher) nor
 * watch it twice.
 */
static void judge(struct intr *in)
{
	if (atomic_exchange(&in->judged, true))
		return;
	if (!bsgdev_signal_ends(in->d, in->tid)) {
		in->watch = (struct sigwatch_entry){
			.req = in->req, .tid = in->tid, .fire = fired, .data = in
		};
		if (!sigwatch_watch(&in->d->sigwatch, in->d->signal_ends, &in->watch))
			return; /* the call may be answered, and in gone, already */
		in->watch = (struct sigwatch_entry){ 0 };
	}
	in->end(in);
}

/* intr_arm()'s call while it registers the callback on this thread. */
static __thread struct intr *registering;
static __thread bool came_early;

/* Called by libfuse with the request's lock held. */
static void interrupted(fuse_req_t req, void *data)
{
	struct intr *in = data;

	(void)req;
	if (in == registering) {
		came_early = true; /* no reference of libfuse's on req: judged after */
		return;
	}
	judge(in);
}

bool intr_arm(struct intr *in)
{
	bool early;

	atomic_store(&in->judged, false);
	registering = in;
	came_early = false;
	fuse_req_interrupt_func(in->req, interrupted, in);
	registering = NULL;
	early = came_early;
	if (early) /* FUSE sent its one interrupt: no other judge */
		judge(in);
	return early;
}

void intr_settle(struct intr *in)
{
	fuse_req_interrupt_func(in->req, NULL, NULL);
	sigwatch_cancel(&in->watch);
}
