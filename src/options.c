// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line's values, checked by rule (options.h).  strtoull() is
 * not used: it takes leading blanks and signs, and wraps "-1" to the
 * largest value, which a size would take for "no limit".
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"

static bool is_digit(char c, enum opt_kind kind)
{
	return kind == OPT_OCTAL ? c >= '0' && c <= '7' : c >= '0' && c <= '9';
}

/* The digits of s, up to *end; -ERANGE past UINT64_MAX, -EINVAL without any. */
static int digits(const char *s, enum opt_kind kind, uint64_t *ret, const char **end)
{
	unsigned base = kind == OPT_OCTAL ? 8 : 10;
	uint64_t v = 0;
	const char *p = s;

	for (; is_digit(*p, kind); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*end = p;
	if (p == s)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The shift of a size's suffix, or -1. */
static int size_shift(const char *s)
{
	static const char units[] = "KMG";
	const char *u;

	if (!*s)
		return 0;
	u = s[1] ? NULL : strchr(units, *s);
	return u ? 10 * (int)(u - units + 1) : -1;
}

void options_size_name(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "\0KMG";
	unsigned i = 0;

	while (i < 3 && v && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	if (i)
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[i]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static bool is_control(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/* arg as a message may show it: one line, control characters as '?', at most 64 bytes. */
static const char *shown(const char *arg, char *buf, size_t len)
{
	size_t i = 0;

	for (; arg[i] && i + 4 < len && i < 64; i++)
		buf[i] = is_control(arg[i]) ? '?' : arg[i];
	if (arg[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

static void range_why(const struct opt_range *r, const char *value, char *why, size_t why_len)
{
	char lo[32], hi[32], buf[80];
	const char *arg = shown(value, buf, sizeof(buf));

	switch (r->kind) {
	case OPT_SIZE:
		options_size_name(r->min, lo, sizeof(lo));
		options_size_name(r->max, hi, sizeof(hi));
		snprintf(why, why_len,
			 "invalid %s '%s': a size of %s..%s bytes, digits with an optional K, M "
			 "or G suffix (KiB, MiB, GiB)",
			 r->option, arg, lo, hi);
		break;
	case OPT_OCTAL:
		snprintf(why, why_len, "invalid %s '%s': octal digits, %#llo..%#llo", r->option,
			 arg, (unsigned long long)r->min, (unsigned long long)r->max);
		break;
	default:
		snprintf(why, why_len, "invalid %s '%s': a whole number, %llu..%llu, no suffix",
			 r->option, arg, (unsigned long long)r->min, (unsigned long long)r->max);
	}
}

int options_number(const struct opt_range *r, const char *arg, uint64_t *ret, char *why,
		   size_t why_len)
{
	const char *end;
	uint64_t v;
	int shift = 0;
	int err = digits(arg, r->kind, &v, &end);

	if (!err && r->kind == OPT_SIZE)
		shift = size_shift(end);
	else if (!err && *end)
		shift = -1;
	if (err || shift < 0 || v > UINT64_MAX >> shift || v << shift < r->min ||
	    v << shift > r->max) {
		range_why(r, arg, why, why_len);
		return -EINVAL;
	}
	*ret = v << shift;
	return 0;
}

int options_check_text(const char *option, const char *arg, char *why, size_t why_len)
{
	if (!*arg) {
		snprintf(why, why_len, "invalid %s '': empty", option);
		return -EINVAL;
	}
	for (const char *p = arg; *p; p++)
		if (is_control(*p)) {
			/* not the value itself: that is what would forge a line */
			snprintf(
				why, why_len,
				"invalid %s: control character 0x%02x at byte %zu; none is allowed",
				option, (unsigned char)*p, (size_t)(p - arg));
			return -EINVAL;
		}
	return 0;
}

/* A component of a name: not empty, ".", ".."; no blank. */
static bool good_component(const char *s, size_t len)
{
	if (!len || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2)))
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ' ')
			return false;
	return true;
}

int options_check_name(const char *arg, size_t max_len, char *why, size_t why_len)
{
	const char *p = arg, *slash;
	char buf[80];
	int err = options_check_text("--name", arg, why, why_len);

	if (err)
		return err;
	if (strlen(arg) >= max_len || !strncmp(arg, "cuse", 4))
		goto bad;
	for (;;) {
		slash = strchr(p, '/');
		if (!good_component(p, slash ? (size_t)(slash - p) : strlen(p)))
			goto bad;
		if (!slash)
			return 0;
		p = slash + 1;
	}
bad:
	snprintf(why, why_len,
		 "invalid --name '%s': a path under /dev of 1..%zu bytes, relative, no blank, "
		 "no empty, '.' or '..' component, not cuse's own",
		 shown(arg, buf, sizeof(buf)), max_len - 1);
	return -EINVAL;
}

int options_parse_id(const char *option, const char *arg, uint32_t *ret, char *why, size_t why_len)
{
	const struct opt_range r = { option, OPT_DECIMAL, 0, OPT_ID_MAX };
	char buf[80];
	uint64_t v;

	if (options_check_text(option, arg, why, why_len) < 0)
		return -EINVAL;
	if (options_number(&r, arg, &v, why, why_len) < 0) {
		snprintf(why, why_len, "invalid %s '%s': a name, or a number 0..%llu", option,
			 shown(arg, buf, sizeof(buf)), OPT_ID_MAX);
		return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

int options_check_memory(uint64_t max_memory, uint64_t opener_memory, char *why, size_t why_len)
{
	char a[32], b[32];

	if (opener_memory <= max_memory)
		return 0;
	options_size_name(opener_memory, a, sizeof(a));
	options_size_name(max_memory, b, sizeof(b));
	snprintf(why, why_len, "invalid --opener-memory '%s': at most --max-memory, %s", a, b);
	return -EINVAL;
}

/*
 * The command line itself: one setter per option, from a table, then the
 * checks that take several options together.  Not pure: it looks users and
 * groups up, reads the size of RAM for --max-memory's default and logs each
 * usage error.
 */

#ifndef CUSE_BSG_VERSION
#error "CUSE_BSG_VERSION: the Makefile's VERSION, as a string"
#endif

static const char usage_text[] =
	"usage: cuse_bsg [OPTIONS] TARGET\n"
	"       cuse_bsg --all [OPTIONS]\n"
	"       cuse_bsg --control [OPTIONS]\n"
	"       cuse_bsg --show [--json|--table] [--watch N [--count K]] [NODE|SOCKET]\n"
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
	"  -K, --cred-check MODE  who may read() and write() a file: only the\n"
	"                       security context that opened it, tested by the\n"
	"                       kernel at CUSE's entry (witness), by a BPF LSM\n"
	"                       program (kernel), or from /proc (procfs); auto:\n"
	"                       the first of the three that loads (default: auto)\n"
	"  -P, --policy FILE    who may send which command (cuse_bsg.policy(5)), a\n"
	"                       regular file, read again on SIGHUP; default:\n"
	"                       " CUSE_BSG_POLICY_FILE " if present, else the kernel's\n"
	"                       bsg rule\n"
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
	"                       flaw, never for use: refused unless the environment\n"
	"                       has " OPTIONS_SHARED_QUEUE_ENV "=1\n"
	"  -k, --check          check the options, the policy and the target as a\n"
	"                       start would, print what would be served, and exit:\n"
	"                       0 if it would start, 1 with the reason if not; a\n"
	"                       missing /dev/cuse is reported, not counted\n"
	"      --show [--json|--table] [--watch N [--count K]] [NODE|SOCKET]\n"
	"                       print what each running daemon is doing (its\n"
	"                       nodes, their devices, commands, data, errors and\n"
	"                       latency, their openers, its memory and threads\n"
	"                       against their bounds), or the one serving\n"
	"                       /dev/NODE, as JSON with --json, a line a node and\n"
	"                       opener with --table, their rates every N seconds\n"
	"                       with --watch, and exit; a node is shown to whom\n"
	"                       may open it; no other option\n"
	"  -v, --verbose        more log output (repeat for debug)\n"
	"  -h, --help           this text\n"
	"  -V, --version        print the version\n"
	"\n"
	"SIGUSR1 logs the request counters (a line per node); SIGHUP reads the\n"
	"--policy file again (a bad one is logged and the old policy kept; without\n"
	"--policy or " CUSE_BSG_POLICY_FILE " it is ignored); SIGINT and\n"
	"SIGTERM stop the daemon and remove its nodes.\n"
	"\n"
	"Exit status: 0 stopped, or --check passed; 1 a start-up error; 2 a usage\n"
	"error; 3 the session failed while serving; 75 udev did not process the\n"
	"node in time.\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
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
static const char *const cred_check_names[] = { "auto", "kernel", "procfs", "witness" };

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

/*
 * --shared-queue brings back the flaw this project removes, one opener
 * reading another's replies: only with the environment's word that this
 * is a test, so that no unit file or copied command line turns it on.
 */
static int check_shared_queue(const struct options *opt)
{
	const char *test = getenv(OPTIONS_SHARED_QUEUE_ENV);

	if (!opt->node.shared_queue || (test && !strcmp(test, "1")))
		return 0;
	return usage_error("--shared-queue lets every opener read the others' replies: "
			   "refused, but for a test of that flaw (" OPTIONS_SHARED_QUEUE_ENV "=1)");
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
	if (check_memory(opt) || check_shared_queue(opt))
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

static int set_cred_check(struct options *opt, const char *arg)
{
	int v = parse_word(arg, cred_check_names, 4);

	if (v < 0)
		return bad_word("--cred-check", arg, cred_check_names, 4);
	opt->cred_check = v;
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
	{ "cred-check", 'K', true, set_cred_check },
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

int options_parse(int argc, char **argv, struct options *opt)
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
