/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which signal ends a call.  FUSE sends an interrupt for every signal that
 * wakes a caller blocked in its call: a stop signal, the freezer's wake-up
 * and a signal with no handler too.  sg's and bsg's own sleeps end only for
 * a signal that runs a handler or kills: after a stop, the call goes on.
 * So an interrupt is judged by the caller's pending signals, and one that
 * ends nothing leaves the call waiting.
 *
 * FUSE sends one interrupt per request: after it the caller's thread waits
 * on, woken only by a fatal signal, which sends none.  So a call whose
 * interrupt ended nothing is watched: a thread of the watcher's looks at the
 * caller every SIGWATCH_TICK_MS and answers it, through the call's own
 * end function (intr.h), once a signal that ends it is pending.
 *
 * A handler installed with SA_RESTART gets EINTR all the same: sg's call
 * would say ERESTARTSYS and be restarted, which no FUSE daemon can answer.
 */
#ifndef CUSE_BSG_SIGWATCH_H
#define CUSE_BSG_SIGWATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"

struct fuse_req; /* libfuse's fuse_req_t */

#define SIGWATCH_TICK_MS 20

/* A thread's signal sets, as /proc/TID/status shows them: bit n-1 is signal n. */
struct sigwatch_sigs {
	uint64_t pending; /* SigPnd: the thread's own */
	uint64_t shared;  /* ShdPnd: its process's */
	uint64_t blocked; /* SigBlk */
	uint64_t ignored; /* SigIgn */
	uint64_t caught;  /* SigCgt: with a handler */
};

/* The five sets out of a status file's text.  Pure.  0, or -EINVAL if one is missing. */
int sigwatch_parse(const char *text, size_t len, struct sigwatch_sigs *ret);

/*
 * Does one of the pending, unblocked signals end a call: one with a
 * handler, or one whose default action kills (not ignored)?  Pure.
 */
bool sigwatch_sigs_end_call(const struct sigwatch_sigs *s);

/* The same for thread tid, read now; true if its status cannot be read (gone). */
bool sigwatch_ends_call(pid_t tid);

/*
 * A call being watched: fire(req, data) is called once, on the watcher's
 * thread with no lock held, when the judge says tid's signal ends it.  fire
 * answers the call, unless it was answered meanwhile; the watcher does not
 * touch the entry after calling it.  Embedded in the call's own state.
 */
struct sigwatch_entry {
	struct list_head node; /* protected by the watcher's lock */
	struct fuse_req *req;
	pid_t tid;
	void (*fire)(struct fuse_req *req, void *data); /* fuse_interrupt_func_t */
	void *data;
	struct sigwatch *w; /* set by sigwatch_add() */
};

struct sigwatch;

/*
 * A watcher whose judge is ends_call(tid) (sigwatch_ends_call in the
 * daemon).  Its thread is started at the first call watched and leaves
 * when none is.  0 or -errno.
 */
int sigwatch_new(bool (*ends_call)(pid_t tid), struct sigwatch **ret);

/* Fire every entry left, stop the thread, free.  NULL is fine. */
void sigwatch_free(struct sigwatch *w);

/*
 * Watch e (its req, tid, fire and data set): it is judged at once on the
 * watcher's thread, then each tick.  0, or -errno if no thread could be
 * started (the caller then answers the call itself).
 */
int sigwatch_add(struct sigwatch *w, struct sigwatch_entry *e);

/*
 * sigwatch_add() to the watcher at *slot, made now if there is none, whose
 * judge is ends_call.  -ENOSYS if ends_call is NULL: every signal ends the
 * call, and the caller answers it now.
 */
int sigwatch_watch(struct sigwatch *_Atomic *slot, bool (*ends_call)(pid_t tid),
		   struct sigwatch_entry *e);

/*
 * Stop watching e, if it ever was: after this, fire is not running and
 * will not be called.  Call it before answering the call another way.
 */
void sigwatch_cancel(struct sigwatch_entry *e);

#endif /* CUSE_BSG_SIGWATCH_H */
