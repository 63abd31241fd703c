/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one seam to the hardware.  A target runs a struct scsi_cmd with a real
 * SG_IO on a SCSI pass-through device (sg, sd or bsg), or, in the unit tests,
 * on a fake.  Commands go through a channel: each opener of the node gets its
 * own, a file descriptor of the target, so that per-file kernel state (sg's
 * reserve buffer and what it last held) is never shared between openers.
 * sg_io() is called from several threads at once.
 */
#ifndef CUSE_BSG_TARGET_H
#define CUSE_BSG_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "scsi.h"

enum target_kind {
	TARGET_SG,  /* /dev/sgN, SG_IO v3 */
	TARGET_SD,  /* /dev/sdX whole disk, SG_IO v3 */
	TARGET_BSG, /* /dev/bsg/H:C:T:L, SG_IO v4 */
};

/* What the informational ioctls report; read-only after target_open(). */
struct target_info {
	char path[PATH_MAX];
	enum target_kind kind;
	int host, channel, id, lun; /* H:C:T:L */
	int scsi_type;		    /* peripheral device type */
	int cmd_per_lun, queue_depth, unique_id, emulated;
	uint32_t max_sectors_bytes;  /* BLKSECTGET on sg: the request queue's max_sectors */
	uint32_t max_xfer;	     /* the most one command may move */
	int max_xfer_errno;	     /* the target's errno for a longer transfer */
	int max_segments;	     /* SG_GET_SG_TABLESIZE */
	uint32_t bulk_min, bulk_max; /* transfers in [min, max] go to bulk_path; min 0: none */
	char bulk_path[PATH_MAX];    /* an sg target's bsg node */
	char vendor[9], product[17], revision[5];
	int fd_flags; /* target_from_fd(): the descriptor's open(2) flags; else 0 */
};

struct target;
struct target_queue;

/* Called from the target's completion thread when a queued command ends. */
typedef void target_done_fn(struct scsi_cmd *c, int err);

struct target_ops {
	/* A new channel: a handle >= 0, or -errno (the target's open() errno). */
	int (*chan_open)(struct target *t);
	void (*chan_close)(struct target *t, int chan);
	/* Run c on the target; fill c->res.  0, or the SG_IO ioctl's -errno. */
	int (*sg_io)(struct target *t, int chan, struct scsi_cmd *c);
	/*
	 * An ioctl of the SCSI mid-layer (SG_SCSI_RESET, SCSI_IOCTL_SEND_COMMAND,
	 * SCSI_IOCTL_PROBE_HOST ...) on a descriptor of the target opened for
	 * it, O_NONBLOCK if nonblock (sg and sd wait out error recovery without
	 * it): the ioctl's value, or -errno.  arg is the ioctl's argument, in
	 * our memory.  May block as long as the device takes.
	 */
	int (*ioctl)(struct target *t, unsigned cmd, void *arg, bool nonblock);
	void (*free)(struct target *t);
	/*
	 * Optional, NULL where the target has no queue of its own: sg's
	 * write()/read() interface.  A queue is a channel whose commands start
	 * at once and end on the target's one completion thread, which calls
	 * the done function given to target_queue_start().  queue_submit()
	 * returns 0 (c will be completed) or -errno (it will not).  A queue is
	 * closed only when none of its commands is running; it takes
	 * target_max_queued() of them at a time.
	 */
	int (*queue_open)(struct target *t, struct target_queue **ret);
	void (*queue_close)(struct target *t, struct target_queue *q);
	int (*queue_submit)(struct target *t, struct target_queue *q, struct scsi_cmd *c);
	/*
	 * Optional: c run at once on q's own descriptor, blocking, as sg_io()
	 * does.  It takes one of q's slots while it runs and never comes back
	 * through the completion thread (sg keeps an SG_IO's answer for its
	 * caller).  0 or -errno, as sg_io().
	 */
	int (*queue_sg_io)(struct target *t, struct target_queue *q, struct scsi_cmd *c);
};

struct target {
	const struct target_ops *ops;
	struct target_info info;
};

/*
 * Check that path is a SCSI pass-through device that answers a real INQUIRY,
 * and fill its info.  On failure, returns -errno and writes a reason naming
 * the device to why.
 */
int target_open(const char *path, struct target **ret, char *why, size_t why_len);

/*
 * The same for an open descriptor of the device, which the target then
 * owns: every channel is a duplicate of it, so that commands go with the
 * rights of whoever opened it (no INQUIRY is sent).  -EINVAL for a
 * descriptor that is not an sg or bsg node or a whole SCSI disk, -ENOTBLK
 * for a device no SCSI command reaches; path names it in messages.
 */
int target_from_fd(int fd, const char *path, struct target **ret, char *why, size_t why_len);

/*
 * An informational block-device ioctl (BLKGETSIZE64, BLKSSZGET, ...) of a
 * disk target made by target_from_fd(), on channel chan: its value in
 * *val (little-endian, *len bytes of it), 0 or the ioctl's -errno;
 * -ENOTTY for any other ioctl or target.
 */
int target_blk_info(struct target *t, int chan, unsigned cmd, uint64_t *val, size_t *len);

#define TARGET_BULK_MIN (64u << 10)

/*
 * Does c go to the target's bulk channel (an sg target's bsg node), with
 * SG_IO from a worker, rather than to sg's own queue?
 */
bool target_bulk(const struct target *t, const struct scsi_cmd *c);
void target_free(struct target *t);

/* Start t's completion thread (-EOPNOTSUPP: t has no queue), before any queue_open(). */
int target_queue_start(struct target *t, target_done_fn *done);
/*
 * Stop it, if it runs: no done call after this returns.  Commands still
 * running stay unanswered: for a node's end, before the pools that done
 * hands work to go.  target_free() stops it too.
 */
void target_queue_stop(struct target *t);

/* How many commands one channel or queue may run at once; 0: no limit. */
unsigned target_max_queued(const struct target *t);

const char *target_kind_name(enum target_kind kind);

#endif /* CUSE_BSG_TARGET_H */
