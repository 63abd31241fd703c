/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One SCSI command of an opener, below both of the node's paths: SG_IO
 * (sgio.c) and the asynchronous interface (async.c) make, run and finish
 * it with these.  Each returns 0 or -errno unless it says otherwise.
 */
#ifndef CUSE_BSG_CMD_H
#define CUSE_BSG_CMD_H

#include <errno.h>
#include <scsi/sg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "intr.h"
#include "list.h"
#include "pool.h"
#include "scsi.h"
#include "share.h"

struct bsgdev;
struct fuse_req; /* libfuse's fuse_req_t */
struct opener;

/*
 * Who answers a SG_IO (struct cmd's state): the worker (COMPLETING) or the
 * interrupt, which drops the result (INTERRUPTED) or, under
 * SG_SET_KEEP_ORPHAN, leaves it for read() through the opener's queue (KEPT).
 */
enum sgio_state { SGIO_RUNNING, SGIO_COMPLETING, SGIO_INTERRUPTED, SGIO_KEPT };

/* One command, synchronous (SG_IO) or asynchronous (write/read). */
struct cmd {
	struct pool_work work;
	struct opener *o;
	struct list_head node; /* async: in the opener's cmds, submission order */
	struct list_head pend; /* async: in a write's batch, then maybe the opener's pend */
	bool done;	       /* async: the target answered */
	bool aborted;	       /* async: SG_IOABORT named it before it was done */
	pid_t owner;	       /* async: the process whose calls may take it; 0: any */
	int tag;	       /* async: its generated_tag, per opener */
	unsigned mrq;	       /* async: the blocking SG_IOSUBMIT array it is in, or 0 */
	unsigned mrq_ind;      /* async: and its place in that array */
	int err;	       /* async: the target's SG_IO errno, or 0 */
	uint32_t duration;     /* ms from the call to the target's answer, or CMD_NO_DURATION */
	struct bsgdev *d;
	int chan;	   /* the opener's channel to the target; -1: opener_chan() at the run */
	unsigned chan_idx; /* async: which of its opener's channels (opener.h) */
	struct target_queue *tq; /* async: that channel's target queue, or NULL */
	struct fuse_req *req;
	uint64_t arg; /* the client's header */
	pid_t tid;
	bool direct;
	bool reused;	  /* c.data is one its opener kept: it may hold an earlier command's data */
	uint32_t buf_len; /* c.data's size, from a page up: what cmd_recycle_data() keeps */
	uint32_t charged; /* c.data's bytes charged to o and the process (mem_budget) */
	atomic_int
		state; /* SG_IO: who answers req, the worker or the interrupt (enum sgio_state) */
	struct intr intr;	/* SG_IO: its interrupt (intr.h), set by sgio.c */
	struct share_call call; /* SG_IO run by a pool: its caller's share, ended with its run */
	struct timespec start;	/* when its call came (TICK_CLOCK) */
	struct timespec sent;	/* when it went to the target (stat_target_start()) */
	struct scsi_req r;
	struct scsi_cmd c;
	unsigned nsegs;
	struct scsi_seg segs[]; /* data, in client memory */
};

bool cmd_reads_data(const struct scsi_req *r);
bool cmd_writes_data(const struct scsi_req *r);
/* Does r fit d's transfer limits, on the direct path or the retry exchange's? */
int cmd_check_limits(const struct bsgdev *d, bool direct, const struct scsi_req *r);
/*
 * A command of o for the decoded header r, sent by thread tid, with its
 * data buffer (one o kept, or a new one charged to o), holding a
 * reference to o.
 */
int cmd_new(struct opener *o, const struct scsi_req *r, pid_t tid, struct cmd **ret);
void cmd_free(struct cmd *cmd);
/*
 * The same, but a large data buffer goes back to cmd->o for its next
 * command (opener.h, OPENER_BUFS).  Only while cmd->o is sure to live: a
 * command of its queue, or a call still in flight on the file.
 */
void cmd_recycle(struct cmd *cmd);
void cmd_recycle_data(struct cmd *cmd);
/*
 * The target has answered: in a reused buffer, zero the data-in the device
 * left (resid bytes at the end), where a new buffer has its zeroes.
 */
void cmd_clear_tail(struct cmd *cmd);
/* Data segments from the client's sg_iovec array uiov (v3), or the flat buffer. */
int cmd_set_segs(struct cmd *cmd, const struct sg_iovec *uiov);
/* The iovec array, CDB and data-out, from cmd->tid's memory. */
int cmd_fetch(struct cmd *cmd);
/* Data-in and sense_len bytes of sense into tid's memory. */
int cmd_put_data(struct cmd *cmd, pid_t tid, unsigned sense_len);
/* SG_IO on the opener's channel: 0 or the target's -errno (a device gone is noted). */
int cmd_run_target(struct cmd *cmd);
/* The access policy for cmd's CDB and opener: 0, or -EPERM (logged). */
int cmd_check_access(struct cmd *cmd, bool by_write);
/* How a CDB came: the kernel's rule differs (filter.h). */
enum cmd_via { CMD_VIA_SG_IO, CMD_VIA_WRITE, CMD_VIA_SCSI_IOCTL };
/* The same for a CDB o's caller tid (blocked in its call) sends otherwise. */
int cmd_allowed(struct opener *o, pid_t tid, const uint8_t *cdb, unsigned cdb_len,
		enum cmd_via via);
/* The target said err (< 0) for a command: note a device that is gone.  Returns err. */
int cmd_target_failed(struct bsgdev *d, int err);
uint32_t cmd_elapsed_ms(const struct timespec *start);

/* Not an errno: the watchdog answered the request (guard.h); answer nothing. */
#define CMD_ANSWERED (-ECANCELED)

#define CMD_NO_DURATION UINT32_MAX /* the command has not come back from the target */

/* cmd's duration: as the target's answer stamped it, or until now. */
uint32_t cmd_duration(struct cmd *cmd);
/* One debug line: the command, its result ret. */
void cmd_log(const struct cmd *cmd, int ret);

#endif /* CUSE_BSG_CMD_H */
