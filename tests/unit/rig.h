/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The end-to-end tests' rig: a device with a real pool, the fake target and
 * the fake libfuse (fake.h), one opener; the calls as the CUSE callbacks make
 * them, each waiting for its answer with a bound; the clients' commands and
 * the target's scripts.  The client is this process: the daemon moves CDBs,
 * data and sense with process_vm_readv/writev on the thread a fake request
 * names, the test's own unless fake_req_ctx() says otherwise.  A failed
 * check is a Criterion assertion, and fails the calling test.
 */
#ifndef CUSE_BSG_TESTS_RIG_H
#define CUSE_BSG_TESTS_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bsgdev.h"
#include "fake.h"
#include "scsi.h"

#define V3 SCSI_V3_HDR_LEN
#define V4 SCSI_V4_HDR_LEN

struct rig {
	struct fake_session *fs;
	struct fake_target *ft;
	struct bsgdev d;
	struct opener *o; /* NULL once released: cmdq_release() may free it */
};

/* The direct path, threads pool workers, one opener as cb_open() makes it. */
void rig_init(struct rig *g, unsigned threads, int open_flags);
/* The same on the retry path: no process_vm_readv/writev, the ioctl retry exchange. */
void rig_init_retry(struct rig *g, unsigned threads, int open_flags);
/* The file's last reference is gone, as cb_release() says. */
void rig_release(struct rig *g);
/* Let every held call finish, then join the workers: nothing runs after this. */
void rig_stop(struct rig *g);
/* Release (if not yet), stop, and check that every request was answered once. */
void rig_fini(struct rig *g);
unsigned long stat_get(struct rig *g, enum stat_id id);

/*
 * The signal judge the rig's daemon asks (bsgdev.signal_ends) says what
 * ends says: whether a signal that interrupts a call ends it.
 */
void rig_judged(struct rig *g, bool ends);

/* ---- the calls, as the CUSE callbacks make them ---- */

fuse_req_t call_write(struct rig *g, const void *buf, size_t size, int flags);
fuse_req_t call_read(struct rig *g, size_t size, int flags);
/* req's reply, waited for. */
struct fake_reply *reply_of(fuse_req_t req);
/* A write that must succeed: the count it answered. */
size_t write_ok(struct rig *g, const void *buf, size_t size, int flags);
/* The errno a call answered, or 0 for any other reply. */
int err_of(fuse_req_t req);
/* A read that must return headers: their bytes. */
struct fake_reply *read_ok(struct rig *g, size_t size, int flags);
/* A poll with handle ph (or none): the events it answered. */
unsigned poll_once(struct rig *g, struct fuse_pollhandle *ph);
/* Wait until n completions are waiting. */
void wait_done(struct rig *g, unsigned n);
/* req, made by the test (a hook set on it first), with cmd on arg by tid: req. */
fuse_req_t ioctl_on(struct rig *g, fuse_req_t req, pid_t tid, unsigned cmd, void *arg);
/* An ioctl on the direct path by thread tid, left to be answered whenever. */
fuse_req_t ioctl_as(struct rig *g, pid_t tid, unsigned cmd, void *arg);
/* Its answer: the result, or -errno. */
int ioctl_result(fuse_req_t req);
/* An ioctl on the direct path, as cb_ioctl() makes it: its result or -errno. */
int call_ioctl(struct rig *g, unsigned cmd, void *arg);
int ioctl_get(struct rig *g, unsigned cmd);
void ioctl_set(struct rig *g, unsigned cmd, int val);
/* SG_IO on the direct path: 0, or the errno it was answered with. */
int sg_io_errno(struct rig *g, struct sg_io_hdr *h);

/* ---- clients and scripts ---- */

/* A READ of len bytes with tag and pack_id; b is set up too. */
struct sg_io_hdr v3_read(struct fake_cmd *b, unsigned tag, unsigned len, int pack_id);
struct sg_io_v4 v4_read(struct fake_cmd *b, unsigned tag, unsigned len, int pack_id);
/* n READs of 512 bytes, command i with tag and pack_id first + i, each written alone. */
void write_v3_reads(struct rig *g, struct fake_cmd *b, int n, int first);
/* h written, its command held at the target (fake_target_set_block()) once it reached it. */
void write_held(struct rig *g, const struct sg_io_hdr *h);
/* An SG_IORECEIVE header asking for pack_id (-1: any). */
struct sg_io_v4 rcv_hdr(int pack_id, uint32_t flags);

/* GOOD, data_in_len bytes of the pattern XORed with the call's tag. */
void script_good(struct fake_target *t, size_t data_in_len);
/* CHECK CONDITION, fixed sense: ILLEGAL REQUEST, LBA OUT OF RANGE (18 bytes) */
void script_check(struct fake_target *t, size_t data_in_len, int32_t resid);
/* The fake target's data-in for a call with this tag (script_good). */
bool is_data_in(const unsigned char *p, size_t n, unsigned tag);

/* A v3 read's one header. */
const struct sg_io_hdr *v3_out(const struct fake_reply *rep);
/* A v4 read's header i. */
struct sg_io_v4 v4_out(const struct fake_reply *rep, unsigned i);

/* ---- a client's memory that stalls ---- */

/*
 * A page of this process registered with userfaultfd and never served
 * until stall_release(): like a client's FUSE-backed or userfaultfd
 * mapping, any copy into it waits in the kernel.  Skips the test where
 * only root may have such a userfaultfd.
 */
struct stall {
	int uffd;
	unsigned char *page;
};

void stall_init(struct stall *s);
/* The page comes: a copy stalled in it goes on, and ends well. */
void stall_wake(struct stall *s);
void stall_fini(struct stall *s);
/* stall_wake(), then stall_fini(). */
void stall_release(struct stall *s);
/* Wait until no copy of o's is stalled. */
void wait_unstuck(struct opener *o);

#endif /* CUSE_BSG_TESTS_RIG_H */
