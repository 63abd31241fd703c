// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctxprobe: the security context probes of tests/vm/security.sh (section
 * 4): each leaves a completed v3 READ(10) on a file of DEV, changes the
 * calling context one way, then takes the completion one way, and prints
 * one line that the suite compares with the same probe on the kernel's sg:
 *
 *   read errno=EPERM buf=intact
 *
 * sg's rule (sg_check_file_access()) is the kernel's pointer compare
 * filp->f_cred != current_real_cred(): any commit_creds() refuses, even
 * one that changes nothing, and nothing else does.  DEV may be CTL=DEV, a
 * file of the control node CTL bound to DEV with BSG_IOC_ADD.
 *
 *   ctxprobe change CHANGE DEV     CHANGE the thread's credentials, then
 *                                  read(): noop-setuid, noop-setgroups,
 *                                  noop-capset, keyctl-join, securebits,
 *                                  keepcaps, no-new-privs, userns (unshare
 *                                  a user namespace, then the capability
 *                                  sets put back as they were)
 *   ctxprobe io HOW same|fork DEV  take the completion with HOW (read,
 *                                  readv, preadv, aio, uring) in the
 *                                  opener or in a forked child; HOW write
 *                                  writes a header instead, HOW splice
 *                                  from a pipe
 *   ctxprobe reexec first|second DEV
 *                                  (under setarch -R) execve() of this very
 *                                  program, with the same arguments: the
 *                                  same addresses; before the file's first
 *                                  call (the write()) or its second (the
 *                                  read())
 *   ctxprobe clonevm-exec DEV      a clone(CLONE_VM) sibling execve()s this
 *                                  program, which read()s
 *   ctxprobe exec-keepvm DEV       as reexec second (under setarch -R or
 *                                  not), while a clone(CLONE_VM) sibling
 *                                  keeps the old memory alive
 *   ctxprobe thread-setuid DEV     one thread's own setuid(nobody) (the raw
 *                                  system call: no other thread changes),
 *                                  its read(), then a sibling thread's
 *   ctxprobe passfd-same DEV       the descriptor passed with SCM_RIGHTS to
 *                                  a process of the same uid, which read()s
 *   ctxprobe fork-sgio DEV         a forked child's SG_IO (sg allows it)
 *   ctxprobe refused DEV           (the node only) every call the rule
 *                                  refuses, from a forked child, then a
 *                                  read() after a no-op setuid(): between
 *                                  two SIGSTOPs of its own, so that the
 *                                  suite can read the daemon's counters
 *                                  around them
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <linux/bsg.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/securebits.h>
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
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"

#define BLOCK	512
#define PAGE	4096
#define NOBODY	65534
#define PATTERN 0xa5
#define WAIT_MS 10000
#define HDR_LEN ((unsigned)sizeof(struct sg_io_hdr))
/* A fixed address for the data the header names, so that a program after
 * execve() can put its own pattern where the header points. */
#define CTX_ADDR    ((void *)0x200000000000ull)
#define CTX_HDR	    0	/* the buffer the completion is read into */
#define CTX_CDB	    256 /* the CDB */
#define CTX_DATA    512 /* the data-in the header names */
#define BSG_IOC_ADD 0x8900
/* sg 4.0.47's uapi <scsi/sg.h>: the asynchronous ioctls the node offers */
#define SG_IOSUBMIT	_IOWR(0x22, 0x41, struct sg_io_v4)
#define SG_IORECEIVE	_IOWR(0x22, 0x42, struct sg_io_v4)
#define SG_IOABORT	_IOW(0x22, 0x43, struct sg_io_v4)
#define SG_IOSUBMIT_V3	_IOWR(0x22, 0x45, struct sg_io_hdr)
#define SG_IORECEIVE_V3 _IOWR(0x22, 0x46, struct sg_io_hdr)

/* ---- the completion and the memory it names ---- */

static uint8_t *ctx_map(void)
{
	return map_fixed(CTX_ADDR, PAGE, PATTERN);
}

static const char *ctx_buf(const uint8_t *p)
{
	for (int i = 0; i < BLOCK; i++)
		if (p[CTX_DATA + i] != PATTERN)
			return "changed";
	return "intact";
}

/* The header of READ(10) LBA 0, its data-in at the fixed address. */
static void ctx_header(uint8_t *p, struct sg_io_hdr *h)
{
	uint8_t *cdb = p + CTX_CDB;

	memset(cdb, 0, 10);
	cdb[0] = 0x28;
	cdb[8] = 1;
	memset(h, 0, sizeof(*h));
	h->interface_id = 'S';
	h->cmdp = cdb;
	h->cmd_len = 10;
	h->dxfer_direction = SG_DXFER_FROM_DEV;
	h->dxferp = p + CTX_DATA;
	h->dxfer_len = BLOCK;
	h->timeout = 20000;
	h->pack_id = 7;
}

static int open_dev(const char *dev)
{
	const char *eq = strchr(dev, '=');
	char ctl[PATH_MAX];
	int fd, dfd;

	if (!eq || eq - dev >= (ptrdiff_t)sizeof(ctl)) {
		fd = open(dev, O_RDWR);
		if (fd < 0)
			die(dev);
		return fd;
	}
	snprintf(ctl, sizeof(ctl), "%.*s", (int)(eq - dev), dev);
	fd = open(ctl, O_RDWR);
	dfd = open(eq + 1, O_RDWR);
	if (fd < 0 || dfd < 0)
		die(dfd < 0 ? eq + 1 : ctl);
	if (ioctl(fd, BSG_IOC_ADD, dfd) < 0)
		die("BSG_IOC_ADD");
	close(dfd);
	return fd;
}

static int wait_done(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, WAIT_MS) == 1 && (p.revents & POLLIN) ? 0 : ETIME;
}

/* write() the header: 0 or an errno. */
static int ctx_submit(int fd, uint8_t *p)
{
	struct sg_io_hdr h;

	ctx_header(p, &h);
	return write(fd, &h, sizeof(h)) == sizeof(h) ? 0 : errno;
}

/* A file of dev with a completion waiting: the probes' starting point. */
static int ctx_ready(const char *dev, uint8_t *p)
{
	int fd = open_dev(dev), err = ctx_submit(fd, p);

	if (err) {
		errno = err;
		die("write of the header");
	}
	if (wait_done(fd))
		die("no completion");
	return fd;
}

/* "what ret=N buf=..." or "what errno=E buf=...", then flushed. */
static void report(const char *what, ssize_t ret, int err, const uint8_t *p, const char *end)
{
	if (ret < 0)
		printf("%s errno=%s buf=%s%s", what, err_name(err), ctx_buf(p), end);
	else
		printf("%s ret=%zd buf=%s%s", what, ret, ctx_buf(p), end);
	fflush(stdout);
}

static void ctx_read(int fd, uint8_t *p, const char *end)
{
	ssize_t n;

	memset(p, PATTERN, PAGE);
	n = read(fd, p + CTX_HDR, HDR_LEN);
	report("read", n, errno, p, end);
}

/* Wait for a child that must exit 0. */
static void reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, __WALL) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child");
}

/* ---- change: one change of the thread's credentials, then read() ---- */

static int cap_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) < 0 ? errno : 0;
}

static int cap_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &h, d) < 0 ? errno : 0;
}

static int noop_setuid(void)
{
	return setuid(getuid()) < 0 ? errno : 0;
}

static int noop_setgroups(void)
{
	gid_t g[NGROUPS_MAX];
	int n = getgroups(NGROUPS_MAX, g);

	if (n < 0)
		return errno;
	return setgroups(n, g) < 0 ? errno : 0;
}

static int noop_capset(void)
{
	struct __user_cap_data_struct d[2];

	return cap_get(d) ?: cap_set(d);
}

static int keyctl_join(void)
{
	/* NULL: a new anonymous session keyring */
	return syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 ? errno : 0;
}

static int securebits(void)
{
	int bits = prctl(PR_GET_SECUREBITS);

	if (bits < 0)
		return errno;
	return prctl(PR_SET_SECUREBITS, bits | SECBIT_NO_SETUID_FIXUP) < 0 ? errno : 0;
}

static int keepcaps(void)
{
	return prctl(PR_SET_KEEPCAPS, 1) < 0 ? errno : 0;
}

static int no_new_privs(void)
{
	/* a flag of the task, not of its credentials: sg lets it read */
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? errno : 0;
}

/* A user namespace of its own, then every capability set as it was: only
 * the namespace differs. */
static int userns(void)
{
	struct __user_cap_data_struct d[2];

	if (cap_get(d))
		return errno;
	if (unshare(CLONE_NEWUSER) < 0)
		return errno;
	return cap_set(d);
}

static const struct change {
	const char *name;
	int (*run)(void);
} changes[] = {
	{ "noop-setuid", noop_setuid },	  { "noop-setgroups", noop_setgroups },
	{ "noop-capset", noop_capset },	  { "keyctl-join", keyctl_join },
	{ "securebits", securebits },	  { "keepcaps", keepcaps },
	{ "no-new-privs", no_new_privs }, { "userns", userns },
};

static int change(char **argv)
{
	uint8_t *p = ctx_map();
	int fd = ctx_ready(argv[3], p), err = -1;

	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		if (!strcmp(changes[i].name, argv[2]))
			err = changes[i].run();
	if (err) {
		errno = err < 0 ? EINVAL : err;
		die(argv[2]);
	}
	ctx_read(fd, p, "\n");
	return 0;
}

/* ---- io: the completion taken by other calls than read() ---- */

static ssize_t by_readv(int fd, uint8_t *p)
{
	struct iovec iov = { p + CTX_HDR, HDR_LEN };

	return readv(fd, &iov, 1);
}

static ssize_t by_preadv(int fd, uint8_t *p)
{
	struct iovec iov = { p + CTX_HDR, HDR_LEN };

	return preadv(fd, &iov, 1, 0);
}

/* io_setup(), io_submit() of one IOCB_CMD_PREAD, io_getevents(). */
static ssize_t by_aio(int fd, uint8_t *p)
{
	struct iocb cb = { .aio_fildes = fd, .aio_lio_opcode = IOCB_CMD_PREAD };
	struct iocb *cbs[1] = { &cb };
	struct timespec t = { WAIT_MS / 1000, 0 };
	aio_context_t ctx = 0;
	struct io_event ev;

	cb.aio_buf = (uintptr_t)(p + CTX_HDR);
	cb.aio_nbytes = HDR_LEN;
	if (syscall(SYS_io_setup, 1, &ctx) < 0)
		die("io_setup");
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		return -1; /* refused at submission: errno says why */
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, &t) != 1) {
		errno = ETIME;
		return -1;
	}
	errno = ev.res < 0 ? -ev.res : 0;
	return ev.res < 0 ? -1 : ev.res;
}

/* The rings of a new io_uring instance of one entry. */
struct ring {
	int fd;
	struct io_uring_params prm;
	uint8_t *sq, *cq;
	struct io_uring_sqe *sqes;
};

static void *ring_map(int fd, size_t len, off_t what)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, what);

	if (m == MAP_FAILED)
		die("mmap of an io_uring ring");
	return m;
}

static void ring_setup(struct ring *r)
{
	size_t sq_len, cq_len;

	memset(r, 0, sizeof(*r));
	r->fd = syscall(SYS_io_uring_setup, 1, &r->prm);
	if (r->fd < 0)
		die("io_uring_setup");
	sq_len = r->prm.sq_off.array + r->prm.sq_entries * sizeof(unsigned);
	cq_len = r->prm.cq_off.cqes + r->prm.cq_entries * sizeof(struct io_uring_cqe);
	if (r->prm.features & IORING_FEAT_SINGLE_MMAP) {
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
		r->sq = r->cq = ring_map(r->fd, sq_len, IORING_OFF_SQ_RING);
	} else {
		r->sq = ring_map(r->fd, sq_len, IORING_OFF_SQ_RING);
		r->cq = ring_map(r->fd, cq_len, IORING_OFF_CQ_RING);
	}
	r->sqes = ring_map(r->fd, r->prm.sq_entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
}

/* One IORING_OP_READ at the file's position (off -1), as read() would. */
static ssize_t by_uring(int fd, uint8_t *p)
{
	struct ring r;
	unsigned *tail, *head, idx;
	struct io_uring_cqe *cqe;

	ring_setup(&r);
	tail = (unsigned *)(r.sq + r.prm.sq_off.tail);
	idx = *tail & *(unsigned *)(r.sq + r.prm.sq_off.ring_mask);
	memset(&r.sqes[idx], 0, sizeof(r.sqes[idx]));
	r.sqes[idx].opcode = IORING_OP_READ;
	r.sqes[idx].fd = fd;
	r.sqes[idx].addr = (uintptr_t)(p + CTX_HDR);
	r.sqes[idx].len = HDR_LEN;
	r.sqes[idx].off = (uint64_t)-1;
	((unsigned *)(r.sq + r.prm.sq_off.array))[idx] = idx;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		die("io_uring_enter");
	head = (unsigned *)(r.cq + r.prm.cq_off.head);
	if (*head == __atomic_load_n((unsigned *)(r.cq + r.prm.cq_off.tail), __ATOMIC_ACQUIRE))
		die("io_uring: no completion");
	cqe = (struct io_uring_cqe *)(r.cq + r.prm.cq_off.cqes) +
	      (*head & *(unsigned *)(r.cq + r.prm.cq_off.ring_mask));
	errno = cqe->res < 0 ? -cqe->res : 0;
	return cqe->res < 0 ? -1 : cqe->res;
}

/* A new READ(10) header, written into the file from a pipe. */
static ssize_t by_splice(int fd, uint8_t *p)
{
	struct sg_io_hdr h;
	int pfd[2];

	ctx_header(p, &h);
	if (pipe(pfd) < 0 || write(pfd[1], &h, sizeof(h)) != sizeof(h))
		die("pipe");
	return splice(pfd[0], NULL, fd, NULL, sizeof(h), 0);
}

/* A new READ(10) header, written. */
static ssize_t by_write(int fd, uint8_t *p)
{
	struct sg_io_hdr h;

	ctx_header(p, &h);
	return write(fd, &h, sizeof(h));
}

static const struct way {
	const char *name;
	ssize_t (*run)(int fd, uint8_t *p);
} ways[] = {
	{ "readv", by_readv }, { "preadv", by_preadv }, { "aio", by_aio },
	{ "uring", by_uring }, { "splice", by_splice }, { "write", by_write },
};

static const struct way *way_find(const char *name)
{
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		if (!strcmp(ways[i].name, name))
			return &ways[i];
	fprintf(stderr, "ctxprobe: no way %s\n", name);
	exit(2);
}

static void io_take(int fd, uint8_t *p, const char *how, const char *end)
{
	ssize_t n;

	if (!strcmp(how, "read")) {
		ctx_read(fd, p, end);
		return;
	}
	memset(p, PATTERN, PAGE);
	n = way_find(how)->run(fd, p);
	report(how, n, errno, p, end);
}

static int io(char **argv)
{
	uint8_t *p = ctx_map();
	int fd = ctx_ready(argv[4], p);
	pid_t pid;

	if (!strcmp(argv[3], "same")) {
		io_take(fd, p, argv[2], "\n");
		return 0;
	}
	pid = fork_flushed();
	if (pid == 0) {
		io_take(fd, p, argv[2], "\n");
		_exit(0);
	}
	reap(pid);
	return 0;
}

/* ---- exec: a new program, the same file ---- */

#define KEEP_FD	  100 /* the file, across the execve() */
#define KEEP_PIPE 101 /* exec-keepvm's sibling waits on it */
#define STACK	  (64 * 1024)

/* Is this the program after the execve()?  It has the file at KEEP_FD. */
static bool after_exec(const char *dev)
{
	struct stat a, b;

	return fstat(KEEP_FD, &a) == 0 && stat(dev, &b) == 0 && a.st_rdev == b.st_rdev;
}

/*
 * execve() of this very program with the same file name, arguments and
 * environment: under setarch -R, every address /proc shows of it (code,
 * data, heap, stack, arguments, environment) is the old program's.
 */
static void exec_same(char **argv, int fd)
{
	if (argv[0][0] != '/')
		die("ctxprobe: run by its absolute path");
	if (dup2(fd, KEEP_FD) < 0)
		die("dup2");
	close(fd);
	fflush(stdout);
	execve(argv[0], argv, environ);
	die("execve");
}

/* The new program: its first call the write() ("first"), or the read(). */
static int exec_after(bool first)
{
	uint8_t *p = ctx_map();
	int err;
	char c = 0;

	if (first) {
		err = ctx_submit(KEEP_FD, p);
		if (err) {
			printf("write errno=%s\n", err_name(err));
			return 0;
		}
		printf("write ok, ");
		if (wait_done(KEEP_FD))
			die("no completion");
	}
	ctx_read(KEEP_FD, p, "\n");
	/* exec-keepvm's sibling may let the old memory go now */
	if (fcntl(KEEP_PIPE, F_GETFD) >= 0 && write(KEEP_PIPE, &c, 1) != 1)
		die("write to the sibling");
	return 0;
}

static int reexec(char **argv)
{
	bool first = !strcmp(argv[2], "first");
	uint8_t *p;

	/* what the case is about: the new program at the old addresses */
	if (!(personality(0xffffffff) & ADDR_NO_RANDOMIZE)) {
		fprintf(stderr, "ctxprobe: reexec runs under setarch -R\n");
		return 2;
	}
	if (after_exec(argv[3]))
		return exec_after(first);
	if (first) {
		exec_same(argv, open_dev(argv[3]));
		return 1;
	}
	p = ctx_map();
	exec_same(argv, ctx_ready(argv[3], p));
	return 1;
}

static pid_t clone_vm(int (*fn)(void *), int *arg)
{
	uint8_t *stack = malloc(STACK);
	pid_t pid;

	if (!stack)
		die("malloc");
	fflush(stdout);
	pid = clone(fn, stack + STACK, CLONE_VM | SIGCHLD, arg);
	if (pid < 0)
		die("clone");
	return pid;
}

static int sibling_exec(void *arg)
{
	char fd[16];

	snprintf(fd, sizeof(fd), "%d", *(int *)arg);
	execl("/proc/self/exe", "ctxprobe", "exec-read", fd, (char *)NULL);
	die("execve");
	return 1;
}

/* After the sibling's execve(): the same address mapped anew, read(). */
static int exec_read(char **argv)
{
	ctx_read(atoi(argv[2]), ctx_map(), "\n");
	return 0;
}

static int clonevm_exec(char **argv)
{
	uint8_t *p = ctx_map();
	int fd = ctx_ready(argv[2], p);

	reap(clone_vm(sibling_exec, &fd));
	return 0;
}

/* The sibling that keeps the old memory: until the new program has read(). */
static int sibling_wait(void *arg)
{
	char c;

	(void)!read(*(int *)arg, &c, 1);
	_exit(0);
}

/* The opener's execve() of itself while a sibling keeps its old memory. */
static int exec_keepvm(char **argv)
{
	uint8_t *p;
	int fd, pfd[2];

	if (after_exec(argv[2]))
		return exec_after(false);
	p = ctx_map();
	fd = ctx_ready(argv[2], p);
	if (pipe(pfd) < 0 || dup2(pfd[1], KEEP_PIPE) < 0)
		die("pipe");
	clone_vm(sibling_wait, &pfd[0]);
	exec_same(argv, fd);
	return 1;
}

/* ---- thread-setuid: one thread's credentials, not its process's ---- */

struct reader {
	int fd;
	uint8_t *p;
	bool setuid;
};

static void *thread_read(void *arg)
{
	struct reader *r = arg;

	/* the raw call: glibc's setuid() would change every thread */
	if (r->setuid && syscall(SYS_setuid, NOBODY) < 0)
		die("setuid");
	ctx_read(r->fd, r->p, r->setuid ? ", " : "\n");
	return NULL;
}

static void in_thread(struct reader *r)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_read, r) || pthread_join(t, NULL))
		die("thread");
}

static int thread_setuid(char **argv)
{
	uint8_t *p = ctx_map();
	struct reader r = { ctx_ready(argv[2], p), p, true };

	printf("thread ");
	in_thread(&r);
	r.setuid = false;
	printf("sibling ");
	in_thread(&r);
	return 0;
}

/* ---- passfd-same: SCM_RIGHTS to a process of the same uid ---- */

static void send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char data = 'x';
	struct iovec iov = { &data, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &m, 0) < 0)
		die("sendmsg");
}

static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char data;
	struct iovec iov = { &data, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int fd;

	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &m, 0) < 0)
		die("recvmsg");
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		die("no descriptor received");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The receiver exists before the file does: it inherits nothing of it. */
static int passfd_same(char **argv)
{
	uint8_t *p = ctx_map();
	int sv[2], fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	pid = fork_flushed();
	if (pid == 0) {
		close(sv[0]);
		ctx_read(recv_fd(sv[1]), p, "\n");
		_exit(0);
	}
	close(sv[1]);
	fd = ctx_ready(argv[2], p);
	send_fd(sv[0], fd);
	reap(pid);
	return 0;
}

/* ---- fork-sgio: SG_IO is its caller's own call ---- */

static int fork_sgio(char **argv)
{
	static const uint8_t tur[6];
	int fd = open_dev(argv[2]);
	struct sg_io_hdr h = { .interface_id = 'S', .cmd_len = 6, .timeout = 20000 };
	pid_t pid = fork_flushed();

	if (pid == 0) {
		h.cmdp = (unsigned char *)tur;
		h.dxfer_direction = SG_DXFER_NONE;
		if (ioctl(fd, SG_IO, &h) < 0)
			printf("sgio errno=%s\n", err_name(errno));
		else
			printf("sgio ok status=0x%x\n", h.status);
		_exit(0);
	}
	reap(pid);
	return 0;
}

/* ---- refused: every call the rule refuses, the daemon's counters around them ---- */

static void refused_ioctl(int fd, const char *what, unsigned long cmd, uint8_t *p)
{
	struct sg_io_v4 h4 = { .guard = 'Q', .request_len = 10, .timeout = 20000 };
	struct sg_io_hdr h3;
	void *arg = &h4;

	ctx_header(p, &h3);
	h4.request = (uintptr_t)(p + CTX_CDB);
	if (cmd == SG_IOSUBMIT_V3 || cmd == SG_IORECEIVE_V3)
		arg = &h3;
	if (ioctl(fd, cmd, arg) < 0)
		printf("%s errno=%s\n", what, err_name(errno));
	else
		printf("%s ok\n", what);
}

static void refused_calls(int fd, uint8_t *p)
{
	static const char *const all[] = { "read",  "readv",  "preadv", "aio",
					   "uring", "splice", "write" };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		io_take(fd, p, all[i], "\n");
	refused_ioctl(fd, "SG_IOSUBMIT", SG_IOSUBMIT, p);
	refused_ioctl(fd, "SG_IOSUBMIT_V3", SG_IOSUBMIT_V3, p);
	refused_ioctl(fd, "SG_IORECEIVE", SG_IORECEIVE, p);
	refused_ioctl(fd, "SG_IORECEIVE_V3", SG_IORECEIVE_V3, p);
	refused_ioctl(fd, "SG_IOABORT", SG_IOABORT, p);
	fflush(stdout);
}

static int refused(char **argv)
{
	uint8_t *p = ctx_map();
	int fd = ctx_ready(argv[2], p);
	pid_t pid;

	printf("pid=%d go\n", getpid());
	fflush(stdout);
	raise(SIGSTOP); /* the suite reads the counters, then SIGCONT */
	pid = fork_flushed();
	if (pid == 0) {
		refused_calls(fd, p);
		_exit(0);
	}
	reap(pid);
	if (noop_setuid())
		die("setuid");
	ctx_read(fd, p, "\n");
	raise(SIGSTOP); /* the counters again */
	return 0;
}

/* Each probe takes main()'s argc and argv, argc (its name counted) in bounds. */
static const struct probe {
	const char *name;
	int argc;
	int (*run)(char **argv);
} probes[] = {
	{ "change", 4, change },	       /* CHANGE DEV */
	{ "io", 5, io },		       /* HOW same|fork DEV */
	{ "reexec", 4, reexec },	       /* first|second DEV */
	{ "clonevm-exec", 3, clonevm_exec },   /* DEV */
	{ "exec-read", 3, exec_read },	       /* FD: clonevm-exec's sibling */
	{ "exec-keepvm", 3, exec_keepvm },     /* DEV */
	{ "thread-setuid", 3, thread_setuid }, /* DEV */
	{ "passfd-same", 3, passfd_same },     /* DEV */
	{ "fork-sgio", 3, fork_sgio },	       /* DEV */
	{ "refused", 3, refused },	       /* DEV */
};

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!strcmp(c, probes[i].name) && argc == probes[i].argc)
			return probes[i].run(argv);
	fprintf(stderr, "usage: ctxprobe ");
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		fprintf(stderr, "%s%s", i ? "|" : "", probes[i].name);
	fprintf(stderr, " ARGS (see tests/clients/ctxprobe.c)\n");
	return 2;
}
