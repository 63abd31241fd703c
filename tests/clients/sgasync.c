// SPDX-License-Identifier: GPL-2.0-only
/*
 * sgasync: clients of the asynchronous interface (write() a header, read()
 * the completion) for the integration suite.  DEV may be fd:N for an
 * inherited descriptor.  Each command prints one line and exits 0 on success.
 *
 *   sgasync isolate DEV N [tur]   N v3 commands (READs, or TEST UNIT READYs),
 *                                 pack_ids shared with other processes; every
 *                                 reply must be our own
 *   sgasync v4-array DEV COUNT    COUNT v4 READs in one write(), read back in
 *                                 reads of 1, 3 and 16 headers, data checked
 *                                 against SG_IO on the same descriptor
 *   sgasync orphan DEV N          write N commands and exit without reading
 *   sgasync hold DEV N            write N commands, say "held N, pid P", then wait,
 *                                 reading none, until killed (the live view's)
 *   sgasync fork DEV              a forked child's write(): EPERM, as sg
 *   sgasync write-errno DEV       one v3 write; prints its errno or "ok"
 *   sgasync nonblock DEV          read with nothing done: EAGAIN; poll: POLLOUT only
 *   sgasync read-intr DEV MS      a blocking read with nothing to read, SIGALRM
 *                                 after MS ms: must end with EINTR
 *   sgasync read-block DEV        a blocking read with nothing to read (to be killed)
 *   sgasync keep-orphan DEV MS K  SG_SET_KEEP_ORPHAN K, a SG_IO READ interrupted
 *                                 by SIGALRM after MS ms, then what read() finds
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
#include <poll.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define BLOCK	  512
#define WINDOW	  16 /* sg's queue depth */
#define MAX_ARRAY 256

static int fd;

static void v3_read(struct sg_io_hdr *h, uint8_t *cdb, uint8_t *buf, uint32_t lba)
{
	v3_read10(h, cdb, buf, BLOCK, lba, 20000);
}

/* Replies carry our pid in usr_ptr: another process's reply is a failure. */
static int isolate(long n, bool tur)
{
	static uint8_t cdb[WINDOW][10], buf[WINDOW][BLOCK];
	uint64_t me = getpid();
	char *seen = calloc(n, 1);
	long sent = 0, got = 0;
	struct sg_io_hdr h;

	if (!seen)
		die("calloc");
	/* ISO_GO=FILE: start only once FILE exists, so that clients overlap */
	if (getenv("ISO_GO")) {
		printf("waiting for %s\n", getenv("ISO_GO"));
		fflush(stdout);
		while (access(getenv("ISO_GO"), F_OK) != 0)
			usleep(1000);
	}
	while (got < n) {
		while (sent < n && sent - got < WINDOW) {
			unsigned slot = sent % WINDOW;

			v3_read(&h, cdb[slot], buf[slot], sent % 1000);
			if (tur) {
				memset(cdb[slot], 0, 6); /* TEST UNIT READY: no data */
				h.cmd_len = 6;
				h.dxfer_direction = SG_DXFER_NONE;
				h.dxferp = NULL;
				h.dxfer_len = 0;
			}
			h.pack_id = sent % 100; /* the same pack_ids as everyone else */
			h.usr_ptr = (void *)(uintptr_t)(me << 32 | (uint64_t)sent);
			if (write(fd, &h, sizeof(h)) != sizeof(h)) {
				if (errno == EDOM)
					break; /* a queue shared with others is full: read */
				die("write");
			}
			sent++;
		}
		if (read(fd, &h, sizeof(h)) != sizeof(h))
			die("read");
		uint64_t tag = (uintptr_t)h.usr_ptr;
		long i = tag & 0xffffffff;

		if (tag >> 32 != me || i >= n || seen[i] || h.pack_id != i % 100 || h.status) {
			printf("not ours: reply %ld of pid %llu (pack_id %d, status %d) read by "
			       "%llu\n",
			       i, (unsigned long long)(tag >> 32), h.pack_id, h.status,
			       (unsigned long long)me);
			return 1;
		}
		seen[i] = 1;
		got++;
	}
	printf("ok: %ld replies, all ours\n", n);
	return 0;
}

static void v4_read(struct sg_io_v4 *h, uint8_t *cdb, uint8_t *buf, uint32_t lba)
{
	v4_read10(h, cdb, buf, BLOCK, lba, 20000);
	h->usr_ptr = lba;
}

static int v4_array(int count)
{
	static struct sg_io_v4 hdrs[MAX_ARRAY], back[16];
	static uint8_t cdb[MAX_ARRAY][10], buf[MAX_ARRAY][BLOCK], ref[BLOCK];
	int depth = count > WINDOW ? count : WINDOW, got = 0, batch[] = { 1, 3, 16 }, k = 0;

	if (count < 1 || count > MAX_ARRAY)
		die("v4-array: COUNT 1..256");
	if (ioctl(fd, SG_SET_COMMAND_Q, &depth) < 0)
		die("SG_SET_COMMAND_Q");
	for (int i = 0; i < count; i++)
		v4_read(&hdrs[i], cdb[i], buf[i], 100 + i);
	if (write(fd, hdrs, count * sizeof(hdrs[0])) != (ssize_t)(count * sizeof(hdrs[0])))
		die("write of the array");
	while (got < count) {
		int want = batch[k++ % 3];
		ssize_t n = read(fd, back, want * sizeof(back[0]));

		if (n <= 0 || n % sizeof(back[0]))
			die("read");
		for (int j = 0; j < n / (ssize_t)sizeof(back[0]); j++, got++) {
			unsigned lba = back[j].usr_ptr;
			struct sg_io_hdr h;
			uint8_t c[10];

			/* SG_IO on the same descriptor, between the asynchronous reads */
			v3_read(&h, c, ref, lba);
			if (ioctl(fd, SG_IO, &h) < 0 || h.status)
				die("SG_IO");
			if (back[j].device_status || memcmp(ref, buf[lba - 100], BLOCK)) {
				printf("FAIL: LBA %u: status %u, data differs from SG_IO's\n", lba,
				       back[j].device_status);
				return 1;
			}
		}
	}
	printf("ok: %d v4 headers in one write, read back and checked\n", count);
	return 0;
}

static int orphan(int n)
{
	static uint8_t cdb[WINDOW][10], buf[WINDOW][BLOCK];
	struct sg_io_hdr h;

	for (int i = 0; i < n && i < WINDOW; i++) {
		v3_read(&h, cdb[i], buf[i], i);
		if (write(fd, &h, sizeof(h)) != sizeof(h))
			die("write");
	}
	return 0; /* exit with the commands in flight or unread */
}

static int hold(int n)
{
	static uint8_t cdb[WINDOW][10], buf[WINDOW][BLOCK];
	struct sg_io_hdr h;

	for (int i = 0; i < n && i < WINDOW; i++) {
		v3_read(&h, cdb[i], buf[i], i);
		h.timeout = 120000; /* the suite slows the device down */
		if (write(fd, &h, sizeof(h)) != sizeof(h))
			die("write");
	}
	printf("held %d, pid %d\n", n < WINDOW ? n : WINDOW, (int)getpid());
	fflush(stdout);
	while (pause() < 0)
		; /* until a signal ends the process */
	return 1;
}

/*
 * A forked child has credentials of its own, so the kernel's sg refuses
 * its write() on the parent's file (sg_check_file_access()): so must the
 * node.  Prints the child's errno; 0 if it was EPERM.
 */
static int fork_writer(void)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sg_io_hdr h;
	pid_t child = fork();
	int status;

	if (child < 0)
		die("fork");
	if (child == 0) {
		v3_read(&h, cdb, buf, 7);
		h.pack_id = 77;
		if (write(fd, &h, sizeof(h)) == sizeof(h))
			_exit(0);
		_exit(errno == EPERM ? 1 : 2);
	}
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status))
		die("child");
	printf("a forked child's write(): %s\n", WEXITSTATUS(status) == 0   ? "taken"
						 : WEXITSTATUS(status) == 1 ? "EPERM"
									    : "another errno");
	return WEXITSTATUS(status) != 1;
}

static int write_errno(void)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sg_io_hdr h;

	v3_read(&h, cdb, buf, 0);
	if (write(fd, &h, sizeof(h)) < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 0;
	}
	printf("ok\n");
	return 0;
}

static int nonblock(void)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	struct sg_io_hdr h;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	printf("read: %s\n", read(fd, &h, sizeof(h)) < 0 ? strerrorname_np(errno) : "data");
	if (poll(&p, 1, 0) < 0)
		die("poll");
	printf("poll:%s%s%s%s\n", p.revents & POLLIN ? " POLLIN" : "",
	       p.revents & POLLOUT ? " POLLOUT" : "", p.revents & POLLHUP ? " POLLHUP" : "",
	       p.revents & POLLERR ? " POLLERR" : "");
	return 0;
}

/*
 * The device removed under an open file, all by its opener (only it may
 * write() the file, as on sg): open, say "opened", wait for a line on
 * stdin (the device is removed meanwhile), write (the command that finds
 * it gone), poll until POLLHUP (at most 5 s), write again.
 */
static int gone(void)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	char line[16];

	printf("opened\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("stdin");
	write_errno();
	for (int i = 0; i < 50 && !(p.revents & POLLHUP); i++)
		if (poll(&p, 1, 100) < 0)
			die("poll");
	nonblock();
	return write_errno();
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int read_intr(long ms)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value.tv_usec = ms * 1000 };
	struct timespec t0, t1;
	struct sg_io_hdr h;
	ssize_t r;

	sigaction(SIGALRM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setitimer(ITIMER_REAL, &it, NULL);
	r = read(fd, &h, sizeof(h));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s after %ld ms\n", r < 0 ? strerrorname_np(errno) : "data",
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	return r < 0 && errno == EINTR ? 0 : 1;
}

/* What sg does with an interrupted SG_IO: dropped, or read() later (K = 1). */
static int keep_orphan(long ms, int keep)
{
	static uint8_t cdb[10], buf[BLOCK];
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value.tv_usec = ms * 1000 };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sg_io_hdr h;
	unsigned sum = 0;
	int r;

	if (ioctl(fd, SG_SET_KEEP_ORPHAN, &keep) < 0)
		die("SG_SET_KEEP_ORPHAN");
	sigaction(SIGALRM, &sa, NULL);
	v3_read(&h, cdb, buf, 3);
	h.pack_id = 42;
	setitimer(ITIMER_REAL, &it, NULL);
	r = ioctl(fd, SG_IO, &h);
	printf("SG_IO: %s; ", r < 0 ? strerrorname_np(errno) : "done");
	if (r == 0)
		return 1; /* the device was quicker than the signal */
	r = poll(&p, 1, 5000);
	printf("poll: %s; ", r > 0 && (p.revents & POLLIN) ? "POLLIN" : "nothing");
	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	fcntl(fd, F_SETFL, O_NONBLOCK);
	r = read(fd, &h, sizeof(h));
	if (r < 0) {
		printf("read: %s\n", strerrorname_np(errno));
		return 0;
	}
	for (int i = 0; i < BLOCK; i++)
		sum = sum * 31 + buf[i];
	printf("read: pack_id %d, status %d, resid %d, data sum %08x\n", h.pack_id, h.status,
	       h.resid, sum);
	return 0;
}

int main(int argc, char **argv)
{
	need_args(argc, 3,
		  "sgasync isolate|v4-array|orphan|hold|fork|write-errno|nonblock|gone DEV [N]");
	fd = strncmp(argv[2], "fd:", 3) ? open(argv[2], O_RDWR) : atoi(argv[2] + 3);
	if (fd < 0)
		die(argv[2]);
	if (!strcmp(argv[1], "isolate") && (argc == 4 || argc == 5))
		return isolate(strtol(argv[3], NULL, 0), argc == 5 && !strcmp(argv[4], "tur"));
	if (!strcmp(argv[1], "v4-array") && argc == 4)
		return v4_array(atoi(argv[3]));
	if (!strcmp(argv[1], "orphan") && argc == 4)
		return orphan(atoi(argv[3]));
	if (!strcmp(argv[1], "hold") && argc == 4)
		return hold(atoi(argv[3]));
	if (!strcmp(argv[1], "fork"))
		return fork_writer();
	if (!strcmp(argv[1], "write-errno"))
		return write_errno();
	if (!strcmp(argv[1], "gone"))
		return gone();
	if (!strcmp(argv[1], "nonblock"))
		return nonblock();
	if (!strcmp(argv[1], "read-intr") && argc == 4)
		return read_intr(strtol(argv[3], NULL, 0));
	if (!strcmp(argv[1], "keep-orphan") && argc == 5)
		return keep_orphan(strtol(argv[3], NULL, 0), atoi(argv[4]));
	if (!strcmp(argv[1], "read-block")) {
		struct sg_io_hdr h;

		return read(fd, &h, sizeof(h)) < 0;
	}
	fprintf(stderr, "sgasync: unknown command %s\n", argv[1]);
	return 2;
}
