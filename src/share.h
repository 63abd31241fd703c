/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shares of the daemon: how many files each user may have open, and how
 * many of a user's calls, and of one open file's, may hold a thread at once.
 * A call that would hold more is parked without a thread (a struct
 * share_wait of its own) and resumed, holding the share another call gave
 * back, on a thread of its caller's choice.  So a client that stalls every
 * thread it gets (a copy of its memory that never ends) stalls only its own
 * share, and the threads others need stay free.
 *
 * One struct share per process, shared by every node; any thread.  The
 * counts are under one lock, taken once when a call starts and once when it
 * ends.
 */
#ifndef CUSE_BSG_SHARE_H
#define CUSE_BSG_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"

struct share_limits {
	unsigned max_files;	 /* open files in all; uid 0 may pass it */
	unsigned files_per_user; /* open files of one user */
	unsigned calls_per_file; /* calls of one open file holding a thread */
	unsigned calls_per_user; /* calls of one user holding a thread */
	uint64_t mem_per_user;	 /* bytes one user's files and parked calls may hold; 0: none */
};

struct share;
struct share_user;
struct share_file;

/* A call holding a thread's share, from share_enter() or a resumed wait to share_end(). */
struct share_call {
	struct share *s; /* NULL: nothing held */
	struct share_user *u;
	struct share_file *f;
	bool taken; /* handed to another thread (share_take()): its caller does not end it */
};

enum share_wait_state { SHARE_NEW, SHARE_PARKED, SHARE_RUNNING, SHARE_CANCELLED };

/*
 * A parked call.  Owned by its maker until share_park() says SHARE_PARKED,
 * then by the share until share_cancel(), share_drain() or resume() gives
 * it back.
 */
struct share_wait {
	struct list_head node;	/* protected by the share's lock: in its user's waiting list */
	struct list_head fnode; /* protected by the share's lock: in its file's */
	uid_t uid;
	struct share_file *f;
	const void *owner;	/* for share_drain() */
	int state;		/* protected by the share's lock: enum share_wait_state */
	struct share_call call; /* once it runs */
	/* it holds a share now (w->call): run it on a thread, never this one's caller's lock held */
	void (*resume)(struct share_wait *w);
};

/* A new share with these limits.  0 or -ENOMEM. */
int share_new(const struct share_limits *lim, struct share **ret);

/* Free s, with no call or file left.  NULL is fine. */
void share_free(struct share *s);

/*
 * A file opened by uid: *ret counts its calls, and it counts in uid's open
 * files and in all.  0, -ENFILE past max_files, -EMFILE past files_per_user,
 * or -ENOMEM.
 */
int share_file_open(struct share *s, uid_t uid, struct share_file **ret);

/* f's file is closed (release): f goes once its last call has ended. */
void share_file_close(struct share_file *f);

/*
 * A call of uid on the open file f starts: true, and *ret holds its share,
 * if both uid's and f's calls are under their bound; false, nothing held.
 */
bool share_enter(struct share_file *f, uid_t uid, struct share_call *ret);

/*
 * Park w, made after share_enter() said false.  SHARE_RUNNING: a share came
 * free meanwhile, w->call holds it, run it now; SHARE_PARKED: w belongs to
 * the share; SHARE_CANCELLED: share_cancel() came first, answer it.
 */
int share_park(struct share *s, struct share_wait *w);

/*
 * The call of w was interrupted.  true: w was parked and is the caller's
 * now, to answer; false: it is not (not parked yet, which share_park() then
 * says, or already running).
 */
bool share_cancel(struct share *s, struct share_wait *w);

/*
 * The call of c is over: its share goes back, and the first call its user
 * parked that now fits is given it and resumed (w->resume()); so is the
 * first that waits for c's file, of any user, if the file still has room
 * (a file full of one user's calls parks another's).  Any thread, after the
 * call's answer: its file may be closed by then.
 */
void share_end(struct share_call *c);

/* The thread's current call (or NULL): set by the caller around a call's run. */
void share_set_current(struct share_call *c);

/*
 * Does the running thread run a call of the open file f, holding its share
 * (set by share_set_current(), not taken over)?  Then the work of f's other
 * calls may run on it too: it counts in f's and its user's share already.
 */
bool share_holds(const struct share_file *f);
/*
 * Take over the running thread's current call, for a thread that ends it
 * later with share_end() (*ret: nothing held if there is none).
 */
void share_take(struct share_call *ret);

/* Every call owner parked, unlinked and given back on out (their node), for the owner to answer. */
void share_drain(struct share *s, const void *owner, struct list_head *out);

/*
 * n more bytes held for uid (its files' data buffers, its parked calls):
 * 0, or -ENOMEM past mem_per_user (uid 0 may pass it, as it may pass
 * max_files: the daemon's own bound still holds it).  Uncharged with the
 * same uid.
 */
int share_mem_charge(struct share *s, uid_t uid, uint64_t n);
void share_mem_uncharge(struct share *s, uid_t uid, uint64_t n);

/* Calls of uid holding a share now, and parked (for the tests and the log). */
void share_user_counts(struct share *s, uid_t uid, unsigned *busy, unsigned *parked,
		       unsigned *files);

/* Every user's together, for the live view. */
struct share_totals {
	unsigned files, busy, parked;
	struct share_limits lim;
};
void share_totals(struct share *s, struct share_totals *ret);

#endif /* CUSE_BSG_SHARE_H */
