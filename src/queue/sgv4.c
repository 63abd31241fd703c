// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sg v4 driver's ioctls: SG_IOSUBMIT, SG_IORECEIVE, SG_IOABORT, on
 * the opener's command queue (cmdq.h).
 *
 * Each call is checked as read() and write() are, once: the caller must be
 * in the opener's security context (opener_check_caller()), so that a completion
 * is never written into a program or a user other than the one whose
 * addresses it names (an execve() keeps the process id).  Each command
 * passes the access policy with the submitting thread's rights, as SG_IO's
 * do, and its completion goes into the memory of a thread blocked in its
 * SG_IORECEIVE or read().  Commands share the opener's list with write()'s,
 * so the calls mix.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <stdlib.h>
#include <string.h>

#include "chans.h"
#include "cmdq.h"
#include "cmdq_i.h"
#include "guard.h"
#include "ioctx.h"
#include "lockcheck.h"
#include "log.h"
#include "sgv4.h"
#include "uaccess.h"

/* An SG_IORECEIVE(_V3) call: where its completions go. */
struct rcv {
	fuse_req_t req;
	pid_t tid;
	uint64_t arg; /* its header */
	struct want w;
	bool mrq;	     /* a control object: an array of completions */
	unsigned max;	     /* mrq: the room in the array at cop.din_xferp */
	struct sg_io_v4 cop; /* mrq: the control object as given */
	bool ordered;	     /* a blocking array: each at its place in the array */
	unsigned total;	     /* ordered: requests in the array */
	unsigned submitted;  /* ordered: of which taken */
	int s_res;	     /* ordered: why the rest was not, or 0 */
};

/* A parked SG_IORECEIVE's call, kept in its room. */
static inline struct rcv *rcv_of(const struct parked *p)
{
	return (struct rcv *)p->buf;
}

/*
 * A blocking array's call ends without its completions (a signal, or no
 * memory to park it): they become the file's like any other, for a later
 * SG_IORECEIVE or read(), as sg leaves them.  Its parked receivers are
 * served on the elastic pool.
 */
static void mrq_release_id(struct opener *o, unsigned id)
{
	struct fuse_pollhandle *ph;

	if (!id)
		return;
	pthread_mutex_lock(&o->lock);
	struct cmd *c;

	list_for_each_entry(c, &o->cmds, node)
		if (c->mrq == id)
			c->mrq = 0;
	ph = cmdq_take_poller(o);
	pthread_mutex_unlock(&o->lock);
	cmdq_wake_poller(ph);
	cmdq_serve_later(o);
}

static void mrq_release(struct opener *o, const struct parked *p)
{
	mrq_release_id(o, rcv_of(p)->w.mrq);
}

/* Client memory through the watchdog: 0, -errno or CMD_ANSWERED. */
static int copy_guarded(struct opener *o, fuse_req_t req, pid_t tid, uint64_t addr, void *buf,
			size_t len, bool out)
{
	struct guard g;
	int err = guard_begin(o->d->wd, &g, req, tid, &o->stuck);

	if (err)
		return err;
	err = out ? uaccess_write(tid, addr, buf, len) : uaccess_read(tid, addr, buf, len);
	if (err == -EPERM)
		err = -EINVAL; /* out of our reach: as without the direct path */
	return guard_end(o->d->wd, &g) ? err : CMD_ANSWERED;
}

/*
 * What every one of the ioctls needs first, once ioctl_dispatch() has
 * checked the caller's context (OP_OWNER): 0 or -errno.  *owner is the
 * process that opened the file, whose commands the call may take.
 */
static int ioctl_start(struct ioctx *x, pid_t *owner, bool gone_fails)
{
	struct opener *o = x->o;

	if (gone_fails && atomic_load(&o->d->target_gone))
		return -ENODEV; /* sg v4: SG_IS_DETACHING */
	*owner = o->ident.c.tgid;
	return 0;
}

/* sg_v4h_partial_zero(): the outputs of a control object, before sg fills them. */
static void zero_outputs(struct sg_io_v4 *h)
{
	size_t from = offsetof(struct sg_io_v4, driver_status);

	memset((char *)h + from, 0, offsetof(struct sg_io_v4, padding) - from);
}

static void reply_ioctl(fuse_req_t req, int err)
{
	if (err == CMD_ANSWERED)
		return;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

static void rcv_go(struct opener *o, const struct rcv *rc, bool nonblock);

/* submit_array(): a blocking array was taken, and its call waits as *wait says */
#define ARRAY_WAITS 1

/* A blocking array's own id, which no other call's want names. */
static unsigned mrq_id(struct opener *o)
{
	unsigned id;

	pthread_mutex_lock(&o->lock);
	id = ++o->next_mrq ? o->next_mrq : ++o->next_mrq;
	pthread_mutex_unlock(&o->lock);
	return id;
}

/*
 * An array (SGV4_FLAG_MULTIPLE_REQS): every request is checked first, then
 * each taken in turn until one cannot be; the control object says how many
 * (info, dout_resid) and, with a din_xferp, why the rest was not
 * (spare_out).  Submitted without waiting (IMMED, or an O_NONBLOCK file),
 * that is the answer; otherwise (sg's "variable blocking") the call waits
 * for every command taken, whose completions no other call sees, and gets
 * them at their places in din_xferp: ARRAY_WAITS, with *wait set up.
 */
/* The array's n requests from the caller into *ret, each checked: 0 or -errno (or CMD_ANSWERED). */
static int array_fetch(struct ioctx *x, const struct sg_io_v4 *cop, unsigned n, unsigned cdb_len,
		       bool immed, struct sg_io_v4 **ret)
{
	struct sg_io_v4 *hdrs = NULL;
	int err = 0;

	if (n && !(hdrs = calloc(n, sizeof(*hdrs))))
		return -ENOMEM;
	if (n)
		err = copy_guarded(x->o, x->req, x->tid, cop->dout_xferp, hdrs, n * sizeof(*hdrs),
				   false);
	if (!err)
		err = scsi_mrq_decode(cop, cdb_len, immed, hdrs, n);
	if (err) {
		free(hdrs);
		return err;
	}
	*ret = hdrs;
	return 0;
}

/* Each of hdrs[0..n) into b in turn until one cannot be: how many (*k), and why not (s_res). */
static int array_take(struct ioctx *x, const struct sg_io_v4 *hdrs, unsigned n, struct origin *from,
		      struct batch *b, unsigned *k)
{
	int s_res = 0;

	for (*k = 0; *k < n; (*k)++) {
		from->mrq_ind = *k;
		s_res = cmdq_submit_one(x->o, x->req, x->tid, &hdrs[*k], sizeof(hdrs[*k]), b, from,
					NULL);
		if (s_res)
			break;
	}
	return s_res;
}

/* A blocking array's call, to wait for its k commands taken of n. */
static void array_wait(const struct ioctx *x, const struct sg_io_v4 *cop, const struct origin *from,
		       unsigned n, unsigned k, int s_res, struct rcv *wait)
{
	*wait = (struct rcv){
		.req = x->req,
		.tid = x->tid,
		.arg = x->arg,
		.w = { .id = -1, .owner = from->owner, .version = 4, .mrq = from->mrq },
		.mrq = true,
		.max = k,
		.cop = *cop,
		.ordered = true,
		.total = n,
		.submitted = k,
		.s_res = s_res
	};
}

/* The control object's answer: k of n taken, the rest not for s_res. */
static int array_answer(struct ioctx *x, struct sg_io_v4 *cop, bool immed, unsigned n, unsigned k,
			int s_res)
{
	zero_outputs(cop);
	cop->info = immed ? k : 0; /* sg: taken, or completed */
	cop->dout_resid = (int32_t)(n - k);
	if (cop->din_xfer_len) {
		cop->din_resid = (int32_t)n;
		cop->spare_out = (uint32_t)-s_res;
	}
	return copy_guarded(x->o, x->req, x->tid, x->arg, cop, sizeof(*cop), true);
}

static int submit_array(struct ioctx *x, struct sg_io_v4 *cop, const struct origin *from0,
			struct batch *b, struct rcv *wait)
{
	struct opener *o = x->o;
	bool immed = (cop->flags & SGV4_FLAG_IMMED) || (o->open_flags & O_NONBLOCK);
	struct origin from = *from0;
	struct sg_io_v4 *hdrs = NULL;
	unsigned n, cdb_len, k = 0;
	int err, s_res = 0;

	err = scsi_mrq_submit_check(cop, &n, &cdb_len);
	if (!err && n && !immed)
		from.mrq = mrq_id(o);
	if (!err)
		err = array_fetch(x, cop, n, cdb_len, immed, &hdrs);
	if (!err)
		s_res = array_take(x, hdrs, n, &from, b, &k);
	free(hdrs);
	if (s_res == CMD_ANSWERED) {
		cmdq_batch_cancel(o, b);
		return s_res;
	}
	if (err)
		return err;
	if (!immed && k) {
		array_wait(x, cop, &from, n, k, s_res, wait);
		return ARRAY_WAITS;
	}
	return array_answer(x, cop, immed, n, k, s_res);
}

/* One v3 or v4 header; with SGV4_FLAG_YIELD_TAG its generated_tag written back. */
static int submit_single(struct ioctx *x, const union scsi_hdr *h, unsigned version,
			 const struct origin *from, struct batch *b)
{
	struct opener *o = x->o;
	size_t len = version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN;
	uint64_t tag;
	int err, t = 0;

	err = cmdq_submit_one(o, x->req, x->tid, h->raw, len, b, from, &t);
	if (err || version == 3 || !(h->v4.flags & SGV4_FLAG_YIELD_TAG))
		return err;
	tag = (uint64_t)t;
	return copy_guarded(o, x->req, x->tid, x->arg + offsetof(struct sg_io_v4, generated_tag),
			    &tag, sizeof(tag), true);
}

void sgv4_iosubmit(struct ioctx *x, unsigned version)
{
	struct opener *o = x->o;
	struct origin from = { .ioctl = true };
	union scsi_hdr h;
	struct batch b;
	struct rcv wait;
	int err;

	cmdq_batch_init(&b);
	err = ioctl_start(x, &from.owner, true);
	if (!err)
		err = chans_open(o);
	if (!err)
		err = copy_guarded(o, x->req, x->tid, x->arg, h.raw,
				   version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN, false);
	/* sg_ctl_iosubmit(): the wrong interface is EPERM */
	if (!err && (version == 3 ? h.v3.interface_id != 'S' : h.v4.guard != 'Q'))
		err = -EPERM;
	if (!err && version == 4 && (h.v4.flags & SGV4_FLAG_MULTIPLE_REQS))
		err = submit_array(x, &h.v4, &from, &b, &wait);
	else if (!err)
		err = submit_single(x, &h, version, &from, &b);
	if (err == ARRAY_WAITS) {
		cmdq_batch_start(&b);
		rcv_go(o, &wait, false); /* answered once all are done */
		return;
	}
	reply_ioctl(x->req, err);
	cmdq_batch_start(&b); /* what was taken runs, whatever the answer */
}

/* Caller holds o->lock: take c off the list for a receiver. */
static void take_cmd(struct opener *o, struct cmd *c)
{
	assert_held(&o->lock);
	list_del(&c->node);
	o->queued--;
	o->done--;
}

/*
 * Caller holds o->lock.  Can rc go on: 0 (with take, the completions it
 * gets are in cmds, *n of them; an array may get none), 1 (it waits), or
 * the errno it gets.  A single receive takes the oldest it may, or waits
 * (sg: EAGAIN when not blocking); an array takes what is done, or, when
 * blocking, waits until as many are done as it has room for or as are
 * outstanding (sg_mrq_iorec_complets()); with nothing outstanding it gets
 * ENODATA.  The device gone, waiting with nothing left to wait for is ENODEV.
 */
static int rcv_try(struct opener *o, const struct rcv *rc, bool nonblock, bool take,
		   struct cmd **cmds, unsigned *n)
{
	bool gone = atomic_load(&o->d->target_gone);
	unsigned done = 0, all = 0, max = rc->max < RCV_MAX ? rc->max : RCV_MAX;
	struct cmd *c;

	assert_held(&o->lock);
	*n = 0;
	if (!rc->mrq) {
		c = done_oldest(o, &rc->w);
		if (c && take) {
			take_cmd(o, c);
			cmds[(*n)++] = c;
		}
		if (c)
			return 0;
		if (gone && !done_still_running(o, &rc->w))
			return -ENODEV;
		return nonblock ? -EAGAIN : 1;
	}
	list_for_each_entry(c, &o->cmds, node) {
		if (!done_wanted(o, c, &rc->w))
			continue;
		all++;
		done += c->done;
	}
	if (!all)
		return gone ? -ENODEV : -ENODATA;
	if (!nonblock && done < (max < all ? max : all))
		return 1;
	c = take ? done_oldest(o, &rc->w) : NULL;
	while (c && *n < max) {
		struct list_head *next = c->node.next;

		take_cmd(o, c);
		cmds[(*n)++] = c;
		c = done_find_from(o, next, &rc->w, true);
	}
	return 0;
}

static bool rcv_ready(struct opener *o, const struct rcv *rc)
{
	unsigned n;

	return rcv_try(o, rc, false, false, NULL, &n) != 1;
}

/*
 * A blocking array's answer: each completion at its request's place in
 * din_xferp (what fits), then the control object, as sg_mrq_arr_flush().
 */
static int ordered_write_out(const struct rcv *rc, unsigned char *out, struct cmd **cmds,
			     unsigned used)
{
	struct sg_io_v4 cop = rc->cop;
	struct uaccess_piece p[UACCESS_PIECES_MAX];
	unsigned k = 0;
	int err = 0;

	for (unsigned i = 0; i < used && !err; i++) {
		struct sg_io_v4 *h = (struct sg_io_v4 *)(out + i * SCSI_V4_HDR_LEN);
		uint64_t at = (uint64_t)cmds[i]->mrq_ind * SCSI_V4_HDR_LEN;

		h->info |= SG_INFO_MRQ_FINI;
		if (cop.din_xferp && at + SCSI_V4_HDR_LEN <= cop.din_xfer_len)
			p[k++] = (struct uaccess_piece){ cop.din_xferp + at, h, sizeof(*h) };
		if (k == UACCESS_PIECES_MAX) { /* full: written now, room kept for cop */
			err = uaccess_write_pieces(rc->tid, p, k);
			k = 0;
		}
	}
	if (err)
		return err;
	zero_outputs(&cop);
	cop.info = used;
	cop.dout_resid = (int32_t)(rc->total - rc->submitted);
	if (cop.din_xfer_len) {
		cop.din_resid = (int32_t)(rc->total - used);
		cop.spare_out = (uint32_t)-rc->s_res;
	}
	p[k++] = (struct uaccess_piece){ rc->arg, &cop, sizeof(cop) };
	return uaccess_write_pieces(rc->tid, p, k); /* the headers, then the control object */
}

/* The headers of what rc took (used of them) and, for an array, its control object. */
static int rcv_write_out(const struct rcv *rc, unsigned char *out, struct cmd **cmds, unsigned used)
{
	struct sg_io_v4 cop = rc->cop;

	if (rc->ordered)
		return ordered_write_out(rc, out, cmds, used);
	if (!rc->mrq)
		return uaccess_write(rc->tid, rc->arg, out,
				     rc->w.version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN);
	for (unsigned i = 0; i < used; i++) {
		struct sg_io_v4 *h = (struct sg_io_v4 *)(out + i * SCSI_V4_HDR_LEN);

		h->info |= SG_INFO_MRQ_FINI;
	}
	zero_outputs(&cop);
	cop.info = used;
	cop.din_resid = (int32_t)(rc->max - used);
	/* the headers, then the control object, in one system call */
	return uaccess_write_pieces(
		rc->tid,
		(struct uaccess_piece[]){ { cop.din_xferp, out, used * SCSI_V4_HDR_LEN },
					  { rc->arg, &cop, sizeof(cop) } },
		2);
}

/* The headers, each v4 one with its command's tag, and the control object. */
static int rcv_out(const struct done_call *c, struct cmd **cmds, unsigned ok)
{
	const struct rcv *rc = c->arg;

	for (unsigned i = 0; rc->w.version == 4 && i < ok; i++)
		((struct sg_io_v4 *)(void *)(c->out + i * SCSI_V4_HDR_LEN))->generated_tag =
			(uint64_t)cmds[i]->tag;
	return rcv_write_out(rc, c->out, cmds, ok);
}

/*
 * Answer rc with cmds[0..n) (done_hand_over()): the headers and the control
 * object go into the caller, the ioctl's answer is empty.  True if any was
 * given back.
 */
static bool rcv_deliver(struct opener *o, const struct rcv *rc, struct cmd **cmds, unsigned n)
{
	size_t hlen = rc->w.version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN;
	struct done_call c = { .req = rc->req,
			       .tid = rc->tid,
			       .out = malloc(n ? n * hlen : 1),
			       .arg = rc,
			       .write_out = rcv_out };
	struct done_answer a = done_hand_over(o, &c, cmds, n);

	free(c.out);
	if (a.mine)
		reply_ioctl(rc->req, a.len ? 0 : a.err);
	cmdq_room(o);
	return a.back;
}

/* A parked SG_IORECEIVE(_V3). */
static bool rcv_parked_ready(struct opener *o, const struct parked *p)
{
	assert_held(&o->lock);
	return rcv_ready(o, rcv_of(p));
}

static bool rcv_parked_take(struct opener *o, struct parked *p, struct cmd **cmds, unsigned *n,
			    int *res)
{
	assert_held(&o->lock);
	*res = rcv_try(o, rcv_of(p), false, true, cmds, n);
	return *res <= 0;
}

static void rcv_parked_answer(struct opener *o, struct parked *p, struct cmd **cmds, unsigned n,
			      int res)
{
	if (res < 0)
		fuse_reply_err(p->req, -res);
	else
		rcv_deliver(o, rcv_of(p), cmds, n);
}

static bool rcv_parked_gone(struct opener *o, const struct parked *p)
{
	const struct rcv *rc = rcv_of(p);

	assert_held(&o->lock);
	return !done_oldest(o, &rc->w) && !done_still_running(o, &rc->w);
}

static const struct parked_ops rcv_ops = { .ready = rcv_parked_ready,
					   .take = rcv_parked_take,
					   .answer = rcv_parked_answer,
					   .gone = rcv_parked_gone,
					   .ended = mrq_release };

static void rcv_go(struct opener *o, const struct rcv *rc, bool nonblock)
{
	struct cmd *cmds[RCV_MAX];
	struct parked *p = NULL;
	unsigned n;
	int res;

	for (;;) {
		pthread_mutex_lock(&o->lock);
		res = rcv_try(o, rc, nonblock, true, cmds, &n);
		if (!res)
			opener_get_locked(o); /* rcv_deliver() goes on after its answer */
		pthread_mutex_unlock(&o->lock);
		if (res <= 0) {
			free(p);
			if (res < 0) {
				fuse_reply_err(rc->req, -res);
				return;
			}
			if (rcv_deliver(o, rc, cmds, n))
				cmdq_serve_readers(o);
			opener_put(o);
			return;
		}
		if (!p)
			p = malloc(sizeof(*p) + sizeof(*rc));
		if (!p) {
			mrq_release_id(o, rc->w.mrq); /* as for a signal */
			fuse_reply_err(rc->req, ENOMEM);
			return;
		}
		*p = (struct parked){ .ops = &rcv_ops, .req = rc->req, .tid = rc->tid };
		*rcv_of(p) = *rc; /* in the room allocated past p */
		switch (park_add(o, &o->readers, p, false)) {
		case PARKED:
		case ANSWERED:
			return;
		case READY:
			break;
		}
	}
}

/* The header of an SG_IORECEIVE(_V3): what it wants; 0 or sg's errno. */
static int rcv_setup(struct opener *o, const union scsi_hdr *h, unsigned version, struct rcv *rc,
		     bool *nonblock)
{
	uint32_t flags;
	int id;

	if (version == 3) {
		if (h->v3.interface_id != 'S')
			return -EPERM;
		if (h->v3.flags & SGV4_FLAG_MULTIPLE_REQS)
			return -EINVAL;
		flags = h->v3.flags;
		id = h->v3.pack_id;
	} else {
		if (h->v4.guard != 'Q' || h->v4.protocol || h->v4.subprotocol)
			return -EPERM;
		flags = h->v4.flags;
		id = (int)h->v4.request_extra;
		rc->mrq = flags & SGV4_FLAG_MULTIPLE_REQS;
		rc->cop = h->v4;
	}
	if (rc->mrq) {
		int err = scsi_mrq_receive_check(&rc->cop, &rc->max);

		if (err)
			return err;
	}
	rc->w.version = version;
	rc->w.id = -1;
	/* sg: the id counts only under SG_SET_FORCE_PACK_ID; a tag if preferred */
	if (!rc->mrq && atomic_load(&o->force_pack_id)) {
		rc->w.by_tag = version == 4 && atomic_load(&o->prefer_tag);
		rc->w.id = rc->w.by_tag ? (int)h->v4.request_tag : id;
	}
	/* CUSE passes no file flags with an ioctl: O_NONBLOCK as at open() */
	*nonblock = (o->open_flags & O_NONBLOCK) || (flags & SGV4_FLAG_IMMED);
	return 0;
}

void sgv4_ioreceive(struct ioctx *x, unsigned version)
{
	struct opener *o = x->o;
	struct rcv rc = { .req = x->req, .tid = x->tid, .arg = x->arg };
	union scsi_hdr h;
	bool nonblock = false;
	int err;

	err = ioctl_start(x, &rc.w.owner, false);
	if (!err)
		err = copy_guarded(o, x->req, x->tid, x->arg, h.raw,
				   version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN, false);
	if (!err)
		err = rcv_setup(o, &h, version, &rc, &nonblock);
	if (err) {
		reply_ioctl(x->req, err);
		return;
	}
	rcv_go(o, &rc, nonblock);
}

/* Caller holds o->lock: take c off the list of commands waiting for a place. */
static bool unpend(struct opener *o, struct cmd *c)
{
	struct cmd *p;

	assert_held(&o->lock);
	list_for_each_entry(p, &o->pend, pend) {
		if (p == c) {
			list_del(&c->pend);
			return true;
		}
	}
	return false;
}

/*
 * SG_IOABORT: the file's oldest command of the pack_id (or tag) given.
 * Done already: nothing to do (sg: 0).  Still waiting in the daemon for
 * its place at the device: it never goes there and completes now, host
 * status DID_ABORT.  At the device: it runs to its end (the daemon's
 * SG_IO cannot be called back) and completes marked SG_INFO_ABORTED.
 */
void sgv4_ioabort(struct ioctx *x)
{
	struct opener *o = x->o;
	struct sg_io_v4 h;
	struct cmd *c = NULL, *it;
	bool by_tag, held = false;
	pid_t owner;
	int err, id;

	err = ioctl_start(x, &owner, true);
	if (!err && (o->open_flags & O_ACCMODE) == O_RDONLY)
		err = -EPERM; /* sg: not on a read-only file */
	if (!err)
		err = copy_guarded(o, x->req, x->tid, x->arg, &h, sizeof(h), false);
	if (!err && h.guard != 'Q')
		err = -EPERM;
	if (!err && (h.flags & SGV4_FLAG_MULTIPLE_REQS))
		err = -ENODATA; /* no array here has an id to abort by */
	if (err) {
		reply_ioctl(x->req, err);
		return;
	}
	by_tag = atomic_load(&o->prefer_tag);
	id = by_tag ? (int)h.request_tag : (int)h.request_extra;
	pthread_mutex_lock(&o->lock);
	list_for_each_entry(it, &o->cmds, node) {
		if (id == -1 || (by_tag ? it->tag : done_pack_id(it)) == id) {
			c = it;
			break;
		}
	}
	if (c && !c->done) {
		c->aborted = true;
		held = unpend(o, c);
	}
	pthread_mutex_unlock(&o->lock);
	if (held) {
		c->c.res = (struct scsi_result){ .host_status = SCSI_DID_ABORT,
						 .driver_status = SCSI_DRIVER_SOFT,
						 .resid = (int32_t)c->c.data_len };
		cmdq_complete(c, 0, false);
	}
	reply_ioctl(x->req, c ? 0 : -ENODATA);
}
