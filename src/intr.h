/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interrupt of a call that waits or runs in the daemon (intr.c): one
 * protocol for a running SG_IO (sgio.c), a call parked on an opener's queue
 * (park.c) and one parked past its share of threads (calls.c).  Each embeds
 * a struct intr and gives one function, end(), that takes its call from
 * wherever it waits and answers it EINTR; this module does the rest.
 *
 * FUSE sends one interrupt per request, for any signal that wakes its
 * caller, and libfuse keeps one callback per request.  As sg's own sleeps,
 * only a signal that runs a handler or kills ends the call (sigwatch.h):
 * after another the call goes on, watched by the device's signal watcher,
 * which ends it once such a signal is pending.
 *
 * An interrupt that came before the callback's registration is judged by
 * fuse_req_interrupt_func() itself, under the request's lock and with no
 * reference of libfuse's on it: an answer there frees the request, whose
 * lock libfuse lets go of next (a double free under churn).  So intr_arm()
 * only notes it there, and judges it once the registration has returned.
 *
 * One interrupt is judged per registration: one more, which FUSE does not
 * send, changes nothing (a call it watches is the watcher's to end).
 *
 * end(in) is called once per interrupt judged to end the call: in the
 * interrupt callback (libfuse's request lock held and a reference of its
 * own on the request: answering is safe), on the watcher's thread (the
 * callback cleared first: none runs, none starts), or on intr_arm()'s
 * caller's thread once the registration has returned.  It answers the call
 * only if it takes it (off its list, its share cancelled, its state
 * exchanged); else whoever has it answers, and end() leaves a mark where
 * the call's parker looks, so that a call not parked yet is answered EINTR
 * by its parker.  Whoever answers a call another way calls intr_settle()
 * first.  Neither end() nor anything after it touches in once the call is
 * answered.
 */
#ifndef CUSE_BSG_INTR_H
#define CUSE_BSG_INTR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sigwatch.h"

struct bsgdev;
struct fuse_req; /* libfuse's fuse_req_t */

/* The interrupt of one call, embedded in the call's own state. */
struct intr {
	void (*end)(struct intr *in); /* its signal ends the call: take it, answer EINTR */
	struct bsgdev *d;	      /* its judge (signal_ends) and signal watcher */
	struct fuse_req *req;	      /* fuse_req_t */
	pid_t tid;		      /* the caller */
	struct sigwatch_entry watch;  /* interrupted by a signal that ends nothing */
	atomic_bool judged;	      /* since intr_arm(): an interrupt was judged */
};

/* in set for req of tid on d, ended by end; nothing registered yet. */
void intr_init(struct intr *in, void (*end)(struct intr *in), struct bsgdev *d,
	       struct fuse_req *req, pid_t tid);

/*
 * Register in's callback on its request: from now on an interrupt is
 * judged, and end() called if its signal ends the call.  true if one came
 * before (it has been judged when this returns, and end() may have been
 * called).  Again after intr_settle() for a call parked again: FUSE's one
 * interrupt is judged anew then.
 */
bool intr_arm(struct intr *in);

/*
 * The one way a call whose callback is registered becomes its answerer's
 * alone: the callback cleared, which waits out one running now (libfuse
 * runs it under the request's lock) and lets none start after; then its
 * watch, if any, off the signal watcher, which waits out a firing.  Not
 * from end() itself.
 */
void intr_settle(struct intr *in);

#endif /* CUSE_BSG_INTR_H */
