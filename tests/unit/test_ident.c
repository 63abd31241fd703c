// SPDX-License-Identifier: GPL-2.0-only
/*
 * ident.c's security contexts, against the kernel itself: what
 * ident_read() takes from /proc must be what the kernel's own calls
 * say, and every change the kernel's f_cred comparison would refuse must
 * make ident_match() refuse.  Each test runs in its own process
 * (Criterion's), as root, and changes its own credentials freely.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ident.h"
#include "root.h"

TestSuite(ident, .timeout = 30);

static void caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	cr_assert(zero(int, (int)syscall(SYS_capget, &h, d)));
}

static void caps_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	cr_assert(zero(int, (int)syscall(SYS_capset, &h, d)));
}

static void read_self(struct ident_cache *st, struct ident *id)
{
	ident_cache_init(st);
	cr_assert(zero(int, ident_read(st, gettid(), id)));
}

static void expect_refused(struct ident_cache *st, pid_t tid, const struct ident *id,
			   const char *what)
{
	const char *why = NULL;

	cr_expect(eq(int, ident_match(st, tid, id, false, &why), -EPERM), "%s", what);
	cr_expect(why != NULL && strstr(why, what), "refused for '%s', not '%s'", what,
		  why ? why : "(nothing)");
}

static void expect_same(struct ident_cache *st, pid_t tid, const struct ident *id)
{
	const char *why = NULL;

	cr_expect(zero(int, ident_match(st, tid, id, false, &why)), "refused: %s", why ? why : "?");
}

Test(ident, read_is_what_the_kernel_says)
{
	struct __user_cap_data_struct d[2];
	struct ident_cache st;
	struct ident id;
	gid_t groups[256];
	char text[4096] = "";
	size_t off = 0;
	uint32_t r[3];
	struct stat ns, exe;
	int n;

	read_self(&st, &id);
	cr_expect(eq(int, id.c.tgid, getpid()));
	cr_assert(zero(int, getresuid(&r[0], &r[1], &r[2])));
	cr_expect(zero(int, memcmp(id.c.uid, r, sizeof(r))), "uid r/e/s");
	cr_assert(zero(int, getresgid(&r[0], &r[1], &r[2])));
	cr_expect(zero(int, memcmp(id.c.gid, r, sizeof(r))), "gid r/e/s");
	n = getgroups(256, groups);
	for (int i = 0; i < n; i++)
		off += snprintf(text + off, sizeof(text) - off, "%s%u", i ? " " : "", groups[i]);
	cr_expect(eq(u32, id.c.groups_len, off));
	cr_expect(zero(int, memcmp(id.groups, text, off)), "groups");
	caps_get(d);
	cr_expect(eq(u64, id.c.cap_eff, (uint64_t)d[1].effective << 32 | d[0].effective));
	cr_expect(eq(u64, id.c.cap_prm, (uint64_t)d[1].permitted << 32 | d[0].permitted));
	cr_expect(eq(u64, id.c.cap_inh, (uint64_t)d[1].inheritable << 32 | d[0].inheritable));
	cr_expect(eq(int, (int)(id.c.cap_bnd >> CAP_SYS_RAWIO & 1),
		     prctl(PR_CAPBSET_READ, CAP_SYS_RAWIO, 0, 0, 0)));
	cr_assert(zero(int, stat("/proc/self/ns/user", &ns)));
	cr_expect(eq(u64, id.userns, ns.st_ino));
	cr_assert(zero(int, stat("/proc/self/exe", &exe)));
	cr_expect(eq(u64, id.exe_ino, exe.st_ino));
	cr_expect(eq(u64, id.exe_dev, exe.st_dev));
	cr_expect(ge(int, id.pidfd, 0));
	expect_same(&st, gettid(), &id);
	expect_same(&st, gettid(), &id); /* again, through the kept descriptors */
	ident_fini(&id);
	ident_cache_fini(&st);
}

static void *match_from_thread(void *arg)
{
	struct ident_cache st;

	ident_cache_init(&st);
	expect_same(&st, gettid(), arg);
	ident_cache_fini(&st);
	return NULL;
}

Test(ident, another_thread_of_the_process_matches)
{
	struct ident_cache st;
	struct ident id;
	pthread_t t;

	read_self(&st, &id);
	cr_assert(zero(int, pthread_create(&t, NULL, match_from_thread, &id)));
	pthread_join(t, NULL);
	ident_fini(&id);
	ident_cache_fini(&st);
}

/* A child that waits on a pipe; *wfd ends it. */
static pid_t child_waiting(int *wfd)
{
	int p[2];
	char c;
	pid_t pid;

	cr_assert(zero(int, pipe(p)));
	pid = fork();
	cr_assert(ge(int, pid, 0));
	if (!pid) {
		close(p[1]);
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

static void end_child(pid_t pid, int wfd)
{
	close(wfd);
	waitpid(pid, NULL, 0);
}

Test(ident, a_forked_child_is_another_process)
{
	const char *why;
	struct ident_cache st;
	struct ident id;
	int wfd;
	pid_t child;

	read_self(&st, &id);
	child = child_waiting(&wfd);
	expect_refused(&st, child, &id, "another process");
	cr_expect(zero(int, ident_match(&st, child, &id, true, &why)),
		  "--shared-queue's files: the same credentials in any process");
	end_child(child, wfd);
	ident_fini(&id);
	ident_cache_fini(&st);
}

Test(ident, groups_past_the_64th_are_compared)
{
	static gid_t groups[1000];
	struct ident_cache st;
	struct ident id;

	unit_need_root("needs root: setgroups()");
	for (unsigned i = 0; i < 1000; i++)
		groups[i] = 10000000 + i;
	cr_assert(zero(int, (int)syscall(SYS_setgroups, 1000, groups)));
	read_self(&st, &id);
	cr_expect(gt(u32, id.c.groups_len, 8192), "a status file over 8 KiB read whole");
	expect_same(&st, gettid(), &id);
	groups[900] = 7;
	cr_assert(zero(int, (int)syscall(SYS_setgroups, 1000, groups)));
	expect_refused(&st, gettid(), &id, "supplementary groups");
	ident_fini(&id);
	ident_cache_fini(&st);
}

Test(ident, a_changed_capability_set_is_refused)
{
	struct __user_cap_data_struct d[2];
	struct ident_cache st;
	struct ident id;

	unit_need_root("needs root: capset() and PR_CAPBSET_DROP");
	read_self(&st, &id);
	caps_get(d);
	d[0].inheritable ^= 1u << CAP_CHOWN;
	caps_set(d);
	expect_refused(&st, gettid(), &id, "capability sets");
	ident_fini(&id);
	read_self(&st, &id);
	cr_assert(zero(int, prctl(PR_CAPBSET_DROP, CAP_MKNOD, 0, 0, 0)));
	expect_refused(&st, gettid(), &id, "capability sets");
	ident_fini(&id);
	ident_cache_fini(&st);
}

Test(ident, no_new_privs_is_refused)
{
	struct ident_cache st;
	struct ident id;

	read_self(&st, &id);
	cr_assert(zero(int, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)));
	expect_refused(&st, gettid(), &id, "no_new_privs");
	ident_fini(&id);
	ident_cache_fini(&st);
}

/* The clone(CLONE_VM) process: it keeps no end of the exec's pipe open (*arg). */
static int sleep_sharing(void *arg)
{
	close(*(int *)arg);
	for (;;)
		pause();
	return 0;
}

/*
 * A child of the same uid and capabilities that runs /bin/cat when told:
 * only its program changes.  With keep, it first makes a process with
 * clone(CLONE_VM) and no CLONE_THREAD, which keeps its old address space
 * alive past the exec.
 */
struct exec_child {
	pid_t pid, kept;
	int go, exec_done, kept_pipe;
};

static void exec_child_start(struct exec_child *e, bool keep)
{
	static char stack[64 * 1024];
	int go[2], exec_done[2], kept_pipe[2];
	pid_t kept;
	char c;

	cr_assert(zero(int, pipe(go)));
	cr_assert(zero(int, pipe2(exec_done, O_CLOEXEC)));
	cr_assert(zero(int, pipe(kept_pipe)));
	e->pid = fork();
	cr_assert(ge(int, e->pid, 0));
	if (!e->pid) {
		close(go[1]);
		close(exec_done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		kept = keep ? clone(sleep_sharing, stack + sizeof(stack), CLONE_VM | SIGCHLD,
				    &exec_done[1])
			    : 0;
		if (write(kept_pipe[1], &kept, sizeof(kept)) != sizeof(kept))
			_exit(1);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(1);
	}
	close(go[0]);
	close(exec_done[1]);
	close(kept_pipe[1]);
	*e = (struct exec_child){ .pid = e->pid,
				  .kept = 0,
				  .go = go[1],
				  .exec_done = exec_done[0],
				  .kept_pipe = kept_pipe[0] };
}

/* Tell e's child to exec, and wait until it has. */
static void exec_child_exec(struct exec_child *e, bool keep)
{
	char c;

	cr_assert(eq(int, (int)write(e->go, "x", 1), 1));
	cr_assert(
		eq(int, (int)read(e->kept_pipe, &e->kept, sizeof(e->kept)), (int)sizeof(e->kept)));
	if (keep)
		cr_assert(gt(int, e->kept, 0), "clone(CLONE_VM)");
	cr_assert(zero(int, (int)read(e->exec_done, &c, 1)), "EOF: the child has exec'd");
}

static void exec_child_end(struct exec_child *e)
{
	close(e->go); /* cat's stdin is not this pipe: end it */
	close(e->exec_done);
	close(e->kept_pipe);
	if (e->kept > 0) {
		kill(e->kept, SIGKILL);
		waitpid(e->kept, NULL, 0);
	}
	kill(e->pid, SIGKILL);
	waitpid(e->pid, NULL, 0);
}

/* e started, read into id by st, and found the same on two looks. */
static void exec_child_seen(struct exec_child *e, bool keep, struct ident_cache *st,
			    struct ident *id)
{
	exec_child_start(e, keep);
	ident_cache_init(st);
	cr_assert(zero(int, ident_read(st, e->pid, id)));
	expect_same(st, e->pid, id);
	expect_same(st, e->pid, id);
}

Test(ident, a_new_program_is_refused)
{
	struct ident_cache st;
	struct ident id;
	struct exec_child e;

	exec_child_seen(&e, false, &st, &id);
	/* the program matched as read after its address space's descriptor was
	 * opened: from now on that descriptor is probed instead, and an execve
	 * is seen all the same */
	cr_assert(ge(int, st.mm, 0), "the child's /proc/TID/pagemap kept");
	cr_assert(st.mm_matched, "its program matched: probed from now on");
	expect_same(&st, e.pid, &id);
	exec_child_exec(&e, false);
	expect_refused(&st, e.pid, &id, "a new program");
	exec_child_end(&e);
	ident_fini(&id);
	ident_cache_fini(&st);
}

/*
 * The same, with the child's address space kept alive past its exec: the
 * pagemap descriptor of the matched address space still reads, and the new
 * program is refused by its layout (address-space randomisation).
 */
Test(ident, a_new_program_is_refused_while_its_old_address_space_lives_on)
{
	struct ident_cache st;
	struct ident id;
	struct exec_child e;

	exec_child_seen(&e, true, &st, &id);
	cr_assert(st.mm_matched, "its program matched: probed from now on");
	exec_child_exec(&e, true);
	expect_refused(&st, e.pid, &id, "a new program");
	exec_child_end(&e);
	ident_fini(&id);
	ident_cache_fini(&st);
}

static void drop_effective(unsigned cap)
{
	struct __user_cap_data_struct d[2];

	caps_get(d);
	d[cap / 32].effective &= ~(1u << (cap % 32));
	caps_set(d);
}

Test(ident, capable_is_the_effective_set_in_the_initial_user_namespace)
{
	struct __user_cap_data_struct d[2];

	bool root;

	unit_need_root("needs root: CAP_SYS_RAWIO in the effective set");
	caps_get(d);
	root = (d[0].effective >> CAP_SYS_RAWIO & 1) == 1;
	cr_assert(root, "the unit tests run as root (CapEff %08x)", d[0].effective);
	cr_expect(ident_capable(gettid(), CAP_SYS_RAWIO));
	drop_effective(CAP_SYS_RAWIO);
	cr_expect(not(ident_capable(gettid(), CAP_SYS_RAWIO)), "dropped from CapEff");
	cr_expect(not(ident_capable(0, CAP_SYS_RAWIO)), "a caller we cannot see");
	cr_expect(not(ident_capable(0x3fffffff, CAP_SYS_RAWIO)), "a thread that is not");
}

Test(ident, a_user_namespace_has_no_capabilities_here)
{
	struct ident_cache st;
	struct ident id;
	int go[2], ready[2];
	char c;
	pid_t child;

	cr_assert(zero(int, pipe(go)));
	cr_assert(zero(int, pipe(ready)));
	read_self(&st, &id);
	child = fork();
	cr_assert(ge(int, child, 0));
	if (!child) {
		close(go[1]);
		/* full CapEff in its own namespace, as `unshare -U` shows */
		int ok = unshare(CLONE_NEWUSER) == 0;

		if (write(ready[1], ok ? "y" : "n", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	cr_assert(eq(int, (int)read(ready[0], &c, 1), 1));
	cr_assert(eq(chr, c, 'y'), "unshare(CLONE_NEWUSER) failed in the child");
	cr_expect(not(ident_capable(child, CAP_SYS_RAWIO)));
	cr_expect(not(ident_capable(child, CAP_SYS_ADMIN)));
	expect_refused(&st, child, &id, "another process");
	close(go[1]);
	waitpid(child, NULL, 0);
	ident_fini(&id);
	ident_cache_fini(&st);
}

static void *report_tid(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

Test(ident, a_thread_gone_cannot_be_read)
{
	struct ident_cache st;
	struct ident id;
	pthread_t t;
	pid_t tid = 0;

	cr_assert(zero(int, pthread_create(&t, NULL, report_tid, &tid)));
	pthread_join(t, NULL);
	ident_cache_init(&st);
	cr_expect(lt(int, ident_read(&st, tid, &id), 0));
	ident_cache_fini(&st);
}

/*
 * The opener's process gone and its number taken by a thread in the same
 * tgid (here: the caller's own, standing in for a recycled pid): refused
 * the first time the caller's /proc/TID is read, and once its thread was
 * seen in the live process, still accepted only through the same /proc/TID.
 */
Test(ident, a_process_gone_is_another_process)
{
	struct ident_cache st;
	struct ident id;
	pid_t child;
	int dead;

	read_self(&st, &id);
	expect_same(&st, gettid(), &id);
	child = fork();
	cr_assert(ge(int, child, 0));
	if (!child)
		_exit(0);
	dead = (int)syscall(SYS_pidfd_open, child, 0);
	cr_assert(ge(int, dead, 0));
	waitpid(child, NULL, 0);
	close(id.pidfd);
	id.pidfd = dead;
	/* seen alive through st's /proc/TID: still this thread */
	expect_same(&st, gettid(), &id);
	ident_cache_fini(&st);
	ident_cache_init(&st);
	expect_refused(&st, gettid(), &id, "another process");
	expect_refused(&st, gettid(), &id, "another process");
	ident_fini(&id);
	ident_cache_fini(&st);
}
