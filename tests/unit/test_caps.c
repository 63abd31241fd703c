// SPDX-License-Identifier: GPL-2.0-only
/* caps.c, in a child process each: the sets as /proc/self/status shows them. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <linux/capability.h>
#include <stdio.h>
#include <unistd.h>

#include "caps.h"
#include "child.h"

static uint64_t status_field(const char *name)
{
	char line[256];
	unsigned long long v = ~0ull;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			sscanf(line + strlen(name), " %llx", &v);
	if (f)
		fclose(f);
	return v;
}

/* In a child: limit to keep; exit 0 if CapEff and CapPrm are keep & what we had. */
static int child_limits(uint64_t keep)
{
	uint64_t had = status_field("CapPrm:");

	if (caps_limit(keep) < 0)
		return 2;
	if (status_field("CapEff:") != (had & keep) || status_field("CapPrm:") != (had & keep))
		return 3;
	if (status_field("CapInh:") != 0)
		return 4;
	return 0;
}

static int run_child(uint64_t keep)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(child_limits(keep));
	return unit_child_status(pid);
}

TestSuite(caps, .timeout = 10);

Test(caps, limit_keeps_exactly_the_asked_set)
{
	cr_expect(zero(int, run_child(CAPS_BIT(CAP_SYS_RAWIO) | CAPS_BIT(CAP_SYS_PTRACE))));
	cr_expect(zero(int, run_child(CAPS_BIT(CAP_SYS_RAWIO))));
	cr_expect(zero(int, run_child(0)), "nothing at all");
}

Test(caps, names_lists_the_set)
{
	char buf[128];

	caps_names(CAPS_BIT(CAP_SYS_RAWIO) | CAPS_BIT(CAP_SYS_PTRACE), buf, sizeof(buf));
	cr_expect(eq(str, buf, "CAP_SYS_RAWIO CAP_SYS_PTRACE"));
	caps_names(CAPS_BIT(40), buf, sizeof(buf));
	cr_expect(eq(str, buf, "cap_40"));
	caps_names(0, buf, sizeof(buf));
	cr_expect(eq(str, buf, ""));
}
