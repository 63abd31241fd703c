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
#include <unistd.h>

#include "child.h"
#include "gate.h"
#include "gate_bpf.h"

TestSuite(gate, .timeout = 30);

/* One row a case: the mode asked for, each load's result (1: not tried), what follows. */
static const struct {
	enum gate_mode mode;
	int witness_err, lsm_err;
	int ret;
	enum gate_kind kind;
} choices[] = {
	{ GATE_AUTO, 0, 1, 0, GATE_SEEN },
	{ GATE_AUTO, -ENOENT, 0, 0, GATE_LSM },
	{ GATE_AUTO, -EPERM, -EPERM, 0, GATE_NONE },
	{ GATE_AUTO, -EINVAL, -EINVAL, 0, GATE_NONE },
	{ GATE_WITNESS, 0, 1, 0, GATE_SEEN },
	{ GATE_WITNESS, -ENOENT, 1, -ENOENT, GATE_NONE },
	{ GATE_KERNEL, 1, 0, 0, GATE_LSM },
	{ GATE_KERNEL, 1, -EPERM, -EPERM, GATE_NONE },
	{ GATE_KERNEL, 1, -ENOENT, -ENOENT, GATE_NONE },
	{ GATE_PROCFS, 1, 1, 0, GATE_NONE },
};

Test(gate, choose_follows_the_mode_and_the_loads)
{
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		enum gate_kind kind = GATE_LSM + GATE_SEEN;

		cr_assert(eq(int,
			     gate_choose(choices[i].mode, choices[i].witness_err,
					 choices[i].lsm_err, &kind),
			     choices[i].ret),
			  "row %zu", i);
		cr_assert(eq(int, kind, choices[i].kind), "row %zu", i);
	}
}

Test(gate, procfs_mode_loads_nothing)
{
	struct gate *g = (struct gate *)1;
	char why[256];

	cr_assert(eq(int, gate_new(GATE_PROCFS, NULL, 0, &g, why, sizeof(why)), 0));
	cr_assert(eq(ptr, g, NULL));
	cr_assert(eq(str, why, ""));
	cr_assert(eq(str, (char *)gate_describe(g), "procfs"));
	cr_assert(eq(int, gate_live(g), GATE_NONE));
	cr_assert(eq(ptr, gate_verdicts(g), NULL));
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
	err = gate_new(mode, NULL, 0, &g, why, sizeof(why));
	if (mode != GATE_KERNEL && !strstr(why, "cannot load the witness"))
		return 3;
	if (mode != GATE_WITNESS && !strstr(why, "BPF LSM program"))
		return 3;
	if (mode == GATE_AUTO)
		return err == 0 && g == NULL ? 0 : 4;
	return err < 0 && g == (struct gate *)1 ? 0 : 5;
}

static int run_child(enum gate_mode mode)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(child_unprivileged(mode));
	return unit_child_status(pid);
}

Test(gate, auto_falls_back_to_procfs_when_the_load_fails)
{
	cr_assert(eq(int, run_child(GATE_AUTO), 0));
}

Test(gate, kernel_mode_fails_when_the_load_fails)
{
	cr_assert(eq(int, run_child(GATE_KERNEL), 0));
}

Test(gate, witness_mode_fails_when_the_load_fails)
{
	cr_assert(eq(int, run_child(GATE_WITNESS), 0));
}

Test(gate, too_many_ioctls_for_the_program_are_refused)
{
	unsigned cmds[GATE_IOCTLS + 1] = { 0 };
	struct gate *g = (struct gate *)1;
	char why[256];

	cr_assert(
		eq(int, gate_new(GATE_AUTO, cmds, GATE_IOCTLS + 1, &g, why, sizeof(why)), -E2BIG));
	cr_assert(eq(ptr, g, (struct gate *)1));
	cr_assert(not(eq(str, why, "")));
}
