// SPDX-License-Identifier: GPL-2.0-only
/*
 * SG_IO over CUSE.  Direct path: one FUSE request per command, the header,
 * CDB and data moved with process_vm_readv/writev.  Retry path: the kernel
 * copies for us in up to four rounds (header, v4 remainder, iovec array,
 * everything), each direction limited to 32 pages.  A round asks for more
 * while out_len is 0; the last round is the one that carries out_len.
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsgdev.h"
#include "cmd.h"
#include "guard.h"
#include "intr.h"
#include "ioctx.h"
#include "list.h"
#include "log.h"
#include "opener.h"
#include "queue/cmdq.h"
#include "sgio.h"
#include "share.h"
#include "uaccess.h"

struct plan {
	struct iovec in[FUSE_IOCTL_MAX_IOV], out[FUSE_IOCTL_MAX_IOV];
	unsigned n_in, n_out;
	size_t in_len, out_len;
};

static int call_cmd_new(struct ioctx *x, const struct scsi_req *r, struct cmd **ret)
{
	int err = cmd_new(x->o, r, x->tid, ret);

	if (!err) {
		(*ret)->req = x->req;
		(*ret)->arg = x->arg;
		(*ret)->direct = x->direct;
	}
	return err;
}

static int check_limits(const struct ioctx *x, const struct scsi_req *r)
{
	return cmd_check_limits(x->o->d, x->direct, r);
}

static int copy_out_direct(struct cmd *cmd, unsigned sense_len)
{
	int err = cmd_put_data(cmd, cmd->tid, sense_len);

	if (!err)
		err = uaccess_write(cmd->tid, cmd->arg, cmd->r.hdr.raw, cmd->r.hdr_len);
	return err;
}

static void reply_retry_path(struct cmd *cmd, unsigned sense_len)
{
	struct iovec iov[3];
	int n = 0;

	iov[n++] = (struct iovec){ cmd->r.hdr.raw, cmd->r.hdr_len };
	/* only as planned: a v3 header with no dxferp has no data in the client */
	if (cmd_reads_data(&cmd->r) && cmd->nsegs)
		iov[n++] = (struct iovec){ cmd->c.data, cmd->c.data_len };
	if (sense_len)
		iov[n++] = (struct iovec){ cmd->c.res.sense, sense_len };
	/* the kernel fills our out iovecs in order: header, data, then sense */
	fuse_reply_ioctl_iov(cmd->req, 0, iov, n);
}

/*
 * Answer the call.  Its buffer goes back to the opener before the answer,
 * while the call keeps the file open; the retry path's answer carries it,
 * so run_and_answer() frees it after.  The copy into the caller is guarded: past the
 * bound the watchdog answers EFAULT and this answers nothing.
 */
static void finish(struct cmd *cmd, int ret)
{
	struct bsgdev *d = cmd->d;
	unsigned sense_len;
	struct guard g;

	cmd_log(cmd, ret);
	if (ret < 0) {
		stat_inc(d, STAT_SG_IO_ERR);
		cmd_recycle_data(cmd);
		fuse_reply_err(cmd->req, -ret);
		return;
	}
	cmd_clear_tail(cmd);
	sense_len = scsi_complete(&cmd->r, &cmd->c.res, cmd_duration(cmd));
	if (!cmd->direct) {
		reply_retry_path(cmd, sense_len);
		return;
	}
	ret = guard_begin(d->wd, &g, cmd->req, cmd->tid, &cmd->o->stuck);
	if (!ret) {
		ret = copy_out_direct(cmd, sense_len);
		if (!guard_end(d->wd, &g))
			ret = CMD_ANSWERED;
	}
	cmd_recycle_data(cmd);
	if (ret == CMD_ANSWERED)
		return;
	if (ret < 0) {
		stat_inc(d, STAT_SG_IO_ERR);
		fuse_reply_err(cmd->req, -ret);
		return;
	}
	fuse_reply_ioctl(cmd->req, 0, NULL, 0);
}

/*
 * The target's part of a command: true if this thread now answers the call
 * (the target's result in *ret), false if cmd went to the interrupt's side
 * (dropped, or kept for read()).
 */
static bool run_target_part(struct cmd *cmd, int *ret)
{
	int expect = SGIO_RUNNING;

	struct opener *o = cmd->o;

	if (atomic_load(&cmd->state) == SGIO_INTERRUPTED || !cmdq_slot_take(cmd)) {
		cmd_free(cmd); /* interrupted while queued: never started */
		return false;
	}
	*ret = cmd_run_target(cmd);
	cmdq_slot_give(o);
	if (!atomic_compare_exchange_strong(&cmd->state, &expect, SGIO_COMPLETING)) {
		if (expect == SGIO_KEPT)
			cmdq_kept_done(cmd, *ret); /* for read(), which frees it */
		else
			cmd_free(cmd);
		return false;
	}
	/* waits out an interrupt callback running now; none can start after,
	 * and the signal watcher fires it no more */
	intr_settle(&cmd->intr);
	return true;
}

static struct cmd *cmd_of(struct pool_work *w)
{
	return container_of(w, struct cmd, work);
}

/* On the libfuse worker that took the call. */
static void run_and_answer(struct pool_work *w, unsigned slot)
{
	struct cmd *cmd = cmd_of(w);
	int ret;

	(void)slot;
	if (!run_target_part(cmd, &ret))
		return;
	finish(cmd, ret);
	cmd_free(cmd);
}

static void finish_run(struct pool_work *w, unsigned slot)
{
	struct cmd *cmd = cmd_of(w);
	struct share_call call = cmd->call;

	(void)slot;
	finish(cmd, cmd->err);
	cmd_free(cmd);
	share_end(&call);
}

/*
 * On a pool worker, which every caller shares: the copy into the caller,
 * which may stall, goes to a thread of the elastic pool.  The call's share
 * of threads (share.h) stays held until its copy is over, so that a caller
 * whose copies stall holds no more threads of the pools than of libfuse's.
 */
static void run_pooled(struct pool_work *w, unsigned slot)
{
	struct cmd *cmd = cmd_of(w);
	struct share_call call = cmd->call; /* cmd may be freed by the interrupt's side */
	int ret;

	(void)slot;
	if (!run_target_part(cmd, &ret)) {
		share_end(&call);
		return;
	}
	if (!cmd->d->serve || !cmd->direct) {
		finish(cmd, ret);
		cmd_free(cmd);
		share_end(&call);
		return;
	}
	cmd->err = ret;
	cmd->work.run = finish_run;
	pool_submit(cmd->d->serve, &cmd->work);
}

/*
 * The call's signal ends it (intr.h: the interrupt callback, the signal
 * watcher, or start_sgio() once the callback is registered).  Answering
 * here is safe (the reply takes only the session lock); touching the
 * command after the exchange is not, as the worker may free it at once.
 */
static void signalled(struct intr *in)
{
	struct cmd *cmd = container_of(in, struct cmd, intr);
	/* read before the exchange: cmd may go after it */
	fuse_req_t req = cmd->req;
	struct bsgdev *d = cmd->d;
	pid_t tid = cmd->tid;
	/* sg's keep_orphan: the result goes to read(), which needs the direct path,
	 * and belongs to the context that issued it, which must be the opener's;
	 * the opener lives, as its file has a call in progress.  It takes a
	 * place in the file's queue, as sg's SG_IO holds one of its slots. */
	bool want = cmd->direct && atomic_load(&cmd->o->keep_orphan) && cmdq_may_keep(cmd);
	bool keep = want && cmdq_keep(cmd);
	int expect = SGIO_RUNNING;

	if (atomic_compare_exchange_strong(&cmd->state, &expect,
					   keep ? SGIO_KEPT : SGIO_INTERRUPTED)) {
		if (want && !keep)
			bsgdev_warn(d,
				    "tid %d: interrupted SG_IO dropped, not kept for read(): "
				    "the file's queue is full",
				    tid);
		stat_inc(d, STAT_INTERRUPT);
		fuse_reply_err(req, EINTR);
		return;
	}
	if (keep)
		cmdq_unkeep(cmd); /* the worker won: it waits for us to return */
}

/*
 * Run the command on this libfuse worker while few enough of them are busy
 * so: that saves two thread hand-offs, half a command's cost under TCG.
 * Past the budget it queues to the pool, so that libfuse always has workers
 * free to read interrupts and other callers' requests.
 */
static void run_or_queue(struct cmd *cmd)
{
	struct bsgdev *d = cmd->d; /* run_and_answer() frees cmd */

	if (atomic_fetch_add(&d->inline_busy, 1) < d->inline_max) {
		run_and_answer(&cmd->work, 0);
		atomic_fetch_sub(&d->inline_busy, 1);
		return;
	}
	atomic_fetch_sub(&d->inline_busy, 1);
	share_take(&cmd->call);
	cmd->work.run = run_pooled;
	pool_submit(d->pool, &cmd->work);
}

static void start_sgio(struct cmd *cmd)
{
	cmd->work.run = run_and_answer;
	atomic_store(&cmd->state, SGIO_RUNNING);
	intr_init(&cmd->intr, signalled, cmd->d, cmd->req, cmd->tid);
	/* an interrupt that came before is judged now: cmd lives on until freed below */
	if (intr_arm(&cmd->intr))
		bsgdev_debug(cmd->d, "tid %d: SG_IO interrupted before it started", cmd->tid);
	if (atomic_load(&cmd->state) == SGIO_INTERRUPTED) {
		cmd_free(cmd); /* the signal came first; already answered */
		return;
	}
	run_or_queue(cmd); /* KEPT too: it runs for a later read() */
}

static int plan_add(struct iovec *v, unsigned *n, size_t *len, uint64_t addr, size_t size)
{
	if (*n >= FUSE_IOCTL_MAX_IOV)
		return -ENOMEM;
	v[(*n)++] = (struct iovec){ (void *)(uintptr_t)addr, size };
	*len += size;
	return 0;
}

static int plan_segs(struct iovec *v, unsigned *n, size_t *len, const struct cmd *cmd)
{
	int err = 0;

	for (unsigned i = 0; i < cmd->nsegs && !err; i++)
		err = plan_add(v, n, len, cmd->segs[i].addr, cmd->segs[i].len);
	return err;
}

/* Everything the final round moves: in = header, iovecs, CDB, data-out. */
static int make_plan(const struct ioctx *x, const struct cmd *cmd, struct plan *p)
{
	const struct scsi_req *r = &cmd->r;
	int err;

	p->n_in = p->n_out = 0;
	p->in_len = p->out_len = 0;
	err = plan_add(p->in, &p->n_in, &p->in_len, x->arg, r->hdr_len);
	if (!err && r->iov_count)
		err = plan_add(p->in, &p->n_in, &p->in_len, r->data_addr,
			       r->iov_count * sizeof(struct sg_iovec));
	if (!err)
		err = plan_add(p->in, &p->n_in, &p->in_len, r->cdb_addr, r->cdb_len);
	if (!err && cmd_writes_data(r))
		err = plan_segs(p->in, &p->n_in, &p->in_len, cmd);
	if (!err)
		err = plan_add(p->out, &p->n_out, &p->out_len, x->arg, r->hdr_len);
	if (!err && cmd_reads_data(r))
		err = plan_segs(p->out, &p->n_out, &p->out_len, cmd);
	if (!err && r->sense_addr)
		err = plan_add(p->out, &p->n_out, &p->out_len, r->sense_addr, r->sense_max);
	if (!err && p->n_in + p->n_out > FUSE_IOCTL_MAX_IOV)
		err = -ENOMEM;
	return err;
}

/* The final round: everything planned has arrived in in_buf. */
static int take_final(struct ioctx *x, struct cmd *cmd, const struct plan *p)
{
	const uint8_t *in = x->in_buf;
	size_t off = cmd->r.hdr_len + cmd->r.iov_count * sizeof(struct sg_iovec);

	if (x->in_len != p->in_len || x->out_len != p->out_len) {
		bsgdev_warn(x->o->d, "tid %d: SG_IO header changed between ioctl rounds", x->tid);
		return -EINVAL;
	}
	memcpy(cmd->c.cdb, in + off, cmd->r.cdb_len);
	/* the data the plan asked for: none for a v3 header with no dxferp,
	 * which sends its buffer as cmd_set_segs() left it, as sg its reserve */
	if (cmd_writes_data(&cmd->r) && cmd->nsegs)
		memcpy(cmd->c.data, in + off + cmd->r.cdb_len, cmd->c.data_len);
	return 0;
}

/*
 * A header that is neither v3 nor v4 (its first int neither 'S' nor 'Q'):
 * sg says ENOSYS, which the kernel's FUSE layer turns into ENOTTY, "no such
 * ioctl", from any server.  bsg and sd say EINVAL for the same mistake, so
 * does this.  write() keeps sg's ENOSYS, which crosses FUSE as it is.
 */
static int decode(const void *buf, size_t len, struct scsi_req *r)
{
	int err = scsi_decode(buf, len, r);

	return err == -ENOSYS ? -EINVAL : err;
}

/*
 * bsg maps a v4 header's data buffer page by page, and finds it too long
 * only once it is mapped: over unmapped memory it says EFAULT.  A v4
 * header refused (err) for its length alone, past what the node moves,
 * gets EFAULT if a page bsg would map before it gave up is missing.
 */
static int v4_too_long(const struct ioctx *x, const union scsi_hdr *h, int err)
{
	const struct bsgdev *d = x->o->d;
	uint64_t addr, len;
	union scsi_hdr z;
	struct scsi_req r;

	if (!x->direct || h->v4.guard != 'Q')
		return err;
	addr = h->v4.din_xfer_len ? h->v4.din_xferp : h->v4.dout_xferp;
	len = h->v4.din_xfer_len ? h->v4.din_xfer_len : h->v4.dout_xfer_len;
	if (len <= d->max_xfer)
		return err;
	z = *h;
	z.v4.din_xfer_len = z.v4.dout_xfer_len = 0;
	if (scsi_decode(z.raw, sizeof(z.raw), &r) < 0)
		return err; /* bsg refuses it for something else first */
	return uaccess_mapped(x->tid, addr, d->max_xfer) ? err : -EFAULT;
}

/* What a round of the retry exchange returns when the caller must send more. */
#define NEXT_ROUND 1

/*
 * The header's rounds: its v3 length, then v4's if it says 'Q', then the
 * v3 iovec array after it.  0: all in x, decoded into r; NEXT_ROUND: the
 * caller sends iov[0..*n) first; or -errno.
 */
static int header_round(struct ioctx *x, struct scsi_req *r, struct iovec *iov, unsigned *n)
{
	int err;

	iov[0] = (struct iovec){ (void *)(uintptr_t)x->arg, SCSI_V3_HDR_LEN };
	*n = 1;
	if (x->in_len < SCSI_V3_HDR_LEN)
		return NEXT_ROUND;
	if (scsi_peek_version(x->in_buf, x->in_len) == 4 && x->in_len < SCSI_V4_HDR_LEN) {
		iov[0].iov_len = SCSI_V4_HDR_LEN;
		return NEXT_ROUND;
	}
	err = decode(x->in_buf, x->in_len, r);
	if (!err)
		err = check_limits(x, r);
	if (err)
		return err;
	if (!r->iov_count || x->in_len >= r->hdr_len + r->iov_count * sizeof(struct sg_iovec))
		return 0;
	iov[0].iov_len = r->hdr_len;
	iov[1] = (struct iovec){ (void *)(uintptr_t)r->data_addr,
				 r->iov_count * sizeof(struct sg_iovec) };
	*n = 2;
	return NEXT_ROUND;
}

/*
 * The command's round: the CDB and data-out in, room for the data-in and
 * sense out.  0: *ret is ready to run; NEXT_ROUND: p says what the caller
 * asks for, and frees *ret after; or -errno (nothing to free).
 */
static int command_round(struct ioctx *x, const struct scsi_req *r, struct plan *p,
			 struct cmd **ret)
{
	struct cmd *cmd = NULL;
	int err;

	err = call_cmd_new(x, r, &cmd);
	if (!err)
		err = cmd_set_segs(cmd,
				   (const struct sg_iovec *)((const char *)x->in_buf + r->hdr_len));
	if (!err)
		err = make_plan(x, cmd, p);
	if (!err && x->out_len == 0)
		err = NEXT_ROUND;
	if (!err)
		err = take_final(x, cmd, p);
	if (!err)
		err = cmd_check_access(cmd, false);
	if (err < 0) {
		cmd_free(cmd);
		return err;
	}
	*ret = cmd;
	return err;
}

/*
 * SG_IO on the retry path, as libfuse's example/cuse.c fioc_do_rw: each
 * round checks that what it needs is in, or asks for it, and one answer
 * ends the call.
 */
static void sgio_retry(struct ioctx *x)
{
	struct iovec iov[2] = { 0 };
	struct cmd *cmd = NULL;
	struct scsi_req r;
	struct plan p;
	unsigned n;
	int err;

	err = header_round(x, &r, iov, &n);
	if (!err)
		err = command_round(x, &r, &p, &cmd);
	if (err == NEXT_ROUND && !cmd) {
		ioctx_retry(x, iov, n, NULL, 0);
	} else if (err == NEXT_ROUND) {
		ioctx_retry(x, p.in, p.n_in, p.out, p.n_out);
		cmd_free(cmd);
	} else if (!err) {
		start_sgio(cmd);
	} else {
		stat_inc(x->o->d, STAT_SG_IO_ERR);
		fuse_reply_err(x->req, -err);
	}
}

/* The header, the iovecs, the CDB and data-out from the caller: 0 or -errno. */
static int direct_fetch(struct ioctx *x, struct cmd **ret)
{
	union scsi_hdr hdr;
	struct scsi_req r;
	int err;

	err = uaccess_read(x->tid, x->arg, hdr.raw, SCSI_V3_HDR_LEN);
	if (!err && scsi_peek_version(hdr.raw, SCSI_V3_HDR_LEN) == 4)
		err = uaccess_read(x->tid, x->arg + SCSI_V3_HDR_LEN, hdr.raw + SCSI_V3_HDR_LEN,
				   SCSI_V4_HDR_LEN - SCSI_V3_HDR_LEN);
	if (!err)
		err = decode(hdr.raw, sizeof(hdr.raw), &r);
	if (!err)
		err = check_limits(x, &r);
	if (err == -EINVAL || err == -x->o->d->max_xfer_errno)
		err = v4_too_long(x, &hdr, err);
	if (!err)
		err = call_cmd_new(x, &r, ret);
	if (!err)
		err = cmd_fetch(*ret);
	return err;
}

static void sgio_direct(struct ioctx *x)
{
	struct bsgdev *d = x->o->d;
	struct cmd *cmd = NULL;
	struct guard g;
	int err;

	err = guard_begin(d->wd, &g, x->req, x->tid, &x->o->stuck);
	if (!err) {
		err = direct_fetch(x, &cmd);
		if (!guard_end(d->wd, &g)) {
			cmd_free(cmd); /* answered EFAULT meanwhile */
			return;
		}
	}
	if (err == -EPERM && !cmd) {
		x->direct = false; /* out of our reach (another namespace?): let the kernel copy */
		sgio_retry(x);
		return;
	}
	if (!err)
		err = cmd_check_access(cmd, false);
	if (!err) {
		start_sgio(cmd);
		return;
	}
	cmd_free(cmd);
	stat_inc(d, STAT_SG_IO_ERR);
	bsgdev_debug(d, "tid %d: SG_IO refused: %s", x->tid, strerror(-err));
	fuse_reply_err(x->req, -err);
}

void sgio_ioctl(struct ioctx *x)
{
	if (x->direct)
		sgio_direct(x);
	else
		sgio_retry(x);
}
