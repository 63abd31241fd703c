/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The asynchronous interface of the node: write() of v3 or v4 headers,
 * read() of their completions, poll(), per opener.  Every call below is a
 * CUSE callback's body and answers its request, now or later: a read with
 * nothing done, or a blocking v4 write with no room, is parked and answered
 * from the thread that completes a command or frees a slot.
 */
#ifndef CUSE_BSG_ASYNC_H
#define CUSE_BSG_ASYNC_H

#include <scsi/sg.h>
#include <stdbool.h>
#include <sys/types.h>

struct bsgdev;
struct fuse_pollhandle;
struct fuse_req; /* libfuse's fuse_req_t */
struct opener;
struct scsi_cmd;
struct share;
struct share_file;

/*
 * Stop what the asynchronous interface runs for d (the resolver of forced
 * pack_ids, the signal watcher), before its pool and session go.  Reads
 * still waiting for theirs take any completion; calls whose signal is
 * still watched get EINTR.
 */
void async_bsgdev_fini(struct bsgdev *d);

void async_write(struct fuse_req *req, struct opener *o, const char *buf, size_t size, int flags);
void async_read(struct fuse_req *req, struct opener *o, size_t size, int flags);
void async_poll(struct fuse_req *req, struct opener *o, struct fuse_pollhandle *ph);

/* The target's done function: a command on an opener's target queue ended. */
void async_target_done(struct scsi_cmd *c, int err);

/*
 * SG_SET_KEEP_ORPHAN: an interrupted SG_IO's result is read() later.
 * async_may_keep() says whether it may be: only a command its opener's
 * context issued, as only that context may take it (logged if not: the
 * command is dropped, as without the setting).  async_keep() puts the
 * running cmd on its opener's list (from the interrupt callback, before it
 * decides) if the file's queue has room for it, as sg's SG_IO holds one of
 * the file's slots (false: dropped); async_unkeep() takes it back
 * if the worker answered first, async_kept_done() completes it.
 */
struct cmd;
bool async_may_keep(struct cmd *cmd);
bool async_keep(struct cmd *cmd);
void async_unkeep(struct cmd *cmd);
void async_kept_done(struct cmd *cmd, int err);

/*
 * On a binding to an sg descriptor (d->slots_shared) SG_IO and written
 * commands share its 16 slots.  async_slot_take() waits, before cmd runs,
 * while written ones hold the slots, ahead of written ones still queued;
 * false if the call's signal ended it meanwhile.  async_slot_give() after.
 * Elsewhere both do nothing.
 */
bool async_slot_take(struct cmd *cmd);
void async_slot_give(struct opener *o);

/*
 * d->target_gone was just set by d->gone(): answer every opener's parked
 * reads and writes with ENODEV and wake its pollers (POLLHUP).
 */
void async_target_gone(struct bsgdev *d);

/*
 * The file is gone: drop the unread completions, orphan the running
 * commands (their results are freed unread), release the file's reference.
 * Touches no user memory.
 */
void async_release(struct opener *o);

/*
 * o's file counts in the share of threads sf of uid's (share.h): a copy into
 * one of its parked readers holds a share of it, and waits parked, with no
 * thread, past it.  Before o's first call.
 */
void async_set_share(struct opener *o, struct share *s, struct share_file *sf, uid_t uid);

/* The node of d ends: its serve jobs parked in s for a share are dropped. */
void async_drain_serve(struct bsgdev *d, struct share *s);

/*
 * The sg v4 driver's asynchronous ioctls (README): SG_IOSUBMIT (version 4)
 * and SG_IOSUBMIT_V3 (3) take one header or, for v4, an array; SG_IORECEIVE
 * and SG_IORECEIVE_V3 answer with completions of the caller's process, now
 * or parked; SG_IOABORT.  Each answers x's request, now or later.
 */
struct ioctx;
void async_iosubmit(struct ioctx *x, unsigned version);
void async_ioreceive(struct ioctx *x, unsigned version);
void async_ioabort(struct ioctx *x);

/* For SG_GET_NUM_WAITING, SG_GET_PACK_ID, SG_GET_REQUEST_TABLE. */
int async_num_waiting(struct opener *o);
int async_pack_id(struct opener *o);
void async_request_table(struct opener *o, struct sg_req_info *t, unsigned n);

#endif /* CUSE_BSG_ASYNC_H */
