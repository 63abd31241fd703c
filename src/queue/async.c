// SPDX-License-Identifier: GPL-2.0-only
/*
 * The asynchronous interface: write() submits v3 or v4 headers, read()
 * returns completions, poll() tells which of the two would not block.
 *
 * A command moves: write callback (decode, copy CDB and data-out from the
 * writer) -> the opener's running list -> the write is answered -> the
 * target (sg's queue, or a pool worker's SG_IO) -> the opener's done list,
 * in completion order -> a read callback, or a parked read, which copies
 * data-in and sense into the reader and answers with the header.
 * Everything is per opener: no other open file ever sees it.
 *
 * A write() is answered before its commands go to the target: the writer
 * goes on while the device works, and the daemon's hand-off to the target
 * leaves the writer's round trip.  Everything that can refuse a header (its
 * fields, the queue depth, the caller's credentials, the CDB and data-out
 * copy, the access policy) is decided before the answer; what the target
 * says after it comes back with the completion, as sg's own errors do.
 *
 * The commands and the calls parked on them are the opener's queue's
 * (cmdq.h), with its locking.
 */
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "async.h"
#include "bsgdev.h"
#include "chans.h"
#include "cmd.h"
#include "cmdq.h"
#include "cmdq_i.h"
#include "copyjob.h"
#include "deadline.h"
#include "guard.h"
#include "ioctx.h"
#include "lockcheck.h"
#include "log.h"
#include "opener.h"
#include "sigwatch.h"
#include "uaccess.h"

#define SG_HEADER_LEN 36 /* the legacy struct sg_header */

/*
 * Where sg looks in a read()'s or write()'s buffer: the legacy sg_header's
 * reply_len, which is dxfer_direction (negative) in a v3 header, tells the
 * two apart; then the pack_id of whichever it is.
 */
#define SG_HEADER_REPLY_LEN_AT offsetof(struct sg_header, reply_len) /* 4 */
#define SG_HEADER_PACK_ID_AT   offsetof(struct sg_header, pack_id)   /* 8 */
#define SG_IO_HDR_PACK_ID_AT   offsetof(struct sg_io_hdr, pack_id)   /* 48 */
/*
 * The kernel cuts a write over 32 pages into pieces that end on a page
 * boundary of the writer's buffer: every piece but the last is over 31
 * pages, whatever the buffer's alignment, and may end inside a header.
 */
#define SPLIT_PIECE_MIN ((31u << 12) + 1)

/* A parked write()'s own, in its room: the headers, copied out of the request. */
struct wr {
	size_t len;
	_Alignas(uint64_t) unsigned char hdrs[];
};

static inline struct wr *wr_of(const struct parked *p)
{
	return (struct wr *)p->buf;
}

/* A parked read()'s own, in its room. */
struct rd {
	size_t size;	 /* room in the reader's buffer */
	struct want w;	 /* the completions it may take */
	bool unresolved; /* pack_id forced but not read yet (resolver) */
	bool nonblock;	 /* O_NONBLOCK, once pack_id is known */
};

static inline struct rd *rd_of(const struct parked *p)
{
	return (struct rd *)p->buf;
}

static const struct parked_ops read_ops;

/* Caller holds o->lock: would a parked writer get on now? */
static bool writer_ready(struct opener *o, const struct parked *p)
{
	assert_held(&o->lock);
	(void)p;
	return o->queued < cmdq_queue_limit(o, 4) || atomic_load(&o->d->target_gone);
}

static void write_room(struct opener *o);

static const struct parked_ops write_ops = { .ready = writer_ready, .room = write_room };

/*
 * Take what fits of a v4 array into b.  Bytes taken, or -errno if none was,
 * or CMD_ANSWERED (b then cancelled: the write got EFAULT).
 */
static long submit_headers(struct opener *o, fuse_req_t req, pid_t tid, const unsigned char *buf,
			   size_t len, struct batch *b)
{
	const struct origin from = { .owner = o->ident.c.tgid };
	size_t hdr_len = SCSI_V4_HDR_LEN, off;
	int err = 0;

	for (off = 0; off + hdr_len <= len; off += hdr_len) {
		err = cmdq_submit_one(o, req, tid, buf + off, hdr_len, b, &from, NULL);
		if (err)
			break;
	}
	if (err == CMD_ANSWERED) {
		cmdq_batch_cancel(o, b);
		return err;
	}
	return off ? (long)off : err;
}

/*
 * A blocking write of size bytes of headers, to wait for room: its copy,
 * charged to o; or NULL, with *err -ENOMEM past a memory bound (sg's answer
 * when it cannot allocate).  Mapped, so that its pages go back to the
 * system with it: malloc() keeps what a burst of writers took.
 */
static struct parked *parked_write(struct opener *o, fuse_req_t req, pid_t tid, const char *buf,
				   size_t size, long *err)
{
	size_t len = sizeof(struct parked) + sizeof(struct wr) + size;
	struct parked *p;

	*err = opener_mem_charge_for(o, size, "a blocked write()'s headers");
	if (*err)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		opener_mem_uncharge(o, size);
		*err = -ENOMEM;
		return NULL;
	}
	*p = (struct parked){
		.ops = &write_ops, .req = req, .tid = tid, .charged = size, .mapped = len
	};
	wr_of(p)->len = size;
	memcpy(wr_of(p)->hdrs, buf, size);
	return p;
}

static void write_v4(fuse_req_t req, struct opener *o, pid_t tid, const char *buf, size_t size,
		     int flags)
{
	struct batch b;
	struct parked *p = NULL;
	long n;

	cmdq_batch_init(&b);
	/* bsg took whole arrays only; a piece of a longer write may end inside
	 * a header: its whole headers are taken and the write is short, so
	 * the writer sends the rest again from a header's start */
	if (size < SCSI_V4_HDR_LEN || (size % SCSI_V4_HDR_LEN && size < SPLIT_PIECE_MIN)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	for (;;) {
		n = submit_headers(o, req, tid, (const unsigned char *)buf, size, &b);
		if (n != -EAGAIN || (flags & O_NONBLOCK))
			break;
		/* a blocking writer waits for room without holding a libfuse worker;
		 * its headers' copy is charged as a command's buffer is */
		if (!p)
			p = parked_write(o, req, tid, buf, size, &n);
		if (!p)
			break;
		if (park_add(o, &o->writers, p, false) != READY)
			return;
	}
	park_free(o, p);
	if (n == CMD_ANSWERED)
		return;
	if (n < 0)
		fuse_reply_err(req, -n);
	else
		fuse_reply_write(req, n);
	cmdq_batch_start(&b);
}

void async_write(fuse_req_t req, struct opener *o, const char *buf, size_t size, int flags)
{
	pid_t tid = fuse_req_ctx(req)->pid;
	struct batch b;
	int version, err, reply_len;

	cmdq_batch_init(&b);
	err = opener_check_caller(o, tid, "write()");
	if (!err && atomic_load(&o->d->target_gone))
		err = -ENODEV;
	if (!err)
		err = chans_open(o);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	version = scsi_peek_version(buf, size);
	if (version == 4) {
		write_v4(req, o, tid, buf, size, flags);
		return;
	}
	/* sg: the second int tells the v3 header (negative) from sg_header */
	if (size < SG_HEADER_LEN) {
		fuse_reply_err(req, -cmdq_short_call(tid, true, size, SG_HEADER_LEN, -EIO));
		return;
	}
	memcpy(&reply_len, buf + SG_HEADER_REPLY_LEN_AT, sizeof(reply_len));
	if (version < 0 && reply_len >= 0) {
		bsgdev_debug(o->d, "tid %d: legacy sg_header write() refused", tid);
		fuse_reply_err(req, EINVAL);
		return;
	}
	const struct origin from = { .owner = o->ident.c.tgid };
	err = size < SCSI_V3_HDR_LEN
		      ? cmdq_short_call(tid, true, size, SCSI_V3_HDR_LEN, -EINVAL)
		      : cmdq_submit_one(o, req, tid, buf, SCSI_V3_HDR_LEN, &b, &from, NULL);
	if (err == CMD_ANSWERED)
		return;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size); /* sg takes one header and says count */
	cmdq_batch_start(&b);
}

/* The want of a read() of pack_id (-1: any): the opener's process is the reader's. */
static struct want read_want(const struct opener *o, int pack_id)
{
	return (struct want){ .id = pack_id, .owner = o->ident.c.tgid };
}

/*
 * SG_SET_FORCE_PACK_ID: sg reads the pack_id a reader wants from the header
 * in its buffer.  FUSE_READ carries neither, so the buffer comes from
 * /proc/TID/syscall, which says "running" until the reader has gone to
 * sleep in its call.  Such a read waits parked, unresolved, and the
 * daemon's resolver thread looks again each millisecond, for at most
 * RESOLVE_MS: no libfuse worker or pool worker ever waits for it.
 */
#define RESOLVE_MS 2000

/*
 * The pack_id at buf in tid's memory (vector: in the first buffer of the
 * iovec array at buf), as sg reads it; -1 (any) if unreadable.
 */
static int pack_id_at(struct opener *o, pid_t tid, int err, uint64_t buf, bool vector)
{
	int reply_len, pack_id;

	if (!err && vector)
		err = uaccess_vector_base(tid, buf, &buf);
	if (!err)
		err = uaccess_read(tid, buf + SG_HEADER_REPLY_LEN_AT, &reply_len,
				   sizeof(reply_len));
	if (!err) {
		size_t at = reply_len < 0 ? SG_IO_HDR_PACK_ID_AT : SG_HEADER_PACK_ID_AT;

		err = uaccess_read(tid, buf + at, &pack_id, sizeof(pack_id));
	}
	if (!err)
		return pack_id;
	bsgdev_debug(o->d, "tid %d: no pack_id in its read buffer (%s): any completion will do",
		     tid, strerror(-err));
	return -1;
}

/* A parked read whose pack_id the resolver looks for; holds a reference to o. */
struct resolve_job {
	struct list_head node; /* in the resolver's jobs */
	struct opener *o;
	fuse_req_t req;
	pid_t tid;
	struct timespec since;
};

struct resolver {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct list_head jobs; /* protected by lock: newest first */
	bool stop;	       /* protected by lock */
};

static bool pack_id_guarded(struct opener *o, fuse_req_t req, pid_t tid, int err, uint64_t buf,
			    bool vector, int *ret);
static void read_go(struct opener *o, fuse_req_t req, pid_t tid, size_t size, int flags,
		    int pack_id, bool unresolved);

/* Take the parked unresolved read of req back from its list: NULL if it is gone. */
static struct parked *claim_unresolved(struct opener *o, fuse_req_t req, pid_t tid)
{
	struct parked *p = NULL, *it;

	pthread_mutex_lock(&o->lock);
	list_for_each_entry(it, &o->readers, node) {
		if (it->ops == &read_ops && it->req == req && it->tid == tid &&
		    rd_of(it)->unresolved) {
			p = it;
			list_del(&p->node);
			break;
		}
	}
	pthread_mutex_unlock(&o->lock);
	if (p)
		park_taken(p); /* from here on, nobody else answers it */
	return p;
}

/*
 * The parked read of req by tid, its buffer found at buf (or err; -ESRCH:
 * take any completion, its memory unread): the read is claimed, its
 * pack_id read from its buffer, then the rest of the read done.  It reads
 * and writes the reader's memory: a copy job where the daemon has them
 * (d->serve), parked for its share with the read still parked, so still
 * answerable to a signal, and claimed only when it runs.
 */
struct resume {
	struct opener *o; /* a reference */
	fuse_req_t req;
	pid_t tid;
	int err;
	uint64_t buf;
	bool vector;
};

static void resume_here(struct resume *r)
{
	struct parked *p = claim_unresolved(r->o, r->req, r->tid);
	int pack_id = -1;

	if (!p)
		return; /* interrupted meanwhile: answered */
	if (r->err == -ESRCH ||
	    pack_id_guarded(r->o, p->req, p->tid, r->err, r->buf, r->vector, &pack_id))
		read_go(r->o, p->req, p->tid, rd_of(p)->size, rd_of(p)->nonblock ? O_NONBLOCK : 0,
			r->err == -ESRCH ? -1 : pack_id, false);
	free(p);
}

/* resume_read()'s copy job. */
struct resume_job {
	struct copy_job c;
	struct resume r;
};

static void resume_copy(struct copy_job *c)
{
	struct resume_job *j = container_of(c, struct resume_job, c);

	resume_here(&j->r);
	opener_put(j->r.o);
	free(j);
}

/* The read stays parked: its file's release, or the node's end, answers it. */
static void resume_dropped(struct copy_job *c)
{
	struct resume_job *j = container_of(c, struct resume_job, c);

	opener_put(j->r.o);
	free(j);
}

static void resume_job_init(struct resume_job *j, const struct resume *r)
{
	j->r = *r;
	j->c = (struct copy_job){ .o = r->o, .run = resume_copy, .drop = resume_dropped };
}

static void resume_read(struct opener *o, fuse_req_t req, pid_t tid, int err, uint64_t buf,
			bool vector)
{
	struct resume r = {
		.o = o, .req = req, .tid = tid, .err = err, .buf = buf, .vector = vector
	};
	struct resume_job *j;

	if (!o->d->serve) {
		resume_here(&r);
		return;
	}
	j = malloc(sizeof(*j));
	if (!j) {
		struct parked *p = claim_unresolved(o, req, tid);

		if (p) {
			fuse_reply_err(p->req, ENOMEM);
			free(p);
		}
		return;
	}
	opener_get(o);
	resume_job_init(j, &r);
	copyjob_submit(&j->c);
}

/* No resolver (any more): the read takes any completion. */
static void resolve_now(struct opener *o, fuse_req_t req, pid_t tid)
{
	resume_read(o, req, tid, -ESRCH, 0, false);
}

/*
 * One look for job's pack_id: true once it is done with.  Its /proc file
 * only: the reader's memory is read by the resumed read, on a thread of
 * the reader's share, never on this one that every opener shares.
 */
static bool resolve_one(struct resolve_job *job)
{
	uint64_t buf = 0;
	bool vector = false;
	int err = uaccess_read_buffer(job->tid, &buf, &vector);

	if (err == -EAGAIN && cmd_elapsed_ms(&job->since) < RESOLVE_MS)
		return false;
	resume_read(job->o, job->req, job->tid, err, buf, vector);
	return true;
}

static void *resolver_main(void *arg)
{
	struct bsgdev *d = arg;
	struct resolver *r = d->resolver;
	struct list_head left;
	struct resolve_job *job, *next;

	pthread_setname_np(pthread_self(), "bsg-resolver"); /* top -H, ps -L */
	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		struct timespec tick;

		if (list_empty(&r->jobs)) {
			pthread_cond_wait(&r->cond, &r->lock);
			continue;
		}
		tick = deadline_ms(CLOCK_REALTIME, 1);
		pthread_cond_timedwait(&r->cond, &r->lock, &tick);
		list_init(&left);
		list_splice_tail(&r->jobs, &left);
		pthread_mutex_unlock(&r->lock);
		list_for_each_entry_safe(job, next, &left, node) {
			if (!resolve_one(job))
				continue;
			list_del(&job->node);
			opener_put(job->o);
			free(job);
		}
		/* those left go back in front of the ones added meanwhile */
		pthread_mutex_lock(&r->lock);
		list_splice_tail(&r->jobs, &left);
		list_splice_tail(&left, &r->jobs);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* d's resolver, started at its first use.  NULL if it cannot be. */
static struct resolver *resolver_get(struct bsgdev *d)
{
	struct resolver *r;

	pthread_mutex_lock(&d->openers_lock);
	r = d->resolver;
	if (!r && (r = calloc(1, sizeof(*r)))) {
		list_init(&r->jobs);
		pthread_mutex_init(&r->lock, NULL);
		pthread_cond_init(&r->cond, NULL);
		d->resolver = r;
		if (pthread_create(&r->thread, NULL, resolver_main, d)) {
			d->resolver = NULL;
			pthread_cond_destroy(&r->cond);
			pthread_mutex_destroy(&r->lock);
			free(r);
			r = NULL;
		}
	}
	pthread_mutex_unlock(&d->openers_lock);
	return r;
}

/* Hand the parked unresolved read of req to the resolver.  False if it cannot take it. */
static bool resolve_later(struct opener *o, fuse_req_t req, pid_t tid)
{
	struct resolver *r = resolver_get(o->d);
	struct resolve_job *job = r ? malloc(sizeof(*job)) : NULL;

	if (!job)
		return false;
	*job = (struct resolve_job){ .o = o, .req = req, .tid = tid };
	clock_gettime(TICK_CLOCK, &job->since);
	opener_get(o);
	pthread_mutex_lock(&r->lock);
	list_add(&job->node, &r->jobs);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return true;
}

void async_bsgdev_fini(struct bsgdev *d)
{
	struct resolver *r = d->resolver;
	struct resolve_job *job, *next;

	sigwatch_free(atomic_exchange(&d->sigwatch, NULL)); /* a call still watched: EINTR */
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	list_for_each_entry_safe(job, next, &r->jobs, node) {
		resolve_now(job->o, job->req, job->tid); /* still parked: any completion */
		opener_put(job->o);
		free(job);
	}
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
	d->resolver = NULL;
}

/* pack_id_at() for req, guarded: false if req was answered (EFAULT). */
static bool pack_id_guarded(struct opener *o, fuse_req_t req, pid_t tid, int err, uint64_t buf,
			    bool vector, int *ret)
{
	struct guard g;

	if (guard_begin(o->d->wd, &g, req, tid, &o->stuck)) {
		fuse_reply_err(req, EFAULT);
		return false;
	}
	*ret = pack_id_at(o, tid, err, buf, vector);
	return guard_end(o->d->wd, &g);
}

/*
 * Answer a read() of req by tid (size bytes of room) with the n completions
 * taken (done_hand_over()): the headers are its answer.  True if any was
 * given back.
 */
static bool read_deliver(struct opener *o, fuse_req_t req, pid_t tid, size_t size,
			 struct cmd **cmds, unsigned n)
{
	unsigned char out[READ_MAX_HDRS * SCSI_V4_HDR_LEN];
	struct done_call c = { .req = req, .tid = tid, .out = out };
	struct done_answer a;

	if (cmds[0]->r.hdr_len > size) /* sg drops the completion too */
		c.err = cmdq_short_call(tid, false, size, cmds[0]->r.hdr_len, -EINVAL);
	a = done_hand_over(o, &c, cmds, n);
	if (a.mine && a.len)
		fuse_reply_buf(req, (const char *)out, a.len);
	else if (a.mine)
		fuse_reply_err(req, -a.err);
	cmdq_room(o);
	return a.back;
}

/*
 * What a read may take now: up to size bytes of o's completions w names,
 * into cmds (how many; none while its pack_id is unresolved), holding o for
 * their delivery; none taken, *gone says whether it ends ENODEV.
 */
static unsigned read_take(struct opener *o, const struct want *w, size_t size, bool unresolved,
			  struct cmd **cmds, bool *gone)
{
	unsigned n;

	pthread_mutex_lock(&o->lock);
	n = unresolved ? 0 : done_take(o, w, size, cmds);
	if (n)
		opener_get_locked(o); /* read_deliver() goes on after its answer, when the
			    * client may already have closed the file */
	*gone = !n && atomic_load(&o->d->target_gone) && (unresolved || !done_still_running(o, w));
	pthread_mutex_unlock(&o->lock);
	return n;
}

/*
 * A parked read().  A reader of a gone target waits for what is still
 * running, as sg's does: each command written gets its header, ENODEV only
 * once none is left.  One whose pack_id is not read yet (the resolver's)
 * takes nothing here.
 */
static bool read_parked_ready(struct opener *o, const struct parked *p)
{
	const struct rd *r = rd_of(p);

	assert_held(&o->lock);
	if (r->unresolved)
		return atomic_load(&o->d->target_gone);
	return done_oldest(o, &r->w) != NULL ||
	       (atomic_load(&o->d->target_gone) && !done_still_running(o, &r->w));
}

static bool read_parked_take(struct opener *o, struct parked *p, struct cmd **cmds, unsigned *n,
			     int *res)
{
	struct rd *r = rd_of(p);

	assert_held(&o->lock);
	if (r->unresolved)
		return false;
	*res = 0;
	*n = done_take(o, &r->w, r->size, cmds);
	return *n > 0;
}

static void read_parked_answer(struct opener *o, struct parked *p, struct cmd **cmds, unsigned n,
			       int res)
{
	(void)res;
	read_deliver(o, p->req, p->tid, rd_of(p)->size, cmds, n);
}

static bool read_parked_gone(struct opener *o, const struct parked *p)
{
	const struct rd *r = rd_of(p);

	assert_held(&o->lock);
	return r->unresolved || (!done_oldest(o, &r->w) && !done_still_running(o, &r->w));
}

static const struct parked_ops read_ops = {
	.ready = read_parked_ready,
	.take = read_parked_take,
	.answer = read_parked_answer,
	.gone = read_parked_gone,
};

/* The read, to park: in p, or a new one if p is NULL; NULL if req was answered ENOMEM. */
static struct parked *read_parked(struct parked *p, fuse_req_t req, pid_t tid, size_t size,
				  const struct want *w, bool unresolved, int flags)
{
	if (!p)
		p = malloc(sizeof(*p) + sizeof(struct rd));
	if (!p) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	*p = (struct parked){ .ops = &read_ops, .req = req, .tid = tid };
	*rd_of(p) = (struct rd){
		.size = size, .w = *w, .unresolved = unresolved, .nonblock = flags & O_NONBLOCK
	};
	return p;
}

/* The rest of a read: a completion of pack_id now, EAGAIN, ENODEV, or parked. */
static void read_go(struct opener *o, fuse_req_t req, pid_t tid, size_t size, int flags,
		    int pack_id, bool unresolved)
{
	struct cmd *cmds[READ_MAX_HDRS];
	struct want w = read_want(o, pack_id);
	struct parked *p = NULL;
	unsigned n;
	bool gone;

	for (;;) {
		n = read_take(o, &w, size, unresolved, cmds, &gone);
		if (n) {
			free(p);
			if (read_deliver(o, req, tid, size, cmds, n))
				cmdq_serve_readers(o);
			opener_put(o);
			return;
		}
		/* sg: EAGAIN whenever nothing is done, detaching or not */
		if (((flags & O_NONBLOCK) && !unresolved) || gone) {
			free(p);
			fuse_reply_err(req, flags & O_NONBLOCK ? EAGAIN : ENODEV);
			return;
		}
		p = read_parked(p, req, tid, size, &w, unresolved, flags);
		if (!p)
			return;
		switch (park_add(o, &o->readers, p, false)) {
		case PARKED:
			if (unresolved && !resolve_later(o, req, tid))
				resolve_now(o, req, tid);
			return;
		case ANSWERED:
			return;
		case READY:
			break;
		}
	}
}

void async_read(fuse_req_t req, struct opener *o, size_t size, int flags)
{
	pid_t tid = fuse_req_ctx(req)->pid;
	int err, pack_id = -1;
	bool unresolved = false;

	err = opener_check_caller(o, tid, "read()");
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	if (atomic_load(&o->force_pack_id)) {
		uint64_t buf;
		bool vector = false;

		err = uaccess_read_buffer(tid, &buf, &vector);
		unresolved = err == -EAGAIN;
		if (!unresolved && !pack_id_guarded(o, req, tid, err, buf, vector, &pack_id))
			return;
	}
	read_go(o, req, tid, size, flags, pack_id, unresolved);
}

/* The queue has room again: the parked writers go on, oldest first (write_ops.room). */
static void write_room(struct opener *o)
{
	struct batch b;
	struct parked *p;
	long n;

	cmdq_batch_init(&b);
	for (;;) {
		pthread_mutex_lock(&o->lock);
		p = list_first_entry_or_null(&o->writers, struct parked, node);
		if (p && o->queued < cmdq_queue_limit(o, 4))
			list_del(&p->node);
		else
			p = NULL;
		pthread_mutex_unlock(&o->lock);
		if (!p)
			break;
		park_taken(p);
		n = submit_headers(o, p->req, p->tid, wr_of(p)->hdrs, wr_of(p)->len, &b);
		/* filled again meanwhile: wait on, first in line */
		if (n == -EAGAIN && park_add(o, &o->writers, p, true) != READY)
			break;
		if (n == -EAGAIN) {
			pthread_mutex_lock(&o->lock);
			list_add(&p->node, &o->writers); /* READY: taken again at the top */
			pthread_mutex_unlock(&o->lock);
			continue;
		}
		park_uncharge(o, p);
		if (n == CMD_ANSWERED)
			; /* the watchdog answered it */
		else if (n < 0)
			fuse_reply_err(p->req, -n);
		else
			fuse_reply_write(p->req, n);
		cmdq_batch_start(&b);
		park_dispose(p);
	}
}

void async_poll(fuse_req_t req, struct opener *o, struct fuse_pollhandle *ph)
{
	struct fuse_pollhandle *old = NULL;
	unsigned revents = 0;

	pthread_mutex_lock(&o->lock);
	if (ph) {
		old = o->ph;
		o->ph = ph; /* one notification wakes every poller of the file */
	}
	if (o->done)
		revents |= POLLIN | POLLRDNORM;
	if (atomic_load(&o->d->target_gone))
		revents |= POLLHUP | POLLERR; /* sg: the device is detaching */
	else if (o->queued < cmdq_poll_limit(o))
		revents |= POLLOUT | POLLWRNORM;
	pthread_mutex_unlock(&o->lock);
	if (old)
		fuse_pollhandle_destroy(old);
	fuse_reply_poll(req, revents);
}
