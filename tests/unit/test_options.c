// SPDX-License-Identifier: GPL-2.0-only
/*
 * options: every rule for the command line's values, a row each, then the
 * daemon itself (build/cuse_bsg, or $CUSE_BSG) run on bad command lines:
 * exit status 2 and one line on stderr naming the option, the range and
 * the suffixes.  None of these runs gets past the parsing, so no root and
 * no /dev/cuse are needed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"

TestSuite(options, .timeout = 20);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct opt_range threads = { "--threads", OPT_DECIMAL, 1, 64 };
static const struct opt_range mode = { "--mode", OPT_OCTAL, 0, 0777 };
static const struct opt_range size = { "--max-memory", OPT_SIZE, OPT_SIZE_MIN, OPT_SIZE_MAX };

struct number_case {
	const struct opt_range *r;
	const char *arg;
	int err;
	uint64_t want;
	const char *says; /* in the message, when refused */
};

static const struct number_case number_cases[] = {
	{ &threads, "1", 0, 1, NULL },
	{ &threads, "64", 0, 64, NULL },
	{ &threads, "064", 0, 64, NULL },
	{ &threads, "0", -EINVAL, 0, "1..64" },
	{ &threads, "65", -EINVAL, 0, "1..64" },
	{ &threads, "", -EINVAL, 0, "1..64" },
	{ &threads, " 5", -EINVAL, 0, "' 5'" },
	{ &threads, "5 ", -EINVAL, 0, "1..64" },
	{ &threads, "+5", -EINVAL, 0, "1..64" },
	{ &threads, "-1", -EINVAL, 0, "1..64" },
	{ &threads, "0x10", -EINVAL, 0, "no suffix" },
	{ &threads, "8K", -EINVAL, 0, "no suffix" },
	{ &threads, "99999999999999999999999", -EINVAL, 0, "1..64" },
	{ &mode, "0660", 0, 0660, NULL },
	{ &mode, "660", 0, 0660, NULL },
	{ &mode, "0", 0, 0, NULL },
	{ &mode, "0777", 0, 0777, NULL },
	{ &mode, "00600", 0, 0600, NULL },
	{ &mode, "07777", -EINVAL, 0, "0..0777" }, /* setuid, setgid, sticky */
	{ &mode, "4755", -EINVAL, 0, "0..0777" },
	{ &mode, "1777", -EINVAL, 0, "0..0777" },
	{ &mode, "+666", -EINVAL, 0, "octal" },
	{ &mode, " 666", -EINVAL, 0, "octal" },
	{ &mode, "0668", -EINVAL, 0, "octal" },
	{ &mode, "u+rw", -EINVAL, 0, "octal" },
	{ &size, "4096", 0, 4096, NULL },
	{ &size, "4K", 0, 4096, NULL },
	{ &size, "128M", 0, 128ull << 20, NULL },
	{ &size, "1G", 0, 1ull << 30, NULL },
	{ &size, "1024G", 0, 1ull << 40, NULL },
	{ &size, "1025G", -EINVAL, 0, "4K..1024G" },
	{ &size, "4095", -EINVAL, 0, "4K..1024G" },
	{ &size, "3K", -EINVAL, 0, "4K..1024G" },
	{ &size, "0", -EINVAL, 0, "4K..1024G" },
	{ &size, "18446744073709551616", -EINVAL, 0, "K, M or G" }, /* 2^64 */
	{ &size, "18446744073709551615", -EINVAL, 0, "4K..1024G" },
	{ &size, "17179869184G", -EINVAL, 0, "4K..1024G" }, /* 2^64 once shifted */
	{ &size, "-1", -EINVAL, 0, "'-1'" },
	{ &size, " -1", -EINVAL, 0, "' -1'" },
	{ &size, " 1G", -EINVAL, 0, "4K..1024G" },
	{ &size, "+1G", -EINVAL, 0, "4K..1024G" },
	{ &size, "1G ", -EINVAL, 0, "4K..1024G" },
	{ &size, "1GB", -EINVAL, 0, "K, M or G" },
	{ &size, "1T", -EINVAL, 0, "K, M or G" },
	{ &size, "1g", -EINVAL, 0, "K, M or G" },
	{ &size, "1.5G", -EINVAL, 0, "K, M or G" },
	{ &size, "G", -EINVAL, 0, "K, M or G" },
	{ &size, "", -EINVAL, 0, "K, M or G" },
};

static void number_row(const struct number_case *c)
{
	char why[256] = "";
	uint64_t v = 12345;
	int err = options_number(c->r, c->arg, &v, why, sizeof(why));

	cr_expect(eq(int, err, c->err), "%s '%s'", c->r->option, c->arg);
	if (!c->err) {
		cr_expect(eq(u64, v, c->want), "%s '%s'", c->r->option, c->arg);
		return;
	}
	cr_expect(eq(u64, v, 12345), "nothing written on failure");
	cr_expect(not(eq(ptr, strstr(why, c->r->option), NULL)), "names the option: %s", why);
	cr_expect(not(eq(ptr, strstr(why, c->says), NULL)), "'%s' in: %s", c->says, why);
}

Test(options, numbers_modes_and_sizes_by_their_rules)
{
	for (size_t i = 0; i < ARRAY_SIZE(number_cases); i++)
		number_row(&number_cases[i]);
}

Test(options, a_refused_value_is_shown_on_one_line_and_cut_short)
{
	char why[512], long_value[200];
	uint64_t v;

	cr_assert(eq(int, options_number(&threads, "6\n4", &v, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "invalid --threads '6?4': a whole number, 1..64, no suffix"));
	memset(long_value, '9', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	cr_assert(eq(int, options_number(&threads, long_value, &v, why, sizeof(why)), -EINVAL));
	cr_expect(not(eq(ptr, strstr(why, "999...'"), NULL)), "%s", why);
	cr_expect(lt(sz, strlen(why), 140), "%s", why);
}

Test(options, sizes_name_the_range_and_the_suffixes)
{
	char why[256];
	uint64_t v;

	cr_assert(eq(int, options_number(&size, "x", &v, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why,
		     "invalid --max-memory 'x': a size of 4K..1024G bytes, digits with an "
		     "optional K, M or G suffix (KiB, MiB, GiB)"));
}

struct name_case {
	const char *arg;
	int err;
};

static const struct name_case name_cases[] = {
	{ "bsg/sg0-cuse", 0 },
	{ "sg3", 0 },
	{ "bsg/0:0:0:0-cuse", 0 },
	{ "disk.a_b+c", 0 },
	{ "", -EINVAL },
	{ "/dev/x", -EINVAL },
	{ "bsg/", -EINVAL },
	{ "bsg//x", -EINVAL },
	{ "bsg/../x", -EINVAL },
	{ "..", -EINVAL },
	{ "./x", -EINVAL },
	{ "a b", -EINVAL },
	{ "a\nb", -EINVAL },
	{ "a\tb", -EINVAL },
	{ "a\rb", -EINVAL },
	{ "a\x1b[31mb", -EINVAL },
	{ "a\x7f", -EINVAL },
	{ "cuse", -EINVAL },
	{ "cuse2", -EINVAL },
	{ "x123456789x123456789x123456789x123456789x123456789x123456789x123456789x12345678"
	  "9x123456789x123456789x123456789x123456789x123456",
	  0 }, /* 127 bytes */
	{ "x123456789x123456789x123456789x123456789x123456789x123456789x123456789x12345678"
	  "9x123456789x123456789x123456789x123456789x1234567",
	  -EINVAL }, /* 128 */
};

Test(options, names_under_dev)
{
	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++) {
		const struct name_case *c = &name_cases[i];
		char why[256] = "";
		int err = options_check_name(c->arg, 128, why, sizeof(why));

		cr_expect(eq(int, err, c->err), "'%s': %s", c->arg, why);
		if (!err)
			continue;
		cr_expect(not(eq(ptr, strstr(why, "--name"), NULL)), "%s", why);
		cr_expect(eq(ptr, strchr(why, '\n'), NULL), "one line: %s", why);
	}
}

Test(options, a_control_character_is_named_not_echoed)
{
	char why[256];

	cr_assert(eq(int, options_check_text("--policy", "/etc/x\nforged line", why, sizeof(why)),
		     -EINVAL));
	cr_expect(eq(str, why,
		     "invalid --policy: control character 0x0a at byte 6; none is allowed"));
	cr_expect(zero(int, options_check_text("--policy", "/etc/cuse bsg/p", why, sizeof(why))));
	cr_expect(eq(int, options_check_text("TARGET", "", why, sizeof(why)), -EINVAL));
}

struct id_case {
	const char *arg;
	int err;
	uint32_t want;
};

static const struct id_case id_cases[] = {
	{ "0", 0, 0 },
	{ "5", 0, 5 },
	{ "4294967294", 0, 4294967294u },
	{ "4294967295", -EINVAL, 0 }, /* (uid_t)-1: chown()'s "leave it" */
	{ "4294967296", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ " 5", -EINVAL, 0 },
	{ "+5", -EINVAL, 0 },
	{ "5 ", -EINVAL, 0 },
	{ "0x5", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "no\nbody", -EINVAL, 0 },
	{ "nosuchuser", -EINVAL, 0 },
};

Test(options, ids_as_numbers)
{
	for (size_t i = 0; i < ARRAY_SIZE(id_cases); i++) {
		const struct id_case *c = &id_cases[i];
		char why[256] = "";
		uint32_t v = 7;
		int err = options_parse_id("--owner", c->arg, &v, why, sizeof(why));

		cr_expect(eq(int, err, c->err), "'%s'", c->arg);
		if (!err)
			cr_expect(eq(u32, v, c->want));
		else
			cr_expect(not(eq(ptr, strstr(why, "--owner"), NULL)), "%s", why);
	}
}

Test(options, the_opener_may_not_be_promised_more_than_all_openers)
{
	char why[256];

	cr_expect(zero(int, options_check_memory(1ull << 30, 128ull << 20, why, sizeof(why))));
	cr_expect(zero(int, options_check_memory(1ull << 30, 1ull << 30, why, sizeof(why))));
	cr_assert(eq(int, options_check_memory(1ull << 30, 2ull << 30, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "invalid --opener-memory '2G': at most --max-memory, 1G"));
}

Test(options, sizes_are_named_by_their_largest_unit)
{
	static const struct {
		uint64_t v;
		const char *s;
	} rows[] = { { 4096, "4K" },	   { 1536, "1536" },	    { 1ull << 20, "1M" },
		     { 3ull << 30, "3G" }, { 1ull << 40, "1024G" }, { 0, "0" } };
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		options_size_name(rows[i].v, buf, sizeof(buf));
		cr_expect(eq(str, buf, (char *)rows[i].s));
	}
}

/* ---- the daemon on bad command lines ---- */

struct run_case {
	const char *args[8];
	int status;
	const char *says;
};

static const struct run_case run_cases[] = {
	{ { "--max-memory", "18446744073709551616", "/dev/sg0" }, 2, "--max-memory" },
	{ { "--max-memory", " -1", "/dev/sg0" }, 2, "4K..1024G" },
	{ { "--max-memory", "-1", "/dev/sg0" }, 2, "K, M or G" },
	{ { "--max-memory", "+1G", "/dev/sg0" }, 2, "--max-memory '+1G'" },
	{ { "--opener-memory", "2G", "--max-memory", "1G", "/dev/sg0" },
	  2,
	  "at most --max-memory" },
	{ { "--max-memory", "1G", "--opener-memory", "2G", "/dev/sg0" },
	  2,
	  "at most --max-memory" },
	{ { "--opener-memory", "0", "/dev/sg0" }, 2, "--opener-memory '0'" },
	{ { "--mode", "07777", "/dev/sg0" }, 2, "0..0777" },
	{ { "--mode", "4660", "/dev/sg0" }, 2, "0..0777" },
	{ { "--mode", "+666", "/dev/sg0" }, 2, "--mode '+666'" },
	{ { "--owner", " 5", "/dev/sg0" }, 2, "--owner ' 5'" },
	{ { "--group", "-1", "/dev/sg0" }, 2, "--group '-1'" },
	{ { "--owner", "root\nforged", "/dev/sg0" }, 2, "control character 0x0a" },
	{ { "--name", "bsg/a\nb", "/dev/sg0" }, 2, "control character 0x0a" },
	{ { "--name", "../x", "/dev/sg0" }, 2, "--name '../x'" },
	{ { "--policy", "/etc/x\rforged", "/dev/sg0" }, 2, "--policy: control character 0x0d" },
	{ { "/dev/sg0\n" }, 2, "TARGET: control character" },
	{ { "--threads", "0x10", "/dev/sg0" }, 2, "1..64" },
	{ { "--queue-depth", "257", "/dev/sg0" }, 2, "1..256" },
	{ { "--copy-timeout", "0", "/dev/sg0" }, 2, "1..3600" },
	{ { "--sg-compat", "256", "/dev/sg0" }, 2, "0..255" },
	{ { "--copy", "fast", "/dev/sg0" }, 2, "one of auto, direct, retry" },
	{ { "--async", "x", "/dev/sg0" }, 2, "one of auto, queue, pool" },
	{ { "--control", "--sg-compat", "3" }, 2, "--control takes none of" },
	{ { "--control", "--copy=retry" }, 2, "--control takes none of" },
	{ { "--control", "--shared-queue" }, 2, "--control takes none of" },
	{ { "--shared-queue", "/dev/sg0" }, 2, "refused, but for a test of that flaw" },
	{ { "--control", "--async=queue" }, 2, "--control takes none of" },
	{ { "--control", "--all" }, 2, "--control takes none of" },
	{ { "--control", "/dev/sg0" }, 2, "--control takes no TARGET" },
	{ { "--all", "--name", "x" }, 2, "--all names its nodes itself" },
	{ { "--check" }, 2, "no TARGET given" },
	{ { "--no-such-option" }, 2, "unknown option '--no-such-option'" },
	{ { "--mode" }, 2, "needs a value" },
	{ { "--show", "--no-such-option" },
	  2,
	  "--show: unknown option '--no-such-option' (see --help)" },
	{ { "--show", "sg0", "sg1" }, 2, "--show: a second NODE 'sg1' (see --help)" },
};

/* Run the daemon with args; its exit status and what it wrote on stderr. */
static int run(const char *const *args, char *err, size_t err_len)
{
	const char *bin = getenv("CUSE_BSG") ? getenv("CUSE_BSG") : "build/cuse_bsg";
	char *argv[10] = { (char *)bin };
	posix_spawn_file_actions_t fa;
	int fds[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	for (int i = 0; i < 8 && args[i]; i++)
		argv[i + 1] = (char *)args[i];
	cr_assert(zero(int, access(bin, X_OK)), "%s: build it first (make)", bin);
	cr_assert(zero(int, pipe(fds)));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	cr_assert(zero(int, posix_spawn(&pid, bin, &fa, NULL, argv, (char *[]){ NULL })));
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while (got < err_len - 1 && (n = read(fds[0], err + got, err_len - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(fds[0]);
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	cr_assert(eq(int, WIFEXITED(status), 1), "exited, not killed");
	return WEXITSTATUS(status);
}

static unsigned lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

Test(options, daemon_refuses_bad_command_lines_with_one_line_and_status_2)
{
	for (size_t i = 0; i < ARRAY_SIZE(run_cases); i++) {
		const struct run_case *c = &run_cases[i];
		char err[2048];
		int status = run(c->args, err, sizeof(err));

		cr_expect(eq(int, status, c->status), "%s %s: %s", c->args[0], c->args[1] ?: "",
			  err);
		cr_expect(not(eq(ptr, strstr(err, c->says), NULL)), "'%s' in: %s", c->says, err);
		cr_expect(eq(u32, lines(err), 1), "one line: %s", err);
	}
}

/* A mode that opens the node to every user is said before the target is looked at. */
Test(options, a_mode_open_to_every_user_is_warned_of)
{
	const char *open_to_all[] = { "--check", "--mode", "0604", "/dev/null", NULL };
	const char *group_only[] = { "--check", "--mode", "0660", "/dev/null", NULL };
	char err[2048];

	cr_expect(eq(int, run(open_to_all, err, sizeof(err)), 1), "%s", err);
	cr_expect(not(eq(ptr, strstr(err, "warning: --mode 0604: every user may open"), NULL)),
		  "%s", err);
	cr_expect(eq(int, run(group_only, err, sizeof(err)), 1), "%s", err);
	cr_expect(eq(ptr, strstr(err, "warning"), NULL), "%s", err);
}

/* A policy the daemon cannot use is a start-up error (1), found before the target. */
Test(options, daemon_refuses_a_fifo_or_directory_policy_without_waiting)
{
	char fifo[] = "/tmp/test_options.XXXXXX", path[64], err[2048];
	const char *args[] = { "--check", "--policy", path, "/dev/null", NULL };

	cr_assert(not(eq(ptr, mkdtemp(fifo), NULL)));
	snprintf(path, sizeof(path), "%s/fifo", fifo);
	cr_assert(zero(int, mkfifo(path, 0600)));
	cr_expect(eq(int, run(args, err, sizeof(err)), 1), "%s", err);
	cr_expect(not(eq(ptr, strstr(err, "not a regular file"), NULL)), "%s", err);
	cr_expect(eq(u32, lines(err), 1), "one line: %s", err);
	unlink(path);
	snprintf(path, sizeof(path), "%s", fifo);
	cr_expect(eq(int, run(args, err, sizeof(err)), 1), "%s", err);
	cr_expect(not(eq(ptr, strstr(err, "Is a directory"), NULL)), "%s", err);
	rmdir(fifo);
}
