/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One served device: the serving state of one target, shared by the CUSE
 * callbacks of its node (owned by its struct node) or of a control binding.
 */
#ifndef CUSE_BSG_BSGDEV_H
#define CUSE_BSG_BSGDEV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "deadline.h"
#include "filter.h"
#include "lat.h"
#include "list.h"
#include "log.h"
#include "target.h"

struct policy;
struct pool;
struct resolver;
struct sigwatch;
struct verdicts;
struct watchdog;

/*
 * The deepest queue of written commands an open file may have: --queue-depth
 * for v3 writes, SG_SET_COMMAND_Q for v4 ones (bsg's ceiling).
 */
#define BSGDEV_MAX_DEPTH 256

/* Each bounded by the kernel's ioctl retry exchange: 32 pages a direction. */
#define RETRY_MAX_XFER (124u << 10)
#define RETRY_MAX_IOVS 250u

/*
 * The counters shown by name, in the SIGUSR1 line and the live view, in
 * their order there: X(id, name).  The one list of them, so that none can
 * be added where it is never shown; stats.c checks that they fit.
 */
#define STAT_SHOWN(X)                                                                     \
	X(STAT_OPEN, "open")                                                              \
	X(STAT_RELEASE, "release")                                                        \
	X(STAT_READ, "read")                                                              \
	X(STAT_WRITE, "write")                                                            \
	X(STAT_IOCTL, "ioctl")                                                            \
	X(STAT_POLL, "poll")                                                              \
	X(STAT_INTERRUPT, "interrupt")                                                    \
	X(STAT_SG_IO, "sg_io")		     /* SG_IO commands that reached the target */ \
	X(STAT_SG_IO_ERR, "sg_io_errors")    /* SG_IO calls that ended with an errno */   \
	X(STAT_IOCTL_RETRY, "ioctl_retries") /* ioctl replies asking for another round */ \
	X(STAT_REFUSED, "refused")	     /* commands the access policy refused */

#define STAT_ENUM(id, name) id,
enum stat_id {
	STAT_SHOWN(STAT_ENUM)
	/* summed over STAT_SG_IO, from the call to the target's answer: shown
	 * as their average, avg_latency_us */
	STAT_LATENCY_US,
	STAT_COUNT,
};
#undef STAT_ENUM

_Static_assert(STAT_LATENCY_US == STAT_COUNT - 1,
	       "a counter after STAT_LATENCY_US is never shown: add it to STAT_SHOWN");

/* A shown counter's name (all before STAT_LATENCY_US). */
static inline const char *stat_name(enum stat_id id)
{
#define STAT_NAME(id, name) [id] = name,
	static const char *const names[STAT_LATENCY_US] = { STAT_SHOWN(STAT_NAME) };
#undef STAT_NAME

	return names[id];
}

/*
 * Commands that reached the target and their data, for the live view: a
 * node's and each opener's.  Relaxed atomics, a few a command.
 */
struct io_counters {
	atomic_ulong cmds;
	atomic_ulong bytes_in;	/* data read from the device */
	atomic_ulong bytes_out; /* data written to it */
	atomic_ulong errors;	/* ended with an errno, a SCSI status or a host's error */
	atomic_ulong refused;	/* refused by the access policy */
};

/*
 * Memory the daemon's data buffers may take, shared by every node of the
 * process: a client's command over it gets ENOMEM, as sg's does when it
 * cannot allocate, and nobody gets killed for it.
 */
struct mem_budget {
	atomic_ullong used;
	uint64_t max;
};

struct bsgdev {
	const char *name;	 /* node name under /dev */
	struct mem_budget *mem;	 /* the process's; NULL: no bound */
	uint64_t opener_mem_max; /* the most one opener's buffers may take; 0: no bound */
	struct target *target;
	struct pool *pool;
	bool direct;		 /* move data with process_vm_readv/writev */
	bool queue;		 /* write()n commands go to the target's queue, not the pool */
	bool bound;		 /* a control node's binding: the target is a client's descriptor */
	unsigned max_running;	 /* an opener's written commands at the target at once; 0: any */
	bool slots_shared;	 /* its SG_IOs take the same slots: one sg open file (a binding) */
	unsigned queue_depth;	 /* v3 commands written and not read, per opener; 0: 16 */
	uint32_t max_xfer;	 /* most data one command may move on our path */
	int max_xfer_errno;	 /* and the errno for more */
	uint64_t user_limit;	 /* uaccess_user_limit(); 0: any address goes */
	bool sg_compat;		 /* /dev/sgN (--sg-compat): sg's errnos on any target */
	atomic_bool target_gone; /* the device is going away; set through gone() */
	/* where sg's test of read(), write() and the sg v4 ioctls is made: an
	 * enum gate_kind (gate.h), GATE_NONE until the node's gate is armed
	 * and live (the /proc check); a binding: its home's */
	atomic_int cred;
	struct verdicts *verdicts; /* the witness's (verdict.h); or NULL */
	atomic_ulong cred_refused; /* calls refused on the witness's verdict */
	atomic_ulong cred_unseen;  /* calls the witness left no verdict for: the /proc check */
	struct policy *policy;	   /* who may send which command (policy.h); NULL: the kernel's */
	int policy_kernel;	   /* the kernel rule it defers to: enum filter_kernel, or
				      * POLICY_KERNEL_OWN, the one the policy file names */
	unsigned inline_max;	   /* libfuse workers that may run a command themselves */
	atomic_uint inline_busy;   /* how many do now */
	atomic_ulong stats[STAT_COUNT];
	struct io_counters io; /* but its cmds: stats[STAT_SG_IO] */
	struct lat lat;	       /* from the call to the target's answer: the recent window */
	struct lat dev_lat;    /* at the target alone */
	char serial[64];       /* the device's, as read at start (stats.h); or empty */
	uint64_t size;	       /* its disk's size in bytes, as read at start; or 0 */
	atomic_uint at_target; /* commands the target has now */
	atomic_uint target_us; /* the target's time per command, a moving average (1/8) */
	atomic_uint openers;   /* alive: open, or with a command still running */
	pthread_mutex_t openers_lock;
	struct list_head opener_list; /* protected by openers_lock: those alive (opener.h) */
	struct resolver *resolver;    /* async.c's, started at its first use; or NULL */
	struct watchdog *wd;	      /* bounds copies of client memory (guard.h); or NULL */
	struct pool *serve;	  /* elastic: client copies a shared thread hands off; or NULL */
	atomic_bool serve_ending; /* the node ends: a copy no longer parks for its share */
	struct bsgdev *home;	  /* a binding's: its control node's, whose pools it uses */
	/*
	 * Does a signal pending for thread tid end its call (sigwatch.h)?
	 * NULL: any signal does.  The watcher of calls whose signal did not is
	 * made at its first use, freed by async_bsgdev_fini().
	 */
	bool (*signal_ends)(pid_t tid);
	struct sigwatch *_Atomic sigwatch;
	/* called once the last opener is freed (from any thread); or NULL */
	void (*openers_gone)(struct bsgdev *d);
	/*
	 * The one way the device goes, from any thread: err is a command's
	 * -ENODEV or -ENXIO, or 0 for the device's removal.  Set by d's owner
	 * (node.c, control.c): sets target_gone, logs once, ends the parked
	 * calls.  NULL: target_gone is only set.
	 */
	void (*gone)(struct bsgdev *d, int err);
};

/* Does the signal pending for thread tid end its call (signal_ends; none: yes)? */
static inline bool bsgdev_signal_ends(const struct bsgdev *d, pid_t tid)
{
	return !d->signal_ends || d->signal_ends(tid);
}

/* A line naming the node (d->name; the prefix if NULL). */
#define bsgdev_log(d, level, ...) log_node(level, (d)->name, __VA_ARGS__)
#define bsgdev_warn(d, ...)	  bsgdev_log(d, LOG_WARNING, __VA_ARGS__)
#define bsgdev_debug(d, ...)                                   \
	do {                                                   \
		if (log_level >= LOG_DEBUG)                    \
			bsgdev_log(d, LOG_DEBUG, __VA_ARGS__); \
	} while (0)

/* The lock and list of a new daemon, zeroed but for its settings. */
static inline void bsgdev_init(struct bsgdev *d)
{
	pthread_mutex_init(&d->openers_lock, NULL);
	list_init(&d->opener_list);
}

/*
 * A new device (zeroed), node or binding: what the daemon's options give
 * every one, then bsgdev_init().  Its owner sets the rest: its target,
 * pools, limits and hooks.
 */
static inline void bsgdev_setup(struct bsgdev *d, const char *name, struct mem_budget *mem,
				uint64_t opener_mem_max, unsigned queue_depth,
				struct policy *policy)
{
	d->name = name;
	d->mem = mem;
	d->opener_mem_max = opener_mem_max;
	d->queue_depth = queue_depth;
	d->policy = policy;
	bsgdev_init(d);
}

static inline void stat_inc(struct bsgdev *d, enum stat_id id)
{
	atomic_fetch_add_explicit(&d->stats[id], 1, memory_order_relaxed);
}

/* An opener was made (before it can be seen) or freed. */
static inline void bsgdev_opener_get(struct bsgdev *d)
{
	atomic_fetch_add(&d->openers, 1);
}

static inline void bsgdev_opener_put(struct bsgdev *d)
{
	if (atomic_fetch_sub(&d->openers, 1) == 1 && d->openers_gone)
		d->openers_gone(d);
}

/* A command goes to the target now: *sent says when (for stat_target_end()). */
static inline void stat_target_start(struct bsgdev *d, struct timespec *sent)
{
	atomic_fetch_add_explicit(&d->at_target, 1, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, sent);
}

static inline long us_since(const struct timespec *t, const struct timespec *now)
{
	long us = (now->tv_sec - t->tv_sec) * 1000000 + (now->tv_nsec - t->tv_nsec) / 1000;

	return us > 0 ? us : 0;
}

/* A command and its data; cmd false: the command is counted elsewhere (STAT_SG_IO). */
static inline void io_count(struct io_counters *io, bool cmd, uint64_t in, uint64_t out,
			    bool failed)
{
	if (cmd)
		atomic_fetch_add_explicit(&io->cmds, 1, memory_order_relaxed);
	if (in)
		atomic_fetch_add_explicit(&io->bytes_in, in, memory_order_relaxed);
	if (out)
		atomic_fetch_add_explicit(&io->bytes_out, out, memory_order_relaxed);
	if (failed)
		atomic_fetch_add_explicit(&io->errors, 1, memory_order_relaxed);
}

/*
 * The command c of call start (TICK_CLOCK), sent at *sent, has ended with
 * err (0 or the target's -errno): its time at the target goes into
 * d->target_us and the device's window, its time since the call into the
 * latency counter (in ticks: a sum of them averages true) and the node's
 * window; it and its data are counted for d and for its opener's oc (or
 * NULL).  Its duration in ms.
 */
static inline uint32_t stat_target_end(struct bsgdev *d, struct io_counters *oc,
				       const struct timespec *start, const struct timespec *sent,
				       const struct scsi_cmd *c, int err)
{
	struct timespec now, tick;
	long us, dev_us, avg = atomic_load_explicit(&d->target_us, memory_order_relaxed);
	uint32_t resid = c->res.resid > 0 ? (uint32_t)c->res.resid : 0;
	uint64_t moved = err || resid >= c->data_len ? 0 : c->data_len - resid;
	uint64_t in = c->dir == SCSI_DIR_FROM_DEV || c->dir == SCSI_DIR_TO_FROM_DEV ? moved : 0;
	uint64_t out = c->dir == SCSI_DIR_TO_DEV ? moved : 0;
	bool failed = err || c->res.status || c->res.host_status || c->res.driver_status;

	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(TICK_CLOCK, &tick);
	dev_us = us_since(sent, &now);
	/* racy by design: a lost update only slows the average */
	atomic_store_explicit(&d->target_us, (uint32_t)(avg + (dev_us - avg) / 8),
			      memory_order_relaxed);
	us = us_since(start, &tick);
	atomic_fetch_sub_explicit(&d->at_target, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&d->stats[STAT_LATENCY_US], us, memory_order_relaxed);
	stat_inc(d, STAT_SG_IO);
	lat_record(&d->lat, now.tv_sec, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
	lat_record(&d->dev_lat, now.tv_sec, dev_us > UINT32_MAX ? UINT32_MAX : (uint32_t)dev_us);
	io_count(&d->io, false, in, out, failed);
	if (oc)
		io_count(oc, true, in, out, failed);
	return us / 1000;
}

/* The node's transfer limit as sg reports it (BLKSECTGET, reserved size). */
static inline uint32_t bsgdev_max_sectors_bytes(const struct bsgdev *d)
{
	uint32_t m = d->target->info.max_sectors_bytes;

	return m < d->max_xfer ? m : d->max_xfer;
}

#endif /* CUSE_BSG_BSGDEV_H */
