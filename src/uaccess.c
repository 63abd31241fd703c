// SPDX-License-Identifier: GPL-2.0-only
/*
 * Client memory access.  process_vm_readv/writev take the calling thread's
 * id, which is what fuse_req_ctx() gives.  A short transfer means a fault
 * part-way, which the kernel would report as EFAULT too.
 */
#include "uaccess.h"
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guard.h"
#include "ident.h"

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

int uaccess_getfd(pid_t tid, int fd)
{
	struct ident_cache cache;
	pid_t tgid;
	int pidfd, ret;

	if (fd < 0)
		return -EBADF;
	if (tid <= 0)
		return -ESRCH;
	ident_cache_init(&cache);
	ret = ident_tgid(&cache, tid, &tgid);
	ident_cache_fini(&cache);
	if (ret)
		return ret;
	pidfd = syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return -errno;
	/* the process's table: the caller's, unless it unshared its files */
	ret = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (ret < 0)
		ret = -errno;
	close(pidfd);
	return ret;
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
