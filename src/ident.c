// SPDX-License-Identifier: GPL-2.0-only
/*
 * A caller's identity, read from /proc/TID while its thread is blocked in
 * its call: its security context (ident_read()), checked again at each
 * later call (ident_match()), its capabilities, its process.  Every file is
 * read through a struct ident_cache, which keeps that /proc/TID open from
 * one call to the next; creds.c parses the texts.  Any thread.
 */
#include "ident.h"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

void ident_cache_init(struct ident_cache *cache)
{
	*cache = (struct ident_cache){ .tid = 0,
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

void ident_cache_fini(struct ident_cache *cache)
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
static int status_open(struct ident_cache *cache, pid_t tid)
{
	char path[64];

	if (cache->tid == tid && cache->dir >= 0)
		return 0;
	ident_cache_fini(cache);
	snprintf(path, sizeof(path), "/proc/%d", tid);
	cache->dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cache->dir < 0)
		return -errno;
	cache->tid = tid;
	return 0;
}

/* *fd: name under cache's /proc/TID, opened once. */
static int file_fd(struct ident_cache *cache, int *fd, const char *name)
{
	if (*fd < 0)
		*fd = openat(cache->dir, name, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

int ident_tgid(struct ident_cache *cache, pid_t tid, pid_t *ret)
{
	char text[1024], *p;
	ssize_t n;
	long v;
	int err;

	/* the directory of a thread that has exited finds nothing, even if
	 * its number is some other thread's by now */
	if (cache->tid == tid && cache->dir >= 0) {
		if (faccessat(cache->dir, "stat", F_OK, 0))
			ident_cache_fini(cache); /* gone: look again */
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

/* One thread's context as procfs shows it now; text holds its status. */
struct snap {
	char *text;
	size_t size;
	struct creds c;
	uint64_t userns, exe_dev, exe_ino;
	uint64_t layout[CREDS_LAYOUT_N];
	uint32_t lsm_len;
	char lsm[IDENT_LSM_MAX];
	bool same_program; /* exe not read: cache's mm still reads (same_program()) */
};

static void snap_fini(struct snap *s)
{
	free(s->text);
}

static int read_status_text(struct ident_cache *cache, struct snap *s)
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

static int read_layout(struct ident_cache *cache, struct snap *s)
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
static int read_lsm(struct ident_cache *cache, struct snap *s)
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
static int read_inode(struct ident_cache *cache, const char *name, uint64_t *dev, uint64_t *ino)
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
static int read_userns(struct ident_cache *cache, uint64_t *ino)
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
static bool same_program(struct ident_cache *cache)
{
	uint64_t entry;

	/* mm_matched: mm is open (mm_open() and ident_cache_fini() clear it) */
	return cache->mm_matched &&
	       pread(cache->mm, &entry, sizeof(entry), 0) == (ssize_t)sizeof(entry);
}

/* cache's mm, opened again before the program is read: what it holds is what is read next. */
static void mm_open(struct ident_cache *cache)
{
	close_fd(&cache->mm);
	cache->mm_matched = false;
	cache->mm = openat(cache->dir, "pagemap", O_RDONLY | O_CLOEXEC); /* -1: no probe */
}

static int snap_read(struct ident_cache *cache, pid_t tid, struct snap *s, bool full)
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
		ident_cache_fini(cache); /* a kept descriptor of a thread gone: once more */
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

int ident_read(struct ident_cache *cache, pid_t tid, struct ident *ret)
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
	*ret = (struct ident){ .c = s.c,
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

void ident_fini(struct ident *id)
{
	free(id->groups);
	id->groups = NULL;
	if (id->pidfd >= 0)
		close(id->pidfd);
	id->pidfd = -1;
}

/* Is the process of id still alive?  While it is, its tgid is its own. */
static bool process_alive(const struct ident *id)
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
static bool same_process(struct ident_cache *cache, const struct snap *s, const struct ident *id)
{
	if (s->c.tgid != id->c.tgid)
		return false;
	if (!cache->alive_seen)
		cache->alive_seen = process_alive(id);
	return cache->alive_seen;
}

/* What differs between s, read through cache, and id, or NULL. */
static const char *differs(struct ident_cache *cache, const struct snap *s, const struct ident *id,
			   bool any_process)
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

int ident_match(struct ident_cache *cache, pid_t tid, const struct ident *id, bool any_process,
		const char **why)
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

bool ident_capable(pid_t tid, unsigned cap)
{
	struct ident_cache cache;
	struct snap s = { 0 };
	bool yes;

	ident_cache_init(&cache);
	/* capable() asks the initial user namespace: CapEff counts only there */
	yes = snap_read(&cache, tid, &s, false) == 0 && s.userns == CREDS_INIT_USER_NS &&
	      creds_has_cap(&s.c, cap);
	snap_fini(&s);
	ident_cache_fini(&cache);
	return yes;
}
