// SPDX-License-Identifier: GPL-2.0-only
/*
 * The opener's command queue (cmdq.h, cmdq_i.h): its commands from a call
 * to the target and back to its done list, the caller check, the serving
 * of parked readers, SG_IO's kept orphans and shared slots, and the file's
 * and the target's end.  Its parts: chans.c (the channels and their slots),
 * park.c (parked calls and their interrupts), done.c (taking completions),
 * copyjob.c (copies on the elastic pool).  The front ends, async.c and
 * sgv4.c, park their calls with their own functions (struct parked_ops).
 *
 * Locking: o->lock guards the lists, the parked calls and the poll handle.
 * No fuse_reply_*, SG_IO or client copy happens under it (park.h says why).
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bsgdev.h"
#include "chans.h"
#include "cmd.h"
#include "cmdq.h"
#include "cmdq_i.h"
#include "copyjob.h"
#include "deadline.h"
#include "guard.h"
#include "ioctx.h"
#include "list.h"
#include "lockcheck.h"
#include "log.h"
#include "opener.h"
#include "sigwatch.h"
#include "uaccess.h"

/*
 * How many commands an opener may have written and not yet read: for v3
 * the node's --queue-depth, sg's 16 by default (cmd_q is sg's switch, which
 * a v3 write turns on); for v4 bsg's depth, SG_SET_COMMAND_Q's.
 */
unsigned cmdq_queue_limit(struct opener *o, unsigned version)
{
	int q = atomic_load(&o->cmd_q);

	if (version == 3)
		return o->d->queue_depth ? o->d->queue_depth : SG_MAX_QUEUE;
	return q > 1 ? (unsigned)q : SG_MAX_QUEUE;
}

/* POLLOUT's limit: that of the headers the file writes (v4 before any write). */
unsigned cmdq_poll_limit(struct opener *o)
{
	return cmdq_queue_limit(o, atomic_load(&o->wrote) == 3 ? 3 : 4);
}

/* Caller holds o->lock.  The poll handle to notify, taken, or NULL. */
struct fuse_pollhandle *cmdq_take_poller(struct opener *o)
{
	struct fuse_pollhandle *ph;

	assert_held(&o->lock);
	ph = o->ph;
	o->ph = NULL;
	return ph;
}

void cmdq_wake_poller(struct fuse_pollhandle *ph)
{
	if (!ph)
		return;
	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

/* Notify o's poller, if one waits: its file may have become ready. */
static void wake_poller(struct opener *o)
{
	struct fuse_pollhandle *ph;

	pthread_mutex_lock(&o->lock);
	ph = cmdq_take_poller(o);
	pthread_mutex_unlock(&o->lock);
	cmdq_wake_poller(ph);
}

static void run_async(struct pool_work *w, unsigned slot);

static void complete(struct cmd *cmd, int err, bool placed, bool here);

/*
 * Does this thread run a call of o's file, holding its share of threads?
 * Then o's commands and the copies into its parked readers may run on it:
 * it is the file's own, not one that others need.
 */
static bool thread_is_files(const struct opener *o)
{
	return o->sf ? share_holds(o->sf) : !o->d->serve;
}

/*
 * A device this fast (its moving average, bsgdev.h) runs a call's commands
 * here one after another.  A slower one gets them all at once, and its
 * commands would hold their files' threads (and shares) for as long as
 * each takes: even a call's one command then waits at the target with no
 * thread of the file's held, and the file's next calls go on meanwhile.
 */
#define RUN_HERE_US 2000

/*
 * Run cmd here, blocking, as SG_IO does (true), if the device is fast, this
 * is a thread of its file's and few enough libfuse workers do so: the
 * write() that brought it is answered, and its completion and the parked
 * reader it satisfies need no other thread.  Otherwise (or with no
 * blocking SG_IO on a target queue) false: it goes to the queue, where the
 * device gets the depth.
 */
static bool run_here(struct cmd *cmd)
{
	struct bsgdev *d = cmd->d;

	if (d->queue && !d->target->ops->queue_sg_io)
		return false;
	if (atomic_load_explicit(&d->target_us, memory_order_relaxed) > RUN_HERE_US)
		return false;
	if (!thread_is_files(cmd->o))
		return false;
	if (atomic_fetch_add(&d->inline_busy, 1) >= d->inline_max) {
		atomic_fetch_sub(&d->inline_busy, 1);
		return false;
	}
	complete(cmd, cmd_run_target(cmd), true, true);
	atomic_fetch_sub(&d->inline_busy, 1);
	return true;
}

/*
 * Start cmd at the target: here (see run_here(); not for a command some
 * other call's end started), else on its queue or on a pool worker.
 */
static void dispatch(struct cmd *cmd, bool here)
{
	struct bsgdev *d = cmd->d;
	int err;

	if (here && run_here(cmd))
		return;
	if (!d->queue || target_bulk(d->target, &cmd->c)) {
		cmd->work.run = run_async;
		pool_submit(d->pool, &cmd->work);
		return;
	}
	stat_target_start(d, &cmd->sent);
	err = atomic_load(&d->target_gone)
		      ? -ENODEV
		      : d->target->ops->queue_submit(d->target, cmd->tq, &cmd->c);
	if (err) {
		atomic_fetch_sub(&d->at_target, 1); /* it never got there */
		cmdq_complete(cmd, cmd_target_failed(d, err), true);
	}
}

/* o->lock held: cmd joins o's commands, with a tag of its own and a reference to o. */
static void queue_add(struct opener *o, struct cmd *cmd)
{
	assert_held(&o->lock);
	o->queued++;
	opener_get_locked(o);
	cmd->tag = o->next_tag;
	o->next_tag = o->next_tag == INT32_MAX ? 0 : o->next_tag + 1;
	list_add_tail(&cmd->node, &o->cmds);
}

/* o->lock held: undo queue_add() for cmd, never seen by a reader. */
static void queue_del(struct opener *o, struct cmd *cmd)
{
	assert_held(&o->lock);
	list_del(&cmd->node);
	o->queued--;
	opener_put_locked(o);
}

void cmdq_batch_init(struct batch *b)
{
	list_init(&b->cmds);
}

static void batch_add(struct batch *b, struct cmd *cmd)
{
	list_add_tail(&cmd->pend, &b->cmds);
}

/* The batch's first command, taken off it, or NULL. */
static struct cmd *batch_take(struct batch *b)
{
	struct cmd *cmd = list_first_entry_or_null(&b->cmds, struct cmd, pend);

	if (cmd)
		list_del(&cmd->pend);
	return cmd;
}

static void dispatch_all(struct list_head *cmds)
{
	struct cmd *cmd, *next;

	/* not here: a completion run here would start the next, and so on */
	list_for_each_entry_safe(cmd, next, cmds, pend) {
		list_del(&cmd->pend);
		dispatch(cmd, false);
	}
}

/* cmd may start now (true), or waits for a slot; the ones that waited and got one go. */
static bool take_place(struct opener *o, struct cmd *cmd)
{
	struct list_head more = LIST_HEAD_INIT(more);
	bool go = chans_take(o, cmd, &more);

	dispatch_all(&more);
	return go;
}

/* After the write's answer: each command to the target, or to wait for its place. */
void cmdq_batch_start(struct batch *b)
{
	struct cmd *cmd;

	while ((cmd = batch_take(b)))
		if (take_place(cmd->o, cmd))
			dispatch(cmd, true);
}

/*
 * o's queue lost commands that never ran: a parked blocking array that
 * counted them may be satisfied now, and a poller may write again.
 */
static void queue_shrank(struct opener *o)
{
	cmdq_serve_later(o);
	wake_poller(o);
}

/* Undo what b took: the write that took them was answered with an error. */
void cmdq_batch_cancel(struct opener *o, struct batch *b)
{
	struct cmd *cmd;
	bool undone = false;

	while ((cmd = batch_take(b))) {
		pthread_mutex_lock(&o->lock);
		queue_del(o, cmd);
		pthread_mutex_unlock(&o->lock);
		cmd_recycle(cmd);
		undone = true;
	}
	cmdq_batch_init(b);
	if (undone)
		queue_shrank(o);
}

/* The CDB and data-out of cmd from the writer of req, during its write(). */
static int fetch_guarded(struct opener *o, fuse_req_t req, struct cmd *cmd)
{
	struct guard g;
	int err = guard_begin(o->d->wd, &g, req, cmd->tid, &o->stuck);

	if (err)
		return err;
	err = cmd_fetch(cmd);
	return guard_end(o->d->wd, &g) ? err : CMD_ANSWERED;
}

/*
 * cmd at the tail of o's list, with its generated_tag, holding o: 0, or
 * sg's errno for a full queue (cmd untouched).
 */
static int enqueue(struct opener *o, struct cmd *cmd, const struct origin *from)
{
	unsigned version = cmd->r.version;

	pthread_mutex_lock(&o->lock);
	/* the ioctls' bound is the file's, whatever the write()s' depth */
	if (o->queued >= (from->ioctl ? BSGDEV_MAX_DEPTH : cmdq_queue_limit(o, version))) {
		pthread_mutex_unlock(&o->lock);
		/* sg: EDOM, blocking or not */
		return version == 3 && !from->ioctl ? -EDOM : -EAGAIN;
	}
	queue_add(o, cmd);
	pthread_mutex_unlock(&o->lock);
	return 0;
}

/* Undo enqueue(): cmd, refused before its call was answered, was never seen. */
static void dequeue(struct opener *o, struct cmd *cmd)
{
	pthread_mutex_lock(&o->lock);
	queue_del(o, cmd);
	pthread_mutex_unlock(&o->lock);
}

/* What a header of version says of the file: the last written, and sg's command queuing. */
static void note_version(struct opener *o, unsigned version, bool by_ioctl)
{
	int off = 0;

	if (!by_ioctl)
		atomic_store(&o->wrote, version);
	if (version == 3)
		atomic_compare_exchange_strong(&o->cmd_q, &off, 1); /* as sg_new_write() */
}

/*
 * Take one header into the opener's queue and into b, to start once the
 * call is answered.  0, -EDOM or -EAGAIN when the opener's queue is full,
 * CMD_ANSWERED, or the header's errno.  *ret_tag (if not NULL): the
 * command's generated_tag.
 */
int cmdq_submit_one(struct opener *o, fuse_req_t req, pid_t tid, const void *hdr, size_t len,
		    struct batch *b, const struct origin *from, int *ret_tag)
{
	struct cmd *cmd;
	struct scsi_req r;
	int err;

	err = scsi_decode(hdr, len, &r);
	if (!err)
		err = cmd_check_limits(o->d, true, &r);
	if (!err)
		err = cmd_new(o, &r, tid, &cmd);
	if (err)
		return err;
	cmd->owner = from->owner;
	cmd->mrq = from->mrq;
	cmd->mrq_ind = from->mrq_ind;
	err = enqueue(o, cmd, from);
	if (err) {
		cmd_free(cmd);
		return err;
	}
	if (ret_tag)
		*ret_tag = cmd->tag;
	note_version(o, r.version, from->ioctl);
	err = fetch_guarded(o, req, cmd);
	if (!err)
		err = cmd_check_access(cmd, !from->ioctl);
	if (err) {
		dequeue(o, cmd);
		cmd_recycle(cmd);
		queue_shrank(o);
		return err;
	}
	batch_add(b, cmd);
	return 0;
}

#define SHORT_CALL_TRIES 100	 /* looks at /proc/TID/syscall ... */
#define SHORT_CALL_NS	 100000L /* ... this far apart */

int cmdq_short_call(pid_t tid, bool write, size_t size, size_t need, int err)
{
	const struct timespec pause = { 0, SHORT_CALL_NS };
	uint64_t count = 0;
	int ret = -EAGAIN;

	for (int i = 0; i < SHORT_CALL_TRIES && ret == -EAGAIN; i++) {
		ret = uaccess_call_count(tid, write, &count);
		if (ret == -EAGAIN)
			nanosleep(&pause, NULL);
	}
	return !ret && count > size && count >= need ? -EFAULT : err;
}

/*
 * Caller holds o->lock.  The device gone, the parked readers with nothing
 * left to wait for, moved to the front of gone: they get ENODEV.
 */
static void take_gone_readers(struct opener *o, struct list_head *gone)
{
	struct parked *p, *next;

	assert_held(&o->lock);
	if (!atomic_load(&o->d->target_gone))
		return;
	list_for_each_entry_safe(p, next, &o->readers, node) {
		if (!p->ops->gone(o, p))
			continue;
		list_del(&p->node);
		list_add(&p->node, gone);
	}
}

/* Answer err to every call of o on list, and free them. */
static void answer_all(struct opener *o, struct list_head *list, int err)
{
	struct parked *p, *next;

	list_for_each_entry_safe(p, next, list, node) {
		park_taken(p);
		park_uncharge(o, p);
		fuse_reply_err(p->req, err);
		park_dispose(p);
	}
}

/*
 * Under o->lock: the first parked reader a completion now satisfies, taken
 * off the list, with its completions in cmds (*n) and, for a receive, its
 * result (*res: 0 or -errno); or NULL.
 */
static struct parked *satisfied_reader(struct opener *o, struct cmd **cmds, unsigned *n, int *res)
{
	struct parked *it;

	assert_held(&o->lock);
	list_for_each_entry(it, &o->readers, node) {
		if (!it->ops->take(o, it, cmds, n, res))
			continue;
		list_del(&it->node);
		return it;
	}
	return NULL;
}

void cmdq_room(struct opener *o)
{
	const struct parked_ops *ops;
	struct parked *p;

	pthread_mutex_lock(&o->lock);
	p = list_first_entry_or_null(&o->writers, struct parked, node);
	ops = p ? p->ops : NULL;
	pthread_mutex_unlock(&o->lock);
	if (ops && ops->room)
		ops->room(o);
	wake_poller(o);
}

/* Serve the parked readers that a completion now satisfies. */
void cmdq_serve_readers(struct opener *o)
{
	struct cmd *cmds[RCV_MAX];
	struct list_head gone;
	struct parked *p;
	unsigned n = 0;
	int res = 0;

	for (;;) {
		list_init(&gone);
		pthread_mutex_lock(&o->lock);
		p = satisfied_reader(o, cmds, &n, &res);
		if (!p)
			take_gone_readers(o, &gone);
		pthread_mutex_unlock(&o->lock);
		if (!p) {
			answer_all(o, &gone, ENODEV);
			return;
		}
		park_taken(p);
		p->ops->answer(o, p, cmds, n, res); /* what it gave back, the loop serves */
		free(p);
	}
}

/* cmdq_serve_readers(o), one such job per opener at a time. */
static void serve_run_here(struct opener *o)
{
	pthread_mutex_lock(&o->lock);
	o->serve_queued = false; /* what completes from now on queues another */
	pthread_mutex_unlock(&o->lock);
	cmdq_serve_readers(o);
	opener_put(o);
}

static void serve_copy(struct copy_job *j)
{
	struct opener *o = j->o;

	free(j);
	serve_run_here(o);
}

static void serve_dropped(struct copy_job *j)
{
	struct opener *o = j->o;

	pthread_mutex_lock(&o->lock);
	o->serve_queued = false;
	pthread_mutex_unlock(&o->lock);
	free(j);
	opener_put(o);
}

/*
 * No memory for a serve job: o's parked readers are answered ENOMEM on this
 * thread, which may be one every opener shares, so their memory untouched;
 * what has completed stays for their next read.
 */
static void serve_no_memory(struct opener *o)
{
	struct list_head all = LIST_HEAD_INIT(all);
	struct parked *p, *next;

	pthread_mutex_lock(&o->lock);
	o->serve_queued = false;
	list_splice_tail(&o->readers, &all);
	pthread_mutex_unlock(&o->lock);
	if (!list_empty(&all))
		bsgdev_warn(o->d, "no memory to serve parked reads: answered ENOMEM");
	list_for_each_entry_safe(p, next, &all, node) {
		park_taken(p);
		park_uncharge(o, p);
		if (p->ops->ended)
			p->ops->ended(o, p);
		fuse_reply_err(p->req, ENOMEM);
		park_dispose(p);
	}
	opener_put(o);
}

/* A completion came: serve o's parked readers, on a copy job (above). */
void cmdq_serve_later(struct opener *o)
{
	struct copy_job *j;
	bool go;

	if (!o->d->serve) {
		cmdq_serve_readers(o);
		return;
	}
	pthread_mutex_lock(&o->lock);
	go = !list_empty(&o->readers) && !o->serve_queued;
	if (go) {
		o->serve_queued = true;
		opener_get_locked(o);
	}
	pthread_mutex_unlock(&o->lock);
	if (!go)
		return;
	j = malloc(sizeof(*j));
	if (!j) {
		serve_no_memory(o);
		return;
	}
	*j = (struct copy_job){ .o = o, .run = serve_copy, .drop = serve_dropped };
	copyjob_submit(j);
}

void cmdq_set_share(struct opener *o, struct share *s, struct share_file *sf, uid_t uid)
{
	o->share = s;
	o->sf = sf;
	pthread_mutex_lock(&o->lock);
	o->uid = uid; /* the live view reads it */
	pthread_mutex_unlock(&o->lock);
}

void cmdq_complete(struct cmd *cmd, int err, bool placed)
{
	complete(cmd, err, placed, false);
}

/*
 * cmd ended with err: queue it for the reader, or drop it if its file is
 * gone, and (placed: it held a slot at the target) start the commands
 * waiting for one; the last of a busy spell closes the extra channels.
 * The parked readers it satisfies are served here (a thread of the file's,
 * run_here()) or on a copy job.
 */
static void complete(struct cmd *cmd, int err, bool placed, bool here)
{
	struct opener *o = cmd->o;
	struct fuse_pollhandle *ph = NULL;
	struct list_head next = LIST_HEAD_INIT(next);
	struct chans_idle idle;
	bool orphan;

	if (err == -ENODEV || err == -ENXIO) {
		/* the device went under it: a header, as the SCSI layer ends such
		 * a command, not an errno that would leave it unanswered */
		cmd->c.res = (struct scsi_result){ .host_status = SCSI_DID_NO_CONNECT,
						   .resid = (int32_t)cmd->c.data_len };
		err = 0;
	}
	cmd->err = err;
	cmd_clear_tail(cmd);
	cmd_duration(cmd);
	cmd_log(cmd, cmd->err);
	idle.n = 0;
	pthread_mutex_lock(&o->lock);
	if (placed)
		chans_give(o, cmd, &next, &idle);
	orphan = o->released;
	if (orphan) {
		o->queued--;
	} else {
		/* the done list is in completion order: move it to the tail */
		list_del(&cmd->node);
		list_add_tail(&cmd->node, &o->cmds);
		cmd->done = true;
		o->done++;
		ph = cmdq_take_poller(o);
	}
	pthread_mutex_unlock(&o->lock);
	if (orphan)
		cmd_free(cmd); /* its opener is gone: nobody may read it */
	else if (here)
		cmdq_serve_readers(o);
	else
		cmdq_serve_later(o);
	cmdq_wake_poller(ph);
	dispatch_all(&next);
	chans_close_idle(o, &idle);
	opener_put(o);
}

bool cmdq_slot_take(struct cmd *cmd)
{
	struct opener *o = cmd->o;
	unsigned max = o->d->max_running;
	bool go = true;

	if (!o->d->slots_shared)
		return true;
	pthread_mutex_lock(&o->lock);
	o->sync_waiting++;
	/* only for the written ones' slots: SG_IOs alone meet sg's own EDOM */
	while (o->running && o->running + o->sync_running >= max) {
		struct timespec tick;

		/* a signal that ended the call is seen within a tick */
		if (atomic_load(&cmd->state) == SGIO_INTERRUPTED) {
			go = false;
			break;
		}
		tick = deadline_ms(CLOCK_REALTIME, 50);
		pthread_cond_timedwait(&o->slot_freed, &o->lock, &tick);
	}
	o->sync_waiting--;
	if (go)
		o->sync_running++;
	pthread_mutex_unlock(&o->lock);
	return go;
}

void cmdq_slot_give(struct opener *o)
{
	struct list_head next = LIST_HEAD_INIT(next);

	if (!o->d->slots_shared)
		return;
	pthread_mutex_lock(&o->lock);
	o->sync_running--;
	if (o->sync_waiting)
		pthread_cond_broadcast(&o->slot_freed);
	else
		chans_place_pending(o, &next);
	pthread_mutex_unlock(&o->lock);
	dispatch_all(&next);
}

static void run_async(struct pool_work *w, unsigned slot)
{
	struct cmd *cmd = container_of(w, struct cmd, work);

	(void)slot;
	cmdq_complete(cmd, cmd_run_target(cmd), true);
}

void cmdq_target_done(struct scsi_cmd *c, int err)
{
	struct cmd *cmd = container_of(c, struct cmd, c);

	cmd->duration = stat_target_end(cmd->d, &cmd->o->io, &cmd->start, &cmd->sent, &cmd->c, err);
	cmdq_complete(cmd, err ? cmd_target_failed(cmd->d, err) : 0, true);
}

bool cmdq_may_keep(struct cmd *cmd)
{
	/* SG_IO passes the gate, as sg's own: its caller is checked here */
	return opener_check_procfs(cmd->o, cmd->tid, "an interrupted SG_IO kept for read()") == 0;
}

bool cmdq_keep(struct cmd *cmd)
{
	struct opener *o = cmd->o;
	bool room;

	cmd->owner = o->ident.c.tgid; /* cmdq_may_keep(): the opener's process */
	pthread_mutex_lock(&o->lock);
	room = o->queued < cmdq_queue_limit(o, cmd->r.version);
	if (room)
		queue_add(o, cmd); /* a tag of its own: none answers for another's */
	pthread_mutex_unlock(&o->lock);
	return room;
}

void cmdq_unkeep(struct cmd *cmd)
{
	struct opener *o = cmd->o;

	pthread_mutex_lock(&o->lock);
	list_del(&cmd->node);
	o->queued--;
	opener_put_locked(o); /* not the last: the file is open */
	pthread_mutex_unlock(&o->lock);
}

void cmdq_kept_done(struct cmd *cmd, int err)
{
	bsgdev_debug(cmd->d, "tid %d: interrupted SG_IO kept for read() (SG_SET_KEEP_ORPHAN)",
		     cmd->tid);
	cmdq_complete(cmd, err, false);
}

/*
 * The parked writers of o get ENODEV, its poller POLLHUP, and its parked
 * readers ENODEV unless a command they may take is still running.
 */
static void sweep_gone(struct opener *o)
{
	struct list_head readers = LIST_HEAD_INIT(readers), writers = LIST_HEAD_INIT(writers);
	struct fuse_pollhandle *ph;

	pthread_mutex_lock(&o->lock);
	take_gone_readers(o, &readers);
	list_splice_tail(&o->writers, &writers);
	ph = cmdq_take_poller(o);
	pthread_mutex_unlock(&o->lock);
	answer_all(o, &readers, ENODEV);
	answer_all(o, &writers, ENODEV);
	cmdq_wake_poller(ph);
}

void cmdq_target_gone(struct bsgdev *d)
{
	struct opener **all = NULL, *o;
	unsigned n = 0, i = 0;

	/* hold each opener alive, then work on each outside openers_lock */
	pthread_mutex_lock(&d->openers_lock);
	list_for_each_entry(o, &d->opener_list, d_node)
		n++;
	all = n ? calloc(n, sizeof(*all)) : NULL;
	list_for_each_entry(o, &d->opener_list, d_node) {
		if (!all)
			break;
		pthread_mutex_lock(&o->lock);
		opener_get_locked(o);
		pthread_mutex_unlock(&o->lock);
		all[i++] = o;
	}
	pthread_mutex_unlock(&d->openers_lock);
	if (n && !all)
		bsgdev_warn(d, "out of memory: parked calls wait for their own end");
	for (i = 0; all && i < n; i++) {
		sweep_gone(all[i]);
		opener_put(all[i]);
	}
	free(all);
}

void cmdq_release(struct opener *o)
{
	struct cmd *c, *next;
	struct list_head done = LIST_HEAD_INIT(done);
	struct fuse_pollhandle *ph;
	struct list_head dropped = LIST_HEAD_INIT(dropped);

	pthread_mutex_lock(&o->lock);
	o->released = true;
	/* copies parked for the file's share: its share_file goes after this */
	copyjob_cancel(o, &dropped);
	list_for_each_entry_safe(c, next, &o->cmds, node) {
		list_del(&c->node);
		if (!c->done)
			continue; /* still running: an orphan, freed when it completes */
		list_add_tail(&c->node, &done);
		o->queued--;
		o->done--;
	}
	ph = cmdq_take_poller(o);
	pthread_mutex_unlock(&o->lock);
	list_for_each_entry_safe(c, next, &done, node)
		cmd_free(c); /* results nobody will read: no user memory touched */
	if (ph)
		fuse_pollhandle_destroy(ph);
	copyjob_drop(&dropped);
	opener_put(o);
}

int cmdq_num_waiting(struct opener *o)
{
	int n;

	pthread_mutex_lock(&o->lock);
	n = o->done;
	pthread_mutex_unlock(&o->lock);
	return n;
}

int cmdq_pack_id(struct opener *o)
{
	struct cmd *c;
	int id = -1;

	pthread_mutex_lock(&o->lock);
	list_for_each_entry(c, &o->cmds, node) {
		if (c->done) {
			id = done_pack_id(c);
			break;
		}
	}
	pthread_mutex_unlock(&o->lock);
	return id;
}

void cmdq_request_table(struct opener *o, struct sg_req_info *t, unsigned n)
{
	struct cmd *c;
	unsigned i = 0;

	memset(t, 0, n * sizeof(*t));
	pthread_mutex_lock(&o->lock);
	for (c = list_first_entry(&o->cmds, struct cmd, node); &c->node != &o->cmds && i < n;
	     c = list_next_entry(c, node), i++) {
		const struct scsi_result *res = &c->c.res;

		t[i].req_state = c->done ? 2 : 1;
		/* sg ANDs the three, as coded */
		t[i].problem = c->done && (((res->status >> 1) & 0x7f) & res->host_status &
					   res->driver_status);
		t[i].pack_id = done_pack_id(c);
		t[i].usr_ptr = c->r.version == 3 ? c->r.hdr.v3.usr_ptr
						 : (void *)(uintptr_t)c->r.hdr.v4.usr_ptr;
		t[i].duration = c->done ? c->duration : cmd_elapsed_ms(&c->start);
	}
	pthread_mutex_unlock(&o->lock);
}
