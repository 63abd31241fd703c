/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opener's channels to the target for written commands (chans.c): the
 * first opened at the first write(), more (up to OPENER_CHANS) while every
 * slot is taken and commands wait, the extra ones closed once none of the
 * opener's commands is at the device, so that an idle file holds one.  A
 * command takes a slot of one before it starts (chans_take()), and gives
 * it back when it ends (chans_give()); the commands that waited for a slot
 * are handed to the caller, which starts them.
 */
#ifndef CUSE_BSG_CHANS_H
#define CUSE_BSG_CHANS_H

#include <stdbool.h>

#include "list.h"
#include "opener.h"

struct cmd;
struct target_queue;

/* The extra channels a busy spell's end took off, to be closed with no lock. */
struct chans_idle {
	unsigned n;
	int chan[OPENER_CHANS];
	struct target_queue *tq[OPENER_CHANS];
};

/* o's first channel, opened on first use: 0 or -errno. */
int chans_open(struct opener *o);

/*
 * A slot for cmd (true), or cmd waits on o->pend for one (false).  With
 * every channel's slots taken, one more channel opens, here: the caller's
 * call has been answered.  The commands that waited meanwhile and got a
 * slot go onto more, for the caller to start.  No lock held.
 */
bool chans_take(struct opener *o, struct cmd *cmd, struct list_head *more);

/* o->lock held: the commands waiting for a slot that now have one, onto out. */
void chans_place_pending(struct opener *o, struct list_head *out);

/*
 * o->lock held: cmd's slot given back, the commands that get it onto next;
 * at the end of a busy spell the extra channels into idle (idle->n set
 * then, else left), for chans_close_idle() after the lock.
 */
void chans_give(struct opener *o, struct cmd *cmd, struct list_head *next, struct chans_idle *idle);
void chans_close_idle(struct opener *o, const struct chans_idle *idle);

#endif /* CUSE_BSG_CHANS_H */
