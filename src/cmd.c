// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command: one SCSI command of an opener, synchronous (SG_IO) or
 * asynchronous (write(), SG_IOSUBMIT), from its decoded header to its
 * result: limits, data buffer, the copies from and to the caller, the
 * access policy, the run on the target.  Any thread; a command has one
 * owner at a time, which its callers hand on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bsgdev.h"
#include "cmd.h"
#include "deadline.h"
#include "ident.h"
#include "log.h"
#include "opener.h"
#include "policy.h"
#include "uaccess.h"

bool cmd_reads_data(const struct scsi_req *r)
{
	return !r->no_dxfer && (r->dir == SCSI_DIR_FROM_DEV || r->dir == SCSI_DIR_TO_FROM_DEV);
}

bool cmd_writes_data(const struct scsi_req *r)
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

void cmd_free(struct cmd *cmd)
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
	return cmd_reads_data(r) && !cmd_writes_data(r);
}

void cmd_recycle_data(struct cmd *cmd)
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

void cmd_recycle(struct cmd *cmd)
{
	if (!cmd)
		return;
	cmd_recycle_data(cmd);
	cmd_free(cmd);
}

/*
 * cmd's data buffer.  Page-aligned from a page up, so that a bsg channel
 * can map it for the device instead of copying through a bounce buffer (the
 * block layer wants the DMA alignment, 512 bytes here).  The whole buffer
 * goes back to the client for data-in, as sg's does, so a new one is zeroed
 * there; data-out fills it whole from the client first.  One the opener
 * kept holds only its own earlier data, and cmd_clear_tail() zeroes what
 * the device leaves of it: no pass over a megabyte before the device's.
 */
static void *data_buffer(struct cmd *cmd, const struct scsi_req *r)
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

void cmd_clear_tail(struct cmd *cmd)
{
	uint32_t len = cmd->c.data_len;
	int32_t resid = cmd->c.res.resid;

	if (!cmd->reused || resid <= 0 || !reads_only(&cmd->r))
		return;
	if ((uint32_t)resid > len)
		resid = (int32_t)len;
	memset((char *)cmd->c.data + len - resid, 0, resid);
}

int cmd_new(struct opener *o, const struct scsi_req *r, pid_t tid, struct cmd **ret)
{
	unsigned nsegs = r->iov_count ? r->iov_count : 1;
	struct cmd *cmd;

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
	clock_gettime(TICK_CLOCK, &cmd->start);
	cmd->duration = CMD_NO_DURATION;
	cmd->d = o->d;
	cmd->chan = -1; /* the opener's, opened at the first command that runs */
	cmd->tq = NULL;
	cmd->tid = tid;
	cmd->r = *r;
	scsi_cmd_from_req(r, &cmd->c);
	*ret = cmd;
	return 0;
}

/* Data segments from the client's sg_iovec array, or the flat buffer. */
int cmd_set_segs(struct cmd *cmd, const struct sg_iovec *uiov)
{
	int n;

	uint64_t limit = cmd->d->user_limit ? cmd->d->user_limit : UINT64_MAX;

	if (!cmd->r.iov_count) {
		cmd->segs[0] = (struct scsi_seg){ cmd->r.data_addr, cmd->r.data_len };
		cmd->nsegs = cmd->r.data_len ? 1 : 0;
		/* sg_start_req(): blk_rq_map_user()'s access_ok(), at write() too */
		if (cmd->nsegs && cmd->r.data_addr &&
		    !scsi_user_range_ok(cmd->r.data_addr, cmd->r.data_len, limit))
			return -EFAULT;
		/* sg: a v3 header with no dxferp moves its data through the
		 * file's reserve buffer, the client's memory untouched */
		if (cmd->r.version == 3 && !cmd->r.data_addr && cmd->nsegs) {
			cmd->nsegs = 0;
			if (cmd_writes_data(&cmd->r) && !cmd->reused)
				memset(cmd->c.data, 0, cmd->c.data_len);
		}
		return 0;
	}
	n = scsi_iov_segs(&cmd->r, uiov, limit, cmd->segs);
	if (n < 0)
		return n;
	cmd->nsegs = n;
	cmd->c.data_len = 0;
	for (int i = 0; i < n; i++)
		cmd->c.data_len += cmd->segs[i].len;
	return 0;
}

/*
 * What sg_build_indirect() can gather for one v3 command: a scatter
 * element (sg's scatter_elem_sz, 32 KiB) per segment the queue takes.
 * Past it sg says ENOMEM before the block layer sees the length; an sd
 * target keeps SG_IO's EIO, unless the node is /dev/sgN.
 */
static bool over_sg_scatter(const struct bsgdev *d, const struct scsi_req *r)
{
	const struct target_info *t = &d->target->info;
	uint64_t len = ((uint64_t)r->data_len + 511) & ~511ull;

	return r->version == 3 && (t->kind != TARGET_SD || d->sg_compat) && t->max_segments > 0 &&
	       len > (uint64_t)t->max_segments * SG_SCATTER_SZ;
}

int cmd_check_limits(const struct bsgdev *d, bool direct, const struct scsi_req *r)
{
	if (direct && over_sg_scatter(d, r))
		return -ENOMEM;
	if (direct)
		return r->data_len > d->max_xfer ? -d->max_xfer_errno : 0;
	if (r->data_len > RETRY_MAX_XFER || r->data_len > d->max_xfer ||
	    r->iov_count > RETRY_MAX_IOVS)
		return -ENOMEM; /* the retry exchange's ceiling; sg_dd shrinks on it */
	return 0;
}

uint32_t cmd_elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(TICK_CLOCK, &now);
	return us_since(start, &now) / 1000;
}

uint32_t cmd_duration(struct cmd *cmd)
{
	if (cmd->duration == CMD_NO_DURATION)
		cmd->duration = cmd_elapsed_ms(&cmd->start);
	return cmd->duration;
}

void cmd_log(const struct cmd *cmd, int ret)
{
	char op[64], sense[256];

	if (log_level < LOG_DEBUG)
		return;
	scsi_opcode_name(cmd->c.cdb, cmd->c.cdb_len, cmd->d->target->info.scsi_type, op,
			 sizeof(op));
	scsi_sense_str(&cmd->c.res, sense, sizeof(sense));
	bsgdev_debug(cmd->d, "tid %d: SG_IO v%u %s, %u bytes: %s status 0x%02x host 0x%x %s",
		     cmd->tid, cmd->r.version, op, cmd->c.data_len,
		     ret < 0 ? strerror(-ret) : "done", cmd->c.res.status, cmd->c.res.host_status,
		     sense);
}

int cmd_put_data(struct cmd *cmd, pid_t tid, unsigned sense_len)
{
	int err = 0;

	if (cmd_reads_data(&cmd->r))
		err = uaccess_writev(tid, cmd->segs, cmd->nsegs, cmd->c.data);
	if (!err)
		err = uaccess_write(tid, cmd->r.sense_addr, cmd->c.res.sense, sense_len);
	return err;
}

/*
 * The kernel asks capable(CAP_SYS_RAWIO) of the caller at each command,
 * whoever opened the file: so does this, on the thread blocked in this
 * call, and only when the answer matters (the command is refused without
 * it), so that the common command costs no look at /proc.  Exact, as the
 * caller's credentials cannot change while it is blocked in its call.
 */
int cmd_allowed(struct opener *o, pid_t tid, const uint8_t *cdb, unsigned cdb_len, enum cmd_via via)
{
	struct bsgdev *d = o->d;
	struct filter_ctx ctx = {
		.open_flags = o->open_flags,
		.rawio = false,
		/* a binding's write() counts as SG_IO on the descriptor it took */
		.by_write = via == CMD_VIA_WRITE && !d->bound,
		.scsi_ioctl = via == CMD_VIA_SCSI_IOCTL,
		.scsi_type = d->target->info.scsi_type,
	};
	char op[64];
	int err = policy_check(d->policy, d->policy_kernel, cdb, cdb_len, &ctx);

	if (err && tid > 0 && ident_capable(tid, CREDS_CAP_SYS_RAWIO)) {
		ctx.rawio = true;
		err = policy_check(d->policy, d->policy_kernel, cdb, cdb_len, &ctx);
	}
	if (!err)
		return 0;
	stat_inc(d, STAT_REFUSED);
	atomic_fetch_add_explicit(&o->io.refused, 1, memory_order_relaxed);
	scsi_opcode_name(cdb, cdb_len, d->target->info.scsi_type, op, sizeof(op));
	if (!atomic_exchange(&o->warned_filter, true))
		bsgdev_warn(d,
			    "tid %d: %s (opcode 0x%02x) refused by the access policy: file open "
			    "%s, caller %s CAP_SYS_RAWIO",
			    tid, op, cdb[0],
			    (o->open_flags & O_ACCMODE) == O_RDONLY ? "read-only" : "for writing",
			    ctx.rawio ? "with" : "without");
	else
		bsgdev_debug(d, "tid %d: %s refused by the access policy", tid, op);
	return err;
}

int cmd_check_access(struct cmd *cmd, bool by_write)
{
	return cmd_allowed(cmd->o, cmd->tid, cmd->c.cdb, cmd->c.cdb_len,
			   by_write ? CMD_VIA_WRITE : CMD_VIA_SG_IO);
}

int cmd_target_failed(struct bsgdev *d, int err)
{
	/* sg and bsg say ENODEV or ENXIO once the device is going away */
	if (err != -ENODEV && err != -ENXIO)
		return err;
	if (d->gone)
		d->gone(d, err);
	else
		atomic_store(&d->target_gone, true);
	return err;
}

int cmd_run_target(struct cmd *cmd)
{
	struct bsgdev *d = cmd->d;
	const struct target_ops *ops = d->target->ops;
	/* a written one on a target queue runs on its channel's descriptor and slot */
	bool on_queue = cmd->tq && ops->queue_sg_io;
	int ret;

	if (atomic_load(&d->target_gone))
		return -ENODEV;
	if (!on_queue && cmd->chan < 0)
		cmd->chan = opener_chan(cmd->o);
	/*
	 * This opener could not reach the device by its path (gone, or the path
	 * now leads elsewhere): its command fails, the node does not; a device
	 * that went is told by the channels already open and by udev.
	 */
	if (!on_queue && cmd->chan < 0)
		return cmd->chan;
	stat_target_start(d, &cmd->sent);
	ret = on_queue ? ops->queue_sg_io(d->target, cmd->tq, &cmd->c)
		       : ops->sg_io(d->target, cmd->chan, &cmd->c);
	cmd->duration = stat_target_end(d, &cmd->o->io, &cmd->start, &cmd->sent, &cmd->c, ret);
	return ret ? cmd_target_failed(d, ret) : 0;
}

int cmd_fetch(struct cmd *cmd)
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
	if (!err && cmd_writes_data(r))
		err = uaccess_readv(cmd->tid, cmd->segs, cmd->nsegs, cmd->c.data);
	return err;
}
