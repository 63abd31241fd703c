/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copy jobs (copyjob.c), for the opener's command queue and its front ends.
 */
#ifndef CUSE_BSG_COPYJOB_H
#define CUSE_BSG_COPYJOB_H

#include <stdbool.h>

#include "list.h"
#include "pool.h"
#include "share.h"

struct bsgdev;
struct opener;

/*
 * A copy into a parked reader's memory, which may stall, asked for on a
 * thread every opener shares (a pool worker, the target's queue, the
 * resolver): done on a thread of the elastic pool, holding a share of the
 * reader's file's and user's threads (share.h), as the call it serves
 * would, so that one user's copies that stall hold at most its own share.
 * Past the share it waits parked, without a thread, until a call of that
 * user gives one back.  It holds a reference to o.
 */
struct copy_job {
	struct pool_work work;
	struct opener *o;
	struct share_wait w;
	struct list_head node;		  /* protected by o->lock: in o->copy_waits while parked */
	bool listed;			  /* protected by o->lock */
	void (*run)(struct copy_job *j);  /* the copy, then frees j and its reference */
	void (*drop)(struct copy_job *j); /* will not run (file or node gone): frees them */
};

/* j, with run, drop and o set: to the elastic pool, with its share or parked for one. */
void copyjob_submit(struct copy_job *j);

/* The node of d ends: its copy jobs parked in s for a share are dropped. */
void copyjob_drain(struct bsgdev *d, struct share *s);

/*
 * o's file is released: under o->lock, the jobs parked for its share taken
 * off it into dropped (one running or parking stays: it sees o->released);
 * then, without the lock, each dropped.
 */
void copyjob_cancel(struct opener *o, struct list_head *dropped);
void copyjob_drop(struct list_head *dropped);

#endif /* CUSE_BSG_COPYJOB_H */
