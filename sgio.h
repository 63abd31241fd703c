/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Synchronous SG_IO through the node, v3 or v4.  A command moves:
 * ioctl callback (decode, copy in) -> the same libfuse worker, or the pool
 * when too many of those are busy -> SG_IO on the target, copy out, reply.  The caller stays blocked in its ioctl throughout, so its
 * memory may be touched until the reply; an interrupt ends the call with
 * EINTR at once and the command's result is dropped, never copied.
 */
#ifndef CUSE_BSG_SGIO_H
#define CUSE_BSG_SGIO_H

#include <errno.h>
#include <time.h>

#include "list.h"
#include "uaccess.h"

/*
 * Who answers a SG_IO: the worker (COMPLETING) or the interrupt, which
 * drops the result (INTERRUPTED) or, under SG_SET_KEEP_ORPHAN, leaves it
 * for read() (KEPT).
 */
enum sgio_state { SGIO_RUNNING, SGIO_COMPLETING, SGIO_INTERRUPTED, SGIO_KEPT };

/* One command, synchronous (SG_IO) or asynchronous (write/read). */
struct sgio_cmd {
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
	uint32_t duration;     /* ms from the call to the target's answer, or SGIO_NO_DURATION */
	struct daemon *d;
	int chan; /* the opener's channel to the target */
	fuse_req_t req;
	uint64_t arg; /* the client's header */
	pid_t tid;
	bool direct;
	bool reused;	  /* c.data is one its opener kept: it may hold an earlier command's data */
	uint32_t buf_len; /* c.data's size, from a page up: what sgio_recycle_data() keeps */
	uint32_t charged; /* c.data's bytes charged to o and the process (mem_budget) */
	atomic_int state; /* who answers req: the worker or the interrupt */
	struct timespec start;
	struct scsi_req r;
	struct scsi_cmd c;
	unsigned nsegs;
	struct scsi_seg segs[]; /* data, in client memory */
};

/* Handle one FUSE_IOCTL round of SG_IO.  Always replies, now or later. */
void sgio_ioctl(struct ioctx *x);

/* Pieces the asynchronous interface shares.  Each returns 0 or -errno. */
bool sgio_reads_data(const struct scsi_req *r);
bool sgio_writes_data(const struct scsi_req *r);
int sgio_check_limits(const struct daemon *d, bool direct, const struct scsi_req *r);
int sgio_cmd_new(struct opener *o, const struct scsi_req *r, pid_t tid, struct sgio_cmd **ret);
void sgio_cmd_free(struct sgio_cmd *cmd);
/*
 * The same, but a large data buffer goes back to cmd->o for its next
 * command (opener.h, OPENER_BUFS).  Only while cmd->o is sure to live: a
 * command of its queue, or a call still in flight on the file.
 */
void sgio_cmd_recycle(struct sgio_cmd *cmd);
void sgio_recycle_data(struct sgio_cmd *cmd);
/*
 * The target has answered: in a reused buffer, zero the data-in the device
 * left (resid bytes at the end), where a new buffer has its zeroes.
 */
void sgio_clear_tail(struct sgio_cmd *cmd);
/* The iovec array, CDB and data-out, from cmd->tid's memory. */
int sgio_fetch(struct sgio_cmd *cmd);
/* Data-in and sense_len bytes of sense into tid's memory. */
int sgio_put_data(struct sgio_cmd *cmd, pid_t tid, unsigned sense_len);
int sgio_run_target(struct sgio_cmd *cmd);
/* The access policy for cmd's CDB and opener: 0, or -EPERM (logged). */
int sgio_check_access(struct sgio_cmd *cmd, bool by_write);
/* The same for a CDB o's caller tid (blocked in its call) sends otherwise. */
int sgio_allowed(struct opener *o, pid_t tid, const uint8_t *cdb, unsigned cdb_len, bool by_write);
/* The target said err (< 0) for a command: note a device that is gone.  Returns err. */
int sgio_target_failed(struct daemon *d, int err);
uint32_t sgio_elapsed_ms(const struct timespec *start);

/* Not an errno: the watchdog answered the request (guard.h); answer nothing. */
#define SGIO_ANSWERED (-ECANCELED)

#define SGIO_NO_DURATION UINT32_MAX /* the command has not come back from the target */

/* cmd's duration: as the target's answer stamped it, or until now. */
uint32_t sgio_duration(struct sgio_cmd *cmd);
void sgio_log_cmd(const struct sgio_cmd *cmd, int ret);

#endif /* CUSE_BSG_SGIO_H */
