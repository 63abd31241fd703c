// SPDX-License-Identifier: GPL-2.0-only
/*
 * uaccess.c's credentials: what uaccess_creds() reads from /proc/TID/status
 * must be what the kernel says through its own calls, for this thread and
 * through a kept status descriptor, and a thread that has gone is ESRCH.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uaccess.h"

TestSuite(uaccess, .timeout = 30);

/* This thread's credentials as the kernel's calls give them. */
static void creds_by_syscalls(struct creds *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	gid_t groups[CREDS_MAX_GROUPS];
	int n;

	memset(c, 0, sizeof(*c));
	cr_assert(zero(int, getresuid(&c->uid[0], &c->uid[1], &c->uid[2])));
	cr_assert(zero(int, getresgid(&c->gid[0], &c->gid[1], &c->gid[2])));
	c->uid[3] = setfsuid(-1); /* an invalid id changes nothing and says the current one */
	c->gid[3] = setfsgid(-1);
	n = getgroups(CREDS_MAX_GROUPS, groups);
	cr_assert(ge(int, n, 0));
	c->ngroups = n;
	for (int i = 0; i < n; i++)
		c->groups[i] = groups[i];
	cr_assert(zero(int, (int)syscall(SYS_capget, &h, d)));
	c->cap_eff = (unsigned long long)d[1].effective << 32 | d[0].effective;
}

Test(uaccess, creds_are_what_the_kernel_says)
{
	struct creds want, got;

	creds_by_syscalls(&want);
	cr_assert(zero(int, uaccess_creds(gettid(), &got)));
	cr_expect(zero(int, memcmp(got.uid, want.uid, sizeof(want.uid))), "uid r/e/s/fs");
	cr_expect(zero(int, memcmp(got.gid, want.gid, sizeof(want.gid))), "gid r/e/s/fs");
	cr_expect(eq(u32, got.ngroups, want.ngroups));
	cr_expect(zero(int, memcmp(got.groups, want.groups, want.ngroups * sizeof(unsigned))));
	cr_expect(eq(u64, got.cap_eff, want.cap_eff));
	cr_expect(uaccess_creds_equal(&got, &want));
}

Test(uaccess, kept_descriptor_reads_the_same_again)
{
	struct uaccess_status st;
	struct creds a, b, want;

	creds_by_syscalls(&want);
	uaccess_status_init(&st);
	cr_assert(zero(int, uaccess_creds_cached(&st, gettid(), &a)));
	cr_assert(ge(int, st.fd, 0), "the descriptor is kept");
	cr_assert(zero(int, uaccess_creds_cached(&st, gettid(), &b)));
	cr_expect(uaccess_creds_equal(&a, &want));
	cr_expect(uaccess_creds_equal(&b, &want));
	uaccess_status_fini(&st);
}

#define STATUS_HEAD "Name:\tx\\nUid:\t7 7 7 7\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"

Test(uaccess, parse_takes_each_field_from_its_own_line)
{
	static const char text[] = STATUS_HEAD "Uid:\t1000\t1001\t1002\t1003\n"
					       "Gid:\t2000\t2001\t2002\t2003\n"
					       "FDSize:\t64\n"
					       "Groups:\t4 24 27 1000 \n"
					       "NStgid:\t42\n"
					       "CapInh:\t0000000000000000\n"
					       "CapPrm:\t000001ffffffffff\n"
					       "CapEff:\t0000000000020400\n"
					       "CapBnd:\t000001ffffffffff\n";
	struct creds c;

	cr_assert(zero(int, uaccess_parse_status(text, sizeof(text) - 1, &c)));
	cr_expect(eq(u32, c.uid[0], 1000), "not the escaped name's Uid");
	cr_expect(eq(u32, c.uid[3], 1003));
	cr_expect(eq(u32, c.gid[0], 2000));
	cr_expect(eq(u32, c.gid[3], 2003));
	cr_expect(eq(u32, c.ngroups, 4));
	cr_expect(eq(u32, c.groups[0], 4));
	cr_expect(eq(u32, c.groups[3], 1000));
	cr_expect(eq(u64, c.cap_eff, 0x20400), "CapEff, not CapPrm or CapBnd");
}

Test(uaccess, parse_stops_at_the_end_of_the_groups_line)
{
	static const char text[] = STATUS_HEAD "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
					       "Groups:\t\n"
					       "12 13\n"
					       "CapEff:\t0\n";
	struct creds c;

	cr_assert(zero(int, uaccess_parse_status(text, sizeof(text) - 1, &c)));
	cr_expect(zero(u32, c.ngroups), "no groups: the next line is not read");
}

Test(uaccess, parse_refuses_a_text_with_a_field_missing_or_short)
{
	static const char *const bad[] = {
		STATUS_HEAD "Gid:\t0\t0\t0\t0\nGroups:\t\nCapEff:\t0\n",
		STATUS_HEAD "Uid:\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\nCapEff:\t0\n",
		STATUS_HEAD "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nCapEff:\t0\n",
		STATUS_HEAD "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n",
		"",
	};
	struct creds c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int, uaccess_parse_status(bad[i], strlen(bad[i]), &c), -ESRCH),
			  "text %zu", i);
}

static void *report_tid(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

Test(uaccess, a_thread_gone_is_esrch)
{
	struct uaccess_status st;
	struct creds c;
	pthread_t t;
	pid_t tid = 0;

	uaccess_status_init(&st);
	cr_assert(zero(int, pthread_create(&t, NULL, report_tid, &tid)));
	cr_assert(zero(int, pthread_join(t, NULL)));
	cr_expect(eq(int, uaccess_creds(tid, &c), -ENOENT));
	cr_expect(lt(int, uaccess_creds_cached(&st, tid, &c), 0));
	uaccess_status_fini(&st);
}
