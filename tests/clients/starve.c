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
 *   starve readers NODE FILE N [packid]
 *                                   N files of NODE, each with a read()
 *                                   waiting (a thread each), then a v3 READ
 *                                   written to each whose dxferp lies in
 *                                   FILE, mapped private and writable (a
 *                                   stalling FUSE file): each completion's
 *                                   copy stalls.  Prints "started=N" once
 *                                   every READ is written, then the answers.
 *                                   NODE may be CTL=DEV: files of the control
 *                                   node CTL, each bound to DEV.  packid:
 *                                   SG_SET_FORCE_PACK_ID, every READ written
 *                                   and completed first, then each read()
 *                                   asks for its own pack_id
 *   starve probe-rw NODE            open (NODE may be CTL=DEV), a read()
 *                                   waiting on a thread, then
 *                                   a v3 TEST UNIT READY written: its
 *                                   completion is delivered to that read():
 *                                   "probe=OK rw_ms=A" or the errno
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "tasks.h"

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

static bool by_pack_id;
static int fds[MAX_THREADS];

/* A read() of file i, asking for its own READ (pack_id i) under packid. */
static void *reader(void *arg)
{
	int i = (int)(long)arg, fd = fds[i];
	/* sg takes pack_id from a v3 header only if its second int is negative */
	struct sg_io_hdr h = { .interface_id = 'S',
			       .dxfer_direction = SG_DXFER_FROM_DEV,
			       .pack_id = by_pack_id ? i : -1 };

	atomic_fetch_add(&answers[read(fd, &h, sizeof(h)) < 0 ? errno & 255 : 0], 1);
	return NULL;
}

/* A READ(10) of block 0. */
static struct sg_io_hdr read_hdr(unsigned char *cdb, void *buf, int pack_id)
{
	struct sg_io_hdr h;

	v3_read10(&h, cdb, buf, 512, 0, 20000);
	h.pack_id = pack_id;
	return h;
}

/* A file of node, or of the control node CTL bound to DEV (node "CTL=DEV"). */
static int open_file(const char *node)
{
	const char *eq = strchr(node, '=');
	char ctl[256];
	int fd, dev;

	if (!eq)
		return open(node, O_RDWR);
	snprintf(ctl, sizeof(ctl), "%.*s", (int)(eq - node), node);
	fd = open(ctl, O_RDWR);
	dev = open(eq + 1, O_RDWR);
	if (fd < 0 || dev < 0 || ioctl(fd, BSG_IOC_ADD, dev) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (dev >= 0)
			close(dev);
		errno = e;
		return -1;
	}
	close(dev);
	return fd;
}

static int write_reads(int n, unsigned char (*cdb)[10])
{
	struct sg_io_hdr h;
	int started = 0;

	for (int i = 0; i < n; i++) {
		h = read_hdr(cdb[i], map + (i % 8) * 512, i);
		if (write(fds[i], &h, sizeof(h)) == sizeof(h))
			started++;
	}
	return started;
}

static int readers(const char *node, const char *file, int n)
{
	static unsigned char cdb[MAX_THREADS][10];
	pthread_t t[MAX_THREADS];
	int started = 0, one = 1;

	file_fd = open(file, O_RDONLY);
	if (file_fd < 0 || n < 1 || n > MAX_THREADS) {
		printf("setup=%s\n", ename(errno));
		return 1;
	}
	/* private and writable: the first write to the page reads it from FILE */
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, file_fd, 0);
	if (map == MAP_FAILED) {
		printf("mmap=%s\n", ename(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		fds[i] = open_file(node);
		if (fds[i] < 0 || (by_pack_id && ioctl(fds[i], SG_SET_FORCE_PACK_ID, &one) < 0)) {
			printf("open=%s after %d\n", ename(errno), i);
			return 1;
		}
	}
	/* by pack_id: the READs written and completed (their data not yet
	 * copied) before each read() asks for its own */
	if (by_pack_id) {
		started = write_reads(n, cdb);
		usleep(500000);
	}
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, reader, (void *)(long)i)) {
			printf("pthread_create failed after %d\n", i);
			return 1;
		}
	}
	if (!by_pack_id) {
		while (threads_in_syscall(SYS_read) < n)
			usleep(10000);
		started = write_reads(n, cdb);
	}
	printf("started=%d\n", started);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("readers:");
	for (int e = 0; e < 256; e++)
		if (atomic_load(&answers[e]))
			printf(" %s=%d", ename(e), atomic_load(&answers[e]));
	printf("\n");
	return 0;
}

/* A v3 TEST UNIT READY: tur[6] zeroed, sense[32]. */
static struct sg_io_hdr tur_hdr(unsigned char *tur, unsigned char *sense)
{
	return (struct sg_io_hdr){
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = 6,
		.cmdp = tur,
		.mx_sb_len = 32,
		.sbp = sense,
		.timeout = 20000,
	};
}

static int probe_rw(const char *node)
{
	unsigned char tur[6] = { 0 }, sense[32];
	struct sg_io_hdr h = tur_hdr(tur, sense);
	struct timespec t0;
	pthread_t t;
	int fd = open_file(node);

	if (fd < 0) {
		printf("probe=%s at=open\n", ename(errno));
		return 1;
	}
	fds[0] = fd;
	if (pthread_create(&t, NULL, reader, (void *)0L))
		return 1;
	while (threads_in_syscall(SYS_read) < 1)
		usleep(10000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (write(fd, &h, sizeof(h)) != sizeof(h)) {
		printf("probe=%s at=write\n", ename(errno));
		return 1;
	}
	pthread_join(t, NULL);
	for (int e = 0; e < 256; e++)
		if (atomic_load(&answers[e]))
			printf("probe=%s rw_ms=%.1f\n", ename(e), ms_since(&t0));
	close(fd);
	return 0;
}

static int probe(const char *node)
{
	unsigned char tur[6] = { 0 }, sense[32];
	struct sg_io_hdr h = tur_hdr(tur, sense);
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
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "readers")) {
		by_pack_id = argc == 6 && !strcmp(argv[5], "packid");
		return readers(argv[2], argv[3], atoi(argv[4]));
	}
	if (argc == 3 && !strcmp(argv[1], "probe-rw"))
		return probe_rw(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "probe"))
		return probe(argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "flood"))
		return flood(argv[2], argc == 4 && !strcmp(argv[3], "hold"));
	fprintf(stderr, "usage: starve attack sgio|timeout|write|add NODE FILE N\n"
			"       starve readers NODE FILE N [packid]\n"
			"       starve probe-rw NODE\n"
			"       starve probe NODE\n"
			"       starve flood NODE [hold]\n");
	return 2;
}
