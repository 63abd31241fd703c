// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bsgadd.h"
#include "bsgdev.h"
#include "control.h"
#include "ident.h"
#include "ioctl.h"
#include "ioctx.h"
#include "list.h"
#include "lockcheck.h"
#include "opener.h"
#include "queue/async.h"
#include "queue/cmdq.h"
#include "sigwatch.h"
#include "uaccess.h"

struct control {
	struct bsgdev *cd;
	pthread_mutex_t lock;
	struct list_head dead; /* protected by lock: no opener left, to be freed */
	struct list_head live; /* protected by lock: the others */
};

/* One BSG_IOC_ADD: the device's daemon, alive while an opener of it is. */
struct binding {
	struct bsgdev d; /* first: d.openers_gone is given &d */
	struct control *ctl;
	struct list_head node; /* protected by ctl->lock: in live or dead */
	char name[PATH_MAX + 64];
};

struct control_file {
	pthread_mutex_t lock;
	bool adding; /* protected by lock: a BSG_IOC_ADD runs; another gets EBUSY */
	_Atomic(struct opener *) o;
	int flags;
	struct ident ident; /* who opened the file, until an opener takes it over */
	/* the file's share of threads, which its binding's copies hold (share.h) */
	struct share *share;
	struct share_file *sf;
	uid_t uid;
	uint64_t fh;	    /* its handle, as FUSE gives it: its binding's opener's */
	atomic_bool warned; /* a refusal of an unbound call was logged */
};

#define to_binding(dp) container_of(dp, struct binding, d)

/* d's last opener is gone, on any thread: freed later, from a control call. */
static void binding_gone(struct bsgdev *d)
{
	struct binding *b = to_binding(d);
	struct control *c = b->ctl;

	pthread_mutex_lock(&c->lock);
	list_del(&b->node);
	list_add(&b->node, &c->dead);
	pthread_mutex_unlock(&c->lock);
}

/* d->gone: a command found the bound device gone. */
static void binding_target_gone(struct bsgdev *d, int err)
{
	if (atomic_exchange(&d->target_gone, true))
		return;
	bsgdev_warn(d, "%s is gone: %s; new commands get ENODEV", d->target->info.path,
		    strerror(-err));
	cmdq_target_gone(d); /* parked calls with nothing to wait for end */
}

static void binding_free(struct binding *b)
{
	async_bsgdev_fini(&b->d);
	target_free(b->d.target);
	pthread_mutex_destroy(&b->d.openers_lock);
	free(b);
}

/* Free the bindings no opener holds.  Not with c->lock held. */
static void reap(struct control *c)
{
	struct list_head dead = LIST_HEAD_INIT(dead);
	struct binding *b, *next;

	assert_not_held(&c->lock);
	pthread_mutex_lock(&c->lock);
	list_splice_tail(&c->dead, &dead);
	pthread_mutex_unlock(&c->lock);
	list_for_each_entry_safe(b, next, &dead, node)
		binding_free(b);
}

int control_new(struct bsgdev *cd, struct control **ret)
{
	struct control *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cd = cd;
	pthread_mutex_init(&c->lock, NULL);
	list_init(&c->dead);
	list_init(&c->live);
	*ret = c;
	return 0;
}

void control_stop(struct control *c)
{
	struct binding *b, **all;
	size_t n = 0, i = 0;

	if (!c)
		return;
	/* the session is over: no binding is added now, but one may die meanwhile */
	pthread_mutex_lock(&c->lock);
	list_for_each_entry(b, &c->live, node)
		n++;
	all = calloc(n ? n : 1, sizeof(*all));
	list_for_each_entry(b, &c->live, node) {
		if (!all)
			break;
		all[i++] = b;
	}
	pthread_mutex_unlock(&c->lock);
	/* a daemon's resolver holds a reference to its opener: b lives until
	 * it is stopped; its completions hand work to the control node's
	 * pools, which go next */
	for (i = 0; all && i < n; i++) {
		async_bsgdev_fini(&all[i]->d);
		target_queue_stop(all[i]->d.target);
	}
	free(all);
}

void control_free(struct control *c)
{
	if (!c)
		return;
	reap(c);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int control_open(struct control *c, pid_t tid, int flags, struct control_file **ret)
{
	struct control_file *f;
	struct ident_cache cache;
	int err = 0;

	reap(c);
	f = calloc(1, sizeof(*f));
	if (!f)
		return ENOMEM;
	f->flags = flags;
	f->ident.pidfd = -1;
	/* as any opener: read() and write() must come from this context */
	if (tid > 0) {
		ident_cache_init(&cache);
		err = opener_read_ident(c->cd, &cache, tid, &f->ident);
		ident_cache_fini(&cache);
	}
	if (err) {
		free(f);
		return err;
	}
	pthread_mutex_init(&f->lock, NULL);
	atomic_init(&f->o, NULL);
	*ret = f;
	return 0;
}

void control_release(struct control *c, struct control_file *f)
{
	struct opener *o = atomic_load(&f->o);

	if (o)
		cmdq_release(o);
	ident_fini(&f->ident);
	pthread_mutex_destroy(&f->lock);
	free(f);
	reap(c);
}

void control_set_share(struct control_file *f, struct share *s, struct share_file *sf, uid_t uid,
		       uint64_t fh)
{
	f->share = s;
	f->sf = sf;
	f->uid = uid;
	f->fh = fh;
}

struct opener *control_opener(struct control_file *f)
{
	return atomic_load_explicit(&f->o, memory_order_acquire);
}

/* The device's daemon: the control node's settings, the target's limits. */
static int binding_new(struct control *c, struct target *t, struct binding **ret)
{
	struct bsgdev *cd = c->cd;
	struct binding *b = calloc(1, sizeof(*b));
	const char *base = strrchr(t->info.path, '/');

	if (!b)
		return -ENOMEM;
	b->ctl = c;
	snprintf(b->name, sizeof(b->name), "%s:%s", cd->name, base ? base + 1 : t->info.path);
	bsgdev_setup(&b->d, b->name, cd->mem, cd->opener_mem_max, cd->queue_depth, cd->policy);
	b->d.target = t;
	b->d.pool = cd->pool;
	b->d.serve = cd->serve;
	b->d.wd = cd->wd;
	b->d.direct = cd->direct;
	b->d.signal_ends = sigwatch_ends_call;
	b->d.max_running = target_max_queued(t);
	/* the client's one open file: its channels are duplicates, with one set of slots */
	b->d.slots_shared = b->d.max_running != 0;
	b->d.max_xfer = t->info.max_xfer;
	b->d.max_xfer_errno = t->info.max_xfer_errno;
	b->d.user_limit = uaccess_user_limit();
	/* the rule of the descriptor's own driver where the policy leaves it to the kernel */
	b->d.policy_kernel = t->info.kind == TARGET_SG ? FILTER_KERNEL_SG : FILTER_KERNEL_BSG;
	b->d.bound = true;
	/* commands go to the shared workers: no binding holds libfuse's */
	b->d.inline_max = 0;
	b->d.home = c->cd;
	b->d.openers_gone = binding_gone;
	b->d.gone = binding_target_gone;
	pthread_mutex_lock(&c->lock);
	list_add(&b->node, &c->live);
	pthread_mutex_unlock(&c->lock);
	*ret = b;
	return 0;
}

/* A duplicate of the caller's descriptor that x's argument names, or -errno as bsg answers. */
static int take_fd(struct control *c, struct ioctx *x)
{
	int fd = -1, err = bsgadd_decode(x->arg, &fd);

	if (!err)
		fd = x->tid > 0 ? uaccess_getfd(x->tid, fd) : -ESRCH;
	else
		fd = -EBADF;
	if (fd >= 0)
		return fd;
	/* no such descriptor: bsg's ENODEV; one we may not take is refused */
	err = fd == -EBADF ? -ENODEV : fd == -ESRCH ? -EPERM : fd;
	bsgdev_warn(c->cd, "tid %d: BSG_IOC_ADD of descriptor %lld: %s", x->tid, (long long)x->arg,
		    fd == -EBADF ? "no such descriptor" : strerror(-fd));
	return err;
}

/* The file fd is open on, as bsgadd_check() judges it: 0, or -errno and *why. */
static int check_file(int fd, const char **why)
{
	struct bsgadd_file f = { .flags = fcntl(fd, F_GETFL) };
	struct stat st;

	if (f.flags < 0 || fstat(fd, &st) < 0) {
		*why = "cannot be examined";
		return -errno;
	}
	f.mode = st.st_mode;
	return bsgadd_check(&f, why);
}

/* The caller's descriptor as a target; -errno as bsg_add_device() answers. */
static int take_target(struct control *c, struct ioctx *x, struct target **ret)
{
	char link[64], path[PATH_MAX], why[PATH_MAX + 128];
	const char *what;
	int fd = take_fd(c, x);
	ssize_t n;
	int err;

	if (fd < 0)
		return fd;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(path, sizeof(path), "descriptor %d of tid %d", (int)x->arg, x->tid);
	err = check_file(fd, &what);
	if (err)
		snprintf(why, sizeof(why), "%s %s", path, what);
	else
		err = target_from_fd(fd, path, ret, why, sizeof(why));
	if (err) {
		close(fd);
		bsgdev_warn(c->cd, "tid %d: BSG_IOC_ADD refused: %s", x->tid, why);
	}
	return err;
}

int control_unbound(struct control *c, struct control_file *f, pid_t tid, const char *call)
{
	return opener_check_unbound(c->cd, f->fh, &f->warned, tid, call) ?: -ENXIO;
}

/* Bind f to t, taken over: 0 or -errno (t freed). */
static int bind_target(struct control *c, struct control_file *f, struct ioctx *x, struct target *t)
{
	struct binding *b;
	struct opener *o;
	int err;

	err = binding_new(c, t, &b);
	if (err) {
		target_free(t);
		return err;
	}
	/* our own count while the opener is made: a failure frees b with it */
	bsgdev_opener_get(&b->d);
	err = -opener_new(&b->d, t->info.fd_flags, false, x->tid, &f->ident, &o);
	if (!err) {
		o->fh = f->fh;
		if (f->sf) /* before its first call: the file's share */
			cmdq_set_share(o, f->share, f->sf, f->uid);
		atomic_store_explicit(&f->o, o, memory_order_release);
		log_node(LOG_INFO, c->cd->name, "tid %d: a file bound to %s (%s, open %s)", x->tid,
			 t->info.path, target_kind_name(t->info.kind),
			 bsgadd_mode_name(t->info.fd_flags));
	}
	bsgdev_opener_put(&b->d);
	return err;
}

/*
 * The caller's descriptor may be of any file, one of a FUSE file system
 * whose answers never come too: it is looked at, and closed if refused,
 * with no lock held, on the thread of this call alone (its share, share.h).
 */
static void bind(struct control *c, struct control_file *f, struct ioctx *x)
{
	struct target *t;
	int err;

	reap(c);
	pthread_mutex_lock(&f->lock);
	err = atomic_load(&f->o) || f->adding ? -EBUSY : 0;
	if (!err)
		f->adding = true;
	pthread_mutex_unlock(&f->lock);
	if (err) {
		ioctx_reply(x, err);
		return;
	}
	err = take_target(c, x, &t);
	if (!err)
		err = bind_target(c, f, x, t);
	pthread_mutex_lock(&f->lock);
	f->adding = false;
	pthread_mutex_unlock(&f->lock);
	ioctx_reply(x, err);
}

/* A disk's informational block-device ioctl: true if cmd was one (x answered). */
static bool blk_ioctl(struct ioctx *x, unsigned cmd)
{
	uint64_t val;
	size_t len;
	int chan, err;

	if (x->o->d->target->info.kind != TARGET_SD)
		return false; /* target_blk_info()'s -ENOTTY, without opening a channel */
	chan = opener_chan(x->o);
	err = chan < 0 ? chan : target_blk_info(x->o->d->target, chan, cmd, &val, &len);

	if (err == -ENOTTY)
		return false;
	if (err)
		ioctx_reply(x, err);
	else
		ioctx_reply_out(x, 0, &val, len);
	return true;
}

void control_ioctl(struct control *c, struct control_file *f, struct ioctx *x, unsigned cmd,
		   unsigned flags)
{
	bool native = !(flags & FUSE_IOCTL_COMPAT); /* 32-bit callers: as ioctl_dispatch() says */

	x->o = control_opener(f);
	if (cmd == BSG_IOC_ADD && native)
		bind(c, f, x);
	else if (!x->o)
		ioctx_reply(x, native && ioctl_owner_name(cmd)
				       ? control_unbound(c, f, x->tid, ioctl_owner_name(cmd))
				       : -ENXIO);
	else if (!native || !blk_ioctl(x, cmd))
		ioctl_dispatch(x, cmd, flags);
}
