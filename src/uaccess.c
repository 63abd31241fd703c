// SPDX-License-Identifier: GPL-2.0-only
/*
 * Client memory access.  process_vm_readv/writev take the calling thread's
 * id, which is what fuse_req_ctx() gives.  A short transfer means a fault
 * part-way, which the kernel would report as EFAULT too.
 */
#include "uaccess.h"
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guard.h"

#define CAP_SYS_PTRACE_BIT 19
#define CHUNK		   UACCESS_PIECES_MAX /* remote segments per system call */

static int vm_errno(int err)
{
	return err == EPERM ? -EPERM : -EFAULT; /* ESRCH: the caller is gone */
}

/*
 * One process_vm_writev() or _readv() that must move want bytes: 0 or
 * -errno.  Every system call into a client is made here, through the
 * calling thread's guard (guard.h): none once the watchdog has answered.
 */
static int vm_move(pid_t tid, const struct iovec *local, unsigned nlocal,
		   const struct iovec *remote, unsigned nremote, size_t want, bool write)
{
	int err = guard_copy_enter();
	ssize_t got;

	if (err)
		return err;
	got = write ? process_vm_writev(tid, local, nlocal, remote, nremote, 0)
		    : process_vm_readv(tid, local, nlocal, remote, nremote, 0);
	err = got < 0 ? vm_errno(errno) : (size_t)got == want ? 0 : -EFAULT;
	return guard_copy_leave() ? err : -EFAULT;
}

static int xfer(pid_t tid, const struct scsi_seg *segs, unsigned n, void *buf, bool write)
{
	struct iovec remote[CHUNK], local;
	char *p = buf;

	for (unsigned i = 0; i < n; i += CHUNK) {
		unsigned k = n - i < CHUNK ? n - i : CHUNK;
		size_t want = 0;
		int err;

		for (unsigned j = 0; j < k; j++) {
			remote[j].iov_base = (void *)(uintptr_t)segs[i + j].addr;
			remote[j].iov_len = segs[i + j].len;
			want += segs[i + j].len;
		}
		local.iov_base = p;
		local.iov_len = want;
		err = vm_move(tid, &local, 1, remote, k, want, write);
		if (err)
			return err;
		p += want;
	}
	return 0;
}

int uaccess_readv(pid_t tid, const struct scsi_seg *segs, unsigned n, void *buf)
{
	return xfer(tid, segs, n, buf, false);
}

int uaccess_writev(pid_t tid, const struct scsi_seg *segs, unsigned n, const void *buf)
{
	return xfer(tid, segs, n, (void *)buf, true);
}

int uaccess_write_pieces(pid_t tid, const struct uaccess_piece *pieces, unsigned n)
{
	struct iovec remote[CHUNK], local[CHUNK];

	for (unsigned i = 0; i < n;) {
		unsigned k = 0;
		size_t want = 0;
		int err;

		for (; i < n && k < CHUNK; i++) {
			if (!pieces[i].len)
				continue;
			remote[k].iov_base = (void *)(uintptr_t)pieces[i].addr;
			local[k].iov_base = (void *)pieces[i].buf;
			remote[k].iov_len = local[k].iov_len = pieces[i].len;
			want += pieces[i].len;
			k++;
		}
		if (!k)
			break;
		err = vm_move(tid, local, k, remote, k, want, true);
		if (err)
			return err;
	}
	return 0;
}

int uaccess_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct scsi_seg seg = { addr, len };

	return len ? xfer(tid, &seg, 1, buf, false) : 0;
}

int uaccess_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct scsi_seg seg = { addr, len };

	return len ? xfer(tid, &seg, 1, (void *)buf, true) : 0;
}

void uaccess_status_init(struct uaccess_status *cache)
{
	*cache = (struct uaccess_status){ .tid = 0,
					  .tgid = 0,
					  .dir = -1,
					  .status = -1,
					  .stat = -1,
					  .attr = -1,
					  .alive_seen = false,
					  .mm = -1,
					  .mm_matched = false };
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void uaccess_status_fini(struct uaccess_status *cache)
{
	close_fd(&cache->dir);
	close_fd(&cache->status);
	close_fd(&cache->stat);
	close_fd(&cache->attr);
	close_fd(&cache->mm);
	cache->mm_matched = false;
	cache->tid = 0;
	cache->tgid = 0;
	cache->alive_seen = false;
}

/*
 * cache opened on /proc/TID.  A descriptor of a thread that has exited
 * says ESRCH, never another thread's state, so one kept for tid is good
 * for as long as reads through it succeed.
 */
static int status_open(struct uaccess_status *cache, pid_t tid)
{
	char path[64];

	if (cache->tid == tid && cache->dir >= 0)
		return 0;
	uaccess_status_fini(cache);
	snprintf(path, sizeof(path), "/proc/%d", tid);
	cache->dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cache->dir < 0)
		return -errno;
	cache->tid = tid;
	return 0;
}

static int file_fd(struct uaccess_status *cache, int *fd, const char *name);

int uaccess_tgid(struct uaccess_status *cache, pid_t tid, pid_t *ret)
{
	char text[1024], *p;
	ssize_t n;
	long v;
	int err;

	/* the directory of a thread that has exited finds nothing, even if
	 * its number is some other thread's by now */
	if (cache->tid == tid && cache->dir >= 0) {
		if (faccessat(cache->dir, "stat", F_OK, 0))
			uaccess_status_fini(cache); /* gone: look again */
		else if (cache->tgid > 0) {
			*ret = cache->tgid;
			return 0;
		}
	}
	err = status_open(cache, tid);
	if (!err)
		err = file_fd(cache, &cache->status, "status");
	if (err)
		return err;
	n = pread(cache->status, text, sizeof(text) - 1, 0);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	p = strstr(text, "\nTgid:\t");
	v = p ? strtol(p + 7, NULL, 10) : 0;
	if (v <= 0 || v > INT32_MAX)
		return -EINVAL;
	cache->tgid = (pid_t)v;
	*ret = cache->tgid;
	return 0;
}

/* *fd: name under cache's /proc/TID, opened once. */
static int file_fd(struct uaccess_status *cache, int *fd, const char *name)
{
	if (*fd < 0)
		*fd = openat(cache->dir, name, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* One thread's context as procfs shows it now; text holds its status. */
struct snap {
	char *text;
	size_t size;
	struct creds c;
	uint64_t userns, exe_dev, exe_ino;
	uint64_t layout[CREDS_LAYOUT_N];
	uint32_t lsm_len;
	char lsm[UACCESS_LSM_MAX];
	bool same_program; /* exe not read: cache's mm still reads (same_program()) */
};

static void snap_fini(struct snap *s)
{
	free(s->text);
}

static int read_status_text(struct uaccess_status *cache, struct snap *s)
{
	ssize_t len;
	int err = file_fd(cache, &cache->status, "status");

	if (err)
		return err;
	len = creds_read_text(cache->status, &s->text, &s->size, NULL);
	if (len < 0)
		return (int)len;
	return creds_parse_status(s->text, len, &s->c) ? -EIO : 0;
}

static int read_layout(struct uaccess_status *cache, struct snap *s)
{
	char buf[1024];
	ssize_t len;
	int err = file_fd(cache, &cache->stat, "stat");

	if (err)
		return err;
	len = pread(cache->stat, buf, sizeof(buf), 0);
	if (len < 0)
		return -errno;
	return creds_parse_stat(buf, len, s->layout) ? -EIO : 0;
}

/*
 * Set once attr/current has said that no LSM keeps a label: LSMs are
 * chosen at boot, so no thread gets one later and the file is not read
 * again.
 */
static atomic_bool no_lsm;

/* The LSM label; none (EINVAL: no LSM keeps one) is the empty label. */
static int read_lsm(struct uaccess_status *cache, struct snap *s)
{
	ssize_t len;
	int err;

	s->lsm_len = 0;
	if (atomic_load_explicit(&no_lsm, memory_order_relaxed))
		return 0;
	err = file_fd(cache, &cache->attr, "attr/current");
	if (err == -ENOENT || err == -EINVAL) {
		atomic_store(&no_lsm, true);
		return 0;
	}
	if (err)
		return err;
	len = pread(cache->attr, s->lsm, sizeof(s->lsm), 0);
	if (len < 0 && errno == EINVAL) {
		atomic_store(&no_lsm, true);
		len = 0;
	}
	if (len < 0)
		return -errno;
	if ((size_t)len == sizeof(s->lsm))
		return -EFBIG; /* cut off: not comparable */
	s->lsm_len = len;
	return 0;
}

/*
 * The device and inode of what name under /proc/TID leads to.  Both are in
 * the in-core inode, which a thread's executable pins: AT_STATX_DONT_SYNC
 * keeps a network file system (9p, NFS) from asking its server for
 * attributes that cannot have changed, which cost most of a check there.
 */
static int read_inode(struct uaccess_status *cache, const char *name, uint64_t *dev, uint64_t *ino)
{
	struct statx st;

	if (statx(cache->dir, name, AT_STATX_DONT_SYNC, STATX_INO, &st) < 0)
		return -errno;
	*dev = makedev(st.stx_dev_major, st.stx_dev_minor);
	*ino = st.stx_ino;
	return 0;
}

/*
 * The inode of tid's user namespace, from the name its ns/user link reads
 * as ("user:[INODE]"): the same ptrace check as following the link, and
 * without the nsfs inode that following it makes and drops at each call.
 */
static int read_userns(struct uaccess_status *cache, uint64_t *ino)
{
	char name[64], *end;
	ssize_t len = readlinkat(cache->dir, "ns/user", name, sizeof(name) - 1);
	unsigned long long v;

	if (len < 0)
		return -errno;
	name[len] = '\0';
	if (len < 8 || memcmp(name, "user:[", 6) || name[len - 1] != ']')
		return -EIO;
	errno = 0;
	v = strtoull(name + 6, &end, 10);
	if (errno || end != name + len - 1 || end == name + 6)
		return -EIO;
	*ino = v;
	return 0;
}

/*
 * Does the address space found to match still live?  One pagemap entry
 * read through cache's mm: an execve gives the thread a new address space,
 * and the old one's descriptor reads nothing from then on, unless another
 * process shares it (clone(CLONE_VM) without CLONE_THREAD) and keeps it
 * alive.  So this stands in for the executable's inode only; the layout,
 * which every exec makes anew under address-space randomisation, is read
 * at each call all the same.  The entry (page 0's) is read from the page
 * tables: no page of the client is touched or faulted in.
 */
static bool same_program(struct uaccess_status *cache)
{
	uint64_t entry;

	/* mm_matched: mm is open (mm_open() and uaccess_status_fini() clear it) */
	return cache->mm_matched &&
	       pread(cache->mm, &entry, sizeof(entry), 0) == (ssize_t)sizeof(entry);
}

/* cache's mm, opened again before the program is read: what it holds is what is read next. */
static void mm_open(struct uaccess_status *cache)
{
	close_fd(&cache->mm);
	cache->mm_matched = false;
	cache->mm = openat(cache->dir, "pagemap", O_RDONLY | O_CLOEXEC); /* -1: no probe */
}

static int snap_read(struct uaccess_status *cache, pid_t tid, struct snap *s, bool full)
{
	/* a thread read before through cache: its memory is worth a descriptor */
	bool kept = cache->tid == tid && cache->dir >= 0;
	int err;

	s->size = 4096;
	s->text = malloc(s->size);
	if (!s->text)
		return -ENOMEM;
	err = tid > 0 ? status_open(cache, tid) : -ESRCH;
	if (!err)
		err = read_status_text(cache, s);
	if (err == -ESRCH && cache->tid == tid) {
		uaccess_status_fini(cache); /* a kept descriptor of a thread gone: once more */
		err = status_open(cache, tid);
		if (!err)
			err = read_status_text(cache, s);
	}
	if (!err)
		err = read_userns(cache, &s->userns);
	if (!err && full && kept && same_program(cache)) {
		s->same_program = true;
	} else if (!err && full) {
		if (kept)
			mm_open(cache);
		err = read_inode(cache, "exe", &s->exe_dev, &s->exe_ino);
	}
	if (!err && full)
		err = read_layout(cache, s);
	if (!err && full)
		err = read_lsm(cache, s);
	return err;
}

int uaccess_ident_read(struct uaccess_status *cache, pid_t tid, struct uaccess_ident *ret)
{
	struct snap s = { 0 };
	int err = snap_read(cache, tid, &s, true);
	int pidfd;

	if (err)
		goto out;
	pidfd = syscall(SYS_pidfd_open, s.c.tgid, 0);
	if (pidfd < 0) {
		err = -errno;
		goto out;
	}
	*ret = (struct uaccess_ident){ .c = s.c,
				       .userns = s.userns,
				       .exe_dev = s.exe_dev,
				       .exe_ino = s.exe_ino,
				       .lsm_len = s.lsm_len,
				       .pidfd = pidfd };
	ret->groups = malloc(s.c.groups_len + 1);
	if (!ret->groups) {
		close(pidfd);
		err = -ENOMEM;
		goto out;
	}
	memcpy(ret->groups, s.text + s.c.groups_off, s.c.groups_len);
	memcpy(ret->layout, s.layout, sizeof(s.layout));
	memcpy(ret->lsm, s.lsm, s.lsm_len);
out:
	snap_fini(&s);
	return err;
}

int uaccess_getfd(pid_t tid, int fd)
{
	struct uaccess_status cache;
	struct snap s = { 0 };
	int pidfd, ret;

	if (fd < 0)
		return -EBADF;
	uaccess_status_init(&cache);
	ret = snap_read(&cache, tid, &s, false);
	pidfd = ret ? -1 : syscall(SYS_pidfd_open, s.c.tgid, 0);
	if (!ret && pidfd < 0)
		ret = -errno;
	snap_fini(&s);
	uaccess_status_fini(&cache);
	if (ret)
		return ret;
	/* the process's table: the caller's, unless it unshared its files */
	ret = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (ret < 0)
		ret = -errno;
	close(pidfd);
	return ret;
}

void uaccess_ident_fini(struct uaccess_ident *id)
{
	free(id->groups);
	id->groups = NULL;
	if (id->pidfd >= 0)
		close(id->pidfd);
	id->pidfd = -1;
}

/* Is the process of id still alive?  While it is, its tgid is its own. */
static bool process_alive(const struct uaccess_ident *id)
{
	return id->pidfd >= 0 &&
	       (syscall(SYS_pidfd_send_signal, id->pidfd, 0, NULL, 0) == 0 || errno == EPERM);
}

/*
 * Is the thread of cache, read as s, in id's process?  Its tgid is the
 * process's and that process lives; once seen, for as long as cache's
 * /proc/TID reads: a thread that exits leaves it saying ESRCH, even if its
 * number is taken again, so a thread still read there is the one seen in
 * the live process, which lives while it does.
 */
static bool same_process(struct uaccess_status *cache, const struct snap *s,
			 const struct uaccess_ident *id)
{
	if (s->c.tgid != id->c.tgid)
		return false;
	if (!cache->alive_seen)
		cache->alive_seen = process_alive(id);
	return cache->alive_seen;
}

/* What differs between s, read through cache, and id, or NULL. */
static const char *differs(struct uaccess_status *cache, const struct snap *s,
			   const struct uaccess_ident *id, bool any_process)
{
	const struct creds *a = &s->c, *b = &id->c;

	if (!any_process && !same_process(cache, s, id))
		return "another process";
	if (memcmp(a->uid, b->uid, sizeof(a->uid)) || memcmp(a->gid, b->gid, sizeof(a->gid)))
		return "user or group ids changed";
	if (a->groups_len != b->groups_len ||
	    memcmp(s->text + a->groups_off, id->groups, a->groups_len))
		return "supplementary groups changed";
	if (a->cap_inh != b->cap_inh || a->cap_prm != b->cap_prm || a->cap_eff != b->cap_eff ||
	    a->cap_bnd != b->cap_bnd || a->cap_amb != b->cap_amb)
		return "capability sets changed";
	if (a->no_new_privs != b->no_new_privs)
		return "no_new_privs changed";
	if (s->userns != id->userns)
		return "another user namespace";
	if (!any_process &&
	    (memcmp(s->layout, id->layout, sizeof(s->layout)) ||
	     (!s->same_program && (s->exe_dev != id->exe_dev || s->exe_ino != id->exe_ino))))
		return "a new program (execve)";
	if (s->lsm_len != id->lsm_len || memcmp(s->lsm, id->lsm, s->lsm_len))
		return "LSM label changed";
	return NULL;
}

int uaccess_ident_match(struct uaccess_status *cache, pid_t tid, const struct uaccess_ident *id,
			bool any_process, const char **why)
{
	struct snap s = { 0 };
	int err = snap_read(cache, tid, &s, true);

	*why = NULL;
	if (err)
		*why = "its credentials cannot be read";
	else if (!id->groups)
		*why = "the opener's credentials could not be read";
	else
		*why = differs(cache, &s, id, any_process);
	/* matched as read after mm was opened: later calls probe it instead */
	if (!*why && !s.same_program && cache->mm >= 0 && !any_process)
		cache->mm_matched = true;
	else if (*why)
		cache->mm_matched = false;
	snap_fini(&s);
	/* the daemon short of memory or descriptors: not the caller's fault */
	if (err == -ENOMEM || err == -EMFILE || err == -ENFILE)
		return err;
	return *why ? -EPERM : 0;
}

bool uaccess_capable(pid_t tid, unsigned cap)
{
	struct uaccess_status cache;
	struct snap s = { 0 };
	bool yes;

	uaccess_status_init(&cache);
	/* capable() asks the initial user namespace: CapEff counts only there */
	yes = snap_read(&cache, tid, &s, false) == 0 && s.userns == CREDS_INIT_USER_NS &&
	      creds_has_cap(&s.c, cap);
	snap_fini(&s);
	uaccess_status_fini(&cache);
	return yes;
}

/* The call tid sleeps in, and its first three arguments: 0 or -errno. */
static int read_syscall(pid_t tid, unsigned long long *nr, unsigned long long *buf,
			unsigned long long *cnt)
{
	char path[64], line[256];
	unsigned long long fd;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fgets(line, sizeof(line), f) ? sscanf(line, "%llu %llx %llx %llx", nr, &fd, buf, cnt)
					 : 0;
	fclose(f);
	/* "running" until the thread has gone to sleep in its call */
	return n == 4 ? 0 : -EAGAIN;
}

int uaccess_call_count(pid_t tid, bool write, uint64_t *ret)
{
	unsigned long long nr, buf, cnt;
	int err;

	/* our own thread's file shows the read() of that very file */
	if (tid == gettid())
		return -EINVAL;
	err = read_syscall(tid, &nr, &buf, &cnt);
	if (err)
		return err;
	if (write ? nr != SYS_write && nr != SYS_pwrite64 : nr != SYS_read && nr != SYS_pread64)
		return -EINVAL;
	*ret = cnt;
	return 0;
}

uint64_t uaccess_user_limit(void)
{
	void *low = (void *)(1ull << 47);
	/* only five-level page tables map anything at or past 2^47 */
	void *p = mmap(low, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		       0);

	if (p != low) {
		if (p != MAP_FAILED)
			munmap(p, 4096);
		return (1ull << 47) - 4096;
	}
	munmap(p, 4096);
	return (1ull << 56) - 4096;
}

#define MAPPED_CHUNK 512 /* pages looked at in one process_vm_readv() */

bool uaccess_mapped(pid_t tid, uint64_t addr, uint64_t len)
{
	struct iovec remote[MAPPED_CHUNK], local;
	char sink[MAPPED_CHUNK];
	uint64_t at = addr, end = addr + len;

	if (end < addr)
		return false;
	while (at < end) {
		unsigned n = 0;

		for (; n < MAPPED_CHUNK && at < end; n++) {
			remote[n] = (struct iovec){ (void *)(uintptr_t)at, 1 };
			at = (at | 4095) + 1;
		}
		local = (struct iovec){ sink, n };
		if (process_vm_readv(tid, &local, 1, remote, n, 0) != (ssize_t)n)
			return false;
	}
	return true;
}

int uaccess_read_buffer(pid_t tid, uint64_t *ret, bool *vector)
{
	unsigned long long nr, buf, cnt;
	int err = read_syscall(tid, &nr, &buf, &cnt);

	if (err)
		return err;
	switch (nr) {
	case SYS_read:
	case SYS_pread64:
		*ret = buf;
		*vector = false;
		return 0;
	case SYS_readv:
	case SYS_preadv:
	case SYS_preadv2:
		/* the header starts the first buffer, as for each sg_read() of
		 * a readv() on sg */
		if (!cnt)
			return -EFAULT;
		*ret = buf;
		*vector = true;
		return 0;
	default:
		return -EINVAL;
	}
}

int uaccess_vector_base(pid_t tid, uint64_t iov, uint64_t *ret)
{
	struct iovec v;
	int err = uaccess_read(tid, iov, &v, sizeof(v));

	if (err)
		return err;
	*ret = (uintptr_t)v.iov_base;
	return 0;
}

bool uaccess_direct_possible(void)
{
	char line[256];
	unsigned long long caps = 0;
	int scope = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	/* Yama's scope 3 forbids attaching for everyone, root included */
	return (caps >> CAP_SYS_PTRACE_BIT & 1) && scope < 3;
}
