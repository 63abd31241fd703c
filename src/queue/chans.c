// SPDX-License-Identifier: GPL-2.0-only
/*
 * The opener's channels to the target for written commands (chans.h): the
 * first opened at the first write(), more while every slot is taken and
 * commands wait, the extra ones closed at the end of a busy spell, and the
 * slot each command takes before it starts.
 *
 * Locking: o->lock guards the channels, their counts and o->pend; a
 * channel is opened and closed without it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "bsgdev.h"
#include "chans.h"
#include "cmd.h"
#include "list.h"
#include "lockcheck.h"
#include "opener.h"
#include "target.h"

/* A new channel for written commands (a target queue where the node has them). */
static int chan_new(struct opener *o, int *chan, struct target_queue **tq)
{
	struct target *t = o->d->target;
	int err;

	*chan = -1;
	*tq = NULL;
	if (o->d->queue)
		err = t->ops->queue_open(t, tq);
	else
		err = *chan = t->ops->chan_open(t);
	/* the device node gone with the device is ENODEV, as sg */
	return err < 0 ? (err == -ENOENT ? -ENODEV : err) : 0;
}

static void chan_close(struct opener *o, int chan, struct target_queue *tq)
{
	struct target *t = o->d->target;

	if (tq)
		t->ops->queue_close(t, tq);
	else if (chan >= 0)
		t->ops->chan_close(t, chan);
}

/* Caller holds o->lock: chan (or tq) becomes o's next channel. */
static void chan_install(struct opener *o, int chan, struct target_queue *tq)
{
	assert_held(&o->lock);
	o->achan[o->nchans] = chan;
	o->tq[o->nchans] = tq;
	o->chan_running[o->nchans] = 0;
	o->nchans++;
}

int chans_open(struct opener *o)
{
	struct target_queue *tq;
	bool have;
	int chan, err;

	pthread_mutex_lock(&o->lock);
	have = o->nchans > 0;
	pthread_mutex_unlock(&o->lock);
	if (have)
		return 0;
	err = chan_new(o, &chan, &tq);
	if (err)
		return cmd_target_failed(o->d, err);
	pthread_mutex_lock(&o->lock);
	have = o->nchans > 0;
	if (!have)
		chan_install(o, chan, tq);
	pthread_mutex_unlock(&o->lock);
	if (have) /* another thread of the opener was first */
		chan_close(o, chan, tq);
	return 0;
}

/*
 * Caller holds o->lock: a channel with a free slot for a written command,
 * or -1.  On a binding's one open file SG_IOs take slots too, and one
 * waiting goes first: it holds its caller, a written command nobody.
 */
static int free_chan(struct opener *o)
{
	unsigned max = o->d->max_running;

	assert_held(&o->lock);
	if (!max)
		return o->nchans ? 0 : -1;
	if (o->d->slots_shared)
		return o->nchans && o->running + o->sync_running < max && !o->sync_waiting ? 0 : -1;
	for (unsigned i = 0; i < o->nchans; i++)
		if (o->chan_running[i] < max)
			return (int)i;
	return -1;
}

/* Caller holds o->lock: cmd takes a slot of channel i. */
static void place(struct opener *o, struct cmd *cmd, int i)
{
	assert_held(&o->lock);
	cmd->chan_idx = (unsigned)i;
	cmd->chan = o->achan[i];
	cmd->tq = o->tq[i];
	o->chan_running[i]++;
	o->running++;
}

/* Caller holds o->lock: may o open one more channel now? */
static bool may_grow(struct opener *o)
{
	assert_held(&o->lock);
	return o->d->max_running && !o->d->slots_shared && o->nchans < OPENER_CHANS &&
	       !o->chan_opening && !o->released && !atomic_load(&o->d->target_gone);
}

void chans_place_pending(struct opener *o, struct list_head *out)
{
	struct cmd *cmd;
	int i;

	assert_held(&o->lock);
	while ((cmd = list_first_entry_or_null(&o->pend, struct cmd, pend)) &&
	       (i = free_chan(o)) >= 0) {
		list_del(&cmd->pend);
		place(o, cmd, i);
		list_add_tail(&cmd->pend, out);
	}
}

bool chans_take(struct opener *o, struct cmd *cmd, struct list_head *more)
{
	struct target_queue *tq;
	bool go = false;
	int i, chan, err;

	assert_not_held(&o->lock);
	pthread_mutex_lock(&o->lock);
	while (!go) {
		i = list_empty(&o->pend) ? free_chan(o) : -1; /* in order */
		if (i >= 0) {
			place(o, cmd, i);
			go = true;
			break;
		}
		if (!may_grow(o))
			break;
		o->chan_opening = true;
		pthread_mutex_unlock(&o->lock);
		err = chan_new(o, &chan, &tq);
		pthread_mutex_lock(&o->lock);
		o->chan_opening = false;
		if (err) /* it waits for a slot of those open */
			break;
		if (o->released || atomic_load(&o->d->target_gone)) {
			pthread_mutex_unlock(&o->lock);
			chan_close(o, chan, tq);
			pthread_mutex_lock(&o->lock);
			continue;
		}
		chan_install(o, chan, tq);
		chans_place_pending(o, more); /* those that waited meanwhile, first */
	}
	if (!go)
		list_add_tail(&cmd->pend, &o->pend);
	pthread_mutex_unlock(&o->lock);
	return go;
}

/*
 * Caller holds o->lock, none of o's written commands running: its channels
 * but the first, taken off into chan[] and tq[] to be closed; how many.
 */
static unsigned chans_detach(struct opener *o, int *chan, struct target_queue **tq)
{
	unsigned n = 0;

	assert_held(&o->lock);
	while (o->nchans > 1) {
		o->nchans--;
		chan[n] = o->achan[o->nchans];
		tq[n] = o->tq[o->nchans];
		o->achan[o->nchans] = -1;
		o->tq[o->nchans] = NULL;
		n++;
	}
	return n;
}

void chans_give(struct opener *o, struct cmd *cmd, struct list_head *next, struct chans_idle *idle)
{
	assert_held(&o->lock);
	o->chan_running[cmd->chan_idx]--;
	o->running--;
	if (o->sync_waiting)
		pthread_cond_broadcast(&o->slot_freed);
	chans_place_pending(o, next);
	if (!o->running && list_empty(&o->pend))
		idle->n = chans_detach(o, idle->chan, idle->tq);
}

void chans_close_idle(struct opener *o, const struct chans_idle *idle)
{
	for (unsigned i = 0; i < idle->n; i++)
		chan_close(o, idle->chan[i], idle->tq[i]);
}
