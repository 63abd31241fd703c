/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Calls parked on an opener's queue without a thread (park.c): a read(),
 * SG_IORECEIVE or write() waiting for a completion or for room.  Their
 * interrupts keep the protocol of intr.h: the interrupt callback is
 * registered before the call is listed, and a signal that ends a call not
 * listed yet marks it (ended) so that park_add() answers it EINTR; whoever
 * takes a call off its list to answer it calls park_taken() first, which
 * waits out a running interrupt callback and the signal watcher.
 *
 * Locking: o->lock guards the lists and a call's ended.  libfuse calls the
 * interrupt callback with its request lock held, and the callback takes
 * o->lock: o->lock is never held while calling libfuse's request functions.
 */
#ifndef CUSE_BSG_PARK_H
#define CUSE_BSG_PARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "intr.h"
#include "list.h"

struct cmd;
struct fuse_req; /* libfuse's fuse_req_t */
struct opener;

struct parked;

/*
 * What one kind of parked call does, as the kernel's wait_queue_entry
 * carries its func: the queue core (parking, serving, a gone target, a
 * signal) calls these and names no front end.  A write() waiting for room
 * needs only ready().
 */
struct parked_ops {
	/* o->lock held: would it get on now (then it is not parked)? */
	bool (*ready)(struct opener *o, const struct parked *p);
	/* o->lock held: does what is done satisfy it?  Its completions then
	 * taken into cmds (*n), its result in *res (0 or -errno). */
	bool (*take)(struct opener *o, struct parked *p, struct cmd **cmds, unsigned *n, int *res);
	/* No lock, p off every list: answer its call with what take() gave. */
	void (*answer)(struct opener *o, struct parked *p, struct cmd **cmds, unsigned n, int res);
	/* o->lock held, the target gone: is nothing left for it to wait for? */
	bool (*gone)(struct opener *o, const struct parked *p);
	/* No lock: its call ended with EINTR (a signal); or NULL. */
	void (*ended)(struct opener *o, const struct parked *p);
	/* No lock: o's queue has room again; the calls of this kind waiting in
	 * o->writers go on (a kind that waits for room; else NULL). */
	void (*room)(struct opener *o);
};

/*
 * A read(), SG_IORECEIVE or write() waiting for a completion or for room:
 * what the queue core needs of any of them.  Each kind keeps its own state
 * in buf, allocated past the struct, and only its ops read it.
 */
struct parked {
	const struct parked_ops *ops;
	struct list_head node; /* in o->readers or o->writers */
	struct fuse_req *req;  /* fuse_req_t */
	pid_t tid;
	size_t charged;	  /* bytes charged to the opener (opener_mem_charge) for it */
	size_t mapped;	  /* p is a mapping of this size; else malloc()'s */
	struct opener *o; /* set by park_add() */
	bool ended;	  /* protected by o->lock: a signal ended it before it was listed */
	struct intr intr; /* its interrupt, set by park_add() */
	_Alignas(uint64_t) unsigned char buf[]; /* its kind's own */
};

/* park_add()'s outcome: parked, answered EINTR, or it can go on now. */
enum park_result { PARKED, ANSWERED, READY };

/*
 * Park p on list (at its head if front) unless p->ops->ready() says it can
 * go on now; ANSWERED: it got EINTR.  Its interrupt callback is registered
 * here, and cleared again unless it is PARKED.
 */
enum park_result park_add(struct opener *o, struct list_head *list, struct parked *p, bool front);
/* Taken off a list to be answered: intr_settle() for p. */
void park_taken(struct parked *p);

/* p's charge given back, before its call is answered; p freed (its call not answered yet). */
void park_uncharge(struct opener *o, struct parked *p);
void park_dispose(struct parked *p);
void park_free(struct opener *o, struct parked *p);

#endif /* CUSE_BSG_PARK_H */
