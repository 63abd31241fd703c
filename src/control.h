/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control node (--control): one node whose open files start bound to
 * nothing.  BSG_IOC_ADD, given a descriptor number of the caller, binds the
 * file to the device that descriptor is open on (an sg or bsg node or a
 * whole SCSI disk), as the 2004 bsg driver's /dev/bsg did; from then on the
 * file is an opener of that device exactly as on a per-device node.
 *
 * Each binding has its own struct bsgdev (target, counters, resolver) and
 * shares the control node's workers, copy watchdog and memory bound.  Its
 * target is a duplicate of the caller's descriptor, taken with
 * pidfd_getfd() while the caller is blocked in its ioctl: commands go with
 * the rights of that open file, and the command filter is applied to its
 * open mode and the caller's capabilities, as the kernel would.
 */
#ifndef CUSE_BSG_CONTROL_H
#define CUSE_BSG_CONTROL_H

#include <stdint.h>
#include <sys/types.h>

#include "cuse_bsg/control.h" /* BSG_IOC_ADD: the clients' header, installed */

struct bsgdev;
struct ioctx;
struct opener;

struct control;
struct control_file;

/* The state of control node cd (its pool, watchdog and settings are the bindings'). */
int control_new(struct bsgdev *cd, struct control **ret);

/* After the node's session has ended, before cd's pools go: stop what the bindings run. */
void control_stop(struct control *c);

/*
 * After the pools: free the bindings no opener holds any more, and c.  A
 * binding still held (a file open when the daemon stops) is left.
 */
void control_free(struct control *c);

/* A new unbound file opened with flags by thread tid: 0, or the positive errno to answer. */
int control_open(struct control *c, pid_t tid, int flags, struct control_file **ret);

/* The file is gone: its opener is released as on any node.  Touches no user memory. */
void control_release(struct control *c, struct control_file *f);

/*
 * f's share of threads (share.h), which copies into its binding's parked
 * readers hold, and its handle fh as FUSE gives it (the witness's key,
 * gate.h): set once, before the file's first call.
 */
struct share;
struct share_file;
void control_set_share(struct control_file *f, struct share *s, struct share_file *sf, uid_t uid,
		       uint64_t fh);

/* The opener f is bound to, or NULL before BSG_IOC_ADD. */
struct opener *control_opener(struct control_file *f);

/*
 * What call (a read(), a write() or an ioctl that takes the file's
 * commands) by thread tid on f, not bound yet, gets: ENXIO, or EPERM from
 * another security context than the opener's where the kernel made sg's
 * test (the LSM gate refused it before it came; the witness's verdict is
 * read here), so that every mode answers it as the kernel gate does.
 * Negative.
 */
int control_unbound(struct control *c, struct control_file *f, pid_t tid, const char *call);

/*
 * An ioctl on f, answering x: BSG_IOC_ADD binds f (EBUSY, ENODEV, EINVAL,
 * ENOTBLK, ...); before that anything else gets ENXIO; after, a disk's
 * informational block-device ioctls (BLKGETSIZE64, BLKSSZGET, ...) are
 * passed on to it, as bsg's control node did, and the rest is answered as
 * on any node.
 */
void control_ioctl(struct control *c, struct control_file *f, struct ioctx *x, unsigned cmd,
		   unsigned flags);

#endif /* CUSE_BSG_CONTROL_H */
