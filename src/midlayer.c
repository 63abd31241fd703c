// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mid-layer's ioctls, forwarded to the target.  The checks and their
 * order follow sg_ioctl_common() and scsi_ioctl() in Linux 6.1: sg answers
 * ENODEV for a device going away, EPERM on a read-only file for what it
 * does not know itself, and scsi_ioctl() does the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <scsi/sg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bsgdev.h"
#include "cmd.h"
#include "guard.h"
#include "ident.h"
#include "ioctx.h"
#include "list.h"
#include "log.h"
#include "midlayer.h"
#include "opener.h"
#include "uaccess.h"

#ifndef SCSI_IOCTL_SEND_COMMAND
#define SCSI_IOCTL_SEND_COMMAND 1
#endif

#define SIC_HEAD      8u  /* struct scsi_ioctl_command: inlen, outlen, then data */
#define SIC_SENSE_MAX 16u /* OMAX_SB_LEN: the most sense sg_scsi_ioctl() returns */
#define PCI_NAME_MAX  20u /* scsi_ioctl_get_pci(): at most 20 characters, no NUL */

/* One call, from its checks to its answer; buf is the argument the target gets. */
struct mid_call {
	struct pool_work work;
	struct opener *o;
	fuse_req_t req;
	pid_t tid;
	uint64_t arg;
	bool direct;
	unsigned cmd;
	bool nonblock;
	bool has_arg; /* the target gets buf, else NULL */
	int ret;
	size_t out_off, out_len; /* the answer's bytes: buf + out_off, to arg + out_off */
	size_t user_len;	 /* PROBE_HOST: the length the caller gave */
	unsigned char buf[];
};

static struct mid_call *call_new(struct ioctx *x, unsigned cmd, size_t buf_len)
{
	struct mid_call *c = calloc(1, sizeof(*c) + buf_len + 1);

	if (!c)
		return NULL;
	c->o = x->o;
	c->req = x->req;
	c->tid = x->tid;
	c->arg = x->arg;
	c->direct = x->direct;
	c->cmd = cmd;
	/* the caller's file, as it was opened: FUSE passes an ioctl no flags */
	c->nonblock = x->o->open_flags & O_NONBLOCK;
	opener_get(c->o); /* the call's: a fatal signal may close the file meanwhile */
	return c;
}

static void call_free(struct mid_call *c)
{
	opener_put(c->o);
	free(c);
}

/* Write the answer's bytes into the caller, guarded: false if the watchdog answered. */
static bool copy_out(struct mid_call *c, int *err)
{
	struct bsgdev *d = c->o->d;
	struct guard g;

	*err = guard_begin(d->wd, &g, c->req, c->tid, &c->o->stuck);
	if (*err)
		return true;
	*err = uaccess_write(c->tid, c->arg + c->out_off, c->buf + c->out_off, c->out_len);
	return guard_end(d->wd, &g);
}

static void finish(struct mid_call *c)
{
	int err = 0;

	if (c->ret < 0) {
		fuse_reply_err(c->req, -c->ret);
	} else if (!c->out_len) {
		fuse_reply_ioctl(c->req, c->ret, NULL, 0);
	} else if (!c->direct) {
		/* the final round's out iovec starts at arg + out_off */
		fuse_reply_ioctl(c->req, c->ret, c->buf + c->out_off, c->out_len);
	} else if (copy_out(c, &err)) {
		if (err)
			fuse_reply_err(c->req, -err);
		else
			fuse_reply_ioctl(c->req, c->ret, NULL, 0);
	}
	call_free(c);
}

static struct mid_call *call_of(struct pool_work *w)
{
	return container_of(w, struct mid_call, work);
}

static void finish_run(struct pool_work *w, unsigned slot)
{
	(void)slot;
	finish(call_of(w));
}

/* What the target wrote back, to go to the caller: as each ioctl copies it. */
static void answer_len(struct mid_call *c)
{
	size_t n;

	if (c->ret < 0)
		return;
	switch (c->cmd) {
	case SCSI_IOCTL_SEND_COMMAND:
		if (c->ret == 0) {
			uint32_t outlen;

			memcpy(&outlen, c->buf + 4, sizeof(outlen));
			c->out_len = outlen; /* outlen bytes of the buffer */
		} else if ((c->buf[SIC_HEAD] & 0x70) == 0x70) {
			/* a status: the sense the kernel kept (8 + its additional
			 * length, scsi_io_completion_nz_result()), at most 16
			 * bytes.  Without sense the CDB is still there, and only
			 * an opcode 0x7x or 0xfx looks like sense: its bytes go
			 * back where they came from */
			n = 8u + c->buf[SIC_HEAD + 7];
			c->out_len = n < SIC_SENSE_MAX ? n : SIC_SENSE_MAX;
		}
		break;
	case MIDLAYER_PROBE_HOST:
		/* len bytes, or the whole string and its NUL if shorter */
		n = strnlen((char *)c->buf, c->user_len);
		c->out_len = n < c->user_len ? n + 1 : c->user_len;
		break;
	case MIDLAYER_GET_PCI:
		c->out_len = strnlen((char *)c->buf, PCI_NAME_MAX);
		break;
	}
}

/* On a pool worker: the target's part; the copy out goes to the elastic pool. */
static void run_mid_ioctl(struct pool_work *w, unsigned slot)
{
	struct mid_call *c = call_of(w);
	struct bsgdev *d = c->o->d;
	struct target *t = d->target;

	(void)slot;
	c->ret = t->ops->ioctl ? t->ops->ioctl(t, c->cmd, c->has_arg ? c->buf : NULL, c->nonblock)
			       : -ENOTTY;
	if (c->cmd == SG_SCSI_RESET) { /* the device's other users notice it */
		int val;

		memcpy(&val, c->buf, sizeof(val));
		bsgdev_log(d, LOG_NOTICE, "tid %d: SG_SCSI_RESET %d: %s", c->tid, val,
			   c->ret < 0 ? strerror(-c->ret) : "done");
	} else
		bsgdev_debug(d, "tid %d: ioctl 0x%x: %d", c->tid, c->cmd, c->ret);
	answer_len(c);
	if (!c->direct || !c->out_len || !d->serve) {
		finish(c);
		return;
	}
	c->work.run = finish_run;
	pool_submit(d->serve, &c->work);
}

static void queue_mid_ioctl(struct mid_call *c)
{
	c->work.run = run_mid_ioctl;
	pool_submit(c->o->d->pool, &c->work);
}

/*
 * The caller's in_len bytes at arg into buf, with room for out_max bytes
 * at arg + out_off in the answer.  1: done (on the retry path, the round
 * has both).  0: answered, or another round asked for.
 */
static int fetch(struct ioctx *x, void *buf, size_t in_len, size_t out_off, size_t out_max)
{
	struct iovec in = { (void *)(uintptr_t)x->arg, in_len };
	struct iovec out = { (void *)(uintptr_t)(x->arg + out_off), out_max };
	struct bsgdev *d = x->o->d;
	struct guard g;
	int err;

	if (x->direct && !in_len)
		return 1;
	if (x->direct) {
		err = guard_begin(d->wd, &g, x->req, x->tid, &x->o->stuck);
		if (!err) {
			err = uaccess_read(x->tid, x->arg, buf, in_len);
			if (!guard_end(d->wd, &g))
				return 0;
		}
		if (!err)
			return 1;
		if (err != -EPERM) {
			ioctx_reply(x, err);
			return 0;
		}
		x->direct = false; /* out of our reach: let the kernel copy */
	}
	if (x->in_len >= in_len && x->out_len >= out_max) {
		if (in_len)
			memcpy(buf, x->in_buf, in_len);
		return 1;
	}
	ioctx_retry(x, in_len ? &in : NULL, in_len ? 1 : 0, out_max ? &out : NULL, out_max ? 1 : 0);
	return 0;
}

/*
 * sg answers ENODEV once the device is going away; a bsg node knows none
 * of these ioctls (bsg_ioctl()): ENOTTY, or EINVAL for SEND_COMMAND.
 * 0: go on.
 */
static int refused(struct ioctx *x, unsigned cmd)
{
	const struct bsgdev *d = x->o->d;

	if (d->target->info.kind == TARGET_BSG)
		return cmd == SCSI_IOCTL_SEND_COMMAND ? -EINVAL : -ENOTTY;
	if (atomic_load(&d->target_gone))
		return -ENODEV;
	return 0;
}

/* sg_ioctl_common()'s default: what sg does not know, a read-only file may not. */
static int refused_read_only(struct ioctx *x)
{
	const struct bsgdev *d = x->o->d;

	if (d->target->info.kind == TARGET_BSG)
		return -ENOTTY;
	if ((x->o->open_flags & O_ACCMODE) != O_RDWR)
		return -EPERM;
	return 0;
}

static void forward(struct ioctx *x, unsigned cmd, size_t buf_len, const void *arg, size_t len)
{
	struct mid_call *c = call_new(x, cmd, buf_len);

	if (!c) {
		ioctx_reply(x, -ENOMEM);
		return;
	}
	c->has_arg = arg != NULL;
	if (arg)
		memcpy(c->buf, arg, len);
	queue_mid_ioctl(c);
}

/*
 * The kernel asks capable(CAP_SYS_ADMIN) and capable(CAP_SYS_RAWIO) of the
 * calling thread, before it reads the argument: so does this, on the
 * thread blocked in this call.  The daemon itself keeps both for it.
 */
void midlayer_reset(struct ioctx *x)
{
	int err = refused(x, SG_SCSI_RESET);
	int val;

	if (!err && !(x->tid > 0 && ident_capable(x->tid, CREDS_CAP_SYS_ADMIN) &&
		      ident_capable(x->tid, CREDS_CAP_SYS_RAWIO)))
		err = -EACCES;
	if (err) {
		ioctx_reply(x, err);
		return;
	}
	if (!fetch(x, &val, sizeof(val), 0, 0))
		return;
	forward(x, SG_SCSI_RESET, sizeof(val), &val, sizeof(val));
}

/* COMMAND_SIZE(): the CDB's length from its opcode's group */
static unsigned cdb_size(uint8_t opcode)
{
	static const uint8_t size[8] = { 6, 10, 10, 12, 16, 12, 10, 10 };

	return size[(opcode >> 5) & 7];
}

static size_t max(size_t a, size_t b)
{
	return a > b ? a : b;
}

void midlayer_send_command(struct ioctx *x)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), head[2], outlen;
	int err = refused(x, SCSI_IOCTL_SEND_COMMAND);
	unsigned char first[SIC_HEAD + 1];
	struct mid_call *c;
	size_t in, out;

	if (!err && !x->arg)
		err = -EINVAL;
	if (err) {
		ioctx_reply(x, err);
		return;
	}
	if (!fetch(x, head, sizeof(head), 0, 0))
		return;
	if (head[0] > page || head[1] > page) {
		ioctx_reply(x, -EINVAL); /* a page each way at most */
		return;
	}
	if (!fetch(x, first, sizeof(first), 0, 0))
		return;
	in = SIC_HEAD + cdb_size(first[SIC_HEAD]) + head[0];
	outlen = head[1]; /* the buffer is sized for it: the target must get no more */
	out = outlen > SIC_SENSE_MAX ? outlen : SIC_SENSE_MAX;
	c = call_new(x, SCSI_IOCTL_SEND_COMMAND, max(in, SIC_HEAD + out));
	if (!c) {
		ioctx_reply(x, -ENOMEM);
		return;
	}
	if (!fetch(x, c->buf, in, SIC_HEAD, out)) {
		call_free(c);
		return;
	}
	c->has_arg = true;
	c->direct = x->direct;
	memcpy(head, c->buf, sizeof(head)); /* what the target gets: this round's */
	err = cmd_allowed(x->o, x->tid, c->buf + SIC_HEAD, cdb_size(c->buf[SIC_HEAD]),
			  CMD_VIA_SCSI_IOCTL);
	if (err || in != SIC_HEAD + cdb_size(c->buf[SIC_HEAD]) + head[0] || head[0] > page ||
	    head[1] != outlen) {
		call_free(c);
		ioctx_reply(x, err ? err : -EINVAL); /* changed between rounds */
		return;
	}
	c->out_off = SIC_HEAD;
	queue_mid_ioctl(c);
}

void midlayer_probe_host(struct ioctx *x)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), asked, len;
	int err = refused(x, MIDLAYER_PROBE_HOST);
	struct mid_call *c;

	if (err) {
		ioctx_reply(x, err);
		return;
	}
	if (!x->arg) {
		forward(x, MIDLAYER_PROBE_HOST, 0, NULL, 0); /* 1, and nothing copied */
		return;
	}
	if (!fetch(x, &asked, sizeof(asked), 0, 0))
		return;
	len = asked < page ? asked : page; /* past a page: no host says that much */
	if (!fetch(x, &asked, sizeof(asked), 0, len))
		return;
	len = asked < page ? asked : page; /* read again on the direct path */
	c = call_new(x, MIDLAYER_PROBE_HOST, max(len, sizeof(len)));
	if (!c) {
		ioctx_reply(x, -ENOMEM);
		return;
	}
	c->direct = x->direct;
	c->has_arg = true;
	c->user_len = len;
	memcpy(c->buf, &len, sizeof(len));
	queue_mid_ioctl(c);
}

void midlayer_get_pci(struct ioctx *x)
{
	int err = refused_read_only(x);
	struct mid_call *c;

	if (!err)
		err = refused(x, MIDLAYER_GET_PCI);
	if (err) {
		ioctx_reply(x, err);
		return;
	}
	if (!fetch(x, NULL, 0, 0, PCI_NAME_MAX))
		return;
	c = call_new(x, MIDLAYER_GET_PCI, PCI_NAME_MAX);
	if (!c) {
		ioctx_reply(x, -ENOMEM);
		return;
	}
	c->direct = x->direct;
	c->has_arg = true;
	queue_mid_ioctl(c);
}

void midlayer_no_arg(struct ioctx *x, unsigned cmd)
{
	int err = refused_read_only(x);

	if (err) {
		ioctx_reply(x, err);
		return;
	}
	forward(x, cmd, 0, NULL, 0);
}
