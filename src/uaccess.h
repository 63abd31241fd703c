/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Access to a client's memory.  Two ways: directly with process_vm_readv/
 * writev on the calling thread (needs ptrace rights over it), or through the
 * kernel's ioctl retry exchange.  Either is only ever used while that thread
 * is blocked in its own call to us: that is the caller's promise.
 */
#ifndef CUSE_BSG_UACCESS_H
#define CUSE_BSG_UACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "scsi.h"

/* Direct copies.  0, -EFAULT (bad address, thread gone) or -EPERM (no rights). */
int uaccess_read(pid_t tid, uint64_t addr, void *buf, size_t len);
int uaccess_write(pid_t tid, uint64_t addr, const void *buf, size_t len);
int uaccess_readv(pid_t tid, const struct scsi_seg *segs, unsigned n, void *buf);
int uaccess_writev(pid_t tid, const struct scsi_seg *segs, unsigned n, const void *buf);

/* A piece of a gathered write: len bytes at buf to the client's addr. */
struct uaccess_piece {
	uint64_t addr;
	const void *buf;
	size_t len;
};

#define UACCESS_PIECES_MAX 64 /* pieces one system call writes */

/* pieces[0..n) in order, one system call for each UACCESS_PIECES_MAX: as uaccess_write(). */
int uaccess_write_pieces(pid_t tid, const struct uaccess_piece *pieces, unsigned n);

/*
 * A duplicate of descriptor fd of thread tid's process, tid blocked in its
 * call (pidfd_getfd(): the same open file, close-on-exec).  The new
 * descriptor, or -errno: -EBADF for no such descriptor, -EPERM without
 * ptrace rights over it.
 */
int uaccess_getfd(pid_t tid, int fd);

/*
 * Where the header starts in the buffer of the read(), pread(), readv(),
 * preadv() or preadv2() thread tid is blocked in, from /proc/TID/syscall
 * alone: no memory of tid's is read.  *vector false: *ret is the buffer;
 * true: *ret is the vectored call's iovec array, whose first buffer it is
 * (uaccess_vector_base(), during that caller's own call).  0 or -errno:
 * -EAGAIN, not asleep in its call yet; -EINVAL, in another call.
 */
int uaccess_read_buffer(pid_t tid, uint64_t *ret, bool *vector);

/* The first buffer of tid's iovec array at iov (its memory read): 0 or -errno. */
int uaccess_vector_base(pid_t tid, uint64_t iov, uint64_t *ret);

/*
 * How many bytes the read() or pread64() (write: write() or pwrite64())
 * thread tid is blocked in asked for, from /proc/TID/syscall alone.  FUSE
 * hands the daemon only what it could map of the caller's buffer: a count
 * larger than the request's says the rest faulted.  0 or -errno: -EAGAIN,
 * not asleep in its call yet; -EINVAL, in another call (a vectored one).
 */
int uaccess_call_count(pid_t tid, bool write, uint64_t *ret);

/*
 * The end of the user half of an address space, as access_ok() takes it
 * (TASK_SIZE_MAX): 47 bits, or 56 with five-level page tables.
 */
uint64_t uaccess_user_limit(void);

/*
 * Whether every page of len bytes at addr in tid's memory can be read (a
 * byte of each, as bsg's mapping would fault on it).  Only during tid's
 * own call.
 */
bool uaccess_mapped(pid_t tid, uint64_t addr, uint64_t len);

/* True if this process may use the direct copies on other processes. */
bool uaccess_direct_possible(void);

#endif /* CUSE_BSG_UACCESS_H */
