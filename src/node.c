// SPDX-License-Identifier: GPL-2.0-only
/*
 * One served node: its target, struct bsgdev and CUSE session (session.c),
 * whose loop runs on a thread of its own and which node_stop() ends from
 * any thread.  The callbacks are thin trampolines: open and release go to
 * files.c; read, write and ioctl run within the call's share of threads, or
 * park past it (calls.c); the device file is made ready by devnode.c.
 * Its life is one state (enum node_life), which life_step() alone changes;
 * node_start() waits on n->cond for the session to come up or end, and an
 * open for the credential gate to be armed (wait_armed()).  A callback may
 * wait below: a binding's SG_IO for a slot (cmdq_slot_take()), a copy for
 * its watchdog's answer (guard.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fuse3/cuse_lowlevel.h>

#include "bsgdev.h"
#include "calls.h"
#include "control.h"
#include "copyjob.h"
#include "devnode.h"
#include "files.h"
#include "gate.h"
#include "guard.h"
#include "ioctl.h"
#include "ioctx.h"
#include "lockcheck.h"
#include "node.h"
#include "nodegate.h"
#include "opener.h"
#include "policy.h"
#include "pool.h"
#include "queue/async.h"
#include "queue/cmdq.h"
#include "session.h"
#include "share.h"
#include "show.h"
#include "sigwatch.h"
#include "stats.h"
#include "uaccess.h"

#define INLINE_MAX 12  /* of the session's FUSE_THREADS, those that may run a command themselves */
#define SERVE_MAX  256 /* threads of the elastic pool (d->serve) at most */

/*
 * A node's life.  Its start (init_done, on a libfuse worker) and its end
 * (node_stop() from any thread, or the loop's own return) race, so that a
 * state says how far each has got: an ending node must still know whether
 * its gate was armed (an open still goes on; the gate is disarmed) and
 * whether it came up (then node_start() returned 0, and ended is called).
 * In this order: not started, running (STARTING to UP), ending, over.
 */
enum node_life {
	NODE_NEW = 1,	     /* no thread: not started, or its thread did not start */
	NODE_STARTING,	     /* the session runs; no gate armed yet (or none) */
	NODE_ARMED,	     /* the gate checks the node's files: an open is answered */
	NODE_UP,	     /* /dev/NAME is there with its owner and mode */
	NODE_STOPPING,	     /* the session ends, or its loop has returned; not armed */
	NODE_STOPPING_ARMED, /* the same, once armed */
	NODE_STOPPING_UP,    /* the same, once up */
	NODE_OVER,	     /* the session has ended; it never came up */
	NODE_OVER_UP,	     /* the session has ended; it came up: ended is called */
	NODE_LIFE_COUNT,
};

enum life_event {
	LIFE_START,	/* the session's thread is about to start */
	LIFE_NO_THREAD, /* it could not */
	LIFE_ARM,	/* init_done armed the gate for the node's number */
	LIFE_UP,	/* init_done made /dev/NAME ready */
	LIFE_STOP,	/* node_stop(), or the loop has returned */
	LIFE_OVER,	/* the loop's end is drained: the session is over */
	LIFE_EVENT_COUNT,
};

/*
 * The legal transitions: the next state of each state on each event (0:
 * none).  A stop is legal in every state, and moves a running one only.
 * The start goes on past a stop: init_done arms the gate and makes the
 * node ready while it is being stopped, so that the gate is disarmed, and
 * ended called, all the same.  Up from STARTING or STOPPING: no gate.
 */
static const unsigned char life_next[NODE_LIFE_COUNT][LIFE_EVENT_COUNT] = {
	/* START, NO_THREAD, ARM, UP, STOP, OVER */
	[NODE_NEW] = { NODE_STARTING, 0, 0, 0, NODE_NEW, 0 },
	[NODE_STARTING] = { 0, NODE_NEW, NODE_ARMED, NODE_UP, NODE_STOPPING, 0 },
	[NODE_ARMED] = { 0, 0, 0, NODE_UP, NODE_STOPPING_ARMED, 0 },
	[NODE_UP] = { 0, 0, 0, 0, NODE_STOPPING_UP, 0 },
	[NODE_STOPPING] = { 0, NODE_NEW, NODE_STOPPING_ARMED, NODE_STOPPING_UP, NODE_STOPPING,
			    NODE_OVER },
	[NODE_STOPPING_ARMED] = { 0, 0, 0, NODE_STOPPING_UP, NODE_STOPPING_ARMED, NODE_OVER },
	[NODE_STOPPING_UP] = { 0, 0, 0, 0, NODE_STOPPING_UP, NODE_OVER_UP },
	[NODE_OVER] = { 0, 0, 0, 0, NODE_OVER, 0 },
	[NODE_OVER_UP] = { 0, 0, 0, 0, NODE_OVER_UP, 0 },
};

struct node {
	struct bsgdev d;
	struct calls calls;	/* its read(), write() and ioctl() calls, in their shares */
	struct files files;	/* its open files; files.ctl: --control, d has no target */
	struct session session; /* the callbacks' userdata */
	const struct node_config *cfg;
	char name[128];
	node_ended_fn *ended;
	void *ended_arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum node_life life; /* protected by lock; changed by life_step() alone */
	dev_t dev;	     /* protected by lock: the node's number, once armed */
	int start_err;	     /* why the node did not come up, if known */
	int result;	     /* protected by lock: the loop's, once over */
	bool stuck;	     /* the end left a copy stalled: set before OVER, as result */
	atomic_bool removed; /* udev said the device went: the target's life, not the node's */
};

/* Under lock: n's life moves on e, as life_next[] allows, and every waiter on cond wakes. */
static bool life_step(struct node *n, enum life_event e)
{
	enum node_life to;

	assert_held(&n->lock);
	to = life_next[n->life][e];
	if (!to)
		abort(); /* a transition life_next[] does not list */
	if (to == n->life)
		return false;
	n->life = to;
	pthread_cond_broadcast(&n->cond);
	return true;
}

static bool life_up(enum node_life s)
{
	return s == NODE_UP || s == NODE_STOPPING_UP || s == NODE_OVER_UP;
}

static bool life_over(enum node_life s)
{
	return s >= NODE_OVER;
}

/* Under lock: does the gate check n's files?  Up means armed, with a gate. */
static bool life_armed(const struct node *n)
{
	enum node_life s;

	assert_held(&n->lock);
	s = n->life;
	return n->cfg->gate && !life_over(s) &&
	       (s == NODE_ARMED || s == NODE_STOPPING_ARMED || life_up(s));
}

static struct node *req_node(fuse_req_t req)
{
	return container_of(fuse_req_userdata(req), struct node, session);
}

static struct bsgdev *req_daemon(fuse_req_t req)
{
	return &req_node(req)->d;
}

static struct node_file *fi_file(const struct fuse_file_info *fi)
{
	return (struct node_file *)(uintptr_t)fi->fh;
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
	while (n->life == NODE_STARTING)
		pthread_cond_wait(&n->cond, &n->lock);
	armed = life_armed(n);
	pthread_mutex_unlock(&n->lock);
	return armed ? 0 : ENODEV;
}

static void cb_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct node *n = req_node(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct node_file *nf = NULL;
	int err;

	stat_inc(&n->d, STAT_OPEN);
	err = wait_armed(n);
	if (!err)
		err = files_open(&n->files, ctx->pid, ctx->uid, fi->flags, &nf);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)nf;
	/* as sg's nonseekable_open(), but the kernel's CUSE never reads it
	 * (cuse_open() skips fuse_finish_open()): pread()/pwrite() still come
	 * as read()/write() (INTERFACE.md) */
	fi->nonseekable = 1;
	fi->direct_io = 1;
	if (fuse_reply_open(req, fi) < 0)
		files_release(&n->files, nf);
}

/* Last reference to the file gone: no call of it can be in flight. */
static void cb_release(fuse_req_t req, struct fuse_file_info *fi)
{
	stat_inc(req_daemon(req), STAT_RELEASE);
	files_release(&req_node(req)->files, fi_file(fi));
	fuse_reply_err(req, 0);
}

/*
 * The opener of fi; NULL for a control node's file not bound yet, whose
 * calls get ENXIO as on bsg's control node (poll: POLLERR).
 */
static struct opener *nf_opener(struct node *n, struct node_file *nf)
{
	return n->files.ctl ? control_opener(nf->file) : nf->file;
}

static struct opener *file_opener(fuse_req_t req, const struct fuse_file_info *fi)
{
	return nf_opener(req_node(req), fi_file(fi));
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
	if (n->files.ctl)
		control_ioctl(n->files.ctl, c->nf->file, &x, (unsigned)c->cmd, c->flags);
	else
		ioctl_dispatch(&x, (unsigned)c->cmd, c->flags);
}

/*
 * The call holds its opener while it runs: once the watchdog has answered
 * it (guard.h), its client may close the file, whose release then lets go
 * of the opener while this thread still waits in a copy.
 */
static void run_call(struct calls *cs, struct call *c)
{
	struct node *n = container_of(cs, struct node, calls);
	struct opener *o = nf_opener(n, c->nf);

	if (o) {
		opener_get(o);
		atomic_fetch_add_explicit(&o->calls, 1, memory_order_relaxed);
	}
	if (c->kind == CALL_IOCTL)
		run_ioctl(n, c, o);
	else if (!o) /* an unbound file of the control node */
		fuse_reply_err(c->req, -control_unbound(
					       n->files.ctl, c->nf->file, fuse_req_ctx(c->req)->pid,
					       c->kind == CALL_READ ? "read()" : "write()"));
	else if (c->kind == CALL_READ)
		async_read(c->req, o, c->len, c->fflags);
	else
		async_write(c->req, o, c->buf, c->len, c->fflags);
	if (o) {
		atomic_fetch_sub_explicit(&o->calls, 1, memory_order_relaxed);
		opener_put(o);
	}
}

static void cb_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct call c = {
		.kind = CALL_READ, .req = req, .nf = fi_file(fi), .fflags = fi->flags, .len = size
	};

	(void)off;
	stat_inc(req_daemon(req), STAT_READ);
	calls_enter(&req_node(req)->calls, &c, c.nf->sf); /* within its shares */
}

static void cb_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct call c = { .kind = CALL_WRITE,
			  .req = req,
			  .nf = fi_file(fi),
			  .fflags = fi->flags,
			  .buf = buf,
			  .len = size };

	(void)off;
	stat_inc(req_daemon(req), STAT_WRITE);
	calls_enter(&req_node(req)->calls, &c, c.nf->sf); /* within its shares */
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
			  .nf = fi_file(fi),
			  .fflags = fi->flags,
			  .cmd = cmd,
			  .arg = arg,
			  .flags = flags,
			  .buf = in_buf,
			  .len = in_bufsz,
			  .out_len = out_bufsz };

	stat_inc(req_daemon(req), STAT_IOCTL);
	calls_enter(&req_node(req)->calls, &c, c.nf->sf); /* within its shares */
}

/* Arm the gate for dev before any open is answered, then prove it. */
static int arm_gate(struct node *n, dev_t dev)
{
	int err;

	if (!n->cfg->gate)
		return 0;
	err = nodegate_arm(n->cfg->gate, &n->d, dev);
	if (err)
		return err;
	pthread_mutex_lock(&n->lock);
	n->dev = dev;
	life_step(n, LIFE_ARM);
	pthread_mutex_unlock(&n->lock);
	return nodegate_prove(n->cfg->gate, n->cfg->gate_required, &n->d, dev);
}

/* libfuse calls this once CUSE_INIT is answered, even if registration failed. */
static void cb_init_done(void *userdata)
{
	struct node *n = container_of(userdata, struct node, session);
	dev_t dev;
	int err;

	err = devnode_wait(n->name, &dev);
	if (!err) {
		err = arm_gate(n, dev);
		if (!err)
			err = devnode_wait_udev(n->name);
		n->start_err = err;
	}
	if (!err)
		err = devnode_set_access(n->name, n->cfg->mode, n->cfg->uid, n->cfg->gid);
	if (err) {
		node_stop(n);
		return;
	}
	if (n->files.ctl) {
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
	life_step(n, LIFE_UP);
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

/* The session's loop is over: what its workers still hold answered, its pools and session freed. */
static void drain_session(struct node *n)
{
	bool armed;

	pthread_mutex_lock(&n->lock);
	life_step(n, LIFE_STOP); /* from now on, node_stop() leaves the session alone */
	armed = life_armed(n);	 /* for good: init_done has returned */
	pthread_mutex_unlock(&n->lock);
	/* answer what the workers still hold while the session can take it */
	copyjob_drain(&n->d, n->cfg->share);
	calls_drain(&n->calls);
	control_stop(n->files.ctl);
	async_bsgdev_fini(&n->d);
	/* a completion hands work to the pools: none comes once they go */
	target_queue_stop(n->d.target);
	pool_free(n->d.pool);
	n->stuck = !pool_free_within(n->d.serve, 1000) || watchdog_busy(n->d.wd);
	if (n->stuck) {
		log_node(LOG_WARNING, n->name,
			 "copies into clients' memory still stalled: the node stays until the "
			 "daemon exits");
		return;
	}
	control_free(n->files.ctl); /* the pools' last commands may have freed bindings */
	n->files.ctl = NULL;
	session_destroy(&n->session); /* closes /dev/cuse: the kernel removes the node */
	if (armed)
		gate_disarm(n->cfg->gate, n->dev); /* its number may go to another driver */
}

/* The session's over function, on its thread. */
static void node_over(struct session *s, int ret)
{
	struct node *n = container_of(s, struct node, session);
	node_ended_fn *ended;
	bool up;

	drain_session(n);
	pthread_mutex_lock(&n->lock);
	n->d.pool = NULL;
	n->d.serve = NULL;
	n->result = ret;
	life_step(n, LIFE_OVER);
	up = life_up(n->life);
	ended = n->ended; /* node_free() may have let go of it (stalled) */
	pthread_mutex_unlock(&n->lock);
	if (up && ended)
		ended(n, n->ended_arg);
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
	n->d.user_limit = uaccess_user_limit();
	n->d.sg_compat = n->cfg->sg_minor >= 0;
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
		node_stop(container_of(d, struct node, d));
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
	if (!err)
		stats_read_device(&n->d);
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
	return control_new(&n->d, &n->files.ctl);
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
	n->life = NODE_NEW;
	session_init(&n->session);
	snprintf(n->name, sizeof(n->name), "%s", name);
	bsgdev_setup(&n->d, n->name, cfg->mem, cfg->opener_mem_max, cfg->queue_depth, cfg->policy);
	n->d.policy_kernel = POLICY_KERNEL_OWN;
	n->d.openers_gone = openers_gone;
	n->d.gone = target_gone;
	n->calls = (struct calls){ .d = &n->d, .share = cfg->share, .run = run_call };
	files_init(&n->files, &n->d, n->name, cfg->share, cfg->shared_queue);
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

static int start_session(struct node *n)
{
	int err = session_new(&n->session, n->name, n->cfg->sg_minor, &cuse_ops);

	if (err) {
		log_node(LOG_ERR, n->name, "cannot set up the CUSE session for /dev/%s: %s",
			 n->name, strerror(-err));
		return err;
	}
	n->d.inline_max = INLINE_MAX;
	/* first: the thread's init_done may stop the session at once */
	pthread_mutex_lock(&n->lock);
	life_step(n, LIFE_START);
	pthread_mutex_unlock(&n->lock);
	err = session_start(&n->session, node_over);
	if (err) {
		pthread_mutex_lock(&n->lock);
		life_step(n, LIFE_NO_THREAD);
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
	while (!life_up(n->life) && !life_over(n->life))
		pthread_cond_wait(&n->cond, &n->lock);
	up = life_up(n->life);
	pthread_mutex_unlock(&n->lock);
	return up ? 0 : n->start_err ? n->start_err : -ENODEV;
}

/*
 * Under lock: the session's thread may be destroying it once its loop has
 * returned (then the life is ending already).  Neither call blocks.
 */
void node_stop(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	if (life_step(n, LIFE_STOP)) /* a running session: an open waiting wakes too */
		session_stop(&n->session);
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
	struct node *n = container_of(d, struct node, d);
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

/* The calls on n's files the LSM gate refused in the kernel (they never reached us). */
static unsigned long long gated_refused(struct node *n)
{
	dev_t dev;

	pthread_mutex_lock(&n->lock);
	dev = life_armed(n) ? n->dev : 0; /* no node has major 0 */
	pthread_mutex_unlock(&n->lock);
	return dev ? gate_refused(n->cfg->gate, dev) : 0;
}

void node_log_stats(struct node *n)
{
	struct show_node s;
	char line[640];

	node_show(n, &s);
	show_stats_line(&s, line, sizeof(line));
	log_node(LOG_NOTICE, n->name, "stats: %s", line);
}

/* The node's device file as it is now: its number, mode and owners. */
static void show_access(struct node *n, struct show_node *s)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/%s", n->name);
	if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode))
		return;
	s->have_stat = true;
	s->major = major(st.st_rdev);
	s->minor = minor(st.st_rdev);
	s->mode = st.st_mode & 0777;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
}

void node_show(struct node *n, struct show_node *s)
{
	struct bsgdev *d = &n->d;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", n->name);
	if (!n->files.ctl)
		snprintf(s->target, sizeof(s->target), "%s", d->target->info.path);
	show_access(n, s);
	s->cred_check = gate_describe(atomic_load(&d->cred) ? n->cfg->gate : NULL);
	s->gate_refused = gated_refused(n) + atomic_load(&d->cred_refused);
	s->cred_unseen = atomic_load(&d->cred_unseen);
	s->gone = atomic_load(&d->target_gone);
	pthread_mutex_lock(&n->lock);
	if (n->life < NODE_STOPPING && d->pool) { /* the thread frees them once ending */
		s->workers = pool_threads(d->pool);
		s->backlog = pool_backlog(d->pool);
		s->copy_threads = d->serve ? pool_threads(d->serve) : 0;
	}
	pthread_mutex_unlock(&n->lock);
	s->copy_threads_max = SERVE_MAX;
	s->fuse_threads_max = FUSE_THREADS;
	s->at_target = atomic_load(&d->at_target);
	stats_show(d, s);
	opener_show(d, s);
}

const char *node_name(const struct node *n)
{
	return n->name;
}

const char *node_target(const struct node *n)
{
	return n->files.ctl ? "any device bound with BSG_IOC_ADD" : n->d.target->info.path;
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
	over = life_over(n->life);
	n->ended = NULL;
	pthread_mutex_unlock(&n->lock);
	return !over;
}

int node_free(struct node *n)
{
	bool started;
	int ret = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&n->lock);
	started = n->life != NODE_NEW;
	pthread_mutex_unlock(&n->lock);
	if (started) {
		node_stop(n);
		/* libfuse joins its workers: one held in a stalled copy never comes */
		while (session_join(&n->session, 1000)) {
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
	session_free(&n->session);  /* the thread never ran, or it destroyed the session */
	control_free(n->files.ctl); /* the session never ran: no binding was made */
	async_bsgdev_fini(&n->d);
	pool_free(n->d.pool);
	pool_free(n->d.serve);
	watchdog_free(n->d.wd);
	target_free(n->d.target);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
	files_fini(&n->files);
	pthread_mutex_destroy(&n->d.openers_lock);
	free(n);
	return ret;
}
