// SPDX-License-Identifier: GPL-2.0-only
/*
 * peers.c: one witness for every daemon.  Pipes stand in for the BPF maps
 * and links (descriptors are descriptors to SCM_RIGHTS); the abstract
 * socket, the root check and the hand-over between holders are real.  That
 * the daemons share the witness's programs in the kernel is the security
 * suite's (tests/vm/security.sh, section 13).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peers.h"
#include "root.h"

TestSuite(peers, .timeout = 20);

static int fds[PEER_FDS], ends[PEER_FDS];

/* A name of this test's own: no daemon's, no other test's. */
static uint64_t test_key(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return peers_key(PEERS_KEY_START, &t, sizeof(t)) ^ (uint64_t)getpid();
}

static void make_fds(void)
{
	for (int i = 0; i < PEER_FDS; i++) {
		int p[2];

		cr_assert(eq(int, pipe(p), 0));
		fds[i] = p[0];
		ends[i] = p[1];
	}
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void assert_ours(const int got[PEER_FDS])
{
	for (int i = 0; i < PEER_FDS; i++) {
		cr_assert(same_file(got[i], fds[i]), "descriptor %d is not the holder's", i);
		cr_assert(got[i] != fds[i]);
	}
}

static void close_all(const int got[PEER_FDS])
{
	for (int i = 0; i < PEER_FDS; i++)
		close(got[i]);
}

/* peers_take() of n until it answers (a holder taking the name): its result. */
static int take_within_n(uint64_t key, size_t n, int got[PEER_FDS], int *conn, int ms)
{
	char why[200];
	int err;

	while ((err = peers_take(key, n, got, conn, why, sizeof(why))) && ms > 0) {
		usleep(10000);
		ms -= 10;
	}
	return err;
}

static int take_within(uint64_t key, int got[PEER_FDS], int *conn, int ms)
{
	return take_within_n(key, PEER_FDS, got, conn, ms);
}

/* The descriptors this process has open on fd's file (a pipe's: both ends). */
static int copies(int fd)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) &&
		    same_file(atoi(e->d_name), fd))
			n++;
	closedir(d);
	return n;
}
Test(peers, no_holder_no_descriptors)
{
	int got[PEER_FDS], conn = 7;
	char why[200];

	cr_assert(eq(int, peers_take(test_key(), PEER_FDS, got, &conn, why, sizeof(why)),
		     -ECONNREFUSED));
	cr_assert(eq(int, conn, -1));
}

Test(peers, a_holder_hands_out_its_descriptors)
{
	uint64_t key = test_key();
	struct peers *a;
	int got[PEER_FDS], conn;

	unit_need_root("a holder answers only root");
	make_fds();
	cr_assert(eq(int, peers_hold(key, PEER_FDS, fds, -1, &a), 0));
	cr_assert(eq(int, take_within(key, got, &conn, 2000), 0));
	assert_ours(got);
	cr_assert(conn >= 0);
	close_all(got);
	close(conn);
	peers_stop(a);
}

/*
 * A gate of fewer descriptors (the LSM gate's five): a taker that asks for
 * as many gets them; one that asks for another count gets -EPROTO, and
 * none of them is left open in it.
 */
Test(peers, a_hand_over_of_another_count_is_refused)
{
	uint64_t key = test_key();
	struct peers *a;
	int got[PEER_FDS], conn, before[5];
	char why[200];

	unit_need_root("a holder answers only root");
	make_fds();
	cr_assert(eq(int, peers_hold(key, 5, fds, -1, &a), 0));
	cr_assert(eq(int, take_within_n(key, 5, got, &conn, 2000), 0));
	for (int i = 0; i < 5; i++)
		cr_assert(same_file(got[i], fds[i]), "descriptor %d is not the holder's", i);
	for (int i = 0; i < 5; i++)
		close(got[i]);
	close(conn);
	for (int i = 0; i < 5; i++)
		before[i] = copies(fds[i]);
	cr_assert(eq(int, peers_take(key, PEER_FDS, got, &conn, why, sizeof(why)), -EPROTO));
	cr_assert(eq(int, conn, -1));
	cr_assert(strstr(why, "another count of descriptors") != NULL, "why: %s", why);
	for (int i = 0; i < 5; i++)
		cr_assert(eq(int, copies(fds[i]), before[i]), "descriptor %d kept by the taker", i);
	peers_stop(a);
}

/* The first holder goes: a watcher takes the name, and hands out the same files. */
Test(peers, a_watcher_takes_over)
{
	uint64_t key = test_key();
	struct peers *a, *b;
	int got_b[PEER_FDS], got_c[PEER_FDS], conn_b, conn_c;

	unit_need_root("a holder answers only root");
	make_fds();
	cr_assert(eq(int, peers_hold(key, PEER_FDS, fds, -1, &a), 0));
	cr_assert(eq(int, take_within(key, got_b, &conn_b, 2000), 0));
	cr_assert(eq(int, peers_hold(key, PEER_FDS, got_b, conn_b, &b), 0));
	peers_stop(a);
	cr_assert(eq(int, take_within(key, got_c, &conn_c, 3000), 0), "nobody took the name");
	assert_ours(got_c);
	close_all(got_c);
	close(conn_c);
	peers_stop(b);
	close_all(got_b);
}

/* A user other than root gets nothing, and root takes nothing from one. */
Test(peers, only_root_to_root)
{
	uint64_t key = test_key();
	struct peers *a;
	int got[PEER_FDS], conn, status, go[2];
	char why[200], c;
	pid_t pid;

	unit_need_root("the test changes users");
	make_fds();
	cr_assert(eq(int, peers_hold(key, PEER_FDS, fds, -1, &a), 0));
	usleep(100000); /* the thread has the name */
	pid = fork();
	if (pid == 0)
		_exit(setuid(65534) == 0 &&
				      peers_take(key, PEER_FDS, got, &conn, why, sizeof(why)) != 0
			      ? 0
			      : 1);
	cr_assert(eq(int, waitpid(pid, &status, 0), pid));
	cr_assert(eq(int, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0),
		  "nobody got root's descriptors");
	peers_stop(a);

	key = test_key();
	cr_assert(eq(int, pipe(go), 0));
	pid = fork();
	if (pid == 0) {
		struct peers *p;

		if (setuid(65534) || peers_hold(key, PEER_FDS, fds, -1, &p) ||
		    write(go[1], "", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert(eq(int, read(go[0], &c, 1), 1));
	usleep(100000);
	cr_assert(eq(int, peers_take(key, PEER_FDS, got, &conn, why, sizeof(why)), -EPERM));
	cr_assert(strstr(why, "other than root") != NULL, "%s", why);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}
