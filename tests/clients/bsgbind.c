// SPDX-License-Identifier: GPL-2.0-only
/*
 * bsgbind: a client of the control node (cuse_bsg --control), in the
 * spirit of the 2004 bsg patch's test program.  It opens the control node,
 * binds the file with BSG_IOC_ADD to a descriptor of a device, and talks
 * to the device through it.  One machine-readable line per result, which
 * tests/vm/control.sh checks:
 *
 *   bsgbind CTL unbound              read, write, ioctl and poll of a file
 *                                    not bound yet
 *   bsgbind CTL badfd N              BSG_IOC_ADD of descriptor number N
 *   bsgbind CTL bind DEV MODE        open DEV (ro, wo or rw), bind, bind
 *                                    again, close DEV, INQUIRY through the
 *                                    binding (the binding keeps its own
 *                                    reference)
 *   bsgbind CTL cmds DEV MODE        each command below by SG_IO, on DEV
 *                                    opened MODE itself (the kernel's
 *                                    answer) and through a binding to it:
 *                                    "NAME kernel=X node=Y"; exit 1 if any
 *                                    differ
 *   bsgbind CTL randread DEV N QD    N random 4 KiB READ(10)s written and
 *                                    read back QD at a time through a
 *                                    binding, each compared with the same
 *                                    READ by SG_IO on DEV itself (over 16:
 *                                    the daemon's --queue-depth)
 *   bsgbind CTL two DEV1 DEV2        two files bound to two devices: each
 *                                    reports its own device, and neither
 *                                    sees the other's completions
 *   bsgbind CTL blk DEV              the block-device ioctls passed on to a
 *                                    bound disk: "NAME kernel=V node=V"
 *   bsgbind CTL emulated DEV         SG_EMULATED_HOST on DEV and through a
 *                                    binding to it: "kernel=E:V node=E:V"
 *   bsgbind CTL hold DEV             bind, print "bound", wait for a line
 *                                    on stdin (the device is removed
 *                                    meanwhile), then INQUIRY twice and poll
 *
 * DEV may be a bsg node: SG_IO on it then goes as struct sg_io_v4.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
#include <linux/fs.h>
#include <poll.h>
#include <scsi/scsi.h>
#include <scsi/sg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cuse_bsg/control.h> /* BSG_IOC_ADD */

#define BLOCK  512u
#define RBYTES 4096u
#define MAXQD  256

static const char *ename(int e)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ 0, "OK" },	      { EPERM, "EPERM" },     { ENOENT, "ENOENT" },
		{ EIO, "EIO" },	      { ENXIO, "ENXIO" },     { EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },   { EACCES, "EACCES" },
		{ EFAULT, "EFAULT" }, { ENOTBLK, "ENOTBLK" }, { EBUSY, "EBUSY" },
		{ ENODEV, "ENODEV" }, { EINVAL, "EINVAL" },   { ENOTTY, "ENOTTY" },
		{ EROFS, "EROFS" },   { EDOM, "EDOM" },	      { ENOSYS, "ENOSYS" },
	};
	static char other[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(other, sizeof(other), "errno%d", e);
	return other;
}

static void die(const char *what)
{
	fprintf(stderr, "bsgbind: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int open_mode(const char *dev, const char *mode)
{
	int flags = !strcmp(mode, "ro") ? O_RDONLY : !strcmp(mode, "wo") ? O_WRONLY : O_RDWR;
	int fd = open(dev, flags | O_NONBLOCK);

	if (fd < 0)
		die(dev);
	return fd;
}

static bool is_bsg(const char *dev)
{
	return !strncmp(dev, "/dev/bsg/", 9);
}

/* One command by SG_IO: 0, or the errno; *status the SCSI status. */
static int sgio(int fd, bool v4, const uint8_t *cdb, unsigned cdb_len, int dir, void *buf,
		unsigned len, int *status)
{
	int ret;

	if (v4) {
		struct sg_io_v4 h = {
			.guard = 'Q',
			.request_len = cdb_len,
			.request = (uintptr_t)cdb,
			.timeout = 20000,
		};
		if (dir == SG_DXFER_FROM_DEV) {
			h.din_xfer_len = len;
			h.din_xferp = (uintptr_t)buf;
		} else if (dir == SG_DXFER_TO_DEV) {
			h.dout_xfer_len = len;
			h.dout_xferp = (uintptr_t)buf;
		}
		ret = ioctl(fd, SG_IO, &h);
		*status = h.device_status;
	} else {
		struct sg_io_hdr h = {
			.interface_id = 'S',
			.cmd_len = cdb_len,
			.cmdp = (uint8_t *)cdb,
			.dxfer_direction = dir,
			.dxferp = buf,
			.dxfer_len = len,
			.timeout = 20000,
		};
		ret = ioctl(fd, SG_IO, &h);
		*status = h.status;
	}
	return ret < 0 ? errno : 0;
}

/* Open ctl, bind it to fd: the control file, or -errno. */
static int bind_to(const char *ctl, int fd)
{
	int c = open(ctl, O_RDWR);

	if (c < 0)
		die(ctl);
	if (ioctl(c, BSG_IOC_ADD, fd) < 0) {
		int e = errno;

		close(c);
		return -e;
	}
	return c;
}

static int cmd_unbound(const char *ctl)
{
	struct sg_io_hdr h = { .interface_id = 'S' };
	struct pollfd p;
	int fd = open(ctl, O_RDWR | O_NONBLOCK), r;
	char buf[sizeof(h)];

	if (fd < 0)
		die(ctl);
	memcpy(buf, &h, sizeof(h));
	r = read(fd, buf, sizeof(buf));
	printf("read=%s\n", ename(r < 0 ? errno : 0));
	r = write(fd, buf, sizeof(buf));
	printf("write=%s\n", ename(r < 0 ? errno : 0));
	r = ioctl(fd, SG_IO, &h);
	printf("sg_io=%s\n", ename(r < 0 ? errno : 0));
	r = ioctl(fd, SG_GET_VERSION_NUM, &r);
	printf("version=%s\n", ename(r < 0 ? errno : 0));
	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLOUT };
	r = poll(&p, 1, 0);
	printf("poll=%d%s%s\n", r, p.revents & POLLERR ? " POLLERR" : "",
	       p.revents & (POLLIN | POLLOUT) ? " ready" : "");
	return 0;
}

static int cmd_badfd(const char *ctl, const char *num)
{
	int c = open(ctl, O_RDWR);

	if (c < 0)
		die(ctl);
	printf("bind=%s\n", ename(ioctl(c, BSG_IOC_ADD, atoi(num)) < 0 ? errno : 0));
	return 0;
}

static int inquiry(int fd, bool v4, char vendor[9])
{
	static const uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };
	uint8_t buf[96] = { 0 };
	int st, e = sgio(fd, v4, cdb, 6, SG_DXFER_FROM_DEV, buf, sizeof(buf), &st);

	memcpy(vendor, buf + 8, 8);
	vendor[8] = '\0';
	for (int i = 7; i >= 0 && vendor[i] == ' '; i--)
		vendor[i] = '\0';
	return e ? e : st ? EIO : 0;
}

static int cmd_bind(const char *ctl, const char *dev, const char *mode)
{
	int fd = open_mode(dev, mode), c = bind_to(ctl, fd), again;
	char vendor[9];

	printf("bind=%s\n", ename(c < 0 ? -c : 0));
	if (c < 0)
		return 0;
	again = ioctl(c, BSG_IOC_ADD, fd) < 0 ? errno : 0;
	printf("again=%s\n", ename(again));
	close(fd);
	printf("inquiry=%s", ename(inquiry(c, false, vendor)));
	printf(" vendor=%s\n", vendor);
	return 0;
}

/* What the kernel's table makes of each: read-safe, write-safe, neither. */
static const struct {
	const char *name;
	uint8_t cdb[10];
	unsigned len, data;
	int dir;
} cmds[] = {
	{ "tur", { 0x00 }, 6, 0, SG_DXFER_NONE },
	{ "inquiry", { 0x12, 0, 0, 0, 36 }, 6, 36, SG_DXFER_FROM_DEV },
	{ "read10", { 0x28, 0, 0, 0, 0, 8, 0, 0, 1 }, 10, BLOCK, SG_DXFER_FROM_DEV },
	{ "write10", { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1 }, 10, BLOCK, SG_DXFER_TO_DEV },
	{ "sync-cache", { 0x35 }, 10, 0, SG_DXFER_NONE },
	{ "senddiag", { 0x1d, 0x04 }, 6, 0, SG_DXFER_NONE }, /* default self-test */
	{ "report-luns", { 0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, 10, 256, SG_DXFER_FROM_DEV },
	{ "vendor-c0", { 0xc0 }, 6, 0, SG_DXFER_NONE },
};

static int cmd_cmds(const char *ctl, const char *dev, const char *mode)
{
	int fd = open_mode(dev, mode), c = bind_to(ctl, fd), bad = 0;
	static uint8_t buf[4096];

	if (c < 0) {
		printf("bind=%s\n", ename(-c));
		return 1;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int sk, sn;
		int k = sgio(fd, is_bsg(dev), cmds[i].cdb, cmds[i].len, cmds[i].dir, buf,
			     cmds[i].data, &sk);
		int n = sgio(c, false, cmds[i].cdb, cmds[i].len, cmds[i].dir, buf, cmds[i].data,
			     &sn);
		char ks[40], ns[40];

		snprintf(ks, sizeof(ks), "%s", k ? ename(k) : sk ? "status" : "OK");
		snprintf(ns, sizeof(ns), "%s", n ? ename(n) : sn ? "status" : "OK");
		printf("%s kernel=%s node=%s\n", cmds[i].name, ks, ns);
		bad |= strcmp(ks, ns) != 0;
	}
	return bad;
}

static void read10(uint8_t cdb[10], uint32_t lba, unsigned blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x28;
	cdb[2] = lba >> 24;
	cdb[3] = lba >> 16;
	cdb[4] = lba >> 8;
	cdb[5] = lba;
	cdb[8] = blocks;
}

static uint32_t capacity(int fd, bool v4)
{
	static const uint8_t cdb[10] = { 0x25 };
	uint8_t b[8];
	int st;

	if (sgio(fd, v4, cdb, 10, SG_DXFER_FROM_DEV, b, 8, &st) || st)
		die("READ CAPACITY");
	return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

struct slot {
	struct sg_io_hdr h;
	uint8_t cdb[10];
	uint32_t lba;
	uint8_t *buf;
};

/* Check slot s's data against the kernel's READ of the same blocks. */
static bool verify(int fd, bool v4, const struct slot *s)
{
	static uint8_t want[RBYTES];
	int st;

	if (sgio(fd, v4, s->cdb, 10, SG_DXFER_FROM_DEV, want, RBYTES, &st) || st)
		die("READ on the device");
	return !memcmp(want, s->buf, RBYTES);
}

static void submit(int c, struct slot *s, int id, uint32_t blocks)
{
	s->lba = (uint32_t)random() % (blocks - RBYTES / BLOCK);
	read10(s->cdb, s->lba, RBYTES / BLOCK);
	s->h = (struct sg_io_hdr){
		.interface_id = 'S',
		.cmd_len = 10,
		.cmdp = s->cdb,
		.dxfer_direction = SG_DXFER_FROM_DEV,
		.dxferp = s->buf,
		.dxfer_len = RBYTES,
		.timeout = 20000,
		.pack_id = id,
	};
	/* h is the first member: gcc 12 takes &s->h for its first field alone */
	if (write(c, s, sizeof(s->h)) != sizeof(s->h))
		die("write() of a READ(10)");
}

static int cmd_randread(const char *ctl, const char *dev, long n, long qd)
{
	static struct slot slots[MAXQD];
	int fd = open_mode(dev, "ro"), c, bad = 0;
	bool v4 = is_bsg(dev);
	uint32_t blocks = capacity(fd, v4);
	long sent = 0, done = 0;

	if (qd < 1 || qd > MAXQD || n < 1)
		return 2;
	c = bind_to(ctl, fd);
	if (c < 0) {
		printf("bind=%s\n", ename(-c));
		return 1;
	}
	srandom(getpid());
	for (long i = 0; i < qd; i++)
		slots[i].buf = aligned_alloc(4096, RBYTES);
	for (; sent < qd && sent < n; sent++)
		submit(c, &slots[sent], (int)sent, blocks);
	while (done < n) {
		struct sg_io_hdr r;

		if (read(c, &r, sizeof(r)) != sizeof(r))
			die("read() of a completion");
		struct slot *s = &slots[r.pack_id];

		if (r.status || r.host_status || r.driver_status || !verify(fd, v4, s))
			bad++;
		done++;
		if (sent < n)
			submit(c, s, r.pack_id, blocks), sent++;
	}
	printf("randread=%s n=%ld qd=%ld mismatched=%d\n", bad ? "FAIL" : "OK", done, qd, bad);
	return bad != 0;
}

/* The device of a file, as SCSI_IOCTL_GET_IDLUN says (sd, sg and bsg answer it). */
static void scsi_id(int fd, char *out, size_t len)
{
	int idlun[2];

	if (ioctl(fd, SCSI_IOCTL_GET_IDLUN, idlun) < 0)
		snprintf(out, len, "%s", ename(errno));
	else
		snprintf(out, len, "%08x", (unsigned)idlun[0]);
}

static int cmd_two(const char *ctl, const char *dev1, const char *dev2)
{
	int f1 = open_mode(dev1, "ro"), f2 = open_mode(dev2, "ro");
	int c1 = bind_to(ctl, f1), c2 = bind_to(ctl, f2);
	char a[64], b[64], ka[64], kb[64];
	struct slot s = { .buf = aligned_alloc(4096, RBYTES) };
	struct sg_io_hdr r;
	struct pollfd p;
	int other;

	if (c1 < 0 || c2 < 0) {
		printf("bind=%s\n", ename(c1 < 0 ? -c1 : -c2));
		return 1;
	}
	scsi_id(c1, a, sizeof(a));
	scsi_id(c2, b, sizeof(b));
	scsi_id(f1, ka, sizeof(ka));
	scsi_id(f2, kb, sizeof(kb));
	printf("first=%s device=%s\nsecond=%s device=%s\n", a, ka, b, kb);
	submit(c1, &s, 7, capacity(f1, is_bsg(dev1)));
	p = (struct pollfd){ .fd = c1, .events = POLLIN };
	if (poll(&p, 1, 20000) != 1)
		die("poll() of the first file");
	fcntl(c2, F_SETFL, O_NONBLOCK);
	other = read(c2, &r, sizeof(r)) < 0 ? errno : 0;
	printf("other-read=%s\n", ename(other));
	if (read(c1, &r, sizeof(r)) != sizeof(r))
		die("read() on the first file");
	printf("own-read=%s pack_id=%d\n", r.status ? "status" : "OK", r.pack_id);
	return 0;
}

static int cmd_blk(const char *ctl, const char *dev)
{
	static const struct {
		const char *name;
		unsigned long cmd;
	} ioctls[] = {
		{ "BLKGETSIZE64", BLKGETSIZE64 }, { "BLKSSZGET", BLKSSZGET },
		{ "BLKPBSZGET", BLKPBSZGET },	  { "BLKROGET", BLKROGET },
		{ "BLKIOMIN", BLKIOMIN },	  { "BLKGETSIZE", BLKGETSIZE },
	};
	int fd = open_mode(dev, "ro"), c = bind_to(ctl, fd), bad = 0;

	if (c < 0) {
		printf("bind=%s\n", ename(-c));
		return 1;
	}
	for (size_t i = 0; i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		uint64_t k = 0, n = 0;
		int ek = ioctl(fd, ioctls[i].cmd, &k) < 0 ? errno : 0;
		int en = ioctl(c, ioctls[i].cmd, &n) < 0 ? errno : 0;

		printf("%s kernel=%s:%llu node=%s:%llu\n", ioctls[i].name, ename(ek),
		       (unsigned long long)k, ename(en), (unsigned long long)n);
		bad |= ek != en || k != n;
	}
	return bad;
}

/* SG_EMULATED_HOST: what the descriptor's own driver says, through the binding too */
static int cmd_emulated(const char *ctl, const char *dev)
{
	int fd = open_mode(dev, "ro"), c = bind_to(ctl, fd), k = -1, n = -1, ek, en;

	if (c < 0) {
		printf("bind=%s\n", ename(-c));
		return 1;
	}
	ek = ioctl(fd, SG_EMULATED_HOST, &k) < 0 ? errno : 0;
	en = ioctl(c, SG_EMULATED_HOST, &n) < 0 ? errno : 0;
	printf("SG_EMULATED_HOST kernel=%s:%d node=%s:%d\n", ename(ek), k, ename(en), n);
	return ek != en || k != n;
}

static int cmd_hold(const char *ctl, const char *dev)
{
	int fd = open_mode(dev, "ro"), c = bind_to(ctl, fd);
	struct pollfd p;
	char vendor[9], line[16];
	int r;

	close(fd);
	if (c < 0) {
		printf("bind=%s\n", ename(-c));
		return 1;
	}
	printf("bound\n");
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	printf("inquiry=%s\n", ename(inquiry(c, false, vendor)));
	printf("inquiry=%s\n", ename(inquiry(c, false, vendor)));
	p = (struct pollfd){ .fd = c, .events = POLLIN };
	r = poll(&p, 1, 0);
	printf("poll=%d%s%s\n", r, p.revents & POLLHUP ? " POLLHUP" : "",
	       p.revents & POLLERR ? " POLLERR" : "");
	return 0;
}

int main(int argc, char **argv)
{
	const char *ctl = argc > 1 ? argv[1] : "", *what = argc > 2 ? argv[2] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(what, "unbound"))
		return cmd_unbound(ctl);
	if (argc == 4 && !strcmp(what, "badfd"))
		return cmd_badfd(ctl, argv[3]);
	if (argc == 5 && !strcmp(what, "bind"))
		return cmd_bind(ctl, argv[3], argv[4]);
	if (argc == 5 && !strcmp(what, "cmds"))
		return cmd_cmds(ctl, argv[3], argv[4]);
	if (argc == 6 && !strcmp(what, "randread"))
		return cmd_randread(ctl, argv[3], atol(argv[4]), atol(argv[5]));
	if (argc == 4 && !strcmp(what, "blk"))
		return cmd_blk(ctl, argv[3]);
	if (argc == 4 && !strcmp(what, "emulated"))
		return cmd_emulated(argv[1], argv[3]);
	if (argc == 4 && !strcmp(what, "hold"))
		return cmd_hold(ctl, argv[3]);
	if (argc == 5 && !strcmp(what, "two"))
		return cmd_two(ctl, argv[3], argv[4]);
	fprintf(stderr, "usage: see the comment at the top of tests/clients/bsgbind.c\n");
	return 2;
}
