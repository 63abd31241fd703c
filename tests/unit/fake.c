// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fake libfuse reply layer and the fake target.  Locking follows libfuse:
 * each request has its own lock, held while an interrupt callback runs; the
 * callback and reply bookkeeping sit under the session lock, which a reply
 * takes alone, so an interrupt's callback may reply (not one that
 * fuse_req_interrupt_func() calls: that holds no reference on the
 * request).  fuse_req_interrupted() and the poll
 * calls take the session lock only, as libfuse's do.  Replies arrive from
 * pool workers.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake.h"
#include "ioctl.h"
#include "ioctx.h"

struct fuse_req {
	struct fake_session *s;
	struct fuse_req *next_req;  /* the session's list, for freeing */
	pthread_mutex_t lock;	    /* libfuse's req->lock */
	fuse_interrupt_func_t func; /* protected by s->lock */
	void *data;		    /* protected by s->lock */
	bool interrupted;	    /* protected by s->lock */
	unsigned replies;	    /* protected by s->lock */
	struct fake_reply *first;   /* protected by s->lock */
	struct fuse_ctx ctx;	    /* set by the test before the call */
	void (*hook)(void *);	    /* protected by s->lock: fake_req_on_register() */
	void *hook_arg;		    /* protected by s->lock */
	void (*on_reply)(void *);   /* protected by s->lock: fake_req_on_reply() */
	void *on_reply_arg;	    /* protected by s->lock */
};

struct fuse_pollhandle {
	struct fake_session *s;
};

struct session_reqs {
	struct fake_session s;
	pthread_mutex_t reqs_lock;
	struct fuse_req *reqs; /* protected by reqs_lock */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "fake: out of memory\n");
		abort();
	}
	return p;
}

struct fake_session *fake_session_new(void)
{
	struct session_reqs *sr = xcalloc(1, sizeof(*sr));
	pthread_condattr_t attr;

	pthread_mutex_init(&sr->s.lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sr->s.cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&sr->reqs_lock, NULL);
	return &sr->s;
}

void fake_session_free(struct fake_session *s)
{
	struct session_reqs *sr = (struct session_reqs *)s;
	struct fuse_req *req, *next;

	if (!s)
		return;
	for (unsigned i = 0; i < s->n_replies; i++) {
		free(s->replies[i]->data);
		free(s->replies[i]);
	}
	free(s->replies);
	for (req = sr->reqs; req; req = next) {
		next = req->next_req;
		pthread_mutex_destroy(&req->lock);
		free(req);
	}
	pthread_mutex_destroy(&sr->reqs_lock);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(sr);
}

fuse_req_t fake_req_new(struct fake_session *s)
{
	struct session_reqs *sr = (struct session_reqs *)s;
	struct fuse_req *req = xcalloc(1, sizeof(*req));

	req->s = s;
	req->ctx.pid = gettid();
	req->ctx.uid = getuid();
	req->ctx.gid = getgid();
	pthread_mutex_init(&req->lock, NULL);
	pthread_mutex_lock(&sr->reqs_lock);
	req->next_req = sr->reqs;
	sr->reqs = req;
	pthread_mutex_unlock(&sr->reqs_lock);
	return req;
}

unsigned fake_req_replies(fuse_req_t req)
{
	return fake_locked(&req->s->lock, &req->replies);
}

struct fake_reply *fake_req_wait(fuse_req_t req)
{
	struct fake_session *s = req->s;
	struct timespec deadline;
	struct fake_reply *r;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += FAKE_WAIT_SECONDS;
	pthread_mutex_lock(&s->lock);
	while (!req->first && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&s->cond, &s->lock, &deadline);
	r = req->first;
	pthread_mutex_unlock(&s->lock);
	return r;
}

struct fuse_ctx *fake_req_ctx(fuse_req_t req)
{
	return &req->ctx;
}

const struct fuse_ctx *fuse_req_ctx(fuse_req_t req)
{
	return &req->ctx;
}

void fake_req_on_register(fuse_req_t req, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&req->s->lock);
	req->hook = fn;
	req->hook_arg = arg;
	pthread_mutex_unlock(&req->s->lock);
}

void fake_req_on_reply(fuse_req_t req, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&req->s->lock);
	req->on_reply = fn;
	req->on_reply_arg = arg;
	pthread_mutex_unlock(&req->s->lock);
}

int fuse_req_interrupted(fuse_req_t req)
{
	int ret;

	pthread_mutex_lock(&req->s->lock);
	ret = req->interrupted;
	pthread_mutex_unlock(&req->s->lock);
	return ret;
}

struct fake_reply *fake_wait_reply(struct fake_session *s)
{
	struct fake_reply *r = NULL;
	struct timespec deadline;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += FAKE_WAIT_SECONDS;
	pthread_mutex_lock(&s->lock);
	while (s->next >= s->n_replies && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&s->cond, &s->lock, &deadline);
	if (s->next < s->n_replies)
		r = s->replies[s->next++];
	pthread_mutex_unlock(&s->lock);
	return r;
}

unsigned fake_reply_count(struct fake_session *s)
{
	return fake_locked(&s->lock, &s->n_replies);
}

unsigned fake_misuse_count(struct fake_session *s)
{
	return fake_locked(&s->lock, &s->misuse);
}

static struct fake_reply *reply_new(fuse_req_t req, enum fake_kind kind)
{
	struct fake_reply *r = xcalloc(1, sizeof(*r));

	r->kind = kind;
	r->req = req;
	return r;
}

/* Log r; like fuse_free_req(), forget the request's interrupt callback. */
static int record(struct fake_reply *r)
{
	struct fake_session *s = r->req->s;
	void (*fn)(void *);
	void *arg;

	pthread_mutex_lock(&s->lock);
	fn = r->req->on_reply;
	arg = r->req->on_reply_arg;
	r->req->on_reply = NULL;
	pthread_mutex_unlock(&s->lock);
	if (fn)
		fn(arg);
	pthread_mutex_lock(&s->lock);
	if (s->n_replies == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 64;
		struct fake_reply **v = realloc(s->replies, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "fake: out of memory\n");
			abort();
		}
		s->replies = v;
		s->cap = cap;
	}
	if (r->req->replies)
		s->misuse++; /* libfuse has freed req by now */
	r->req->func = NULL;
	r->req->data = NULL;
	if (!r->req->replies++)
		r->req->first = r;
	s->replies[s->n_replies++] = r;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int fuse_reply_err(fuse_req_t req, int err)
{
	struct fake_reply *r = reply_new(req, FAKE_ERR);

	r->err = err;
	return record(r);
}

int fuse_reply_ioctl(fuse_req_t req, int result, const void *buf, size_t size)
{
	struct fake_reply *r = reply_new(req, FAKE_IOCTL);

	r->result = result;
	r->data = xcalloc(1, size);
	if (size)
		memcpy(r->data, buf, size);
	r->len = size;
	return record(r);
}

int fuse_reply_ioctl_iov(fuse_req_t req, int result, const struct iovec *iov, int count)
{
	struct fake_reply *r = reply_new(req, FAKE_IOCTL_IOV);
	size_t total = 0, off = 0;

	if (count < 0 || count > FUSE_IOCTL_MAX_IOV) {
		fprintf(stderr, "fake: fuse_reply_ioctl_iov with %d iovecs\n", count);
		abort();
	}
	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	r->result = result;
	r->data = xcalloc(1, total);
	r->len = total;
	r->n_iov = count;
	for (int i = 0; i < count; i++) {
		r->iov_len[i] = iov[i].iov_len;
		if (iov[i].iov_len)
			memcpy(r->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return record(r);
}

int fuse_reply_ioctl_retry(fuse_req_t req, const struct iovec *in_iov, size_t in_count,
			   const struct iovec *out_iov, size_t out_count)
{
	struct fake_reply *r = reply_new(req, FAKE_RETRY);

	/* counts are kept as given for the test to check; at most the maximum is copied */
	r->n_in = in_count;
	r->n_out = out_count;
	if (in_count)
		memcpy(r->in, in_iov,
		       (in_count < FUSE_IOCTL_MAX_IOV ? in_count : FUSE_IOCTL_MAX_IOV) *
			       sizeof(*in_iov));
	if (out_count)
		memcpy(r->out, out_iov,
		       (out_count < FUSE_IOCTL_MAX_IOV ? out_count : FUSE_IOCTL_MAX_IOV) *
			       sizeof(*out_iov));
	return record(r);
}

int fuse_reply_write(fuse_req_t req, size_t count)
{
	struct fake_reply *r = reply_new(req, FAKE_WRITE);

	r->count = count;
	return record(r);
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	struct fake_reply *r = reply_new(req, FAKE_BUF);

	r->data = xcalloc(1, size);
	if (size)
		memcpy(r->data, buf, size);
	r->len = size;
	return record(r);
}

int fuse_reply_poll(fuse_req_t req, unsigned revents)
{
	struct fake_reply *r = reply_new(req, FAKE_POLL);

	r->revents = revents;
	return record(r);
}

struct fuse_pollhandle *fake_pollhandle_new(struct fake_session *s)
{
	struct fuse_pollhandle *ph = xcalloc(1, sizeof(*ph));

	ph->s = s;
	pthread_mutex_lock(&s->lock);
	s->ph_new++;
	pthread_mutex_unlock(&s->lock);
	return ph;
}

int fuse_lowlevel_notify_poll(struct fuse_pollhandle *ph)
{
	struct fake_session *s = ph->s;

	pthread_mutex_lock(&s->lock);
	s->notifies++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void fuse_pollhandle_destroy(struct fuse_pollhandle *ph)
{
	struct fake_session *s;

	if (!ph)
		return;
	s = ph->s;
	pthread_mutex_lock(&s->lock);
	s->ph_destroyed++;
	pthread_mutex_unlock(&s->lock);
	free(ph);
}

unsigned fake_notify_count(struct fake_session *s)
{
	return fake_locked(&s->lock, &s->notifies);
}

bool fake_wait_notify(struct fake_session *s, unsigned n)
{
	return fake_wait_count(&s->lock, &s->cond, CLOCK_MONOTONIC, &s->notifies, n + 1);
}

unsigned fake_pollhandles_live(struct fake_session *s)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	n = s->ph_new - s->ph_destroyed;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* The test's hook for req, taken: it runs once. */
static void run_hook(fuse_req_t req)
{
	void (*fn)(void *);
	void *arg;

	pthread_mutex_lock(&req->s->lock);
	fn = req->hook;
	arg = req->hook_arg;
	req->hook = NULL;
	pthread_mutex_unlock(&req->s->lock);
	if (fn)
		fn(arg);
}

void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func, void *data)
{
	struct fake_session *s = req->s;
	bool interrupted;
	unsigned replies;

	if (func)
		run_hook(req);
	pthread_mutex_lock(&req->lock);
	pthread_mutex_lock(&s->lock);
	if (req->replies)
		s->misuse++; /* libfuse has freed req by now */
	req->func = func;
	req->data = data;
	interrupted = req->interrupted;
	replies = req->replies;
	pthread_mutex_unlock(&s->lock);
	if (interrupted && func) {
		func(req, data);
		/* libfuse holds no reference on req here, as it does around an
		 * interrupt's callback: a reply freed req, and libfuse lets go
		 * of the lock in it next */
		pthread_mutex_lock(&s->lock);
		if (req->replies != replies)
			s->misuse++;
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&req->lock);
}

void fake_interrupt(fuse_req_t req)
{
	struct fake_session *s = req->s;
	fuse_interrupt_func_t func;
	void *data;

	pthread_mutex_lock(&req->lock);
	pthread_mutex_lock(&s->lock);
	req->interrupted = true;
	func = req->func;
	data = req->data;
	pthread_mutex_unlock(&s->lock);
	if (func)
		func(req, data);
	pthread_mutex_unlock(&req->lock);
}

static bool dir_reads(enum scsi_dir dir)
{
	return dir == SCSI_DIR_FROM_DEV || dir == SCSI_DIR_TO_FROM_DEV;
}

static bool dir_writes(enum scsi_dir dir)
{
	return dir == SCSI_DIR_TO_DEV || dir == SCSI_DIR_TO_FROM_DEV;
}

static void seen_record(struct fake_seen *seen, int chan, const struct scsi_cmd *c)
{
	seen->chan = chan;
	memcpy(seen->cdb, c->cdb, sizeof(seen->cdb));
	seen->cdb_len = c->cdb_len;
	seen->dir = c->dir;
	seen->data_len = c->data_len;
	seen->timeout_ms = c->timeout_ms;
	seen->q_at_head = c->q_at_head;
	seen->data_out_len = 0;
	if (dir_writes(c->dir) && c->data) {
		seen->data_out_len =
			c->data_len < sizeof(seen->data_out) ? c->data_len : sizeof(seen->data_out);
		memcpy(seen->data_out, c->data, seen->data_out_len);
	}
}

static void answer(const struct fake_script *s, struct scsi_cmd *c)
{
	size_t n = s->data_in_len < c->data_len ? s->data_in_len : c->data_len;
	uint8_t *data = c->data;

	if (dir_reads(c->dir) && c->data && n) {
		memcpy(c->data, s->data_in, n);
		for (size_t i = 0; s->xor_tag && i < n; i++)
			data[i] ^= c->cdb[FAKE_TAG_BYTE];
	}
	c->res.status = s->status;
	c->res.host_status = s->host_status;
	c->res.driver_status = s->driver_status;
	c->res.resid = s->resid;
	c->res.sense_len = s->sense_len < SCSI_SENSE_MAX ? s->sense_len : SCSI_SENSE_MAX;
	memcpy(c->res.sense, s->sense, sizeof(c->res.sense));
}

static int fake_chan_open(struct target *bt)
{
	struct fake_target *t = (struct fake_target *)bt;
	int chan;

	pthread_mutex_lock(&t->lock);
	chan = t->next_chan++;
	t->chans_open++;
	pthread_mutex_unlock(&t->lock);
	return chan;
}

static void fake_chan_close(struct target *bt, int chan)
{
	struct fake_target *t = (struct fake_target *)bt;

	(void)chan;
	pthread_mutex_lock(&t->lock);
	t->chans_open--;
	pthread_mutex_unlock(&t->lock);
}

static bool held(const struct fake_target *t, uint8_t tag)
{
	return (t->block && !t->released) || (t->gated && !t->open_tag[tag]);
}

static int fake_sg_io(struct target *bt, int chan, struct scsi_cmd *c)
{
	struct fake_target *t = (struct fake_target *)bt;
	uint8_t tag = c->cdb[FAKE_TAG_BYTE];

	pthread_mutex_lock(&t->lock);
	t->calls++;
	seen_record(&t->seen, chan, c);
	if (t->block || held(t, tag)) {
		t->entered++;
		pthread_cond_broadcast(&t->cond);
		while (held(t, tag))
			pthread_cond_wait(&t->cond, &t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	if (t->script.fail_ret && tag == t->script.fail_tag)
		return t->script.fail_ret;
	if (t->script.ret < 0)
		return t->script.ret;
	answer(&t->script, c);
	return 0;
}

static int fake_ioctl(struct target *bt, unsigned cmd, void *arg, bool nonblock)
{
	struct fake_target *t = (struct fake_target *)bt;
	struct fake_ioctl *f = &t->ioctl;
	int ret;

	pthread_mutex_lock(&t->lock);
	f->calls++;
	f->cmd = cmd;
	f->had_arg = arg != NULL;
	f->nonblock = nonblock;
	if (arg)
		memcpy(f->arg, arg, f->arg_len);
	if (arg && f->ret >= 0)
		memcpy((uint8_t *)arg + f->out_off, f->out, f->out_len);
	ret = f->ret;
	pthread_mutex_unlock(&t->lock);
	return ret;
}

static void fake_free(struct target *bt)
{
	struct fake_target *t = (struct fake_target *)bt;

	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static const struct target_ops fake_ops = {
	.chan_open = fake_chan_open,
	.chan_close = fake_chan_close,
	.sg_io = fake_sg_io,
	.ioctl = fake_ioctl,
	.free = fake_free,
};

struct fake_target *fake_target_new(void)
{
	struct fake_target *t = xcalloc(1, sizeof(*t));
	struct target_info *info = &t->base.info;

	t->base.ops = &fake_ops;
	snprintf(info->path, sizeof(info->path), "/dev/fake0");
	info->kind = TARGET_SG;
	info->host = FAKE_HOST;
	info->channel = FAKE_CHANNEL;
	info->id = FAKE_ID;
	info->lun = FAKE_LUN;
	info->scsi_type = 0;
	info->cmd_per_lun = 3;
	info->queue_depth = 31;
	info->unique_id = FAKE_UNIQUE_ID;
	info->max_sectors_bytes = FAKE_MAX_SECTORS_BYTES;
	info->max_xfer = 1u << 20;
	info->max_xfer_errno = EINVAL;
	info->max_segments = 128;
	snprintf(info->vendor, sizeof(info->vendor), "FAKE");
	snprintf(info->product, sizeof(info->product), "TARGET");
	snprintf(info->revision, sizeof(info->revision), "0001");
	t->next_chan = FAKE_FIRST_CHAN;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	return t;
}

void fake_target_set_block(struct fake_target *t, bool block)
{
	pthread_mutex_lock(&t->lock);
	t->block = block;
	t->released = false;
	pthread_mutex_unlock(&t->lock);
}

bool fake_target_wait_entered(struct fake_target *t, unsigned n)
{
	/* t->cond uses CLOCK_REALTIME: it was initialised without attributes */
	return fake_wait_count(&t->lock, &t->cond, CLOCK_REALTIME, &t->entered, n);
}

void fake_target_release(struct fake_target *t)
{
	pthread_mutex_lock(&t->lock);
	t->released = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void fake_target_set_gate(struct fake_target *t, bool gated)
{
	pthread_mutex_lock(&t->lock);
	t->gated = gated;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void fake_target_open(struct fake_target *t, unsigned tag)
{
	pthread_mutex_lock(&t->lock);
	t->open_tag[tag & 0xff] = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

unsigned fake_target_calls(struct fake_target *t)
{
	return fake_locked(&t->lock, &t->calls);
}

unsigned fake_target_chans_open(struct fake_target *t)
{
	return fake_locked(&t->lock, &t->chans_open);
}

void fake_script_check_condition(struct fake_target *t)
{
	t->script.status = 0x02;
	t->script.sense[0] = 0x70;
	t->script.sense[2] = 0x05;
	t->script.sense[7] = 10;
	t->script.sense[12] = 0x21;
	t->script.sense_len = 18;
	for (unsigned i = 18; i < SCSI_SENSE_MAX; i++)
		t->script.sense[i] = 0xee;
}

bool fake_all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

unsigned fake_locked(pthread_mutex_t *lock, const unsigned *v)
{
	unsigned n;

	pthread_mutex_lock(lock);
	n = *v;
	pthread_mutex_unlock(lock);
	return n;
}

bool fake_wait_count(pthread_mutex_t *lock, pthread_cond_t *cond, clockid_t clock,
		     const unsigned *v, unsigned n)
{
	struct timespec deadline;
	int err = 0;
	bool ok;

	clock_gettime(clock, &deadline);
	deadline.tv_sec += FAKE_WAIT_SECONDS;
	pthread_mutex_lock(lock);
	while (*v < n && err != ETIMEDOUT)
		err = pthread_cond_timedwait(cond, lock, &deadline);
	ok = *v >= n;
	pthread_mutex_unlock(lock);
	return ok;
}

uint8_t fake_pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

bool fake_is_pattern(const unsigned char *p, size_t from, size_t n, uint8_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (fake_pattern(from + i) ^ tag))
			return false;
	return true;
}

void fake_script_good(struct fake_target *t, size_t data_in_len, int32_t resid, bool xor_tag)
{
	memset(&t->script, 0, sizeof(t->script));
	t->script.data_in_len = data_in_len;
	for (size_t i = 0; i < data_in_len; i++)
		t->script.data_in[i] = fake_pattern(i);
	t->script.resid = resid;
	t->script.xor_tag = xor_tag;
}

void fake_cmd_init(struct fake_cmd *m, bool write, unsigned tag, unsigned blocks)
{
	memset(m, FAKE_UNTOUCHED, sizeof(*m));
	memset(m->cdb, 0, sizeof(m->cdb));
	m->cdb[0] = write ? 0x2a : 0x28;
	m->cdb[FAKE_TAG_BYTE] = tag;
	m->cdb[8] = blocks;
	if (write)
		for (size_t i = 0; i < sizeof(m->data); i++)
			m->data[i] = fake_pattern(i + tag);
}

struct sg_io_hdr fake_v3_hdr(struct fake_cmd *m, int dxfer_direction, unsigned len, int pack_id)
{
	return (struct sg_io_hdr){
		.interface_id = 'S',
		.dxfer_direction = dxfer_direction,
		.cmd_len = 10,
		.mx_sb_len = sizeof(m->sense),
		.dxfer_len = len,
		.dxferp = m->data,
		.cmdp = m->cdb,
		.sbp = m->sense,
		.timeout = 20000,
		.pack_id = pack_id,
		.usr_ptr = (void *)(uintptr_t)FAKE_USR_PTR(pack_id),
	};
}

struct sg_io_v4 fake_v4_hdr(struct fake_cmd *m, bool write, unsigned len, int pack_id)
{
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)m->cdb,
		.max_response_len = sizeof(m->sense),
		.response = (uintptr_t)m->sense,
		.timeout = 20000,
		.request_extra = pack_id, /* what SG_GET_PACK_ID and pick() call its pack_id */
		.usr_ptr = FAKE_USR_PTR(pack_id),
	};

	if (write) {
		h.dout_xfer_len = len;
		h.dout_xferp = (uintptr_t)m->data;
	} else {
		h.din_xfer_len = len;
		h.din_xferp = (uintptr_t)m->data;
	}
	return h;
}

void fake_set_cap(unsigned cap, bool on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	unsigned i = cap / 32, bit = 1u << (cap % 32);

	if (syscall(SYS_capget, &h, d))
		abort();
	if (on)
		d[i].effective |= d[i].permitted & bit;
	else
		d[i].effective &= ~bit;
	if (syscall(SYS_capset, &h, d))
		abort();
}

void fake_set_rawio(bool on)
{
	fake_set_cap(CAP_SYS_RAWIO, on);
}

fuse_req_t fake_ioctl_on(fuse_req_t req, struct opener *o, pid_t tid, unsigned cmd, void *arg)
{
	struct ioctx x = {
		.req = req,
		.o = o,
		.arg = (uintptr_t)arg,
		.tid = tid,
		.direct = true,
	};

	req->ctx.pid = tid;
	ioctl_dispatch(&x, cmd, 0);
	return req;
}
