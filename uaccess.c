// SPDX-License-Identifier: GPL-2.0-only
/*
 * Client memory access.  process_vm_readv/writev take the calling thread's
 * id, which is what fuse_req_ctx() gives.  A short transfer means a fault
 * part-way, which the kernel would report as EFAULT too.
 */
#include "uaccess.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19
#define CHUNK		   64 /* remote segments per system call */

static int vm_errno(int err)
{
	return err == EPERM ? -EPERM : -EFAULT; /* ESRCH: the caller is gone */
}

static int xfer(pid_t tid, const struct scsi_seg *segs, unsigned n, void *buf, bool write)
{
	struct iovec remote[CHUNK], local;
	char *p = buf;

	for (unsigned i = 0; i < n; i += CHUNK) {
		unsigned k = n - i < CHUNK ? n - i : CHUNK;
		size_t want = 0;
		ssize_t got;

		for (unsigned j = 0; j < k; j++) {
			remote[j].iov_base = (void *)(uintptr_t)segs[i + j].addr;
			remote[j].iov_len = segs[i + j].len;
			want += segs[i + j].len;
		}
		local.iov_base = p;
		local.iov_len = want;
		got = write ? process_vm_writev(tid, &local, 1, remote, k, 0)
			    : process_vm_readv(tid, &local, 1, remote, k, 0);
		if (got < 0)
			return vm_errno(errno);
		if ((size_t)got != want)
			return -EFAULT;
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

/* Up to max decimal ids from v, before lim (the line's end). */
static int parse_ids(const char *v, const char *lim, unsigned *ids, unsigned max)
{
	unsigned n = 0;
	char *end;

	while (n < max) {
		unsigned long id = strtoul(v, &end, 10);

		if (end == v || end > lim)
			break;
		ids[n++] = id;
		v = end;
	}
	return n;
}

/*
 * The open status file whole into buf, NUL-terminated: its length, or
 * -errno.  procfs makes the whole text at each read from another offset, so
 * a read shorter than asked is taken as the end: asking again for the zero
 * bytes after it would cost as much as the first read.
 */
static ssize_t pread_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n = 1;

	while (len < size - 1 && (n = pread(fd, buf + len, size - 1 - len, len)) > 0) {
		len += n;
		if ((size_t)n < size - 1 - (len - n))
			break;
	}
	if (n < 0)
		return -errno;
	buf[len] = '\0';
	return len;
}

static int open_status(pid_t tid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * /proc/TID/status into buf, through cache's descriptor when it is tid's:
 * a second read of a procfs file regenerates it, and a descriptor of a
 * thread that has exited says ESRCH, never another thread's state.
 */
static ssize_t read_status(struct uaccess_status *cache, pid_t tid, char *buf, size_t size)
{
	ssize_t len = -ESRCH;
	int fd;

	if (cache && cache->tid == tid && cache->fd >= 0)
		len = pread_all(cache->fd, buf, size);
	if (len >= 0)
		return len;
	fd = open_status(tid);
	if (fd < 0)
		return fd;
	len = pread_all(fd, buf, size);
	if (!cache || len < 0) {
		close(fd);
		return len;
	}
	if (cache->fd >= 0)
		close(cache->fd);
	cache->fd = fd;
	cache->tid = tid;
	return len;
}

void uaccess_status_init(struct uaccess_status *cache)
{
	cache->fd = -1;
	cache->tid = 0;
}

void uaccess_status_fini(struct uaccess_status *cache)
{
	if (cache->fd >= 0)
		close(cache->fd);
	cache->fd = -1;
}

/*
 * The text after "\nKEY" in the status text, searched from *from on, and
 * its line's end in *lim; *from moves there, as procfs writes the fields in
 * a fixed order (Uid, Gid, Groups, ..., CapEff).  NULL if absent.
 */
static const char *status_field(const char *buf, size_t len, size_t *from, const char *key,
				const char **lim)
{
	size_t klen = strlen(key);
	const char *p = memmem(buf + *from, len - *from, key, klen), *nl;

	if (!p)
		return NULL;
	p += klen;
	nl = memchr(p, '\n', buf + len - p);
	*lim = nl ? nl : buf + len;
	*from = *lim - buf;
	return p;
}

/*
 * Called twice per asynchronous command: four searches of the text, no
 * stdio, no sscanf and no pass line by line, as the file has some sixty
 * lines and four are wanted (under TCG a pass line by line cost a third
 * to a half of what the read itself costs).
 */
int uaccess_parse_status(const char *buf, size_t len, struct creds *ret)
{
	struct creds c = { 0 };
	const char *v, *lim;
	size_t at = 0;

	v = status_field(buf, len, &at, "\nUid:", &lim);
	if (!v || parse_ids(v, lim, c.uid, 4) != 4)
		return -ESRCH;
	v = status_field(buf, len, &at, "\nGid:", &lim);
	if (!v || parse_ids(v, lim, c.gid, 4) != 4)
		return -ESRCH;
	v = status_field(buf, len, &at, "\nGroups:", &lim);
	if (!v)
		return -ESRCH;
	c.ngroups = parse_ids(v, lim, c.groups, CREDS_MAX_GROUPS);
	v = status_field(buf, len, &at, "\nCapEff:", &lim);
	if (!v)
		return -ESRCH;
	c.cap_eff = strtoull(v, NULL, 16);
	*ret = c;
	return 0;
}

int uaccess_creds_cached(struct uaccess_status *cache, pid_t tid, struct creds *ret)
{
	char buf[8192];
	ssize_t len = read_status(cache, tid, buf, sizeof(buf));

	return len < 0 ? (int)len : uaccess_parse_status(buf, len, ret);
}

int uaccess_creds(pid_t tid, struct creds *ret)
{
	return uaccess_creds_cached(NULL, tid, ret);
}

bool uaccess_creds_equal(const struct creds *a, const struct creds *b)
{
	return !memcmp(a->uid, b->uid, sizeof(a->uid)) && !memcmp(a->gid, b->gid, sizeof(a->gid)) &&
	       a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0])) &&
	       a->cap_eff == b->cap_eff;
}

int uaccess_read_buffer(pid_t tid, uint64_t *ret)
{
	char path[64], line[256];
	unsigned long long nr, fd, buf;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fgets(line, sizeof(line), f) ? sscanf(line, "%llu %llx %llx", &nr, &fd, &buf) : 0;
	fclose(f);
	/* "running" until the thread has gone to sleep in its read() */
	if (n != 3 || nr != 0 /* __NR_read on x86_64 */)
		return -EAGAIN;
	*ret = buf;
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

void ioctx_reply(struct ioctx *x, int result)
{
	if (result < 0)
		fuse_reply_err(x->req, -result);
	else
		fuse_reply_ioctl(x->req, result, NULL, 0);
}

void ioctx_retry(struct ioctx *x, const struct iovec *in, size_t n_in, const struct iovec *out,
		 size_t n_out)
{
	stat_inc(x->o->d, STAT_IOCTL_RETRY);
	fuse_reply_ioctl_retry(x->req, in, n_in, out, n_out);
}

int ioctx_fetch(struct ioctx *x, void *buf, size_t len)
{
	struct iovec iov = { (void *)(uintptr_t)x->arg, len };

	if (x->direct) {
		int err = uaccess_read(x->tid, x->arg, buf, len);

		if (!err)
			return 1;
		if (err != -EPERM) {
			ioctx_reply(x, err);
			return 0;
		}
		x->direct = false; /* this caller is out of our reach: let the kernel copy */
	}
	if (x->in_len >= len) {
		memcpy(buf, x->in_buf, len);
		return 1;
	}
	ioctx_retry(x, &iov, 1, NULL, 0);
	return 0;
}

void ioctx_reply_out(struct ioctx *x, int result, const void *buf, size_t len)
{
	struct iovec iov = { (void *)(uintptr_t)x->arg, len };

	if (result < 0) {
		ioctx_reply(x, result);
		return;
	}
	if (x->direct) {
		int err = uaccess_write(x->tid, x->arg, buf, len);

		if (err != -EPERM) {
			ioctx_reply(x, err ? err : result);
			return;
		}
		x->direct = false;
	}
	if (x->out_len < len) {
		ioctx_retry(x, NULL, 0, &iov, 1);
		return;
	}
	fuse_reply_ioctl(x->req, result, buf, len);
}
