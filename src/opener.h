/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One open file of a node: struct opener, made by opener_new() at open(),
 * freed by its last reference (opener_put()), as sg's sg_add_sfp() and
 * sg_remove_sfp().  It holds its own channel to the target, the sg
 * settings, the context of the thread that opened it, the data buffers its
 * commands have finished with, and the asynchronous state async.c keeps.
 * Any thread; the settings are atomics, the rest says which lock.
 */
#ifndef CUSE_BSG_OPENER_H
#define CUSE_BSG_OPENER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bsgdev.h"
#include "ident.h"
#include "list.h"
#include "lockcheck.h"
#include "share.h"

/* Channels of an opener's written commands: sg's 16 slots each, up to 256. */
#define OPENER_CHANS 16

struct bsgdev;
struct fuse_pollhandle;
struct show_node;
struct target_queue;

/*
 * Large data buffers an opener's commands have finished with, kept for its
 * next ones (cmd.c): like sg's reserve buffer, what one may still hold is
 * this open file's own data, so it need not be cleared again.
 */
#define OPENER_BUFS	 8
#define OPENER_BUF_MIN	 (64u << 10)
#define OPENER_BUF_BYTES (16u << 20)

struct opener_buf {
	void *p;
	uint32_t len;
};

/*
 * Per open file.  Settings are atomics: a forked child shares the file.
 * The asynchronous state is under lock; the opener lives while the file is
 * open or a command of it is still running (refs).
 */
struct opener {
	struct bsgdev *d;
	int open_flags;		 /* fi->flags at open() */
	bool shared;		 /* --shared-queue: every file's, of any process */
	atomic_int chan;	 /* its own channel to the target, for SG_IO: opener_chan() */
	atomic_int timeout_user; /* SG_SET_TIMEOUT, USER_HZ ticks */
	atomic_int reserved;	 /* SG_SET_RESERVED_SIZE */
	atomic_int cmd_q, force_pack_id, keep_orphan, next_cmd_len, debug;
	atomic_int prefer_tag; /* SG_SET_GET_EXTENDED's TAG_FOR_PACK_ID */
	atomic_int wrote;      /* the version of the last header written (3, 4), or 0 */
	uint64_t fh;	       /* the handle of the file it serves, as FUSE gives it */
	struct ident ident;    /* of the thread that opened it: read() and write() match it */
	pthread_mutex_t lock;
	struct list_head cmds; /* protected by lock: written, not yet read */
	unsigned queued, done; /* protected by lock: in that list; of which done */
	int next_tag;	       /* protected by lock: the next command's generated_tag */
	unsigned next_mrq;     /* protected by lock: the last blocking array's id */
	/* written commands have their own channels (or target queues): sg's
	 * slots per descriptor are not shared with SG_IO.  The first opens at
	 * the first write(); while more than its slots of them (max_running)
	 * wait, more open, up to the file's deepest queue; those close once
	 * none of its commands runs */
	int achan[OPENER_CHANS];	       /* protected by lock: or -1 */
	struct target_queue *tq[OPENER_CHANS]; /* protected by lock: or NULL */
	unsigned chan_running[OPENER_CHANS];   /* protected by lock: commands on each */
	unsigned nchans;		       /* protected by lock: channels open */
	bool chan_opening;		       /* protected by lock: one more is opening */
	unsigned running;		       /* protected by lock: at the target now */
	struct list_head pend;		       /* protected by lock: waiting for max_running */
	unsigned sync_running;	   /* protected by lock: SG_IOs holding a slot (slots_shared) */
	unsigned sync_waiting;	   /* protected by lock: SG_IOs waiting for one */
	pthread_cond_t slot_freed; /* a written command gave its slot to a waiting SG_IO */
	struct list_head readers, writers; /* protected by lock: calls waiting, FIFO */
	struct fuse_pollhandle *ph;	   /* protected by lock: the newest poller */
	bool serve_queued;		   /* protected by lock: a serve job is queued */
	unsigned refs;			   /* protected by lock: the file + running commands */
	bool released;			   /* protected by lock: the file is gone */
	pthread_mutex_t status_lock;
	struct ident_cache status; /* protected by status_lock: the last caller's */
	pthread_mutex_t bufs_lock;
	struct opener_buf bufs[OPENER_BUFS]; /* protected by bufs_lock */
	unsigned nbufs;			     /* protected by bufs_lock */
	uint64_t bufs_bytes;		     /* protected by bufs_lock */
	atomic_ullong mem_used;		     /* bytes of its commands' and kept buffers */
	atomic_uint stuck;		     /* copies of its callers' memory past the bound */
	atomic_bool warned;		     /* a credentials refusal was logged */
	atomic_bool warned_filter;	     /* a command refusal was logged */
	atomic_bool warned_path;	     /* a refusal for want of the direct path was logged */
	atomic_bool warned_mem;		     /* an ENOMEM for its memory bound was logged */
	struct list_head d_node;	     /* in d->opener_list, protected by d->openers_lock */
	/* its file's share of threads (share.h), which copies into its parked
	 * readers hold; or NULL (unbounded): set once, before its first call */
	struct share *share;
	struct share_file *sf;
	uid_t uid;		     /* who opened the file: set once, under lock (the live view) */
	pid_t pid;		     /* its process (the opening thread's id if unknown) */
	atomic_uint calls;	     /* its calls running now (node.c), for the live view */
	struct io_counters io;	     /* its commands, for the live view */
	int64_t opened;		     /* when, in seconds since the epoch */
	struct list_head copy_waits; /* protected by lock: its copy jobs parked for its share */
};

/*
 * A new opener of d for a file opened with flags by thread tid, holding the
 * file's reference.  ident, if not NULL, is the security context its read()
 * and write() callers must match, taken over (*ident is left empty); else
 * tid's is read now.  shared: --shared-queue's.  0, or the positive errno
 * to answer the open with (logged).
 */
int opener_new(struct bsgdev *d, int flags, bool shared, pid_t tid, struct ident *ident,
	       struct opener **ret);

/*
 * The security context of tid, which is opening a file of d, into *ret
 * (cache: its status file).  0, or the positive errno to answer the open
 * with, logged: deny when unsure, never an opener taken for someone else.
 */
int opener_read_ident(struct bsgdev *d, struct ident_cache *cache, pid_t tid, struct ident *ret);

/*
 * o's own channel to the target, opened at its first use, so that a file
 * opened and left idle holds no descriptor of the target (and no reserve
 * buffer of sg's).  The channel, or -errno: -ENODEV once the device is
 * going away or its node has vanished.
 */
int opener_chan(struct opener *o);

/*
 * sg's sg_check_file_access(), once per call that takes or hands over a
 * command of o: 0, or -EPERM (-EINVAL without the direct-copy path).  Made
 * by the kernel where o's node has a live credential gate (bsgdev.cred),
 * from /proc otherwise.
 */
int opener_check_caller(struct opener *o, pid_t tid, const char *call);

/*
 * The same for a file of node d that has no opener yet (an unbound file of
 * the control node), its handle fh: 0, or -EPERM where the witness saw
 * another context (the LSM gate refused the call before it came; the /proc
 * check has nothing to compare with).  *warned: the first refusal logged.
 */
int opener_check_unbound(struct bsgdev *d, uint64_t fh, atomic_bool *warned, pid_t tid,
			 const char *call);
/* The same from /proc, whatever the gate: for a call the gate does not see. */
int opener_check_procfs(struct opener *o, pid_t tid, const char *call);

/* A reference to o, which lives until the last is put (o->lock not held). */
void opener_get(struct opener *o);
void opener_put(struct opener *o);

/*
 * d's openers into the live view's s (show.h): SHOW_OPENERS_MAX listed,
 * all counted.  Under d's lock and each opener's, briefly.
 */
void opener_show(struct bsgdev *d, struct show_node *s);
/*
 * The same with o->lock held: one more reference (a command of its queue, a
 * call that goes on after its answer), or one less that is never the last
 * (the file, or the call that gives it back, still holds o).
 */
static inline void opener_get_locked(struct opener *o)
{
	assert_held(&o->lock);
	o->refs++;
}

static inline void opener_put_locked(struct opener *o)
{
	assert_held(&o->lock);
	o->refs--;
}

/*
 * Charge n bytes of data buffer to o and to the process: 0, or -ENOMEM
 * past either bound (logged once per opener), as sg says when it cannot
 * allocate a command's buffer.
 */
int opener_mem_charge(struct opener *o, uint64_t n);
/* The same for n bytes of what (for the log line): a blocked write()'s copy. */
int opener_mem_charge_for(struct opener *o, uint64_t n, const char *what);
void opener_mem_uncharge(struct opener *o, uint64_t n);

/*
 * The reserve: a kept buffer of exactly size bytes (OPENER_BUF_MIN or more,
 * mapped), taken out of o, or NULL.  opener_buf_keep() keeps one, still
 * charged, if there is room (true); else the caller frees it.
 */
void *opener_buf_take(struct opener *o, uint32_t size);
bool opener_buf_keep(struct opener *o, void *p, uint32_t size);

#endif /* CUSE_BSG_OPENER_H */
