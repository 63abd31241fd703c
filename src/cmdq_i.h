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

#include <fuse3/fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bsgdev.h"
#include "cmd.h"
#include "list.h"
#include "opener.h"
#include "pool.h"
#include "share.h"
#include "sigwatch.h"

/*
 * Which completions a call may take: its process's (a command's owner,
 * whose memory its data-in and sense addresses name), of its header
 * version, and the one of its pack_id or tag if it names one.
 */
struct want {
	int id;		  /* pack_id, or tag (by_tag); -1: any */
	bool by_tag;	  /* id is a tag (SG_SET_GET_EXTENDED's TAG_FOR_PACK_ID) */
	pid_t owner;	  /* the caller's process */
	unsigned version; /* 3 or 4; 0: either (read()) */
	unsigned mrq;	  /* a blocking array's own commands, or 0: every other */
};

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

struct parked;

/*
 * What one kind of parked call does, as the kernel's wait_queue_entry
 * carries its func: the queue core (parking, serving, a gone target, a
 * signal) calls these and names no front end.  A write() waiting for room
 * needs only ready().
 */
struct parked_ops {
	/* o->lock held: would it get on now (then it is not parked)? */
	bool (*ready)(struct opener *o, const struct parked *p);
	/* o->lock held: does what is done satisfy it?  Its completions then
	 * taken into cmds (*n), its result in *res (0 or -errno). */
	bool (*take)(struct opener *o, struct parked *p, struct cmd **cmds, unsigned *n, int *res);
	/* No lock, p off every list: answer its call with what take() gave. */
	void (*answer)(struct opener *o, struct parked *p, struct cmd **cmds, unsigned n, int res);
	/* o->lock held, the target gone: is nothing left for it to wait for? */
	bool (*gone)(struct opener *o, const struct parked *p);
	/* No lock: its call ended with EINTR (a signal); or NULL. */
	void (*ended)(struct opener *o, const struct parked *p);
	/* No lock: o's queue has room again; the calls of this kind waiting in
	 * o->writers go on (a kind that waits for room; else NULL). */
	void (*room)(struct opener *o);
};

/*
 * A read(), SG_IORECEIVE or write() waiting for a completion or for room:
 * what the queue core needs of any of them.  Each kind keeps its own state
 * in buf, allocated past the struct, and only its ops read it.
 */
struct parked {
	const struct parked_ops *ops;
	struct list_head node; /* in o->readers or o->writers */
	fuse_req_t req;
	pid_t tid;
	size_t charged; /* bytes charged to the opener (opener_mem_charge) for it */
	size_t mapped;	/* p is a mapping of this size; else malloc()'s */
	bool watched;	/* protected by o->lock: interrupted, in the signal watcher */
	struct sigwatch_entry watch;
	_Alignas(uint64_t) unsigned char buf[]; /* its kind's own */
};

/* cmdq_park()'s outcome: parked, answered EINTR, or it can go on now. */
enum park_result { PARKED, ANSWERED, READY };

/*
 * The most completions one call takes at once (an SG_IORECEIVE of a
 * control object): as many as an open file may have outstanding.
 */
#define RCV_MAX BSGDEV_MAX_DEPTH

/*
 * The most completions one read() returns (v4; v3 returns one), whatever
 * the queue's depth: what its stack arrays hold.  A deeper queue is read in
 * more calls.
 */
#define READ_MAX_HDRS SG_MAX_QUEUE

/*
 * A copy into a parked reader's memory, which may stall, asked for on a
 * thread every opener shares (a pool worker, the target's queue, the
 * resolver): done on a thread of the elastic pool, holding a share of the
 * reader's file's and user's threads (share.h), as the call it serves
 * would, so that one user's copies that stall hold at most its own share.
 * Past the share it waits parked, without a thread, until a call of that
 * user gives one back.  It holds a reference to o.
 */
struct copy_job {
	struct pool_work work;
	struct opener *o;
	struct share_wait w;
	struct list_head node;		  /* protected by o->lock: in o->copy_waits while parked */
	bool listed;			  /* protected by o->lock */
	void (*run)(struct copy_job *j);  /* the copy, then frees j and its reference */
	void (*drop)(struct copy_job *j); /* will not run (file or node gone): frees them */
};

/* j, with run, drop and o set: to the elastic pool, with its share or parked for one. */
void cmdq_copy_submit(struct copy_job *j);

/* How many commands o may have written and not read: for v3 or v4 headers; POLLOUT's. */
unsigned cmdq_queue_limit(struct opener *o, unsigned version);
unsigned cmdq_poll_limit(struct opener *o);

/* p's charge given back, before its call is answered; p freed (its call not answered yet). */
void cmdq_parked_uncharge(struct opener *o, struct parked *p);
void cmdq_parked_dispose(struct parked *p);
void cmdq_parked_free(struct opener *o, struct parked *p);
/* Taken off a list to be answered: wait out a running interrupt callback. */
void cmdq_unparked(struct parked *p);

/*
 * sg's sg_check_file_access(), once per call that takes or hands over a
 * command of o: 0, or -EPERM (-EINVAL without the direct-copy path).  Made
 * by the kernel where o's node has a live credential gate (bsgdev.gated),
 * from /proc otherwise.
 */
int cmdq_check_caller(struct opener *o, pid_t tid, const char *call);

/* A command's pack_id: v3's, or v4's request_extra. */
int cmdq_pack_id_of(const struct cmd *cmd);

/* o->lock held: may a call that wants w take c? */
bool cmdq_wanted(const struct opener *o, const struct cmd *c, const struct want *w);
/* o->lock held: the oldest command from pos on (a node of o->cmds) that w wants, done or not as done says. */
struct cmd *cmdq_find_from(struct opener *o, struct list_head *pos, const struct want *w,
			   bool done);
/* o->lock held: the oldest done command w may take, or NULL. */
struct cmd *cmdq_oldest_done(struct opener *o, const struct want *w);
/* o->lock held: does a command w may take still run? */
bool cmdq_still_running(struct opener *o, const struct want *w);

/*
 * Park p on list (at its head if front) unless p->ops->ready() says it can
 * go on now; ANSWERED: it got EINTR.
 */
enum park_result cmdq_park(struct opener *o, struct list_head *list, struct parked *p, bool front);
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
int cmdq_submit_one(struct opener *o, fuse_req_t req, pid_t tid, const void *hdr, size_t len,
		    struct batch *b, const struct origin *from, int *ret_tag);
/* o's first target channel, opened on first use: 0 or -errno. */
int cmdq_open_chan(struct opener *o);
/* Start cmd on o's channel i. */
void cmdq_place(struct opener *o, struct cmd *cmd, int i);
/* cmd ended at the target with err (placed: it held a channel's slot). */
void cmdq_complete(struct cmd *cmd, int err, bool placed);

/* o->lock held: the completions w may take that fit in room bytes, into cmds: how many. */
unsigned cmdq_take_done(struct opener *o, const struct want *w, size_t room, struct cmd **cmds);
/* A completion's header into out (hlen bytes), its data-in and sense into tid: 0 or -errno. */
int cmdq_deliver_one(struct cmd *cmd, pid_t tid, unsigned char *out);
/*
 * Not under o->lock: n taken commands back on o's done list, oldest first,
 * anyone's (a blocking array's no more); freed instead if o's file has been
 * released meanwhile (a reader the watchdog answered: its client may have
 * closed the file since).
 */
void cmdq_put_back(struct opener *o, struct cmd **cmds, unsigned n);
/*
 * Answer a read() of req by tid (size bytes of room) with the n commands
 * taken: true if some went back to the done list.
 */
bool cmdq_deliver(struct opener *o, fuse_req_t req, pid_t tid, size_t size, struct cmd **cmds,
		  unsigned n);

#endif /* CUSE_BSG_CMDQ_I_H */
