// SPDX-License-Identifier: GPL-2.0-only
/*
 * secprobe: attack and probe clients for tests/vm/security.sh.  Each runs
 * the same way against the kernel's sg or bsg node and against the CUSE
 * node, and prints one machine-readable line per result, such as
 *
 *   ro:write10 errno=EPERM
 *   read errno=EPERM buf=intact
 *
 * which the suite compares side by side.  DEV may be fd:N for an inherited
 * descriptor, or CTL=DEV: a file of the control node CTL bound to DEV with
 * BSG_IOC_ADD.  Nothing here sleeps to order events: it waits for them
 * (poll(), a pipe, a signal); the suite bounds every run.
 *
 * With -4 first, SG_IO goes as struct sg_io_v4 (bsg takes nothing else).
 *
 *   secprobe sgio DEV ro|rw CMD...      SG_IO of each named command (tur,
 *                                       read10, write10, senddiag, vendor,
 *                                       format) on one descriptor
 *   secprobe exhaust DEV PROCS PER [CMD...]
 *                                       PROCS processes, one after the other,
 *                                       each holding up to PER read-only
 *                                       descriptors; each sends WRITE(10) on
 *                                       its last four; with every holder in
 *                                       place, CMD runs
 *   secprobe passfd DEV                 (root) opens DEV O_RDONLY and O_RDWR,
 *                                       passes both over a unix socket to a
 *                                       child that is nobody with no
 *                                       capabilities; the child sends
 *                                       WRITE(10), SEND DIAGNOSTIC, 0xc0
 *   secprobe ctx MODE DEV [PROGRAM]     write() a v3 READ(10) header, then
 *                                       read() it from a changed context:
 *                                       exec (PROGRAM, with file
 *                                       capabilities), fork, bset, capperm,
 *                                       capinh, groups, setuid; fork-write
 *                                       write()s from a forked child
 *   secprobe v4-flood DEV N LEN         one write() of N v4 READ(16) headers,
 *                                       din_xfer_len LEN each
 *   secprobe v3-big DEV LEN             one v3 write() of a LEN-byte READ(16)
 *   secprobe uffd-sgio DEV [THREADS]    SG_IO whose CDB sits in a page that
 *                                       userfaultfd never serves (from
 *                                       THREADS threads at once)
 *   secprobe uffd-write DEV             write() of a WRITE(10) header whose
 *                                       data-out sits in such a page
 *                                       (each keeps the page in a child,
 *                                       which serves it on SIGUSR1)
 *   secprobe packid-readv DEV           SG_SET_FORCE_PACK_ID: readv() asking
 *                                       for pack_id 2 of two done
 *   secprobe readv-wait DEV ID          the same, waiting for a pack_id ID
 *                                       that never comes
 *   secprobe v4-many DEV COUNT OFFSET   COUNT v4 TEST UNIT READYs written
 *                                       from OFFSET bytes into a page,
 *                                       read back, the rest written again
 *   secprobe parity DEV                 the v3 errno table (one line each;
 *                                       a read() or write() also says how
 *                                       many completions wait after it)
 *   secprobe parity-v4 DEV              the v4 errno table
 *   secprobe keep-buf DEV [LEN [BLOCKS [FLAGS]]]
 *                                       READ(10) of BLOCKS (1) into a LEN
 *                                       (4 MiB) buffer of 0xa5, by SG_IO
 *                                       and by write()/read(), with the
 *                                       header's flags FLAGS: done, past
 *                                       the end, and with the unit stopped
 *                                       (NOT READY); prints how many bytes
 *                                       changed in the first block and after
 *   secprobe ioctls DEV ro|rw           the mid-layer's ioctls (SG_SCSI_RESET,
 *                                       SCSI_IOCTL_SEND_COMMAND, PROBE_HOST
 *                                       ...) and SG_IO headers of the wrong
 *                                       kind, one line each
 *   secprobe rcv-exec HOW ioctl|read DEV PROGRAM
 *                                       a READ(10) whose data-in is at a
 *                                       fixed address, left by HOW: iosubmit
 *                                       (SG_IOSUBMIT, IMMED), write (v3
 *                                       write()), orphan (SG_IO interrupted
 *                                       by SIGALRM under SG_SET_KEEP_ORPHAN;
 *                                       the device must be slow); once done,
 *                                       execve() of PROGRAM (with file
 *                                       capabilities), which maps the
 *                                       address and takes it with
 *                                       SG_IORECEIVE (iosubmit),
 *                                       SG_IORECEIVE_V3 or read()
 *   secprobe orphan-child DEV           (root) SG_IO interrupted under
 *                                       SG_SET_KEEP_ORPHAN; once done, a
 *                                       forked child that became nobody
 *                                       tries SG_IORECEIVE_V3 and read(),
 *                                       then the parent read()s
 *   secprobe opath-add CTL DEV          BSG_IOC_ADD on the control node CTL
 *                                       of an O_PATH descriptor of DEV, and
 *                                       what DEV's own driver says of an
 *                                       ioctl on that descriptor
 *
 * Each prints "pid=PID ... go" (flushed) right before a call that is meant
 * to block, so that the suite can wait for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/bsg.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#ifndef SG_SCSI_RESET_TARGET /* missing from glibc's <scsi/sg.h> */
#define SG_SCSI_RESET_TARGET	  4
#define SG_SCSI_RESET_NO_ESCALATE 0x100
#endif

#define BLOCK	   512
#define PAGE	   4096
#define NOBODY	   65534
#define PATTERN	   0xa5
#define BAD_PTR	   ((void *)16)
#define WAIT_MS	   10000
#define V4_DEPTH   256 /* SG_SET_COMMAND_Q's ceiling on the node */
#define PROBE_LAST 4   /* descriptors an exhaust holder tries WRITE(10) on */
/* A fixed address for the data a context probe's header names, so that a
 * program after execve() can put its own pattern where the header points. */
#define CTX_ADDR ((void *)0x200000000000ull)
#define CTX_HDR	 0   /* the read() buffer */
#define CTX_CDB	 256 /* the CDB */
#define CTX_DATA 512 /* the data-in the header names */

static bool use_v4; /* -4: SG_IO with struct sg_io_v4, as bsg wants */

/* "what ok" or "what errno=ENAME": the one line the suite compares. */
static void result(const char *what, int err)
{
	if (err)
		printf("%s errno=%s\n", what, err_name(err));
	else
		printf("%s ok\n", what);
	fflush(stdout);
}

static void say_go(void)
{
	printf("pid=%d go\n", getpid());
	fflush(stdout);
}

#define BSG_IOC_ADD 0x8900 /* the control node's; its argument is a descriptor */

/* A file of the control node ctl bound to dev, opened with flags. */
static int open_bound(const char *ctl, const char *dev, int flags)
{
	int fd = open(ctl, flags), dfd = open(dev, flags);

	if (fd < 0 || dfd < 0)
		die(dfd < 0 ? dev : ctl);
	if (ioctl(fd, BSG_IOC_ADD, dfd) < 0)
		die("BSG_IOC_ADD");
	close(dfd);
	return fd;
}

static int open_dev(const char *dev, int flags)
{
	const char *eq = strchr(dev, '=');
	char ctl[PATH_MAX];
	int fd;

	if (eq && eq - dev < (ptrdiff_t)sizeof(ctl)) {
		snprintf(ctl, sizeof(ctl), "%.*s", (int)(eq - dev), dev);
		return open_bound(ctl, eq + 1, flags);
	}
	fd = strncmp(dev, "fd:", 3) ? open(dev, flags) : atoi(dev + 3);
	if (fd < 0)
		die(dev);
	return fd;
}

/* The commands the probes send, named on the command line. */
struct cmd_def {
	const char *name;
	uint8_t len;
	uint8_t cdb[16];
	int dir;
};

static const struct cmd_def cmds[] = {
	{ "tur", 6, { 0x00 }, SG_DXFER_NONE },
	{ "read10", 10, { 0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0 }, SG_DXFER_FROM_DEV },
	{ "write10", 10, { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0 }, SG_DXFER_TO_DEV },
	{ "senddiag", 6, { 0x1d, 0x04 }, SG_DXFER_NONE }, /* default self-test */
	{ "vendor", 6, { 0xc0 }, SG_DXFER_NONE },
	{ "format", 6, { 0x04 }, SG_DXFER_NONE },
};

static const struct cmd_def *cmd_find(const char *name)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	fprintf(stderr, "secprobe: unknown command %s\n", name);
	exit(2);
}

static void v3_init(struct sg_io_hdr *h, const uint8_t *cdb, unsigned cdb_len, int dir, void *buf,
		    unsigned len)
{
	memset(h, 0, sizeof(*h));
	h->interface_id = 'S';
	h->cmdp = (unsigned char *)cdb;
	h->cmd_len = cdb_len;
	h->dxfer_direction = len ? dir : SG_DXFER_NONE;
	h->dxferp = len ? buf : NULL;
	h->dxfer_len = len;
	h->timeout = 20000;
}

/* READ(16) of len bytes from LBA 0: past a small disk's end, so it ends at once. */
static void read16(uint8_t *cdb, uint64_t len)
{
	uint32_t blocks = len / BLOCK;

	memset(cdb, 0, 16);
	cdb[0] = 0x88;
	cdb[10] = blocks >> 24, cdb[11] = blocks >> 16, cdb[12] = blocks >> 8, cdb[13] = blocks;
}

/* SG_IO of one named command, v4: 0 or an errno. */
static int sgio_cmd_v4(int fd, const struct cmd_def *c, uint8_t *buf, uint8_t *sense)
{
	struct sg_io_v4 h = { .guard = 'Q', .timeout = 20000 };

	h.request = (uintptr_t)c->cdb;
	h.request_len = c->len;
	h.response = (uintptr_t)sense;
	h.max_response_len = 32;
	if (c->dir == SG_DXFER_TO_DEV) {
		h.dout_xferp = (uintptr_t)buf;
		h.dout_xfer_len = BLOCK;
	} else if (c->dir == SG_DXFER_FROM_DEV) {
		h.din_xferp = (uintptr_t)buf;
		h.din_xfer_len = BLOCK;
	}
	return ioctl(fd, SG_IO, &h) < 0 ? errno : 0;
}

/* SG_IO of one named command: 0 or an errno (a CHECK CONDITION is 0). */
static int sgio_cmd(int fd, const struct cmd_def *c)
{
	static uint8_t buf[BLOCK], sense[32];
	struct sg_io_hdr h;

	if (use_v4)
		return sgio_cmd_v4(fd, c, buf, sense);
	v3_init(&h, c->cdb, c->len, c->dir, buf, c->dir == SG_DXFER_NONE ? 0 : BLOCK);
	h.sbp = sense;
	h.mx_sb_len = sizeof(sense);
	return ioctl(fd, SG_IO, &h) < 0 ? errno : 0;
}

static int do_sgio(int argc, char **argv)
{
	bool ro = !strcmp(argv[3], "ro");
	int fd = open_dev(argv[2], ro ? O_RDONLY : O_RDWR);
	char what[64];

	for (int i = 4; i < argc; i++) {
		snprintf(what, sizeof(what), "%s:%s", ro ? "ro" : "rw", argv[i]);
		result(what, sgio_cmd(fd, cmd_find(argv[i])));
	}
	return 0;
}

/* Wait until fd has a completion to read: 0, or ETIME. */
static int wait_done(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, WAIT_MS) == 1 && (p.revents & POLLIN) ? 0 : ETIME;
}

/* Wait until n completions wait on fd (SG_GET_NUM_WAITING): 0, or ETIME. */
static int wait_n_done(int fd, int n)
{
	struct timespec t0, t;
	int waiting = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (ioctl(fd, SG_GET_NUM_WAITING, &waiting) == 0 && waiting >= n)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			return ETIME;
		sched_yield();
	}
}

/* ---- exhaust: the daemon out of file descriptors ---- */

struct holder_report {
	int held, open_err, tried, writes_ok;
};

static void holder(const char *dev, int per, int report_fd, int stay_fd)
{
	struct holder_report r = { 0 };
	int *fds = calloc(per, sizeof(*fds));
	char c;

	if (!fds)
		die("calloc");
	while (r.held < per) {
		int fd = open(dev, O_RDONLY);

		if (fd < 0) {
			r.open_err = errno;
			break;
		}
		fds[r.held++] = fd;
	}
	/* the last descriptors opened are those opened at the daemon's limit */
	for (int i = r.held - 1; i >= 0 && i >= r.held - PROBE_LAST; i--) {
		r.tried++;
		if (sgio_cmd(fds[i], cmd_find("write10")) == 0)
			r.writes_ok++;
	}
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		die("report");
	while (read(stay_fd, &c, 1) > 0)
		; /* hold everything until the parent lets go */
	_exit(0);
}

/* Run argv with every holder in place; its output goes to ours. */
static void run_cmd(char **argv)
{
	pid_t pid;
	int status;

	pid = fork_flushed();
	if (pid == 0) {
		execvp(argv[0], argv);
		die(argv[0]);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	printf("cmd exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static int exhaust(int argc, char **argv)
{
	int procs = atoi(argv[3]), per = atoi(argv[4]), rep[2], stay[2], i;
	struct holder_report total = { 0 }, r;

	if (pipe(rep) < 0 || pipe(stay) < 0)
		die("pipe");
	for (i = 0; i < procs && !total.open_err; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(stay[1]);
			holder(argv[2], per, rep[1], stay[0]);
		}
		if (read(rep[0], &r, sizeof(r)) != sizeof(r))
			die("holder report");
		total.held += r.held;
		total.tried += r.tried;
		total.writes_ok += r.writes_ok;
		total.open_err = r.open_err;
	}
	printf("exhaust holders=%d held=%d open_errno=%s last_writes=%d writes_ok=%d\n", i,
	       total.held, total.open_err ? err_name(total.open_err) : "none", total.tried,
	       total.writes_ok);
	if (argc > 5)
		run_cmd(argv + 5);
	fflush(stdout);
	close(stay[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

/* ---- passfd: rights travel with the descriptor? ---- */

static void drop_to_nobody(void)
{
	gid_t g = NOBODY;

	if (setgroups(1, &g) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		die("drop to nobody");
}

/* A message of one byte, data, with room for 2 descriptors. */
struct fds_msg {
	char data;
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov;
	struct msghdr m;
};

static void fds_msg_init(struct fds_msg *f, char data)
{
	memset(f, 0, sizeof(*f));
	f->data = data;
	f->iov = (struct iovec){ &f->data, 1 };
	f->m = (struct msghdr){ .msg_iov = &f->iov,
				.msg_iovlen = 1,
				.msg_control = f->u.buf,
				.msg_controllen = sizeof(f->u.buf) };
}

static void send_fds(int sock, const int *fds, int n)
{
	struct fds_msg f;
	struct cmsghdr *c;

	fds_msg_init(&f, 'x');
	f.m.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&f.m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	if (sendmsg(sock, &f.m, 0) < 0)
		die("sendmsg");
}

static void recv_fds(int sock, int *fds, int n)
{
	struct fds_msg f;
	struct cmsghdr *c;

	fds_msg_init(&f, 0);
	if (recvmsg(sock, &f.m, 0) < 0)
		die("recvmsg");
	c = CMSG_FIRSTHDR(&f.m);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(n * sizeof(int)))
		die("no descriptors received");
	memcpy(fds, CMSG_DATA(c), n * sizeof(int));
}

/* The receiver: nobody, no capabilities, before the descriptors exist. */
static void passfd_child(int sock)
{
	int fds[2];

	drop_to_nobody();
	recv_fds(sock, fds, 2);
	result("ro:write10", sgio_cmd(fds[0], cmd_find("write10")));
	result("rw:write10", sgio_cmd(fds[1], cmd_find("write10")));
	result("rw:senddiag", sgio_cmd(fds[1], cmd_find("senddiag")));
	result("rw:vendor", sgio_cmd(fds[1], cmd_find("vendor")));
	_exit(0);
}

static int passfd(int argc, char **argv)
{
	int sv[2], fds[2], status;
	pid_t pid;

	(void)argc;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	pid = fork_flushed();
	if (pid == 0) {
		close(sv[0]);
		passfd_child(sv[1]);
	}
	close(sv[1]);
	fds[0] = open_dev(argv[2], O_RDONLY);
	fds[1] = open_dev(argv[2], O_RDWR);
	send_fds(sv[0], fds, 2);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("receiver");
	return 0;
}

/* ---- ctx: read() and write() from another security context ---- */

static uint8_t *ctx_map(void)
{
	return map_fixed(CTX_ADDR, PAGE, PATTERN);
}

static bool ctx_intact(const uint8_t *p)
{
	for (int i = 0; i < BLOCK; i++)
		if (p[CTX_DATA + i] != PATTERN)
			return false;
	return true;
}

/* The header of READ(10) LBA 0, its data-in at the fixed address. */
static void ctx_header(uint8_t *p, struct sg_io_hdr *h)
{
	read10(p + CTX_CDB, 0, 1);
	v3_init(h, p + CTX_CDB, 10, SG_DXFER_FROM_DEV, p + CTX_DATA, BLOCK);
	h->pack_id = 7;
}

/* The read() in the changed context, and what it did to the data-in. */
static void ctx_read(int fd, uint8_t *p)
{
	ssize_t n;

	memset(p, PATTERN, PAGE);
	n = read(fd, p + CTX_HDR, sizeof(struct sg_io_hdr));
	if (n < 0)
		printf("read errno=%s buf=%s\n", err_name(errno),
		       ctx_intact(p) ? "intact" : "changed");
	else
		printf("read ret=%zd buf=%s\n", n, ctx_intact(p) ? "intact" : "changed");
	fflush(stdout);
}

static int cap_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) < 0 ? -errno : 0;
}

static int cap_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

#define CTX_CAP	   10 /* CAP_NET_BIND_SERVICE: nothing here uses it */
#define CTX_GROUPS 100

/* Before open(): what the change needs in place. */
static void ctx_before(const char *mode)
{
	struct __user_cap_data_struct d[2];
	gid_t g[CTX_GROUPS];

	if (!strcmp(mode, "capperm")) {
		/* out of the effective set only: the permitted set changes later */
		if (cap_get(d) || (d[0].effective &= ~(1u << CTX_CAP), cap_set(d)))
			die("capset");
	} else if (!strcmp(mode, "groups")) {
		for (int i = 0; i < CTX_GROUPS; i++)
			g[i] = 2000 + i;
		if (setgroups(CTX_GROUPS, g) < 0)
			die("setgroups");
	}
}

/* After the command is done: change the calling thread's context. */
static void ctx_change(const char *mode)
{
	struct __user_cap_data_struct d[2];
	gid_t g[CTX_GROUPS];
	int err = 0;

	if (!strcmp(mode, "bset")) {
		err = prctl(PR_CAPBSET_DROP, CTX_CAP, 0, 0, 0) < 0 ? -errno : 0;
	} else if (!strcmp(mode, "capperm")) {
		err = cap_get(d);
		d[0].permitted &= ~(1u << CTX_CAP);
		err = err ? err : cap_set(d);
	} else if (!strcmp(mode, "capinh")) {
		err = cap_get(d);
		d[0].inheritable |= 1u << CTX_CAP;
		err = err ? err : cap_set(d);
	} else if (!strcmp(mode, "groups")) {
		if (getgroups(CTX_GROUPS, g) != CTX_GROUPS)
			die("getgroups");
		g[69] = 7000; /* the 70th group */
		err = setgroups(CTX_GROUPS, g) < 0 ? -errno : 0;
	} else if (!strcmp(mode, "setuid")) {
		err = setuid(NOBODY) < 0 ? -errno : 0;
	}
	if (err) {
		errno = -err;
		die(mode);
	}
}

static void ctx_exec(int fd, const char *program)
{
	char fdstr[16];

	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	fflush(stdout);
	execl(program, program, "ctx-exec-read", fdstr, (char *)NULL);
	die(program);
}

static int ctx_fork(int fd, uint8_t *p, bool write_it)
{
	struct sg_io_hdr h;
	pid_t pid;
	int status;

	pid = fork_flushed();
	if (pid == 0) {
		if (!write_it) {
			ctx_read(fd, p);
			_exit(0);
		}
		ctx_header(p, &h);
		result("write", write(fd, &h, sizeof(h)) < 0 ? errno : 0);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child");
	return 0;
}

static int ctx(int argc, char **argv)
{
	const char *mode = argv[2];
	uint8_t *p = ctx_map();
	struct sg_io_hdr h;
	int fd;

	ctx_before(mode);
	fd = open_dev(argv[3], O_RDWR);
	if (!strcmp(mode, "fork-write"))
		return ctx_fork(fd, p, true);
	ctx_header(p, &h);
	if (write(fd, &h, sizeof(h)) != sizeof(h))
		die("write of the header");
	/* done before the change, so that the read() has something to take */
	if (wait_done(fd))
		die("no completion");
	if (!strcmp(mode, "exec") && argc == 5)
		ctx_exec(fd, argv[4]);
	if (!strcmp(mode, "fork"))
		return ctx_fork(fd, p, false);
	ctx_change(mode);
	ctx_read(fd, p);
	return 0;
}

/* After execve(): the same address mapped anew, the pattern in it, read(). */
static int ctx_exec_read(int argc, char **argv)
{
	(void)argc;
	ctx_read(atoi(argv[2]), ctx_map());
	return 0;
}

/* ---- rcv-exec, orphan-child: a completion handed over by the ioctls ---- */

/* sg 4.0.47's uapi <scsi/sg.h>: the asynchronous ioctls the node offers */
#define SG_IOSUBMIT	 _IOWR(0x22, 0x41, struct sg_io_v4)
#define SG_IORECEIVE	 _IOWR(0x22, 0x42, struct sg_io_v4)
#define SG_IORECEIVE_V3	 _IOWR(0x22, 0x46, struct sg_io_hdr)
#define SGV4_FLAG_IMMED	 0x400
#define ORPHAN_SIGNAL_MS 300 /* the device takes longer: the suite slows it */

static void on_alarm(int sig)
{
	(void)sig;
}

/* The READ(10) of ctx_header() as SG_IOSUBMIT's v4 header, IMMED. */
static int ctx_iosubmit(int fd, uint8_t *p)
{
	struct sg_io_v4 h = { .guard = 'Q', .timeout = 20000, .flags = SGV4_FLAG_IMMED };

	read10(p + CTX_CDB, 0, 1);
	h.request = (uintptr_t)(p + CTX_CDB);
	h.request_len = 10;
	h.din_xferp = (uintptr_t)(p + CTX_DATA);
	h.din_xfer_len = BLOCK;
	h.request_extra = 7;
	return ioctl(fd, SG_IOSUBMIT, &h) < 0 ? errno : 0;
}

/*
 * SG_IO of ctx_header()'s READ(10), interrupted by SIGALRM (no SA_RESTART)
 * while the slowed device works on it, under SG_SET_KEEP_ORPHAN: EINTR,
 * and the result is left for a read().  0 when it went so, or an errno.
 */
static int ctx_orphan(int fd, uint8_t *p)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval t = { .it_value = { 0, ORPHAN_SIGNAL_MS * 1000 } };
	struct sg_io_hdr h;
	int one = 1, err;

	if (ioctl(fd, SG_SET_KEEP_ORPHAN, &one) < 0)
		return errno;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &t, NULL) < 0)
		die("SIGALRM");
	ctx_header(p, &h);
	err = ioctl(fd, SG_IO, &h) < 0 ? errno : 0;
	return err == EINTR ? 0 : err ? err : EALREADY; /* EALREADY: not interrupted */
}

/* A completion left by how (iosubmit, write, orphan): 0 or an errno. */
static int ctx_leave(int fd, uint8_t *p, const char *how)
{
	struct sg_io_hdr h;

	if (!strcmp(how, "iosubmit"))
		return ctx_iosubmit(fd, p);
	if (!strcmp(how, "orphan"))
		return ctx_orphan(fd, p);
	ctx_header(p, &h);
	return write(fd, &h, sizeof(h)) == sizeof(h) ? 0 : errno;
}

/* Take the completion with SG_IORECEIVE (v4) or SG_IORECEIVE_V3, IMMED: 0 or an errno. */
static int ctx_ioreceive(int fd, uint8_t *p, bool v4)
{
	struct sg_io_v4 r4 = { .guard = 'Q', .flags = SGV4_FLAG_IMMED };
	struct sg_io_hdr r3 = { .interface_id = 'S', .flags = SGV4_FLAG_IMMED };
	int ret;

	if (v4)
		ret = ioctl(fd, SG_IORECEIVE, &r4);
	else
		ret = ioctl(fd, SG_IORECEIVE_V3, memcpy(p + CTX_HDR, &r3, sizeof(r3)));
	return ret < 0 ? errno : 0;
}

static int rcv_exec(int argc, char **argv)
{
	const char *how = argv[2], *rcv = argv[3];
	uint8_t *p = ctx_map();
	char fdstr[16];
	int fd = open_dev(argv[4], O_RDWR), err;

	(void)argc;
	err = ctx_leave(fd, p, how);
	if (err) {
		result("submit", err);
		return 0;
	}
	/* done before the execve(), so that the receive has something to take */
	if (wait_done(fd))
		die("no completion");
	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	if (strcmp(rcv, "read"))
		rcv = strcmp(how, "iosubmit") ? "v3" : "v4";
	fflush(stdout);
	execl(argv[5], argv[5], "rcv-exec-receive", rcv, fdstr, (char *)NULL);
	die(argv[5]);
	return 1;
}

/* After execve(): the same address mapped anew, the pattern in it, the receive. */
static int rcv_exec_receive(int argc, char **argv)
{
	uint8_t *p = ctx_map();
	int fd = atoi(argv[3]), err;

	(void)argc;
	if (!strcmp(argv[2], "read")) {
		ctx_read(fd, p);
		return 0;
	}
	err = ctx_ioreceive(fd, p, !strcmp(argv[2], "v4"));
	printf("%s %s%s buf=%s\n", !strcmp(argv[2], "v4") ? "SG_IORECEIVE" : "SG_IORECEIVE_V3",
	       err ? "errno=" : "ok", err ? err_name(err) : "",
	       ctx_intact(p) ? "intact" : "changed");
	return 0;
}

/* "what errno=E memory=intact|WRITTEN" of a receive in p's page. */
static void child_try(const char *what, int err, const uint8_t *p)
{
	printf("%s %s%s memory=%s; ", what, err ? "errno=" : "ok", err ? err_name(err) : "",
	       ctx_intact(p) ? "intact" : "WRITTEN");
}

/* The forked child: nobody now, tries to take the parent's kept completion. */
static void orphan_child(int fd, uint8_t *p)
{
	drop_to_nobody();
	memset(p, PATTERN, PAGE);
	printf("child: ");
	child_try("SG_IORECEIVE_V3", ctx_ioreceive(fd, p, false), p);
	memset(p, PATTERN, PAGE);
	child_try("read", read(fd, p + CTX_HDR, sizeof(struct sg_io_hdr)) < 0 ? errno : 0, p);
	fflush(stdout);
	_exit(0);
}

static int orphan_child_probe(int argc, char **argv)
{
	uint8_t *p = ctx_map();
	int fd = open_dev(argv[2], O_RDWR), err, status;
	struct sg_io_hdr h;
	pid_t pid;

	(void)argc;
	err = ctx_orphan(fd, p);
	if (err || wait_done(fd)) {
		result("orphan", err ? err : ETIME);
		return 0;
	}
	/* nothing below may wait: a completion taken by the child is gone */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die("O_NONBLOCK");
	pid = fork_flushed();
	if (pid == 0)
		orphan_child(fd, p);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child");
	memset(p, PATTERN, PAGE);
	err = read(fd, &h, sizeof(h)) < 0 ? errno : 0;
	if (err)
		printf("parent: read errno=%s\n", err_name(err));
	else
		printf("parent: read ok pack_id=%d data=%s\n", h.pack_id,
		       ctx_intact(p) ? "intact" : "changed");
	return 0;
}

/* ---- opath-add: BSG_IOC_ADD of a descriptor that opens nothing ---- */

static int opath_add(int argc, char **argv)
{
	int fd = open(argv[3], O_PATH), ctl = open(argv[2], O_RDWR), v = 0;

	(void)argc;
	if (fd < 0 || ctl < 0)
		die(fd < 0 ? argv[3] : argv[2]);
	result("device-ioctl", ioctl(fd, SG_GET_VERSION_NUM, &v) < 0 ? errno : 0);
	result("bind", ioctl(ctl, BSG_IOC_ADD, fd) < 0 ? errno : 0);
	return 0;
}

/* ---- memory: one write() asking for gigabytes ---- */

static void *big_region(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static int v4_flood(int argc, char **argv)
{
	int fd = open_dev(argv[2], O_RDWR), n = atoi(argv[3]), depth = V4_DEPTH;
	uint64_t len = strtoull(argv[4], NULL, 0);
	struct sg_io_v4 *h = calloc(n, sizeof(*h));
	static uint8_t cdb[16], sense[32];
	void *data = big_region(len);
	ssize_t r;

	(void)argc;
	if (!h || n < 1)
		die("v4-flood: N");
	read16(cdb, len);
	ioctl(fd, SG_SET_COMMAND_Q, &depth);
	for (int i = 0; i < n; i++) {
		h[i].guard = 'Q';
		h[i].request = (uintptr_t)cdb;
		h[i].request_len = 16;
		h[i].din_xferp = (uintptr_t)data;
		h[i].din_xfer_len = len;
		h[i].response = (uintptr_t)sense;
		h[i].max_response_len = sizeof(sense);
		h[i].timeout = 20000;
	}
	r = write(fd, h, n * sizeof(*h));
	if (r < 0)
		printf("write errno=%s of %zu\n", err_name(errno), n * sizeof(*h));
	else
		printf("write ret=%zd of %zu (%zd headers)\n", r, n * sizeof(*h),
		       r / (ssize_t)sizeof(*h));
	return 0; /* closed with the commands unread */
}

static int v3_big(int argc, char **argv)
{
	int fd = open_dev(argv[2], O_RDWR);
	uint64_t len = strtoull(argv[3], NULL, 0);
	static uint8_t cdb[16];
	struct sg_io_hdr h;

	(void)argc;
	read16(cdb, len);
	v3_init(&h, cdb, 16, SG_DXFER_FROM_DEV, big_region(len), len);
	if (write(fd, &h, sizeof(h)) < 0)
		printf("write errno=%s\n", err_name(errno));
	else
		printf("write ok\n");
	return 0;
}

/* ---- a client whose memory never comes ---- */

/*
 * The page's keeper: a child holding the userfaultfd that serves the page
 * with zeroes on SIGUSR1, and only then.  A caller stuck on a daemon that
 * waits for that page cannot be killed (the kernel's FUSE layer waits out a
 * request the daemon took); the suite frees it through the keeper.  The
 * descriptor still works on our memory from the child (no
 * UFFD_FEATURE_EVENT_FORK).
 */
static pid_t uffd_keeper(int uffd, uint8_t *page)
{
	struct uffdio_zeropage z = { .range = { (uintptr_t)page, PAGE } };
	sigset_t set;
	pid_t pid;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = fork_flushed();
	if (pid > 0) {
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		return pid;
	}
	sigwait(&set, &sig);
	result("served", ioctl(uffd, UFFDIO_ZEROPAGE, &z) < 0 ? errno : 0);
	_exit(0);
}

/*
 * Two pages; the second registered with userfaultfd and never served by us.
 * Says who we are and who keeps the page ("pid=P keeper=K go").
 */
static uint8_t *uffd_pages(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	uint8_t *p =
		mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	pid_t keeper;

	if (p == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0)
		die("userfaultfd");
	memset(p, 0, PAGE);
	reg.range.start = (uintptr_t)(p + PAGE);
	reg.range.len = PAGE;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		die("UFFDIO_REGISTER");
	keeper = uffd_keeper(uffd, p + PAGE);
	printf("pid=%d keeper=%d go\n", getpid(), keeper);
	fflush(stdout);
	return p; /* uffd stays open, unread, until we exit */
}

#define UFFD_THREADS_MAX 64

/* One caller thread of uffd-sgio: SG_IO with the CDB in the unserved page. */
struct uffd_caller {
	pthread_t thread;
	int fd, err;
	struct sg_io_hdr h;
};

static void *uffd_call(void *arg)
{
	struct uffd_caller *c = arg;

	c->err = ioctl(c->fd, SG_IO, &c->h) < 0 ? errno : 0;
	return NULL;
}

/* THREADS callers at once (1 without); one line: their errno, if all agree. */
static int uffd_sgio(int argc, char **argv)
{
	static struct uffd_caller c[UFFD_THREADS_MAX];
	int fd = open_dev(argv[2], O_RDWR), n = argc > 3 ? atoi(argv[3]) : 1, same = 1;
	uint8_t *p;

	if (n < 1 || n > UFFD_THREADS_MAX)
		die("uffd-sgio: THREADS 1..64");
	p = uffd_pages();
	for (int i = 0; i < n; i++) {
		c[i].fd = fd;
		v3_init(&c[i].h, p + PAGE, 6, SG_DXFER_NONE, NULL, 0); /* the CDB: never served */
		if (pthread_create(&c[i].thread, NULL, uffd_call, &c[i]))
			die("pthread_create");
	}
	for (int i = 0; i < n; i++) {
		pthread_join(c[i].thread, NULL);
		same &= c[i].err == c[0].err;
	}
	if (same)
		result("sgio", c[0].err);
	else
		printf("sgio mixed: the %d threads' errnos differ\n", n);
	return 0;
}

static int uffd_write(int argc, char **argv)
{
	int fd = open_dev(argv[2], O_RDWR);
	uint8_t cdb[10];
	struct sg_io_hdr h;
	uint8_t *p;

	(void)argc;
	memcpy(cdb, cmd_find("write10")->cdb, 10);
	cdb[5] = 100; /* LBA 100: whatever comes, nothing the suite reads */
	v3_init(&h, cdb, 10, SG_DXFER_TO_DEV, NULL, BLOCK);
	p = uffd_pages();
	h.dxferp = p + PAGE; /* the data-out: never served */
	result("write", write(fd, &h, sizeof(h)) < 0 ? errno : 0);
	return 0;
}

/* ---- SG_SET_FORCE_PACK_ID with readv() ---- */

static int force_pack_id_fd(const char *dev)
{
	int fd = open_dev(dev, O_RDWR), one = 1;

	if (ioctl(fd, SG_SET_FORCE_PACK_ID, &one) < 0)
		die("SG_SET_FORCE_PACK_ID");
	return fd;
}

static void write_tur(int fd, int pack_id)
{
	static const uint8_t tur[6];
	struct sg_io_hdr h;

	v3_init(&h, tur, 6, SG_DXFER_NONE, NULL, 0);
	h.pack_id = pack_id;
	if (write(fd, &h, sizeof(h)) != sizeof(h))
		die("write");
}

/* readv() of one header, asking for pack_id: the pack_id got, or -errno. */
static int readv_pack_id(int fd, int pack_id)
{
	/* a negative dxfer_direction tells sg it is a v3 header: only then
	 * does it take the pack_id from offset 48 */
	struct sg_io_hdr h = { .interface_id = 'S',
			       .dxfer_direction = SG_DXFER_NONE,
			       .pack_id = pack_id };
	struct iovec iov = { &h, sizeof(h) };

	if (readv(fd, &iov, 1) < 0)
		return -errno;
	return h.pack_id;
}

static int packid_readv(int argc, char **argv)
{
	int fd = force_pack_id_fd(argv[2]), got;

	(void)argc;
	write_tur(fd, 1);
	write_tur(fd, 2);
	if (wait_n_done(fd, 2))
		die("two completions");
	got = readv_pack_id(fd, 2);
	if (got < 0)
		printf("readv errno=%s\n", err_name(-got));
	else
		printf("readv pack_id=%d\n", got);
	return 0;
}

static int readv_wait(int argc, char **argv)
{
	int fd = force_pack_id_fd(argv[2]), got;

	(void)argc;
	say_go();
	got = readv_pack_id(fd, atoi(argv[3]));
	if (got < 0)
		printf("readv errno=%s\n", err_name(-got));
	else
		printf("readv pack_id=%d\n", got);
	return 0;
}

/* ---- a v4 array longer than 32 pages, not page-aligned ---- */

static void v4_tur(struct sg_io_v4 *h, const uint8_t *cdb, uint64_t tag)
{
	memset(h, 0, sizeof(*h));
	h->guard = 'Q';
	h->request = (uintptr_t)cdb;
	h->request_len = 6;
	h->timeout = 20000;
	h->usr_ptr = tag;
}

/* Read n completions; returns how many were read, counting tags in seen. */
static int v4_collect(int fd, int n, char *seen, int count)
{
	static struct sg_io_v4 back[16];
	int got = 0;

	while (got < n) {
		int want = n - got < 16 ? n - got : 16;
		ssize_t r = read(fd, back, want * sizeof(back[0]));

		if (r <= 0 || r % sizeof(back[0])) {
			printf("read errno=%s after %d\n", r < 0 ? err_name(errno) : "short", got);
			return got;
		}
		for (int j = 0; j < r / (ssize_t)sizeof(back[0]); j++, got++)
			if (back[j].usr_ptr < (uint64_t)count)
				seen[back[j].usr_ptr]++;
	}
	return got;
}

static int v4_many(int argc, char **argv)
{
	int fd = open_dev(argv[2], O_RDWR), count = atoi(argv[3]), off = atoi(argv[4]);
	int depth = V4_DEPTH, sent = 0, done = 0, writes = 0, first = -1, once = 0;
	size_t hl = sizeof(struct sg_io_v4);
	uint8_t *buf = aligned_alloc(PAGE, count * hl + 2 * PAGE);
	struct sg_io_v4 *all = calloc(count, hl), *at = (struct sg_io_v4 *)(buf + off);
	static const uint8_t tur[6];
	char *seen = calloc(count, 1);

	(void)argc;
	if (!buf || !all || !seen)
		die("alloc");
	if (ioctl(fd, SG_SET_COMMAND_Q, &depth) < 0)
		die("SG_SET_COMMAND_Q");
	for (int i = 0; i < count; i++)
		v4_tur(&all[i], tur, i);
	while (sent < count) {
		ssize_t r;

		/* the rest, from the same unaligned position each time */
		memcpy(at, all + sent, (count - sent) * hl);
		r = write(fd, at, (count - sent) * hl);
		writes++;
		if (r < 0 || r % hl || r == 0) {
			printf("write ret=%zd errno=%s at header %d of %d\n", r,
			       r < 0 ? err_name(errno) : "none", sent, count);
			return 0;
		}
		if (first < 0)
			first = r;
		sent += r / hl;
		done += v4_collect(fd, r / hl, seen, count);
	}
	for (int i = 0; i < count; i++)
		once += seen[i] == 1;
	printf("v4 sent=%d completed=%d once=%d writes=%d first=%d\n", sent, done, once, writes,
	       first);
	return 0;
}

/* ---- errno parity ---- */

static int parity_open(const char *dev, int flags)
{
	return open_dev(dev, O_RDWR | flags);
}

/* A TEST UNIT READY written and done, ready for a read(). */
static int parity_done_tur(const char *dev)
{
	int fd = parity_open(dev, 0);

	write_tur(fd, 5);
	if (wait_done(fd))
		die("no completion");
	return fd;
}

static int num_waiting(int fd)
{
	int n = -1;

	ioctl(fd, SG_GET_NUM_WAITING, &n);
	return n;
}

static void parity_null_dxferp(const char *dev)
{
	int fd = parity_open(dev, 0);
	uint8_t cdb[10];
	struct sg_io_hdr h;

	read10(cdb, 0, 1);
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, NULL, BLOCK);
	h.dxferp = NULL;
	result("null-dxferp", ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	close(fd);
}

static void parity_iovec_over(const char *dev)
{
	static uint8_t a[BLOCK], b[BLOCK];
	struct sg_iovec iov[2] = { { a, BLOCK }, { b, BLOCK } };
	int fd = parity_open(dev, 0);
	uint8_t cdb[10];
	struct sg_io_hdr h;

	read10(cdb, 0, 1);
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, iov, BLOCK);
	h.iovec_count = 2; /* 1024 bytes of iovecs for a 512-byte transfer */
	if (ioctl(fd, SG_IO, &h) < 0)
		result("iovec-over-dxfer_len", errno);
	else
		printf("iovec-over-dxfer_len ok resid=%d status=0x%x\n", h.resid, h.status);
	close(fd);
}

static void parity_zero(const char *dev)
{
	int fd = parity_done_tur(dev);
	char c;

	result("write-0", write(fd, &c, 0) < 0 ? errno : 0);
	if (read(fd, &c, 0) < 0)
		printf("read-0 errno=%s then waiting=%d\n", err_name(errno), num_waiting(fd));
	else
		printf("read-0 ok then waiting=%d\n", num_waiting(fd));
	close(fd);
}

static void parity_writev_split(const char *dev)
{
	static const uint8_t tur[6];
	int fd = parity_open(dev, O_NONBLOCK);
	struct sg_io_hdr h;
	struct iovec iov[2] = { { &h, 20 }, { (char *)&h + 20, sizeof(h) - 20 } };
	ssize_t r;

	v3_init(&h, tur, 6, SG_DXFER_NONE, NULL, 0);
	r = writev(fd, iov, 2);
	if (r < 0)
		result("writev-20+68", errno);
	else
		printf("writev-20+68 ret=%zd\n", r);
	close(fd);
}

static void parity_bad_read_buf(const char *dev)
{
	void *volatile bad = BAD_PTR; /* hidden from the compiler's size checks */
	int fd = parity_done_tur(dev), first;
	struct sg_io_hdr h;

	first = read(fd, bad, sizeof(h)) < 0 ? errno : 0;
	fcntl(fd, F_SETFL, O_NONBLOCK); /* a lost completion must not hang us */
	if (read(fd, &h, sizeof(h)) < 0)
		printf("bad-read-buf errno=%s then read=%s\n", err_name(first), err_name(errno));
	else
		printf("bad-read-buf errno=%s then read=ok pack_id=%d\n", err_name(first),
		       h.pack_id);
	close(fd);
}

static void parity_positional(const char *dev)
{
	int fd = parity_open(dev, O_NONBLOCK);
	struct sg_io_hdr h = { .interface_id = 'S' };

	result("pread", pread(fd, &h, sizeof(h), BLOCK) < 0 ? errno : 0);
	result("pwrite", pwrite(fd, &h, sizeof(h), BLOCK) < 0 ? errno : 0);
	close(fd);
}

/* A page of our own followed by a guard page: a buffer at its end runs into it. */
static uint8_t *guarded_page(void)
{
	uint8_t *p =
		mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + PAGE, PAGE, PROT_NONE))
		die("guard page");
	return p;
}

/*
 * What a read() or write() left on fd: "waiting=N" (SG_GET_NUM_WAITING),
 * a command taken by a write() counted once it is done, so that the count
 * does not race the device.
 */
static void then_waiting(const char *what, int err, int fd)
{
	if (!err && strncmp(what, "write", 5) == 0)
		wait_done(fd);
	printf("%s %s%s then waiting=%d\n", what, err ? "errno=" : "ok", err ? err_name(err) : "",
	       num_waiting(fd));
	fflush(stdout);
}

/* v3 SG_IO READ(10) of one block, dxfer_len len: the buffer is that long */
static void parity_dxfer_len(const char *dev, uint32_t len, const char *what)
{
	int fd = parity_open(dev, 0);
	uint8_t cdb[10];
	struct sg_io_hdr h;

	read10(cdb, 0, 1);
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, big_region(len), len);
	result(what, ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	close(fd);
}

/* an sg_iovec past dxfer_len naming kernel memory: import_iovec() checks them all */
static void parity_iovec_kernel(const char *dev)
{
	static uint8_t a[BLOCK];
	struct sg_iovec iov[2] = { { a, BLOCK },
				   { (void *)(uintptr_t)0xffff888000000000ull, BLOCK } };
	int fd = parity_open(dev, O_NONBLOCK);
	uint8_t cdb[10];
	struct sg_io_hdr h;

	read10(cdb, 0, 1);
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, iov, BLOCK);
	h.iovec_count = 2;
	result("iovec-kernel-addr", ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	then_waiting("write-iovec-kernel-addr", write(fd, &h, sizeof(h)) < 0 ? errno : 0, fd);
	close(fd);
}

/* a header whose last bytes lie in a guard page */
static void parity_write_guard(const char *dev)
{
	static const uint8_t tur[6];
	uint8_t *p = guarded_page();
	struct sg_io_hdr h, *at = (struct sg_io_hdr *)(p + PAGE - 40);
	int fd = parity_open(dev, O_NONBLOCK);

	v3_init(&h, tur, 6, SG_DXFER_NONE, NULL, 0);
	memcpy(at, &h, 40);
	then_waiting("write-hdr-guard", write(fd, at, sizeof(h)) < 0 ? errno : 0, fd);
	close(fd);
}

/* data-in that wraps the address space, or runs past its user half */
static void parity_dxferp_wrap(const char *dev, uintptr_t addr, const char *what)
{
	int fd = parity_open(dev, O_NONBLOCK);
	uint8_t cdb[10];
	struct sg_io_hdr h;
	char name[64];

	read10(cdb, 0, 1);
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, (void *)addr, 2 * PAGE);
	snprintf(name, sizeof(name), "sgio-%s", what);
	result(name, ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	snprintf(name, sizeof(name), "write-%s", what);
	then_waiting(name, write(fd, &h, sizeof(h)) < 0 ? errno : 0, fd);
	close(fd);
}

/* a read() whose buffer is read-only, or runs into a guard page */
static void parity_read_into(const char *dev, void *buf, const char *what)
{
	int fd = parity_done_tur(dev);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	then_waiting(what, read(fd, buf, sizeof(struct sg_io_hdr)) < 0 ? errno : 0, fd);
	close(fd);
}

static void parity_read_bufs(const char *dev)
{
	uint8_t *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ro == MAP_FAILED)
		die("mmap");
	parity_read_into(dev, ro, "read-ro-buf");
	parity_read_into(dev, guarded_page() + PAGE - 40, "read-guard");
}

/* ---- data-in: what a command writes into the caller's buffer ---- */

#define KEEP_LEN (4u << 20)

/* "what status=0xS resid=N head=H tail=T": bytes changed in the first block and after it */
static void keep_report(const char *what, const struct sg_io_hdr *h, const uint8_t *buf,
			uint32_t len)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t i = 0; i < len; i++) {
		if (buf[i] == PATTERN)
			continue;
		if (i < BLOCK)
			head++;
		else
			tail++;
	}
	printf("%s status=0x%x resid=%d sense_key=0x%x head=%u tail=%u\n", what, h->status,
	       h->resid, h->sb_len_wr > 2 ? h->sbp[2] & 0xf : 0, head, tail);
	fflush(stdout);
}

static int keep_flags;		 /* SG_FLAG_* of keep-buf's commands */
static uint16_t keep_blocks = 1; /* READ(10)'s transfer length */

static void keep_cmd(int fd, const char *what, uint32_t lba, uint32_t len, bool async)
{
	static uint8_t sense[32];
	uint8_t cdb[10], *buf = big_region(len);
	struct sg_io_hdr h;
	int err = 0;

	memset(buf, PATTERN, len);
	read10(cdb, lba, 1);
	cdb[7] = keep_blocks >> 8, cdb[8] = keep_blocks;
	v3_init(&h, cdb, 10, SG_DXFER_FROM_DEV, buf, len);
	h.sbp = sense;
	h.mx_sb_len = sizeof(sense);
	h.flags = keep_flags;
	if (!async)
		err = ioctl(fd, SG_IO, &h) < 0 ? errno : 0;
	else if (write(fd, &h, sizeof(h)) < 0 || wait_done(fd) || read(fd, &h, sizeof(h)) < 0)
		err = errno ? errno : ETIME;
	if (err)
		result(what, err);
	else
		keep_report(what, &h, buf, len);
	munmap(buf, len);
}

static void start_stop(int fd, bool start)
{
	static const struct cmd_def stop = { "stop", 6, { 0x1b, 0, 0, 0, 0, 0 }, SG_DXFER_NONE };
	static const struct cmd_def go = { "start", 6, { 0x1b, 0, 0, 0, 1, 0 }, SG_DXFER_NONE };

	if (sgio_cmd(fd, start ? &go : &stop))
		die("START STOP UNIT");
}

/* READ(10) of one block into LEN bytes: read, past the end, with the unit stopped */
static int keep_buf(int argc, char **argv)
{
	int fd = open_dev(argv[2], O_RDWR);
	uint32_t len = argc > 3 ? strtoul(argv[3], NULL, 0) : KEEP_LEN;
	char what[64];

	if (argc > 4)
		keep_blocks = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		keep_flags = strtol(argv[5], NULL, 0);

	for (int async = 0; async < 2; async++) {
		const char *how = async ? "write" : "sgio";

		snprintf(what, sizeof(what), "%s-good", how);
		keep_cmd(fd, what, 0, len, async);
		snprintf(what, sizeof(what), "%s-past-end", how);
		keep_cmd(fd, what, 0x7fffffff, len, async);
		start_stop(fd, false);
		snprintf(what, sizeof(what), "%s-not-ready", how);
		keep_cmd(fd, what, 0, len, async);
		start_stop(fd, true);
	}
	return 0;
}

static int parity(int argc, char **argv)
{
	(void)argc;
	parity_null_dxferp(argv[2]);
	parity_iovec_over(argv[2]);
	parity_zero(argv[2]);
	parity_writev_split(argv[2]);
	parity_bad_read_buf(argv[2]);
	parity_positional(argv[2]);
	parity_dxfer_len(argv[2], 0xfffffff, "dxfer_len-0xfffffff");
	parity_dxfer_len(argv[2], 0x10000000, "dxfer_len-256M");
	parity_dxfer_len(argv[2], 0x8000000, "dxfer_len-128M");
	parity_dxfer_len(argv[2], 0x4000000, "dxfer_len-64M");
	parity_dxfer_len(argv[2], 0x2000000, "dxfer_len-32M");
	parity_dxfer_len(argv[2], 0x1000000, "dxfer_len-16M");
	parity_dxfer_len(argv[2], 0x80000000, "dxfer_len-2G");
	parity_dxfer_len(argv[2], 0xffffffff, "dxfer_len-4G");
	parity_iovec_kernel(argv[2]);
	parity_write_guard(argv[2]);
	parity_dxferp_wrap(argv[2], (uintptr_t)-PAGE, "dxferp-wrap");
	parity_dxferp_wrap(argv[2], 0x7ffffffff000ull - PAGE, "dxferp-past-user");
	parity_read_bufs(argv[2]);
	return 0;
}

static int parity_v4(int argc, char **argv)
{
	static uint8_t buf[BLOCK], sense[32];
	int fd = parity_open(argv[2], 0);
	struct sg_io_v4 h = { .guard = 'Q', .request_len = 10, .timeout = 20000 };
	uint8_t cdb[10];

	(void)argc;
	read10(cdb, 0, 1);
	h.request = (uintptr_t)cdb;
	h.response = (uintptr_t)sense;
	h.max_response_len = sizeof(sense);
	h.din_xferp = (uintptr_t)buf;
	h.din_xfer_len = 0x80000000u;
	result("v4-din_xfer_len-2G", ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	h.din_xfer_len = 0xffffffff;
	result("v4-din_xfer_len-4G", ioctl(fd, SG_IO, &h) < 0 ? errno : 0);
	return 0;
}

/* ---- the mid-layer's ioctls, side by side ---- */

/* "what ret=N" or "what errno=ENAME", and what came back, in hex */
static void answer(const char *what, int ret, const uint8_t *data, size_t len)
{
	if (ret < 0) {
		printf("%s errno=%s\n", what, err_name(errno));
		return;
	}
	printf("%s ret=%d", what, ret);
	if (len)
		printf(" data=");
	for (size_t i = 0; i < len; i++)
		printf("%02x", data[i]);
	printf("\n");
}

static void ioctl_int(int fd, const char *what, unsigned long cmd, int val)
{
	answer(what, ioctl(fd, cmd, &val), NULL, 0);
}

/* struct scsi_ioctl_command: inlen, outlen, then CDB and data-out; data-in or sense back */
struct sic {
	uint32_t inlen, outlen;
	uint8_t data[PAGE + 64];
};

static void send_command(int fd, const char *what, const uint8_t *cdb, unsigned cdb_len,
			 uint32_t inlen, uint32_t outlen, size_t show)
{
	static struct sic s;
	int ret;

	memset(&s, PATTERN, sizeof(s));
	s.inlen = inlen;
	s.outlen = outlen;
	memcpy(s.data, cdb, cdb_len);
	ret = ioctl(fd, 1 /* SCSI_IOCTL_SEND_COMMAND */, &s);
	/* what the call wrote, and a byte past it, which it must not have */
	answer(what, ret, s.data, ret < 0 ? 0 : show);
}

static void legacy_commands(int fd)
{
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 36, 0 };
	static const uint8_t beyond[10] = { 0x28, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 1, 0 };
	static const uint8_t write10[10] = { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	static const uint8_t senddiag[6] = { 0x1d, 0x04, 0, 0, 0, 0 };

	send_command(fd, "send-inquiry", inquiry, 6, 0, 36, 37);
	send_command(fd, "send-read-beyond", beyond, 10, 0, BLOCK, 20);
	send_command(fd, "send-write10", write10, 10, BLOCK, 0, 0);
	send_command(fd, "send-senddiag", senddiag, 6, 0, 0, 0);
	send_command(fd, "send-inlen-4097", inquiry, 6, PAGE + 1, 0, 0);
	answer("send-null", ioctl(fd, 1, NULL), NULL, 0);
}

static void host_ioctls(int fd)
{
	union {
		uint32_t len;
		uint8_t s[256];
	} u;

	memset(&u, PATTERN, sizeof(u));
	u.len = 200;
	answer("probe-host", ioctl(fd, 0x5385, &u), u.s, 201);
	memset(&u, PATTERN, sizeof(u));
	u.len = 4;
	answer("probe-host-4", ioctl(fd, 0x5385, &u), u.s, 5);
	answer("probe-host-null", ioctl(fd, 0x5385, NULL), NULL, 0);
	memset(&u, PATTERN, sizeof(u));
	answer("get-pci", ioctl(fd, 0x5387, u.s), u.s, 21);
	/* SCSI_IOCTL_TEST_UNIT_READY (2) is FIGETBSZ to the VFS: EFAULT for NULL */
	answer("tur-ioctl", ioctl(fd, 2, NULL), NULL, 0);
	answer("start-unit", ioctl(fd, 5 /* SCSI_IOCTL_START_UNIT */, NULL), NULL, 0);
	answer("doorlock", ioctl(fd, 0x5380, NULL), NULL, 0);
	answer("doorunlock", ioctl(fd, 0x5381, NULL), NULL, 0);
	answer("get-transform", ioctl(fd, 0x2205, &u), NULL, 0);
	answer("blktrace-start", ioctl(fd, 0x1274 /* BLKTRACESTART */, NULL), NULL, 0);
	answer("blktrace-teardown", ioctl(fd, 0x1276 /* BLKTRACETEARDOWN */, NULL), NULL, 0);
}

static void header_guards(int fd)
{
	static uint8_t tur[6], sense[32];
	struct sg_io_v4 h4 = { .guard = 'Q', .request_len = 6, .timeout = 20000 };
	struct sg_io_hdr h3;

	v3_init(&h3, tur, 6, SG_DXFER_NONE, NULL, 0);
	h3.interface_id = 'Z';
	answer("sgio-guard-Z", ioctl(fd, SG_IO, &h3), NULL, 0);
	h4.request = (uintptr_t)tur;
	h4.response = (uintptr_t)sense;
	h4.max_response_len = sizeof(sense);
	h4.protocol = 1;
	answer("sgio-v4-protocol-1", ioctl(fd, SG_IO, &h4), NULL, 0);
	h4.protocol = BSG_PROTOCOL_SCSI;
	h4.subprotocol = 1;
	answer("sgio-v4-subprotocol-1", ioctl(fd, SG_IO, &h4), NULL, 0);
}

/*
 * Each mid-layer ioctl sg passes on, and SG_IO headers of the wrong kind.
 * ro: the file is opened read-only.  The resets run last: a bus or host
 * reset makes the device report a UNIT ATTENTION, which a TEST UNIT READY
 * then takes.
 */
static int ioctls(int argc, char **argv)
{
	static const uint8_t tur[6];
	int fd = open_dev(argv[2], (strcmp(argv[3], "ro") ? O_RDWR : O_RDONLY) | O_NONBLOCK);
	struct sg_io_hdr h;

	(void)argc;
	header_guards(fd);
	legacy_commands(fd);
	host_ioctls(fd);
	ioctl_int(fd, "reset-nothing", SG_SCSI_RESET, SG_SCSI_RESET_NOTHING);
	ioctl_int(fd, "reset-device", SG_SCSI_RESET, SG_SCSI_RESET_DEVICE);
	ioctl_int(fd, "reset-target-no-escalate", SG_SCSI_RESET,
		  SG_SCSI_RESET_TARGET | SG_SCSI_RESET_NO_ESCALATE);
	ioctl_int(fd, "reset-bus", SG_SCSI_RESET, SG_SCSI_RESET_BUS);
	ioctl_int(fd, "reset-host", SG_SCSI_RESET, SG_SCSI_RESET_HOST);
	ioctl_int(fd, "reset-77", SG_SCSI_RESET, 77);
	answer("reset-bad-pointer", ioctl(fd, SG_SCSI_RESET, BAD_PTR), NULL, 0);
	for (int i = 0; i < 3; i++) { /* the resets' UNIT ATTENTION, out of the way */
		v3_init(&h, tur, 6, SG_DXFER_NONE, NULL, 0);
		ioctl(fd, SG_IO, &h);
	}
	return 0;
}

/* Each probe takes main()'s argc and argv, argc (its name counted) in bounds. */
static const struct probe {
	const char *name;
	int min_argc, max_argc;
	int (*run)(int argc, char **argv);
} probes[] = {
	{ "sgio", 5, INT_MAX, do_sgio },
	{ "exhaust", 5, INT_MAX, exhaust },
	{ "passfd", 3, 3, passfd },
	{ "ctx", 4, 5, ctx },
	{ "ctx-exec-read", 3, 3, ctx_exec_read },
	{ "v4-flood", 5, 5, v4_flood },
	{ "v3-big", 4, 4, v3_big },
	{ "uffd-sgio", 3, 4, uffd_sgio },
	{ "uffd-write", 3, 3, uffd_write },
	{ "packid-readv", 3, 3, packid_readv },
	{ "readv-wait", 4, 4, readv_wait },
	{ "v4-many", 5, 5, v4_many },
	{ "parity", 3, 3, parity },
	{ "parity-v4", 3, 3, parity_v4 },
	{ "keep-buf", 3, 6, keep_buf },
	{ "ioctls", 4, 4, ioctls },
	{ "rcv-exec", 6, 6, rcv_exec },
	{ "rcv-exec-receive", 4, 4, rcv_exec_receive },
	{ "orphan-child", 3, 3, orphan_child_probe },
	{ "opath-add", 4, 4, opath_add },
};

#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static int usage(void)
{
	fprintf(stderr, "usage: secprobe [-4] ");
	for (size_t i = 0; i < NPROBES; i++)
		fprintf(stderr, "%s%s", i ? "|" : "", probes[i].name);
	fprintf(stderr, " ARGS (see tests/clients/secprobe.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "-4")) {
		use_v4 = true;
		argc--, argv++;
		c = argc > 1 ? argv[1] : "";
	}
	for (size_t i = 0; i < NPROBES; i++) {
		const struct probe *p = &probes[i];

		if (!strcmp(c, p->name) && argc >= p->min_argc && argc <= p->max_argc)
			return p->run(argc, argv);
	}
	return usage();
}
