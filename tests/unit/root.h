// SPDX-License-Identifier: GPL-2.0-only
/*
 * For the few tests that need root: the kernel's own checks on setgroups(),
 * the capability sets, the caller's CAP_SYS_PTRACE, CAP_SYS_RAWIO or
 * CAP_SYS_ADMIN, a userfaultfd that stalls the kernel's own copies.  As
 * root they run.  As another user (a package's build) they are skipped
 * with the reason, and counted as skipped, unless UNIT_REQUIRE_ROOT is set
 * (make check sets it): then they fail, so that a run meant to be complete
 * cannot skip one.  Call it first in a test, before anything is allocated:
 * a skip leaves the test where it is.
 */
#ifndef UNIT_ROOT_H
#define UNIT_ROOT_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

static inline void unit_skip_unless(bool can, const char *why)
{
	if (can)
		return;
	if (getenv("UNIT_REQUIRE_ROOT"))
		cr_fatal("%s, and UNIT_REQUIRE_ROOT is set: not skipped", why);
	cr_skip_test("%s", why);
}

static inline void unit_need_root(const char *why)
{
	unit_skip_unless(geteuid() == 0, why);
}

#endif
