/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test doubles for the SG_IO pipeline and the asynchronous interface: a
 * fake libfuse reply layer and a fake target.  The fake libfuse records
 * every reply in a fake_session; replies come from pool worker threads, so
 * the log is locked and a test waits for the next entry, or for a given
 * request's reply, on a condition variable.  Poll handles are objects of the
 * session that count their notifications.  The fake target records what it
 * was asked to run and answers from a script; it can be made to block until
 * the test releases it, or to hold each call at a gate until its tag opens.
 */
#ifndef CUSE_BSG_TESTS_FAKE_H
#define CUSE_BSG_TESTS_FAKE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include <fuse3/fuse_lowlevel.h>

#include "bsgdev.h"
#include "scsi.h"
#include "target.h"

#define FAKE_WAIT_SECONDS 10 /* a bound on a wait, never a way to synchronise */

enum fake_kind {
	FAKE_ERR,	/* fuse_reply_err() */
	FAKE_IOCTL,	/* fuse_reply_ioctl() */
	FAKE_IOCTL_IOV, /* fuse_reply_ioctl_iov() */
	FAKE_RETRY,	/* fuse_reply_ioctl_retry() */
	FAKE_WRITE,	/* fuse_reply_write() */
	FAKE_BUF,	/* fuse_reply_buf() */
	FAKE_POLL,	/* fuse_reply_poll() */
};

/* One reply as libfuse was asked to send it. */
struct fake_reply {
	enum fake_kind kind;
	fuse_req_t req;
	int err;	     /* FAKE_ERR: the positive errno */
	int result;	     /* FAKE_IOCTL, FAKE_IOCTL_IOV */
	unsigned char *data; /* FAKE_IOCTL(_IOV), FAKE_BUF: a copy of the bytes, concatenated */
	size_t len;	     /* their total */
	size_t count;	     /* FAKE_WRITE */
	unsigned revents;    /* FAKE_POLL */
	size_t n_iov;	     /* FAKE_IOCTL_IOV: the iovec lengths, in order */
	size_t iov_len[FUSE_IOCTL_MAX_IOV];
	size_t n_in, n_out; /* FAKE_RETRY: what was asked for, as given */
	struct iovec in[FUSE_IOCTL_MAX_IOV], out[FUSE_IOCTL_MAX_IOV];
};

/* The reply log of one test. */
struct fake_session {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fake_reply **replies;   /* protected by lock: grows as needed */
	unsigned n_replies, cap;       /* protected by lock */
	unsigned next;		       /* the next one fake_wait_reply() returns */
	unsigned misuse;	       /* protected by lock: calls on a request already answered */
	unsigned notifies;	       /* protected by lock: fuse_lowlevel_notify_poll() calls */
	unsigned ph_new, ph_destroyed; /* protected by lock: poll handles made and destroyed */
};

struct fake_session *fake_session_new(void);
void fake_session_free(struct fake_session *s);

/* A request of s; libfuse would free it on reply, we keep it until the session goes. */
fuse_req_t fake_req_new(struct fake_session *s);

/* How many times req was answered (exactly once is right). */
unsigned fake_req_replies(fuse_req_t req);

/* req's first reply, waiting for it; NULL after FAKE_WAIT_SECONDS. */
struct fake_reply *fake_req_wait(fuse_req_t req);

/*
 * What fuse_req_ctx() returns for req, for the test to change: pid is the
 * thread that made the request (gettid()), uid and gid the process's.
 */
struct fuse_ctx *fake_req_ctx(fuse_req_t req);

/*
 * Call fn(arg) once, at the start of the first fuse_req_interrupt_func() that
 * registers a callback for req, before anything is stored: lets a test act
 * in the window between a caller's last check and its registration.
 */
void fake_req_on_register(fuse_req_t req, void (*fn)(void *), void *arg);
/* fn(arg) runs once, on the thread that answers req, just before its answer counts. */
void fake_req_on_reply(fuse_req_t req, void (*fn)(void *), void *arg);

/* The next reply not yet returned, waiting for it; NULL after FAKE_WAIT_SECONDS. */
struct fake_reply *fake_wait_reply(struct fake_session *s);

/* The number of replies recorded so far. */
unsigned fake_reply_count(struct fake_session *s);

/* Calls that libfuse would have made on a freed request (0 is right). */
unsigned fake_misuse_count(struct fake_session *s);

/* A poll handle as libfuse hands one to the poll callback. */
struct fuse_pollhandle *fake_pollhandle_new(struct fake_session *s);

/* fuse_lowlevel_notify_poll() calls so far, on any handle of s. */
unsigned fake_notify_count(struct fake_session *s);

/* Wait until there have been more than n notifications; false after FAKE_WAIT_SECONDS. */
bool fake_wait_notify(struct fake_session *s, unsigned n);

/* Poll handles made and not yet destroyed. */
unsigned fake_pollhandles_live(struct fake_session *s);

/*
 * Deliver an interrupt for req as libfuse's find_interrupted() does: with the
 * request's lock held, mark it interrupted and call the registered callback,
 * if any.  A callback registered later is called at registration.
 */
void fake_interrupt(fuse_req_t req);

/* What the fake target answers. */
struct fake_script {
	int ret; /* sg_io()'s return: 0 or -errno */
	uint8_t status;
	uint16_t host_status, driver_status;
	int32_t resid;
	uint8_t sense_len; /* at most SCSI_SENSE_MAX */
	uint8_t sense[SCSI_SENSE_MAX];
	size_t data_in_len; /* copied to c->data, at most c->data_len */
	bool xor_tag;	    /* each byte of data_in goes out XORed with the call's tag */
	int fail_ret;	    /* if not 0: what a call with tag fail_tag returns instead */
	uint8_t fail_tag;
	uint8_t data_in[256 << 10];
};

/* A call's tag: byte 5 of its CDB, the low byte of a READ(10)/WRITE(10) LBA. */
#define FAKE_TAG_BYTE 5

/* What the fake target was asked, on its last call. */
struct fake_seen {
	int chan;
	uint8_t cdb[SCSI_CDB_MAX];
	unsigned cdb_len;
	enum scsi_dir dir;
	uint32_t data_len;
	uint32_t timeout_ms;
	bool q_at_head;
	size_t data_out_len; /* bytes of c->data copied when dir writes */
	uint8_t data_out[256 << 10];
};

/*
 * The target's ioctl(): what it answers (set before the call) and what it
 * was asked.  It records arg_len bytes of the argument, then writes out_len
 * bytes of out at out_off into it.
 */
struct fake_ioctl {
	int ret;
	size_t arg_len;
	size_t out_off, out_len;
	uint8_t out[4096];
	unsigned calls;
	unsigned cmd;
	bool had_arg, nonblock;
	_Alignas(8) uint8_t arg[8192];
};

struct fake_target {
	struct target base;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fake_script script; /* set before the command is submitted */
	struct fake_seen seen;	   /* protected by lock */
	unsigned calls;		   /* protected by lock */
	unsigned chans_open;	   /* protected by lock: opened and not yet closed */
	int next_chan;		   /* protected by lock */
	bool block;		   /* protected by lock: calls wait for release */
	unsigned entered;	   /* protected by lock: calls that reached the block or gate */
	bool released;		   /* protected by lock */
	bool gated;		   /* protected by lock: calls wait for their tag to open */
	bool open_tag[256];	   /* protected by lock */
	struct fake_ioctl ioctl;   /* protected by lock */
};

/* A target with H:C:T:L 7:1:5:3 and the limits below; channels are 100, 101, ... */
#define FAKE_HOST	       7
#define FAKE_CHANNEL	       1
#define FAKE_ID		       5
#define FAKE_LUN	       3
#define FAKE_UNIQUE_ID	       4242
#define FAKE_MAX_SECTORS_BYTES (512u << 10)
#define FAKE_FIRST_CHAN	       100

struct fake_target *fake_target_new(void);
void fake_target_set_block(struct fake_target *t, bool block);
/* Wait until n calls have reached the block; false after FAKE_WAIT_SECONDS. */
bool fake_target_wait_entered(struct fake_target *t, unsigned n);
void fake_target_release(struct fake_target *t);
/* Hold every call until its tag is opened (true), or let all through (false). */
void fake_target_set_gate(struct fake_target *t, bool gated);
/* Let the calls with this tag through the gate, now and later. */
void fake_target_open(struct fake_target *t, unsigned tag);
unsigned fake_target_calls(struct fake_target *t);
unsigned fake_target_chans_open(struct fake_target *t);

/*
 * Make the script answer CHECK CONDITION with 18 bytes of fixed sense
 * (ILLEGAL REQUEST, LBA OUT OF RANGE), and 0xee past them, which must never
 * reach a client.
 */
void fake_script_check_condition(struct fake_target *t);

/* Whether all n bytes at p are v. */
bool fake_all_bytes(const unsigned char *p, size_t n, unsigned char v);

/* *v, read under lock (a count that other threads change under it). */
unsigned fake_locked(pthread_mutex_t *lock, const unsigned *v);
/*
 * Wait on cond (its clock: clock) until *v, protected by lock, reaches n;
 * false after FAKE_WAIT_SECONDS.
 */
bool fake_wait_count(pthread_mutex_t *lock, pthread_cond_t *cond, clockid_t clock,
		     const unsigned *v, unsigned n);

/*
 * The calling thread's effective CAP_SYS_RAWIO off or back on (from its
 * permitted set): the daemon asks the caller's, at each command.
 */
void fake_set_rawio(bool on);
/* The same for any capability (a CAP_ number). */
void fake_set_cap(unsigned cap, bool on);

/* ---- a client's side ---- */

#define FAKE_UNTOUCHED	      0xaa /* what a client's bytes hold where nobody may write */
#define FAKE_DATA_MAX	      8192 /* a client's data buffer; commands move less */
#define FAKE_USR_PTR(pack_id) (0xfeed0000u + (unsigned)(pack_id))

/* Byte i of the data the scripts return and the clients write. */
uint8_t fake_pattern(size_t i);

/* Whether the n bytes at p are the pattern from byte from on, each XORed with tag. */
bool fake_is_pattern(const unsigned char *p, size_t from, size_t n, uint8_t tag);

/*
 * A good command: data_in_len bytes of the pattern, each XORed with the
 * call's tag if xor_tag, and resid.  Set before any command is submitted:
 * the target's workers read the script unlocked.
 */
void fake_script_good(struct fake_target *t, size_t data_in_len, int32_t resid, bool xor_tag);

/* One command's memory in a client. */
struct fake_cmd {
	unsigned char cdb[16];
	unsigned char sense[32];
	unsigned char data[FAKE_DATA_MAX];
};

/*
 * A READ(10), or a WRITE(10) of the pattern from byte tag on, of blocks
 * blocks with tag in its LBA (FAKE_TAG_BYTE); every other byte of m is
 * FAKE_UNTOUCHED.
 */
void fake_cmd_init(struct fake_cmd *m, bool write, unsigned tag, unsigned blocks);

/* m's command in a v3 header: a 10-byte CDB, timeout 20 s, FAKE_USR_PTR(pack_id). */
struct sg_io_hdr fake_v3_hdr(struct fake_cmd *m, int dxfer_direction, unsigned len, int pack_id);

/* The same in v4: len bytes out if write, else in; request_extra is pack_id. */
struct sg_io_v4 fake_v4_hdr(struct fake_cmd *m, bool write, unsigned len, int pack_id);

struct opener;

/*
 * cmd on arg on the direct path, as cb_ioctl() calls it for thread tid (and
 * fuse_req_ctx(req) says tid too) on open file o: req, answered whenever.
 */
fuse_req_t fake_ioctl_on(fuse_req_t req, struct opener *o, pid_t tid, unsigned cmd, void *arg);

#endif /* CUSE_BSG_TESTS_FAKE_H */
