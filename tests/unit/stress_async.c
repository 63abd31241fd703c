// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stress run of the threaded parts for ThreadSanitizer: the asynchronous
 * interface (async.c), synchronous SG_IO (sgio.c) and the worker pool, on one
 * daemon with a real pool, the fake target and the fake libfuse of
 * tests/fake.c.  Plain C: Criterion's runner does not survive TSan.  All of
 * it runs at once:
 *
 *  - stream openers: writer threads submit v3 headers and v4 arrays, with
 *    blocking or O_NONBLOCK writes, parked when the queue is full and
 *    sometimes interrupted; reader threads take completions with blocking
 *    reads (parked, sometimes interrupted) or O_NONBLOCK reads that wait for
 *    a poll notification.  Every completion must reach its own opener
 *    exactly once, with its data;
 *  - SG_IO threads (SG_SET_KEEP_ORPHAN on): v3 and v4 SG_IO interrupted before submission, at a
 *    random point while the command is queued, running or completing, or
 *    not at all.  An interrupted command leaves the caller's memory as it was;
 *  - churn threads: short-lived openers that write, poll and sometimes read,
 *    then are released with commands still running (orphans);
 *  - sg v4 ioctl threads, an opener each: arrays of READs submitted with
 *    SG_IOSUBMIT and taken back with blocking SG_IORECEIVEs of arrays, a
 *    quarter of them interrupted at a random point; every command must come
 *    back exactly once, with its data; the opener is released with a last
 *    array running;
 *  - a signal judge that calls a quarter of the interrupts of parked calls
 *    a stop signal at first: those wait on, watched, until a later look;
 *  - an observer thread: SG_GET_REQUEST_TABLE, SG_GET_NUM_WAITING,
 *    SG_GET_PACK_ID and polls without a handle on the stream openers;
 *  - a reloader thread: replaces the access policy every command is
 *    checked against, as SIGHUP does, with policies that all let the run's
 *    commands pass.
 *
 * Every request must be answered exactly once.  The run is bounded by
 * iteration counts; every wait is bounded by FAKE_WAIT_SECONDS.  Exit status
 * 0 on success, 1 on a failed check, 66 on a TSan report.  An argument sets
 * the seed of the random choices (interleavings still vary from run to run).
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "fake.h"
#include "guard.h"
#include "ioctl.h"
#include "opener.h"
#include "policy.h"
#include "queue/async.h"
#include "queue/cmdq.h"
#include "sgio.h"
#include "share.h"

#define POOL_THREADS  4
#define STREAMS	      3
#define WRITERS	      2	  /* per stream opener */
#define READERS	      2	  /* per stream opener: blocking or O_NONBLOCK, as reader_kind */
#define PER_WRITER    500 /* commands */
#define CREDIT	      16  /* commands a stream has written and not read: sg's v3 limit */
#define SGIO_THREADS  2
#define PER_SGIO      500
#define CHURN_THREADS 2
#define CHURN_OPENS   200
#define CHURN_CMDS    4
#define IOCTL_THREADS 2
#define IOCTL_ROUNDS  150
#define IOCTL_BATCH   8	   /* the most commands an array submits or receives */
#define OBSERVATIONS  1500 /* informational ioctls and polls on the stream openers */
#define RELOADS	      3000 /* replacements of the access policy */
#define LEN	      512  /* data-in of every command */
#define V3	      SCSI_V3_HDR_LEN
#define V4	      SCSI_V4_HDR_LEN

/* Any report fails the run, however the driver is started. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "halt_on_error=1:exitcode=66";
}

struct stress {
	struct fake_target *ft;
	struct bsgdev d;
	unsigned seed;
	pthread_mutex_t lock;
	atomic_uint failures;
	char why[256];	     /* protected by lock: the first failure */
	struct share *share; /* the stream openers' files' shares of threads, never full */
};

/* One stream opener and the state its threads share. */
struct stream {
	struct stress *st;
	unsigned idx;
	struct fake_session *fs;
	struct opener *o;
	struct share_file *sf; /* its file's share: its writes hold it, as node.c's calls */
	struct fake_cmd *b;    /* per command, by seq: the low 16 bits of its pack_id */
	unsigned total;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned *got;		     /* protected by lock: deliveries per seq */
	unsigned delivered;	     /* protected by lock */
	unsigned credit;	     /* protected by lock: commands that may be written now */
	bool stop;		     /* protected by lock: readers end */
	fuse_req_t pending[READERS]; /* protected by lock: blocking reads in progress */
};

/* A command of a churn opener. */
struct churn_cmd {
	struct fake_cmd b;
	bool delivered;
};

/* A command of an SG_IO thread. */
struct sgio_client {
	union scsi_hdr h, before;
	struct fake_cmd b;
	bool interrupted;
};

/* One thread of the run, and what it did. */
struct actor {
	pthread_t thread;
	struct stress *st;
	struct stream *sm;	 /* stream threads; the observer: all STREAMS */
	struct fake_session *fs; /* the session its requests belong to */
	struct opener *o;	 /* SG_IO threads */
	unsigned idx;
	uint64_t rng;
	fuse_req_t *reqs; /* every request it made */
	size_t n_reqs, cap_reqs;
	struct churn_cmd *churn;  /* churn threads: CHURN_OPENS * CHURN_CMDS */
	struct fake_cmd *v4b;	  /* sg v4 ioctl threads: IOCTL_ROUNDS * IOCTL_BATCH */
	unsigned *v4got;	  /* ... and how often each came back */
	struct sgio_client *sgio; /* SG_IO threads: PER_SGIO */
	unsigned interrupts, eintr, running_at_release;
};

static void fail(struct stress *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct stress *st, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&st->lock);
	if (!atomic_fetch_add(&st->failures, 1)) {
		va_start(ap, fmt);
		vsnprintf(st->why, sizeof(st->why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&st->lock);
}

static bool failed(struct stress *st)
{
	return atomic_load(&st->failures) != 0;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "stress_async: out of memory\n");
		exit(1);
	}
	return p;
}

static uint32_t rnd(struct actor *a)
{
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	return a->rng >> 32;
}

/* A random delay, so that an interrupt lands at a different point each time. */
static void jitter(struct actor *a)
{
	unsigned n = rnd(a) % 4096;

	if (n < 256) {
		sched_yield();
		return;
	}
	for (unsigned i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

static fuse_req_t new_req(struct actor *a)
{
	fuse_req_t req = fake_req_new(a->fs);

	if (a->n_reqs == a->cap_reqs) {
		size_t cap = a->cap_reqs ? 2 * a->cap_reqs : 256;
		fuse_req_t *v = realloc(a->reqs, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "stress_async: out of memory\n");
			exit(1);
		}
		a->reqs = v;
		a->cap_reqs = cap;
	}
	a->reqs[a->n_reqs++] = req;
	return req;
}

static struct fake_reply *reply_of(struct actor *a, fuse_req_t req, const char *what)
{
	struct fake_reply *rep = fake_req_wait(req);

	if (!rep)
		fail(a->st, "%s: no reply within %d s", what, FAKE_WAIT_SECONDS);
	return rep;
}

static bool is_err(const struct fake_reply *rep, int err)
{
	return rep->kind == FAKE_ERR && rep->err == err;
}

static void deadline_in(struct timespec *t, int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += seconds;
}

/* ---- clients and the target's script ---- */

static void bufs_init(struct fake_cmd *b, unsigned tag)
{
	fake_cmd_init(b, false, tag, 1);
}

static struct sg_io_hdr v3_hdr(struct fake_cmd *b, int pack_id)
{
	return fake_v3_hdr(b, SG_DXFER_FROM_DEV, LEN, pack_id);
}

static struct sg_io_v4 v4_hdr(struct fake_cmd *b, int pack_id)
{
	return fake_v4_hdr(b, false, LEN, pack_id);
}

static bool is_data_in(const unsigned char *p, unsigned tag)
{
	return fake_is_pattern(p, 0, LEN, tag);
}

/*
 * One header of a read's answer: its pack_id, or -1 if its outputs are not
 * those of a good command.
 */
static int good_pack_id(const unsigned char *hdr, unsigned version)
{
	struct sg_io_hdr h3;
	struct sg_io_v4 h4;

	if (version == 3) {
		memcpy(&h3, hdr, sizeof(h3));
		if (h3.status || h3.host_status || h3.driver_status || h3.resid || h3.sb_len_wr ||
		    (uintptr_t)h3.usr_ptr != FAKE_USR_PTR(h3.pack_id))
			return -1;
		return h3.pack_id;
	}
	memcpy(&h4, hdr, sizeof(h4));
	if (h4.guard != 'Q' || h4.device_status || h4.transport_status || h4.driver_status ||
	    h4.din_resid || h4.response_len || h4.usr_ptr != FAKE_USR_PTR(h4.request_extra))
		return -1;
	return (int)h4.request_extra;
}

/*
 * The pack_ids a read answered, into ids: one v3 header or whole v4 ones.
 * Their number, or -1 if the answer is malformed.
 */
static int answered_ids(const struct fake_reply *rep, int *ids)
{
	int32_t first;
	int n = 0;

	if (rep->len < sizeof(first))
		return -1;
	memcpy(&first, rep->data, sizeof(first));
	if (first == 'S' && rep->len == V3) {
		ids[0] = good_pack_id(rep->data, 3);
		return ids[0] < 0 ? -1 : 1;
	}
	if (first != 'Q' || !rep->len || rep->len % V4 || rep->len / V4 > SG_MAX_QUEUE)
		return -1;
	for (size_t off = 0; off < rep->len; off += V4) {
		ids[n] = good_pack_id(rep->data + off, 4);
		if (ids[n++] < 0)
			return -1;
	}
	return n;
}

/* ---- the daemon and its openers ---- */

/* As cb_open() makes one; tid is the opening thread. */
static struct opener *new_opener(struct stress *st, pid_t tid)
{
	struct opener *o;

	if (opener_new(&st->d, O_RDWR, false, tid, NULL, &o))
		abort();
	return o;
}

static unsigned poll_once(struct actor *a, struct opener *o)
{
	fuse_req_t req = new_req(a);
	struct fake_reply *rep;

	async_poll(req, o, fake_pollhandle_new(a->fs));
	rep = reply_of(a, req, "poll");
	if (!rep)
		return 0;
	if (rep->kind != FAKE_POLL) {
		fail(a->st, "poll answered kind %d", rep->kind);
		return 0;
	}
	return rep->revents;
}

/* ---- stream openers: writers ---- */

/* Wait until n commands may be written, and take them. */
static bool take_credit(struct stream *sm, unsigned n)
{
	struct timespec deadline;
	int err = 0;
	bool ok;

	deadline_in(&deadline, FAKE_WAIT_SECONDS);
	pthread_mutex_lock(&sm->lock);
	while (sm->credit < n && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&sm->cond, &sm->lock, &deadline);
	ok = sm->credit >= n;
	if (ok)
		sm->credit -= n;
	pthread_mutex_unlock(&sm->lock);
	if (!ok)
		fail(sm->st, "stream %u: no completion read within %d s", sm->idx,
		     FAKE_WAIT_SECONDS);
	return ok;
}

static int stream_pack_id(const struct stream *sm, unsigned seq)
{
	return (int)(sm->idx << 16 | seq);
}

/* A v3 write takes one header; it never parks, and the credit keeps it off EDOM. */
/*
 * A write() as node.c runs it: holding its file's share, so that the
 * commands it brings may run on this thread (cmdq.c), within the budget.
 */
static void call_write(struct stream *sm, fuse_req_t req, const void *buf, size_t len, int flags)
{
	struct share_call held;
	bool in = share_enter(sm->sf, getuid(), &held);

	if (in)
		share_set_current(&held);
	async_write(req, sm->o, buf, len, flags);
	if (in) {
		share_set_current(NULL);
		share_end(&held);
	}
}

static void write_v3(struct actor *a, unsigned seq)
{
	struct stream *sm = a->sm;
	struct sg_io_hdr h = v3_hdr(&sm->b[seq], stream_pack_id(sm, seq));
	fuse_req_t req = new_req(a);
	struct fake_reply *rep;

	call_write(sm, req, &h, V3, rnd(a) % 2 ? O_NONBLOCK : 0);
	rep = reply_of(a, req, "v3 write");
	if (rep && (rep->kind != FAKE_WRITE || rep->count != V3))
		fail(a->st, "stream %u: v3 write of %u answered kind %d errno %d", sm->idx, seq,
		     rep->kind, rep->err);
}

/*
 * One try at writing what is left of a v4 array: the headers it took.  A
 * blocking write parks while the queue is full, and may be interrupted
 * there; EINTR and EAGAIN take none.
 */
static unsigned write_v4_once(struct actor *a, const struct sg_io_v4 *h, unsigned n, int flags)
{
	fuse_req_t req = new_req(a);
	struct fake_reply *rep;

	call_write(a->sm, req, h, n * V4, flags);
	if (!(flags & O_NONBLOCK) && rnd(a) % 4 == 0) {
		jitter(a);
		fake_interrupt(req);
		a->interrupts++;
	}
	rep = reply_of(a, req, "v4 write");
	if (!rep)
		return 0;
	if (rep->kind == FAKE_WRITE && rep->count && rep->count % V4 == 0 && rep->count <= n * V4)
		return rep->count / V4;
	if (is_err(rep, EINTR) && !(flags & O_NONBLOCK)) {
		a->eintr++;
		return 0;
	}
	if (is_err(rep, EAGAIN) && (flags & O_NONBLOCK))
		return 0;
	fail(a->st, "stream %u: v4 write of %u answered kind %d errno %d count %zu", a->sm->idx, n,
	     rep->kind, rep->err, rep->count);
	return 0;
}

static void write_v4(struct actor *a, unsigned seq, unsigned n)
{
	struct stream *sm = a->sm;
	struct sg_io_v4 h[3];
	unsigned off = 0;
	int flags = rnd(a) % 2 ? O_NONBLOCK : 0;

	for (unsigned i = 0; i < n; i++)
		h[i] = v4_hdr(&sm->b[seq + i], stream_pack_id(sm, seq + i));
	while (off < n && !failed(a->st)) {
		unsigned took = write_v4_once(a, h + off, n - off, flags);

		off += took;
		if (!took)
			flags = 0; /* full: wait for room, parked, rather than spin */
	}
}

static void *writer_main(void *arg)
{
	struct actor *a = arg;
	unsigned seq = a->idx * PER_WRITER, end = seq + PER_WRITER;

	while (seq < end && !failed(a->st)) {
		bool v3 = rnd(a) % 3 == 0;
		unsigned n = v3 ? 1 : 1 + rnd(a) % 3;

		if (n > end - seq)
			n = end - seq;
		if (!take_credit(a->sm, n))
			break;
		if (v3)
			write_v3(a, seq);
		else
			write_v4(a, seq, n);
		seq += n;
	}
	return NULL;
}

/* ---- stream openers: readers ---- */

/* Count what a read answered; each must be this stream's and new. */
static void account(struct actor *a, const struct fake_reply *rep)
{
	struct stream *sm = a->sm;
	int ids[SG_MAX_QUEUE];
	int n = answered_ids(rep, ids);

	if (n < 0) {
		fail(a->st, "stream %u: a read answered %zu bytes that are no good headers",
		     sm->idx, rep->len);
		return;
	}
	for (int i = 0; i < n; i++) {
		unsigned owner = (unsigned)ids[i] >> 16, seq = ids[i] & 0xffff;

		if (owner != sm->idx || seq >= sm->total) {
			fail(a->st, "stream %u: read pack_id 0x%x, not its own", sm->idx, ids[i]);
			return;
		}
		if (!is_data_in(sm->b[seq].data, seq & 0xff))
			fail(a->st, "stream %u: pack_id 0x%x without its data", sm->idx, ids[i]);
		pthread_mutex_lock(&sm->lock);
		if (sm->got[seq]++)
			fail(a->st, "stream %u: pack_id 0x%x delivered twice", sm->idx, ids[i]);
		sm->delivered++;
		sm->credit++;
		pthread_cond_broadcast(&sm->cond);
		pthread_mutex_unlock(&sm->lock);
	}
}

/* A read's room: one to three v4 headers, always enough for one of either. */
static size_t read_size(struct actor *a)
{
	return V4 * (1 + rnd(a) % 3);
}

/* A new blocking read, published for stop_stream(); NULL once the stream stops. */
static fuse_req_t blocking_read_req(struct actor *a, unsigned slot)
{
	struct stream *sm = a->sm;
	fuse_req_t req = NULL;

	pthread_mutex_lock(&sm->lock);
	if (!sm->stop) {
		req = new_req(a);
		sm->pending[slot] = req;
	}
	pthread_mutex_unlock(&sm->lock);
	return req;
}

/* Blocking reads: parked until a completion, sometimes interrupted there. */
static void *blocking_reader_main(void *arg)
{
	struct actor *a = arg;
	struct stream *sm = a->sm;
	unsigned slot = a->idx;
	fuse_req_t req;

	while (!failed(a->st) && (req = blocking_read_req(a, slot))) {
		struct fake_reply *rep;

		async_read(req, sm->o, read_size(a), 0);
		if (rnd(a) % 4 == 0) {
			jitter(a);
			fake_interrupt(req);
			a->interrupts++;
		}
		rep = reply_of(a, req, "blocking read");
		pthread_mutex_lock(&sm->lock);
		sm->pending[slot] = NULL;
		pthread_mutex_unlock(&sm->lock);
		if (!rep)
			break;
		if (rep->kind == FAKE_BUF)
			account(a, rep);
		else if (is_err(rep, EINTR))
			a->eintr++;
		else
			fail(a->st, "stream %u: blocking read answered kind %d errno %d", sm->idx,
			     rep->kind, rep->err);
	}
	return NULL;
}

static bool stream_stopped(struct stream *sm)
{
	bool stop;

	pthread_mutex_lock(&sm->lock);
	stop = sm->stop;
	pthread_mutex_unlock(&sm->lock);
	return stop;
}

/*
 * Nothing to read: wait for a poll notification.  The count is taken before
 * the handle is registered, so a completion after the look is not missed.
 */
static void wait_readable(struct actor *a)
{
	struct stream *sm = a->sm;
	unsigned seen = fake_notify_count(sm->fs);

	if (poll_once(a, sm->o) & POLLIN)
		return;
	if (stream_stopped(sm))
		return;
	if (!fake_wait_notify(sm->fs, seen))
		fail(a->st, "stream %u: no poll notification within %d s (%d waiting)", sm->idx,
		     FAKE_WAIT_SECONDS, cmdq_num_waiting(sm->o));
}

/* O_NONBLOCK reads, and poll when there is nothing. */
static void *polling_reader_main(void *arg)
{
	struct actor *a = arg;
	struct stream *sm = a->sm;

	while (!failed(a->st) && !stream_stopped(sm)) {
		fuse_req_t req = new_req(a);
		struct fake_reply *rep;

		async_read(req, sm->o, read_size(a), O_NONBLOCK);
		rep = reply_of(a, req, "O_NONBLOCK read");
		if (!rep)
			break;
		if (rep->kind == FAKE_BUF)
			account(a, rep);
		else if (is_err(rep, EAGAIN))
			wait_readable(a);
		else
			fail(a->st, "stream %u: O_NONBLOCK read answered kind %d errno %d", sm->idx,
			     rep->kind, rep->err);
	}
	return NULL;
}

/* Wait until every command of sm was read; bounded while none comes. */
static void wait_stream(struct stream *sm)
{
	struct timespec deadline;
	unsigned last = ~0u;
	int err = 0;

	pthread_mutex_lock(&sm->lock);
	while (sm->delivered < sm->total && !failed(sm->st)) {
		if (sm->delivered != last) {
			last = sm->delivered;
			deadline_in(&deadline, FAKE_WAIT_SECONDS);
		} else if (err == ETIMEDOUT) {
			fail(sm->st, "stream %u: %u of %u completions read, then none for %d s",
			     sm->idx, sm->delivered, sm->total, FAKE_WAIT_SECONDS);
			break;
		}
		err = pthread_cond_timedwait(&sm->cond, &sm->lock, &deadline);
	}
	pthread_mutex_unlock(&sm->lock);
}

/*
 * End the readers: interrupt the blocking reads left parked with nothing to
 * come, and wake the pollers as a notification would.
 */
static void stop_stream(struct stream *sm)
{
	fuse_req_t pending[READERS];
	struct fuse_pollhandle *ph;

	pthread_mutex_lock(&sm->lock);
	sm->stop = true;
	memcpy(pending, sm->pending, sizeof(pending));
	pthread_mutex_unlock(&sm->lock);
	for (unsigned i = 0; i < READERS; i++)
		if (pending[i])
			fake_interrupt(pending[i]);
	ph = fake_pollhandle_new(sm->fs);
	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

/* ---- SG_IO, interrupted at random points ---- */

static void sgio_client_init(struct sgio_client *c, unsigned tag, bool v4)
{
	bufs_init(&c->b, tag);
	memset(&c->h, 0, sizeof(c->h));
	if (v4)
		c->h.v4 = v4_hdr(&c->b, tag);
	else
		c->h.v3 = v3_hdr(&c->b, tag);
	c->before = c->h;
}

static bool sgio_good(const struct sgio_client *c, unsigned tag)
{
	if (!is_data_in(c->b.data, tag))
		return false;
	if (c->h.v3.interface_id == 'S')
		return good_pack_id(c->h.raw, 3) >= 0;
	return good_pack_id(c->h.raw, 4) >= 0;
}

/*
 * One SG_IO.  A quarter are interrupted before submission (they must not
 * run), half after it, at a random point, and a quarter not at all.
 */
static void sgio_one(struct actor *a, struct sgio_client *c, unsigned tag)
{
	fuse_req_t req = new_req(a);
	unsigned how = rnd(a) % 4;
	struct fake_reply *rep;

	sgio_client_init(c, tag, rnd(a) % 2);
	if (how == 0)
		fake_interrupt(req);
	fake_ioctl_on(req, a->o, gettid(), SG_IO, &c->h);
	if (how == 1 || how == 2) {
		jitter(a);
		fake_interrupt(req);
	}
	a->interrupts += how < 3;
	rep = reply_of(a, req, "SG_IO");
	if (!rep)
		return;
	if (is_err(rep, EINTR)) {
		c->interrupted = true;
		a->eintr++;
	} else if (how == 0) {
		fail(a->st, "SG_IO interrupted before submission answered kind %d", rep->kind);
	} else if (rep->kind != FAKE_IOCTL || rep->result || !sgio_good(c, tag)) {
		fail(a->st, "SG_IO answered kind %d errno %d result %d, or wrong outputs",
		     rep->kind, rep->err, rep->result);
	}
}

/*
 * The signal judge (bsgdev.signal_ends): a quarter of the interrupts of
 * parked reads, writes and receives are a stop signal at first, watched
 * until a later look says the signal ends the call.  SG_IO's are all real
 * signals: sgio_one() wants one that came before submission to end it.
 */
static _Atomic pid_t sgio_tids[SGIO_THREADS];
static atomic_uint judge_rng;

static bool judge_stress(pid_t tid)
{
	for (unsigned i = 0; i < SGIO_THREADS; i++)
		if (atomic_load(&sgio_tids[i]) == tid)
			return true;
	return atomic_fetch_add(&judge_rng, 1) % 4 != 0;
}

static void *sgio_main(void *arg)
{
	struct actor *a = arg;

	atomic_store(&sgio_tids[a->idx % SGIO_THREADS], gettid());
	for (unsigned i = 0; i < PER_SGIO && !failed(a->st); i++)
		sgio_one(a, &a->sgio[i], i & 0xff);
	return NULL;
}

/* After the pool has stopped: an interrupted SG_IO left everything as it was. */
static void check_sgio(struct actor *a)
{
	for (unsigned i = 0; i < PER_SGIO; i++) {
		const struct sgio_client *c = &a->sgio[i];

		if (!c->interrupted)
			continue;
		if (memcmp(&c->h, &c->before, sizeof(c->h)) ||
		    !fake_all_bytes(c->b.sense, sizeof(c->b.sense), FAKE_UNTOUCHED) ||
		    !fake_all_bytes(c->b.data, sizeof(c->b.data), FAKE_UNTOUCHED))
			fail(a->st, "SG_IO %u of thread %u: memory written after EINTR", i, a->idx);
	}
}

/* ---- the sg v4 ioctls ---- */

static unsigned running(struct opener *o);

#define V4_SUBMITTED 100 /* v4got: submitted; each delivery adds one */

static int v4_call(struct actor *a, unsigned cmd, struct sg_io_v4 *arg, bool interrupt)
{
	fuse_req_t req = fake_ioctl_on(new_req(a), a->o, gettid(), cmd, arg);
	struct fake_reply *rep;

	if (interrupt) {
		jitter(a);
		fake_interrupt(req);
		a->interrupts++;
	}
	rep = reply_of(a, req, "sg v4 ioctl");
	if (!rep)
		return -ETIMEDOUT;
	return rep->kind == FAKE_ERR ? -rep->err : rep->result;
}

/* Receive until none of this round's k is outstanding. */
static void v4_reap(struct actor *a, unsigned first, unsigned k)
{
	struct sg_io_v4 rsp[IOCTL_BATCH], c;
	int err;

	while (k && !failed(a->st)) {
		unsigned room = 1 + rnd(a) % IOCTL_BATCH;

		c = (struct sg_io_v4){ .guard = 'Q',
				       .flags = SGV4_FLAG_MULTIPLE_REQS,
				       .din_xferp = (uintptr_t)rsp,
				       .din_xfer_len = room * V4 };
		err = v4_call(a, SG_IORECEIVE, &c, rnd(a) % 4 == 0);
		if (err == -EINTR) {
			a->eintr++;
			continue;
		}
		if (err) {
			fail(a->st, "SG_IORECEIVE: errno %d", -err);
			return;
		}
		for (unsigned i = 0; i < c.info; i++) {
			unsigned id = rsp[i].request_extra;

			if (id < first || id >= first + IOCTL_BATCH ||
			    !is_data_in(a->v4b[id].data, id & 0xff))
				fail(a->st, "SG_IORECEIVE: completion %u wrong", id);
			else
				a->v4got[id]++;
		}
		k -= c.info < k ? c.info : k;
	}
}

/* Submit n READs from id first on in one array: 0, or -errno. */
static int v4_submit(struct actor *a, unsigned first, unsigned n)
{
	struct sg_io_v4 h[IOCTL_BATCH], c;
	int err;

	for (unsigned i = 0; i < n; i++) {
		bufs_init(&a->v4b[first + i], (first + i) & 0xff);
		a->v4got[first + i] = V4_SUBMITTED;
		h[i] = v4_hdr(&a->v4b[first + i], (int)(first + i));
	}
	c = (struct sg_io_v4){ .guard = 'Q',
			       .flags = SGV4_FLAG_MULTIPLE_REQS | SGV4_FLAG_IMMED,
			       .dout_xferp = (uintptr_t)h,
			       .dout_xfer_len = n * V4 };
	err = v4_call(a, SG_IOSUBMIT, &c, false);
	if (!err && c.info != n)
		err = -EAGAIN;
	return err;
}

static void *ioctl_main(void *arg)
{
	struct actor *a = arg;
	unsigned r;

	for (r = 0; r + 1 < IOCTL_ROUNDS && !failed(a->st); r++) {
		unsigned k = 1 + rnd(a) % IOCTL_BATCH;

		if (v4_submit(a, r * IOCTL_BATCH, k))
			fail(a->st, "SG_IOSUBMIT of %u failed", k);
		else
			v4_reap(a, r * IOCTL_BATCH, k);
	}
	if (!failed(a->st) && !v4_submit(a, r * IOCTL_BATCH, IOCTL_BATCH))
		a->running_at_release = running(a->o);
	cmdq_release(a->o); /* the last array still running: orphans */
	return NULL;
}

/* Every command but the last round's came back exactly once. */
static void check_ioctl(struct actor *a)
{
	for (unsigned id = 0; id < (IOCTL_ROUNDS - 1) * IOCTL_BATCH; id++) {
		if (a->v4got[id] && a->v4got[id] != V4_SUBMITTED + 1)
			fail(a->st, "ioctl thread %u: command %u received %d times", a->idx, id,
			     (int)a->v4got[id] - V4_SUBMITTED);
	}
}

/* ---- churn: openers released with commands running ---- */

/* Write the commands [first, first + CHURN_CMDS): a v3 header, then a v4 array. */
static bool churn_write(struct actor *a, struct opener *o, unsigned first)
{
	struct sg_io_hdr h3 = v3_hdr(&a->churn[first].b, first);
	struct sg_io_v4 h4[CHURN_CMDS - 1];
	struct fake_reply *rep;
	fuse_req_t req;

	for (unsigned i = 1; i < CHURN_CMDS; i++)
		h4[i - 1] = v4_hdr(&a->churn[first + i].b, first + i);
	req = new_req(a);
	async_write(req, o, (const char *)&h3, V3, O_NONBLOCK);
	rep = reply_of(a, req, "churn v3 write");
	if (!rep || rep->kind != FAKE_WRITE)
		return false;
	req = new_req(a);
	async_write(req, o, (const char *)h4, sizeof(h4), O_NONBLOCK);
	rep = reply_of(a, req, "churn v4 write");
	return rep && rep->kind == FAKE_WRITE && rep->count == sizeof(h4);
}

/* Read what is there, if anything; it must be of this opener. */
static void churn_read(struct actor *a, struct opener *o, unsigned first)
{
	fuse_req_t req = new_req(a);
	struct fake_reply *rep;
	int ids[SG_MAX_QUEUE], n;

	async_read(req, o, read_size(a), O_NONBLOCK);
	rep = reply_of(a, req, "churn read");
	if (!rep || is_err(rep, EAGAIN))
		return;
	n = rep->kind == FAKE_BUF ? answered_ids(rep, ids) : -1;
	if (n < 0)
		fail(a->st, "churn read answered kind %d errno %d", rep->kind, rep->err);
	for (int i = 0; i < n; i++) {
		unsigned id = ids[i];

		if (id < first || id >= first + CHURN_CMDS) {
			fail(a->st, "churn read pack_id %u, not its opener's", id);
			continue;
		}
		if (a->churn[id].delivered || !is_data_in(a->churn[id].b.data, id & 0xff))
			fail(a->st, "churn pack_id %u delivered twice or without data", id);
		a->churn[id].delivered = true;
	}
}

static unsigned running(struct opener *o)
{
	unsigned n;

	pthread_mutex_lock(&o->lock);
	n = o->queued - o->done;
	pthread_mutex_unlock(&o->lock);
	return n;
}

static void *churn_main(void *arg)
{
	struct actor *a = arg;

	for (unsigned i = 0; i < CHURN_OPENS && !failed(a->st); i++) {
		struct opener *o = new_opener(a->st, gettid());
		unsigned first = i * CHURN_CMDS;

		for (unsigned k = 0; k < CHURN_CMDS; k++)
			bufs_init(&a->churn[first + k].b, (first + k) & 0xff);
		if (!churn_write(a, o, first))
			fail(a->st, "churn: a write was refused");
		if (rnd(a) % 2)
			poll_once(a, o); /* leaves the handle for release to destroy */
		if (rnd(a) % 3 == 0)
			churn_read(a, o, first);
		if (rnd(a) % 2)
			jitter(a);
		a->running_at_release += running(o);
		cmdq_release(o); /* as cb_release(): o may be gone now */
	}
	return NULL;
}

/* After the pool has stopped: orphans and unread completions touched nothing. */
static void check_churn(struct actor *a)
{
	for (unsigned i = 0; i < CHURN_OPENS * CHURN_CMDS; i++) {
		const struct churn_cmd *c = &a->churn[i];

		if (c->delivered)
			continue;
		if (!fake_all_bytes(c->b.sense, sizeof(c->b.sense), FAKE_UNTOUCHED) ||
		    !fake_all_bytes(c->b.data, sizeof(c->b.data), FAKE_UNTOUCHED))
			fail(a->st, "churn command %u of thread %u: memory written, never read", i,
			     a->idx);
	}
}

/* ---- the observer: calls that look at an opener's lists ---- */

/* A request table may only hold commands of the opener it was asked of. */
static void check_table(struct actor *a, const struct sg_req_info *t, unsigned idx)
{
	for (unsigned i = 0; i < SG_MAX_QUEUE; i++)
		if (t[i].req_state && (unsigned)t[i].pack_id >> 16 != idx)
			fail(a->st, "stream %u: request table lists pack_id 0x%x", idx,
			     t[i].pack_id);
}

static void observe_one(struct actor *a, unsigned idx)
{
	static const unsigned cmds[] = { SG_GET_REQUEST_TABLE, SG_GET_NUM_WAITING, SG_GET_PACK_ID };
	struct sg_req_info table[SG_MAX_QUEUE];
	unsigned op = rnd(a) % 4;
	fuse_req_t req = new_req(a);
	struct opener *o = a->sm[idx].o;
	struct fake_reply *rep;

	if (op == 3) {
		async_poll(req, o, NULL);
		rep = reply_of(a, req, "poll");
		if (rep && rep->kind != FAKE_POLL)
			fail(a->st, "poll answered kind %d", rep->kind);
		return;
	}
	rep = reply_of(a, fake_ioctl_on(req, o, gettid(), cmds[op], table), "ioctl");
	if (rep && (rep->kind != FAKE_IOCTL || rep->result))
		fail(a->st, "ioctl 0x%x answered kind %d errno %d", cmds[op], rep->kind, rep->err);
	else if (rep && cmds[op] == SG_GET_REQUEST_TABLE)
		check_table(a, table, idx);
}

static void *observer_main(void *arg)
{
	struct actor *a = arg;

	for (unsigned i = 0; i < OBSERVATIONS && !failed(a->st); i++)
		observe_one(a, rnd(a) % STREAMS);
	return NULL;
}

/* SIGHUP's reload, again and again, as the commands are checked. */
static void *reloader_main(void *arg)
{
	static const char *const texts[] = {
		"kernel bsg\n",
		"allow READ_10\nallow TEST_UNIT_READY\nallow INQUIRY\n",
		"kernel sg\ndeny FORMAT_UNIT\n",
	};
	struct actor *a = arg;
	struct filter_policy p;
	char why[128];

	for (unsigned i = 0; i < RELOADS && !failed(a->st); i++) {
		const char *t = texts[rnd(a) % 3];

		if (filter_parse(t, strlen(t), &p, why, sizeof(why)) < 0) {
			fail(a->st, "policy '%s': %s", t, why);
			break;
		}
		policy_replace(a->st->d.policy, &p);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* ---- the run ---- */

struct run {
	struct stress st;
	struct stream sm[STREAMS];
	struct actor writers[STREAMS][WRITERS], readers[STREAMS][READERS];
	struct actor sgio[SGIO_THREADS], churn[CHURN_THREADS], observer, reloader;
	struct actor ioctl[IOCTL_THREADS];
	struct fake_session *sgio_fs;
	struct opener *sgio_o;
	unsigned actors; /* started so far: each gets its own random sequence */
};

static void actor_start(struct run *r, struct actor *a, void *(*fn)(void *))
{
	int err;

	a->st = &r->st;
	a->rng = (uint64_t)r->st.seed << 20 | ++r->actors;
	for (int i = 0; i < 4; i++)
		rnd(a);
	err = pthread_create(&a->thread, NULL, fn, a);
	if (err) {
		fprintf(stderr, "stress_async: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

static void stream_init(struct run *r, struct stream *sm, unsigned idx)
{
	static const int cmd_q[] = { 4, 0, 2 };
	pthread_condattr_t attr;

	sm->st = &r->st;
	sm->idx = idx;
	sm->fs = fake_session_new();
	sm->o = new_opener(&r->st, gettid());
	if (share_file_open(r->st.share, getuid(), &sm->sf)) {
		fprintf(stderr, "stress_async: no share for stream %u\n", idx);
		exit(1);
	}
	cmdq_set_share(sm->o, r->st.share, sm->sf, getuid());
	/* v4's queue depth: 4 and 2 park writers early, 0 leaves sg's 16 */
	atomic_store(&sm->o->cmd_q, cmd_q[idx % 3]);
	sm->total = WRITERS * PER_WRITER;
	sm->b = xcalloc(sm->total, sizeof(*sm->b));
	sm->got = xcalloc(sm->total, sizeof(*sm->got));
	for (unsigned seq = 0; seq < sm->total; seq++)
		bufs_init(&sm->b[seq], seq & 0xff);
	sm->credit = CREDIT;
	pthread_mutex_init(&sm->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sm->cond, &attr);
	pthread_condattr_destroy(&attr);
}

static void start_streams(struct run *r)
{
	/* per stream: which readers poll (1) rather than block (0) */
	static const bool reader_kind[3][READERS] = { { 0, 1 }, { 0, 0 }, { 1, 1 } };

	for (unsigned s = 0; s < STREAMS; s++) {
		struct stream *sm = &r->sm[s];

		stream_init(r, sm, s);
		for (unsigned i = 0; i < WRITERS; i++) {
			r->writers[s][i] = (struct actor){ .sm = sm, .fs = sm->fs, .idx = i };
			actor_start(r, &r->writers[s][i], writer_main);
		}
		for (unsigned i = 0; i < READERS; i++) {
			r->readers[s][i] = (struct actor){ .sm = sm, .fs = sm->fs, .idx = i };
			actor_start(r, &r->readers[s][i],
				    reader_kind[s % 3][i] ? polling_reader_main
							  : blocking_reader_main);
		}
	}
}

static void start_others(struct run *r)
{
	r->sgio_fs = fake_session_new();
	r->sgio_o = new_opener(&r->st, gettid());
	/* interrupted SG_IOs stay on the opener's list, unread, until release */
	atomic_store(&r->sgio_o->keep_orphan, 1);
	for (unsigned i = 0; i < SGIO_THREADS; i++) {
		r->sgio[i] = (struct actor){ .fs = r->sgio_fs, .o = r->sgio_o, .idx = i };
		r->sgio[i].sgio = xcalloc(PER_SGIO, sizeof(*r->sgio[i].sgio));
		actor_start(r, &r->sgio[i], sgio_main);
	}
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		r->churn[i] = (struct actor){ .fs = fake_session_new(), .idx = i };
		r->churn[i].churn = xcalloc(CHURN_OPENS * CHURN_CMDS, sizeof(*r->churn[i].churn));
		actor_start(r, &r->churn[i], churn_main);
	}
	for (unsigned i = 0; i < IOCTL_THREADS; i++) {
		r->ioctl[i] = (struct actor){ .fs = fake_session_new(), .idx = i };
		r->ioctl[i].o = new_opener(&r->st, gettid());
		r->ioctl[i].v4b = xcalloc(IOCTL_ROUNDS * IOCTL_BATCH, sizeof(*r->ioctl[i].v4b));
		r->ioctl[i].v4got = xcalloc(IOCTL_ROUNDS * IOCTL_BATCH, sizeof(unsigned));
		actor_start(r, &r->ioctl[i], ioctl_main);
	}
	r->observer = (struct actor){ .sm = r->sm, .fs = fake_session_new() };
	actor_start(r, &r->observer, observer_main);
	r->reloader = (struct actor){ 0 };
	actor_start(r, &r->reloader, reloader_main);
}

static void join_all(struct run *r)
{
	for (unsigned s = 0; s < STREAMS; s++) {
		wait_stream(&r->sm[s]);
		stop_stream(&r->sm[s]);
		for (unsigned i = 0; i < WRITERS; i++)
			pthread_join(r->writers[s][i].thread, NULL);
		for (unsigned i = 0; i < READERS; i++)
			pthread_join(r->readers[s][i].thread, NULL);
	}
	for (unsigned i = 0; i < SGIO_THREADS; i++)
		pthread_join(r->sgio[i].thread, NULL);
	for (unsigned i = 0; i < CHURN_THREADS; i++)
		pthread_join(r->churn[i].thread, NULL);
	for (unsigned i = 0; i < IOCTL_THREADS; i++)
		pthread_join(r->ioctl[i].thread, NULL);
	pthread_join(r->observer.thread, NULL);
	pthread_join(r->reloader.thread, NULL);
}

/* Every request of a was answered exactly once. */
static void check_replies(struct actor *a)
{
	for (size_t i = 0; i < a->n_reqs; i++) {
		unsigned n = fake_req_replies(a->reqs[i]);

		if (n != 1) {
			fail(a->st, "a request answered %u times", n);
			return;
		}
	}
}

static void check_session(struct stress *st, struct fake_session *fs, const char *what)
{
	if (fake_misuse_count(fs))
		fail(st, "%s: %u calls on requests already answered", what, fake_misuse_count(fs));
	if (fake_pollhandles_live(fs))
		fail(st, "%s: %u poll handles never destroyed", what, fake_pollhandles_live(fs));
}

static void check_streams(struct run *r)
{
	for (unsigned s = 0; s < STREAMS; s++) {
		struct stream *sm = &r->sm[s];

		for (unsigned seq = 0; seq < sm->total; seq++)
			if (sm->got[seq] != 1)
				fail(&r->st, "stream %u: pack_id 0x%x delivered %u times", s,
				     stream_pack_id(sm, seq), sm->got[seq]);
		check_session(&r->st, sm->fs, "stream");
		for (unsigned i = 0; i < WRITERS; i++)
			check_replies(&r->writers[s][i]);
		for (unsigned i = 0; i < READERS; i++)
			check_replies(&r->readers[s][i]);
	}
}

/* With the pool stopped, nothing runs any more: look at everything. */
static void check_all(struct run *r)
{
	check_streams(r);
	check_session(&r->st, r->sgio_fs, "SG_IO");
	for (unsigned i = 0; i < SGIO_THREADS; i++) {
		check_replies(&r->sgio[i]);
		check_sgio(&r->sgio[i]);
	}
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		check_session(&r->st, r->churn[i].fs, "churn");
		check_replies(&r->churn[i]);
		check_churn(&r->churn[i]);
	}
	for (unsigned i = 0; i < IOCTL_THREADS; i++) {
		check_session(&r->st, r->ioctl[i].fs, "sg v4 ioctls");
		check_replies(&r->ioctl[i]);
		check_ioctl(&r->ioctl[i]);
	}
	check_session(&r->st, r->observer.fs, "observer");
	check_replies(&r->observer);
	if (fake_target_chans_open(r->st.ft))
		fail(&r->st, "%u channels never closed: an opener leaked",
		     fake_target_chans_open(r->st.ft));
}

static void sum(const struct actor *a, unsigned *interrupts, unsigned *eintr, size_t *reqs)
{
	*interrupts += a->interrupts;
	*eintr += a->eintr;
	*reqs += a->n_reqs;
}

static void report(struct run *r)
{
	unsigned intr = 0, eintr = 0, sg_intr = 0, sg_eintr = 0, v4_intr = 0, v4_eintr = 0;
	unsigned at_release = 0;
	size_t reqs = 0;

	for (unsigned s = 0; s < STREAMS; s++) {
		for (unsigned i = 0; i < WRITERS; i++)
			sum(&r->writers[s][i], &intr, &eintr, &reqs);
		for (unsigned i = 0; i < READERS; i++)
			sum(&r->readers[s][i], &intr, &eintr, &reqs);
	}
	for (unsigned i = 0; i < SGIO_THREADS; i++)
		sum(&r->sgio[i], &sg_intr, &sg_eintr, &reqs);
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		reqs += r->churn[i].n_reqs;
		at_release += r->churn[i].running_at_release;
	}
	for (unsigned i = 0; i < IOCTL_THREADS; i++) {
		sum(&r->ioctl[i], &v4_intr, &v4_eintr, &reqs);
		at_release += r->ioctl[i].running_at_release;
	}
	reqs += r->observer.n_reqs;
	printf("stress_async: seed %u: %zu requests; %u stream commands, %u of %u interrupts "
	       "gave EINTR; %u SG_IO, %u of %u interrupts gave EINTR; %u rounds of the sg v4 "
	       "ioctls, %u of %u interrupts gave EINTR; %u churn opens, %u commands running just "
	       "before release; %u target calls: %s\n",
	       r->st.seed, reqs, STREAMS * WRITERS * PER_WRITER, eintr, intr,
	       SGIO_THREADS * PER_SGIO, sg_eintr, sg_intr, IOCTL_THREADS * IOCTL_ROUNDS, v4_eintr,
	       v4_intr, CHURN_THREADS * CHURN_OPENS, at_release, fake_target_calls(r->st.ft),
	       failed(&r->st) ? "FAILED" : "ok");
	if (failed(&r->st))
		fprintf(stderr, "stress_async: %u failures; the first: %s\n",
			atomic_load(&r->st.failures), r->st.why);
}

static void free_actor(struct actor *a)
{
	free(a->reqs);
	free(a->churn);
	free(a->sgio);
}

static void free_all(struct run *r)
{
	for (unsigned s = 0; s < STREAMS; s++) {
		for (unsigned i = 0; i < WRITERS; i++)
			free_actor(&r->writers[s][i]);
		for (unsigned i = 0; i < READERS; i++)
			free_actor(&r->readers[s][i]);
		fake_session_free(r->sm[s].fs);
		pthread_cond_destroy(&r->sm[s].cond);
		pthread_mutex_destroy(&r->sm[s].lock);
		free(r->sm[s].b);
		free(r->sm[s].got);
	}
	for (unsigned i = 0; i < SGIO_THREADS; i++)
		free_actor(&r->sgio[i]);
	fake_session_free(r->sgio_fs);
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		fake_session_free(r->churn[i].fs);
		free_actor(&r->churn[i]);
	}
	for (unsigned i = 0; i < IOCTL_THREADS; i++) {
		fake_session_free(r->ioctl[i].fs);
		free(r->ioctl[i].v4b);
		free(r->ioctl[i].v4got);
		free_actor(&r->ioctl[i]);
	}
	fake_session_free(r->observer.fs);
	free_actor(&r->observer);
	target_free(&r->st.ft->base);
	pthread_mutex_destroy(&r->st.lock);
}

int main(int argc, char **argv)
{
	static struct run r;
	struct stress *st = &r.st;
	struct filter_policy first;
	int err;

	st->seed = argc > 1 ? strtoul(argv[1], NULL, 0) : (unsigned)time(NULL);
	pthread_mutex_init(&st->lock, NULL);
	st->ft = fake_target_new();
	fake_script_good(st->ft, LEN, 0, true);
	bsgdev_init(&st->d);
	st->d.name = "fake";
	st->d.target = &st->ft->base;
	st->d.direct = true;
	st->d.max_xfer = st->ft->base.info.max_xfer;
	st->d.max_xfer_errno = st->ft->base.info.max_xfer_errno;
	st->d.inline_max = 1;  /* SG_IO runs on its caller's thread at times, else in the pool */
	st->d.max_running = 3; /* deeper queues wait for a place at the target */
	st->d.signal_ends = judge_stress;
	filter_init(&first);
	st->d.policy_kernel = POLICY_KERNEL_OWN;
	err = policy_new(&first, &st->d.policy);
	if (!err)
		err = pool_new(POOL_THREADS, &st->d.pool);
	if (!err)
		err = share_new(&(struct share_limits){ .max_files = 64,
							.files_per_user = 64,
							.calls_per_file = 64,
							.calls_per_user = 256 },
				&st->share);
	/* as a node on the direct path: guarded copies, parked readers served
	 * on the elastic pool */
	if (!err)
		err = pool_new_elastic(16, &st->d.serve);
	if (!err)
		err = watchdog_new(60000, "fake", &st->d.wd);
	if (err) {
		fprintf(stderr, "stress_async: pools and watchdog: %s\n", strerror(-err));
		return 1;
	}
	start_streams(&r);
	start_others(&r);
	join_all(&r);
	for (unsigned s = 0; s < STREAMS; s++) {
		cmdq_release(r.sm[s].o);
		share_file_close(r.sm[s].sf);
	}
	cmdq_release(r.sgio_o);
	async_bsgdev_fini(&st->d); /* the signal watcher: nothing is watched any more */
	pool_free(st->d.pool);	   /* runs the orphans still queued, joins the workers */
	pool_free(st->d.serve);
	share_free(st->share); /* every call and copy ended with its pool */
	if (watchdog_free(st->d.wd)) {
		fprintf(stderr, "stress_async: a guarded copy never ended\n");
		return 1;
	}
	check_all(&r);
	report(&r);
	free_all(&r);
	policy_free(st->d.policy);
	return failed(st) ? 1 : 0;
}
