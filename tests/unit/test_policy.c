// SPDX-License-Identifier: GPL-2.0-only
/*
 * policy: the live access policy.  Loading a file (a regular file only,
 * never a wait on a FIFO; a malformed one named with its line), replacing
 * the policy in force, and the kernel rule a control binding defers to.
 * The files live in a fresh directory under /tmp.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

static char dir[] = "/tmp/test_policy.XXXXXX";

static void make_dir(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
}

static void remove_dir(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect(zero(int, system(cmd)));
}

TestSuite(policy, .init = make_dir, .fini = remove_dir, .timeout = 10);

/* dir/name, holding len bytes of text; the path in a static buffer. */
static const char *file_of(const char *name, const char *text, size_t len)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	cr_assert(not(eq(ptr, f, NULL)));
	cr_assert(eq(sz, fwrite(text, 1, len, f), len));
	fclose(f);
	return path;
}

static const char *path_of(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int check_op(struct policy *p, int kernel, uint8_t op, int open_flags)
{
	struct filter_ctx c = { .open_flags = open_flags };
	uint8_t cdb[16] = { op };

	return policy_check(p, kernel, cdb, sizeof(cdb), &c);
}

Test(policy, a_regular_file_loads)
{
	const char text[] = "# a comment\nkernel sg\ndeny READ_10\n";
	const char *path = file_of("good", text, strlen(text));
	struct filter_policy p;
	char why[256] = "";

	cr_assert(zero(int, policy_load(path, &p, why, sizeof(why))), "%s", why);
	cr_expect(eq(int, p.kernel, FILTER_KERNEL_SG));
	cr_expect(eq(int, p.op[0x28], FILTER_DENY));
}

/* Loading path fails with err, and why (WHY_MAX bytes) says says. */
#define WHY_MAX 256
static void expect_refused(const char *path, int err, const char *says, char *why)
{
	struct filter_policy p;

	why[0] = '\0';
	cr_expect(eq(int, policy_load(path, &p, why, WHY_MAX), err));
	cr_expect(not(eq(ptr, strstr(why, says), NULL)), "%s", why);
}

Test(policy, a_fifo_is_refused_at_once_not_waited_on)
{
	char why[WHY_MAX];

	cr_assert(zero(int, mkfifo(path_of("fifo"), 0600)));
	/* no writer: a blocking open would wait for ever (the suite's timeout) */
	expect_refused(path_of("fifo"), -EINVAL, "not a regular file", why);
	cr_expect(not(eq(ptr, strstr(why, path_of("fifo")), NULL)), "names the file: %s", why);
}

Test(policy, a_directory_is_a_directory)
{
	char why[WHY_MAX];

	cr_assert(zero(int, mkdir(path_of("sub"), 0700)));
	expect_refused(path_of("sub"), -EISDIR, "Is a directory", why);
}

Test(policy, a_device_node_is_refused)
{
	char why[WHY_MAX];

	expect_refused("/dev/null", -EINVAL, "not a regular file", why);
}

Test(policy, a_missing_file_says_so)
{
	char why[WHY_MAX];

	expect_refused(path_of("none"), -ENOENT, "No such file", why);
}

Test(policy, a_malformed_file_names_the_file_and_the_line)
{
	const char text[] = "kernel bsg\n\nallow READ_10\nallow NO_SUCH_COMMAND\n";
	const char *path = file_of("bad", text, strlen(text));
	struct filter_policy p = { .kernel = FILTER_KERNEL_SG };
	char why[256] = "";

	cr_expect(eq(int, policy_load(path, &p, why, sizeof(why)), -EINVAL));
	cr_expect(not(eq(ptr, strstr(why, path), NULL)), "%s", why);
	cr_expect(not(eq(ptr, strstr(why, "line 4"), NULL)), "%s", why);
	cr_expect(eq(int, p.kernel, FILTER_KERNEL_SG), "the caller's policy untouched");
}

Test(policy, a_file_over_the_limit_is_refused)
{
	size_t len = FILTER_TEXT_MAX + 1;
	char *text = malloc(len);
	struct filter_policy p;
	char why[256] = "";
	const char *path;

	cr_assert(not(eq(ptr, text, NULL)));
	memset(text, '\n', len);
	path = file_of("big", text, len);
	free(text);
	cr_expect(eq(int, policy_load(path, &p, why, sizeof(why)), -EINVAL));
	cr_expect(not(eq(ptr, strstr(why, "larger than"), NULL)), "%s", why);
}

Test(policy, a_replacement_applies_to_the_next_check)
{
	struct filter_policy first, next;
	struct policy *live;
	char why[128];
	const char text[] = "deny INQUIRY\n";

	filter_init(&first);
	cr_assert(zero(int, filter_parse(text, strlen(text), &next, why, sizeof(why))));
	cr_assert(zero(int, policy_new(&first, &live)));
	cr_expect(zero(int, check_op(live, POLICY_KERNEL_OWN, 0x12, O_RDONLY)));
	policy_replace(live, &next);
	cr_expect(eq(int, check_op(live, POLICY_KERNEL_OWN, 0x12, O_RDONLY), -EPERM));
	policy_replace(live, &first);
	cr_expect(zero(int, check_op(live, POLICY_KERNEL_OWN, 0x12, O_RDONLY)));
	policy_free(live);
}

Test(policy, a_binding_defers_to_its_own_drivers_rule)
{
	struct filter_policy first;
	struct policy *live;

	/* WRITE(10) on a read-only file: bsg refuses it, sg passes it for write() */
	filter_init(&first);
	cr_assert(zero(int, policy_new(&first, &live)));
	cr_expect(eq(int, check_op(live, POLICY_KERNEL_OWN, 0x2a, O_RDONLY), -EPERM));
	cr_expect(eq(int, check_op(live, FILTER_KERNEL_BSG, 0x2a, O_RDONLY), -EPERM));
	cr_expect(zero(int, check_op(live, FILTER_KERNEL_SG, 0x2a, O_RDWR)));
	cr_expect(eq(int, check_op(NULL, POLICY_KERNEL_OWN, 0x2a, O_RDONLY), -EPERM),
		  "no policy: the kernel's bsg rule");
	cr_expect(zero(int, check_op(NULL, POLICY_KERNEL_OWN, 0x28, O_RDONLY)));
	policy_free(live);
	policy_free(NULL);
}

/*
 * The default file shipped as /etc/cuse-bsg/policy (make unit runs from the
 * top) judges every opcode, in every context, as a daemon without a policy
 * file: the kernel's bsg rule.
 */
Test(policy, the_shipped_default_is_the_kernels_rule)
{
	struct filter_policy shipped, none;
	struct policy *with, *without;
	char why[256];

	cr_assert(zero(int, policy_load("dist/policy.default", &shipped, why, sizeof(why))), "%s",
		  why);
	filter_init(&none);
	cr_assert(zero(int, policy_new(&shipped, &with)));
	cr_assert(zero(int, policy_new(&none, &without)));
	for (unsigned op = 0; op < 256; op++) {
		for (unsigned c = 0; c < 32; c++) {
			const struct filter_ctx ctx = { .open_flags = c & 1 ? O_RDWR : O_RDONLY,
							.rawio = c & 2,
							.by_write = c & 4,
							.scsi_type = c & 8 ? 5 : 0,
							.scsi_ioctl = c & 16 };
			const uint8_t cdb[16] = { (uint8_t)op };

			cr_expect(eq(int, policy_check(with, POLICY_KERNEL_OWN, cdb, 16, &ctx),
				     policy_check(without, POLICY_KERNEL_OWN, cdb, 16, &ctx)),
				  "opcode 0x%02x, context %u", op, c);
		}
	}
	policy_free(with);
	policy_free(without);
}
