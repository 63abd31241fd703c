// SPDX-License-Identifier: GPL-2.0-only
/*
 * sgv4io: a client of the sg v4 driver's asynchronous ioctls (SG_IOSUBMIT,
 * SG_IORECEIVE, SG_IOABORT) for the integration suite and the benchmark.
 * Each command prints one line and exits 0 on success.  DEV may be
 * CTL=PATH: a control node's file bound to PATH.
 *
 *   sgv4io probe DEV          which interface: "sg v4 ioctls" if SG_IORECEIVE
 *                             with SGV4_FLAG_IMMED says EAGAIN, else its errno
 *   sgv4io batch DEV N ROOM   N READs of 4 KiB submitted in one control object,
 *                             received in blocking arrays of ROOM, each checked
 *                             against SG_IO of the same blocks
 *   sgv4io barray DEV N       N READs in one blocking control object: the call
 *                             returns once all are done, each at its place
 *   sgv4io nonblock DEV       receives with nothing outstanding: EAGAIN, ENODATA
 *   sgv4io bypack DEV         SG_SET_FORCE_PACK_ID: received in the order asked
 *   sgv4io mix DEV            two write()n and two submitted, received half by
 *                             read() and half by SG_IORECEIVE
 *   sgv4io fork DEV           a forked child's SG_IORECEIVE is refused (EPERM,
 *                             as its read() is) and takes none of ours
 *   sgv4io abort DEV          submit, abort, receive: prints info and statuses
 *   sgv4io intr DEV MS        a blocking SG_IORECEIVE, SIGALRM after MS ms: EINTR
 *   sgv4io block DEV N        N READs submitted, then a blocking receive of a
 *                             pack_id never submitted (to be killed)
 *   sgv4io busy DEV N         N READs kept outstanding, received and submitted
 *                             again in halves (to be killed at any point)
 *   sgv4io load DEV QD BATCH SECONDS
 *                             random 4 KiB READs kept QD deep, submitted and
 *                             reaped BATCH at a time; prints IOPS
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
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

/* sg 4.0.47's uapi <scsi/sg.h> (sg3_utils' testing/uapi_sg.h) */
#define SG_IOSUBMIT		_IOWR(0x22, 0x41, struct sg_io_v4)
#define SG_IORECEIVE		_IOWR(0x22, 0x42, struct sg_io_v4)
#define SG_IOABORT		_IOW(0x22, 0x43, struct sg_io_v4)
#define SGV4_FLAG_YIELD_TAG	0x8
#define SGV4_FLAG_IMMED		0x400
#define SGV4_FLAG_MULTIPLE_REQS 0x40000
#define SG_INFO_ABORTED		0x10
#define SG_INFO_MRQ_FINI	0x20

#define BLK	 4096
#define MAX_REQS 256

static int fd;

/* One READ(10) of 4 KiB (8 blocks of 512) at 4 KiB block i, into buf. */
static struct sg_io_v4 v4_read(uint8_t *cdb, uint8_t *buf, uint8_t *sense, uint32_t i, int id)
{
	read10(cdb, i * 8, 8);
	return (struct sg_io_v4){
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
		.max_response_len = 32,
		.response = (uintptr_t)sense,
		.din_xfer_len = BLK,
		.din_xferp = (uintptr_t)buf,
		.timeout = 20000,
		.request_extra = id,
	};
}

static struct sg_io_v4 ctl(struct sg_io_v4 *reqs, unsigned n, struct sg_io_v4 *rsp, unsigned m,
			   uint32_t flags)
{
	return (struct sg_io_v4){
		.guard = 'Q',
		.flags = SGV4_FLAG_MULTIPLE_REQS | flags,
		.dout_xferp = (uintptr_t)reqs,
		.dout_xfer_len = n * sizeof(*reqs),
		.din_xferp = (uintptr_t)rsp,
		.din_xfer_len = m * sizeof(*rsp),
	};
}

/* The same blocks by SG_IO, for comparison. */
static void sg_io_read(uint32_t i, uint8_t *buf)
{
	uint8_t cdb[16], sense[32];
	struct sg_io_v4 h = v4_read(cdb, buf, sense, i, 0);

	if (ioctl(fd, SG_IO, &h) < 0)
		die("SG_IO");
	if (h.device_status || h.transport_status || h.driver_status)
		fprintf(stderr, "SG_IO status %u/%u/%u\n", h.device_status, h.transport_status,
			h.driver_status),
			exit(1);
}

static uint32_t blocks_4k(void)
{
	uint8_t cdb[10] = { 0x25 }, cap[8], sense[32];
	struct sg_io_hdr h = { .interface_id = 'S',
			       .dxfer_direction = SG_DXFER_FROM_DEV,
			       .cmd_len = 10,
			       .mx_sb_len = 32,
			       .dxfer_len = 8,
			       .dxferp = cap,
			       .cmdp = cdb,
			       .sbp = sense,
			       .timeout = 20000 };

	if (ioctl(fd, SG_IO, &h) < 0 || h.status)
		die("READ CAPACITY");
	return (((uint32_t)cap[0] << 24 | cap[1] << 16 | cap[2] << 8 | cap[3]) + 1) / 8;
}

static int probe(void)
{
	struct sg_io_v4 r = { .guard = 'Q', .flags = SGV4_FLAG_IMMED };

	if (ioctl(fd, SG_IORECEIVE, &r) == 0 || errno == EAGAIN || errno == ENODATA) {
		printf("sg v4 ioctls\n");
		return 0;
	}
	printf("no sg v4 ioctls: %s\n", strerror(errno));
	return 0;
}

static int batch(unsigned n, unsigned room)
{
	static uint8_t bufs[MAX_REQS][BLK], check[BLK], cdbs[MAX_REQS][16], sense[MAX_REQS][32];
	struct sg_io_v4 reqs[MAX_REQS], rsp[MAX_REQS], c;
	unsigned got = 0, calls = 0, seen[MAX_REQS] = { 0 };

	if (n > MAX_REQS || room > MAX_REQS || !room)
		return fprintf(stderr, "at most %d\n", MAX_REQS), 1;
	memset(bufs, 0xee, sizeof(bufs));
	for (unsigned i = 0; i < n; i++)
		reqs[i] = v4_read(cdbs[i], bufs[i], sense[i], i * 3, (int)i);
	c = ctl(reqs, n, NULL, 0, SGV4_FLAG_IMMED);
	if (ioctl(fd, SG_IOSUBMIT, &c) < 0)
		die("SG_IOSUBMIT");
	if (c.info != n || c.dout_resid)
		return fprintf(stderr, "submitted %u of %u\n", c.info, n), 1;
	while (got < n) {
		c = ctl(NULL, 0, rsp, room, 0);
		if (ioctl(fd, SG_IORECEIVE, &c) < 0)
			die("SG_IORECEIVE");
		calls++;
		for (unsigned k = 0; k < c.info; k++) {
			unsigned i = rsp[k].request_extra;

			if (i >= n || seen[i]++ || !(rsp[k].info & SG_INFO_MRQ_FINI) ||
			    rsp[k].device_status || rsp[k].din_resid)
				return fprintf(stderr, "bad completion %u (id %u)\n", k, i), 1;
			sg_io_read(i * 3, check);
			if (memcmp(check, bufs[i], BLK))
				return fprintf(stderr, "command %u: data differs\n", i), 1;
		}
		got += c.info;
		if (c.info != (n - (got - c.info) < room ? n - (got - c.info) : room))
			return fprintf(stderr, "a blocking receive returned %u\n", c.info), 1;
	}
	printf("ok: %u commands in 1 submit, %u receives of up to %u\n", n, calls, room);
	return 0;
}

static int barray(unsigned n)
{
	static uint8_t bufs[MAX_REQS][BLK], check[BLK], cdbs[MAX_REQS][16], sense[MAX_REQS][32];
	struct sg_io_v4 reqs[MAX_REQS], rsp[MAX_REQS], c;

	if (!n || n > MAX_REQS)
		return 1;
	for (unsigned i = 0; i < n; i++)
		reqs[i] = v4_read(cdbs[i], bufs[i], sense[i], i * 5, (int)i);
	c = ctl(reqs, n, rsp, n, 0);
	if (ioctl(fd, SG_IOSUBMIT, &c) < 0)
		die("SG_IOSUBMIT");
	if (c.info != n || c.dout_resid || c.din_resid)
		return fprintf(stderr, "completed %u of %u\n", c.info, n), 1;
	for (unsigned i = 0; i < n; i++) {
		sg_io_read(i * 5, check);
		if (rsp[i].request_extra != i || !(rsp[i].info & SG_INFO_MRQ_FINI) ||
		    memcmp(check, bufs[i], BLK))
			return fprintf(stderr, "request %u: wrong completion or data\n", i), 1;
	}
	printf("ok: %u commands in one blocking call, each at its place\n", n);
	return 0;
}

static int nonblock(void)
{
	struct sg_io_v4 r = { .guard = 'Q', .flags = SGV4_FLAG_IMMED }, rsp[2];
	struct sg_io_v4 c = ctl(NULL, 0, rsp, 2, SGV4_FLAG_IMMED);
	int e1, e2;

	e1 = ioctl(fd, SG_IORECEIVE, &r) < 0 ? errno : 0;
	e2 = ioctl(fd, SG_IORECEIVE, &c) < 0 ? errno : 0;
	printf("single: %s; array: %s\n", e1 ? strerror(e1) : "0", e2 ? strerror(e2) : "0");
	return 0;
}

static int bypack(void)
{
	static uint8_t bufs[3][BLK], cdbs[3][16], sense[3][32];
	static const int want[3] = { 3, 1, 2 };
	int one = 1;

	if (ioctl(fd, SG_SET_FORCE_PACK_ID, &one) < 0)
		die("SG_SET_FORCE_PACK_ID");
	for (int i = 0; i < 3; i++) {
		struct sg_io_v4 h = v4_read(cdbs[i], bufs[i], sense[i], i, i + 1);

		if (ioctl(fd, SG_IOSUBMIT, &h) < 0)
			die("SG_IOSUBMIT");
	}
	for (int i = 0; i < 3; i++) {
		struct sg_io_v4 r = { .guard = 'Q', .request_extra = want[i] };

		if (ioctl(fd, SG_IORECEIVE, &r) < 0)
			die("SG_IORECEIVE");
		if ((int)r.request_extra != want[i])
			return fprintf(stderr, "got %u, wanted %d\n", r.request_extra, want[i]), 1;
	}
	printf("ok: received 3, 1, 2 as asked\n");
	return 0;
}

static int mix(void)
{
	static uint8_t bufs[4][BLK], cdbs[4][16], sense[4][32];
	struct sg_io_v4 h[4], rd[2], rsp[2], c;
	unsigned ids = 0;

	for (int i = 0; i < 4; i++)
		h[i] = v4_read(cdbs[i], bufs[i], sense[i], i, i + 1);
	if (write(fd, &h[0], sizeof(h[0])) != sizeof(h[0]))
		die("write");
	if (ioctl(fd, SG_IOSUBMIT, &h[1]) < 0)
		die("SG_IOSUBMIT");
	if (write(fd, &h[2], sizeof(h[2])) != sizeof(h[2]))
		die("write");
	if (ioctl(fd, SG_IOSUBMIT, &h[3]) < 0)
		die("SG_IOSUBMIT");
	c = ctl(NULL, 0, rsp, 2, 0);
	if (ioctl(fd, SG_IORECEIVE, &c) < 0 || c.info != 2)
		die("SG_IORECEIVE");
	for (int k = 0; k < 2; k++) {
		if (read(fd, &rd[k], sizeof(rd[k])) != sizeof(rd[k]))
			die("read");
		ids |= 1u << rd[k].request_extra;
		ids |= 1u << rsp[k].request_extra;
	}
	if (ids != 0x1e)
		return fprintf(stderr, "ids 0x%x\n", ids), 1;
	printf("ok: 4 commands, 2 by write() and 2 by ioctl, 2 received each way\n");
	return 0;
}

static int forked(void)
{
	static uint8_t buf[BLK], cdb[16], sense[32];
	struct sg_io_v4 h = v4_read(cdb, buf, sense, 0, 7), r = { .guard = 'Q' };
	int status, child_err;
	pid_t pid;

	if (ioctl(fd, SG_IOSUBMIT, &h) < 0)
		die("SG_IOSUBMIT");
	usleep(200000); /* done by now */
	pid = fork();
	if (pid == 0) {
		r.flags = SGV4_FLAG_IMMED;
		_exit(ioctl(fd, SG_IORECEIVE, &r) < 0 ? errno : 0);
	}
	waitpid(pid, &status, 0);
	child_err = WEXITSTATUS(status);
	if (ioctl(fd, SG_IORECEIVE, &r) < 0)
		die("SG_IORECEIVE");
	printf("child: %s; parent: pack_id %u\n", child_err ? strerror(child_err) : "got one",
	       r.request_extra);
	return child_err == EPERM && r.request_extra == 7 ? 0 : 1;
}

static int aborted(void)
{
	static uint8_t bufs[2][BLK], cdbs[2][16], sense[2][32];
	struct sg_io_v4 h[2], a = { .guard = 'Q', .request_extra = 2 }, r;
	int res;

	for (int i = 0; i < 2; i++) {
		h[i] = v4_read(cdbs[i], bufs[i], sense[i], i, i + 1);
		if (ioctl(fd, SG_IOSUBMIT, &h[i]) < 0)
			die("SG_IOSUBMIT");
	}
	res = ioctl(fd, SG_IOABORT, &a) < 0 ? errno : 0;
	a.request_extra = 99;
	printf("abort: %s; abort of none: %s\n", res ? strerror(res) : "0",
	       ioctl(fd, SG_IOABORT, &a) < 0 ? strerror(errno) : "0");
	for (int i = 0; i < 2; i++) {
		r = (struct sg_io_v4){ .guard = 'Q' };
		if (ioctl(fd, SG_IORECEIVE, &r) < 0)
			die("SG_IORECEIVE");
		printf("pack_id %u: info 0x%x aborted %d host 0x%x driver 0x%x\n", r.request_extra,
		       r.info, !!(r.info & SG_INFO_ABORTED), r.transport_status, r.driver_status);
	}
	return res;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int intr(long ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };
	struct sg_io_v4 r = { .guard = 'Q' };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	if (ioctl(fd, SG_IORECEIVE, &r) == 0)
		return printf("returned a completion\n"), 1;
	printf("%s\n", strerror(errno));
	return errno == EINTR ? 0 : 1;
}

static unsigned submit_n(struct sg_io_v4 *reqs, unsigned n)
{
	static uint8_t bufs[MAX_REQS][BLK], cdbs[MAX_REQS][16], sense[MAX_REQS][32];
	struct sg_io_v4 c;

	for (unsigned i = 0; i < n; i++)
		reqs[i] = v4_read(cdbs[i], bufs[i], sense[i], i, (int)i);
	c = ctl(reqs, n, NULL, 0, SGV4_FLAG_IMMED);
	if (ioctl(fd, SG_IOSUBMIT, &c) < 0)
		die("SG_IOSUBMIT");
	return c.info;
}

/* N submitted, then a receive of a pack_id never submitted: blocked until killed. */
static int block(unsigned n)
{
	struct sg_io_v4 reqs[MAX_REQS], r = { .guard = 'Q', .request_extra = 99999 };
	int one = 1;

	if (n > MAX_REQS || ioctl(fd, SG_SET_FORCE_PACK_ID, &one) < 0)
		return 1;
	printf("submitted %u\n", submit_n(reqs, n));
	fflush(stdout);
	ioctl(fd, SG_IORECEIVE, &r);
	return 1;
}

/* N submitted, received and submitted again, until killed. */
static int busy(unsigned n)
{
	struct sg_io_v4 reqs[MAX_REQS], rsp[MAX_REQS], c;

	if (n > MAX_REQS)
		return 1;
	printf("submitted %u\n", submit_n(reqs, n));
	fflush(stdout);
	for (;;) {
		c = ctl(NULL, 0, rsp, n / 2 ? n / 2 : 1, 0);
		if (ioctl(fd, SG_IORECEIVE, &c) < 0)
			die("SG_IORECEIVE");
		submit_n(reqs, c.info);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Random 4 KiB READs: QD outstanding, BATCH submitted and reaped a call. */
static int load(unsigned qd, unsigned bat, double secs)
{
	static uint8_t bufs[MAX_REQS][BLK], cdbs[MAX_REQS][16], sense[MAX_REQS][32];
	struct sg_io_v4 reqs[MAX_REQS], rsp[MAX_REQS], c;
	unsigned free_slots[MAX_REQS], nfree = qd, out = 0, nblk = blocks_4k();
	unsigned long done = 0, submits = 0, receives = 0;
	double t0 = now(), t = t0;
	unsigned seed = 1;

	if (!qd || qd > MAX_REQS || !bat || bat > qd)
		return fprintf(stderr, "1 <= BATCH <= QD <= %d\n", MAX_REQS), 1;
	for (unsigned i = 0; i < qd; i++)
		free_slots[i] = i;
	while (t - t0 < secs || out) {
		unsigned n = 0;

		/* fill to QD, BATCH at a time, while the run lasts */
		while (t - t0 < secs && nfree && (nfree >= bat || !out)) {
			for (n = 0; n < bat && nfree; n++) {
				unsigned s = free_slots[--nfree];

				reqs[n] = v4_read(cdbs[s], bufs[s], sense[s],
						  (unsigned)rand_r(&seed) % nblk, (int)s);
			}
			c = ctl(reqs, n, NULL, 0, SGV4_FLAG_IMMED);
			if (ioctl(fd, SG_IOSUBMIT, &c) < 0 || c.info != n)
				die("SG_IOSUBMIT");
			out += n;
			submits++;
		}
		c = ctl(NULL, 0, rsp, out < bat ? out : bat, 0);
		if (ioctl(fd, SG_IORECEIVE, &c) < 0)
			die("SG_IORECEIVE");
		receives++;
		for (unsigned k = 0; k < c.info; k++) {
			if (rsp[k].device_status || rsp[k].transport_status)
				return fprintf(stderr, "a READ failed\n"), 1;
			free_slots[nfree++] = rsp[k].request_extra;
		}
		out -= c.info;
		done += c.info;
		t = now();
	}
	printf("iops=%.0f commands=%lu qd=%u batch=%u submits=%lu receives=%lu seconds=%.1f\n",
	       done / (t - t0), done, qd, bat, submits, receives, t - t0);
	return 0;
}

/*
 * DEV, or CTL=PATH: the control node CTL bound to PATH (opened read-only,
 * closed once bound), so that the same checks run through a binding.
 */
static int open_dev(const char *dev)
{
	char ctl[256];
	const char *eq = strchr(dev, '=');
	int c, d;

	if (!eq)
		c = open(dev, O_RDWR);
	else if ((size_t)(eq - dev) >= sizeof(ctl))
		c = -1, errno = ENAMETOOLONG;
	else {
		snprintf(ctl, sizeof(ctl), "%.*s", (int)(eq - dev), dev);
		c = open(ctl, O_RDWR);
		d = open(eq + 1, O_RDONLY);
		if (d < 0)
			die(eq + 1);
		if (c >= 0 && ioctl(c, 0x8900 /* BSG_IOC_ADD */, d) < 0)
			die("BSG_IOC_ADD");
		close(d);
	}
	if (c < 0)
		die(dev);
	return c;
}

int main(int argc, char **argv)
{
	need_args(argc, 3,
		  "sgv4io probe|batch|barray|nonblock|bypack|mix|fork|abort|intr|block|busy|load "
		  "DEV [ARGS]");
	fd = open_dev(argv[2]);
	if (!strcmp(argv[1], "probe"))
		return probe();
	if (!strcmp(argv[1], "batch") && argc == 5)
		return batch(atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "barray") && argc == 4)
		return barray(atoi(argv[3]));
	if (!strcmp(argv[1], "nonblock"))
		return nonblock();
	if (!strcmp(argv[1], "bypack"))
		return bypack();
	if (!strcmp(argv[1], "mix"))
		return mix();
	if (!strcmp(argv[1], "fork"))
		return forked();
	if (!strcmp(argv[1], "abort"))
		return aborted();
	if (!strcmp(argv[1], "intr") && argc == 4)
		return intr(atol(argv[3]));
	if (!strcmp(argv[1], "block") && argc == 4)
		return block(atoi(argv[3]));
	if (!strcmp(argv[1], "busy") && argc == 4)
		return busy(atoi(argv[3]));
	if (!strcmp(argv[1], "load") && argc == 6)
		return load(atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
	fprintf(stderr, "sgv4io: bad arguments\n");
	return 2;
}
