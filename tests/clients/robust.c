// SPDX-License-Identifier: GPL-2.0-only
/*
 * robust: clients for tests/vm/robust.sh.  Each prints one line per result.
 *
 *   robust signal DEV CALL ACTION   a child blocked in CALL gets ACTION; prints
 *                                   what its call returned and when it ended
 *     CALL:   read   8 v3 READs written, then read() until 8 are read
 *             sgio   one v3 SG_IO READ
 *             share  32 threads each in a v3 SG_IO READ, 16 on each of two
 *                    files (the node's share of threads of one user), then
 *                    one more SG_IO READ on a third file: on the node it
 *                    waits parked for its share
 *             write  (v4) 16 READs written, a 17th waits for room; a thread
 *                    reads one completion 3 s later
 *     ACTION: stop          SIGSTOP, 2 s, SIGCONT
 *             usr1          SIGUSR1, caught (no SA_RESTART)
 *             usr1-restart  SIGUSR1, caught with SA_RESTART
 *             term-ignored  SIGTERM, ignored
 *             kill          SIGKILL
 *             stop-kill     SIGSTOP, 1 s, SIGKILL
 *             stop-usr1     SIGSTOP, 1 s, SIGUSR1 (caught), SIGCONT
 *   robust flood DEV THREADS        16 v4 READs fill the queue, then THREADS
 *                                   threads each write() 32 pages of headers;
 *                                   on each SIGUSR1 prints how many wait and
 *                                   how many were answered what; until killed
 *   robust churn DEV N SECS         N processes open DEV, write, SG_IO, and are
 *                                   killed and started again, for SECS seconds
 *
 * The device's commands must be slow (scsi_debug's delay) for the calls to
 * wait.  Exit status 0 unless the client itself failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
#include <pthread.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_FAIL_STATUS 2
#include "client.h"
#include "tasks.h"

#define BLOCK	 512
#define NCMDS	 8
#define QUEUE	 16	    /* sg's and bsg's default depth */
#define PIECE	 (32 << 12) /* the most one FUSE write carries */
#define V4_LEN	 ((int)sizeof(struct sg_io_v4))
#define V4_PIECE (PIECE / V4_LEN) /* v4 headers in a piece */

static const char *dev;

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A READ of block pack_id (sg's pack_id too). */
static void v3_read(struct sg_io_hdr *h, uint8_t *cdb, uint8_t *buf, int pack_id)
{
	v3_read10(h, cdb, buf, BLOCK, pack_id, 60000);
	h->pack_id = pack_id;
}

static void v4_read(struct sg_io_v4 *h, uint8_t *cdb, uint8_t *buf)
{
	v4_read10(h, cdb, buf, BLOCK, 0, 60000);
}

/* ---- signal: a call that waits, and a signal ---- */

static void on_usr1(int sig)
{
	(void)sig;
}

static void write_v3_reads(int fd)
{
	static uint8_t cdb[NCMDS][10], buf[NCMDS][BLOCK];
	struct sg_io_hdr h;

	for (int i = 0; i < NCMDS; i++) {
		v3_read(&h, cdb[i], buf[i], i);
		if (write(fd, &h, sizeof(h)) != sizeof(h))
			die("write");
	}
}

static int call_read(int fd)
{
	struct sg_io_hdr h;
	int got = 0;

	write_v3_reads(fd);
	while (got < NCMDS) {
		memset(&h, 0, sizeof(h));
		if (read(fd, &h, sizeof(h)) < 0) {
			printf("%d/%d read, %s", got, NCMDS, strerrorname_np(errno));
			return 0;
		}
		got++;
	}
	printf("%d/%d read", got, NCMDS);
	return 0;
}

static int call_sgio(int fd)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sg_io_hdr h;

	v3_read(&h, cdb, buf, 1);
	if (ioctl(fd, SG_IO, &h) < 0)
		printf("SG_IO %s", strerrorname_np(errno));
	else
		printf("SG_IO ok, status %d", h.status);
	return 0;
}

static void *sgio_thread(void *arg)
{
	uint8_t cdb[10], buf[BLOCK];
	struct sg_io_hdr h;
	sigset_t usr1;

	/* SIGUSR1 goes to the main thread, whose call is the one watched */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	v3_read(&h, cdb, buf, 1);
	if (ioctl(*(int *)arg, SG_IO, &h) < 0)
		perror("SG_IO (one of the 32)");
	return NULL;
}

static int call_share(int fd)
{
	static int fds[2];
	pthread_t t;

	for (int i = 0; i < 2; i++) {
		fds[i] = open(dev, O_RDWR);
		if (fds[i] < 0)
			die(dev);
		for (int j = 0; j < QUEUE; j++)
			if (pthread_create(&t, NULL, sgio_thread, &fds[i]))
				die("pthread_create");
	}
	while (threads_in_syscall(SYS_ioctl) < 2 * QUEUE)
		usleep(10000);
	return call_sgio(fd);
}

static void *read_one_later(void *arg)
{
	struct sg_io_v4 h;
	int fd = *(int *)arg;

	sleep(3);
	if (read(fd, &h, sizeof(h)) < 0)
		perror("read");
	return NULL;
}

static int call_write(int fd)
{
	static uint8_t cdb[QUEUE + 1][10], buf[QUEUE + 1][BLOCK];
	static struct sg_io_v4 h[QUEUE + 1];
	pthread_t t;

	for (int i = 0; i <= QUEUE; i++)
		v4_read(&h[i], cdb[i], buf[i]);
	if (write(fd, h, QUEUE * V4_LEN) != QUEUE * V4_LEN)
		die("write: filling the queue");
	pthread_create(&t, NULL, read_one_later, &fd);
	if (write(fd, &h[QUEUE], V4_LEN) < 0)
		printf("write %s", strerrorname_np(errno));
	else
		printf("write ok");
	return 0;
}

static void child_handlers(const char *action)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	if (!strcmp(action, "usr1-restart"))
		sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (!strcmp(action, "term-ignored"))
		signal(SIGTERM, SIG_IGN);
}

static int child_main(const char *call, const char *action)
{
	int fd = open(dev, O_RDWR);

	if (fd < 0)
		die(dev);
	child_handlers(action);
	fflush(stdout);
	if (!strcmp(call, "read"))
		call_read(fd);
	else if (!strcmp(call, "sgio"))
		call_sgio(fd);
	else if (!strcmp(call, "share"))
		call_share(fd);
	else
		call_write(fd);
	fflush(stdout);
	return 0;
}

/* Is pid's main thread asleep in system call nr? */
static bool in_syscall(pid_t pid, int nr)
{
	char path[64], text[32];
	FILE *f;
	bool in = false;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "re");
	if (f && fgets(text, sizeof(text), f))
		in = atoi(text) == nr && text[0] != 'r';
	if (f)
		fclose(f);
	return in;
}

/* Wait for pid to end, at most secs: its status, or -1 (HUNG). */
static int reap(pid_t pid, int secs)
{
	struct timespec t0;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < secs * 1000L) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	return -1;
}

static void act(pid_t pid, const char *action)
{
	if (!strcmp(action, "stop")) {
		kill(pid, SIGSTOP);
		sleep(2);
		kill(pid, SIGCONT);
	} else if (!strcmp(action, "usr1") || !strcmp(action, "usr1-restart")) {
		kill(pid, SIGUSR1);
	} else if (!strcmp(action, "term-ignored")) {
		kill(pid, SIGTERM);
	} else if (!strcmp(action, "kill")) {
		kill(pid, SIGKILL);
	} else if (!strcmp(action, "stop-kill")) {
		kill(pid, SIGSTOP);
		sleep(1);
		kill(pid, SIGKILL);
	} else if (!strcmp(action, "stop-usr1")) {
		kill(pid, SIGSTOP);
		sleep(1);
		kill(pid, SIGUSR1);
		kill(pid, SIGCONT);
	}
}

static int do_signal(const char *call, const char *action)
{
	int nr = !strcmp(call, "read") ? 0 : !strcmp(call, "write") ? 1 : 16;
	struct timespec t0;
	pid_t pid;
	int st;

	pid = fork_flushed();
	if (!pid)
		exit(child_main(call, action));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!in_syscall(pid, nr)) {
		if (ms_since(&t0) > 20000 || waitpid(pid, &st, WNOHANG) == pid) {
			printf("never waited in its call\n");
			return 1;
		}
		usleep(10000);
	}
	usleep(300000); /* asleep in the call, and its request with the daemon */
	act(pid, action);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = reap(pid, 30);
	if (st == -1) {
		printf("HUNG\n");
		kill(pid, SIGKILL);
		return 0;
	}
	if (WIFSIGNALED(st))
		printf("killed by %s", sigabbrev_np(WTERMSIG(st)));
	printf(" (ended %ld ms after the signal)\n", ms_since(&t0));
	return 0;
}

/* ---- flood: parked writes ---- */

static atomic_int answered_enomem, answered_other, answered_ok;

static void *flood_writer(void *arg)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sg_io_v4 *h = malloc(V4_PIECE * V4_LEN);
	int fd = *(int *)arg;
	ssize_t n;

	for (int i = 0; i < V4_PIECE; i++)
		v4_read(&h[i], cdb, buf);
	n = write(fd, h, V4_PIECE * V4_LEN);
	if (n >= 0)
		atomic_fetch_add(&answered_ok, 1);
	else if (errno == ENOMEM)
		atomic_fetch_add(&answered_enomem, 1);
	else
		atomic_fetch_add(&answered_other, 1);
	free(h);
	return NULL;
}

/* Threads of this process asleep in write(). */
static int threads_in_write(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			char path[300], text[32];
			FILE *f;

			snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
			f = fopen(path, "re");
			if (f && fgets(text, sizeof(text), f) && atoi(text) == 1 && text[0] != 'r')
				n++;
			if (f)
				fclose(f);
		}
	if (d)
		closedir(d);
	return n;
}

static int do_flood(int threads)
{
	static uint8_t cdb[QUEUE][10], buf[QUEUE][BLOCK];
	static struct sg_io_v4 h[QUEUE];
	pthread_attr_t attr;
	sigset_t usr1;
	pthread_t t;
	int fd = open(dev, O_RDWR), sig;

	if (fd < 0)
		die(dev);
	for (int i = 0; i < QUEUE; i++)
		v4_read(&h[i], cdb[i], buf[i]);
	if (write(fd, h, sizeof(h)) != sizeof(h))
		die("write: filling the queue");
	/* SIGUSR1 asks for the counts: blocked in every thread, so it ends no write */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t, &attr, flood_writer, &fd))
			die("pthread_create");
	printf("started %d writers\n", threads);
	for (;;) {
		sigwait(&usr1, &sig);
		printf("writers=%d waiting=%d ENOMEM=%d other=%d ok=%d\n", threads,
		       threads_in_write(), (int)answered_enomem, (int)answered_other,
		       (int)answered_ok);
	}
	return 0;
}

/* ---- churn: clients that come and go ---- */

static void churn_client(void)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sg_io_hdr h;

	for (;;) {
		int fd = open(dev, O_RDWR);

		if (fd < 0)
			continue;
		v3_read(&h, cdb, buf, 1);
		if (write(fd, &h, sizeof(h)) == sizeof(h) && rand() % 2)
			(void)!read(fd, &h, sizeof(h));
		v3_read(&h, cdb, buf, 2);
		ioctl(fd, SG_IO, &h);
		close(fd); /* maybe with a command still running: an orphan */
	}
}

static pid_t churn_start(void)
{
	pid_t pid = fork();

	if (!pid) {
		srand(getpid());
		churn_client();
	}
	return pid;
}

static int do_churn(int n, int secs)
{
	pid_t *kids = calloc(n, sizeof(*kids));
	struct timespec t0;
	long rounds = 0;

	for (int i = 0; i < n; i++)
		kids[i] = churn_start();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < secs * 1000L) {
		int i = rand() % n;

		usleep(20000);
		kill(kids[i], SIGKILL);
		if (reap(kids[i], 30) == -1) {
			printf("churn: a client killed did not end (HUNG)\n");
			return 1;
		}
		kids[i] = churn_start();
		rounds++;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		if (reap(kids[i], 30) == -1) {
			printf("churn: a client killed did not end (HUNG)\n");
			return 1;
		}
	printf("churn: %d clients, %ld killed and started again in %d s\n", n, rounds, secs);
	return 0;
}

int main(int argc, char **argv)
{
	need_args(argc, 3, "robust signal|flood|churn DEV ...");
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev = argv[2];
	if (!strcmp(argv[1], "signal") && argc == 5)
		return do_signal(argv[3], argv[4]);
	if (!strcmp(argv[1], "flood") && argc == 4)
		return do_flood(atoi(argv[3]));
	if (!strcmp(argv[1], "churn") && argc == 5)
		return do_churn(atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "robust: unknown command %s\n", argv[1]);
	return 2;
}
