// SPDX-License-Identifier: GPL-2.0-only
/*
 * cuse_bsg: serve a SCSI pass-through node through CUSE.  main() checks the
 * target, registers /dev/NAME, and runs libfuse's multi-threaded loop; the
 * callbacks below are thin trampolines.  No callback blocks: SG_IO is handed
 * to the worker pool and answered from there.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "async.h"
#include "caps.h"
#include "daemon.h"
#include "ioctl.h"
#include "log.h"
#include "notify.h"
#include "uaccess.h"

#define CUSE_BSG_VERSION "0.1.0"
#define SG_MAJOR	 21 /* the sg driver's char major, which sg_dd and sgp_dd test for */
#define NODE_WAIT_MS	 5000
#define FUSE_THREADS	 16 /* libfuse workers at most */
#define FUSE_SPARE	 4  /* of which never busy with a command */

enum copy_mode { COPY_AUTO, COPY_DIRECT, COPY_RETRY };
enum async_engine { ASYNC_AUTO, ASYNC_QUEUE, ASYNC_POOL };

struct options {
	const char *target;
	char name[128];
	bool foreground;
	mode_t mode; /* (mode_t)-1, (uid_t)-1, (gid_t)-1: leave as created */
	uid_t uid;
	gid_t gid;
	unsigned threads;
	enum copy_mode copy;
	enum async_engine engine;
	int sg_minor; /* --sg-compat: register as char 21:sg_minor, or -1 */
	bool shared_queue;
	const char *policy; /* --policy FILE, or NULL: the kernel's rule */
};

/* main()'s one instance; libfuse hands it to every callback as userdata. */
struct runtime {
	struct daemon d;
	struct options opt;
	/* --shared-queue: every open file is this one opener, as bsg before 4.19 */
	pthread_mutex_t shared_lock;
	struct opener *shared; /* protected by shared_lock */
	unsigned shared_files; /* protected by shared_lock */
	struct fuse_session *se;
	int ready_fd; /* daemon mode: tells the parent how start-up went */
	atomic_bool node_up;
	atomic_bool stopping;
};

static struct daemon *req_daemon(fuse_req_t req)
{
	struct runtime *rt = fuse_req_userdata(req);

	return &rt->d;
}

static struct opener *fi_opener(struct fuse_file_info *fi)
{
	return (struct opener *)(uintptr_t)fi->fh;
}

/* The last file of o is gone (with --shared-queue, maybe not yet). */
static void release_shared(struct runtime *rt, struct opener *o)
{
	bool last = true;

	if (rt->opt.shared_queue) {
		pthread_mutex_lock(&rt->shared_lock);
		if (rt->shared == o) {
			last = --rt->shared_files == 0;
			if (last)
				rt->shared = NULL;
		}
		pthread_mutex_unlock(&rt->shared_lock);
	}
	if (last)
		async_release(o);
}

static void set_file(struct fuse_file_info *fi, struct opener *o)
{
	fi->fh = (uintptr_t)o;
	fi->nonseekable = 1; /* sg uses nonseekable_open(): pread/pwrite get ESPIPE */
	fi->direct_io = 1;
}

/*
 * --shared-queue: pre-4.19 bsg kept one queue per device, so that any
 * opener could read any other's completions.  Reproduced on request, to
 * show that flaw; true if the open was answered.
 */
static bool open_shared(fuse_req_t req, struct fuse_file_info *fi)
{
	struct runtime *rt = fuse_req_userdata(req);
	struct opener *o;

	if (!rt->opt.shared_queue)
		return false;
	pthread_mutex_lock(&rt->shared_lock);
	o = rt->shared;
	if (o)
		rt->shared_files++;
	pthread_mutex_unlock(&rt->shared_lock);
	if (!o)
		return false;
	set_file(fi, o);
	if (fuse_reply_open(req, fi) < 0)
		release_shared(rt, o);
	return true;
}

static void cb_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct runtime *rt = fuse_req_userdata(req);
	struct daemon *d = req_daemon(req);
	struct opener *o;

	stat_inc(d, STAT_OPEN);
	if (open_shared(req, fi))
		return;
	o = calloc(1, sizeof(*o));
	if (!o) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	o->d = d;
	o->open_flags = fi->flags;
	o->chan = atomic_load(&d->target_gone) ? -ENODEV : d->target->ops->chan_open(d->target);
	if (o->chan < 0) {
		log_warn("cannot open %s for a new opener: %s", d->target->info.path,
			 strerror(-o->chan));
		/* the device node vanishing with the device is sg's ENODEV */
		fuse_reply_err(req, o->chan == -ENOENT ? ENODEV : -o->chan);
		free(o);
		return;
	}
	ioctl_opener_init(o);
	async_opener_init(o, fuse_req_ctx(req)->pid);
	if (rt->opt.shared_queue) {
		pthread_mutex_lock(&rt->shared_lock);
		rt->shared = o; /* two first opens at once: the later one wins */
		rt->shared_files++;
		pthread_mutex_unlock(&rt->shared_lock);
	}
	set_file(fi, o);
	if (fuse_reply_open(req, fi) < 0)
		release_shared(rt, o);
}

/* Last reference to the file gone: no call of it can be in flight. */
static void cb_release(fuse_req_t req, struct fuse_file_info *fi)
{
	stat_inc(req_daemon(req), STAT_RELEASE);
	release_shared(fuse_req_userdata(req), fi_opener(fi));
	fuse_reply_err(req, 0);
}

/* fi->flags is the file's flags now: O_NONBLOCK set later by fcntl() shows. */
static void cb_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)off;
	stat_inc(req_daemon(req), STAT_READ);
	async_read(req, fi_opener(fi), size, fi->flags);
}

static void cb_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)off;
	stat_inc(req_daemon(req), STAT_WRITE);
	async_write(req, fi_opener(fi), buf, size, fi->flags);
}

static void cb_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	stat_inc(req_daemon(req), STAT_POLL);
	async_poll(req, fi_opener(fi), ph);
}

static void cb_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct daemon *d = req_daemon(req);
	struct ioctx x = {
		.req = req,
		.o = fi_opener(fi),
		.arg = (uintptr_t)arg,
		.in_buf = in_buf,
		.in_len = in_bufsz,
		.out_len = out_bufsz,
		.tid = fuse_req_ctx(req)->pid,
	};

	stat_inc(d, STAT_IOCTL);
	x.direct = d->direct && x.tid > 0; /* 0: caller outside our pid namespace */
	ioctl_dispatch(&x, (unsigned)cmd, flags);
}

static void notify_parent(struct runtime *rt, char status)
{
	if (rt->ready_fd < 0)
		return;
	if (write(rt->ready_fd, &status, 1) != 1)
		log_warn("cannot report start-up to the parent: %s", strerror(errno));
	close(rt->ready_fd);
	rt->ready_fd = -1;
}

/* devtmpfs creates the node asynchronously; sysfs names it with '!' for '/'. */
static int wait_for_node(const struct options *opt, dev_t *ret)
{
	char devpath[160], syspath[200], kname[128];
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned maj, min;
	struct stat st;

	snprintf(devpath, sizeof(devpath), "/dev/%s", opt->name);
	snprintf(kname, sizeof(kname), "%s", opt->name);
	for (char *p = kname; *p; p++)
		if (*p == '/')
			*p = '!';
	snprintf(syspath, sizeof(syspath), "/sys/class/cuse/%s/dev", kname);
	for (int waited = 0; waited < NODE_WAIT_MS; waited += 10) {
		FILE *f = fopen(syspath, "re");
		int n = f ? fscanf(f, "%u:%u", &maj, &min) : 0;

		if (f)
			fclose(f);
		if (n == 2 && stat(devpath, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(maj, min)) {
			*ret = st.st_rdev;
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	return -ENODEV;
}

/*
 * Only what --mode, --owner and --group ask for: without them the node stays
 * as devtmpfs and udev's rules made it.  udev applies a rule's MODE and GROUP
 * when it processes the node's uevent, maybe after we got here, so wait for
 * it to record the device first (its database entry is written after the
 * node's permissions): the options win.
 */
static int set_node_access(const struct options *opt, dev_t dev)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	char devpath[160], db[64];

	if (opt->mode == (mode_t)-1 && opt->uid == (uid_t)-1 && opt->gid == (gid_t)-1)
		return 0;
	snprintf(db, sizeof(db), "/run/udev/data/c%u:%u", major(dev), minor(dev));
	for (int waited = 0; waited < NODE_WAIT_MS && access("/run/udev/control", F_OK) == 0 &&
			     access(db, F_OK) < 0;
	     waited += 10)
		nanosleep(&tick, NULL);
	snprintf(devpath, sizeof(devpath), "/dev/%s", opt->name);
	/* the mode first, while the node is root's: no CAP_FOWNER needed */
	if (opt->mode != (mode_t)-1 && chmod(devpath, opt->mode) < 0)
		return -errno;
	if ((opt->uid != (uid_t)-1 || opt->gid != (gid_t)-1) &&
	    chown(devpath, opt->uid, opt->gid) < 0)
		return -errno;
	return 0;
}

/* The service manager's Type=notify protocol; nothing without NOTIFY_SOCKET. */
static void tell_manager(const char *msg)
{
	int err = notify_send(msg);

	if (err < 0)
		log_warn("cannot notify the service manager (NOTIFY_SOCKET): %s", strerror(-err));
}

/* libfuse calls this once CUSE_INIT is answered, even if registration failed. */
static void cb_init_done(void *userdata)
{
	struct runtime *rt = userdata;
	char msg[200];
	dev_t dev;
	int err;

	err = wait_for_node(&rt->opt, &dev);
	if (err) {
		log_err("/dev/%s did not appear: the kernel refused the device (name or number "
			"taken? see dmesg)",
			rt->opt.name);
		goto fail;
	}
	err = set_node_access(&rt->opt, dev);
	if (err) {
		log_err("cannot set owner and mode of /dev/%s: %s", rt->opt.name, strerror(-err));
		goto fail;
	}
	atomic_store(&rt->node_up, true);
	log_info("serving %s (%s %s, %s) as /dev/%s (%u:%u)", rt->d.target->info.path,
		 rt->d.target->info.vendor, rt->d.target->info.product,
		 target_kind_name(rt->d.target->info.kind), rt->opt.name, major(dev), minor(dev));
	notify_parent(rt, 0);
	if (notify_ready_msg(msg, sizeof(msg), rt->opt.name) == 0)
		tell_manager(msg);
	return;
fail:
	notify_parent(rt, 1);
	fuse_session_exit(rt->se);
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

static void log_stats(struct daemon *d)
{
	unsigned long s[STAT_COUNT];

	for (int i = 0; i < STAT_COUNT; i++)
		s[i] = atomic_load(&d->stats[i]);
	log_msg(LOG_NOTICE,
		"stats: open=%lu release=%lu read=%lu write=%lu ioctl=%lu poll=%lu "
		"interrupt=%lu sg_io=%lu sg_io_errors=%lu ioctl_retries=%lu refused=%lu "
		"at_target=%u avg_latency_us=%lu queued=%u",
		s[STAT_OPEN], s[STAT_RELEASE], s[STAT_READ], s[STAT_WRITE], s[STAT_IOCTL],
		s[STAT_POLL], s[STAT_INTERRUPT], s[STAT_SG_IO], s[STAT_SG_IO_ERR],
		s[STAT_IOCTL_RETRY], s[STAT_REFUSED], atomic_load(&d->at_target),
		s[STAT_SG_IO] ? s[STAT_LATENCY_US] / s[STAT_SG_IO] : 0, pool_backlog(d->pool));
}

/* SIGUSR1 is blocked in every thread; this one takes it and logs counters. */
static void *stats_main(void *arg)
{
	struct runtime *rt = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) == 0 && !atomic_load(&rt->stopping))
		log_stats(&rt->d);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cuse_bsg [OPTIONS] TARGET\n"
		   "Serve the SCSI pass-through device TARGET (/dev/sgN, /dev/sdX or\n"
		   "/dev/bsg/H:C:T:L) as a character device /dev/NAME through CUSE.\n"
		   "\n"
		   "  -n, --name NAME      node name under /dev (default: bsg/<target>-cuse)\n"
		   "  -f, --foreground     stay in the foreground, log to stderr\n"
		   "  -m, --mode MODE      set the node's permissions, octal (default: leave\n"
		   "                       them as devtmpfs and udev made them; 0600 root:root\n"
		   "                       without a udev rule)\n"
		   "  -o, --owner USER     set the node's owner (default: leave it)\n"
		   "  -g, --group GROUP    set the node's group (default: leave it)\n"
		   "  -t, --threads N      worker threads issuing SG_IO (default: 32, 1..64)\n"
		   "  -c, --copy MODE      data path: auto, direct or retry (default: auto)\n"
		   "  -a, --async ENGINE   how written commands reach the target: queue (an sg\n"
		   "                       target's own write()/read() queue), pool (the worker\n"
		   "                       threads) or auto: queue on sg, else pool (default)\n"
		   "  -s, --sg-compat N    be /dev/sgN, char major 21, for tools that trust only\n"
		   "                       sg's number (sg_dd, sgp_dd); the sg driver must be "
		   "unloaded\n"
		   "  -P, --policy FILE    who may send which command (docs/POLICY.md); default:\n"
		   "                       the kernel's bsg rule\n"
		   "  -S, --shared-queue   one queue for every open file, as bsg before Linux\n"
		   "                       4.19: replies reach other openers; only to show that\n"
		   "  -v, --verbose        more log output (repeat for debug)\n"
		   "  -h, --help           this text\n"
		   "  -V, --version        print the version\n"
		   "\n"
		   "SIGUSR1 logs the request counters; SIGINT and SIGTERM stop the daemon.\n");
}

static void default_name(struct options *opt)
{
	const char *base = strrchr(opt->target, '/');

	snprintf(opt->name, sizeof(opt->name), "bsg/%s-cuse", base ? base + 1 : opt->target);
}

/* A user or group given by number. */
static int parse_id(const char *s, long *ret)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v >= (long)UINT32_MAX) /* -1 is chown()'s "unchanged" */
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_user(const char *s, uid_t *ret)
{
	struct passwd *pw = getpwnam(s);
	long v;

	if (!pw && parse_id(s, &v) < 0)
		return -EINVAL;
	*ret = pw ? pw->pw_uid : (uid_t)v;
	return 0;
}

static int parse_group(const char *s, gid_t *ret)
{
	struct group *gr = getgrnam(s);
	long v;

	if (!gr && parse_id(s, &v) < 0)
		return -EINVAL;
	*ret = gr ? gr->gr_gid : (gid_t)v;
	return 0;
}

/* The index of s in names[0..n), or -EINVAL. */
static int parse_word(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -EINVAL;
}

static int parse_copy(const char *s, enum copy_mode *ret)
{
	static const char *const names[] = { "auto", "direct", "retry" };
	int i = parse_word(s, names, 3);

	if (i >= 0)
		*ret = i;
	return i < 0 ? i : 0;
}

static int parse_engine(const char *s, enum async_engine *ret)
{
	static const char *const names[] = { "auto", "queue", "pool" };
	int i = parse_word(s, names, 3);

	if (i >= 0)
		*ret = i;
	return i < 0 ? i : 0;
}

static int bad_option(const char *what, const char *value)
{
	fprintf(stderr, "cuse_bsg: invalid %s '%s' (see --help)\n", what, value);
	return 2;
}

/* 0 to go on, or the exit status. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "owner", required_argument, NULL, 'o' },
		{ "group", required_argument, NULL, 'g' },
		{ "threads", required_argument, NULL, 't' },
		{ "copy", required_argument, NULL, 'c' },
		{ "async", required_argument, NULL, 'a' },
		{ "sg-compat", required_argument, NULL, 's' },
		{ "shared-queue", no_argument, NULL, 'S' },
		{ "policy", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	*opt = (struct options){
		.mode = (mode_t)-1,
		.uid = (uid_t)-1,
		.gid = (gid_t)-1,
		.threads = 32,
		.sg_minor = -1,
	};
	while ((c = getopt_long(argc, argv, "n:fm:o:g:t:c:a:s:SP:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!*optarg || strlen(optarg) >= sizeof(opt->name) || optarg[0] == '/' ||
			    strstr(optarg, "..") || !strncmp(optarg, "cuse", 4))
				return bad_option("name", optarg);
			snprintf(opt->name, sizeof(opt->name), "%s", optarg);
			break;
		case 'f':
			opt->foreground = true;
			break;
		case 'm':
			v = strtol(optarg, &end, 8);
			if (!*optarg || *end || v < 0 || v > 07777)
				return bad_option("mode", optarg);
			opt->mode = v;
			break;
		case 'o':
			if (parse_user(optarg, &opt->uid) < 0)
				return bad_option("owner", optarg);
			break;
		case 'g':
			if (parse_group(optarg, &opt->gid) < 0)
				return bad_option("group", optarg);
			break;
		case 't':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 64)
				return bad_option("thread count", optarg);
			opt->threads = v;
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 0 || v > 255)
				return bad_option("sg minor", optarg);
			opt->sg_minor = v;
			break;
		case 'c':
			if (parse_copy(optarg, &opt->copy) < 0)
				return bad_option("copy mode", optarg);
			break;
		case 'a':
			if (parse_engine(optarg, &opt->engine) < 0)
				return bad_option("async engine", optarg);
			break;
		case 'S':
			opt->shared_queue = true;
			break;
		case 'P':
			opt->policy = optarg;
			break;
		case 'v':
			log_level = log_level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("cuse_bsg %s\n", CUSE_BSG_VERSION);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	opt->target = argv[optind];
	if (!opt->name[0] && opt->sg_minor >= 0)
		snprintf(opt->name, sizeof(opt->name), "sg%d", opt->sg_minor);
	if (!opt->name[0])
		default_name(opt);
	return 0;
}

static int choose_path(struct runtime *rt)
{
	const struct target_info *t = &rt->d.target->info;
	bool possible = uaccess_direct_possible();

	if (rt->opt.copy == COPY_DIRECT && !possible) {
		log_err("--copy=direct needs CAP_SYS_PTRACE (and Yama ptrace_scope < 3)");
		return -EPERM;
	}
	rt->d.direct = rt->opt.copy == COPY_DIRECT || (rt->opt.copy == COPY_AUTO && possible);
	if (rt->d.direct) {
		rt->d.max_xfer = t->max_xfer;
		rt->d.max_xfer_errno = t->max_xfer_errno;
		log_info("data path: direct copy (process_vm_readv/writev), up to %u bytes a "
			 "command",
			 rt->d.max_xfer);
	} else {
		rt->d.max_xfer = t->max_xfer < RETRY_MAX_XFER ? t->max_xfer : RETRY_MAX_XFER;
		rt->d.max_xfer_errno = ENOMEM;
		log_info("data path: ioctl retry (no ptrace rights), up to %u bytes a command",
			 rt->d.max_xfer);
	}
	return 0;
}

/*
 * Before the first thread: keep CAP_SYS_RAWIO (the target's command filter
 * passes every command the policy allows), with the direct path
 * CAP_SYS_PTRACE (process_vm_readv/writev, /proc/TID/syscall) and
 * CAP_DAC_READ_SEARCH (/proc/TID/syscall is 0400, its owner's), and
 * CAP_CHOWN while the node is still to be given away.  Still uid 0: the
 * target, /dev/cuse and the node are root's.
 */
static int drop_privileges(struct runtime *rt)
{
	uint64_t keep = CAPS_BIT(CAP_SYS_RAWIO);
	char names[128];
	int ret;

	if (rt->d.direct)
		keep |= CAPS_BIT(CAP_SYS_PTRACE) | CAPS_BIT(CAP_DAC_READ_SEARCH);
	if ((rt->opt.uid != (uid_t)-1 && rt->opt.uid != 0) ||
	    (rt->opt.gid != (gid_t)-1 && rt->opt.gid != 0))
		keep |= CAPS_BIT(CAP_CHOWN);
	ret = caps_limit(keep);
	if (ret < 0) {
		log_err("cannot drop capabilities: %s", strerror(-ret));
		return ret;
	}
	caps_names(keep, names, sizeof(names));
	log_info("capabilities kept: %s", names);
	return 0;
}

/* After the fork: the target's completion thread, for the queue engine. */
static int start_engine(struct runtime *rt)
{
	struct target *t = rt->d.target;
	bool has_queue = t->ops->queue_open != NULL;
	int ret;

	rt->d.max_running = target_max_queued(t);
	if (rt->opt.engine == ASYNC_POOL || (rt->opt.engine == ASYNC_AUTO && !has_queue))
		return 0;
	if (!has_queue) {
		log_err("--async=queue needs an sg target; %s is %s", t->info.path,
			target_kind_name(t->info.kind));
		return -EINVAL;
	}
	ret = target_queue_start(t, async_target_done);
	if (ret < 0) {
		log_err("cannot start the completion thread for %s: %s", t->info.path,
			strerror(-ret));
		return ret;
	}
	rt->d.queue = true;
	log_info("written commands: %s's own queue, one completion thread", t->info.path);
	return 0;
}

/* Every opener holds a descriptor of the target: allow as many as we may. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --policy FILE into d->policy; without it, the kernel's rule. */
static int load_policy(struct runtime *rt)
{
	static char text[FILTER_TEXT_MAX + 1];
	const char *path = rt->opt.policy;
	char why[256];
	size_t len;
	FILE *f;
	int err;

	filter_init(&rt->d.policy);
	if (!path)
		return 0;
	f = fopen(path, "re");
	if (!f) {
		log_err("cannot open the policy %s: %s", path, strerror(errno));
		return -errno;
	}
	len = fread(text, 1, sizeof(text), f); /* one more than the parser takes */
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!err)
		err = filter_parse(text, len, &rt->d.policy, why, sizeof(why));
	if (err) {
		log_err("policy %s: %s", path, err == -EIO ? strerror(EIO) : why);
		return err;
	}
	log_info("access policy: %s", path);
	return 0;
}

static int open_target(struct runtime *rt)
{
	char why[512];
	int err = load_policy(rt);

	if (err)
		return err;
	if (access("/dev/cuse", F_OK) < 0) {
		log_err("/dev/cuse is missing: run 'modprobe cuse'");
		return -ENODEV;
	}
	if (access("/dev/cuse", R_OK | W_OK) < 0) {
		log_err("cannot open /dev/cuse: %s (cuse_bsg must run as root)", strerror(errno));
		return -EACCES;
	}
	if (rt->opt.sg_minor >= 0 && access("/sys/module/sg", F_OK) == 0) {
		/* sg owns every minor of major 21 while it is loaded */
		log_err("--sg-compat needs the sg driver unloaded: run 'modprobe -r sg'");
		return -EBUSY;
	}
	err = target_open(rt->opt.target, &rt->d.target, why, sizeof(why));
	if (err) {
		log_err("%s%s", why, err == -EACCES || err == -EPERM ? " (run as root)" : "");
		return err;
	}
	return choose_path(rt);
}

/* Fork; the parent exits with the child's start-up status. */
static int daemonize(struct runtime *rt)
{
	int fds[2];
	char status = 1;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(fds[0]);
	rt->ready_fd = fds[1];
	setsid();
	if (chdir("/") < 0)
		return -errno;
	return 0;
}

static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

static int serve(struct runtime *rt)
{
	char devname[160];
	const char *dev_info[] = { devname };
	char *fuse_argv[] = { "cuse_bsg", "-f", NULL };
	struct cuse_info ci = {
		.dev_major = rt->opt.sg_minor >= 0 ? SG_MAJOR : 0,
		.dev_minor = rt->opt.sg_minor >= 0 ? rt->opt.sg_minor : 0,
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	struct fuse_loop_config *cfg;
	int mt, ret;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", rt->opt.name);
	rt->se = cuse_lowlevel_setup(2, fuse_argv, &ci, &cuse_ops, &mt, rt);
	if (!rt->se) {
		log_err("cannot set up the CUSE session for /dev/%s", rt->opt.name);
		return -EIO;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		cuse_lowlevel_teardown(rt->se);
		return -ENOMEM;
	}
	fuse_loop_cfg_set_max_threads(cfg, FUSE_THREADS);
	rt->d.inline_max = FUSE_THREADS - FUSE_SPARE;
	ret = fuse_session_loop_mt(rt->se, cfg);
	if (atomic_load(&rt->node_up))
		tell_manager("STOPPING=1\n");
	fuse_loop_cfg_destroy(cfg);
	/* answer what the workers still hold while the session can take it */
	pool_free(rt->d.pool);
	rt->d.pool = NULL;
	cuse_lowlevel_teardown(rt->se);
	return ret < 0 ? -EIO : 0;
}

static int node_taken(const struct options *opt)
{
	char devpath[160];

	snprintf(devpath, sizeof(devpath), "/dev/%s", opt->name);
	if (access(devpath, F_OK) < 0)
		return 0;
	log_err("/dev/%s already exists: is another cuse_bsg serving it?", opt->name);
	return -EEXIST;
}

int main(int argc, char **argv)
{
	static struct runtime rt = { .ready_fd = -1, .shared_lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t stats_thread;
	char prefix[160];
	sigset_t set;
	int ret;

	ret = parse_options(argc, argv, &rt.opt);
	if (ret)
		return ret < 0 ? 0 : ret;
	snprintf(prefix, sizeof(prefix), "cuse_bsg[%s]", rt.opt.name);
	log_set_prefix(prefix);
	raise_fd_limit();
	/* a shell starts background jobs with SIGINT ignored, and libfuse
	 * only handles signals left at their default */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (open_target(&rt) < 0 || node_taken(&rt.opt) < 0)
		return 1;
	if (!rt.opt.foreground && daemonize(&rt) < 0) {
		log_err("cannot fork into the background: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (drop_privileges(&rt) < 0)
		return 1;
	ret = pool_new(rt.opt.threads, &rt.d.pool);
	if (ret < 0) {
		log_err("cannot start %u worker threads: %s", rt.opt.threads, strerror(-ret));
		return 1;
	}
	if (start_engine(&rt) < 0)
		return 1;
	rt.d.name = rt.opt.name;
	pthread_create(&stats_thread, NULL, stats_main, &rt);
	if (!rt.opt.foreground) {
		log_use_syslog(true);
		detach_stdio();
	}
	ret = serve(&rt);
	atomic_store(&rt.stopping, true);
	pthread_kill(stats_thread, SIGUSR1);
	pthread_join(stats_thread, NULL);
	notify_parent(&rt, 1); /* if start-up never finished */
	target_free(rt.d.target);
	if (!atomic_load(&rt.node_up))
		return 1;
	log_info("stopped; /dev/%s removed", rt.opt.name);
	return ret < 0 ? 1 : 0;
}
