// SPDX-License-Identifier: GPL-2.0-only
/*
 * starve: clients that try to take what other clients need, and the other
 * client, for tests/vm/starve.sh.
 *
 *   starve attack MODE NODE FILE N  N threads on one open file of NODE, each
 *                                   making one call whose argument lies in
 *                                   FILE, mapped (a stalling FUSE file):
 *                                   sgio (the SG_IO header), timeout
 *                                   (SG_SET_TIMEOUT's int), write (a v3
 *                                   header's cmdp), add (BSG_IOC_ADD of a
 *                                   descriptor of FILE; NODE: a control node).
 *                                   Prints "started=N" once every thread runs,
 *                                   then each answer's count: "sgio: EFAULT=3 OK=157"
 *   starve probe NODE               open + TEST UNIT READY (v3 SG_IO):
 *                                   "probe=OK open_ms=A tur_ms=B" or the errno
 *   starve flood NODE [hold]        open NODE until an open fails:
 *                                   "opened=N errno=NAME"; with hold, keep
 *                                   them open until a signal ends it
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <scsi/sg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BSG_IOC_ADD 0x8900
#define MAX_THREADS 1024

static const char *mode;
static int node_fd, file_fd;
static char *map;
static atomic_int answers[256];

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "errno?";
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One call with its argument in the stalling mapping: 0 or the errno. */
static int call(long i)
{
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = 6,
		.cmdp = (unsigned char *)map + (i % 16) * 16,
		.timeout = 10000,
		.pack_id = (int)i,
	};

	if (!strcmp(mode, "sgio"))
		return ioctl(node_fd, SG_IO, map) < 0 ? errno : 0;
	if (!strcmp(mode, "timeout"))
		return ioctl(node_fd, SG_SET_TIMEOUT, map) < 0 ? errno : 0;
	if (!strcmp(mode, "write"))
		return write(node_fd, &h, sizeof(h)) < 0 ? errno : 0;
	return ioctl(node_fd, BSG_IOC_ADD, file_fd) < 0 ? errno : 0;
}

static void *attacker(void *arg)
{
	int e = call((long)arg);

	atomic_fetch_add(&answers[e & 255], 1);
	return NULL;
}

static int attack(const char *node, const char *file, int n)
{
	pthread_t t[MAX_THREADS];
	int started = 0;

	node_fd = open(node, O_RDWR);
	file_fd = open(file, O_RDONLY);
	if (node_fd < 0 || file_fd < 0 || n < 1 || n > MAX_THREADS) {
		printf("setup=%s\n", ename(errno));
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, file_fd, 0);
	if (map == MAP_FAILED) {
		printf("mmap=%s\n", ename(errno));
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[started], NULL, attacker, (void *)i) == 0)
			started++;
	printf("started=%d\n", started);
	fflush(stdout);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	printf("%s:", mode);
	for (int e = 0; e < 256; e++)
		if (atomic_load(&answers[e]))
			printf(" %s=%d", ename(e), atomic_load(&answers[e]));
	printf("\n");
	return 0;
}

static int probe(const char *node)
{
	unsigned char tur[6] = { 0 }, sense[32];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = sizeof(tur),
		.cmdp = tur,
		.mx_sb_len = sizeof(sense),
		.sbp = sense,
		.timeout = 20000,
	};
	struct timespec t0, t1;
	double open_ms;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(node, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		printf("probe=%s at=open\n", ename(errno));
		return 1;
	}
	open_ms = ms_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ioctl(fd, SG_IO, &h) < 0) {
		printf("probe=%s at=SG_IO\n", ename(errno));
		return 1;
	}
	printf("probe=%s open_ms=%.1f tur_ms=%.1f\n",
	       h.status || h.host_status || h.driver_status ? "CHECK" : "OK", open_ms,
	       ms_since(&t1));
	close(fd);
	return 0;
}

static int flood(const char *node, bool hold)
{
	struct rlimit rl;
	int n = 0, fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while ((fd = open(node, O_RDONLY | O_NONBLOCK)) >= 0)
		n++;
	printf("opened=%d errno=%s\n", n, ename(errno));
	fflush(stdout);
	while (hold)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "attack")) {
		mode = argv[2];
		return attack(argv[3], argv[4], atoi(argv[5]));
	}
	if (argc == 3 && !strcmp(argv[1], "probe"))
		return probe(argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "flood"))
		return flood(argv[2], argc == 4 && !strcmp(argv[3], "hold"));
	fprintf(stderr, "usage: starve attack sgio|timeout|write|add NODE FILE N\n"
			"       starve probe NODE\n"
			"       starve flood NODE [hold]\n");
	return 2;
}
