// SPDX-License-Identifier: GPL-2.0-only
/*
 * cuse_bsg: serve SCSI pass-through nodes through CUSE.  main() parses the
 * options and owns the nodes (node.c): one, for the TARGET given, or with
 * --all one per SCSI device, added and removed as udev reports them.  The
 * main thread alone creates, fails and frees nodes; it waits in poll() on a
 * signalfd (SIGINT and SIGTERM stop, SIGHUP reloads --policy, SIGUSR1 logs
 * the counters) and an eventfd, written when the udev watch's thread queues
 * an event or a node's session ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bsgdev.h"
#include "caps.h"
#include "filter.h"
#include "fleet.h"
#include "gate.h"
#include "ioctl.h"
#include "live.h"
#include "log.h"
#include "node.h"
#include "notify.h"
#include "options.h"
#include "policy.h"
#include "share.h"
#include "show.h"
#include "uaccess.h"
#include "udev.h"
#include "view.h"

/*
 * Exit statuses: 0 stopped; 1 a start-up error (target, options, /dev/cuse,
 * policy: starting again would fail again); 2 a usage error; EXIT_FAILED the
 * session failed while serving; EXIT_UDEV udevd did not process the node in
 * time.  The unit restarts on the last two only (RestartPreventExitStatus=).
 */
#define EXIT_FAILED 3
#define EXIT_UDEV   75 /* EX_TEMPFAIL */

/* main()'s state. */
struct runtime {
	struct options opt;
	int ready_fd; /* daemon mode: tells the parent how start-up went */
	int wakefd;   /* --all: an event queued or a session ended */
	int sigfd;
	struct timespec started;
	struct live *live;   /* the live view's socket (live.h), or NULL */
	struct node *one;    /* the node served, or NULL: --all's nodes */
	struct fleet *fleet; /* --all's, or NULL */
};

/*
 * Every opener holds descriptors (the target, its process, its /proc
 * files): allow as many as the kernel does (fs.nr_open), while root still
 * may, so that a client holding the node open many times runs out before
 * the daemon does.  An open the daemon cannot serve is refused, never
 * served half-known.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (nr_open > rl.rlim_max) {
		struct rlimit want = { nr_open, nr_open };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Whether /dev/cuse can be opened: 0, or -errno and why.  It is opened once
 * (and closed: no node comes of it), so that a static node loads the cuse
 * module before the witness looks for CUSE's functions (gate.h).
 */
static int check_cuse(char *why, size_t why_len)
{
	int fd;

	if (access("/dev/cuse", F_OK) < 0) {
		snprintf(why, why_len, "/dev/cuse is missing: run 'modprobe cuse'");
		return -ENODEV;
	}
	fd = open("/dev/cuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "cannot open /dev/cuse: %s (cuse_bsg must run as root)",
			 strerror(errno));
		return -EACCES;
	}
	close(fd);
	return 0;
}

/* The service manager's Type=notify protocol; nothing without NOTIFY_SOCKET. */
static void tell_manager(const char *msg)
{
	int err = notify_send(msg);

	if (err < 0)
		log_warn("cannot notify the service manager (NOTIFY_SOCKET): %s", strerror(-err));
}

/* --policy FILE, or the kernel's rule, into the nodes' live policy. */
static int load_policy(struct options *opt)
{
	struct filter_policy first;
	char why[512];
	int err;

	filter_init(&first);
	if (opt->policy_file) {
		err = policy_load(opt->policy_file, &first, why, sizeof(why));
		if (err) {
			log_err("%s", why);
			return err;
		}
		log_info("access policy: %s", opt->policy_file);
	}
	err = policy_new(&first, &opt->node.policy);
	if (err)
		log_err("cannot set up the access policy: %s", strerror(-err));
	return err;
}

/*
 * No --policy: the default file, when present, as smartd reads its own
 * (the package installs it all comments, which is the kernel's rule).
 */
static void default_policy(struct options *opt)
{
	if (!opt->policy_file && access(CUSE_BSG_POLICY_FILE, F_OK) == 0)
		opt->policy_file = CUSE_BSG_POLICY_FILE;
}

/*
 * SIGHUP: --policy FILE (or the default file, present now) again, whole or
 * not at all.  Commands being checked finish against the old policy; the
 * next ones see the new one.
 */
static void reload_policy(struct options *opt)
{
	struct filter_policy next;
	char why[512];

	default_policy(opt);
	if (!opt->policy_file) {
		log_msg(LOG_NOTICE, "SIGHUP: no --policy and no " CUSE_BSG_POLICY_FILE
				    " to reload; nothing changed");
		return;
	}
	if (policy_load(opt->policy_file, &next, why, sizeof(why)) < 0) {
		log_err("SIGHUP: %s; the policy in force is kept", why);
		return;
	}
	policy_replace(opt->node.policy, &next);
	log_msg(LOG_NOTICE, "SIGHUP: access policy %s reloaded", opt->policy_file);
}

/*
 * Before the first thread: keep CAP_SYS_RAWIO (the target's command filter
 * passes every command the policy allows) and CAP_SYS_ADMIN (the kernel
 * asks both of SG_SCSI_RESET's caller; the node asks them of its own
 * caller first), with the direct path
 * CAP_SYS_PTRACE (process_vm_readv/writev, /proc/TID/syscall) and
 * CAP_DAC_READ_SEARCH (/proc/TID/syscall is 0400, its owner's), and
 * CAP_CHOWN if nodes are to be given away; CAP_SETUID and CAP_SETGID for
 * the live view, whose judge thread takes a peer's credentials and with
 * them loses every capability (live_judge()).  Still uid 0: the targets,
 * /dev/cuse and the nodes are root's, so nodes made later need nothing more.
 */
static int drop_privileges(const struct options *opt)
{
	const struct node_config *cfg = &opt->node;
	uint64_t keep = CAPS_BIT(CAP_SYS_RAWIO) | CAPS_BIT(CAP_SYS_ADMIN) | CAPS_BIT(CAP_SETUID) |
			CAPS_BIT(CAP_SETGID);
	char names[160];
	int ret;

	if (cfg->copy == NODE_COPY_DIRECT ||
	    (cfg->copy == NODE_COPY_AUTO && uaccess_direct_possible()))
		keep |= CAPS_BIT(CAP_SYS_PTRACE) | CAPS_BIT(CAP_DAC_READ_SEARCH);
	if ((cfg->uid != (uid_t)-1 && cfg->uid != 0) || (cfg->gid != (gid_t)-1 && cfg->gid != 0))
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

/*
 * --cred-check: the gate, loaded and attached before the first thread and
 * the fork (its link survives them); proven live by the first node.  The
 * ioctls it checks are the table's (ioctl.h).
 */
static int load_gate(struct options *opt)
{
	struct node_config *c = &opt->node;
	unsigned cmds[16];
	size_t n = ioctl_owner_cmds(cmds, sizeof(cmds) / sizeof(cmds[0]));
	int err;

	err = gate_new(opt->cred_check, cmds, n, &c->gate, opt->gate_why, sizeof(opt->gate_why));
	if (err) {
		log_err("--cred-check=%s: %s",
			opt->cred_check == GATE_WITNESS ? "witness" : "kernel", opt->gate_why);
		return -1;
	}
	c->gate_required = opt->cred_check == GATE_KERNEL || opt->cred_check == GATE_WITNESS;
	if (!opt->gate_why[0] && !c->gate)
		snprintf(opt->gate_why, sizeof(opt->gate_why), "--cred-check=procfs");
	return 0;
}

/*
 * The check the daemon makes, for its start-up line and --check: live, a
 * node proved the gate; loaded and not live, none has yet (--check, --all
 * before its first node) or the proof failed (logged by the node).  Where
 * auto passed over the witness, why says why.
 */
static void cred_check_words(const struct options *opt, bool live, char *buf, size_t len)
{
	const struct gate *g = opt->node.gate;
	const char *why = opt->gate_why;
	bool passed_over = g && gate_loaded(g) != GATE_SEEN && why[0];

	if (live || (g && opt->check))
		snprintf(buf, len, "credential check: %s%s%s%s", gate_describe_long(g),
			 live ? "" : ", loaded; proven live at start", passed_over ? "; " : "",
			 passed_over ? why : "");
	else if (g && gate_loaded(g) && opt->all)
		snprintf(buf, len,
			 "credential check: %s, loaded; the first node proves it live%s%s",
			 gate_describe_long(g), passed_over ? "; " : "", passed_over ? why : "");
	else if (g)
		snprintf(buf, len, "credential check: procfs (the BPF program did not prove live)");
	else
		snprintf(buf, len, "credential check: procfs (%s)", why);
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

/* From the foreground to syslog, once start-up is over. */
static void go_background(const struct runtime *rt)
{
	if (rt->opt.foreground)
		return;
	log_use_syslog(true);
	detach_stdio();
}

/*
 * Before any thread: the signals main() waits for are blocked everywhere
 * and read from a signalfd.  A shell starts background jobs with SIGINT
 * ignored, and an ignored signal never reaches a signalfd.
 */
static int setup_wait(struct runtime *rt)
{
	sigset_t set;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rt->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	rt->wakefd = eventfd(0, EFD_CLOEXEC);
	return rt->sigfd < 0 || rt->wakefd < 0 ? -errno : 0;
}

static void wake(struct runtime *rt)
{
	if (eventfd_write(rt->wakefd, 1) < 0)
		abort(); /* an eventfd takes this write */
}

enum wake_reason { WAKE_STOP, WAKE_STATS, WAKE_RELOAD, WAKE_WORK };

static enum wake_reason wait_wake(struct runtime *rt)
{
	struct pollfd p[2] = { { .fd = rt->sigfd, .events = POLLIN },
			       { .fd = rt->wakefd, .events = POLLIN } };
	struct signalfd_siginfo si;
	uint64_t v;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return WAKE_STOP;
		if ((p[0].revents & POLLIN) && read(rt->sigfd, &si, sizeof(si)) == sizeof(si))
			return si.ssi_signo == SIGUSR1	? WAKE_STATS
			       : si.ssi_signo == SIGHUP ? WAKE_RELOAD
							: WAKE_STOP;
		if ((p[1].revents & POLLIN) && read(rt->wakefd, &v, sizeof(v)) == sizeof(v))
			return WAKE_WORK;
	}
}

static void one_ended(struct node *n, void *arg)
{
	(void)n;
	wake(arg);
}

/* The process's threads now (/proc/self/status), or 0. */
static unsigned process_threads(void)
{
	char line[128];
	unsigned n = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The live view's daemon block: the process against its bounds. */
static void daemon_view(struct runtime *rt, struct show_daemon *dm)
{
	const struct options *opt = &rt->opt;
	struct share_totals t;
	struct timespec now, wall;

	share_totals(opt->node.share, &t);
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &wall);
	*dm = (struct show_daemon){
		.pid = getpid(),
		.version = CUSE_BSG_VERSION,
		.now_s = wall.tv_sec,
		.now_ns = wall.tv_nsec,
		.uptime_s = now.tv_sec - rt->started.tv_sec,
		.mem_used = atomic_load(&opt->mem.used),
		.mem_max = opt->mem.max,
		.mem_per_file = opt->node.opener_mem_max,
		.mem_per_user = t.lim.mem_per_user,
		.threads = process_threads(),
		.calls_busy = t.busy,
		.calls_parked = t.parked,
		.calls_per_file = t.lim.calls_per_file,
		.calls_per_user = t.lim.calls_per_user,
		.files = t.files,
		.files_max = t.lim.max_files,
		.files_per_user = t.lim.files_per_user,
	};
}

/* A live view being taken: of which node, the nodes' snapshots. */
struct view {
	const char *name; /* or NULL: every node */
	struct show_node *s;
	unsigned n, cap;
	unsigned matched;
};

/* The names of the openers' users and groups, as the system's databases say. */
static void name_openers(struct show_node *s)
{
	char buf[4096];

	for (unsigned i = 0; i < s->nopeners; i++) {
		struct show_opener *op = &s->opener[i];
		struct passwd pw, *pwp = NULL;
		struct group gr, *grp = NULL;

		if (getpwuid_r(op->uid, &pw, buf, sizeof(buf), &pwp) == 0 && pwp)
			snprintf(op->user, sizeof(op->user), "%s", pw.pw_name);
		if (op->gid != (gid_t)-1 && getgrgid_r(op->gid, &gr, buf, sizeof(buf), &grp) == 0 &&
		    grp)
			snprintf(op->group, sizeof(op->group), "%s", gr.gr_name);
	}
}

static void view_node(struct node *n, void *arg)
{
	struct view *v = arg;
	struct show_node *more;

	if (v->name && strcmp(v->name, node_name(n)))
		return;
	v->matched++;
	if (v->n == v->cap) {
		more = realloc(v->s, (v->cap ? 2 * v->cap : 4) * sizeof(*v->s));
		if (!more)
			return; /* left out, as a node too long for the answer */
		v->s = more;
		v->cap = v->cap ? 2 * v->cap : 4;
	}
	node_show(n, &v->s[v->n]);
	name_openers(&v->s[v->n]);
	v->n++;
}

/* live_collect_fn, on the live view's thread: the nodes stay while it runs. */
static unsigned collect(void *arg, const struct live_peer *peer, const char *name,
			struct show_out *o)
{
	struct runtime *rt = arg;
	struct view v = { .name = name };
	struct show_daemon dm;
	bool *visible;

	daemon_view(rt, &dm);
	show_begin(o, &dm);
	if (rt->fleet)
		fleet_each(rt->fleet, view_node, &v);
	else
		view_node(rt->one, &v);
	visible = calloc(v.n ? v.n : 1, sizeof(*visible));
	if (visible && live_judge(peer, v.s, v.n, visible) == 0)
		for (unsigned i = 0; i < v.n; i++)
			if (visible[i])
				show_add_node(o, &v.s[i]);
	show_end(o);
	free(visible);
	free(v.s);
	return v.matched;
}

/* The one-target mode: serve TARGET until a signal, or until the session ends. */
static int run_one(struct runtime *rt, struct node *n)
{
	enum wake_reason why;
	char msg[320];
	int ret;

	ret = node_start(n, one_ended, rt);
	if (ret < 0) {
		ret = ret == -ETIMEDOUT ? EXIT_UDEV : 1;
		notify_parent(rt, ret);
		node_free(n);
		return ret;
	}
	rt->one = n;
	live_start(rt->opt.name, collect, rt, &rt->live);
	/* every failure so far reached stderr; from here on, syslog */
	notify_parent(rt, 0);
	go_background(rt);
	cred_check_words(&rt->opt, gate_live(rt->opt.node.gate), msg, sizeof(msg));
	log_msg(LOG_NOTICE, "serving %s as /dev/%s; %s", node_target(n), rt->opt.name, msg);
	if (notify_ready_msg(msg, sizeof(msg), rt->opt.name) == 0)
		tell_manager(msg);
	/* WAKE_WORK: one_ended(), the session is over (device gone, or failed) */
	while ((why = wait_wake(rt)) != WAKE_STOP && why != WAKE_WORK) {
		if (why == WAKE_STATS)
			node_log_stats(n);
		else if (why == WAKE_RELOAD)
			reload_policy(&rt->opt);
	}
	tell_manager("STOPPING=1\n");
	live_stop(rt->live);
	ret = node_free(n);
	log_info("stopped; /dev/%s removed", rt->opt.name);
	return ret < 0 ? EXIT_FAILED : 0;
}

/* Both modes, before the first thread: fork, wait for signals, drop privileges. */
static int start_up(struct runtime *rt)
{
	if (!rt->opt.foreground && daemonize(rt) < 0) {
		log_err("cannot fork into the background: %s", strerror(errno));
		return -1;
	}
	if (setup_wait(rt) < 0) {
		log_err("cannot wait for signals: %s", strerror(errno));
		return -1;
	}
	return drop_privileges(&rt->opt);
}

/*
 * --sg-compat: sg owns every minor of char major 21 while it is loaded.
 * After the target's own checks, so that unloading sg is suggested only
 * when it is what stands in the way.
 */
static int check_sg_compat(const struct options *opt)
{
	struct stat st;

	if (opt->node.sg_minor < 0 || access("/sys/module/sg", F_OK) < 0)
		return 0;
	if (stat(opt->target, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 21)
		log_err("--sg-compat needs the sg driver unloaded, and %s is one of sg's nodes: "
			"serve the device's /dev/bsg/H:C:T:L or /dev/sdX node instead, with sg "
			"unloaded ('modprobe -r sg')",
			opt->target);
	else
		log_err("--sg-compat needs the sg driver unloaded, as it owns char major 21: run "
			"'modprobe -r sg'");
	return -EBUSY;
}

/* The target's node, checked as a start would check it; 0, or logged. */
static int new_node(struct options *opt, struct node **ret)
{
	char why[512];

	if (node_new(&opt->node, opt->target, opt->name, ret, why, sizeof(why)) < 0) {
		log_err("%s", why);
		return -1;
	}
	if (opt->target && check_sg_compat(opt) < 0) {
		node_free(*ret);
		return -1;
	}
	return 0;
}

static int main_one(struct runtime *rt)
{
	struct node *n;

	if (new_node(&rt->opt, &n) < 0)
		return 1;
	if (start_up(rt) < 0) {
		node_free(n);
		return 1;
	}
	return run_one(rt, n);
}

/* On the watch's thread: queue the event for the main thread. */
static void wake_main(void *arg)
{
	wake(arg);
}

static int main_all(struct runtime *rt)
{
	const char *subsystem = uev_pick_subsystem("/sys");
	enum wake_reason why;
	char msg[320];
	struct fleet *f;
	int err;

	if (start_up(rt) < 0)
		return 1;
	err = fleet_new(&rt->opt.node, subsystem, wake_main, rt, &f);
	if (err) {
		log_err("cannot watch udev for %s devices: %s", subsystem, strerror(-err));
		return 1;
	}
	fleet_work(f);
	rt->fleet = f;
	live_start("all", collect, rt, &rt->live);
	notify_parent(rt, 0);
	go_background(rt);
	cred_check_words(&rt->opt, gate_live(rt->opt.node.gate), msg, sizeof(msg));
	log_msg(LOG_NOTICE, "serving every SCSI device's %s node as /dev/bsg/H:C:T:L-cuse; %s",
		subsystem, msg);
	tell_manager("READY=1\nSTATUS=serving every SCSI device as /dev/bsg/H:C:T:L-cuse\n");
	while ((why = wait_wake(rt)) != WAKE_STOP) {
		if (why == WAKE_WORK)
			fleet_work(f);
		else if (why == WAKE_STATS)
			fleet_log_stats(f);
		else if (why == WAKE_RELOAD)
			reload_policy(&rt->opt);
	}
	tell_manager("STOPPING=1\n");
	live_stop(rt->live);
	fleet_free(f);
	log_info("stopped; every node removed");
	return 0;
}

/* A descriptor opened later must never be taken for stdin, stdout or stderr. */
static void hold_stdio(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/*
 * --policy relative to where the daemon was started, made absolute once:
 * the daemon moves to / when it forks, and SIGHUP reads the file again.
 * Links are kept, not resolved: a link moved to a new file is the new file.
 */
static int absolute_policy(struct options *opt)
{
	static char path[PATH_MAX];
	char cwd[PATH_MAX];

	if (!opt->policy_file || opt->policy_file[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)) ||
	    snprintf(path, sizeof(path), "%s/%s", cwd, opt->policy_file) >= (int)sizeof(path)) {
		log_err("policy %s: cannot make its path absolute: %s", opt->policy_file,
			strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	opt->policy_file = path;
	return 0;
}

static const char *policy_words(const struct options *opt)
{
	return opt->policy_file ? opt->policy_file : "the kernel's rule";
}

/*
 * --check: what a start checks, in its order (the policy, then the
 * target), then what it would serve on stdout; /dev/cuse last, and only
 * reported, so that a host without it can check a deployment.
 */
static int run_check(struct runtime *rt)
{
	struct options *opt = &rt->opt;
	char why[256], cred[320];
	struct node *n;

	cred_check_words(opt, false, cred, sizeof(cred));
	if (opt->all) {
		printf("cuse_bsg: would serve every SCSI device's %s node as "
		       "/dev/bsg/H:C:T:L-cuse; access policy: %s; %s\n",
		       uev_pick_subsystem("/sys"), policy_words(opt), cred);
	} else {
		if (new_node(opt, &n) < 0)
			return 1;
		printf("cuse_bsg: would serve %s as /dev/%s; access policy: %s; %s%s\n",
		       node_target(n), opt->name, policy_words(opt), cred,
		       opt->node.shared_queue
			       ? "; --shared-queue: openers read each other's replies"
			       : "");
		node_free(n);
	}
	fflush(stdout);
	if (check_cuse(why, sizeof(why)) < 0)
		log_warn("warning: %s before starting", why);
	return 0;
}

/*
 * Choices a user may regret, said once at start (and by --check): a node
 * every user may open sends every user's commands to the device, with the
 * kernel's rule as its only bound.  Not for --control, whose files get
 * only what the descriptor a client binds gives, and which is meant 0666.
 */
static void warn_unsafe(const struct options *opt)
{
	const char *which = opt->all ? "every node" : opt->name;

	if (opt->node.shared_queue)
		log_warn("warning: --shared-queue: every opener of /dev/%s reads the others' "
			 "replies; for a test of that flaw only",
			 which);
	if (!opt->control && opt->node.mode != (mode_t)-1 && (opt->node.mode & 0006))
		log_warn("warning: --mode %04o: every user may open %s%s and send SCSI commands "
			 "to the device%s",
			 (unsigned)opt->node.mode, opt->all ? "" : "/dev/", which,
			 opt->policy_file ? "" : " (no --policy narrows the kernel's rule)");
}

static int run(struct runtime *rt)
{
	char why[256];

	if (!rt->opt.check && check_cuse(why, sizeof(why)) < 0) {
		log_err("%s", why);
		return 1;
	}
	default_policy(&rt->opt);
	if (absolute_policy(&rt->opt) < 0 || load_policy(&rt->opt) < 0)
		return 1;
	if (share_new(&rt->opt.share, &rt->opt.node.share) < 0) {
		log_err("cannot allocate the shares: %s", strerror(ENOMEM));
		return 1;
	}
	if (load_gate(&rt->opt) < 0)
		return 1;
	warn_unsafe(&rt->opt);
	if (rt->opt.check)
		return run_check(rt);
	return rt->opt.all ? main_all(rt) : main_one(rt);
}

int main(int argc, char **argv)
{
	static struct runtime rt = { .ready_fd = -1 };
	char prefix[160];
	int ret;

	log_detect_journal();
	if (argc > 1 && !strcmp(argv[1], "--show"))
		return view_main(argc - 1, argv + 1);
	clock_gettime(CLOCK_MONOTONIC, &rt.started);
	ret = options_parse(argc, argv, &rt.opt);
	if (ret)
		return ret < 0 ? 0 : ret;
	snprintf(prefix, sizeof(prefix), "cuse_bsg[%s]", rt.opt.name);
	log_set_prefix(rt.opt.all ? "cuse_bsg" : prefix);
	raise_fd_limit();
	hold_stdio();
	ret = run(&rt);
	policy_free(rt.opt.node.policy);
	return ret;
}
