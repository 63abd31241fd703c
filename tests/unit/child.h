// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test's forked child, waited for.  Header-only, as root.h: each test
 * program links only the modules it tests.
 */
#ifndef UNIT_CHILD_H
#define UNIT_CHILD_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <sys/types.h>
#include <sys/wait.h>

/* pid, fork()'s answer in the parent: the child's exit status once it ends (-1: killed). */
static inline int unit_child_status(pid_t pid)
{
	int status;

	cr_assert(gt(int, pid, 0));
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
