// SPDX-License-Identifier: GPL-2.0-only
/* The shares: open files per user and in all, calls holding a thread per file and per user. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include "share.h"

static const struct share_limits lim = { .max_files = 4,
					 .files_per_user = 3,
					 .calls_per_file = 2,
					 .calls_per_user = 3,
					 .mem_per_user = 1000 };

static struct share *s;

static void setup(void)
{
	cr_assert(zero(int, share_new(&lim, &s)));
}

static void teardown(void)
{
	share_free(s);
}

TestSuite(share, .init = setup, .fini = teardown, .timeout = 10);

/* Resumed waits, in the order they were given a share. */
static struct share_wait *resumed[8];
static unsigned nresumed;

static void resume(struct share_wait *w)
{
	resumed[nresumed++] = w;
}

static void wait_init(struct share_wait *w, struct share_file *f, uid_t uid)
{
	*w = (struct share_wait){ .uid = uid, .f = f, .owner = s, .resume = resume };
}

Test(share, files_per_user_then_emfile_and_in_all_enfile_but_root)
{
	struct share_file *f[8];
	unsigned busy, parked, files;

	for (int i = 0; i < 3; i++)
		cr_assert(zero(int, share_file_open(s, 1000, &f[i])));
	cr_expect(eq(int, share_file_open(s, 1000, &f[3]), -EMFILE), "the user's bound");
	cr_assert(zero(int, share_file_open(s, 1001, &f[3])));
	cr_expect(eq(int, share_file_open(s, 1002, &f[4]), -ENFILE), "the bound on all");
	cr_assert(zero(int, share_file_open(s, 0, &f[4])), "root passes the bound on all");
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(eq(u32, files, 3));
	share_file_close(f[4]);
	share_file_close(f[0]);
	cr_assert(zero(int, share_file_open(s, 1000, &f[0])),
		  "a closed file's place is free again");
	cr_assert(zero(int, share_file_open(s, 0, &f[4])));
	for (int i = 0; i < 5; i++)
		share_file_close(f[i]);
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(zero(u32, files));
}

/* A file of user 1000's, its 2 calls taken by c[0] and c[1] of user uid. */
static struct share_file *full_file(uid_t uid, struct share_call *c)
{
	struct share_file *f;

	cr_assert(zero(int, share_file_open(s, 1000, &f)));
	cr_assert(share_enter(f, uid, &c[0]));
	cr_assert(share_enter(f, uid, &c[1]));
	return f;
}

Test(share, a_file_past_its_calls_parks_and_an_ended_call_resumes_it)
{
	struct share_call c[3];
	struct share_wait w;
	unsigned busy, parked, files;
	struct share_file *f = full_file(1000, c);

	cr_expect(not(share_enter(f, 1000, &c[2])), "the file's bound: 2 calls");
	wait_init(&w, f, 1000);
	cr_assert(eq(int, share_park(s, &w), SHARE_PARKED));
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(eq(u32, busy, 2));
	cr_expect(eq(u32, parked, 1));
	nresumed = 0;
	share_end(&c[0]);
	cr_assert(eq(u32, nresumed, 1), "the ended call's share went to the parked one");
	cr_expect(eq(ptr, resumed[0], &w));
	cr_expect(eq(int, w.state, SHARE_RUNNING));
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(eq(u32, busy, 2));
	cr_expect(zero(u32, parked));
	share_end(&w.call);
	share_end(&c[1]);
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(zero(u32, busy));
	share_file_close(f);
}

Test(share, a_user_past_its_calls_waits_while_another_user_runs)
{
	struct share_file *f[3], *g;
	struct share_call c[4], other;
	struct share_wait w;

	for (int i = 0; i < 3; i++)
		cr_assert(zero(int, share_file_open(s, 1000, &f[i])));
	cr_assert(zero(int, share_file_open(s, 1001, &g)));
	for (int i = 0; i < 3; i++)
		cr_assert(share_enter(f[i], 1000, &c[i]));
	cr_expect(not(share_enter(f[0], 1000, &c[3])), "the user's bound: 3 calls");
	cr_expect(share_enter(g, 1001, &other), "another user's call runs");
	cr_expect(share_enter(f[0], 1001, &c[3]),
		  "another user's call on the same file: the file has room");
	wait_init(&w, f[1], 1000);
	cr_assert(eq(int, share_park(s, &w), SHARE_PARKED));
	nresumed = 0;
	share_end(&other);
	cr_expect(zero(u32, nresumed), "another user's end gives nothing to this one");
	share_end(&c[2]);
	cr_expect(eq(u32, nresumed, 1));
	share_end(&w.call);
	share_end(&c[0]);
	share_end(&c[1]);
	share_end(&c[3]);
	for (int i = 0; i < 3; i++)
		share_file_close(f[i]);
	share_file_close(g);
}

Test(share, a_parked_call_cancelled_is_its_callers_and_never_resumed)
{
	struct share_call c[2];
	struct share_wait w, early;
	struct share_file *f;

	cr_assert(zero(int, share_file_open(s, 1000, &f)));
	cr_assert(share_enter(f, 1000, &c[0]));
	cr_assert(share_enter(f, 1000, &c[1]));
	wait_init(&w, f, 1000);
	cr_assert(eq(int, share_park(s, &w), SHARE_PARKED));
	cr_expect(share_cancel(s, &w), "parked: the interrupt answers it");
	cr_expect(not(share_cancel(s, &w)), "once");
	wait_init(&early, f, 1000);
	cr_expect(not(share_cancel(s, &early)), "not parked yet: its parker answers it");
	cr_expect(eq(int, share_park(s, &early), SHARE_CANCELLED));
	nresumed = 0;
	share_end(&c[0]);
	cr_expect(zero(u32, nresumed));
	share_end(&c[1]);
	share_file_close(f);
}

Test(share, a_file_closed_with_calls_running_goes_with_its_last_call)
{
	struct share_file *f;
	struct share_call c;
	unsigned busy, parked, files;

	cr_assert(zero(int, share_file_open(s, 1000, &f)));
	cr_assert(share_enter(f, 1000, &c));
	share_file_close(f); /* the answer came first, then the release */
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(zero(u32, files));
	cr_expect(eq(u32, busy, 1));
	share_end(&c); /* frees f: ASan says if not, or if twice */
	share_user_counts(s, 1000, &busy, &parked, &files);
	cr_expect(zero(u32, busy));
}

Test(share, taken_calls_are_ended_by_their_taker_and_drained_waits_returned)
{
	struct share_call c[2], taken;
	struct share_wait w;
	struct list_head out = LIST_HEAD_INIT(out);
	struct share_file *f;

	cr_assert(zero(int, share_file_open(s, 1000, &f)));
	cr_assert(share_enter(f, 1000, &c[0]));
	share_set_current(&c[0]);
	share_take(&taken);
	share_set_current(NULL);
	cr_expect(c[0].taken);
	share_end(&c[0]); /* the caller's end: nothing, the taker ends it */
	cr_assert(share_enter(f, 1000, &c[1]));
	wait_init(&w, f, 1000);
	cr_assert(eq(int, share_park(s, &w), SHARE_PARKED), "the taken call still holds");
	share_drain(s, s, &out);
	cr_expect(eq(ptr, out.next, &w.node), "drained to its owner");
	cr_expect(eq(int, w.state, SHARE_CANCELLED));
	nresumed = 0;
	share_end(&taken);
	share_end(&c[1]);
	cr_expect(zero(u32, nresumed));
	share_file_close(f);
}

/*
 * A call parked only for its file's bound (its user has room) is resumed
 * when a call on that file ends, whoever's: the calls filling the file may
 * be another user's (a descriptor passed to another user, SG_IO of a
 * process that changed uid after open), and their user's waiting list does
 * not hold it.
 */
Test(share, a_call_parked_for_its_file_is_resumed_when_another_users_calls_on_it_end)
{
	struct share_call c[2];
	struct share_wait w;
	unsigned busy, parked, files;
	struct share_file *f = full_file(1001, c); /* another user holding the same open file */

	cr_assert(not(share_enter(f, 1000, &(struct share_call){ 0 })), "the file is full");
	wait_init(&w, f, 1000);
	cr_assert(eq(int, share_park(s, &w), SHARE_PARKED));
	nresumed = 0;
	share_end(&c[0]);
	share_end(&c[1]);
	share_user_counts(s, 1001, &busy, &parked, &files);
	cr_assert(zero(u32, busy), "the file has no call running now");
	cr_expect(eq(u32, nresumed, 1), "the parked call of the idle file must be resumed");
	if (nresumed)
		share_end(&w.call);
	else
		cr_assert(share_cancel(s, &w));
	share_file_close(f);
}

/*
 * Each user's bytes are bounded apart from the others': one user at its
 * bound leaves another's whole share, root passes it (the daemon's own
 * bound still holds root), and what is given back can be taken again, by
 * a user with no file open too (a buffer may outlive its file).
 */
Test(share, memory_per_user_then_enomem_but_root)
{
	cr_assert(zero(int, share_mem_charge(s, 1000, 600)));
	cr_assert(zero(int, share_mem_charge(s, 1000, 400)), "up to the bound");
	cr_expect(eq(int, share_mem_charge(s, 1000, 1), -ENOMEM), "past it");
	cr_assert(zero(int, share_mem_charge(s, 1001, 1000)), "another user's share is whole");
	cr_assert(zero(int, share_mem_charge(s, 0, 5000)), "root passes it");
	share_mem_uncharge(s, 1000, 400);
	cr_expect(zero(int, share_mem_charge(s, 1000, 400)), "given back, taken again");
	cr_expect(eq(int, share_mem_charge(s, 1000, 1), -ENOMEM));
	share_mem_uncharge(s, 1000, 1000);
	share_mem_uncharge(s, 1001, 1000);
	share_mem_uncharge(s, 0, 5000);
	cr_expect(zero(int, share_mem_charge(s, 1000, 1000)), "all of it back");
	share_mem_uncharge(s, 1000, 1000);
}
