// SPDX-License-Identifier: GPL-2.0-only
/*
 * The opener's commands as calls take them (done.h): which a call wants,
 * the oldest done, taking them, the copy of one into its caller's memory,
 * and putting back what a call could not hand over.
 *
 * Locking: o->lock guards o->cmds and the counts, as the callers say.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "bsgdev.h"
#include "cmd.h"
#include "done.h"
#include "guard.h"
#include "list.h"
#include "lockcheck.h"
#include "opener.h"
#include "scsi.h"

int done_pack_id(const struct cmd *cmd)
{
	return cmd->r.version == 3 ? cmd->r.hdr.v3.pack_id : (int)cmd->r.hdr.v4.request_extra;
}

/*
 * The call passed opener_check_caller(): c's owner is the process that
 * wrote or kept it (0: any); --shared-queue's files share every
 * completion, as pre-4.19 bsg did.
 */
bool done_wanted(const struct opener *o, const struct cmd *c, const struct want *w)
{
	assert_held(&o->lock);
	if (c->mrq != w->mrq)
		return false;
	if (w->version && c->r.version != w->version)
		return false;
	if (c->owner && c->owner != w->owner && !o->shared)
		return false;
	return w->id == -1 || (w->by_tag ? c->tag : done_pack_id(c)) == w->id;
}

/*
 * Caller holds o->lock.  The oldest command from pos (a node of o->cmds, or
 * the head itself: none) on that w wants, done or not.
 */
struct cmd *done_find_from(struct opener *o, struct list_head *pos, const struct want *w, bool done)
{
	assert_held(&o->lock);
	for (; pos != &o->cmds; pos = pos->next) {
		struct cmd *c = list_entry(pos, struct cmd, node);

		if (c->done == done && done_wanted(o, c, w))
			return c;
	}
	return NULL;
}

/* Caller holds o->lock.  The oldest completion a reader may take, or NULL. */
struct cmd *done_oldest(struct opener *o, const struct want *w)
{
	assert_held(&o->lock);
	return done_find_from(o, o->cmds.next, w, true);
}

/* Caller holds o->lock: is a command w wants still running? */
bool done_still_running(struct opener *o, const struct want *w)
{
	assert_held(&o->lock);
	return done_find_from(o, o->cmds.next, w, false) != NULL;
}

/*
 * Caller holds o->lock.  Take up to room headers' worth of completions for
 * a reader: one v3, or as many v4 as fit, at most READ_MAX_HDRS (cmds'
 * size).  Returns how many, in cmds.
 */
unsigned done_take(struct opener *o, const struct want *w, size_t room, struct cmd **cmds)
{
	struct want v4 = *w;
	struct cmd *c;
	unsigned n = 0;

	assert_held(&o->lock);
	c = done_oldest(o, w);
	v4.version = 4;
	while (c) {
		struct list_head *next = c->node.next;

		list_del(&c->node);
		o->queued--;
		o->done--;
		cmds[n++] = c;
		if (c->r.version == 3 || (n + 1) * SCSI_V4_HDR_LEN > room || w->id != -1 ||
		    n == READ_MAX_HDRS)
			break;
		c = done_find_from(o, next, &v4, true);
	}
	return n;
}

/* Data-in and sense into the reader; the header into out.  0 or -errno. */
static int deliver_one(struct cmd *cmd, pid_t tid, unsigned char *out)
{
	unsigned sense_len;
	int err;

	if (cmd->err)
		return cmd->err; /* the target's SG_IO itself failed */
	sense_len = scsi_complete(&cmd->r, &cmd->c.res, cmd->duration);
	if (cmd->aborted && cmd->r.version == 3) {
		cmd->r.hdr.v3.info |= SG_INFO_ABORTED;
	} else if (cmd->aborted) {
		cmd->r.hdr.v4.info |= SG_INFO_ABORTED;
		/* bsg's rule leaves out the DRIVER_SOFT an unrun abort sets */
		cmd->r.hdr.v4.driver_status |= cmd->c.res.driver_status;
	}
	err = cmd_put_data(cmd, tid, sense_len);
	if (!err)
		memcpy(out, cmd->r.hdr.raw, cmd->r.hdr_len);
	return err;
}

void done_put_back(struct opener *o, struct cmd **cmds, unsigned n)
{
	bool released;

	assert_not_held(&o->lock);
	pthread_mutex_lock(&o->lock);
	released = o->released;
	for (unsigned i = n; !released && i--;) {
		struct cmd *c = cmds[i];

		c->mrq = 0;		      /* a blocking array's call is over: anyone's */
		list_add(&c->node, &o->cmds); /* still the oldest completions */
		o->queued++;
		o->done++;
	}
	pthread_mutex_unlock(&o->lock);
	if (!released)
		return;
	for (unsigned i = 0; i < n; i++)
		cmd_free(cmds[i]); /* cmdq_release() has swept the list: nobody reads them */
}

struct done_answer done_hand_over(struct opener *o, const struct done_call *c, struct cmd **cmds,
				  unsigned n)
{
	struct done_answer a = { .err = c->out ? c->err : -ENOMEM, .mine = true };
	unsigned ok = 0, reached, used;
	struct guard g;

	assert_not_held(&o->lock);
	if (!a.err)
		a.err = guard_begin(o->d->wd, &g, c->req, c->tid, &o->stuck);
	if (!a.err) {
		for (; ok < n; ok++) {
			a.err = deliver_one(cmds[ok], c->tid, c->out + a.len);
			if (a.err)
				break;
			a.len += cmds[ok]->r.hdr_len;
		}
		if (c->write_out && (ok || !n)) {
			int err = c->write_out(c, cmds, ok);

			if (err) { /* the completions are used: lost, as sg's */
				a.err = err;
				a.len = 0;
			}
		}
		a.mine = guard_end(o->d->wd, &g);
	}
	reached = ok + (a.err && ok < n);
	used = ok ? ok : n && c->out ? 1 : 0;
	if (!a.mine)
		used = reached;
	if (used < n)
		done_put_back(o, cmds + used, n - used);
	for (unsigned k = 0; k < used; k++)
		cmd_recycle(cmds[k]);
	a.back = used < n;
	return a;
}
