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
#include <getopt.h>
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
#include "log.h"
#include "node.h"
#include "notify.h"
#include "options.h"
#include "policy.h"
#include "share.h"
#include "uaccess.h"
#include "udev.h"

#define CUSE_BSG_VERSION "0.1.0"

/*
 * Exit statuses: 0 stopped; 1 a start-up error (target, options, /dev/cuse,
 * policy: starting again would fail again); 2 a usage error; EXIT_FAILED the
 * session failed while serving; EXIT_UDEV udevd did not process the node in
 * time.  The unit restarts on the last two only (RestartPreventExitStatus=).
 */
#define EXIT_FAILED 3
#define EXIT_UDEV   75 /* EX_TEMPFAIL */

struct options {
	const char *target;    /* or NULL: --all, --control */
	struct mem_budget mem; /* --max-memory: every node's buffers */
	char name[128];
	bool foreground;
	bool all;
	bool control;
	bool check;		   /* --check: validate, say what would be served, exit */
	bool opener_mem_given;	   /* --opener-memory was given, not defaulted */
	const char *policy_file;   /* --policy FILE, or NULL: the kernel's rule */
	struct share_limits share; /* --max-files, --max-files-per-user */
	struct node_config node;
};

/* main()'s state. */
struct runtime {
	struct options opt;
	int ready_fd; /* daemon mode: tells the parent how start-up went */
	int wakefd;   /* --all: an event queued or a session ended */
	int sigfd;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cuse_bsg [OPTIONS] TARGET\n"
		   "       cuse_bsg --all [OPTIONS]\n"
		   "       cuse_bsg --control [OPTIONS]\n"
		   "Serve the SCSI pass-through device TARGET (/dev/sgN, /dev/sdX or\n"
		   "/dev/bsg/H:C:T:L) as a character device /dev/NAME through CUSE.\n"
		   "With --all, serve every SCSI device's sg node (bsg node if sg is not\n"
		   "loaded) as /dev/bsg/H:C:T:L-cuse, adding and removing nodes as devices\n"
		   "come and go.  With --control, serve /dev/bsg-control: a file opened on it\n"
		   "is bound by ioctl(BSG_IOC_ADD, fd) to the device fd is open on.\n"
		   "\n"
		   "  -A, --all            one node per SCSI device, following udev (no TARGET)\n"
		   "  -C, --control        one node any device can be bound to (no TARGET)\n"
		   "  -n, --name NAME      node name under /dev (default: bsg/<target>-cuse)\n"
		   "  -f, --foreground     stay in the foreground, log to stderr\n"
		   "  -m, --mode MODE      set the node's permissions, octal 0..0777, no\n"
		   "                       setuid, setgid or sticky bit (default: leave\n"
		   "                       them as devtmpfs and udev made them; 0600 root:root\n"
		   "                       without a udev rule)\n"
		   "  -o, --owner USER     set the node's owner: a name, or a number\n"
		   "                       0..4294967294 (default: leave it)\n"
		   "  -g, --group GROUP    set the node's group, the same way (default: leave it)\n"
		   "  -t, --threads N      worker threads issuing SG_IO (default: 32, 1..64)\n"
		   "  -c, --copy MODE      data path: auto, direct or retry (default: auto)\n"
		   "  -a, --async ENGINE   how written commands reach the target: queue (an sg\n"
		   "                       target's own write()/read() queue), pool (the worker\n"
		   "                       threads) or auto: queue on sg, else pool\n"
		   "                       (default: auto)\n"
		   "  -s, --sg-compat N    be /dev/sgN, char major 21, for tools that trust only\n"
		   "                       sg's number (sg_dd, sgp_dd); the sg driver must be "
		   "unloaded\n"
		   "  -P, --policy FILE    who may send which command (docs/POLICY.md), a\n"
		   "                       regular file, read again on SIGHUP; default: the\n"
		   "                       kernel's bsg rule\n"
		   "  -M, --max-memory SIZE  the most all data buffers may take (default: a\n"
		   "                       quarter of RAM, at most 1G); 4K..1024G, bytes or\n"
		   "                       with a K, M or G suffix (KiB, MiB, GiB)\n"
		   "  -O, --opener-memory SIZE  the most one open file's buffers may take\n"
		   "                       (default: 128M, or --max-memory if less); 4K up\n"
		   "                       to --max-memory, suffixes as above; over either:\n"
		   "                       ENOMEM\n"
		   "  -T, --copy-timeout SECONDS  the longest a copy to or from a client's\n"
		   "                       memory may take before its call gets EFAULT\n"
		   "                       (default: 10, 1..3600)\n"
		   "  -Q, --queue-depth N  v3 commands one open file may have written and not\n"
		   "                       read; the next gets EDOM (default: 16, as sg; 1..256)\n"
		   "  -F, --max-files N    files open on the daemon's nodes in all; past it an\n"
		   "                       open gets ENOMEM, but root's (default: 4096,\n"
		   "                       1..1048576)\n"
		   "  -U, --max-files-per-user N  files one user may have open on them; past\n"
		   "                       it: ENOMEM (default: 1024, 1..1048576)\n"
		   "  -S, --shared-queue   one queue for every open file, as bsg before Linux\n"
		   "                       4.19: replies reach other openers; only to show that\n"
		   "                       flaw, never for use\n"
		   "  -k, --check          check the options, the policy and the target as a\n"
		   "                       start would, print what would be served, and exit:\n"
		   "                       0 if it would start, 1 with the reason if not; a\n"
		   "                       missing /dev/cuse is reported, not counted\n"
		   "  -v, --verbose        more log output (repeat for debug)\n"
		   "  -h, --help           this text\n"
		   "  -V, --version        print the version\n"
		   "\n"
		   "SIGUSR1 logs the request counters (a line per node); SIGHUP reads the\n"
		   "--policy file again (a bad one is logged and the old policy kept; without\n"
		   "--policy it is ignored); SIGINT and SIGTERM stop the daemon and remove\n"
		   "its nodes.\n"
		   "\n"
		   "Exit status: 0 stopped, or --check passed; 1 a start-up error; 2 a usage\n"
		   "error; 3 the session failed while serving; 75 udev did not process the\n"
		   "node in time.\n");
}

static void default_name(struct options *opt)
{
	const char *base = strrchr(opt->target, '/');

	snprintf(opt->name, sizeof(opt->name), "bsg/%s-cuse", base ? base + 1 : opt->target);
}

/* A user or group: a name first (a name may be all digits), then a number. */
static int parse_user(const char *s, uid_t *ret, char *why, size_t why_len)
{
	struct passwd *pw = getpwnam(s);
	uint32_t v;

	if (!pw && options_parse_id("--owner", s, &v, why, why_len) < 0)
		return -EINVAL;
	*ret = pw ? pw->pw_uid : (uid_t)v;
	return 0;
}

static int parse_group(const char *s, gid_t *ret, char *why, size_t why_len)
{
	struct group *gr = getgrnam(s);
	uint32_t v;

	if (!gr && options_parse_id("--group", s, &v, why, why_len) < 0)
		return -EINVAL;
	*ret = gr ? gr->gr_gid : (gid_t)v;
	return 0;
}

/* --max-memory's default: a quarter of RAM, at most 1 GiB. */
static uint64_t default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t quarter = pages > 0 && size > 0 ? (uint64_t)pages * size / 4 : 0;

	return quarter && quarter < (1ull << 30) ? quarter : 1ull << 30;
}

/* The words of --copy and --async, in the order of their enums. */
static const char *const copy_names[] = { "auto", "direct", "retry" };
static const char *const engine_names[] = { "auto", "queue", "pool" };

/* The index of s in names[0..n), or -EINVAL. */
static int parse_word(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -EINVAL;
}

/* Usage errors are logged too: under systemd they reach the journal as errors. */
static int usage_error(const char *why)
{
	log_err("%s (see --help)", why);
	return 2;
}

/* A word out of its option's list: the option and the words named. */
static int bad_word(const char *option, const char *value, const char *const *names, int n)
{
	char why[256];
	int len = snprintf(why, sizeof(why), "invalid %s '%s': one of", option, value);

	for (int i = 0; i < n && len > 0 && len < (int)sizeof(why); i++)
		len += snprintf(why + len, sizeof(why) - len, "%s %s", i ? "," : "", names[i]);
	return usage_error(why);
}

/*
 * The control node's default name: beside /dev/bsg, not in it, so that no
 * kernel bsg node (SCSI H:C:T:L, or a transport's such as fc_host0) can
 * ever take it, and not starting with "s" or "bsg/", so that no tool takes
 * it for a device to talk to before it is bound.
 */
#define CONTROL_NAME "bsg-control"

/*
 * What --control cannot take: it copies with process_vm_readv/writev and
 * sends every command through the shared workers, to devices of any
 * driver, and it is no sg node.
 */
static int check_control(const struct options *opt)
{
	const struct node_config *c = &opt->node;

	if (opt->all || c->copy == NODE_COPY_RETRY || c->shared_queue || c->sg_minor >= 0 ||
	    c->engine == NODE_ENGINE_QUEUE)
		return usage_error("--control takes none of --all, --copy=retry, --shared-queue, "
				   "--sg-compat, --async=queue");
	return 0;
}

/* --opener-memory at most --max-memory; its default comes down to it. */
static int check_memory(struct options *opt)
{
	char why[256];

	if (!opt->opener_mem_given && opt->node.opener_mem_max > opt->mem.max)
		opt->node.opener_mem_max = opt->mem.max;
	if (options_check_memory(opt->mem.max, opt->node.opener_mem_max, why, sizeof(why)) < 0)
		return usage_error(why);
	return 0;
}

/* After the options: TARGET, or --all or --control without it; 0 or the exit status. */
static int check_mode(int argc, char **argv, struct options *opt)
{
	char why[256];

	if (opt->control && check_control(opt))
		return 2;
	if (opt->all && (opt->name[0] || opt->node.sg_minor >= 0))
		return usage_error("--all names its nodes itself: no --name or --sg-compat");
	if (optind != argc - (opt->all || opt->control ? 0 : 1))
		return usage_error(opt->all	    ? "--all takes no TARGET"
				   : opt->control   ? "--control takes no TARGET"
				   : optind == argc ? "no TARGET given"
						    : "one TARGET only");
	if (check_memory(opt))
		return 2;
	if (opt->all)
		return 0;
	if (opt->control) {
		if (!opt->name[0])
			snprintf(opt->name, sizeof(opt->name), "%s", CONTROL_NAME);
		return 0;
	}
	if (options_check_text("TARGET", argv[optind], why, sizeof(why)) < 0)
		return usage_error(why);
	opt->target = argv[optind];
	if (!opt->name[0] && opt->node.sg_minor >= 0)
		snprintf(opt->name, sizeof(opt->name), "sg%d", opt->node.sg_minor);
	if (!opt->name[0])
		default_name(opt);
	return 0;
}

/* The option getopt refused: "-x" for a short one, the word as given for a long one. */
static const char *option_name(char **argv, int short_opt)
{
	static char name[3] = "-";

	if (!short_opt || !strncmp(argv[optind - 1], "--", 2))
		return argv[optind - 1];
	name[1] = (char)short_opt;
	return name;
}

/*
 * The options, one setter each: 0, or the exit status for a bad value
 * (logged).  -1 from a setter: done, exit 0 (--help, --version).  Before
 * any setter, every value has passed options_check_text().
 */
typedef int opt_set_fn(struct options *opt, const char *arg);

static int set_all(struct options *opt, const char *arg)
{
	(void)arg;
	opt->all = true;
	return 0;
}

static int set_control(struct options *opt, const char *arg)
{
	(void)arg;
	opt->control = true;
	return 0;
}

static int set_check(struct options *opt, const char *arg)
{
	(void)arg;
	opt->check = true;
	return 0;
}

static int set_name(struct options *opt, const char *arg)
{
	char why[256];

	if (options_check_name(arg, sizeof(opt->name), why, sizeof(why)) < 0)
		return usage_error(why);
	snprintf(opt->name, sizeof(opt->name), "%s", arg);
	return 0;
}

static int set_foreground(struct options *opt, const char *arg)
{
	(void)arg;
	opt->foreground = true;
	return 0;
}

/* arg by range r, or a usage error naming the option, the range and the suffixes. */
static int ranged(const struct opt_range *r, const char *arg, uint64_t *ret)
{
	char why[256];

	return options_number(r, arg, ret, why, sizeof(why)) < 0 ? usage_error(why) : 0;
}

/* An integer in [min, max], decimal (base 10) or octal (8). */
static int number(const char *option, const char *arg, int base, long min, long max, long *ret)
{
	const struct opt_range r = { option, base == 8 ? OPT_OCTAL : OPT_DECIMAL, (uint64_t)min,
				     (uint64_t)max };
	uint64_t v;
	int err = ranged(&r, arg, &v);

	if (!err)
		*ret = (long)v;
	return err;
}

static int set_mode(struct options *opt, const char *arg)
{
	long v;
	/* the permissions only: no setuid, setgid or sticky bit on a device node */
	int ret = number("--mode", arg, 8, 0, 0777, &v);

	opt->node.mode = ret ? opt->node.mode : (mode_t)v;
	return ret;
}

static int set_owner(struct options *opt, const char *arg)
{
	char why[256];

	return parse_user(arg, &opt->node.uid, why, sizeof(why)) < 0 ? usage_error(why) : 0;
}

static int set_group(struct options *opt, const char *arg)
{
	char why[256];

	return parse_group(arg, &opt->node.gid, why, sizeof(why)) < 0 ? usage_error(why) : 0;
}

static int set_threads(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--threads", arg, 10, 1, 64, &v);

	opt->node.threads = ret ? opt->node.threads : (unsigned)v;
	return ret;
}

static int set_sg_minor(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--sg-compat", arg, 10, 0, 255, &v);

	opt->node.sg_minor = ret ? opt->node.sg_minor : (int)v;
	return ret;
}

static int set_copy(struct options *opt, const char *arg)
{
	int v = parse_word(arg, copy_names, 3);

	if (v < 0)
		return bad_word("--copy", arg, copy_names, 3);
	opt->node.copy = v;
	return 0;
}

static int set_engine(struct options *opt, const char *arg)
{
	int v = parse_word(arg, engine_names, 3);

	if (v < 0)
		return bad_word("--async", arg, engine_names, 3);
	opt->node.engine = v;
	return 0;
}

static int set_shared_queue(struct options *opt, const char *arg)
{
	(void)arg;
	opt->node.shared_queue = true;
	return 0;
}

static const struct opt_range max_memory_range = { "--max-memory", OPT_SIZE, OPT_SIZE_MIN,
						   OPT_SIZE_MAX };
static const struct opt_range opener_memory_range = { "--opener-memory", OPT_SIZE, OPT_SIZE_MIN,
						      OPT_SIZE_MAX };

static int set_max_memory(struct options *opt, const char *arg)
{
	return ranged(&max_memory_range, arg, &opt->mem.max);
}

static int set_opener_memory(struct options *opt, const char *arg)
{
	opt->opener_mem_given = true;
	return ranged(&opener_memory_range, arg, &opt->node.opener_mem_max);
}

static int set_copy_timeout(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--copy-timeout", arg, 10, 1, 3600, &v);

	opt->node.copy_timeout_ms = ret ? opt->node.copy_timeout_ms : (unsigned)v * 1000;
	return ret;
}

static int set_queue_depth(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--queue-depth", arg, 10, 1, BSGDEV_MAX_DEPTH, &v);

	opt->node.queue_depth = ret ? opt->node.queue_depth : (unsigned)v;
	return ret;
}

static int set_max_files(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--max-files", arg, 10, 1, 1 << 20, &v);

	opt->share.max_files = ret ? opt->share.max_files : (unsigned)v;
	return ret;
}

static int set_max_files_per_user(struct options *opt, const char *arg)
{
	long v;
	int ret = number("--max-files-per-user", arg, 10, 1, 1 << 20, &v);

	opt->share.files_per_user = ret ? opt->share.files_per_user : (unsigned)v;
	return ret;
}

static int set_policy(struct options *opt, const char *arg)
{
	opt->policy_file = arg;
	return 0;
}

static int set_verbose(struct options *opt, const char *arg)
{
	(void)opt;
	(void)arg;
	log_level = log_level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
	return 0;
}

static int show_help(struct options *opt, const char *arg)
{
	(void)opt;
	(void)arg;
	usage(stdout);
	return -1;
}

static int show_version(struct options *opt, const char *arg)
{
	(void)opt;
	(void)arg;
	printf("cuse_bsg %s\n", CUSE_BSG_VERSION);
	return -1;
}

static const struct {
	const char *name;
	char letter;
	bool arg; /* takes a value */
	opt_set_fn *set;
} options[] = {
	{ "all", 'A', false, set_all },
	{ "control", 'C', false, set_control },
	{ "check", 'k', false, set_check },
	{ "name", 'n', true, set_name },
	{ "foreground", 'f', false, set_foreground },
	{ "mode", 'm', true, set_mode },
	{ "owner", 'o', true, set_owner },
	{ "group", 'g', true, set_group },
	{ "threads", 't', true, set_threads },
	{ "copy", 'c', true, set_copy },
	{ "async", 'a', true, set_engine },
	{ "sg-compat", 's', true, set_sg_minor },
	{ "shared-queue", 'S', false, set_shared_queue },
	{ "max-memory", 'M', true, set_max_memory },
	{ "opener-memory", 'O', true, set_opener_memory },
	{ "copy-timeout", 'T', true, set_copy_timeout },
	{ "queue-depth", 'Q', true, set_queue_depth },
	{ "max-files", 'F', true, set_max_files },
	{ "max-files-per-user", 'U', true, set_max_files_per_user },
	{ "policy", 'P', true, set_policy },
	{ "verbose", 'v', false, set_verbose },
	{ "help", 'h', false, show_help },
	{ "version", 'V', false, show_version },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static int unknown_option(char **argv)
{
	log_err("unknown option '%s' (see --help)", option_name(argv, optopt));
	return 2;
}

/* Row i's setter, once its value (if it takes one) is text without control characters. */
static int set_option(struct options *opt, size_t i, const char *arg)
{
	char option[64], why[256];

	snprintf(option, sizeof(option), "--%s", options[i].name);
	if (options[i].arg && options_check_text(option, arg, why, sizeof(why)) < 0)
		return usage_error(why);
	return options[i].set(opt, arg);
}

/* 0 to go on, or the exit status. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	struct option longopts[N_OPTIONS + 1] = { { 0 } };
	char shortopts[2 * N_OPTIONS + 2] = ":", *p = shortopts + 1;
	int c, ret;

	for (size_t i = 0; i < N_OPTIONS; i++) {
		longopts[i] = (struct option){ options[i].name,
					       options[i].arg ? required_argument : no_argument,
					       NULL, options[i].letter };
		*p++ = options[i].letter;
		if (options[i].arg)
			*p++ = ':';
	}
	*opt = (struct options){ .node = {
					 .mode = (mode_t)-1,
					 .uid = (uid_t)-1,
					 .gid = (gid_t)-1,
					 .threads = 32,
					 .sg_minor = -1,
					 .opener_mem_max = 128ull << 20,
					 .copy_timeout_ms = 10000,
				 } };
	opt->mem.max = default_max_memory();
	opt->share = (struct share_limits){ .max_files = 4096,
					    .files_per_user = 1024,
					    .calls_per_file = NODE_CALLS_PER_FILE,
					    .calls_per_user = NODE_CALLS_PER_USER };
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == ':') {
			log_err("option '%s' needs a value (see --help)",
				option_name(argv, optopt));
			return 2;
		}
		ret = c == '?' ? unknown_option(argv) : 2;
		for (size_t i = 0; i < N_OPTIONS; i++)
			if (options[i].letter == c)
				ret = set_option(opt, i, optarg);
		if (ret)
			return ret;
	}
	opt->node.mem = &opt->mem;
	/* a user's share of memory, as of threads: a quarter of the daemon's */
	opt->share.mem_per_user = opt->mem.max / 4;
	return check_mode(argc, argv, opt);
}

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

/* Whether /dev/cuse can be opened: 0, or -errno and why. */
static int check_cuse(char *why, size_t why_len)
{
	if (access("/dev/cuse", F_OK) < 0) {
		snprintf(why, why_len, "/dev/cuse is missing: run 'modprobe cuse'");
		return -ENODEV;
	}
	if (access("/dev/cuse", R_OK | W_OK) < 0) {
		snprintf(why, why_len, "cannot open /dev/cuse: %s (cuse_bsg must run as root)",
			 strerror(errno));
		return -EACCES;
	}
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
 * SIGHUP: --policy FILE again, whole or not at all.  Commands being checked
 * finish against the old policy; the next ones see the new one.
 */
static void reload_policy(struct options *opt)
{
	struct filter_policy next;
	char why[512];

	if (!opt->policy_file) {
		log_msg(LOG_NOTICE, "SIGHUP: no --policy to reload; nothing changed");
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
 * CAP_CHOWN if nodes are to be given away.  Still uid 0: the targets,
 * /dev/cuse and the nodes are root's, so nodes made later need nothing more.
 */
static int drop_privileges(const struct options *opt)
{
	const struct node_config *cfg = &opt->node;
	uint64_t keep = CAPS_BIT(CAP_SYS_RAWIO) | CAPS_BIT(CAP_SYS_ADMIN);
	char names[128];
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
	uint64_t one = 1;

	if (write(rt->wakefd, &one, sizeof(one)) != sizeof(one))
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

/* The one-target mode: serve TARGET until a signal, or until the session ends. */
static int run_one(struct runtime *rt, struct node *n)
{
	enum wake_reason why;
	char msg[200];
	int ret;

	ret = node_start(n, one_ended, rt);
	if (ret < 0) {
		ret = ret == -ETIMEDOUT ? EXIT_UDEV : 1;
		notify_parent(rt, ret);
		node_free(n);
		return ret;
	}
	/* every failure so far reached stderr; from here on, syslog */
	notify_parent(rt, 0);
	go_background(rt);
	log_msg(LOG_NOTICE, "serving %s as /dev/%s", node_target(n), rt->opt.name);
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
	notify_parent(rt, 0);
	go_background(rt);
	log_msg(LOG_NOTICE, "serving every SCSI device's %s node as /dev/bsg/H:C:T:L-cuse",
		subsystem);
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
	char why[256];
	struct node *n;

	if (opt->all) {
		printf("cuse_bsg: would serve every SCSI device's %s node as "
		       "/dev/bsg/H:C:T:L-cuse; access policy: %s\n",
		       uev_pick_subsystem("/sys"), policy_words(opt));
	} else {
		if (new_node(opt, &n) < 0)
			return 1;
		printf("cuse_bsg: would serve %s as /dev/%s; access policy: %s\n", node_target(n),
		       opt->name, policy_words(opt));
		node_free(n);
	}
	fflush(stdout);
	if (check_cuse(why, sizeof(why)) < 0)
		log_warn("warning: %s before starting", why);
	return 0;
}

static int run(struct runtime *rt)
{
	char why[256];

	if (!rt->opt.check && check_cuse(why, sizeof(why)) < 0) {
		log_err("%s", why);
		return 1;
	}
	if (absolute_policy(&rt->opt) < 0 || load_policy(&rt->opt) < 0)
		return 1;
	if (share_new(&rt->opt.share, &rt->opt.node.share) < 0) {
		log_err("cannot allocate the shares: %s", strerror(ENOMEM));
		return 1;
	}
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
	ret = parse_options(argc, argv, &rt.opt);
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
