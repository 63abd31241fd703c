// SPDX-License-Identifier: GPL-2.0-only
/*
 * nullcuse: a CUSE node with no SCSI target behind it, which answers every
 * command at once.  make bench runs it next to cuse_bsg to show the floor
 * any CUSE design pays: the FUSE round trips, plus the least the daemon's
 * direct-copy path must do per command.  Data movement is not part of that
 * floor: no data is copied, a READ's buffer is left as it was.  The one
 * exception is READ CAPACITY, answered for a 16 MiB disk of 512-byte blocks
 * so that fio's sg engine can size the device.
 *
 *   nullcuse [-f] [--name NAME] [--creds | --gate | --witness]
 *                                          serve /dev/NAME (default bsg/null-cuse)
 *
 * --creds adds the one check the security model puts on every read() and
 * write(): the caller's credentials, from /proc/TID/status through the
 * daemon's own code (ident.c), against the opener's; EPERM if they differ.
 * make bench runs it beside the plain one, to show what that rule costs
 * apart from the daemon's other work.  --gate makes the same check in the
 * kernel instead, with the daemon's own credential gate (gate.c): loaded,
 * armed for the node before its first open, proven live, and nothing
 * checked here.  --witness makes it at CUSE's entry points (the gate's
 * witness), whose verdict each read() and write() reads here, as cuse_bsg
 * does; a call it left none for is checked from /proc.
 *
 * It always stays in the foreground; -f is taken for likeness with cuse_bsg.
 *
 * SG_IO, v3 ('S') or v4 ('Q'): one FUSE request.  The header and the CDB are
 * read from the caller with process_vm_readv, the status fields written back
 * with process_vm_writev: good status, nothing left over, no sense.
 * write() of a v3 header queues a copy, status zeroed, on its open file (16
 * at most, then EDOM, as sg); read() returns the oldest, waiting for one
 * unless O_NONBLOCK; poll() gives POLLIN while one is queued, POLLOUT always.
 * SG_GET_VERSION_NUM, SG_{GET,SET}_TIMEOUT and SG_{GET,SET}_RESERVED_SIZE
 * answer as sg's do.  SIGUSR1 prints the request counters to stderr.
 *
 * The sg v4 ioctls, as cuse_bsg takes them, with what cuse_bsg must do per
 * call and command and no more: SG_IOSUBMIT of one v4 header or an IMMED
 * control object (the array and each CDB read from the caller, the caller's
 * process looked up as cuse_bsg does, through ident.c); each completes at
 * once into a queue of 256 headers of the file; SG_IORECEIVE of one (EAGAIN
 * if none) or of an array (what is there, ENODATA if nothing), headers and
 * control object written back.  make bench's "null, ioctls" column.
 *
 * Threading: libfuse's multi-threaded loop runs the callbacks.  An open
 * file's queue, parked reads and poll handle are under its lock; nothing
 * calls into libfuse while holding it.  Needs CAP_SYS_PTRACE over callers.
 */
#include <fuse3/cuse_lowlevel.h>

#include "gate.h"
#include "ident.h"
#include "verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/bsg.h>
#include <poll.h>
#include <pthread.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#define QUEUE_MAX		16 /* SG_MAX_QUEUE */
#define CDB_MIN			6
#define CDB_MAX			16
#define BLOCK			512u
#define BLOCKS			((16u << 20) / BLOCK) /* READ CAPACITY's disk: 16 MiB */
#define SG_VERSION		30536		      /* sg 3.5.36, as cuse_bsg says */
#define USER_HZ			100
#define SG_RESERVED		32768 /* SG_DEF_RESERVED_SIZE */
#define FUSE_THREADS		16    /* as cuse_bsg */
#define V4_MAX			256   /* the ioctls' bound, as cuse_bsg's */
#define SG_IOSUBMIT		_IOWR(0x22, 0x41, struct sg_io_v4)
#define SG_IORECEIVE		_IOWR(0x22, 0x42, struct sg_io_v4)
#define SG_IOABORT		_IOW(0x22, 0x43, struct sg_io_v4)
#define SGV4_FLAG_IMMED		0x400
#define SGV4_FLAG_MULTIPLE_REQS 0x40000

enum { NC_OPEN, NC_RELEASE, NC_READ, NC_WRITE, NC_IOCTL, NC_POLL, NC_COUNT };

struct server {
	atomic_ulong stats[NC_COUNT];
	atomic_bool stopping;
	bool creds;	   /* --creds */
	bool witness;	   /* --witness */
	struct gate *gate; /* --gate */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed; /* protected by lock: the gate checks the node's files */
	char name[128];
};

/* A blocking read() waiting for a completion. */
struct parked_read {
	struct parked_read *next;
	fuse_req_t req;
};

struct nfile {
	pthread_mutex_t lock;
	struct sg_io_hdr done[QUEUE_MAX]; /* protected by lock: a ring, oldest at first */
	unsigned first, count;		  /* protected by lock */
	struct parked_read *readers;	  /* protected by lock: oldest first */
	struct sg_io_v4 v4[V4_MAX];	  /* protected by lock: the ioctls' ring */
	unsigned v4_first, v4_count;	  /* protected by lock */
	struct fuse_pollhandle *ph;	  /* protected by lock */
	atomic_int timeout;		  /* SG_SET_TIMEOUT's, in USER_HZ */
	atomic_int reserved;
	struct ident ident; /* --creds: the opener's */
	pthread_mutex_t status_lock;
	struct ident_cache status; /* protected by status_lock: the last caller's */
};

/* One ioctl call: who made it and where its argument lives. */
struct call {
	fuse_req_t req;
	struct nfile *f;
	pid_t pid;
	uint64_t arg;
};

static void count(fuse_req_t req, int which)
{
	struct server *s = fuse_req_userdata(req);

	atomic_fetch_add(&s->stats[which], 1);
}

static struct nfile *fi_file(const struct fuse_file_info *fi)
{
	return (struct nfile *)(uintptr_t)fi->fh;
}

/* A short transfer is a fault part-way, as the kernel would report it. */
static int peer_xfer(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	if (pid <= 0)
		return -EPERM; /* a caller outside our pid namespace */
	n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
		  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EPERM ? -EPERM : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int peer_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return peer_xfer(pid, addr, buf, len, false);
}

static int peer_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return peer_xfer(pid, addr, (void *)buf, len, true);
}

static void reply(fuse_req_t req, int result)
{
	if (result < 0)
		fuse_reply_err(req, -result);
	else
		fuse_reply_ioctl(req, result, NULL, 0);
}

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = v >> 8 * (bytes - 1 - i);
}

/* READ CAPACITY (10) or (16): the reply in buf[32] and its length, else 0. */
static size_t capacity_reply(const uint8_t *cdb, uint8_t *buf)
{
	size_t alloc;

	memset(buf, 0, 32);
	if (cdb[0] == 0x25) {
		put_be(buf, BLOCKS - 1, 4);
		put_be(buf + 4, BLOCK, 4);
		return 8;
	}
	if (cdb[0] != 0x9e || (cdb[1] & 0x1f) != 0x10)
		return 0;
	put_be(buf, BLOCKS - 1, 8);
	put_be(buf + 8, BLOCK, 4);
	alloc = (size_t)cdb[10] << 24 | cdb[11] << 16 | cdb[12] << 8 | cdb[13];
	return alloc < 32 ? alloc : 32;
}

/* The data-in of a flat transfer: READ CAPACITY's reply, nothing for the rest. */
static int data_in(pid_t pid, const uint8_t *cdb, uint64_t addr, uint32_t len, uint32_t *ret_resid)
{
	uint8_t buf[32];
	size_t n = capacity_reply(cdb, buf);
	int err;

	if (!n)
		return 0; /* not moved, and said to be: the floor leaves data out */
	if (n > len)
		n = len;
	err = peer_write(pid, addr, buf, n);
	if (!err)
		*ret_resid = len - n;
	return err;
}

static int sg_io_v3(const struct call *c, struct sg_io_hdr *h)
{
	uint8_t cdb[CDB_MAX] = { 0 };
	uint32_t resid = 0;
	int err;

	if (h->cmd_len < CDB_MIN || h->cmd_len > CDB_MAX)
		return -EINVAL;
	err = peer_read(c->pid, (uintptr_t)h->cmdp, cdb, h->cmd_len);
	if (err)
		return err;
	if (h->dxfer_direction == SG_DXFER_FROM_DEV && !h->iovec_count)
		err = data_in(c->pid, cdb, (uintptr_t)h->dxferp, h->dxfer_len, &resid);
	if (err)
		return err;
	h->status = h->masked_status = h->msg_status = h->sb_len_wr = 0;
	h->host_status = h->driver_status = 0;
	h->resid = resid;
	h->duration = h->info = 0;
	return peer_write(c->pid, c->arg + offsetof(struct sg_io_hdr, status),
			  (char *)h + offsetof(struct sg_io_hdr, status),
			  offsetof(struct sg_io_hdr, info) + sizeof(h->info) -
				  offsetof(struct sg_io_hdr, status));
}

static int sg_io_v4(const struct call *c, struct sg_io_v4 *h)
{
	uint8_t cdb[CDB_MAX] = { 0 };
	uint32_t resid = 0;
	int err;

	if (h->protocol || h->subprotocol)
		return -EINVAL; /* bsg: SCSI commands only */
	if (h->request_len < CDB_MIN || h->request_len > CDB_MAX)
		return -EINVAL;
	err = peer_read(c->pid, h->request, cdb, h->request_len);
	if (err)
		return err;
	if (h->din_xfer_len && !h->din_iovec_count)
		err = data_in(c->pid, cdb, h->din_xferp, h->din_xfer_len, &resid);
	if (err)
		return err;
	h->driver_status = h->transport_status = h->device_status = 0;
	h->retry_delay = h->info = h->duration = h->response_len = 0;
	h->din_resid = resid;
	h->dout_resid = 0;
	return peer_write(c->pid, c->arg + offsetof(struct sg_io_v4, driver_status),
			  (char *)h + offsetof(struct sg_io_v4, driver_status),
			  offsetof(struct sg_io_v4, generated_tag) -
				  offsetof(struct sg_io_v4, driver_status));
}

/* The v3 header first; a 'Q' guard says there is a v4 one, and its rest. */
static void sg_io(const struct call *c)
{
	union {
		struct sg_io_hdr v3;
		struct sg_io_v4 v4;
	} h;
	const size_t v3_len = sizeof(h.v3);
	int err = peer_read(c->pid, c->arg, &h, v3_len);

	if (!err && h.v4.guard == 'Q')
		err = peer_read(c->pid, c->arg + v3_len, (char *)&h + v3_len,
				sizeof(h.v4) - v3_len);
	if (!err && h.v4.guard == 'Q')
		err = sg_io_v4(c, &h.v4);
	else if (!err)
		err = h.v3.interface_id == 'S' ? sg_io_v3(c, &h.v3) : -ENOSYS; /* sg's */
	reply(c->req, err);
}

/* One submitted header: its CDB read, completed at once into the file's ring. */
static int v4_take(const struct call *c, struct sg_io_v4 *h, uint64_t cdb_addr)
{
	uint8_t cdb[CDB_MAX];
	int err;

	if (h->guard != 'Q' || h->protocol || h->subprotocol || h->request_len < CDB_MIN ||
	    h->request_len > CDB_MAX)
		return -EINVAL;
	err = peer_read(c->pid, cdb_addr ? cdb_addr : h->request, cdb, h->request_len);
	if (err)
		return err;
	h->driver_status = h->transport_status = h->device_status = 0;
	h->info = h->duration = h->response_len = 0;
	h->din_resid = h->dout_resid = 0;
	pthread_mutex_lock(&c->f->lock);
	if (c->f->v4_count == V4_MAX)
		err = -EAGAIN;
	else
		c->f->v4[(c->f->v4_first + c->f->v4_count++) % V4_MAX] = *h;
	pthread_mutex_unlock(&c->f->lock);
	return err;
}

/* The caller's process, as cuse_bsg finds it for every ioctl call. */
static int caller_process(const struct call *c)
{
	pid_t tgid;
	int err;

	pthread_mutex_lock(&c->f->status_lock);
	err = ident_tgid(&c->f->status, c->pid, &tgid);
	pthread_mutex_unlock(&c->f->status_lock);
	return err;
}

static void v4_submit(const struct call *c)
{
	struct sg_io_v4 cop, *hs = NULL;
	unsigned n = 0, k = 0, room = 0;
	int err = caller_process(c);

	if (!err)
		err = peer_read(c->pid, c->arg, &cop, sizeof(cop));
	if (!err && !(cop.flags & SGV4_FLAG_MULTIPLE_REQS)) {
		reply(c->req, v4_take(c, &cop, 0));
		return;
	}
	n = err ? 0 : cop.dout_xfer_len / sizeof(cop);
	if (!err && (!(cop.flags & SGV4_FLAG_IMMED) || n > V4_MAX))
		err = -EINVAL;
	if (!err && n && !(hs = calloc(n, sizeof(*hs))))
		err = -ENOMEM;
	if (!err && n)
		err = peer_read(c->pid, cop.dout_xferp, hs, n * sizeof(*hs));
	room = !err && cop.request_len && n ? cop.request_len / n : 0;
	for (k = 0; !err && k < n; k++)
		if (v4_take(c, &hs[k], room ? cop.request + (uint64_t)k * room : 0))
			break;
	free(hs);
	if (!err) {
		cop.info = k;
		cop.dout_resid = (int32_t)(n - k);
		err = peer_write(c->pid, c->arg, &cop, sizeof(cop));
	}
	reply(c->req, err);
}

static void v4_receive(const struct call *c)
{
	struct sg_io_v4 cop, out[V4_MAX];
	unsigned n = 0, room;
	int err = caller_process(c);

	if (!err)
		err = peer_read(c->pid, c->arg, &cop, sizeof(cop));
	if (err) {
		reply(c->req, err);
		return;
	}
	room = cop.flags & SGV4_FLAG_MULTIPLE_REQS ? cop.din_xfer_len / sizeof(cop) : 1;
	room = room < V4_MAX ? room : V4_MAX;
	pthread_mutex_lock(&c->f->lock);
	for (; n < room && c->f->v4_count; n++, c->f->v4_count--) {
		out[n] = c->f->v4[c->f->v4_first];
		c->f->v4_first = (c->f->v4_first + 1) % V4_MAX;
	}
	pthread_mutex_unlock(&c->f->lock);
	if (!(cop.flags & SGV4_FLAG_MULTIPLE_REQS)) {
		reply(c->req, n ? peer_write(c->pid, c->arg, out, sizeof(out[0])) : -EAGAIN);
		return;
	}
	if (!n) {
		reply(c->req, -ENODATA); /* nothing outstanding: every command is done at once */
		return;
	}
	err = peer_write(c->pid, cop.din_xferp, out, n * sizeof(out[0]));
	cop.info = n;
	cop.din_resid = (int32_t)(room - n);
	reply(c->req, err ? err : peer_write(c->pid, c->arg, &cop, sizeof(cop)));
}

static void put_int(const struct call *c, int val)
{
	reply(c->req, peer_write(c->pid, c->arg, &val, sizeof(val)));
}

/* SG_SET_TIMEOUT refuses a negative value with EIO, SG_SET_RESERVED_SIZE with EINVAL. */
static void set_int(const struct call *c, atomic_int *where, int negative_errno)
{
	int val, err = peer_read(c->pid, c->arg, &val, sizeof(val));

	if (!err && val < 0)
		err = -negative_errno;
	if (!err)
		atomic_store(where, val);
	reply(c->req, err);
}

static int check_creds(fuse_req_t req, struct nfile *f);

static void cb_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	const struct call c = {
		.req = req,
		.f = fi_file(fi),
		.pid = fuse_req_ctx(req)->pid,
		.arg = (uintptr_t)arg,
	};

	(void)in_buf, (void)in_bufsz, (void)out_bufsz; /* unrestricted: we copy ourselves */
	count(req, NC_IOCTL);
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOTTY); /* 64-bit callers only, as cuse_bsg */
		return;
	}
	/* the calls that hand over commands: the opener's context only, as cuse_bsg */
	if (((unsigned)cmd == SG_IOSUBMIT || (unsigned)cmd == SG_IORECEIVE ||
	     (unsigned)cmd == SG_IOABORT) &&
	    check_creds(req, c.f)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	switch ((unsigned)cmd) {
	case SG_IO:
		sg_io(&c);
		break;
	case SG_IOSUBMIT:
		v4_submit(&c);
		break;
	case SG_IORECEIVE:
		v4_receive(&c);
		break;
	case SG_GET_VERSION_NUM:
		put_int(&c, SG_VERSION);
		break;
	case SG_GET_TIMEOUT: /* sg returns it as the ioctl's value */
		reply(req, atomic_load(&c.f->timeout));
		break;
	case SG_SET_TIMEOUT:
		set_int(&c, &c.f->timeout, EIO);
		break;
	case SG_GET_RESERVED_SIZE:
		put_int(&c, atomic_load(&c.f->reserved));
		break;
	case SG_SET_RESERVED_SIZE:
		set_int(&c, &c.f->reserved, EINVAL);
		break;
	default:
		fuse_reply_err(req, ENOTTY);
		break;
	}
}

/* libfuse, with the request's lock held: a parked read was signalled. */
static void read_interrupted(fuse_req_t req, void *data)
{
	struct nfile *f = data;
	struct parked_read **pp, *p = NULL;

	pthread_mutex_lock(&f->lock);
	for (pp = &f->readers; *pp; pp = &(*pp)->next) {
		if ((*pp)->req == req) {
			p = *pp;
			*pp = p->next;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (!p)
		return; /* being answered already */
	fuse_reply_err(req, EINTR);
	free(p);
}

/* Caller holds f->lock and saw f->count. */
static void take_done(struct nfile *f, struct sg_io_hdr *h)
{
	*h = f->done[f->first];
	f->first = (f->first + 1) % QUEUE_MAX;
	f->count--;
}

/*
 * Wait for a completion.  The interrupt callback is set first, so that a
 * signal at any point is seen, either here or by the callback; the queue is
 * looked at again under the lock that a write takes to queue.
 */
static void park_read(struct nfile *f, fuse_req_t req)
{
	struct parked_read *p = calloc(1, sizeof(*p)), **pp;
	struct sg_io_hdr h;
	int res = 0; /* 0 parked, 1 got one, -EINTR */

	if (!p) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	p->req = req;
	fuse_req_interrupt_func(req, read_interrupted, f);
	pthread_mutex_lock(&f->lock);
	if (fuse_req_interrupted(req)) {
		res = -EINTR;
	} else if (f->count) {
		take_done(f, &h);
		res = 1;
	} else {
		for (pp = &f->readers; *pp; pp = &(*pp)->next)
			;
		*pp = p;
	}
	pthread_mutex_unlock(&f->lock);
	if (!res)
		return;
	fuse_req_interrupt_func(req, NULL, NULL); /* wait out a running callback */
	if (res < 0)
		fuse_reply_err(req, -res);
	else
		fuse_reply_buf(req, (const char *)&h, sizeof(h));
	free(p);
}

/* --creds: 0 if the caller's credentials are the opener's, as cuse_bsg checks them. */
static int check_creds(fuse_req_t req, struct nfile *f)
{
	struct server *s = fuse_req_userdata(req);
	const char *why;
	int err;

	if (s->witness) {
		enum verdict v =
			verdicts_read(gate_verdicts(s->gate), fuse_req_ctx(req)->pid, (uintptr_t)f);

		if (v != VERDICT_UNSEEN)
			return v == VERDICT_SAME ? 0 : -EPERM;
	} else if (!s->creds) {
		return 0;
	}
	pthread_mutex_lock(&f->status_lock);
	err = ident_match(&f->status, fuse_req_ctx(req)->pid, &f->ident, false, &why);
	pthread_mutex_unlock(&f->status_lock);
	return err;
}

static void cb_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct nfile *f = fi_file(fi);
	struct sg_io_hdr h;
	bool got = false;

	(void)off;
	count(req, NC_READ);
	if (check_creds(req, f)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (size < sizeof(h)) {
		fuse_reply_err(req, EINVAL); /* v3 headers only */
		return;
	}
	pthread_mutex_lock(&f->lock);
	if (f->count) {
		take_done(f, &h);
		got = true;
	}
	pthread_mutex_unlock(&f->lock);
	if (got)
		fuse_reply_buf(req, (const char *)&h, sizeof(h));
	else if (fi->flags & O_NONBLOCK) /* the file's flags now, fcntl() included */
		fuse_reply_err(req, EAGAIN);
	else
		park_read(f, req);
}

/* Queue a completion, or hand it to the oldest parked read; then wake pollers. */
static int complete(struct nfile *f, const struct sg_io_hdr *h)
{
	struct parked_read *p = NULL;
	struct fuse_pollhandle *ph = NULL;

	pthread_mutex_lock(&f->lock);
	if (f->count == QUEUE_MAX) {
		pthread_mutex_unlock(&f->lock);
		return -EDOM; /* sg: no request slot left */
	}
	p = f->readers;
	if (p) {
		f->readers = p->next;
	} else {
		f->done[(f->first + f->count++) % QUEUE_MAX] = *h;
		ph = f->ph;
		f->ph = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	if (p) {
		fuse_req_interrupt_func(p->req, NULL, NULL);
		fuse_reply_buf(p->req, (const char *)h, sizeof(*h));
		free(p);
	}
	if (ph) {
		fuse_lowlevel_notify_poll(ph);
		fuse_pollhandle_destroy(ph);
	}
	return 0;
}

static void cb_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	uint8_t cdb[CDB_MAX];
	struct sg_io_hdr h;
	int err;

	(void)off;
	count(req, NC_WRITE);
	if (check_creds(req, fi_file(fi))) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (size < sizeof(h)) {
		fuse_reply_err(req, EINVAL); /* one v3 header a call */
		return;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.interface_id != 'S')
		err = -ENOSYS;
	else if (h.cmd_len < CDB_MIN || h.cmd_len > CDB_MAX)
		err = -EINVAL;
	else /* the CDB, which any responder must read */
		err = peer_read(fuse_req_ctx(req)->pid, (uintptr_t)h.cmdp, cdb, h.cmd_len);
	if (!err) {
		h.status = h.masked_status = h.msg_status = h.sb_len_wr = 0;
		h.host_status = h.driver_status = 0;
		h.resid = 0;
		h.duration = h.info = 0;
		err = complete(fi_file(fi), &h);
	}
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size);
}

static void cb_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct nfile *f = fi_file(fi);
	struct fuse_pollhandle *old = NULL;
	unsigned revents = POLLOUT | POLLWRNORM;

	count(req, NC_POLL);
	pthread_mutex_lock(&f->lock);
	if (ph) {
		old = f->ph;
		f->ph = ph; /* one notification wakes every poller of the file */
	}
	if (f->count)
		revents |= POLLIN | POLLRDNORM;
	pthread_mutex_unlock(&f->lock);
	if (old)
		fuse_pollhandle_destroy(old);
	fuse_reply_poll(req, revents);
}

static void file_free(struct nfile *f)
{
	if (f->ph)
		fuse_pollhandle_destroy(f->ph);
	ident_cache_fini(&f->status);
	ident_fini(&f->ident);
	pthread_mutex_destroy(&f->status_lock);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* --gate: no file is answered before the gate checks the node's files. */
static void wait_armed(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->gate && !s->armed)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void cb_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct nfile *f = calloc(1, sizeof(*f));

	wait_armed(fuse_req_userdata(req));
	count(req, NC_OPEN);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->status_lock, NULL);
	ident_cache_init(&f->status);
	f->ident.pidfd = -1;
	/* as cuse_bsg: an opener it cannot read matches no caller */
	if (((struct server *)fuse_req_userdata(req))->creds ||
	    ((struct server *)fuse_req_userdata(req))->witness)
		ident_read(&f->status, fuse_req_ctx(req)->pid, &f->ident);
	atomic_init(&f->timeout, 60 * USER_HZ);
	atomic_init(&f->reserved, SG_RESERVED);
	fi->fh = (uintptr_t)f;
	fi->nonseekable = 1;
	fi->direct_io = 1;
	if (fuse_reply_open(req, fi) < 0)
		file_free(f);
}

/* The last reference gone: no read of the file can be parked. */
static void cb_release(fuse_req_t req, struct fuse_file_info *fi)
{
	count(req, NC_RELEASE);
	file_free(fi_file(fi));
	fuse_reply_err(req, 0);
}

/* --gate: arm the node's number, then prove the gate live; exit if either fails. */
static void arm_gate(struct server *s)
{
	char path[160], why[256] = "";
	struct stat st;
	int fd, err = -ENODEV;

	snprintf(path, sizeof(path), "/dev/%s", s->name);
	for (int i = 0; i < 500 && err; i++) /* devtmpfs makes it asynchronously */
		if (stat(path, &st) == 0 && S_ISCHR(st.st_mode))
			err = 0;
		else
			usleep(10000);
	if (!err)
		err = gate_arm(s->gate, st.st_rdev, s->name);
	pthread_mutex_lock(&s->lock);
	s->armed = !err;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	fd = err ? -1 : open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		err = gate_prove(s->gate, fd, st.st_rdev, &s->stats[NC_READ], why, sizeof(why));
		close(fd);
	}
	if (err || fd < 0) {
		fprintf(stderr, "nullcuse: the gate for %s: %s\n", path,
			why[0] ? why : strerror(err ? -err : errno));
		exit(1);
	}
}

static void cb_init_done(void *userdata)
{
	struct server *s = userdata;

	if (s->gate)
		arm_gate(s);
	fprintf(stderr, "nullcuse: serving /dev/%s%s%s\n", s->name,
		s->gate ? "; credential check: " : "", s->gate ? gate_describe_long(s->gate) : "");
}

static const struct cuse_lowlevel_ops ops = {
	.init_done = cb_init_done,
	.open = cb_open,
	.release = cb_release,
	.read = cb_read,
	.write = cb_write,
	.ioctl = cb_ioctl,
	.poll = cb_poll,
};

/* SIGUSR1 is blocked in every thread; this one takes it and prints counters. */
static void *stats_main(void *arg)
{
	struct server *s = arg;
	unsigned long v[NC_COUNT];
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) == 0 && !atomic_load(&s->stopping)) {
		for (int i = 0; i < NC_COUNT; i++)
			v[i] = atomic_load(&s->stats[i]);
		fprintf(stderr,
			"nullcuse: stats: open=%lu release=%lu read=%lu write=%lu ioctl=%lu "
			"poll=%lu\n",
			v[NC_OPEN], v[NC_RELEASE], v[NC_READ], v[NC_WRITE], v[NC_IOCTL],
			v[NC_POLL]);
	}
	return NULL;
}

static int serve(struct server *s)
{
	char devname[160];
	const char *dev_info[] = { devname };
	char *fuse_argv[] = { "nullcuse", "-f", NULL };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	int mt, ret;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", s->name);
	se = cuse_lowlevel_setup(2, fuse_argv, &ci, &ops, &mt, s);
	if (!se)
		return -EIO;
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		cuse_lowlevel_teardown(se);
		return -ENOMEM;
	}
	fuse_loop_cfg_set_max_threads(cfg, FUSE_THREADS);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	cuse_lowlevel_teardown(se);
	return ret < 0 ? -EIO : 0;
}

/* the ioctls the LSM gate refuses for us: those cuse_bsg's table marks */
static const unsigned owner_ioctls[] = { SG_IOSUBMIT, SG_IORECEIVE, SG_IOABORT };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' }, { "foreground", no_argument, NULL, 'f' },
		{ "creds", no_argument, NULL, 'c' },	  { "gate", no_argument, NULL, 'g' },
		{ "witness", no_argument, NULL, 'w' },	  { NULL, 0, NULL, 0 },
	};
	static struct server s = { .name = "bsg/null-cuse",
				   .lock = PTHREAD_MUTEX_INITIALIZER,
				   .cond = PTHREAD_COND_INITIALIZER };
	bool gate = false;
	char why[256];
	pthread_t stats_thread;
	sigset_t set;
	int c, ret;

	while ((c = getopt_long(argc, argv, "n:fcgw", longopts, NULL)) != -1) {
		if (c == 'f')
			continue;
		if (c == 'g' || c == 'w') {
			gate = true;
			s.witness = c == 'w';
			continue;
		}
		if (c == 'c') {
			s.creds = true;
			continue;
		}
		if (c == 'n' && *optarg && strlen(optarg) < sizeof(s.name)) {
			snprintf(s.name, sizeof(s.name), "%s", optarg);
			continue;
		}
		fprintf(stderr,
			"usage: nullcuse [-f] [--name NAME] [--creds | --gate | --witness]\n");
		return 2;
	}
	if (optind != argc || (gate && s.creds)) {
		fprintf(stderr,
			"usage: nullcuse [-f] [--name NAME] [--creds | --gate | --witness]\n");
		return 2;
	}
	if (gate && gate_new(s.witness ? GATE_WITNESS : GATE_KERNEL, owner_ioctls,
			     sizeof(owner_ioctls) / sizeof(owner_ioctls[0]), &s.gate, why,
			     sizeof(why)) < 0) {
		fprintf(stderr, "nullcuse: %s\n", why);
		return 1;
	}
	/* libfuse handles only signals left at their default */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&stats_thread, NULL, stats_main, &s);
	ret = serve(&s);
	atomic_store(&s.stopping, true);
	pthread_kill(stats_thread, SIGUSR1);
	pthread_join(stats_thread, NULL);
	return ret < 0 ? 1 : 0;
}
