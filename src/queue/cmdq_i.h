/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opener's command queue, inside the asynchronous interface: the
 * commands of one open file (running, then done in completion order), the
 * calls parked on it without a thread, and the hand-over of completions
 * into a caller's memory (cmdq.c).  Its front ends use it through this
 * header: async.c (write(), read(), poll()) and sgv4.c (SG_IOSUBMIT,
 * SG_IORECEIVE, SG_IOABORT).  A parked call carries its own functions
 * (struct parked_ops), so the queue names no front end.  Private to the
 * queue and its front ends, as libfuse keeps fuse_i.h: other modules use
 * cmdq.h.
 *
 * Locking (cmdq.c): o->lock guards the lists, the parked calls and the
 * poll handle; no fuse_reply_*, SG_IO or client copy under it.
 */
#ifndef CUSE_BSG_CMDQ_I_H
#define CUSE_BSG_CMDQ_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bsgdev.h"
#include "cmd.h"
#include "done.h"
#include "list.h"
#include "opener.h"
#include "park.h"
#include "pool.h"
#include "share.h"
#include "sigwatch.h"

struct fuse_req; /* libfuse's fuse_req_t */
struct fuse_pollhandle;

/*
 * The commands one write() took, in order, started once it is answered.
 * Linked through pend, which take_place() reuses once a command leaves.
 */
struct batch {
	struct list_head cmds;
};

/* Who submits: a write() (the opener's process) or an SG_IOSUBMIT of owner's. */
struct origin {
	pid_t owner;
	bool ioctl;
	unsigned mrq, mrq_ind; /* a blocking array's id and the place in it, or 0 */
};

/* How many commands o may have written and not read: for v3 or v4 headers; POLLOUT's. */
unsigned cmdq_queue_limit(struct opener *o, unsigned version);
unsigned cmdq_poll_limit(struct opener *o);

/* Room may have appeared: the writers waiting for it go on, pollers are woken (POLLOUT). */
void cmdq_room(struct opener *o);
/* Serve the parked readers that what is done now satisfies. */
void cmdq_serve_readers(struct opener *o);
/* A completion came: serve o's parked readers on a copy job (their share). */
void cmdq_serve_later(struct opener *o);
/* o->lock held: the poll handle to notify, taken, or NULL; then wake it, no lock. */
struct fuse_pollhandle *cmdq_take_poller(struct opener *o);
void cmdq_wake_poller(struct fuse_pollhandle *ph);

/* A write's or SG_IOSUBMIT's commands, started once its call is answered. */
void cmdq_batch_init(struct batch *b);
void cmdq_batch_start(struct batch *b);
void cmdq_batch_cancel(struct opener *o, struct batch *b);
/*
 * One header into o's queue and into b: 0, -EDOM or -EAGAIN (queue full),
 * CMD_ANSWERED, or the header's errno; *ret_tag, if not NULL, the
 * command's generated_tag.
 */
int cmdq_submit_one(struct opener *o, struct fuse_req *req, pid_t tid, const void *hdr, size_t len,
		    struct batch *b, const struct origin *from, int *ret_tag);
/*
 * A read() or write() of size bytes, fewer than need: err, sg's answer to
 * such a count, unless tid's call asked for need bytes or more.  FUSE
 * passes only what it could map of the caller's buffer, so the rest of
 * that buffer is unmapped, where sg's copy faults: -EFAULT.  Asks
 * /proc/TID/syscall, on this path only, waiting a few milliseconds at most
 * for tid to sleep in its call.
 */
int cmdq_short_call(pid_t tid, bool write, size_t size, size_t need, int err);
/* cmd ended at the target with err (placed: it held a channel's slot). */
void cmdq_complete(struct cmd *cmd, int err, bool placed);

#endif /* CUSE_BSG_CMDQ_I_H */
