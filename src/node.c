// SPDX-License-Identifier: GPL-2.0-only
/*
 * One served node: its target, struct bsgdev and CUSE session.  The CUSE
 * callbacks below are thin trampolines.  None waits on a condition; the
 * one that may block on the device is SG_IO, which runs its command on the
 * worker that received it while few workers do so (INLINE_MAX) and hands
 * it to the pool past that, so that workers stay free to read interrupts.
 * A copy of a client's memory may stall a worker too, for as long as the
 * client's memory makes it wait: so every read, write and ioctl holds a
 * share of the threads, its open file's and its user's (share.h), and past
 * either waits parked, with no thread, so that such a stall holds only the
 * staller's share.  Each node has its own /dev/cuse descriptor and its own
 * thread running libfuse's multi-threaded loop.  libfuse's workers read requests
 * through node_read(), which also waits on the node's stop eventfd, so that
 * node_stop() ends every worker of this session, and only those, from any
 * thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <fuse3/cuse_lowlevel.h>
#include <linux/fuse.h>

#include "async.h"
#include "bsgdev.h"
#include "cmdq.h"
#include "control.h"
#include "copyjob.h"
#include "gate.h"
#include "guard.h"
#include "ioctl.h"
#include "ioctx.h"
#include "node.h"
#include "opener.h"
#include "policy.h"
#include "pool.h"
#include "share.h"
#include "sigwatch.h"
#include "uaccess.h"
#include "udev.h"

#define SG_MAJOR     21 /* the sg driver's char major, which sg_dd and sgp_dd test for */
#define NODE_WAIT_MS 5000
#define NODE_UDEV_S  60 /* for udevd to run its rules on the new node */
/*
 * libfuse workers at most.  Many, so that workers held in a copy of a
 * client's memory that stalls (guard.h) leave plenty for everyone else;
 * INLINE_MAX of them at most run a command themselves.
 */
#define FUSE_THREADS 128
/*
 * Of those, how many may wait idle: one more, idle for FUSE_IDLE_MS,
 * leaves (node_read()), so that a burst's workers and their descriptors go
 * back once it is over.
 */
#define FUSE_IDLE_THREADS 16
#define FUSE_IDLE_MS	  2000
#define INLINE_MAX	  12
#define SERVE_MAX	  256 /* threads of the elastic pool (d->serve) at most */

struct node {
	struct bsgdev d;     /* first: the callbacks' userdata is the node */
	struct control *ctl; /* --control: files bind to devices; d has no target */
	bool stuck;	     /* its session ended with a copy still stalled: leave it */
	const struct node_config *cfg;
	char name[128];
	/* --shared-queue: every open file is this one opener, as bsg before 4.19 */
	pthread_mutex_t shared_lock;
	struct opener *shared;	      /* protected by shared_lock */
	struct share_file *shared_sf; /* protected by shared_lock: its own, while it lives */
	unsigned shared_files;	      /* protected by shared_lock */
	struct fuse_session *se;
	int stopfd;	     /* written once by node_stop(): every worker returns */
	atomic_uint waiting; /* libfuse workers waiting for a request in node_read() */
	atomic_bool trimmed; /* no request since the heap was last trimmed (node_read()) */
	pthread_t thread;
	bool thread_started; /* protected by lock */
	node_ended_fn *ended;
	void *ended_arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool up;		  /* protected by lock: /dev/NAME exists with its owner and mode */
	bool armed;		  /* protected by lock: cfg->gate checks dev's files (gate.h) */
	dev_t dev;		  /* the node's number, once armed */
	bool stopping;		  /* protected by lock: the session is ending, or se is gone */
	bool over;		  /* protected by lock: the session has ended */
	atomic_bool removed;	  /* udev said the device went */
	atomic_bool warned_files; /* an open past the bounds on open files was logged */
	atomic_bool warned_park;  /* a call refused its parking by --max-memory was logged */
	int start_err;		  /* why the node did not come up, if known */
	int result;		  /* protected by lock: the loop's, once over */
};

#define to_node(dp) ((struct node *)((char *)(dp)-offsetof(struct node, d)))

/* An open file of the node, as fi->fh says. */
struct node_file {
	void *file;	       /* its struct opener, or a control node's struct control_file */
	struct share_file *sf; /* its count of open files and of calls holding a thread */
};

enum call_kind { CALL_READ, CALL_WRITE, CALL_IOCTL };

/* One read(), write() or ioctl() call as libfuse hands it over. */
struct call {
	enum call_kind kind;
	fuse_req_t req;
	struct fuse_file_info fi;
	int cmd;
	void *arg;
	unsigned flags;
	const void *buf; /* write()'s bytes, ioctl()'s in_buf */
	size_t len;	 /* their length; read()'s size */
	size_t out_len;	 /* ioctl()'s out_bufsz */
};

/*
 * A call past its file's or its user's share of threads (share.h): parked
 * with a copy of what libfuse gave, and no thread, until a share comes
 * free; then run on a thread of the elastic pool.
 */
struct parked {
	struct share_wait w;
	struct pool_work work;
	struct node *n;
	struct call c;
	struct sigwatch_entry watch; /* interrupted by a signal that ends nothing (sigwatch.h) */
	uint64_t charged;	     /* bytes charged to the process's memory bound */
	uint64_t user_charged;	     /* and to its user's (share_mem_charge()) */
	char buf[];
};

static struct node *req_node(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct bsgdev *req_daemon(fuse_req_t req)
{
	return &req_node(req)->d;
}

static struct node_file *fi_file(const struct fuse_file_info *fi)
{
	return (struct node_file *)(uintptr_t)fi->fh;
}

static struct opener *fi_opener(const struct fuse_file_info *fi)
{
	return fi_file(fi)->file;
}

/* The last file of o is gone (with --shared-queue, maybe not yet). */
static void release_shared(struct node *n, struct opener *o)
{
	struct share_file *sf = NULL;
	bool last = true;

	if (n->cfg->shared_queue) {
		pthread_mutex_lock(&n->shared_lock);
		if (n->shared == o) {
			last = --n->shared_files == 0;
			if (last) {
				n->shared = NULL;
				sf = n->shared_sf;
				n->shared_sf = NULL;
			}
		}
		pthread_mutex_unlock(&n->shared_lock);
	}
	if (last)
		cmdq_release(o);
	if (sf)
		share_file_close(sf); /* after the release: nothing parks on it now */
}

static void set_file(struct fuse_file_info *fi, void *file)
{
	fi->fh = (uintptr_t)file;
	fi->nonseekable = 1; /* sg uses nonseekable_open(): pread/pwrite get ESPIPE */
	fi->direct_io = 1;
}

/* A new opener for the file being opened: 0, or the errno to answer. */
static int file_opener_new(fuse_req_t req, struct fuse_file_info *fi, struct opener **ret)
{
	return opener_new(req_daemon(req), fi->flags, req_node(req)->cfg->shared_queue,
			  fuse_req_ctx(req)->pid, NULL, ret);
}

/*
 * --shared-queue: pre-4.19 bsg kept one queue per device, so that any
 * opener could read any other's completions.  Reproduced on request, to
 * show that flaw: every file opened shares one opener, made by the first
 * open under the lock, so that two first opens at once still share it.
 */
static int open_shared(fuse_req_t req, struct fuse_file_info *fi, struct opener **ret)
{
	struct node *n = req_node(req);
	int err = 0;

	pthread_mutex_lock(&n->shared_lock);
	if (!n->shared) {
		uid_t uid = fuse_req_ctx(req)->uid;

		err = file_opener_new(req, fi, &n->shared);
		/* the queue's own file in the shares, its first opener's: copies
		 * into any of its readers hold that file's share of threads */
		if (!err && share_file_open(n->cfg->share, uid, &n->shared_sf)) {
			cmdq_release(n->shared);
			n->shared = NULL;
			err = ENOMEM;
		} else if (!err) {
			cmdq_set_share(n->shared, n->cfg->share, n->shared_sf, uid);
		}
	}
	if (!err) {
		n->shared_files++;
		*ret = n->shared;
	}
	pthread_mutex_unlock(&n->shared_lock);
	return err;
}

static int open_file(fuse_req_t req, struct fuse_file_info *fi, void **ret)
{
	struct node *n = req_node(req);

	if (n->ctl)
		return control_open(n->ctl, fuse_req_ctx(req)->pid, fi->flags,
				    (struct control_file **)ret);
	if (n->cfg->shared_queue)
		return open_shared(req, fi, (struct opener **)ret);
	return file_opener_new(req, fi, (struct opener **)ret);
}

static void release_file(struct node *n, struct fuse_file_info *fi)
{
	struct node_file *nf = fi_file(fi);

	if (n->ctl)
		control_release(n->ctl, nf->file);
	else
		release_shared(n, nf->file);
	share_file_close(nf->sf);
	free(nf);
}

/*
 * uid's new file, counted in its share: 0 or the errno to answer.  sg's
 * only limit on open files is memory (sg_add_sfp()): ENOMEM.
 */
static int count_file(struct node *n, uid_t uid, struct node_file *nf)
{
	int err = share_file_open(n->cfg->share, uid, &nf->sf);

	if (!err) {
		atomic_store_explicit(&n->warned_files, false, memory_order_relaxed);
		return 0;
	}
	if (err != -ENOMEM && !atomic_exchange(&n->warned_files, true))
		log_node(LOG_WARNING, n->name, "uid %u: open refused: %s: ENOMEM", (unsigned)uid,
			 err == -EMFILE ? "its files open are at --max-files-per-user"
					: "the daemon's files open are at --max-files");
	return ENOMEM;
}

/*
 * The node exists before init_done has armed the gate: an open waits for
 * it, so that no file of the node is ever read or written unchecked by
 * the kernel.  0, or ENODEV: the node ends first.
 */
static int wait_armed(struct node *n)
{
	bool armed;

	if (!n->cfg->gate)
		return 0;
	pthread_mutex_lock(&n->lock);
	while (!n->armed && !n->stopping && !n->over)
		pthread_cond_wait(&n->cond, &n->lock);
	armed = n->armed;
	pthread_mutex_unlock(&n->lock);
	return armed ? 0 : ENODEV;
}

static void cb_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct node *n = req_node(req);
	struct node_file *nf = calloc(1, sizeof(*nf));
	int err;

	stat_inc(&n->d, STAT_OPEN);
	err = wait_armed(n);
	if (!err)
		err = nf ? count_file(n, fuse_req_ctx(req)->uid, nf) : ENOMEM;
	if (!err) {
		err = open_file(req, fi, &nf->file);
		if (err)
			share_file_close(nf->sf);
		else if (n->ctl)
			control_set_share(nf->file, n->cfg->share, nf->sf, fuse_req_ctx(req)->uid);
		/* a shared opener outlives its first file: it has a share of its own */
		else if (!n->cfg->shared_queue)
			cmdq_set_share(nf->file, n->cfg->share, nf->sf, fuse_req_ctx(req)->uid);
	}
	if (err) {
		free(nf);
		fuse_reply_err(req, err);
		return;
	}
	set_file(fi, nf);
	if (fuse_reply_open(req, fi) < 0)
		release_file(n, fi);
}

/* Last reference to the file gone: no call of it can be in flight. */
static void cb_release(fuse_req_t req, struct fuse_file_info *fi)
{
	stat_inc(req_daemon(req), STAT_RELEASE);
	release_file(req_node(req), fi);
	fuse_reply_err(req, 0);
}

/*
 * The opener of fi; NULL for a control node's file not bound yet, whose
 * calls get ENXIO as on bsg's control node (poll: POLLERR).
 */
static struct opener *file_opener(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct node *n = req_node(req);

	if (n->ctl)
		return control_opener(fi_file(fi)->file);
	return fi_opener(fi);
}

static void run_ioctl(struct node *n, struct call *c, struct opener *o)
{
	struct ioctx x = {
		.req = c->req,
		.o = o,
		.arg = (uintptr_t)c->arg,
		.in_buf = c->buf,
		.in_len = c->len,
		.out_len = c->out_len,
		.tid = fuse_req_ctx(c->req)->pid,
	};

	x.direct = n->d.direct && x.tid > 0; /* 0: caller outside our pid namespace */
	if (n->ctl)
		control_ioctl(n->ctl, fi_file(&c->fi)->file, &x, (unsigned)c->cmd, c->flags);
	else
		ioctl_dispatch(&x, (unsigned)c->cmd, c->flags);
}

/*
 * fi->flags is the file's flags now: O_NONBLOCK set later by fcntl() shows.
 * The call holds its opener while it runs: once the watchdog has answered
 * it (guard.h), its client may close the file, whose release then lets go
 * of the opener while this thread still waits in a copy.
 */
static void run_call(struct node *n, struct call *c)
{
	struct opener *o = file_opener(c->req, &c->fi);

	if (o)
		opener_get(o);
	if (c->kind == CALL_IOCTL)
		run_ioctl(n, c, o);
	else if (!o)
		fuse_reply_err(c->req, ENXIO);
	else if (c->kind == CALL_READ)
		async_read(c->req, o, c->len, c->fi.flags);
	else
		async_write(c->req, o, c->buf, c->len, c->fi.flags);
	if (o)
		opener_put(o);
}

/* Run c on this thread, which holds its share, then give the share back. */
static void run_held(struct node *n, struct call *c, struct share_call *held)
{
	share_set_current(held);
	run_call(n, c);
	share_set_current(NULL);
	share_end(held);
}

static void parked_free(struct parked *p)
{
	if (p->charged)
		atomic_fetch_sub(&p->n->d.mem->used, p->charged);
	if (p->user_charged)
		share_mem_uncharge(p->n->cfg->share, p->w.uid, p->user_charged);
	free(p);
}

/* On a thread of the elastic pool, holding the share the call was given. */
static void parked_run(struct pool_work *work, unsigned slot)
{
	struct parked *p = container_of(work, struct parked, work);

	(void)slot;
	/* waits out an interrupt callback running now; it sees the call running */
	fuse_req_interrupt_func(p->c.req, NULL, NULL);
	sigwatch_cancel(&p->watch);
	run_held(p->n, &p->c, &p->w.call);
	parked_free(p);
}

static void parked_resume(struct share_wait *w)
{
	struct parked *p = container_of(w, struct parked, w);

	pool_submit(p->n->d.serve, &p->work);
}

/* The call of p, parked, is the caller's now (share_cancel()): EINTR. */
static void parked_eintr(struct parked *p)
{
	stat_inc(&p->n->d, STAT_INTERRUPT);
	fuse_reply_err(p->c.req, EINTR);
	parked_free(p);
}

/* The signal watcher's: a signal that ends the call is pending now. */
static void parked_fired(fuse_req_t req, void *data)
{
	struct parked *p = data;

	if (!share_cancel(p->n->cfg->share, &p->w))
		return;				  /* running, or answered by whoever cancelled it */
	fuse_req_interrupt_func(req, NULL, NULL); /* waits out the interrupt callback */
	parked_eintr(p);
}

/*
 * Called by libfuse with its request lock held; only a parked call is
 * answered here.  As sg's own sleeps, only a signal that runs a handler or
 * kills ends it; after another (a stop) it stays parked, watched so that a
 * later one ends it (FUSE sends one interrupt per request).
 */
static void parked_interrupted(fuse_req_t req, void *data)
{
	struct parked *p = data;
	struct node *n = p->n;

	if (!bsgdev_signal_ends(&n->d, fuse_req_ctx(req)->pid)) {
		p->watch = (struct sigwatch_entry){
			.req = req, .tid = fuse_req_ctx(req)->pid, .fire = parked_fired, .data = p
		};
		if (!sigwatch_watch(&n->d.sigwatch, n->d.signal_ends, &p->watch))
			return; /* p may be answered (freed) by the watcher already */
		p->watch = (struct sigwatch_entry){ 0 };
	}
	if (!share_cancel(n->cfg->share, &p->w))
		return;
	parked_eintr(p);
}

/*
 * A copy of c to park, charged to the process's and uid's memory bounds;
 * NULL past either, *which saying whose.
 */
static struct parked *parked_new(struct node *n, const struct call *c, uid_t uid,
				 const char **which)
{
	struct mem_budget *m = n->d.mem;
	struct share *s = n->cfg->share;
	size_t len = c->kind == CALL_READ ? 0 : c->len;
	uint64_t size = sizeof(struct parked) + len;
	struct parked *p = NULL;

	*which = "the daemon's";
	if (m && atomic_fetch_add(&m->used, size) + size > m->max) {
		atomic_fetch_sub(&m->used, size);
		return NULL;
	}
	if (s && share_mem_charge(s, uid, size)) {
		*which = "its user's";
	} else {
		p = malloc(size);
		if (!p && s)
			share_mem_uncharge(s, uid, size);
	}
	if (!p) {
		if (m)
			atomic_fetch_sub(&m->used, size);
		return NULL;
	}
	p->n = n;
	p->c = *c;
	p->charged = m ? size : 0;
	p->user_charged = s ? size : 0;
	if (len)
		memcpy(p->buf, c->buf, len);
	p->c.buf = p->buf;
	p->w = (struct share_wait){ .uid = uid,
				    .f = fi_file(&c->fi)->sf,
				    .owner = n,
				    .state = SHARE_NEW,
				    .resume = parked_resume };
	p->work.run = parked_run;
	p->watch = (struct sigwatch_entry){ 0 };
	return p;
}

/* c is past its share: park it, or run it if a share came free meanwhile. */
static void park(struct node *n, struct call *c, uid_t uid)
{
	const char *which;
	struct parked *p = parked_new(n, c, uid, &which);
	int state;

	if (!p) {
		if (!atomic_exchange(&n->warned_park, true))
			bsgdev_warn(&n->d,
				    "uid %u: a call past its share of threads is past %s "
				    "memory bound, parked: ENOMEM",
				    (unsigned)uid, which);
		else
			bsgdev_debug(
				&n->d,
				"uid %u: a call past its share of threads: no memory to park it",
				(unsigned)uid);
		fuse_reply_err(c->req, ENOMEM);
		return;
	}
	fuse_req_interrupt_func(c->req, parked_interrupted, p);
	state = share_park(n->cfg->share, &p->w);
	if (state == SHARE_PARKED)
		return; /* p is the share's now */
	fuse_req_interrupt_func(c->req, NULL, NULL);
	sigwatch_cancel(&p->watch);
	if (state == SHARE_RUNNING)
		run_held(n, &p->c, &p->w.call);
	else
		fuse_reply_err(c->req, EINTR);
	parked_free(p);
}

/*
 * Every call that may touch its caller's memory holds a share of threads
 * (share.h) while it runs, its file's and its user's; past either it waits
 * parked, without a thread.
 */
static void enter(struct call *c)
{
	struct node *n = req_node(c->req);
	uid_t uid = fuse_req_ctx(c->req)->uid;
	struct share_call held;

	if (share_enter(fi_file(&c->fi)->sf, uid, &held))
		run_held(n, c, &held);
	else
		park(n, c, uid);
}

static void cb_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct call c = { .kind = CALL_READ, .req = req, .fi = *fi, .len = size };

	(void)off;
	stat_inc(req_daemon(req), STAT_READ);
	enter(&c);
}

static void cb_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct call c = { .kind = CALL_WRITE, .req = req, .fi = *fi, .buf = buf, .len = size };

	(void)off;
	stat_inc(req_daemon(req), STAT_WRITE);
	enter(&c);
}

static void cb_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct opener *o = file_opener(req, fi);

	stat_inc(req_daemon(req), STAT_POLL);
	if (o) {
		async_poll(req, o, ph);
		return;
	}
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_err(req, ENXIO); /* the kernel makes it POLLERR */
}

static void cb_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct call c = { .kind = CALL_IOCTL,
			  .req = req,
			  .fi = *fi,
			  .cmd = cmd,
			  .arg = arg,
			  .flags = flags,
			  .buf = in_buf,
			  .len = in_bufsz,
			  .out_len = out_bufsz };

	stat_inc(req_daemon(req), STAT_IOCTL);
	enter(&c);
}

/* The calls parked on n's session, which has ended: ENODEV, as for a device gone. */
static void drain_parked(struct node *n)
{
	struct list_head out = LIST_HEAD_INIT(out);
	struct share_wait *w, *next;

	copyjob_drain(&n->d, n->cfg->share);
	share_drain(n->cfg->share, n, &out);
	list_for_each_entry_safe(w, next, &out, node) {
		struct parked *p = container_of(w, struct parked, w);

		fuse_req_interrupt_func(p->c.req, NULL, NULL);
		sigwatch_cancel(&p->watch);
		fuse_reply_err(p->c.req, ENODEV);
		parked_free(p);
	}
}

/* devtmpfs creates the node asynchronously; sysfs names it with '!' for '/'. */
static int wait_for_node(const char *name, dev_t *ret)
{
	char devpath[160], syspath[200], kname[128];
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned maj, min;
	struct stat st;

	snprintf(devpath, sizeof(devpath), "/dev/%s", name);
	snprintf(kname, sizeof(kname), "%s", name);
	for (char *p = kname; *p; p++)
		if (*p == '/')
			*p = '!';
	snprintf(syspath, sizeof(syspath), "/sys/class/cuse/%s/dev", kname);
	for (int waited = 0; waited < NODE_WAIT_MS; waited += 10) {
		FILE *f = fopen(syspath, "re");
		int k = f ? fscanf(f, "%u:%u", &maj, &min) : 0;

		if (f)
			fclose(f);
		if (k == 2 && stat(devpath, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(maj, min)) {
			*ret = st.st_rdev;
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	return -ENODEV;
}

/* Only what --mode, --owner and --group ask for, once udev's rules have run: the options win. */
static int set_node_access(const struct node *n)
{
	const struct node_config *cfg = n->cfg;
	char devpath[160];

	if (cfg->mode == (mode_t)-1 && cfg->uid == (uid_t)-1 && cfg->gid == (gid_t)-1)
		return 0;
	snprintf(devpath, sizeof(devpath), "/dev/%s", n->name);
	/* the mode first, while the node is root's: no CAP_FOWNER needed */
	if (cfg->mode != (mode_t)-1 && chmod(devpath, cfg->mode) < 0)
		return -errno;
	if ((cfg->uid != (uid_t)-1 || cfg->gid != (gid_t)-1) &&
	    chown(devpath, cfg->uid, cfg->gid) < 0)
		return -errno;
	return 0;
}

/*
 * The node exists; udevd still has to run its rules on it (mode, group,
 * links).  The node is up only after that, so that a client started once
 * we are ready finds the node as the rules make it.
 */
static int wait_for_udev(struct node *n)
{
	int err = uev_wait_node(n->name, NODE_UDEV_S * 1000);

	if (err == -ETIMEDOUT)
		log_node(LOG_ERR, n->name,
			 "udev has not processed /dev/%s within %d s: its mode, owner and links "
			 "are not set; giving up",
			 n->name, NODE_UDEV_S);
	else if (err < 0)
		log_node(LOG_ERR, n->name, "cannot learn whether udev has processed /dev/%s: %s",
			 n->name, strerror(-err));
	else if (err > 0)
		log_node(LOG_DEBUG, n->name, "no udevd runs: /dev/%s stays as created", n->name);
	return err < 0 ? err : 0;
}

/*
 * The first node of a process proves the gate live (gate_prove()): its own
 * open of the node, still devtmpfs's 0600 root:root, and a forked child's
 * read(), which the kernel must refuse without us.  Not live: the /proc
 * check, or with --cred-check=kernel no node.
 */
static int prove_gate(struct node *n, dev_t dev)
{
	struct gate *g = n->cfg->gate;
	char path[160], why[256];
	int fd, err;

	if (gate_live(g))
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", n->name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot open /dev/%s to prove the gate: %s", n->name,
			 strerror(errno));
	} else {
		err = gate_prove(g, fd, dev, &n->d.stats[STAT_READ], why, sizeof(why));
		close(fd);
	}
	if (!err)
		return 0;
	log_node(n->cfg->gate_required ? LOG_ERR : LOG_WARNING, n->name, "credential check: %s%s",
		 why, n->cfg->gate_required ? "" : "; the /proc check serves instead");
	return n->cfg->gate_required ? err : 0;
}

/* Arm the gate for dev before any open is answered, then prove it. */
static int arm_gate(struct node *n, dev_t dev)
{
	int err;

	if (!n->cfg->gate)
		return 0;
	err = gate_arm(n->cfg->gate, dev);
	if (err) {
		log_node(LOG_ERR, n->name, "cannot arm the credential gate for /dev/%s: %s",
			 n->name, strerror(-err));
		return err;
	}
	pthread_mutex_lock(&n->lock);
	n->dev = dev;
	n->armed = true;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	err = prove_gate(n, dev);
	atomic_store(&n->d.gated, gate_live(n->cfg->gate));
	return err;
}

/* libfuse calls this once CUSE_INIT is answered, even if registration failed. */
static void cb_init_done(void *userdata)
{
	struct node *n = userdata;
	dev_t dev;
	int err;

	err = wait_for_node(n->name, &dev);
	if (err) {
		log_node(LOG_ERR, n->name,
			 "/dev/%s did not appear: the kernel refused the device (name or number "
			 "taken? see dmesg)",
			 n->name);
		node_stop(n);
		return;
	}
	err = arm_gate(n, dev);
	if (err) {
		n->start_err = err;
		node_stop(n);
		return;
	}
	err = wait_for_udev(n);
	if (err) {
		n->start_err = err;
		node_stop(n);
		return;
	}
	err = set_node_access(n);
	if (err) {
		log_node(LOG_ERR, n->name, "cannot set owner and mode of /dev/%s: %s", n->name,
			 strerror(-err));
		node_stop(n);
		return;
	}
	if (n->ctl) {
		log_node(LOG_INFO, n->name,
			 "control node /dev/%s (%u:%u): BSG_IOC_ADD binds a file", n->name,
			 major(dev), minor(dev));
	} else {
		const struct target_info *t = &n->d.target->info;

		log_node(LOG_INFO, n->name, "serving %s (%s %s, %s) as /dev/%s (%u:%u)", t->path,
			 t->vendor, t->product, target_kind_name(t->kind), n->name, major(dev),
			 minor(dev));
	}
	pthread_mutex_lock(&n->lock);
	n->up = true;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.init_done = cb_init_done,
	.open = cb_open,
	.release = cb_release,
	.read = cb_read,
	.write = cb_write,
	.ioctl = cb_ioctl,
	.poll = cb_poll,
};

/*
 * A libfuse worker's own epoll set: the session's /dev/cuse descriptor,
 * exclusive (a request wakes one idle worker, not all: poll() on the shared
 * descriptor woke every one, and all but one read nothing), and the node's
 * stop eventfd, which wakes every one.  Freed when the worker thread ends.
 */
struct worker_wait {
	int epfd;
	int fd; /* the /dev/cuse descriptor it was made for */
};

static pthread_key_t worker_key;
static pthread_once_t worker_once = PTHREAD_ONCE_INIT;

static void worker_wait_free(void *p)
{
	struct worker_wait *w = p;

	close(w->epfd);
	free(w);
}

static void worker_key_init(void)
{
	if (pthread_key_create(&worker_key, worker_wait_free))
		abort(); /* only EAGAIN, with thousands of keys */
}

/* This worker's epoll descriptor for fd, or -1 (then it waits in poll()). */
static int worker_epoll(struct node *n, int fd)
{
	struct epoll_event in = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = 0 };
	struct epoll_event stop = { .events = EPOLLIN, .data.u32 = 1 };
	struct worker_wait *w;

	pthread_once(&worker_once, worker_key_init);
	w = pthread_getspecific(worker_key);
	if (w && w->fd == fd)
		return w->epfd;
	if (w) /* not reached: a worker serves one session */
		worker_wait_free(w);
	pthread_setspecific(worker_key, NULL);
	w = malloc(sizeof(*w));
	if (!w)
		return -1;
	w->fd = fd;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &in) < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, n->stopfd, &stop) < 0) {
		if (w->epfd >= 0)
			close(w->epfd);
		free(w);
		return -1;
	}
	pthread_setspecific(worker_key, w);
	return w->epfd;
}

/*
 * Wait until fd may have a request (0), or the node stops (-1, EINTR), or
 * ms pass (1; -1: no bound).
 */
static int worker_wait(struct node *n, int fd, int ms)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = n->stopfd, .events = POLLIN } };
	int epfd = worker_epoll(n, fd);
	struct epoll_event ev[2];
	int k;

	if (epfd < 0) {
		k = poll(p, 2, ms);
		if (k < 0)
			return -1;
		if (p[1].revents)
			goto stopped;
		return k == 0;
	}
	k = epoll_wait(epfd, ev, 2, ms);
	if (k < 0)
		return -1;
	if (k == 0)
		return 1;
	for (int i = 0; i < k; i++)
		if (ev[i].data.u32 == 1)
			goto stopped;
	return 0;
stopped:
	errno = EINTR;
	return -1;
}

/*
 * libfuse lets a worker go only once it has handled a request, and then
 * only while more than its max_idle_threads wait.  A worker idle for
 * FUSE_IDLE_MS while more than FUSE_IDLE_THREADS wait hands libfuse a
 * FORGET of no inode instead of a request: CUSE answers a FORGET with
 * nothing, and the worker leaves after it.
 */
static ssize_t idle_request(void *buf, size_t len)
{
	struct {
		struct fuse_in_header h;
		struct fuse_forget_in f;
	} r = { .h = { .len = sizeof(r), .opcode = FUSE_FORGET } };

	if (len < sizeof(r)) {
		errno = EINTR; /* not reached: libfuse's buffer holds a request */
		return -1;
	}
	memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

/* Requests read so far by every worker of every node: the heap is the process's. */
static atomic_ulong requests_read;

/*
 * libfuse's read of the next request.  The descriptor is non-blocking, so
 * that a worker waits in worker_wait(), where the stop eventfd reaches it:
 * EINTR with the session marked exited makes it leave its loop.  Waiting
 * first costs two calls a request; reading first costs one when a request
 * is there but three when none is, and at a queue depth of 16 a worker
 * mostly finds none.
 */
static ssize_t node_read(int fd, void *buf, size_t len, void *userdata)
{
	struct node *n = userdata;
	ssize_t r = -1;

	atomic_fetch_add(&n->waiting, 1);
	for (;;) {
		unsigned long seen = atomic_load_explicit(&requests_read, memory_order_relaxed);
		int w = worker_wait(n, fd, FUSE_IDLE_MS);

		if (w < 0)
			break;
		if (w > 0 && atomic_load(&n->waiting) > FUSE_IDLE_THREADS) {
			atomic_store(&n->trimmed, false); /* once this one is gone */
			r = idle_request(buf, len);
			break;
		}
		/* no worker of any node has read a request while this one waited, and
		 * the extra workers are gone: what a burst took from malloc goes back
		 * (glibc's arenas keep freed memory).  Not while requests come in: the
		 * trim takes every arena's lock and gives back pages that their
		 * workers would fault in again. */
		if (w > 0 && atomic_load_explicit(&requests_read, memory_order_relaxed) == seen &&
		    !atomic_exchange(&n->trimmed, true))
			malloc_trim(0);
		if (w > 0)
			continue;
		r = read(fd, buf, len);
		if (r >= 0)
			atomic_fetch_add_explicit(&requests_read, 1, memory_order_relaxed);
		if (r >= 0 && atomic_load_explicit(&n->trimmed, memory_order_relaxed))
			atomic_store(&n->trimmed, false);
		if (r >= 0 || errno != EAGAIN)
			break;
	}
	atomic_fetch_sub(&n->waiting, 1);
	return r;
}

static ssize_t node_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static const struct fuse_custom_io node_io = {
	.read = node_read,
	.writev = node_writev,
};

static void *node_thread(void *arg)
{
	struct node *n = arg;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	node_ended_fn *ended;
	int ret = -ENOMEM;
	bool up;

	pthread_setname_np(pthread_self(), "bsg-fuse"); /* top -H, ps -L */
	if (cfg) {
		fuse_loop_cfg_set_max_threads(cfg, FUSE_THREADS);
		fuse_loop_cfg_set_idle_threads(cfg, FUSE_IDLE_THREADS);
		ret = fuse_session_loop_mt(n->se, cfg) < 0 ? -EIO : 0;
		fuse_loop_cfg_destroy(cfg);
	}
	pthread_mutex_lock(&n->lock);
	n->stopping = true; /* from now on, node_stop() leaves se alone */
	pthread_mutex_unlock(&n->lock);
	/* answer what the workers still hold while the session can take it */
	drain_parked(n);
	control_stop(n->ctl);
	async_bsgdev_fini(&n->d);
	/* a completion hands work to the pools: none comes once they go */
	target_queue_stop(n->d.target);
	pool_free(n->d.pool);
	n->stuck = !pool_free_within(n->d.serve, 1000) || watchdog_busy(n->d.wd);
	if (!n->stuck) {
		control_free(n->ctl); /* the pools' last commands may have freed bindings */
		n->ctl = NULL;
	}
	if (n->stuck)
		log_node(LOG_WARNING, n->name,
			 "copies into clients' memory still stalled: the node stays until the "
			 "daemon exits");
	else
		fuse_session_destroy(n->se); /* closes /dev/cuse: the kernel removes the node */
	if (!n->stuck && n->armed)
		gate_disarm(n->cfg->gate, n->dev); /* its number may go to another driver */
	pthread_mutex_lock(&n->lock);
	n->d.pool = NULL;
	n->d.serve = NULL;
	n->se = NULL;
	n->over = true;
	n->result = ret;
	up = n->up;
	ended = n->ended; /* node_free() may have let go of it (stalled) */
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (up && ended)
		ended(n, n->ended_arg);
	return NULL;
}

static int choose_path(struct node *n, char *why, size_t why_len)
{
	const struct target_info *t = &n->d.target->info;
	bool possible = uaccess_direct_possible();
	enum node_copy copy = n->cfg->copy;

	if (copy == NODE_COPY_DIRECT && !possible) {
		snprintf(why, why_len,
			 "--copy=direct needs CAP_SYS_PTRACE (and Yama ptrace_scope < 3)");
		return -EPERM;
	}
	n->d.direct = copy == NODE_COPY_DIRECT || (copy == NODE_COPY_AUTO && possible);
	if (n->d.direct) {
		n->d.max_xfer = t->max_xfer;
		n->d.max_xfer_errno = t->max_xfer_errno;
		log_node(LOG_INFO, n->name,
			 "data path: direct copy (process_vm_readv/writev), up to %u bytes a "
			 "command",
			 n->d.max_xfer);
	} else {
		n->d.max_xfer = t->max_xfer < RETRY_MAX_XFER ? t->max_xfer : RETRY_MAX_XFER;
		n->d.max_xfer_errno = ENOMEM;
		log_node(LOG_INFO, n->name,
			 "data path: ioctl retry (no ptrace rights), up to %u bytes a command",
			 n->d.max_xfer);
	}
	return 0;
}

static int node_taken(const char *name, char *why, size_t why_len)
{
	char devpath[160];

	snprintf(devpath, sizeof(devpath), "/dev/%s", name);
	if (access(devpath, F_OK) < 0)
		return 0;
	snprintf(why, why_len, "/dev/%s already exists: is another cuse_bsg serving it?", name);
	return -EEXIST;
}

static int check_engine(const struct node *n, char *why, size_t why_len)
{
	const struct target *t = n->d.target;

	if (n->cfg->engine != NODE_ENGINE_QUEUE || t->ops->queue_open)
		return 0;
	snprintf(why, why_len, "--async=queue needs an sg target; %s is %s", t->info.path,
		 target_kind_name(t->info.kind));
	return -EINVAL;
}

static void target_gone(struct bsgdev *d, int err);

static void openers_gone(struct bsgdev *d)
{
	if (atomic_load(&d->target_gone))
		node_stop(to_node(d));
}

static int open_target(struct node *n, const char *target, char *why, size_t why_len)
{
	int err = target_open(target, &n->d.target, why, why_len);

	if (err == -EACCES || err == -EPERM)
		snprintf(why + strlen(why), why_len - strlen(why), " (run as root)");
	if (!err)
		err = choose_path(n, why, why_len);
	if (!err)
		err = check_engine(n, why, why_len);
	return err;
}

/*
 * A control node takes descriptors with pidfd_getfd() and moves data with
 * the direct copies: both need ptrace rights over the callers.
 */
static int new_control(struct node *n, char *why, size_t why_len)
{
	if (n->cfg->copy == NODE_COPY_RETRY || n->cfg->shared_queue || n->cfg->sg_minor >= 0 ||
	    n->cfg->engine == NODE_ENGINE_QUEUE) {
		snprintf(why, why_len,
			 "--control takes none of --copy=retry, --shared-queue, --sg-compat, "
			 "--async=queue");
		return -EINVAL;
	}
	if (!uaccess_direct_possible()) {
		snprintf(why, why_len,
			 "--control needs CAP_SYS_PTRACE (and Yama ptrace_scope < 3) to take "
			 "callers' descriptors");
		return -EPERM;
	}
	n->d.direct = true;
	return control_new(&n->d, &n->ctl);
}

int node_new(const struct node_config *cfg, const char *target, const char *name, struct node **ret,
	     char *why, size_t why_len)
{
	struct node *n;
	int err;

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cfg = cfg;
	n->stopfd = -1;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->d.name = n->name;
	n->d.policy = cfg->policy;
	n->d.policy_kernel = POLICY_KERNEL_OWN;
	n->d.mem = cfg->mem;
	n->d.opener_mem_max = cfg->opener_mem_max;
	n->d.queue_depth = cfg->queue_depth;
	n->d.openers_gone = openers_gone;
	n->d.gone = target_gone;
	pthread_mutex_init(&n->shared_lock, NULL);
	bsgdev_init(&n->d);
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	err = target ? open_target(n, target, why, why_len) : new_control(n, why, why_len);
	if (!err)
		err = node_taken(name, why, why_len);
	if (err) {
		node_free(n);
		return err;
	}
	*ret = n;
	return 0;
}

/* The target's completion thread, for the queue engine. */
static int start_engine(struct node *n)
{
	struct target *t = n->d.target;
	enum node_engine engine = n->cfg->engine;
	bool has_queue;
	int ret;

	if (!t)
		return 0; /* a control node: its bindings use the workers */
	has_queue = t->ops->queue_open != NULL;
	n->d.max_running = target_max_queued(t);
	if (t->info.bulk_min)
		log_node(LOG_INFO, n->name,
			 "transfers of %u KiB to %u KiB: %s (maps our buffer, where sg copies)",
			 t->info.bulk_min >> 10, t->info.max_sectors_bytes >> 10,
			 t->info.bulk_path);
	if (engine == NODE_ENGINE_POOL || !has_queue) /* node_new() refused queue without one */
		return 0;
	ret = target_queue_start(t, cmdq_target_done);
	if (ret < 0) {
		log_node(LOG_ERR, n->name, "cannot start the completion thread for %s: %s",
			 t->info.path, strerror(-ret));
		return ret;
	}
	n->d.queue = true;
	log_node(LOG_INFO, n->name, "written commands: %s's own queue, one completion thread",
		 t->info.path);
	return 0;
}

/* The session on a /dev/cuse descriptor of its own. */
static int new_session(struct node *n)
{
	char devname[160];
	const char *dev_info[] = { devname };
	char *argv[] = { "cuse_bsg", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct cuse_info ci = {
		.dev_major = n->cfg->sg_minor >= 0 ? SG_MAJOR : 0,
		.dev_minor = n->cfg->sg_minor >= 0 ? n->cfg->sg_minor : 0,
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	int fd, err;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", n->name);
	n->se = cuse_lowlevel_new(&args, &ci, &cuse_ops, n);
	fuse_opt_free_args(&args);
	if (!n->se)
		return -EIO;
	fd = open("/dev/cuse", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fuse_session_custom_io(n->se, &node_io, fd);
	if (err) {
		close(fd);
		return err;
	}
	return 0;
}

static int start_session(struct node *n)
{
	int err;

	n->stopfd = eventfd(0, EFD_CLOEXEC);
	if (n->stopfd < 0)
		return -errno;
	err = new_session(n);
	if (err) {
		log_node(LOG_ERR, n->name, "cannot set up the CUSE session for /dev/%s: %s",
			 n->name, strerror(-err));
		return err;
	}
	n->d.inline_max = INLINE_MAX;
	/* set first: the thread's init_done may stop the session at once */
	pthread_mutex_lock(&n->lock);
	n->thread_started = true;
	pthread_mutex_unlock(&n->lock);
	err = -pthread_create(&n->thread, NULL, node_thread, n);
	if (err) {
		pthread_mutex_lock(&n->lock);
		n->thread_started = false;
		pthread_mutex_unlock(&n->lock);
		log_node(LOG_ERR, n->name, "cannot start the session's thread: %s", strerror(-err));
	}
	return err;
}

int node_start(struct node *n, node_ended_fn *ended, void *arg)
{
	bool up;
	int err;

	n->d.signal_ends = sigwatch_ends_call;
	err = pool_new(n->cfg->threads, &n->d.pool);
	if (err) {
		log_node(LOG_ERR, n->name, "cannot start %u worker threads: %s", n->cfg->threads,
			 strerror(-err));
		return err;
	}
	/* every node's: parked calls resume on it (share.h) */
	err = pool_new_elastic(SERVE_MAX, &n->d.serve);
	if (err) {
		log_node(LOG_ERR, n->name, "cannot start the copy threads: %s", strerror(-err));
		return err;
	}
	if (n->d.direct) {
		err = watchdog_new(n->cfg->copy_timeout_ms, n->name, &n->d.wd);
		if (err) {
			log_node(LOG_ERR, n->name, "cannot start the copy watchdog: %s",
				 strerror(-err));
			return err;
		}
	}
	err = start_engine(n);
	if (!err) {
		n->ended = ended;
		n->ended_arg = arg;
		err = start_session(n);
	}
	if (err)
		return err;
	pthread_mutex_lock(&n->lock);
	while (!n->up && !n->over)
		pthread_cond_wait(&n->cond, &n->lock);
	up = n->up;
	pthread_mutex_unlock(&n->lock);
	return up ? 0 : n->start_err ? n->start_err : -ENODEV;
}

/* Under lock: the session thread may be destroying se.  Neither call blocks. */
void node_stop(struct node *n)
{
	uint64_t one = 1;

	pthread_mutex_lock(&n->lock);
	pthread_cond_broadcast(&n->cond); /* an open waiting for the gate (wait_armed()) */
	if (!n->stopping && n->se && n->thread_started) {
		n->stopping = true;
		fuse_session_exit(n->se);
		if (write(n->stopfd, &one, sizeof(one)) != sizeof(one))
			abort(); /* an eventfd takes this write */
	}
	pthread_mutex_unlock(&n->lock);
}

/*
 * d->gone: a command found the device gone (err), or udev said it was
 * removed (0), whichever comes first; the removal is logged even after a
 * command's answer.  The node ends with its last opener (openers_gone()),
 * or now if none is left.
 */
static void target_gone(struct bsgdev *d, int err)
{
	struct node *n = to_node(d);
	bool first = !atomic_exchange(&d->target_gone, true);

	if (err && !first)
		return;
	if (!err && atomic_exchange(&n->removed, true))
		return;
	if (err)
		log_node(LOG_WARNING, n->name, "%s is gone: %s; new commands get ENODEV",
			 d->target->info.path, strerror(-err));
	else
		log_node(LOG_WARNING, n->name,
			 "%s was removed: calls get ENODEV; the node goes with its last opener",
			 d->target->info.path);
	cmdq_target_gone(d); /* parked calls with nothing to wait for end */
	if (atomic_load(&d->openers) == 0)
		node_stop(n);
}

void node_gone(struct node *n)
{
	target_gone(&n->d, 0);
}

/* The calls on n's files the gate refused in the kernel (they never reached us). */
static unsigned long long gated_refused(struct node *n)
{
	bool armed;
	dev_t dev;

	pthread_mutex_lock(&n->lock);
	armed = n->armed && !n->over;
	dev = n->dev;
	pthread_mutex_unlock(&n->lock);
	return armed ? gate_refused(n->cfg->gate, dev) : 0;
}

void node_log_stats(struct node *n)
{
	struct bsgdev *d = &n->d;
	unsigned long s[STAT_COUNT];
	unsigned queued = 0;

	for (int i = 0; i < STAT_COUNT; i++)
		s[i] = atomic_load(&d->stats[i]);
	pthread_mutex_lock(&n->lock);
	if (!n->stopping && d->pool)
		queued = pool_backlog(d->pool);
	pthread_mutex_unlock(&n->lock);
	log_node(LOG_NOTICE, n->name,
		 "stats: open=%lu release=%lu read=%lu write=%lu ioctl=%lu poll=%lu "
		 "interrupt=%lu sg_io=%lu sg_io_errors=%lu ioctl_retries=%lu refused=%lu "
		 "at_target=%u avg_latency_us=%lu queued=%u openers=%u cred_check=%s "
		 "gate_refused=%llu",
		 s[STAT_OPEN], s[STAT_RELEASE], s[STAT_READ], s[STAT_WRITE], s[STAT_IOCTL],
		 s[STAT_POLL], s[STAT_INTERRUPT], s[STAT_SG_IO], s[STAT_SG_IO_ERR],
		 s[STAT_IOCTL_RETRY], s[STAT_REFUSED], atomic_load(&d->at_target),
		 s[STAT_SG_IO] ? s[STAT_LATENCY_US] / s[STAT_SG_IO] : 0, queued,
		 atomic_load(&d->openers), atomic_load(&d->gated) ? "kernel" : "procfs",
		 gated_refused(n));
}

const char *node_name(const struct node *n)
{
	return n->name;
}

const char *node_target(const struct node *n)
{
	return n->ctl ? "any device bound with BSG_IOC_ADD" : n->d.target->info.path;
}

/*
 * n's thread waits on a stalled copy: it is left running, and tells nobody
 * when it ends (its owner frees what ended's argument names).  False if it
 * is past that point already: then it ends at once, and is joined.
 */
static bool leave_stalled(struct node *n)
{
	bool over;

	pthread_mutex_lock(&n->lock);
	over = n->over;
	n->ended = NULL;
	pthread_mutex_unlock(&n->lock);
	return !over;
}

int node_free(struct node *n)
{
	int ret = 0;

	if (!n)
		return 0;
	if (n->thread_started) {
		node_stop(n);
		/* libfuse joins its workers: one held in a stalled copy never comes */
		for (;;) {
			struct timespec end;

			clock_gettime(CLOCK_REALTIME, &end);
			end.tv_sec++;
			if (!pthread_timedjoin_np(n->thread, NULL, &end))
				break;
			if (watchdog_stalled(n->d.wd) && leave_stalled(n)) {
				log_node(LOG_WARNING, n->name,
					 "left as it is: a copy into a "
					 "client's memory is stalled");
				return -EBUSY;
			}
		}
		if (n->stuck)
			return -EBUSY; /* its threads may still use it */
		ret = n->result;
	}
	if (n->se)
		fuse_session_destroy(n->se); /* the thread never ran */
	control_free(n->ctl);		     /* the session never ran: no binding was made */
	async_bsgdev_fini(&n->d);
	pool_free(n->d.pool);
	pool_free(n->d.serve);
	watchdog_free(n->d.wd);
	target_free(n->d.target);
	if (n->stopfd >= 0)
		close(n->stopfd);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
	pthread_mutex_destroy(&n->shared_lock);
	pthread_mutex_destroy(&n->d.openers_lock);
	free(n);
	return ret;
}
