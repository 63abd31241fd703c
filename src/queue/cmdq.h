/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opener's command queue (cmdq.c), as the rest of the node sees it: the
 * commands of one open file, written or kept from an interrupted SG_IO,
 * until they are read, and what the file's end, its target's end and the
 * informational ioctls need of them.  Its front ends (async.c: write(),
 * read(), poll(); sgv4.c: SG_IOSUBMIT, SG_IORECEIVE, SG_IOABORT) use the
 * queue's insides through cmdq_i.h.
 */
#ifndef CUSE_BSG_CMDQ_H
#define CUSE_BSG_CMDQ_H

#include <scsi/sg.h>
#include <stdbool.h>
#include <sys/types.h>

struct bsgdev;
struct cmd;
struct opener;
struct scsi_cmd;
struct share;
struct share_file;

/* The target's done function: a command on an opener's target queue ended. */
void cmdq_target_done(struct scsi_cmd *c, int err);

/*
 * SG_SET_KEEP_ORPHAN: an interrupted SG_IO's result is read() later.
 * cmdq_may_keep() says whether it may be: only a command its opener's
 * context issued, as only that context may take it (logged if not: the
 * command is dropped, as without the setting).  cmdq_keep() puts the
 * running cmd on its opener's list (from the interrupt callback, before it
 * decides) if the file's queue has room for it, as sg's SG_IO holds one of
 * the file's slots (false: dropped); cmdq_unkeep() takes it back
 * if the worker answered first, cmdq_kept_done() completes it.
 */
bool cmdq_may_keep(struct cmd *cmd);
bool cmdq_keep(struct cmd *cmd);
void cmdq_unkeep(struct cmd *cmd);
void cmdq_kept_done(struct cmd *cmd, int err);

/*
 * On a binding to an sg descriptor (d->slots_shared) SG_IO and written
 * commands share its 16 slots.  cmdq_slot_take() waits, before cmd runs,
 * while written ones hold the slots, ahead of written ones still queued;
 * false if the call's signal ended it meanwhile.  cmdq_slot_give() after.
 * Elsewhere both do nothing.
 */
bool cmdq_slot_take(struct cmd *cmd);
void cmdq_slot_give(struct opener *o);

/*
 * d->target_gone was just set by d->gone(): answer every opener's parked
 * reads and writes with ENODEV and wake its pollers (POLLHUP).
 */
void cmdq_target_gone(struct bsgdev *d);

/*
 * The file is gone: drop the unread completions, orphan the running
 * commands (their results are freed unread), release the file's reference.
 * Touches no user memory.
 */
void cmdq_release(struct opener *o);

/*
 * o's file counts in the share of threads sf of uid's (share.h): a copy into
 * one of its parked readers holds a share of it, and waits parked, with no
 * thread, past it.  Before o's first call.
 */
void cmdq_set_share(struct opener *o, struct share *s, struct share_file *sf, uid_t uid);

/* For SG_GET_NUM_WAITING, SG_GET_PACK_ID, SG_GET_REQUEST_TABLE. */
int cmdq_num_waiting(struct opener *o);
int cmdq_pack_id(struct opener *o);
void cmdq_request_table(struct opener *o, struct sg_req_info *t, unsigned n);

#endif /* CUSE_BSG_CMDQ_H */
