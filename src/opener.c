// SPDX-License-Identifier: GPL-2.0-only
/*
 * Making and freeing an open file's struct opener; its reserve of data
 * buffers and their charge against the memory bounds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bsgdev.h"
#include "gate.h"
#include "lockcheck.h"
#include "opener.h"
#include "show.h"
#include "verdict.h"

#define USER_HZ		100
#define SG_DEF_RESERVED 32768 /* SG_DEF_RESERVED_SIZE */

/* A new opener, counted first, so that a device going away sees it or it sees gone. */
static int count_opener(struct bsgdev *d)
{
	bsgdev_opener_get(d);
	return atomic_load(&d->target_gone) ? -ENODEV : 0;
}

int opener_chan(struct opener *o)
{
	struct bsgdev *d = o->d;
	int chan = atomic_load_explicit(&o->chan, memory_order_acquire);
	int none = -1;

	if (chan >= 0)
		return chan;
	if (atomic_load(&d->target_gone))
		return -ENODEV;
	chan = d->target->ops->chan_open(d->target);
	if (chan < 0) {
		if (chan != -ENOENT && chan != -ENODEV && chan != -ENXIO)
			bsgdev_warn(d, "cannot open %s for an open file: %s", d->target->info.path,
				    strerror(-chan));
		/* the device node vanishing with the device is sg's ENODEV */
		return chan == -ENOENT ? -ENODEV : chan;
	}
	if (atomic_compare_exchange_strong(&o->chan, &none, chan))
		return chan;
	d->target->ops->chan_close(d->target, chan); /* another call opened one first */
	return none;
}

/* Defaults sg gives a new file. */
static void set_defaults(struct opener *o)
{
	atomic_init(&o->timeout_user, 60 * USER_HZ);
	atomic_init(&o->reserved, SG_DEF_RESERVED);
	atomic_init(&o->cmd_q, 0);
	atomic_init(&o->force_pack_id, 0);
	atomic_init(&o->keep_orphan, 0);
	atomic_init(&o->next_cmd_len, 0);
	atomic_init(&o->debug, 0);
	atomic_init(&o->prefer_tag, 0);
	atomic_init(&o->wrote, 0);
}

int opener_read_ident(struct bsgdev *d, struct ident_cache *cache, pid_t tid, struct ident *ret)
{
	int err = ident_read(cache, tid, ret);

	if (!err)
		return 0;
	bsgdev_warn(d, "tid %d: open refused: its credentials cannot be read: %s", tid,
		    strerror(-err));
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM ? -err : EACCES;
}

/*
 * The context read() and write() must match.  An opener we cannot see
 * (another pid namespace: tid 0) or cannot read through ptrace rights (no
 * direct path, where read() and write() are refused anyway) stays unknown
 * and matches no caller; one we fail to read is refused.  0 or a positive
 * errno.
 */
static int take_ident(struct opener *o, pid_t tid, struct ident *ident)
{
	int err = 0;

	ident_cache_init(&o->status);
	o->ident.pidfd = -1;
	if (ident) {
		o->ident = *ident; /* taken over */
		*ident = (struct ident){ .pidfd = -1 };
	} else if (tid > 0 && o->d->direct) {
		err = opener_read_ident(o->d, &o->status, tid, &o->ident);
		/* an idle file keeps no descriptor of its opener's /proc: its first call reopens them */
		ident_cache_fini(&o->status);
	}
	return err;
}

/* The rest of a new opener, which cannot fail; then d's list shows it. */
static void opener_init(struct opener *o)
{
	struct bsgdev *d = o->d;

	set_defaults(o);
	list_init(&o->cmds);
	list_init(&o->pend);
	list_init(&o->copy_waits);
	list_init(&o->readers);
	list_init(&o->writers);
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->slot_freed, NULL);
	pthread_mutex_init(&o->status_lock, NULL);
	pthread_mutex_init(&o->bufs_lock, NULL);
	o->refs = 1;
	for (unsigned i = 0; i < OPENER_CHANS; i++)
		o->achan[i] = -1;
	pthread_mutex_lock(&d->openers_lock);
	list_add(&o->d_node, &d->opener_list);
	pthread_mutex_unlock(&d->openers_lock);
}

int opener_new(struct bsgdev *d, int flags, bool shared, pid_t tid, struct ident *ident,
	       struct opener **ret)
{
	struct opener *o;
	int err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return ENOMEM;
	o->d = d;
	o->open_flags = flags;
	o->shared = shared;
	atomic_init(&o->chan, -1);
	err = count_opener(d) ? ENODEV : take_ident(o, tid, ident);
	if (err) {
		free(o);
		bsgdev_opener_put(d);
		return err;
	}
	o->pid = o->ident.c.tgid > 0 ? o->ident.c.tgid : tid;
	o->opened = time(NULL);
	opener_init(o);
	*ret = o;
	return 0;
}

void opener_get(struct opener *o)
{
	assert_not_held(&o->lock);
	pthread_mutex_lock(&o->lock);
	opener_get_locked(o);
	pthread_mutex_unlock(&o->lock);
}

/* The kept buffers, given back with their charge. */
static void bufs_free(struct opener *o)
{
	while (o->nbufs) {
		o->nbufs--;
		munmap(o->bufs[o->nbufs].p, o->bufs[o->nbufs].len);
		opener_mem_uncharge(o, o->bufs[o->nbufs].len);
	}
	o->bufs_bytes = 0;
}

void opener_put(struct opener *o)
{
	struct bsgdev *d = o->d;
	bool last;

	assert_not_held(&o->lock);
	pthread_mutex_lock(&o->lock);
	last = --o->refs == 0;
	pthread_mutex_unlock(&o->lock);
	if (!last)
		return;
	pthread_mutex_lock(&d->openers_lock);
	list_del(&o->d_node);
	pthread_mutex_unlock(&d->openers_lock);
	if (atomic_load(&o->chan) >= 0)
		d->target->ops->chan_close(d->target, atomic_load(&o->chan));
	for (unsigned i = 0; i < o->nchans; i++) {
		if (o->achan[i] >= 0)
			d->target->ops->chan_close(d->target, o->achan[i]);
		if (o->tq[i])
			d->target->ops->queue_close(d->target, o->tq[i]);
	}
	ident_cache_fini(&o->status);
	ident_fini(&o->ident);
	pthread_mutex_destroy(&o->status_lock);
	bufs_free(o);
	pthread_mutex_destroy(&o->bufs_lock);
	pthread_cond_destroy(&o->slot_freed);
	pthread_mutex_destroy(&o->lock);
	free(o);
	bsgdev_opener_put(d);
}

/* What the live view says of o; the caller holds d's openers_lock. */
static void show_opener(struct opener *o, struct show_opener *so)
{
	assert_held(&o->d->openers_lock);
	pthread_mutex_lock(&o->lock);
	*so = (struct show_opener){
		.pid = o->pid,
		.uid = o->uid,
		.queued = o->done,
		.in_flight = o->queued - o->done,
		.calls = atomic_load(&o->calls),
		.mem = atomic_load(&o->mem_used),
		.gid = o->ident.c.tgid > 0 ? o->ident.c.gid[1] : (gid_t)-1,
		.opened = o->opened,
		.io = {
			.cmds = atomic_load_explicit(&o->io.cmds, memory_order_relaxed),
			.bytes_in = atomic_load_explicit(&o->io.bytes_in, memory_order_relaxed),
			.bytes_out = atomic_load_explicit(&o->io.bytes_out, memory_order_relaxed),
			.errors = atomic_load_explicit(&o->io.errors, memory_order_relaxed),
			.refused = atomic_load_explicit(&o->io.refused, memory_order_relaxed),
		},
	};
	pthread_mutex_unlock(&o->lock);
}

void opener_show(struct bsgdev *d, struct show_node *s)
{
	struct opener *o;

	pthread_mutex_lock(&d->openers_lock);
	list_for_each_entry(o, &d->opener_list, d_node) {
		if (s->nopeners == SHOW_OPENERS_MAX)
			break;
		show_opener(o, &s->opener[s->nopeners++]);
	}
	s->openers = atomic_load(&d->openers);
	pthread_mutex_unlock(&d->openers_lock);
	if (s->openers < s->nopeners)
		s->openers = s->nopeners; /* counted before it is listed */
}

int opener_mem_charge(struct opener *o, uint64_t n)
{
	return opener_mem_charge_for(o, n, "a command's data buffer");
}

int opener_mem_charge_for(struct opener *o, uint64_t n, const char *what)
{
	struct bsgdev *d = o->d;
	struct mem_budget *m = d->mem;
	const char *which;
	uint64_t opener = atomic_fetch_add(&o->mem_used, n) + n;

	if (d->opener_mem_max && opener > d->opener_mem_max) {
		which = "the open file's";
	} else if (o->share && share_mem_charge(o->share, o->uid, n)) {
		which = "its user's";
	} else if (m && atomic_fetch_add(&m->used, n) + n > m->max) {
		atomic_fetch_sub(&m->used, n);
		if (o->share)
			share_mem_uncharge(o->share, o->uid, n);
		which = "the daemon's";
	} else {
		return 0;
	}
	atomic_fetch_sub(&o->mem_used, n);
	if (!atomic_exchange(&o->warned_mem, true))
		bsgdev_warn(d, "%" PRIu64 " bytes of %s are past %s memory bound: ENOMEM", n, what,
			    which);
	return -ENOMEM;
}

void opener_mem_uncharge(struct opener *o, uint64_t n)
{
	atomic_fetch_sub(&o->mem_used, n);
	if (o->share)
		share_mem_uncharge(o->share, o->uid, n);
	if (o->d->mem)
		atomic_fetch_sub(&o->d->mem->used, n);
}

void *opener_buf_take(struct opener *o, uint32_t size)
{
	void *p = NULL;

	if (size < OPENER_BUF_MIN)
		return NULL;
	pthread_mutex_lock(&o->bufs_lock);
	for (unsigned i = 0; i < o->nbufs; i++) {
		if (o->bufs[i].len != size)
			continue;
		p = o->bufs[i].p;
		o->bufs_bytes -= o->bufs[i].len;
		o->bufs[i] = o->bufs[--o->nbufs];
		break;
	}
	pthread_mutex_unlock(&o->bufs_lock);
	return p;
}

bool opener_buf_keep(struct opener *o, void *p, uint32_t size)
{
	bool kept = false;

	pthread_mutex_lock(&o->bufs_lock);
	if (o->nbufs < OPENER_BUFS && o->bufs_bytes + size <= OPENER_BUF_BYTES) {
		o->bufs[o->nbufs++] = (struct opener_buf){ p, size };
		o->bufs_bytes += size;
		kept = true;
	}
	pthread_mutex_unlock(&o->bufs_lock);
	return kept;
}

/*
 * sg's sg_check_file_access(), for every call that takes or hands over a
 * command of the file: read(), write() and the sg v4 ioctls (SG_IOSUBMIT,
 * SG_IORECEIVE(_V3), SG_IOABORT) only from the context that opened it
 * (README, security model).  A completion, kept SG_IO orphans included,
 * reaches a caller only through a call this passed, once per call however
 * many it hands over.  The caller's /proc/TID stays open for its next
 * call; another thread of the file meanwhile reads its own.
 */
int opener_check_procfs(struct opener *o, pid_t tid, const char *call)
{
	struct ident_cache own;
	const char *why;
	int err;

	if (!o->d->direct || tid <= 0) {
		if (!atomic_exchange(&o->warned_path, true))
			bsgdev_warn(o->d,
				    "tid %d: %s refused: the asynchronous interface needs the "
				    "direct-copy path (CAP_SYS_PTRACE over callers)",
				    tid, call);
		return -EINVAL;
	}
	if (pthread_mutex_trylock(&o->status_lock)) {
		ident_cache_init(&own);
		err = ident_match(&own, tid, &o->ident, o->shared, &why);
		ident_cache_fini(&own);
	} else {
		err = ident_match(&o->status, tid, &o->ident, o->shared, &why);
		pthread_mutex_unlock(&o->status_lock);
	}
	if (!err)
		return 0;
	if (err != -EPERM) {
		bsgdev_warn(o->d, "tid %d: %s refused: %s: %s", tid, call, why, strerror(-err));
		return err;
	}
	if (!atomic_exchange(&o->warned, true))
		bsgdev_warn(o->d, "tid %d: %s refused: not the opener's security context (%s)", tid,
			    call, why);
	else
		bsgdev_debug(o->d, "tid %d: %s refused: %s", tid, call, why);
	return -EPERM;
}

/* Refused on the witness's verdict: sg's test made by the kernel at the call's entry. */
static int witness_refused(struct bsgdev *d, struct bsgdev *node, atomic_bool *warned, pid_t tid,
			   const char *call)
{
	atomic_fetch_add_explicit(&node->cred_refused, 1, memory_order_relaxed);
	if (!atomic_exchange(warned, true))
		bsgdev_warn(d,
			    "tid %d: %s refused: not the opener's security context (seen by the "
			    "kernel at the call's entry; EPERM, as sg)",
			    tid, call);
	else
		bsgdev_debug(d, "tid %d: %s refused on the witness's verdict", tid, call);
	return -EPERM;
}

int opener_check_unbound(struct bsgdev *d, uint64_t fh, atomic_bool *warned, pid_t tid,
			 const char *call)
{
	if (tid <= 0 || atomic_load_explicit(&d->cred, memory_order_relaxed) != GATE_SEEN)
		return 0;
	switch (verdicts_read(d->verdicts, tid, fh)) {
	case VERDICT_OTHER:
		return witness_refused(d, d, warned, tid, call);
	case VERDICT_PROOF:
		return -EPERM;
	default:
		return 0;
	}
}

/*
 * Where the node's credential gate is live (gate.h), the kernel made sg's
 * test: the LSM gate before the call reached us, exactly, so nothing is
 * left to check; the witness at the call's entry, whose verdict we read.
 * A call it left none for (a thread whose slot another took) gets the /proc
 * check.  --shared-queue's files share one opener, whose owner the kernel
 * does not know: /proc still.
 */
int opener_check_caller(struct opener *o, pid_t tid, const char *call)
{
	struct bsgdev *node = o->d->home ? o->d->home : o->d;
	int kind = atomic_load_explicit(&node->cred, memory_order_relaxed);

	if (!o->d->direct || tid <= 0 || o->shared || kind == GATE_NONE)
		return opener_check_procfs(o, tid, call);
	if (kind == GATE_LSM)
		return 0;
	switch (verdicts_read(node->verdicts, tid, o->fh)) {
	case VERDICT_SAME:
		return 0;
	case VERDICT_OTHER:
		return witness_refused(o->d, node, &o->warned, tid, call);
	case VERDICT_PROOF:
		return -EPERM;
	default:
		atomic_fetch_add_explicit(&node->cred_unseen, 1, memory_order_relaxed);
		return opener_check_procfs(o, tid, call);
	}
}
