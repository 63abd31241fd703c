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
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "async.h"
#include "guard.h"
#include "log.h"
#include "opener.h"
#include "sgio.h"

struct plan {
	struct iovec in[FUSE_IOCTL_MAX_IOV], out[FUSE_IOCTL_MAX_IOV];
	unsigned n_in, n_out;
	size_t in_len, out_len;
};

bool sgio_reads_data(const struct scsi_req *r)
{
	return !r->no_dxfer && (r->dir == SCSI_DIR_FROM_DEV || r->dir == SCSI_DIR_TO_FROM_DEV);
}

bool sgio_writes_data(const struct scsi_req *r)
{
	return !r->no_dxfer && (r->dir == SCSI_DIR_TO_DEV || r->dir == SCSI_DIR_TO_FROM_DEV);
}

/* A buffer's charge: its allocated size. */
static uint64_t charge_of(uint32_t data_len)
{
	return data_len < 4096 ? data_len : (data_len + 4095) & ~4095u;
}

/* A data buffer of size bytes (buf_len: 0 under a page), as data_buffer() made it. */
static void buf_free(void *p, uint32_t size)
{
	if (p && size >= OPENER_BUF_MIN)
		munmap(p, size);
	else
		free(p);
}

void sgio_cmd_free(struct sgio_cmd *cmd)
{
	if (!cmd)
		return;
	if (cmd->c.data)
		opener_mem_uncharge(cmd->o, cmd->charged);
	buf_free(cmd->c.data, cmd->buf_len);
	opener_put(cmd->o);
	free(cmd);
}

static uint32_t buf_size(uint32_t len)
{
	return (len + 4095) & ~4095u;
}

/* Data-in only: the one direction whose buffer goes to the client unwritten by it. */
static bool reads_only(const struct scsi_req *r)
{
	return sgio_reads_data(r) && !sgio_writes_data(r);
}

void sgio_recycle_data(struct sgio_cmd *cmd)
{
	struct opener *o = cmd->o;
	uint32_t size = cmd->buf_len;

	if (!cmd->c.data || size < OPENER_BUF_MIN)
		return;
	if (!opener_buf_keep(o, cmd->c.data, size)) {
		buf_free(cmd->c.data, size);
		opener_mem_uncharge(o, cmd->charged);
	}
	cmd->c.data = NULL; /* kept: still charged to o, until o frees it */
}

void sgio_cmd_recycle(struct sgio_cmd *cmd)
{
	if (!cmd)
		return;
	sgio_recycle_data(cmd);
	sgio_cmd_free(cmd);
}

/*
 * cmd's data buffer.  Page-aligned from a page up, so that a bsg channel
 * can map it for the device instead of copying through a bounce buffer (the
 * block layer wants the DMA alignment, 512 bytes here).  The whole buffer
 * goes back to the client for data-in, as sg's does, so a new one is zeroed
 * there; data-out fills it whole from the client first.  One the opener
 * kept holds only its own earlier data, and sgio_clear_tail() zeroes what
 * the device leaves of it: no pass over a megabyte before the device's.
 */
static void *data_buffer(struct sgio_cmd *cmd, const struct scsi_req *r)
{
	uint32_t len = r->data_len;
	void *p;

	if (len < 4096)
		return calloc(1, len);
	cmd->buf_len = buf_size(len);
	if (cmd->buf_len >= OPENER_BUF_MIN) {
		/* zero pages, given only as the device or the client fills them:
		 * a large data-in costs the memory the device returns */
		p = mmap(NULL, cmd->buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	if (posix_memalign(&p, 4096, cmd->buf_len))
		return NULL;
	if (reads_only(r))
		memset(p, 0, len);
	return p;
}

void sgio_clear_tail(struct sgio_cmd *cmd)
{
	uint32_t len = cmd->c.data_len;
	int32_t resid = cmd->c.res.resid;

	if (!cmd->reused || resid <= 0 || !reads_only(&cmd->r))
		return;
	if ((uint32_t)resid > len)
		resid = (int32_t)len;
	memset((char *)cmd->c.data + len - resid, 0, resid);
}

int sgio_cmd_new(struct opener *o, const struct scsi_req *r, pid_t tid, struct sgio_cmd **ret)
{
	unsigned nsegs = r->iov_count ? r->iov_count : 1;
	struct sgio_cmd *cmd;

	cmd = calloc(1, sizeof(*cmd) + nsegs * sizeof(cmd->segs[0]));
	if (!cmd)
		return -ENOMEM;
	cmd->o = o;
	list_init(&cmd->node);
	list_init(&cmd->pend);
	cmd->charged = charge_of(r->data_len);
	if (r->data_len) {
		/* a kept buffer is charged already: only a new one is charged */
		cmd->c.data = opener_buf_take(o, buf_size(r->data_len));
		if (cmd->c.data) {
			cmd->reused = true;
			cmd->buf_len = buf_size(r->data_len);
		} else if (opener_mem_charge(o, cmd->charged) == 0) {
			cmd->c.data = data_buffer(cmd, r);
			if (!cmd->c.data)
				opener_mem_uncharge(o, cmd->charged);
		}
		if (!cmd->c.data) {
			free(cmd);
			return -ENOMEM;
		}
	}
	opener_get(o); /* the command's: its buffer's charge, kept buffers */
	clock_gettime(CLOCK_MONOTONIC, &cmd->start);
	cmd->duration = SGIO_NO_DURATION;
	cmd->d = o->d;
	cmd->chan = o->chan;
	cmd->tid = tid;
	cmd->r = *r;
	scsi_cmd_from_req(r, &cmd->c);
	*ret = cmd;
	return 0;
}

static int cmd_new(struct ioctx *x, const struct scsi_req *r, struct sgio_cmd **ret)
{
	int err = sgio_cmd_new(x->o, r, x->tid, ret);

	if (!err) {
		(*ret)->req = x->req;
		(*ret)->arg = x->arg;
		(*ret)->direct = x->direct;
	}
	return err;
}

/* Data segments from the client's sg_iovec array, or the flat buffer. */
static int cmd_set_segs(struct sgio_cmd *cmd, const struct sg_iovec *uiov)
{
	int n;

	if (!cmd->r.iov_count) {
		cmd->segs[0] = (struct scsi_seg){ cmd->r.data_addr, cmd->r.data_len };
		cmd->nsegs = cmd->r.data_len ? 1 : 0;
		/* sg: a v3 header with no dxferp moves its data through the
		 * file's reserve buffer, the client's memory untouched */
		if (cmd->r.version == 3 && !cmd->r.data_addr && cmd->nsegs) {
			cmd->nsegs = 0;
			if (sgio_writes_data(&cmd->r) && !cmd->reused)
				memset(cmd->c.data, 0, cmd->c.data_len);
		}
		return 0;
	}
	n = scsi_iov_segs(&cmd->r, uiov, cmd->segs);
	if (n < 0)
		return n;
	cmd->nsegs = n;
	cmd->c.data_len = 0;
	for (int i = 0; i < n; i++)
		cmd->c.data_len += cmd->segs[i].len;
	return 0;
}

int sgio_check_limits(const struct daemon *d, bool direct, const struct scsi_req *r)
{
	if (direct)
		return r->data_len > d->max_xfer ? -d->max_xfer_errno : 0;
	if (r->data_len > RETRY_MAX_XFER || r->data_len > d->max_xfer ||
	    r->iov_count > RETRY_MAX_IOVS)
		return -ENOMEM; /* the retry exchange's ceiling; sg_dd shrinks on it */
	return 0;
}

static int check_limits(const struct ioctx *x, const struct scsi_req *r)
{
	return sgio_check_limits(x->o->d, x->direct, r);
}

uint32_t sgio_elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

uint32_t sgio_duration(struct sgio_cmd *cmd)
{
	if (cmd->duration == SGIO_NO_DURATION)
		cmd->duration = sgio_elapsed_ms(&cmd->start);
	return cmd->duration;
}

void sgio_log_cmd(const struct sgio_cmd *cmd, int ret)
{
	char op[64], sense[256];

	if (log_level < LOG_DEBUG)
		return;
	scsi_opcode_name(cmd->c.cdb, cmd->c.cdb_len, cmd->d->target->info.scsi_type, op,
			 sizeof(op));
	scsi_sense_str(&cmd->c.res, sense, sizeof(sense));
	daemon_debug(cmd->d, "tid %d: SG_IO v%u %s, %u bytes: %s status 0x%02x host 0x%x %s",
		     cmd->tid, cmd->r.version, op, cmd->c.data_len,
		     ret < 0 ? strerror(-ret) : "done", cmd->c.res.status, cmd->c.res.host_status,
		     sense);
}

int sgio_put_data(struct sgio_cmd *cmd, pid_t tid, unsigned sense_len)
{
	int err = 0;

	if (sgio_reads_data(&cmd->r))
		err = uaccess_writev(tid, cmd->segs, cmd->nsegs, cmd->c.data);
	if (!err)
		err = uaccess_write(tid, cmd->r.sense_addr, cmd->c.res.sense, sense_len);
	return err;
}

static int copy_out_direct(struct sgio_cmd *cmd, unsigned sense_len)
{
	int err = sgio_put_data(cmd, cmd->tid, sense_len);

	if (!err)
		err = uaccess_write(cmd->tid, cmd->arg, cmd->r.hdr.raw, cmd->r.hdr_len);
	return err;
}

static void reply_retry_path(struct sgio_cmd *cmd, unsigned sense_len)
{
	struct iovec iov[3];
	int n = 0;

	iov[n++] = (struct iovec){ cmd->r.hdr.raw, cmd->r.hdr_len };
	if (sgio_reads_data(&cmd->r))
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
static void finish(struct sgio_cmd *cmd, int ret)
{
	struct daemon *d = cmd->d;
	unsigned sense_len;
	struct guard g;

	sgio_log_cmd(cmd, ret);
	if (ret < 0) {
		stat_inc(d, STAT_SG_IO_ERR);
		sgio_recycle_data(cmd);
		fuse_reply_err(cmd->req, -ret);
		return;
	}
	sgio_clear_tail(cmd);
	sense_len = scsi_complete(&cmd->r, &cmd->c.res, sgio_duration(cmd));
	if (!cmd->direct) {
		reply_retry_path(cmd, sense_len);
		return;
	}
	ret = guard_begin(d->wd, &g, cmd->req, cmd->tid, &cmd->o->stuck);
	if (!ret) {
		ret = copy_out_direct(cmd, sense_len);
		if (!guard_end(d->wd, &g))
			ret = SGIO_ANSWERED;
	}
	sgio_recycle_data(cmd);
	if (ret == SGIO_ANSWERED)
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
static bool run_target_part(struct sgio_cmd *cmd, int *ret)
{
	int expect = SGIO_RUNNING;

	if (atomic_load(&cmd->state) == SGIO_INTERRUPTED) {
		sgio_cmd_free(cmd); /* interrupted while queued: never started */
		return false;
	}
	*ret = sgio_run_target(cmd);
	if (!atomic_compare_exchange_strong(&cmd->state, &expect, SGIO_COMPLETING)) {
		if (expect == SGIO_KEPT)
			async_kept_done(cmd, *ret); /* for read(), which frees it */
		else
			sgio_cmd_free(cmd);
		return false;
	}
	/* waits out an interrupt callback running now; none can start after */
	fuse_req_interrupt_func(cmd->req, NULL, NULL);
	return true;
}

static struct sgio_cmd *cmd_of(struct pool_work *w)
{
	return (struct sgio_cmd *)((char *)w - offsetof(struct sgio_cmd, work));
}

/* On the libfuse worker that took the call. */
static void run_and_answer(struct pool_work *w, unsigned slot)
{
	struct sgio_cmd *cmd = cmd_of(w);
	int ret;

	(void)slot;
	if (!run_target_part(cmd, &ret))
		return;
	finish(cmd, ret);
	sgio_cmd_free(cmd);
}

static void finish_run(struct pool_work *w, unsigned slot)
{
	struct sgio_cmd *cmd = cmd_of(w);

	(void)slot;
	finish(cmd, cmd->err);
	sgio_cmd_free(cmd);
}

/*
 * On a pool worker, which every caller shares: the copy into the caller,
 * which may stall, goes to a thread of the elastic pool.
 */
static void run_pooled(struct pool_work *w, unsigned slot)
{
	struct sgio_cmd *cmd = cmd_of(w);
	int ret;

	(void)slot;
	if (!run_target_part(cmd, &ret))
		return;
	if (!cmd->d->serve || !cmd->direct) {
		finish(cmd, ret);
		sgio_cmd_free(cmd);
		return;
	}
	cmd->err = ret;
	cmd->work.run = finish_run;
	pool_submit(cmd->d->serve, &cmd->work);
}

/*
 * The kernel asks capable(CAP_SYS_RAWIO) of the caller at each command,
 * whoever opened the file: so does this, on the thread blocked in this
 * call, and only when the answer matters (the command is refused without
 * it), so that the common command costs no look at /proc.  Exact, as the
 * caller's credentials cannot change while it is blocked in its call.
 */
int sgio_allowed(struct opener *o, pid_t tid, const uint8_t *cdb, unsigned cdb_len, bool by_write)
{
	struct daemon *d = o->d;
	struct filter_ctx ctx = {
		.open_flags = o->open_flags,
		.rawio = false,
		/* a binding's write() counts as SG_IO on the descriptor it took */
		.by_write = by_write && !d->bound,
		.scsi_type = d->target->info.scsi_type,
	};
	char op[64];
	int err = filter_check(&d->policy, cdb, cdb_len, &ctx);

	if (err && tid > 0 && uaccess_capable(tid, CREDS_CAP_SYS_RAWIO)) {
		ctx.rawio = true;
		err = filter_check(&d->policy, cdb, cdb_len, &ctx);
	}
	if (!err)
		return 0;
	stat_inc(d, STAT_REFUSED);
	scsi_opcode_name(cdb, cdb_len, d->target->info.scsi_type, op, sizeof(op));
	if (!atomic_exchange(&o->warned_filter, true))
		daemon_warn(d,
			    "tid %d: %s (opcode 0x%02x) refused by the access policy: file open "
			    "%s, caller %s CAP_SYS_RAWIO",
			    tid, op, cdb[0],
			    (o->open_flags & O_ACCMODE) == O_RDONLY ? "read-only" : "for writing",
			    ctx.rawio ? "with" : "without");
	else
		daemon_debug(d, "tid %d: %s refused by the access policy", tid, op);
	return err;
}

int sgio_check_access(struct sgio_cmd *cmd, bool by_write)
{
	return sgio_allowed(cmd->o, cmd->tid, cmd->c.cdb, cmd->c.cdb_len, by_write);
}

int sgio_target_failed(struct daemon *d, int err)
{
	/* sg and bsg say ENODEV or ENXIO once the device is going away */
	if ((err == -ENODEV || err == -ENXIO) && !atomic_exchange(&d->target_gone, true)) {
		daemon_warn(d, "%s is gone: %s; new commands get ENODEV", d->target->info.path,
			    strerror(-err));
		async_target_gone(d); /* parked calls with nothing to wait for end */
	}
	return err;
}

int sgio_run_target(struct sgio_cmd *cmd)
{
	struct daemon *d = cmd->d;
	int ret;

	if (atomic_load(&d->target_gone))
		return -ENODEV;
	stat_target_start(d);
	ret = d->target->ops->sg_io(d->target, cmd->chan, &cmd->c);
	cmd->duration = stat_target_end(d, &cmd->start);
	return ret ? sgio_target_failed(d, ret) : 0;
}

/*
 * Called by libfuse with its request lock held.  Answering here is safe
 * (the reply takes only the session lock); touching the command after the
 * exchange is not, as the worker may free it at once.
 */
static void interrupted(fuse_req_t req, void *data)
{
	struct sgio_cmd *cmd = data;
	struct daemon *d = cmd->d; /* read before the exchange: cmd may go after it */
	/* sg's keep_orphan: the result goes to read(), which needs the direct path;
	 * the opener lives, as its file has a call in progress */
	bool keep = cmd->direct && atomic_load(&cmd->o->keep_orphan);
	int expect = SGIO_RUNNING;

	if (keep)
		async_keep(cmd);
	if (atomic_compare_exchange_strong(&cmd->state, &expect,
					   keep ? SGIO_KEPT : SGIO_INTERRUPTED)) {
		stat_inc(d, STAT_INTERRUPT);
		fuse_reply_err(req, EINTR);
		return;
	}
	if (keep)
		async_unkeep(cmd); /* the worker won: it waits for us to return */
}

/*
 * Run the command on this libfuse worker while few enough of them are busy
 * so: that saves two thread hand-offs, half a command's cost under TCG.
 * Past the budget it queues to the pool, so that libfuse always has workers
 * free to read interrupts and other callers' requests.
 */
static void run_or_queue(struct sgio_cmd *cmd)
{
	struct daemon *d = cmd->d; /* run_and_answer() frees cmd */

	if (atomic_fetch_add(&d->inline_busy, 1) < d->inline_max) {
		run_and_answer(&cmd->work, 0);
		atomic_fetch_sub(&d->inline_busy, 1);
		return;
	}
	atomic_fetch_sub(&d->inline_busy, 1);
	cmd->work.run = run_pooled;
	pool_submit(d->pool, &cmd->work);
}

static void start_sgio(struct sgio_cmd *cmd)
{
	cmd->work.run = run_and_answer;
	atomic_store(&cmd->state, SGIO_RUNNING);
	fuse_req_interrupt_func(cmd->req, interrupted, cmd);
	if (atomic_load(&cmd->state) == SGIO_INTERRUPTED) {
		sgio_cmd_free(cmd); /* the signal came first; already answered */
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

static int plan_segs(struct iovec *v, unsigned *n, size_t *len, const struct sgio_cmd *cmd)
{
	int err = 0;

	for (unsigned i = 0; i < cmd->nsegs && !err; i++)
		err = plan_add(v, n, len, cmd->segs[i].addr, cmd->segs[i].len);
	return err;
}

/* Everything the final round moves: in = header, iovecs, CDB, data-out. */
static int make_plan(const struct ioctx *x, const struct sgio_cmd *cmd, struct plan *p)
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
	if (!err && sgio_writes_data(r))
		err = plan_segs(p->in, &p->n_in, &p->in_len, cmd);
	if (!err)
		err = plan_add(p->out, &p->n_out, &p->out_len, x->arg, r->hdr_len);
	if (!err && sgio_reads_data(r))
		err = plan_segs(p->out, &p->n_out, &p->out_len, cmd);
	if (!err && r->sense_addr)
		err = plan_add(p->out, &p->n_out, &p->out_len, r->sense_addr, r->sense_max);
	if (!err && p->n_in + p->n_out > FUSE_IOCTL_MAX_IOV)
		err = -ENOMEM;
	return err;
}

/* The final round: everything planned has arrived in in_buf. */
static int take_final(struct ioctx *x, struct sgio_cmd *cmd, const struct plan *p)
{
	const uint8_t *in = x->in_buf;
	size_t off = cmd->r.hdr_len + cmd->r.iov_count * sizeof(struct sg_iovec);

	if (x->in_len != p->in_len || x->out_len != p->out_len) {
		daemon_warn(x->o->d, "tid %d: SG_IO header changed between ioctl rounds", x->tid);
		return -EINVAL;
	}
	memcpy(cmd->c.cdb, in + off, cmd->r.cdb_len);
	if (sgio_writes_data(&cmd->r))
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
			 struct sgio_cmd **ret)
{
	struct sgio_cmd *cmd = NULL;
	int err;

	err = cmd_new(x, r, &cmd);
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
		err = sgio_check_access(cmd, false);
	if (err < 0) {
		sgio_cmd_free(cmd);
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
	struct sgio_cmd *cmd = NULL;
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
		sgio_cmd_free(cmd);
	} else if (!err) {
		start_sgio(cmd);
	} else {
		stat_inc(x->o->d, STAT_SG_IO_ERR);
		fuse_reply_err(x->req, -err);
	}
}

int sgio_fetch(struct sgio_cmd *cmd)
{
	const struct scsi_req *r = &cmd->r;
	struct sg_iovec *uiov = NULL;
	int err = 0;

	if (r->iov_count) {
		uiov = calloc(r->iov_count, sizeof(*uiov));
		if (!uiov)
			return -ENOMEM;
		err = uaccess_read(cmd->tid, r->data_addr, uiov, r->iov_count * sizeof(*uiov));
	}
	if (!err)
		err = cmd_set_segs(cmd, uiov);
	free(uiov);
	if (!err)
		err = uaccess_read(cmd->tid, r->cdb_addr, cmd->c.cdb, r->cdb_len);
	if (!err && sgio_writes_data(r))
		err = uaccess_readv(cmd->tid, cmd->segs, cmd->nsegs, cmd->c.data);
	return err;
}

/* The header, the iovecs, the CDB and data-out from the caller: 0 or -errno. */
static int direct_fetch(struct ioctx *x, struct sgio_cmd **ret)
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
	if (!err)
		err = cmd_new(x, &r, ret);
	if (!err)
		err = sgio_fetch(*ret);
	return err;
}

static void sgio_direct(struct ioctx *x)
{
	struct daemon *d = x->o->d;
	struct sgio_cmd *cmd = NULL;
	struct guard g;
	int err;

	err = guard_begin(d->wd, &g, x->req, x->tid, &x->o->stuck);
	if (!err) {
		err = direct_fetch(x, &cmd);
		if (!guard_end(d->wd, &g)) {
			sgio_cmd_free(cmd); /* answered EFAULT meanwhile */
			return;
		}
	}
	if (err == -EPERM && !cmd) {
		x->direct = false; /* out of our reach (another namespace?): let the kernel copy */
		sgio_retry(x);
		return;
	}
	if (!err)
		err = sgio_check_access(cmd, false);
	if (!err) {
		start_sgio(cmd);
		return;
	}
	sgio_cmd_free(cmd);
	stat_inc(d, STAT_SG_IO_ERR);
	daemon_debug(d, "tid %d: SG_IO refused: %s", x->tid, strerror(-err));
	fuse_reply_err(x->req, -err);
}

void sgio_ioctl(struct ioctx *x)
{
	if (x->direct)
		sgio_direct(x);
	else
		sgio_retry(x);
}
