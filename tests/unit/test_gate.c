// SPDX-License-Identifier: GPL-2.0-only
/*
 * gate.c: the choice between the kernel's credential test and the /proc
 * check, and the fall-back when the BPF program cannot load.  The load is
 * made to fail for real: in a child without any capability, bpf() refuses
 * it whatever the kernel.  That it loads and refuses in the kernel is the
 * VM suites' (tests/vm/security.sh).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate.h"

TestSuite(gate, .timeout = 30);

/* One row a case: the mode asked for, the load's result, what follows. */
static const struct {
	enum gate_mode mode;
	int load_err;
	int ret;
	bool procfs;
} choices[] = {
	{ GATE_AUTO, 0, 0, false },
	{ GATE_AUTO, -EPERM, 0, true },
	{ GATE_AUTO, -EINVAL, 0, true },
	{ GATE_KERNEL, 0, 0, false },
	{ GATE_KERNEL, -EPERM, -EPERM, true },
	{ GATE_KERNEL, -ENOENT, -ENOENT, true },
	{ GATE_PROCFS, 0, 0, true },
	{ GATE_PROCFS, -EPERM, 0, true },
};

Test(gate, choose_follows_the_mode_and_the_load)
{
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		bool procfs = !choices[i].procfs;

		cr_assert(eq(int, gate_choose(choices[i].mode, choices[i].load_err, &procfs),
			     choices[i].ret),
			  "row %zu", i);
		cr_assert(eq(int, procfs, choices[i].procfs), "row %zu", i);
	}
}

Test(gate, procfs_mode_loads_nothing)
{
	struct gate *g = (struct gate *)1;
	char why[256];

	cr_assert(eq(int, gate_new(GATE_PROCFS, &g, why, sizeof(why)), 0));
	cr_assert(eq(ptr, g, NULL));
	cr_assert(eq(str, why, ""));
	cr_assert(eq(str, (char *)gate_describe(g), "procfs"));
	cr_assert(eq(int, gate_live(g), false));
}

/* Every capability gone, as for a daemon started without privilege. */
static void drop_all_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capset, &h, d) < 0)
		_exit(90);
}

/*
 * In a child without privilege: gate_new(mode); exit 0 if it answered as
 * expected (auto: the /proc check, with the reason; kernel: an error, with
 * the reason), else the step that differed.
 */
static int child_unprivileged(enum gate_mode mode)
{
	struct gate *g = (struct gate *)1;
	char why[256];
	int err;

	drop_all_caps();
	err = gate_new(mode, &g, why, sizeof(why));
	if (!strstr(why, "BPF LSM program"))
		return 3;
	if (mode == GATE_AUTO)
		return err == 0 && g == NULL ? 0 : 4;
	return err < 0 && g == (struct gate *)1 ? 0 : 5;
}

static int run_child(enum gate_mode mode)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child_unprivileged(mode));
	cr_assert(gt(int, pid, 0));
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(gate, auto_falls_back_to_procfs_when_the_load_fails)
{
	cr_assert(eq(int, run_child(GATE_AUTO), 0));
}

Test(gate, kernel_mode_fails_when_the_load_fails)
{
	cr_assert(eq(int, run_child(GATE_KERNEL), 0));
}
