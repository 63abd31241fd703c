/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opener's commands as calls take them (done.c), for the command queue
 * and its front ends: read(), SG_IORECEIVE, a blocking SG_IOSUBMIT array.
 */
#ifndef CUSE_BSG_DONE_H
#define CUSE_BSG_DONE_H

#include <scsi/sg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bsgdev.h"

struct cmd;
struct fuse_req;
struct list_head;
struct opener;

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

/* A command's pack_id: v3's, or v4's request_extra. */
int done_pack_id(const struct cmd *cmd);

/* o->lock held: may a call that wants w take c? */
bool done_wanted(const struct opener *o, const struct cmd *c, const struct want *w);
/* o->lock held: the oldest command from pos on (a node of o->cmds) that w wants, done or not as done says. */
struct cmd *done_find_from(struct opener *o, struct list_head *pos, const struct want *w,
			   bool done);
/* o->lock held: the oldest done command w may take, or NULL. */
struct cmd *done_oldest(struct opener *o, const struct want *w);
/* o->lock held: does a command w may take still run? */
bool done_still_running(struct opener *o, const struct want *w);
/* o->lock held: the completions w may take that fit in room bytes, into cmds: how many. */
unsigned done_take(struct opener *o, const struct want *w, size_t room, struct cmd **cmds);
/*
 * A call that takes completions (read(), SG_IORECEIVE): whose, and where
 * their headers go.  Its module fills it in, and answers it (done_answer).
 */
struct done_call {
	struct fuse_req *req;
	pid_t tid;
	unsigned char *out; /* room for the headers, packed; NULL: no memory (ENOMEM) */
	int err;	    /* 0, or a failure found before the first completion */
	const void *arg;    /* the call's own, for write_out */
	/* in the caller's call (guarded), once ok headers are in out: 0 or
	 * -errno; NULL: the headers are the answer */
	int (*write_out)(const struct done_call *c, struct cmd **cmds, unsigned ok);
};

/* What a hand-over leaves to the call's module. */
struct done_answer {
	size_t len; /* bytes of headers in out: the call succeeded; else */
	int err;    /* its failure, -errno (0 for a call that took none) */
	bool mine;  /* false: the watchdog answered it meanwhile (EFAULT): no answer */
	bool back;  /* some went back to the done list: wake the readers */
};

/*
 * The one hand-over of completions, for every call that takes them: each
 * one's data-in and sense into the caller, its header into c->out, then
 * c->write_out, within one guard of the caller's memory.  A failure
 * part-way answers the completions before it; the failed one is dropped if
 * it was the first (as sg's), else given back with the rest, as is whatever
 * was not reached (all of them without memory).  A call the watchdog
 * answered meanwhile loses what it reached, as sg's.  Not under o->lock;
 * the caller holds o.
 */
struct done_answer done_hand_over(struct opener *o, const struct done_call *c, struct cmd **cmds,
				  unsigned n);
/*
 * Not under o->lock: n taken commands back on o's done list, oldest first,
 * anyone's (a blocking array's no more); freed instead if o's file has been
 * released meanwhile (a reader the watchdog answered: its client may have
 * closed the file since).
 */
void done_put_back(struct opener *o, struct cmd **cmds, unsigned n);

#endif /* CUSE_BSG_DONE_H */
