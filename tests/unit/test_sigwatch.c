// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which pending signal ends a call: the status file's signal lines, the
 * judge's rule (a handler, or a default action that kills), and this
 * thread's own status read back.  The watcher's thread is driven through
 * a judge the test sets; waits are on the fire callback, never on sleeps.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "count.h"
#include "root.h"
#include "sigwatch.h"

TestSuite(sigwatch, .timeout = 30);

#define BIT(sig) (1ull << (-1 + (sig)))

static const char status_text[] = "Name:\tcat\n"
				  "Umask:\t0022\n"
				  "State:\tS (sleeping)\n"
				  "Tgid:\t4242\n"
				  "SigQ:\t0/31374\n"
				  "SigPnd:\t0000000000000100\n"
				  "ShdPnd:\t0000000000020000\n"
				  "SigBlk:\t0000000000000002\n"
				  "SigIgn:\t0000000000001000\n"
				  "SigCgt:\t0000000180000000\n"
				  "CapInh:\t0000000000000000\n";

Test(sigwatch, parses_the_five_sets)
{
	struct sigwatch_sigs s;

	cr_assert(zero(int, sigwatch_parse(status_text, strlen(status_text), &s)));
	cr_expect(eq(u64, s.pending, 0x100));
	cr_expect(eq(u64, s.shared, 0x20000));
	cr_expect(eq(u64, s.blocked, 0x2));
	cr_expect(eq(u64, s.ignored, 0x1000));
	cr_expect(eq(u64, s.caught, 0x180000000ull));
}

Test(sigwatch, a_missing_or_bad_line_is_refused)
{
	struct sigwatch_sigs s;
	const char *bad[] = {
		"SigPnd:\t0\nShdPnd:\t0\nSigBlk:\t0\nSigIgn:\t0\n",
		"SigPnd:\tzz\nShdPnd:\t0\nSigBlk:\t0\nSigIgn:\t0\nSigCgt:\t0\n",
		"SigPnd:\t\nShdPnd:\t0\nSigBlk:\t0\nSigIgn:\t0\nSigCgt:\t0\n",
		"SigPnd:\t000000000000000000000000000000000001\nShdPnd:\t0\nSigBlk:\t0\n"
		"SigIgn:\t0\nSigCgt:\t0\n",
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int, sigwatch_parse(bad[i], strlen(bad[i]), &s), -EINVAL), "case %u",
			  i);
}

struct judge_case {
	const char *what;
	struct sigwatch_sigs s;
	bool ends;
};

Test(sigwatch, ends_a_call_only_for_a_handler_or_a_kill)
{
	const struct judge_case cases[] = {
		{ "nothing pending (the freezer)", { 0 }, false },
		{ "SIGSTOP", { .pending = BIT(SIGSTOP) }, false },
		{ "SIGTSTP, default", { .shared = BIT(SIGTSTP) }, false },
		{ "SIGCONT, default", { .pending = BIT(SIGCONT) }, false },
		{ "SIGCHLD, default", { .shared = BIT(SIGCHLD) }, false },
		{ "SIGWINCH, default", { .pending = BIT(SIGWINCH) }, false },
		{ "SIGKILL", { .pending = BIT(SIGKILL) }, true },
		{ "SIGKILL, whatever SigBlk says",
		  { .pending = BIT(SIGKILL), .blocked = ~0ull },
		  true },
		{ "SIGTERM, default", { .shared = BIT(SIGTERM) }, true },
		{ "SIGRTMIN+1, default", { .pending = BIT(SIGRTMIN + 1) }, true },
		{ "SIGTERM, ignored", { .shared = BIT(SIGTERM), .ignored = BIT(SIGTERM) }, false },
		{ "SIGUSR1, caught", { .pending = BIT(SIGUSR1), .caught = BIT(SIGUSR1) }, true },
		{ "SIGCHLD, caught", { .shared = BIT(SIGCHLD), .caught = BIT(SIGCHLD) }, true },
		{ "SIGTSTP, caught", { .pending = BIT(SIGTSTP), .caught = BIT(SIGTSTP) }, true },
		{ "SIGUSR1, caught but blocked",
		  { .pending = BIT(SIGUSR1), .caught = BIT(SIGUSR1), .blocked = BIT(SIGUSR1) },
		  false },
		{ "SIGTERM, blocked", { .pending = BIT(SIGTERM), .blocked = BIT(SIGTERM) }, false },
		{ "caught, not pending", { .caught = BIT(SIGUSR1) | BIT(SIGINT) }, false },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect(eq(int, sigwatch_sigs_end_call(&cases[i].s), cases[i].ends), "%s",
			  cases[i].what);
}

static void on_usr1(int sig)
{
	(void)sig;
}

Test(sigwatch, reads_a_threads_own_status)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t set, old;

	cr_assert(zero(int, sigaction(SIGUSR1, &sa, NULL)));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	cr_assert(zero(int, pthread_sigmask(SIG_BLOCK, &set, &old)));
	cr_expect(not(sigwatch_ends_call(gettid())), "nothing pending");
	cr_assert(zero(int, tgkill(getpid(), gettid(), SIGUSR1)));
	cr_expect(not(sigwatch_ends_call(gettid())), "pending, caught, but blocked");
	cr_expect(sigwatch_ends_call(-1), "no such thread: nobody waits");
	cr_assert(zero(int, pthread_sigmask(SIG_SETMASK, &old, NULL)));
}

/* A thread of many long groups (its own, by the raw call), and whether the judge would end its call. */
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t groups_cond = PTHREAD_COND_INITIALIZER;
static pid_t groups_tid;
static bool groups_done;

static void *many_groups(void *arg)
{
	static gid_t groups[2000];

	(void)arg;
	for (unsigned i = 0; i < 2000; i++)
		groups[i] = 1000000000u + i; /* ten digits, as a directory service's */
	cr_assert(zero(long, syscall(SYS_setgroups, 2000, groups)), "setgroups");
	pthread_mutex_lock(&groups_lock);
	groups_tid = gettid();
	pthread_cond_broadcast(&groups_cond);
	while (!groups_done)
		pthread_cond_wait(&groups_cond, &groups_lock);
	pthread_mutex_unlock(&groups_lock);
	return NULL;
}

/*
 * The signal lines come after the groups: a caller with 2,000 groups of
 * ten digits (22 KB of them) and nothing pending is read in full, and its
 * call is not ended (a cut-off text said "unsure", which ends any call).
 */
Test(sigwatch, reads_past_many_groups)
{
	pthread_t t;
	bool ends;

	unit_need_root("needs root: setgroups()");
	cr_assert(zero(int, pthread_create(&t, NULL, many_groups, NULL)));
	pthread_mutex_lock(&groups_lock);
	while (!groups_tid)
		pthread_cond_wait(&groups_cond, &groups_lock);
	pthread_mutex_unlock(&groups_lock);
	ends = sigwatch_ends_call(groups_tid);
	pthread_mutex_lock(&groups_lock);
	groups_done = true;
	pthread_cond_broadcast(&groups_cond);
	pthread_mutex_unlock(&groups_lock);
	pthread_join(t, NULL);
	cr_expect(not(ends), "nothing pending: the call goes on");
}

/* ---- the watcher ---- */

static atomic_bool ends_now;
static atomic_uint judged;

static bool judge(pid_t tid)
{
	(void)tid;
	atomic_fetch_add(&judged, 1);
	return atomic_load(&ends_now);
}

/* An entry's fire(): data is a struct count of the calls fired. */
static void fire(fuse_req_t req, void *data)
{
	(void)req;
	count_add(data);
}

Test(sigwatch, fires_once_the_judge_says_so)
{
	struct count f = COUNT_INIT;
	struct sigwatch_entry e = { .tid = 1, .fire = fire, .data = &f };
	struct sigwatch *w;

	atomic_store(&ends_now, false);
	atomic_store(&judged, 0);
	cr_assert(zero(int, sigwatch_new(judge, &w)));
	cr_assert(zero(int, sigwatch_add(w, &e)));
	while (atomic_load(&judged) < 3)
		sched_yield(); /* judged at once, then each tick */
	pthread_mutex_lock(&f.lock);
	cr_expect(zero(u32, f.n));
	pthread_mutex_unlock(&f.lock);
	atomic_store(&ends_now, true);
	count_wait(&f, 1);
	sigwatch_cancel(&e); /* fired: nothing left to cancel */
	sigwatch_free(w);
	cr_expect(eq(u32, f.n, 1));
}

Test(sigwatch, cancelled_never_fires_and_free_fires_the_rest)
{
	struct count f = COUNT_INIT;
	struct sigwatch_entry a = { .tid = 1, .fire = fire, .data = &f };
	struct sigwatch_entry b = { .tid = 2, .fire = fire, .data = &f };
	struct sigwatch *_Atomic w = NULL;

	atomic_store(&ends_now, false);
	cr_expect(eq(int, sigwatch_watch(&w, NULL, &a), -ENOSYS), "no judge: the caller answers");
	cr_assert(zero(int, sigwatch_watch(&w, judge, &a)));
	cr_assert(not(eq(ptr, w, NULL)));
	cr_assert(zero(int, sigwatch_watch(&w, judge, &b)));
	sigwatch_cancel(&a);
	sigwatch_free(w);
	cr_expect(eq(u32, f.n, 1), "b only, as its watcher went");
}
