// SPDX-License-Identifier: GPL-2.0-only
/*
 * SG_IO and the informational ioctls end to end: ioctl_dispatch() with a
 * real pool, a fake target and a fake libfuse (the rig of rig.h).  The retry
 * path is driven round by round the way fs/fuse/ioctl.c drives it; the
 * direct path copies with process_vm_readv/writev on this very process, so
 * x.tid is the test's own thread.  Waits use condition variables only.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/blktrace_api.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <scsi/scsi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd.h"
#include "fake.h"
#include "ioctl.h"
#include "ioctx.h"
#include "midlayer.h"
#include "opener.h"
#include "policy.h"
#include "queue/cmdq.h"
#include "rig.h"
#include "root.h"
#include "sgio.h"
#include "uaccess.h"

#ifndef SG_GET_ACCESS_COUNT
#define SG_GET_ACCESS_COUNT 0x2289
#endif
#define KERNEL_MAX_BYTES (32u * 4096) /* CUSE: 32 pages each way a round */

TestSuite(sgio, .timeout = 30);
TestSuite(ioctl, .timeout = 30);

/* ---- the kernel's side of one FUSE_IOCTL request ---- */

static fuse_req_t send_ioctl(struct rig *g, unsigned cmd, unsigned flags, bool direct, void *arg,
			     const void *in, size_t in_len, size_t out_len)
{
	struct ioctx x = {
		.req = fake_req_new(g->fs),
		.o = g->o,
		.arg = (uintptr_t)arg,
		.in_buf = in,
		.in_len = in_len,
		.out_len = out_len,
		.tid = gettid(),
		.direct = direct,
	};

	ioctl_dispatch(&x, cmd, flags);
	return x.req;
}

static struct fake_reply *wait_reply(struct rig *g, fuse_req_t req)
{
	struct fake_reply *rep = fake_wait_reply(g->fs);

	cr_assert(not(eq(ptr, rep, NULL)), "no reply within %d s", FAKE_WAIT_SECONDS);
	cr_assert(eq(ptr, rep->req, req), "a reply to another request");
	return rep;
}

/* One request and its reply. */
static struct fake_reply *round_trip(struct rig *g, unsigned cmd, bool direct, void *arg,
				     const void *in, size_t in_len, size_t out_len)
{
	fuse_req_t req = send_ioctl(g, cmd, 0, direct, arg, in, in_len, out_len);

	return wait_reply(g, req);
}

/* What the kernel carries to the next round after a retry reply. */
struct kround {
	unsigned char *in;
	size_t in_len, out_len;
	size_t n_out;
	struct iovec out[FUSE_IOCTL_MAX_IOV];
};

static size_t iov_total(const struct iovec *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += v[i].iov_len;
	return len;
}

/* fs/fuse/ioctl.c: check the retry, gather the in iovecs from "user" memory. */
static void kernel_retry(const struct fake_reply *rep, struct kround *k)
{
	size_t off = 0;

	cr_assert(eq(int, rep->kind, FAKE_RETRY));
	cr_assert(le(sz, rep->n_in + rep->n_out, FUSE_IOCTL_MAX_IOV));
	free(k->in);
	k->in_len = iov_total(rep->in, rep->n_in);
	k->out_len = iov_total(rep->out, rep->n_out);
	cr_assert(le(sz, k->in_len, KERNEL_MAX_BYTES));
	cr_assert(le(sz, k->out_len, KERNEL_MAX_BYTES));
	k->in = malloc(k->in_len ? k->in_len : 1);
	cr_assert(not(eq(ptr, k->in, NULL)));
	for (size_t i = 0; i < rep->n_in; i++) {
		memcpy(k->in + off, rep->in[i].iov_base, rep->in[i].iov_len);
		off += rep->in[i].iov_len;
	}
	k->n_out = rep->n_out;
	memcpy(k->out, rep->out, rep->n_out * sizeof(rep->out[0]));
}

/* The final reply's bytes go to the last round's out iovecs, in order. */
static void kernel_scatter(const struct fake_reply *rep, const struct kround *k)
{
	size_t off = 0;

	cr_assert(le(sz, rep->len, k->out_len), "reply longer than out_size: EIO");
	for (size_t i = 0; i < k->n_out && off < rep->len; i++) {
		size_t n = rep->len - off < k->out[i].iov_len ? rep->len - off : k->out[i].iov_len;

		memcpy(k->out[i].iov_base, rep->data + off, n);
		off += n;
	}
}

/* A whole ioctl on the retry path; returns the final reply, its data scattered. */
static struct fake_reply *kernel_ioctl(struct rig *g, unsigned cmd, void *arg, unsigned *rounds)
{
	struct kround k = { 0 };
	struct fake_reply *rep;
	unsigned n = 0;

	for (;;) {
		cr_assert(lt(u32, n, 8), "the retry exchange does not end");
		rep = round_trip(g, cmd, false, arg, k.in, k.in_len, k.out_len);
		n++;
		if (rep->kind != FAKE_RETRY)
			break;
		kernel_retry(rep, &k);
	}
	if (rep->kind == FAKE_IOCTL || rep->kind == FAKE_IOCTL_IOV)
		kernel_scatter(rep, &k);
	free(k.in);
	if (rounds)
		*rounds = n;
	return rep;
}

/* ---- clients and scripts ---- */

struct client {
	union scsi_hdr h;
	struct fake_cmd m;
};

#define PACK_ID 1234

/*
 * A READ(10), or a WRITE(10) of the pattern, of len bytes in a v3 header;
 * its tag is 0, so what script_good() returns is the pattern itself.
 */
static void client_v3(struct client *c, int dxfer_direction, unsigned len)
{
	fake_cmd_init(&c->m, dxfer_direction == SG_DXFER_TO_DEV, 0, len / 512);
	memset(&c->h, 0, sizeof(c->h));
	c->h.v3 = fake_v3_hdr(&c->m, dxfer_direction, len, PACK_ID);
}

static void client_v4(struct client *c, bool write, unsigned len)
{
	fake_cmd_init(&c->m, write, 0, len / 512);
	memset(&c->h, 0, sizeof(c->h));
	c->h.v4 = fake_v4_hdr(&c->m, write, len, PACK_ID);
}

/* g with 2 workers on the direct path, and c a v3 READ of 4 KiB. */
static void direct_read_4k(struct rig *g, struct client *c)
{
	rig_init(g, 2, O_RDWR);
	client_v3(c, SG_DXFER_FROM_DEV, 4096);
}

/* The same on the retry path. */
static void retry_read_4k(struct rig *g, struct client *c)
{
	rig_init_retry(g, 2, O_RDWR);
	client_v3(c, SG_DXFER_FROM_DEV, 4096);
}

/* c's SG_IO on the direct path: its one reply. */
static struct fake_reply *direct_sg_io(struct rig *g, struct client *c)
{
	return round_trip(g, SG_IO, true, &c->h, NULL, 0, 0);
}

/* The next round of c's SG_IO on the retry path, with what k carries (nothing in the first). */
static struct fake_reply *retry_round(struct rig *g, struct client *c, const struct kround *k)
{
	return round_trip(g, SG_IO, false, &c->h, k->in, k->in_len, k->out_len);
}

static bool is_pattern(const unsigned char *p, size_t from, size_t n)
{
	return fake_is_pattern(p, from, n, 0);
}

/* An iovec list and its length, for expect_round(). */
#define IOVS(...)                                \
	((const struct iovec[]){ __VA_ARGS__ }), \
		sizeof((const struct iovec[]){ __VA_ARGS__ }) / sizeof(struct iovec)
#define NO_IOVS NULL, 0

static void expect_iovs(const struct iovec *got, size_t n_got, const struct iovec *want,
			size_t n_want, const char *what, const char *dir)
{
	cr_assert(eq(sz, n_got, n_want), "%s: %s iovecs", what, dir);
	for (size_t i = 0; i < n_want; i++) {
		cr_expect(eq(ptr, got[i].iov_base, want[i].iov_base), "%s: %s[%zu] base", what, dir,
			  i);
		cr_expect(eq(sz, got[i].iov_len, want[i].iov_len), "%s: %s[%zu] length", what, dir,
			  i);
	}
}

/* rep asks the kernel for another round with exactly these in and out iovecs. */
static void expect_round(const struct fake_reply *rep, const char *what, const struct iovec *in,
			 size_t n_in, const struct iovec *out, size_t n_out)
{
	cr_assert(eq(int, rep->kind, FAKE_RETRY), "%s: another round", what);
	expect_iovs(rep->in, rep->n_in, in, n_in, what, "in");
	expect_iovs(rep->out, rep->n_out, out, n_out, what, "out");
}

/* ---- retry path, v3 ---- */

Test(sgio, retry_v3_read_rounds)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	const struct sg_io_hdr *out;

	retry_read_4k(&g, &c);
	script_good(g.ft, 4096);

	/* round 1: nothing yet; ask for the header */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "round 1", IOVS({ &c.h, SCSI_V3_HDR_LEN }), NO_IOVS);
	kernel_retry(rep, &k);

	/* round 2: the header, out_len 0; ask for everything */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "round 2", IOVS({ &c.h, SCSI_V3_HDR_LEN }, { c.m.cdb, 10 }),
		     IOVS({ &c.h, SCSI_V3_HDR_LEN }, { c.m.data, 4096 },
			  { c.m.sense, sizeof(c.m.sense) }));
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	kernel_retry(rep, &k);
	cr_assert(eq(sz, k.in_len, SCSI_V3_HDR_LEN + 10));
	cr_assert(eq(sz, k.out_len, SCSI_V3_HDR_LEN + 4096 + sizeof(c.m.sense)));

	/* round 3: runs the command once; header, data, no sense */
	rep = retry_round(&g, &c, &k);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(zero(int, rep->result));
	cr_assert(eq(sz, rep->n_iov, 2), "GOOD status: no sense iovec");
	cr_expect(eq(sz, rep->iov_len[0], SCSI_V3_HDR_LEN));
	cr_expect(eq(sz, rep->iov_len[1], 4096));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(zero(int, memcmp(g.ft->seen.cdb, c.m.cdb, 10)));
	cr_expect(eq(u32, g.ft->seen.cdb_len, 10));
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_FROM_DEV));
	cr_expect(eq(u32, g.ft->seen.data_len, 4096));
	cr_expect(eq(u32, g.ft->seen.timeout_ms, 20000));
	cr_expect(g.ft->seen.q_at_head);
	cr_expect(eq(int, g.ft->seen.chan, atomic_load(&g.o->chan)), "the opener's own channel");

	out = (const struct sg_io_hdr *)rep->data;
	cr_expect(zero(u8, out->status));
	cr_expect(zero(u8, out->masked_status));
	cr_expect(zero(u16, out->host_status));
	cr_expect(zero(u16, out->driver_status));
	cr_expect(zero(u8, out->sb_len_wr));
	cr_expect(zero(i32, out->resid));
	cr_expect(zero(u32, out->info));
	cr_expect(eq(int, out->pack_id, PACK_ID));
	cr_expect(eq(ptr, out->usr_ptr, (void *)(uintptr_t)FAKE_USR_PTR(PACK_ID)));
	cr_expect(eq(ptr, out->dxferp, c.m.data));
	cr_expect(is_pattern(rep->data + SCSI_V3_HDR_LEN, 0, 4096));

	kernel_scatter(rep, &k);
	cr_expect(zero(u8, c.h.v3.status));
	cr_expect(is_pattern(c.m.data, 0, 4096));
	cr_expect(fake_all_bytes(c.m.sense, sizeof(c.m.sense), FAKE_UNTOUCHED));
	cr_expect(eq(u32, fake_req_replies(rep->req), 1));
	cr_expect(eq(ulong, stat_get(&g, STAT_IOCTL_RETRY), 2));
	cr_expect(eq(ulong, stat_get(&g, STAT_SG_IO), 1));
	free(k.in);
	rig_fini(&g);
}

Test(sgio, retry_v3_read_check_condition)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	unsigned rounds;
	const struct sg_io_hdr *out;

	retry_read_4k(&g, &c);
	script_check(g.ft, 512, 3584);
	rep = kernel_ioctl(&g, SG_IO, &c.h, &rounds);
	cr_expect(eq(u32, rounds, 3));
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(zero(int, rep->result));
	cr_assert(eq(sz, rep->n_iov, 3));
	cr_expect(eq(sz, rep->iov_len[0], SCSI_V3_HDR_LEN));
	cr_expect(eq(sz, rep->iov_len[1], 4096));
	cr_expect(eq(sz, rep->iov_len[2], 18), "only sb_len_wr sense bytes");

	out = &c.h.v3;
	cr_expect(eq(u8, out->status, 0x02));
	cr_expect(eq(u8, out->masked_status, CHECK_CONDITION));
	cr_expect(eq(u16, out->driver_status, SCSI_DRIVER_SENSE));
	cr_expect(eq(u8, out->sb_len_wr, 18));
	cr_expect(eq(u32, out->info, SG_INFO_CHECK));
	cr_expect(eq(i32, out->resid, 3584));
	cr_expect(eq(int, out->pack_id, PACK_ID));
	cr_expect(is_pattern(c.m.data, 0, 512));
	cr_expect(fake_all_bytes(c.m.data + 512, 4096 - 512, 0),
		  "the rest of the buffer is zeroed");
	cr_expect(fake_all_bytes(c.m.data + 4096, sizeof(c.m.data) - 4096, FAKE_UNTOUCHED));
	cr_expect(zero(int, memcmp(c.m.sense, g.ft->script.sense, 18)));
	cr_expect(fake_all_bytes(c.m.sense + 18, sizeof(c.m.sense) - 18, FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, retry_v3_write_data_reaches_target)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };

	rig_init_retry(&g, 2, O_RDWR);
	client_v3(&c, SG_DXFER_TO_DEV, 2048);
	for (size_t i = 0; i < 2048; i++)
		c.m.data[i] = fake_pattern(i + 11);
	script_good(g.ft, 0);

	rep = retry_round(&g, &c, &k);
	kernel_retry(rep, &k);
	rep = retry_round(&g, &c, &k);
	/* no data comes back from a write */
	expect_round(rep, "the plan",
		     IOVS({ &c.h, SCSI_V3_HDR_LEN }, { c.m.cdb, 10 }, { c.m.data, 2048 }),
		     IOVS({ &c.h, SCSI_V3_HDR_LEN }, { c.m.sense, sizeof(c.m.sense) }));
	kernel_retry(rep, &k);
	rep = retry_round(&g, &c, &k);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(eq(sz, rep->n_iov, 1));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_TO_DEV));
	cr_expect(eq(u32, g.ft->seen.cdb[0], 0x2a));
	cr_assert(eq(sz, g.ft->seen.data_out_len, 2048));
	cr_expect(is_pattern(g.ft->seen.data_out, 11, 2048));
	free(k.in);
	rig_fini(&g);
}

Test(sgio, retry_v3_iovec_plan_lists_each_segment)
{
	struct rig g;
	struct client c;
	struct sg_iovec uiov[3];
	struct fake_reply *rep;
	struct kround k = { 0 };

	retry_read_4k(&g, &c);
	uiov[0] = (struct sg_iovec){ c.m.data + 6000, 1000 };
	uiov[1] = (struct sg_iovec){ c.m.data, 2000 };
	uiov[2] = (struct sg_iovec){ c.m.data + 3000, 1096 };
	c.h.v3.iovec_count = 3;
	c.h.v3.dxferp = uiov;
	script_good(g.ft, 4096);

	rep = retry_round(&g, &c, &k);
	kernel_retry(rep, &k);
	/* round 2: the header names an sg_iovec array; fetch it */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "round 2", IOVS({ &c.h, SCSI_V3_HDR_LEN }, { uiov, sizeof(uiov) }),
		     NO_IOVS);
	kernel_retry(rep, &k);
	/* round 3: the plan */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "the plan",
		     IOVS({ &c.h, SCSI_V3_HDR_LEN }, { uiov, sizeof(uiov) }, { c.m.cdb, 10 }),
		     IOVS({ &c.h, SCSI_V3_HDR_LEN }, { c.m.data + 6000, 1000 }, { c.m.data, 2000 },
			  { c.m.data + 3000, 1096 }, { c.m.sense, sizeof(c.m.sense) }));
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	kernel_retry(rep, &k);
	/* round 4: run, then the data lands segment by segment */
	rep = retry_round(&g, &c, &k);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(eq(u32, g.ft->seen.data_len, 4096));
	kernel_scatter(rep, &k);
	cr_expect(is_pattern(c.m.data + 6000, 0, 1000));
	cr_expect(is_pattern(c.m.data, 1000, 2000));
	cr_expect(is_pattern(c.m.data + 3000, 3000, 1096));
	cr_expect(fake_all_bytes(c.m.data + 2000, 1000, FAKE_UNTOUCHED));
	free(k.in);
	rig_fini(&g);
}

Test(sgio, retry_v3_iovec_write_truncated_to_dxfer_len)
{
	struct rig g;
	struct client c;
	struct sg_iovec uiov[3];
	struct fake_reply *rep;
	unsigned rounds;

	rig_init_retry(&g, 2, O_RDWR);
	client_v3(&c, SG_DXFER_TO_DEV, 2500);
	for (size_t i = 0; i < sizeof(c.m.data); i++)
		c.m.data[i] = fake_pattern(i);
	uiov[0] = (struct sg_iovec){ c.m.data, 1000 };
	uiov[1] = (struct sg_iovec){ c.m.data + 1000, 2000 };
	uiov[2] = (struct sg_iovec){ c.m.data + 3000, 1096 };
	c.h.v3.iovec_count = 3;
	c.h.v3.dxferp = uiov;
	script_good(g.ft, 0);
	rep = kernel_ioctl(&g, SG_IO, &c.h, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(eq(u32, rounds, 4));
	cr_expect(eq(u32, g.ft->seen.data_len, 2500));
	cr_assert(eq(sz, g.ft->seen.data_out_len, 2500));
	cr_expect(is_pattern(g.ft->seen.data_out, 0, 2500));
	rig_fini(&g);
}

/* ---- retry path, v4 ---- */

Test(sgio, retry_v4_read_rounds)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	const struct sg_io_v4 *out;

	rig_init_retry(&g, 2, O_RDWR);
	client_v4(&c, false, 4096);
	script_check(g.ft, 4096, 96);

	rep = retry_round(&g, &c, &k);
	expect_round(rep, "round 1", IOVS({ &c.h, SCSI_V3_HDR_LEN }), NO_IOVS);
	kernel_retry(rep, &k);
	/* round 2: 88 bytes say 'Q'; ask for the whole v4 header */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "round 2", IOVS({ &c.h, SCSI_V4_HDR_LEN }), NO_IOVS);
	kernel_retry(rep, &k);
	/* round 3: the plan */
	rep = retry_round(&g, &c, &k);
	expect_round(rep, "the plan", IOVS({ &c.h, SCSI_V4_HDR_LEN }, { c.m.cdb, 10 }),
		     IOVS({ &c.h, SCSI_V4_HDR_LEN }, { c.m.data, 4096 },
			  { c.m.sense, sizeof(c.m.sense) }));
	kernel_retry(rep, &k);
	/* round 4 */
	rep = retry_round(&g, &c, &k);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(zero(int, rep->result));
	cr_assert(eq(sz, rep->n_iov, 3));
	cr_expect(eq(sz, rep->iov_len[0], SCSI_V4_HDR_LEN));
	cr_expect(eq(sz, rep->iov_len[1], 4096));
	cr_expect(eq(sz, rep->iov_len[2], 18));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_FROM_DEV));
	kernel_scatter(rep, &k);

	out = &c.h.v4;
	cr_expect(eq(u32, out->device_status, 0x02));
	cr_expect(zero(u32, out->transport_status));
	cr_expect(eq(u32, out->driver_status, SCSI_DRIVER_SENSE));
	cr_expect(eq(u32, out->info, SG_INFO_CHECK));
	cr_expect(eq(u32, out->response_len, 18));
	cr_expect(eq(i32, out->din_resid, 96));
	cr_expect(zero(i32, out->dout_resid));
	cr_expect(eq(u64, out->usr_ptr, FAKE_USR_PTR(PACK_ID)));
	cr_expect(is_pattern(c.m.data, 0, 4096));
	cr_expect(zero(int, memcmp(c.m.sense, g.ft->script.sense, 18)));
	cr_expect(fake_all_bytes(c.m.sense + 18, sizeof(c.m.sense) - 18, FAKE_UNTOUCHED));
	free(k.in);
	rig_fini(&g);
}

Test(sgio, retry_v4_write)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	unsigned rounds;

	rig_init_retry(&g, 2, O_RDWR);
	client_v4(&c, true, 1024);
	for (size_t i = 0; i < 1024; i++)
		c.m.data[i] = fake_pattern(i + 5);
	script_good(g.ft, 0);
	g.ft->script.resid = 24;
	rep = kernel_ioctl(&g, SG_IO, &c.h, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	cr_expect(eq(u32, rounds, 4));
	cr_assert(eq(sz, g.ft->seen.data_out_len, 1024));
	cr_expect(is_pattern(g.ft->seen.data_out, 5, 1024));
	cr_expect(eq(i32, c.h.v4.dout_resid, 24));
	cr_expect(zero(i32, c.h.v4.din_resid));
	cr_expect(zero(u32, c.h.v4.info));
	rig_fini(&g);
}

/* ---- retry path, refusals ---- */

Test(sgio, retry_over_the_exchange_limit_is_enomem)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	unsigned rounds;

	retry_read_4k(&g, &c);
	c.h.v3.dxfer_len = 200 << 10; /* dxferp is never used */
	rep = kernel_ioctl(&g, SG_IO, &c.h, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, ENOMEM));
	cr_expect(eq(u32, rounds, 2));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(eq(ulong, stat_get(&g, STAT_SG_IO_ERR), 1));
	cr_expect(zero(ulong, stat_get(&g, STAT_SG_IO)));
	rig_fini(&g);
}

Test(sgio, retry_too_many_iovecs_is_enomem)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	retry_read_4k(&g, &c);
	c.h.v3.iovec_count = RETRY_MAX_IOVS + 1;
	rep = kernel_ioctl(&g, SG_IO, &c.h, NULL);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, ENOMEM));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* Play rounds 1 and 2 of a v3 READ (k zeroed); k then holds what round 3 carries. */
static void retry_to_final(struct rig *g, struct client *c, struct kround *k)
{
	kernel_retry(retry_round(g, c, k), k);
	kernel_retry(retry_round(g, c, k), k);
}

struct mismatch_case {
	char name[40];
	int in_delta, out_delta;
};

ParameterizedTestParameters(sgio, retry_final_round_not_matching_plan_is_einval)
{
	static struct mismatch_case cases[] = {
		{ "out_len one more", 0, 1 },
		{ "out_len one less", 0, -1 },
		{ "in_len one more", 1, 0 },
	};

	return cr_make_param_array(struct mismatch_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct mismatch_case *tc, sgio, retry_final_round_not_matching_plan_is_einval)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	unsigned char in[512] = { 0 };

	retry_read_4k(&g, &c);
	script_good(g.ft, 4096);
	retry_to_final(&g, &c, &k);
	cr_assert(lt(sz, k.in_len + 1, sizeof(in)));
	memcpy(in, k.in, k.in_len);
	rep = round_trip(&g, SG_IO, false, &c.h, in, k.in_len + tc->in_delta,
			 k.out_len + tc->out_delta);
	cr_assert(eq(int, rep->kind, FAKE_ERR), "%s", tc->name);
	cr_expect(eq(int, rep->err, EINVAL), "%s", tc->name);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)), "%s", tc->name);
	free(k.in);
	rig_fini(&g);
}

Test(sgio, retry_header_changed_between_rounds_is_einval)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	struct sg_io_hdr *h;

	retry_read_4k(&g, &c);
	retry_to_final(&g, &c, &k);
	/* another thread of the client grew the transfer after round 2 */
	h = (struct sg_io_hdr *)k.in;
	h->dxfer_len = 8192;
	rep = retry_round(&g, &c, &k);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINVAL));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	free(k.in);
	rig_fini(&g);
}

/* sg says ENOSYS, which FUSE turns into ENOTTY; bsg and sd say EINVAL */
Test(sgio, retry_bad_interface_id_is_einval)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	retry_read_4k(&g, &c);
	c.h.v3.interface_id = 'Z';
	rep = kernel_ioctl(&g, SG_IO, &c.h, NULL);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINVAL));
	rep = direct_sg_io(&g, &c);
	cr_expect(eq(int, rep->err, EINVAL), "on the direct path too");
	rig_fini(&g);
}

Test(sgio, retry_target_errno_is_the_reply)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	retry_read_4k(&g, &c);
	script_good(g.ft, 4096);
	g.ft->script.ret = -EIO;
	rep = kernel_ioctl(&g, SG_IO, &c.h, NULL);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EIO));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	rig_fini(&g);
}

/* ---- direct path ---- */

Test(sgio, direct_v3_read_in_one_request)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	const struct sg_io_hdr *h = &c.h.v3;

	direct_read_4k(&g, &c);
	script_check(g.ft, 1000, 3096);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(zero(sz, rep->len));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(zero(int, memcmp(g.ft->seen.cdb, c.m.cdb, 10)));
	cr_expect(zero(ulong, stat_get(&g, STAT_IOCTL_RETRY)));

	cr_expect(eq(u8, h->status, 0x02));
	cr_expect(eq(u8, h->masked_status, CHECK_CONDITION));
	cr_expect(eq(u16, h->driver_status, SCSI_DRIVER_SENSE));
	cr_expect(eq(u8, h->sb_len_wr, 18));
	cr_expect(eq(u32, h->info, SG_INFO_CHECK));
	cr_expect(eq(i32, h->resid, 3096));
	cr_expect(eq(int, h->pack_id, PACK_ID));
	cr_expect(eq(ptr, h->usr_ptr, (void *)(uintptr_t)FAKE_USR_PTR(PACK_ID)));
	cr_expect(is_pattern(c.m.data, 0, 1000));
	cr_expect(fake_all_bytes(c.m.data + 1000, 4096 - 1000, 0), "zero-filled to dxfer_len");
	cr_expect(fake_all_bytes(c.m.data + 4096, sizeof(c.m.data) - 4096, FAKE_UNTOUCHED));
	cr_expect(zero(int, memcmp(c.m.sense, g.ft->script.sense, 18)));
	cr_expect(fake_all_bytes(c.m.sense + 18, sizeof(c.m.sense) - 18, FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, direct_v4_read_in_one_request)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	const struct sg_io_v4 *h = &c.h.v4;

	rig_init(&g, 2, O_RDWR);
	client_v4(&c, false, 4096);
	script_check(g.ft, 2048, 2048);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_FROM_DEV));
	cr_expect(eq(u32, h->device_status, 0x02));
	cr_expect(eq(u32, h->driver_status, SCSI_DRIVER_SENSE));
	cr_expect(eq(u32, h->info, SG_INFO_CHECK));
	cr_expect(eq(u32, h->response_len, 18));
	cr_expect(eq(i32, h->din_resid, 2048));
	cr_expect(eq(u64, h->usr_ptr, FAKE_USR_PTR(PACK_ID)));
	cr_expect(is_pattern(c.m.data, 0, 2048));
	cr_expect(fake_all_bytes(c.m.data + 2048, 2048, 0));
	cr_expect(zero(int, memcmp(c.m.sense, g.ft->script.sense, 18)));
	cr_expect(fake_all_bytes(c.m.sense + 18, sizeof(c.m.sense) - 18, FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, direct_v3_write)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	rig_init(&g, 2, O_RDWR);
	client_v3(&c, SG_DXFER_TO_DEV, 4096);
	for (size_t i = 0; i < 4096; i++)
		c.m.data[i] = fake_pattern(i + 1);
	script_good(g.ft, 0);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_assert(eq(sz, g.ft->seen.data_out_len, 4096));
	cr_expect(is_pattern(g.ft->seen.data_out, 1, 4096));
	cr_expect(is_pattern(c.m.data, 1, 4096), "a write leaves the client's buffer alone");
	cr_expect(zero(u32, c.h.v3.info));
	cr_expect(fake_all_bytes(c.m.sense, sizeof(c.m.sense), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, direct_v3_iovec_read)
{
	struct rig g;
	struct client c;
	struct sg_iovec uiov[2];
	struct fake_reply *rep;

	rig_init(&g, 2, O_RDWR);
	client_v3(&c, SG_DXFER_FROM_DEV, 3000);
	uiov[0] = (struct sg_iovec){ c.m.data + 4000, 1000 };
	uiov[1] = (struct sg_iovec){ c.m.data, 2000 };
	c.h.v3.iovec_count = 2;
	c.h.v3.dxferp = uiov;
	script_good(g.ft, 3000);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(is_pattern(c.m.data + 4000, 0, 1000));
	cr_expect(is_pattern(c.m.data, 1000, 2000));
	cr_expect(fake_all_bytes(c.m.data + 2000, 2000, FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, direct_moves_more_than_the_retry_limit)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	size_t len = 256 << 10;
	unsigned char *buf = malloc(len);

	cr_assert(not(eq(ptr, buf, NULL)));
	memset(buf, FAKE_UNTOUCHED, len);
	direct_read_4k(&g, &c);
	c.h.v3.dxfer_len = len;
	c.h.v3.dxferp = buf;
	script_good(g.ft, len);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(is_pattern(buf, 0, len));
	rig_fini(&g);
	free(buf);
}

Test(sgio, direct_over_target_limit_is_target_errno)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	direct_read_4k(&g, &c);
	c.h.v3.dxfer_len = g.d.max_xfer + 1;
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, g.d.max_xfer_errno));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* A refusal before any command: the answer, and the target never called. */
static void expect_refused(struct rig *g, struct client *c, int err)
{
	struct fake_reply *rep = round_trip(g, SG_IO, true, &c->h, NULL, 0, 0);

	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, err));
}

#define SG_SCATTER (32u << 10) /* sg's scatter_elem_sz */

/* sg_build_indirect(): a v3 transfer past sg_tablesize scatter elements is ENOMEM */
Test(sgio, direct_v3_past_sg_scatter_is_enomem)
{
	struct rig g;
	struct client c;
	unsigned reach;
	unsigned char *big;

	rig_init(&g, 2, O_RDWR);
	reach = (unsigned)g.ft->base.info.max_segments * SG_SCATTER;
	g.d.max_xfer = reach * 2; /* the block layer would take more */
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	c.h.v3.dxfer_len = reach + 1;
	expect_refused(&g, &c, ENOMEM);
	c.h.v3.dxfer_len = reach - 511; /* rounded up to 512, as sg does: fits */
	c.h.v3.dxferp = NULL;		/* sg's reserve: no client memory */
	script_good(g.ft, 4096);
	cr_expect(eq(int, direct_sg_io(&g, &c)->kind, FAKE_IOCTL));
	big = calloc(1, reach + 1);
	cr_assert(not(eq(ptr, big, NULL)));
	client_v4(&c, false, 4096);
	c.h.v4.din_xferp = (uintptr_t)big; /* v4 is bsg's: no scatter bound */
	c.h.v4.din_xfer_len = reach + 1;
	cr_expect(eq(int, direct_sg_io(&g, &c)->kind, FAKE_IOCTL));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 2), "only the refused one never ran");
	rig_fini(&g);
	free(big);
}

/* SG_IO on a disk says EIO for a long transfer; --sg-compat's /dev/sgN says sg's ENOMEM */
Test(sgio, direct_v3_past_sg_scatter_on_a_disk)
{
	struct rig g;
	struct client c;

	rig_init(&g, 2, O_RDWR);
	g.ft->base.info.kind = TARGET_SD;
	g.d.max_xfer_errno = EIO;
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	c.h.v3.dxfer_len = (unsigned)g.ft->base.info.max_segments * SG_SCATTER + 1;
	expect_refused(&g, &c, EIO);
	g.d.sg_compat = true;
	expect_refused(&g, &c, ENOMEM);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

#define KERNEL_ADDR ((void *)(uintptr_t)0xffff888000000000ull)

/* blk_rq_map_user()'s access_ok(): a buffer outside the user half is EFAULT before any command */
Test(sgio, direct_v3_data_outside_the_user_half_is_efault)
{
	struct rig g;
	struct client c;

	rig_init(&g, 2, O_RDWR);
	g.d.user_limit = uaccess_user_limit();
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	c.h.v3.dxferp = KERNEL_ADDR;
	expect_refused(&g, &c, EFAULT);
	c.h.v3.dxferp = (void *)(uintptr_t)(0 - 2048ull); /* wraps */
	expect_refused(&g, &c, EFAULT);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* import_iovec() checks every entry, those past dxfer_len too */
Test(sgio, direct_v3_iovec_entry_past_dxfer_len_in_kernel_memory_is_efault)
{
	struct rig g;
	struct client c;
	struct sg_iovec uiov[2];

	rig_init(&g, 2, O_RDWR);
	g.d.user_limit = uaccess_user_limit();
	client_v3(&c, SG_DXFER_FROM_DEV, 2048);
	uiov[0] = (struct sg_iovec){ c.m.data, 2048 };
	uiov[1] = (struct sg_iovec){ KERNEL_ADDR, 512 };
	c.h.v3.iovec_count = 2;
	c.h.v3.dxferp = uiov;
	expect_refused(&g, &c, EFAULT);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(fake_all_bytes(c.m.data, 2048, FAKE_UNTOUCHED));
	rig_fini(&g);
}

/*
 * bsg maps a v4 buffer before it finds it too long: past the node's limit
 * over unmapped memory the answer is EFAULT, over mapped memory EINVAL.
 */
Test(sgio, direct_v4_too_long_is_efault_over_unmapped_memory)
{
	struct rig g;
	struct client c;
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	unsigned char *p;

	rig_init(&g, 2, O_RDWR);
	len = g.d.max_xfer + page;
	p = mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(not(eq(ptr, p, MAP_FAILED)));
	client_v4(&c, false, 4096);
	c.h.v4.din_xferp = (uintptr_t)p;
	c.h.v4.din_xfer_len = 0x80000000u;
	expect_refused(&g, &c, EINVAL);
	c.h.v4.din_xfer_len = 0xffffffffu;
	expect_refused(&g, &c, EINVAL);
	cr_assert(zero(int, munmap(p + page, page)), "a hole one page in");
	expect_refused(&g, &c, EFAULT);
	c.h.v4.request_len = 2; /* bsg refuses the CDB before it maps anything */
	expect_refused(&g, &c, EINVAL);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
	munmap(p, len + page);
}

Test(sgio, direct_bad_cdb_pointer_is_efault)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	direct_read_4k(&g, &c);
	c.h.v3.cmdp = (unsigned char *)8;
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EFAULT));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(fake_all_bytes(c.m.data, sizeof(c.m.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, direct_bad_header_pointer_is_efault)
{
	struct rig g;
	struct fake_reply *rep;

	rig_init(&g, 2, O_RDWR);
	rep = round_trip(&g, SG_IO, true, (void *)8, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EFAULT));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

Test(sgio, direct_bad_data_pointer_is_efault_after_running)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct sg_io_hdr before;

	direct_read_4k(&g, &c);
	c.h.v3.dxferp = (void *)8;
	before = c.h.v3;
	script_good(g.ft, 4096);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EFAULT));
	cr_expect(zero(int, memcmp(&c.h.v3, &before, sizeof(before))),
		  "the header is not filled in when the data could not be copied");
	rig_fini(&g);
}

/* sg: no dxferp means the reserve buffer: the command runs, no memory is touched. */
Test(sgio, v3_without_a_data_pointer_runs_and_moves_no_data)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	direct_read_4k(&g, &c);
	c.h.v3.dxferp = NULL;
	script_good(g.ft, 4096);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL), "data-in without dxferp: success, as sg");
	cr_expect(zero(int, c.h.v3.status));
	cr_expect(eq(u32, g.ft->seen.data_len, 4096), "the device still moved 4096 bytes");
	client_v3(&c, SG_DXFER_TO_DEV, 8192);
	c.h.v3.dxferp = NULL;
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL), "data-out without dxferp: success, as sg");
	cr_expect(eq(sz, g.ft->seen.data_out_len, 8192));
	cr_expect(fake_all_bytes(g.ft->seen.data_out, 8192, 0), "zeroes, no daemon memory");
	rig_fini(&g);
}

Test(sgio, direct_target_errno_is_the_reply)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct sg_io_hdr before;

	direct_read_4k(&g, &c);
	before = c.h.v3;
	script_good(g.ft, 4096);
	g.ft->script.ret = -EIO;
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EIO));
	cr_expect(fake_all_bytes(c.m.data, sizeof(c.m.data), FAKE_UNTOUCHED));
	cr_expect(zero(int, memcmp(&c.h.v3, &before, sizeof(before))));
	rig_fini(&g);
}

/* ---- interrupts ---- */

Test(sgio, interrupt_while_running_answers_eintr_at_once)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct sg_io_hdr before;
	fuse_req_t req;

	direct_read_4k(&g, &c);
	before = c.h.v3;
	script_check(g.ft, 4096, 0);
	fake_target_set_block(g.ft, true);
	req = send_ioctl(&g, SG_IO, 0, true, &c.h, NULL, 0, 0);
	cr_assert(fake_target_wait_entered(g.ft, 1), "the command never reached the target");
	cr_expect(zero(u32, fake_reply_count(g.fs)), "the caller stays blocked while it runs");

	fake_interrupt(req);
	cr_assert(eq(u32, fake_reply_count(g.fs), 1), "EINTR comes from the callback itself");
	rep = wait_reply(&g, req);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINTR));

	fake_target_release(g.ft);
	rig_stop(&g);
	cr_expect(eq(u32, fake_reply_count(g.fs), 1), "a second reply after EINTR");
	cr_expect(eq(u32, fake_req_replies(req), 1));
	cr_expect(fake_all_bytes(c.m.data, sizeof(c.m.data), FAKE_UNTOUCHED),
		  "data copied after EINTR");
	cr_expect(fake_all_bytes(c.m.sense, sizeof(c.m.sense), FAKE_UNTOUCHED),
		  "sense copied after EINTR");
	cr_expect(zero(int, memcmp(&c.h.v3, &before, sizeof(before))), "header written");
	cr_expect(eq(ulong, stat_get(&g, STAT_INTERRUPT), 1));
	rig_fini(&g);
}

Test(sgio, interrupt_while_queued_never_runs)
{
	struct rig g;
	struct client a, b;
	struct fake_reply *rep;
	fuse_req_t req_a, req_b;

	rig_init(&g, 1, O_RDWR);
	client_v3(&a, SG_DXFER_FROM_DEV, 4096);
	client_v3(&b, SG_DXFER_FROM_DEV, 4096);
	script_good(g.ft, 4096);
	fake_target_set_block(g.ft, true);
	req_a = send_ioctl(&g, SG_IO, 0, true, &a.h, NULL, 0, 0);
	cr_assert(fake_target_wait_entered(g.ft, 1));
	req_b = send_ioctl(&g, SG_IO, 0, true, &b.h, NULL, 0, 0);
	cr_expect(eq(u32, pool_backlog(g.d.pool), 1));

	fake_interrupt(req_b);
	rep = wait_reply(&g, req_b);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINTR));

	fake_target_release(g.ft);
	rep = wait_reply(&g, req_a);
	cr_expect(eq(int, rep->kind, FAKE_IOCTL));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 1), "the interrupted command ran");
	cr_expect(eq(u32, fake_reply_count(g.fs), 2));
	cr_expect(eq(u32, fake_req_replies(req_b), 1));
	cr_expect(is_pattern(a.m.data, 0, 4096));
	cr_expect(fake_all_bytes(b.m.data, sizeof(b.m.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, interrupt_before_submission_never_runs)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	fuse_req_t req;

	direct_read_4k(&g, &c);
	script_good(g.ft, 4096);
	req = fake_req_new(g.fs);
	/* the INTERRUPT arrived before the callback was registered */
	fake_interrupt(req);
	ioctl_on(&g, req, gettid(), SG_IO, &c.h);
	rep = wait_reply(&g, req);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINTR));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(eq(u32, fake_reply_count(g.fs), 1));
	cr_expect(fake_all_bytes(c.m.data, sizeof(c.m.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(sgio, interrupt_on_retry_path_final_round)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	fuse_req_t req;

	retry_read_4k(&g, &c);
	script_good(g.ft, 4096);
	retry_to_final(&g, &c, &k);
	fake_target_set_block(g.ft, true);
	req = send_ioctl(&g, SG_IO, 0, false, &c.h, k.in, k.in_len, k.out_len);
	cr_assert(fake_target_wait_entered(g.ft, 1));
	fake_interrupt(req);
	rep = wait_reply(&g, req);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EINTR));
	fake_target_release(g.ft);
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(req), 1));
	cr_expect(eq(u32, fake_reply_count(g.fs), 3), "two retries and EINTR, nothing more");
	free(k.in);
	rig_fini(&g);
}

Test(sgio, interrupt_after_reply_is_ignored)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;

	direct_read_4k(&g, &c);
	script_good(g.ft, 4096);
	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	fake_interrupt(rep->req);
	rig_stop(&g);
	cr_expect(eq(u32, fake_reply_count(g.fs), 1));
	cr_expect(zero(ulong, stat_get(&g, STAT_INTERRUPT)));
	rig_fini(&g);
}

Test(sgio, concurrent_commands_each_get_one_reply)
{
	enum { N = 16 };
	static struct client c[N];
	struct rig g;
	fuse_req_t req[N];

	rig_init(&g, 4, O_RDWR);
	script_good(g.ft, 4096);
	for (int i = 0; i < N; i++) {
		client_v3(&c[i], SG_DXFER_FROM_DEV, 4096);
		req[i] = send_ioctl(&g, SG_IO, 0, true, &c[i].h, NULL, 0, 0);
	}
	for (int i = 0; i < N; i++) {
		struct fake_reply *rep = fake_wait_reply(g.fs);

		cr_assert(not(eq(ptr, rep, NULL)));
		cr_expect(eq(int, rep->kind, FAKE_IOCTL));
	}
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), N));
	for (int i = 0; i < N; i++) {
		cr_expect(eq(u32, fake_req_replies(req[i]), 1), "command %d", i);
		cr_expect(is_pattern(c[i].m.data, 0, 4096), "command %d", i);
		cr_expect(lt(u32, c[i].h.v3.duration, 10000), "command %d", i);
	}
	rig_fini(&g);
}

Test(sgio, each_opener_uses_its_own_channel)
{
	struct rig g;
	struct client c;
	struct opener *o2;
	struct fake_reply *rep;

	rig_init(&g, 2, O_RDWR);
	cr_assert(zero(int, opener_new(&g.d, O_RDWR, false, gettid(), NULL, &o2)));
	cr_assert(eq(int, atomic_load(&o2->chan), -1), "an idle opener holds no channel");
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	script_good(g.ft, 4096);

	rep = direct_sg_io(&g, &c);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, g.ft->seen.chan, atomic_load(&g.o->chan)));
	cr_expect(ge(int, atomic_load(&g.o->chan), 0), "opened by its first command");
	rep = wait_reply(&g, fake_ioctl_on(fake_req_new(g.fs), o2, gettid(), SG_IO, &c.h));
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, g.ft->seen.chan, atomic_load(&o2->chan)));
	cr_expect(ne(int, atomic_load(&o2->chan), atomic_load(&g.o->chan)));
	rig_stop(&g);
	opener_put(o2);
	rig_fini(&g);
}

/* ---- informational ioctls ---- */

Test(ioctl, get_version_num_retry)
{
	struct rig g;
	struct fake_reply *rep;
	struct kround k = { 0 };
	int v = -1;

	rig_init_retry(&g, 1, O_RDWR);
	rep = round_trip(&g, SG_GET_VERSION_NUM, false, &v, NULL, 0, 0);
	expect_round(rep, "round 1", NO_IOVS, IOVS({ &v, sizeof(int) }));
	kernel_retry(rep, &k);
	rep = round_trip(&g, SG_GET_VERSION_NUM, false, &v, k.in, k.in_len, k.out_len);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_assert(eq(sz, rep->len, sizeof(int)));
	memcpy(&v, rep->data, sizeof(v));
	cr_expect(eq(int, v, 30536));
	free(k.in);
	rig_fini(&g);
}

Test(ioctl, get_version_num_direct)
{
	struct rig g;
	struct fake_reply *rep;
	int v = -1;

	rig_init(&g, 1, O_RDWR);
	rep = round_trip(&g, SG_GET_VERSION_NUM, true, &v, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(zero(sz, rep->len));
	cr_expect(eq(int, v, 30536));
	rig_fini(&g);
}

Test(ioctl, get_timeout_is_the_result_without_argument_access)
{
	struct rig g;
	struct fake_reply *rep;

	rig_init(&g, 1, O_RDWR);
	/* direct path with an argument that would fault if touched */
	rep = round_trip(&g, SG_GET_TIMEOUT, true, (void *)8, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, rep->result, 6000));
	cr_expect(zero(sz, rep->len));
	/* retry path: answered in the first round, no retry */
	rep = round_trip(&g, SG_GET_TIMEOUT, false, (void *)8, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, rep->result, 6000));
	cr_expect(zero(sz, rep->len));
	rig_fini(&g);
}

Test(ioctl, set_timeout)
{
	struct rig g;
	struct fake_reply *rep;
	int v = -1;

	rig_init(&g, 1, O_RDWR);
	rep = round_trip(&g, SG_SET_TIMEOUT, true, &v, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EIO));
	rep = round_trip(&g, SG_GET_TIMEOUT, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->result, 6000), "unchanged by a refused set");
	v = 1234;
	rep = round_trip(&g, SG_SET_TIMEOUT, true, &v, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	rep = round_trip(&g, SG_GET_TIMEOUT, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->result, 1234));
	rig_fini(&g);
}

Test(ioctl, set_timeout_negative_retry_is_eio)
{
	struct rig g;
	struct fake_reply *rep;
	unsigned rounds;
	int v = -1;

	rig_init_retry(&g, 1, O_RDWR);
	rep = round_trip(&g, SG_SET_TIMEOUT, false, &v, NULL, 0, 0);
	expect_round(rep, "round 1", IOVS({ &v, sizeof(int) }), NO_IOVS);
	rep = kernel_ioctl(&g, SG_SET_TIMEOUT, &v, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EIO));
	cr_expect(eq(u32, rounds, 2));
	rig_fini(&g);
}

static int get_int_direct(struct rig *g, unsigned cmd)
{
	struct fake_reply *rep;
	int v = 0x5a5a5a5a;

	rep = round_trip(g, cmd, true, &v, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL), "ioctl 0x%x", cmd);
	cr_assert(zero(int, rep->result), "ioctl 0x%x", cmd);
	return v;
}

static int set_int_direct(struct rig *g, unsigned cmd, int v)
{
	struct fake_reply *rep = round_trip(g, cmd, true, &v, NULL, 0, 0);

	return rep->kind == FAKE_ERR ? -rep->err : rep->result;
}

Test(ioctl, reserved_size_clamps_to_the_daemon_max)
{
	struct rig g;
	uint32_t max;

	rig_init(&g, 1, O_RDWR);
	max = bsgdev_max_sectors_bytes(&g.d);
	cr_assert(eq(u32, max, FAKE_MAX_SECTORS_BYTES));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_RESERVED_SIZE), 32768));
	cr_expect(zero(int, set_int_direct(&g, SG_SET_RESERVED_SIZE, 4096)));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_RESERVED_SIZE), 4096));
	cr_expect(zero(int, set_int_direct(&g, SG_SET_RESERVED_SIZE, 1 << 30)));
	cr_expect(eq(int, atomic_load(&g.o->reserved), (int)max), "clamped when set");
	cr_expect(eq(int, get_int_direct(&g, SG_GET_RESERVED_SIZE), (int)max));
	cr_expect(eq(int, set_int_direct(&g, SG_SET_RESERVED_SIZE, -1), -EINVAL));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_RESERVED_SIZE), (int)max));
	rig_fini(&g);
}

Test(ioctl, retry_path_max_is_the_exchange_limit)
{
	struct rig g;
	struct fake_reply *rep;
	int v = 0;

	rig_init_retry(&g, 1, O_RDWR);
	rep = kernel_ioctl(&g, BLKSECTGET, &v, NULL);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, v, (int)RETRY_MAX_XFER));
	rig_fini(&g);
}

Test(ioctl, get_scsi_id_encodes_hctl)
{
	struct rig g;
	struct fake_reply *rep;
	struct sg_scsi_id id;
	unsigned rounds;

	memset(&id, 0xff, sizeof(id));
	rig_init_retry(&g, 1, O_RDWR);
	rep = kernel_ioctl(&g, SG_GET_SCSI_ID, &id, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(u32, rounds, 2));
	cr_expect(eq(sz, rep->len, sizeof(id)));
	cr_expect(eq(int, id.host_no, FAKE_HOST));
	cr_expect(eq(int, id.channel, FAKE_CHANNEL));
	cr_expect(eq(int, id.scsi_id, FAKE_ID));
	cr_expect(eq(int, id.lun, FAKE_LUN));
	cr_expect(zero(int, id.scsi_type));
	cr_expect(eq(i16, id.h_cmd_per_lun, 3));
	cr_expect(eq(i16, id.d_queue_depth, 31));
	cr_expect(zero(int, id.unused[0]));
	cr_expect(zero(int, id.unused[1]));
	rig_fini(&g);
}

Test(ioctl, get_idlun_encodes_hctl)
{
	struct rig g;
	struct fake_reply *rep;
	struct {
		int dev_id;
		int host_unique_id;
	} idlun = { -1, -1 };

	rig_init(&g, 1, O_RDWR);
	rep = round_trip(&g, SCSI_IOCTL_GET_IDLUN, true, &idlun, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(eq(int, idlun.dev_id,
		     FAKE_ID | FAKE_LUN << 8 | FAKE_CHANNEL << 16 | FAKE_HOST << 24));
	cr_expect(eq(int, idlun.host_unique_id, FAKE_UNIQUE_ID));
	rig_fini(&g);
}

struct get_case {
	char name[32];
	unsigned cmd;
	int expect;
};

ParameterizedTestParameters(ioctl, get_int)
{
	static struct get_case cases[] = {
		{ "SG_GET_VERSION_NUM", SG_GET_VERSION_NUM, 30536 },
		{ "SG_GET_RESERVED_SIZE", SG_GET_RESERVED_SIZE, 32768 },
		{ "SG_EMULATED_HOST", SG_EMULATED_HOST, 0 },
		{ "SCSI_IOCTL_GET_BUS_NUMBER", SCSI_IOCTL_GET_BUS_NUMBER, FAKE_HOST },
		{ "SG_GET_SG_TABLESIZE", SG_GET_SG_TABLESIZE, 128 },
		{ "SG_GET_ACCESS_COUNT", SG_GET_ACCESS_COUNT, 1 },
		{ "BLKSECTGET", BLKSECTGET, FAKE_MAX_SECTORS_BYTES },
		{ "SG_GET_COMMAND_Q", SG_GET_COMMAND_Q, 0 },
		{ "SG_GET_PACK_ID", SG_GET_PACK_ID, -1 },
		{ "SG_GET_NUM_WAITING", SG_GET_NUM_WAITING, 0 },
		{ "SG_GET_KEEP_ORPHAN", SG_GET_KEEP_ORPHAN, 0 },
		{ "SG_GET_LOW_DMA", SG_GET_LOW_DMA, 0 },
	};

	return cr_make_param_array(struct get_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct get_case *tc, ioctl, get_int)
{
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	cr_expect(eq(int, get_int_direct(&g, tc->cmd), tc->expect), "%s", tc->name);
	rig_fini(&g);
}

Test(ioctl, set_flags_read_back)
{
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	/* sg's switch, or bsg's depth for v4 writes: kept as given */
	cr_expect(zero(int, set_int_direct(&g, SG_SET_COMMAND_Q, 1)));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_COMMAND_Q), 1));
	cr_expect(zero(int, set_int_direct(&g, SG_SET_COMMAND_Q, 5)));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_COMMAND_Q), 5));
	cr_expect(eq(int, set_int_direct(&g, SG_SET_COMMAND_Q, 257), -EINVAL));
	cr_expect(eq(int, set_int_direct(&g, SG_SET_COMMAND_Q, -1), -EINVAL));
	cr_expect(zero(int, set_int_direct(&g, SG_SET_KEEP_ORPHAN, 1)));
	cr_expect(eq(int, get_int_direct(&g, SG_GET_KEEP_ORPHAN), 1));
	cr_expect(zero(int, set_int_direct(&g, SG_SET_KEEP_ORPHAN, 0)));
	cr_expect(zero(int, get_int_direct(&g, SG_GET_KEEP_ORPHAN)));
	rig_fini(&g);
}

Test(ioctl, next_cmd_len_over_the_bound_is_enomem)
{
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	cr_expect(eq(int, set_int_direct(&g, SG_NEXT_CMD_LEN, SCSI_V3_CDB_MAX + 1), -ENOMEM));
	cr_expect(zero(int, set_int_direct(&g, SG_NEXT_CMD_LEN, 16)));
	cr_expect(eq(int, atomic_load(&g.o->next_cmd_len), 16));
	rig_fini(&g);
}

Test(ioctl, get_request_table_is_zeroed)
{
	struct rig g;
	struct fake_reply *rep;
	struct sg_req_info table[SG_MAX_QUEUE];

	memset(table, 0xff, sizeof(table));
	rig_init(&g, 1, O_RDWR);
	rep = round_trip(&g, SG_GET_REQUEST_TABLE, true, table, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(fake_all_bytes((unsigned char *)table, sizeof(table), 0));
	rig_fini(&g);
}

struct unknown_case {
	char name[16];
	int open_flags;
	int err;
};

ParameterizedTestParameters(ioctl, unknown)
{
	static struct unknown_case cases[] = {
		{ "O_RDONLY", O_RDONLY, EPERM },
		{ "O_WRONLY", O_WRONLY, EPERM },
		{ "O_RDWR", O_RDWR, EINVAL },
	};

	return cr_make_param_array(struct unknown_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct unknown_case *tc, ioctl, unknown)
{
	struct rig g;
	struct fake_reply *rep;

	rig_init_retry(&g, 1, tc->open_flags);
	rep = round_trip(&g, 0x1234, false, NULL, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_ERR), "%s", tc->name);
	cr_expect(eq(int, rep->err, tc->err), "%s", tc->name);
	rig_fini(&g);
}

Test(ioctl, compat_caller_is_enotty)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	fuse_req_t req;
	int v = -1;

	rig_init(&g, 1, O_RDWR);
	req = send_ioctl(&g, SG_GET_VERSION_NUM, FUSE_IOCTL_COMPAT, true, &v, NULL, 0, 0);
	rep = wait_reply(&g, req);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, ENOTTY));
	cr_expect(eq(int, v, -1));
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	req = send_ioctl(&g, SG_IO, FUSE_IOCTL_COMPAT, true, &c.h, NULL, 0, 0);
	rep = wait_reply(&g, req);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, ENOTTY));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* ---- the mid-layer's ioctls, forwarded to the target ---- */

#define MID_RESET_DEVICE 1 /* SG_SCSI_RESET_DEVICE */

/* a caller with CAP_SYS_ADMIN and CAP_SYS_RAWIO (root) resets; nonblock as opened */
Test(midlayer, reset_by_root_reaches_the_target)
{
	struct rig g;
	struct fake_reply *rep;
	int val = MID_RESET_DEVICE;

	unit_need_root("needs root: the caller's CAP_SYS_ADMIN and CAP_SYS_RAWIO");
	rig_init(&g, 1, O_RDWR | O_NONBLOCK);
	g.ft->ioctl.arg_len = sizeof(int);
	rep = round_trip(&g, SG_SCSI_RESET, true, &val, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(eq(u32, g.ft->ioctl.calls, 1));
	cr_expect(eq(u32, g.ft->ioctl.cmd, SG_SCSI_RESET));
	cr_expect(eq(int, *(int *)g.ft->ioctl.arg, MID_RESET_DEVICE));
	cr_expect(g.ft->ioctl.nonblock, "the file was opened O_NONBLOCK");
	rig_fini(&g);
}

struct reset_cap_case {
	const char *name;
	unsigned cap;
};

ParameterizedTestParameters(midlayer, reset_without_a_capability_is_eacces)
{
	static struct reset_cap_case cases[] = {
		{ "no CAP_SYS_ADMIN", CAP_SYS_ADMIN },
		{ "no CAP_SYS_RAWIO", CAP_SYS_RAWIO },
	};

	return cr_make_param_array(struct reset_cap_case, cases, sizeof(cases) / sizeof(cases[0]));
}

/* the caller's capabilities, not the daemon's nor the opener's */
ParameterizedTest(struct reset_cap_case *tc, midlayer, reset_without_a_capability_is_eacces)
{
	struct rig g;
	struct fake_reply *rep;
	int val = MID_RESET_DEVICE;

	rig_init(&g, 1, O_RDWR);
	fake_set_cap(tc->cap, false);
	rep = round_trip(&g, SG_SCSI_RESET, true, &val, NULL, 0, 0);
	fake_set_cap(tc->cap, true);
	cr_assert(eq(int, rep->kind, FAKE_ERR), "%s", tc->name);
	cr_expect(eq(int, rep->err, EACCES), "%s", tc->name);
	/* before the argument is read: an unprivileged caller's bad pointer too */
	fake_set_cap(tc->cap, false);
	rep = round_trip(&g, SG_SCSI_RESET, true, (void *)8, NULL, 0, 0);
	fake_set_cap(tc->cap, true);
	cr_expect(eq(int, rep->err, EACCES), "%s, bad pointer", tc->name);
	cr_expect(zero(u32, g.ft->ioctl.calls), "%s: never reaches the target", tc->name);
	rig_fini(&g);
}

Test(midlayer, reset_retry_path_fetches_the_value_then_forwards)
{
	struct rig g;
	struct fake_reply *rep;
	unsigned rounds;
	int val = 3; /* SG_SCSI_RESET_BUS */

	unit_need_root("needs root: the caller's CAP_SYS_ADMIN and CAP_SYS_RAWIO");
	rig_init_retry(&g, 1, O_RDONLY); /* sg takes a reset on any file */
	g.ft->ioctl.arg_len = sizeof(int);
	rep = kernel_ioctl(&g, SG_SCSI_RESET, &val, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(u32, rounds, 2));
	cr_expect(eq(int, *(int *)g.ft->ioctl.arg, 3));
	cr_expect(not(g.ft->ioctl.nonblock));
	rig_fini(&g);
}

/* scsi_ioctl_reset() says EIO for a value it does not know: the target's errno */
Test(midlayer, reset_target_errno_is_the_reply)
{
	struct rig g;
	struct fake_reply *rep;
	int val = 77;

	unit_need_root("needs root: the caller's CAP_SYS_ADMIN and CAP_SYS_RAWIO");
	rig_init(&g, 1, O_RDWR);
	g.ft->ioctl.ret = -EIO;
	rep = round_trip(&g, SG_SCSI_RESET, true, &val, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EIO));
	rig_fini(&g);
}

Test(midlayer, reset_of_a_device_gone_is_enodev)
{
	struct rig g;
	struct fake_reply *rep;
	int val = MID_RESET_DEVICE;

	rig_init(&g, 1, O_RDWR);
	atomic_store(&g.d.target_gone, true);
	rep = round_trip(&g, SG_SCSI_RESET, true, &val, NULL, 0, 0);
	cr_expect(eq(int, rep->err, ENODEV));
	rep = round_trip(&g, SG_GET_SCSI_ID, true, &val, NULL, 0, 0);
	cr_expect(eq(int, rep->err, ENODEV), "sg's informational ioctls too");
	cr_expect(zero(u32, g.ft->ioctl.calls));
	rig_fini(&g);
}

struct bsg_case {
	const char *name;
	unsigned cmd;
	int err;
};

ParameterizedTestParameters(midlayer, bsg_target_answers_as_bsg)
{
	static struct bsg_case cases[] = {
		{ "SG_SCSI_RESET", SG_SCSI_RESET, ENOTTY },
		{ "SCSI_IOCTL_SEND_COMMAND", 1, EINVAL },
		{ "SCSI_IOCTL_PROBE_HOST", MIDLAYER_PROBE_HOST, ENOTTY },
		{ "SCSI_IOCTL_GET_PCI", MIDLAYER_GET_PCI, ENOTTY },
		{ "SCSI_IOCTL_START_UNIT", MIDLAYER_START_UNIT, ENOTTY },
	};

	return cr_make_param_array(struct bsg_case, cases, sizeof(cases) / sizeof(cases[0]));
}

/* bsg_ioctl() knows none of them, and reads no argument to say so */
ParameterizedTest(struct bsg_case *tc, midlayer, bsg_target_answers_as_bsg)
{
	struct rig g;
	struct fake_reply *rep;

	rig_init(&g, 1, O_RDWR);
	g.ft->base.info.kind = TARGET_BSG;
	rep = round_trip(&g, tc->cmd, true, (void *)8, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_ERR), "%s", tc->name);
	cr_expect(eq(int, rep->err, tc->err), "%s", tc->name);
	cr_expect(zero(u32, g.ft->ioctl.calls), "%s", tc->name);
	rig_fini(&g);
}

/* struct scsi_ioctl_command with room for a page */
struct sic {
	uint32_t inlen, outlen;
	uint8_t data[4096 + 64];
};

static void sic_init(struct sic *s, uint32_t inlen, uint32_t outlen, const uint8_t *cdb,
		     unsigned cdb_len)
{
	memset(s, FAKE_UNTOUCHED, sizeof(*s));
	s->inlen = inlen;
	s->outlen = outlen;
	memcpy(s->data, cdb, cdb_len);
	for (uint32_t i = 0; i < inlen; i++)
		s->data[cdb_len + i] = fake_pattern(i);
}

static const uint8_t INQUIRY_CDB[6] = { 0x12, 0, 0, 0, 36, 0 };

/* the target writes outlen bytes of data-in over the command, at data */
static void script_sic_data(struct fake_target *t, size_t len)
{
	t->ioctl.out_off = 8;
	t->ioctl.out_len = len;
	for (size_t i = 0; i < len; i++)
		t->ioctl.out[i] = fake_pattern(i);
}

Test(midlayer, send_command_direct_returns_outlen_bytes)
{
	struct rig g;
	struct fake_reply *rep;
	struct sic s, sent;

	rig_init(&g, 1, O_RDONLY); /* INQUIRY: any open file, as sg */
	sic_init(&s, 0, 36, INQUIRY_CDB, 6);
	sent = s;
	g.ft->ioctl.arg_len = 8 + 6;
	script_sic_data(g.ft, 36);
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(eq(u32, g.ft->ioctl.cmd, 1));
	cr_expect(zero(int, memcmp(g.ft->ioctl.arg, &sent, 8 + 6)),
		  "inlen, outlen and the 6-byte CDB");
	cr_expect(is_pattern(s.data, 0, 36));
	cr_expect(fake_all_bytes(s.data + 36, 64, FAKE_UNTOUCHED), "nothing past outlen");
	cr_expect(eq(u32, s.inlen, 0));
	cr_expect(eq(u32, s.outlen, 36));
	rig_fini(&g);
}

/* a status: the ioctl's value, and 8 + the sense's additional length, at most 16 */
Test(midlayer, send_command_status_returns_16_bytes_of_sense)
{
	static const uint8_t sense[18] = { 0x70, 0, 5, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x21 };
	struct rig g;
	struct fake_reply *rep;
	struct sic s;

	rig_init(&g, 1, O_RDWR);
	sic_init(&s, 0, 512, (const uint8_t[10]){ 0x28, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 1 }, 10);
	g.ft->ioctl.ret = 2; /* CHECK CONDITION */
	g.ft->ioctl.out_off = 8;
	g.ft->ioctl.out_len = sizeof(sense);
	memcpy(g.ft->ioctl.out, sense, sizeof(sense));
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, rep->result, 2));
	cr_expect(zero(int, memcmp(s.data, sense, 16)));
	cr_expect(fake_all_bytes(s.data + 16, 64, FAKE_UNTOUCHED), "16 bytes of sense at most");
	rig_fini(&g);
}

/* rounds: the lengths, the opcode, then the command with room for the answer */
Test(midlayer, send_command_retry_path_with_data_out)
{
	static const uint8_t write10[10] = { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	struct rig g;
	struct fake_reply *rep;
	unsigned rounds;
	struct sic s;

	rig_init_retry(&g, 1, O_RDWR);
	sic_init(&s, 512, 0, write10, 10);
	g.ft->ioctl.arg_len = 8 + 10 + 512;
	rep = kernel_ioctl(&g, 1, &s, &rounds);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, rep->result));
	cr_expect(eq(u32, rounds, 4));
	cr_expect(zero(int, memcmp(g.ft->ioctl.arg + 8, write10, 10)));
	cr_expect(is_pattern(g.ft->ioctl.arg + 18, 0, 512), "data-out after the CDB");
	rig_fini(&g);
}

Test(midlayer, send_command_takes_the_access_policy)
{
	static const uint8_t write10[10] = { 0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	struct rig g;
	struct fake_reply *rep;
	struct sic s;

	unit_need_root("needs root: the caller's CAP_SYS_RAWIO");
	rig_init(&g, 1, O_RDONLY);
	sic_init(&s, 512, 0, write10, 10);
	fake_set_rawio(false);
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	fake_set_rawio(true);
	cr_assert(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EPERM), "WRITE(10) on a read-only file, no CAP_SYS_RAWIO");
	cr_expect(zero(u32, g.ft->ioctl.calls));
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	cr_expect(eq(int, rep->kind, FAKE_IOCTL), "with CAP_SYS_RAWIO");
	rig_fini(&g);
}

Test(midlayer, send_command_bad_lengths_and_null_are_einval)
{
	struct rig g;
	struct fake_reply *rep;
	struct sic s;

	rig_init(&g, 1, O_RDWR);
	sic_init(&s, 0, 4097, INQUIRY_CDB, 6);
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	cr_expect(eq(int, rep->err, EINVAL), "outlen over a page");
	sic_init(&s, 4097, 0, INQUIRY_CDB, 6);
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	cr_expect(eq(int, rep->err, EINVAL), "inlen over a page");
	rep = round_trip(&g, 1, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->err, EINVAL), "no argument");
	rep = round_trip(&g, 1, true, (void *)8, NULL, 0, 0);
	cr_expect(eq(int, rep->err, EFAULT), "an unreadable one");
	cr_expect(zero(u32, g.ft->ioctl.calls));
	rig_fini(&g);
}

static void script_host(struct fake_target *t, const char *s)
{
	t->ioctl.ret = 1;
	t->ioctl.out_len = strlen(s) + 1;
	memcpy(t->ioctl.out, s, t->ioctl.out_len);
}

/* ioctl_probe(): len bytes, or the string and its NUL; 1 */
Test(midlayer, probe_host_copies_as_ioctl_probe)
{
	struct rig g;
	struct fake_reply *rep;
	union {
		uint32_t len;
		char s[64];
	} u;

	rig_init(&g, 1, O_RDONLY);
	script_host(g.ft, "fake host");
	memset(&u, FAKE_UNTOUCHED, sizeof(u));
	u.len = 60;
	rep = round_trip(&g, MIDLAYER_PROBE_HOST, true, &u, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(int, rep->result, 1));
	cr_expect(eq(str, u.s, "fake host"));
	cr_expect(fake_all_bytes((unsigned char *)u.s + 10, 54, FAKE_UNTOUCHED));
	memset(&u, FAKE_UNTOUCHED, sizeof(u));
	u.len = 4;
	g.ft->ioctl.out_len = 4; /* the kernel copies len bytes: no NUL */
	rep = kernel_ioctl(&g, MIDLAYER_PROBE_HOST, &u, NULL);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, memcmp(u.s, "fake", 4)));
	cr_expect(fake_all_bytes((unsigned char *)u.s + 4, 60, FAKE_UNTOUCHED));
	rep = round_trip(&g, MIDLAYER_PROBE_HOST, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->result, 1), "no buffer: 1, nothing copied");
	cr_expect(not(g.ft->ioctl.had_arg));
	rig_fini(&g);
}

/* sg's default: what it does not answer itself, a read-only file may not */
Test(midlayer, get_pci_and_command_ioctls_need_a_read_write_file)
{
	static const unsigned cmds[] = { MIDLAYER_GET_PCI, MIDLAYER_STOP_UNIT, MIDLAYER_START_UNIT,
					 MIDLAYER_DOORLOCK };
	struct rig g;
	struct fake_reply *rep;
	char name[32];

	rig_init(&g, 1, O_RDONLY);
	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		rep = round_trip(&g, cmds[i], true, name, NULL, 0, 0);
		cr_expect(eq(int, rep->err, EPERM), "0x%x", cmds[i]);
	}
	cr_expect(zero(u32, g.ft->ioctl.calls));
	g.o->open_flags = O_RDWR;
	rep = round_trip(&g, MIDLAYER_START_UNIT, true, NULL, NULL, 0, 0);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(eq(u32, g.ft->ioctl.cmd, MIDLAYER_START_UNIT));
	cr_expect(not(g.ft->ioctl.had_arg));
	memset(name, FAKE_UNTOUCHED, sizeof(name));
	g.ft->ioctl.out_len = 8;
	memcpy(g.ft->ioctl.out, "pseudo_0", 8);
	rep = kernel_ioctl(&g, MIDLAYER_GET_PCI, name, NULL);
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	cr_expect(zero(int, memcmp(name, "pseudo_0", 8)));
	cr_expect(fake_all_bytes((unsigned char *)name + 8, 24, FAKE_UNTOUCHED), "no NUL, as sg");
	rig_fini(&g);
}

Test(midlayer, get_transform_einval_and_blktrace_enotty)
{
	struct rig g;
	struct fake_reply *rep;

	rig_init(&g, 1, O_RDONLY);
	rep = round_trip(&g, 0x2205 /* SG_GET_TRANSFORM */, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->err, EINVAL), "the host's ioctl, or EINVAL: on any file");
	rep = round_trip(&g, BLKTRACESTART, true, NULL, NULL, 0, 0);
	cr_expect(eq(int, rep->err, ENOTTY));
	rig_fini(&g);
}

/* ---- where a command runs: on the calling libfuse worker, or the pool ---- */

Test(sgio, runs_on_the_libfuse_worker_within_the_budget)
{
	struct rig g;
	struct client c;
	fuse_req_t req;

	rig_init(&g, 2, O_RDWR);
	g.d.inline_max = 1;
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	script_check(g.ft, 4096, 0);
	req = send_ioctl(&g, SG_IO, 0, true, &c.h, NULL, 0, 0);
	/* answered before the callback returned: it ran right here */
	cr_expect(eq(u32, fake_reply_count(g.fs), 1));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(eq(int, wait_reply(&g, req)->kind, FAKE_IOCTL));
	cr_expect(zero(u32, atomic_load(&g.d.inline_busy)), "the budget is given back");
	rig_fini(&g);
}

Test(sgio, queues_to_the_pool_past_the_budget)
{
	struct rig g;
	struct client c;
	fuse_req_t req;

	rig_init(&g, 2, O_RDWR);
	g.d.inline_max = 1;
	atomic_store(&g.d.inline_busy, 1); /* one libfuse worker already busy */
	fake_target_set_block(g.ft, true);
	client_v3(&c, SG_DXFER_FROM_DEV, 4096);
	script_check(g.ft, 4096, 0);
	req = send_ioctl(&g, SG_IO, 0, true, &c.h, NULL, 0, 0);
	cr_assert(fake_target_wait_entered(g.ft, 1), "the pool never ran it");
	cr_expect(zero(u32, fake_reply_count(g.fs)), "the callback must not wait for the target");
	fake_target_release(g.ft);
	cr_expect(eq(int, wait_reply(&g, req)->kind, FAKE_IOCTL));
	cr_expect(eq(u32, atomic_load(&g.d.inline_busy), 1));
	rig_fini(&g);
}

Test(target, bulk_channel_takes_data_transfers_from_bulk_min_to_max_sectors)
{
	struct target t = { .info = { .bulk_min = 64u << 10, .bulk_max = 512u << 10 } };
	struct scsi_cmd c = { .dir = SCSI_DIR_FROM_DEV };

	c.data_len = 4096;
	cr_expect(not(target_bulk(&t, &c)), "small: the opener's own sg channel");
	c.data_len = 64u << 10;
	cr_expect(target_bulk(&t, &c));
	c.dir = SCSI_DIR_TO_DEV;
	c.data_len = 512u << 10;
	cr_expect(target_bulk(&t, &c), "writes too, up to bulk_max");
	c.data_len = (512u << 10) + 512;
	cr_expect(not(target_bulk(&t, &c)), "beyond what bsg may map: sg");
	c.dir = SCSI_DIR_TO_FROM_DEV;
	c.data_len = 64u << 10;
	cr_expect(not(target_bulk(&t, &c)), "sg's v3-only both ways: sg");
	c.dir = SCSI_DIR_NONE;
	c.data_len = 0;
	cr_expect(not(target_bulk(&t, &c)));
	t.info.bulk_min = 0;
	c.dir = SCSI_DIR_FROM_DEV;
	c.data_len = 128u << 10;
	cr_expect(not(target_bulk(&t, &c)), "no bsg node: sg takes everything");
}

/*
 * The retry path with no dxferp: the plan asks the kernel for no data
 * iovec (cmd->nsegs is 0), and the reply carries no data either.  With
 * data in it, the reply was longer than out_size (the kernel's FUSE says
 * EIO), or, with a sense buffer big enough, the data landed in the
 * client's sense buffer ahead of the sense.
 */
Test(sgio, retry_v3_without_a_data_pointer_reply_fits_the_plan)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	unsigned rounds = 0;

	retry_read_4k(&g, &c);
	c.h.v3.dxferp = NULL;
	script_good(g.ft, 4096);
	for (;;) {
		cr_assert(lt(u32, rounds, 8));
		rep = retry_round(&g, &c, &k);
		rounds++;
		if (rep->kind != FAKE_RETRY)
			break;
		kernel_retry(rep, &k);
	}
	cr_assert(eq(int, rep->kind, FAKE_IOCTL_IOV));
	/* fs/fuse/ioctl.c: transferred > out_size is EIO to the client */
	cr_expect(le(sz, rep->len, k.out_len),
		  "the reply (%zu bytes) is longer than the client's out iovecs (%zu): EIO",
		  rep->len, k.out_len);
	free(k.in);
	rig_fini(&g);
}

/*
 * The retry path with no dxferp on a data-out command: the plan asks the
 * kernel for no data (cmd->nsegs is 0), so the final round's in_buf holds
 * the header and the CDB only, and nothing past the CDB is taken as data
 * (it was once: a read past the request's buffer, other requests' bytes,
 * sent to the device).  A new buffer's zeroes go, as sg's reserve buffer.
 */
Test(sgio, retry_v3_write_without_a_data_pointer_sends_zeroes)
{
	struct rig g;
	struct client c;
	struct fake_reply *rep;
	struct kround k = { 0 };
	unsigned char *in;
	unsigned rounds = 0;

	rig_init_retry(&g, 2, O_RDWR);
	client_v3(&c, SG_DXFER_TO_DEV, 8192);
	c.h.v3.dxferp = NULL;
	for (;;) {
		cr_assert(lt(u32, rounds, 8));
		if (rep = NULL, k.in && k.out_len) {
			/* the kernel's in buffer, exactly as long as the plan asked */
			in = malloc(k.in_len);
			memcpy(in, k.in, k.in_len);
			rep = round_trip(&g, SG_IO, false, &c.h, in, k.in_len, k.out_len);
			free(in);
		} else {
			rep = retry_round(&g, &c, &k);
		}
		rounds++;
		if (rep->kind != FAKE_RETRY)
			break;
		kernel_retry(rep, &k);
	}
	cr_expect(eq(sz, g.ft->seen.data_out_len, 8192));
	cr_expect(fake_all_bytes(g.ft->seen.data_out, 8192, 0), "zeroes, no daemon memory");
	free(k.in);
	rig_fini(&g);
}

/* ---- SCSI_IOCTL_SEND_COMMAND's lengths, read twice on the direct path ---- */

#include <sys/syscall.h>

/* As the kernel's sg_scsi_ioctl(): copy_to_user(sic->data, buffer, out_len), out_len from the arg */
static int kernel_like_sic(struct target *t, unsigned cmd, void *arg, bool nonblock)
{
	uint32_t outlen;

	(void)t;
	(void)cmd;
	(void)nonblock;
	memcpy(&outlen, (uint8_t *)arg + 4, sizeof(outlen));
	memset((uint8_t *)arg + 8, 0x5a, outlen);
	return 0;
}

/* The client's second thread, made deterministic: it raises outlen right after the daemon's first read. */
static volatile uint32_t *raise_outlen_at;
static atomic_int reads_seen;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	ssize_t n = syscall(SYS_process_vm_readv, pid, local, liovcnt, remote, riovcnt, flags);

	if (raise_outlen_at && atomic_fetch_add(&reads_seen, 1) == 0)
		*raise_outlen_at = 4096; /* after the lengths were read: a page, within the bound */
	return n;
}

/*
 * The buffer is sized from the first read of outlen, and the target (the
 * kernel) writes the outlen of the last read: a caller that raises it in
 * between is refused, where it once made the daemon's heap take up to a
 * page past its buffer.
 */
Test(midlayer, send_command_outlen_raised_between_reads_stays_in_the_buffer)
{
	static struct target_ops ops;
	struct rig g;
	struct sic s;
	struct fake_reply *rep;

	rig_init(&g, 1, O_RDONLY); /* INQUIRY: anyone who can open the node */
	ops = *g.ft->base.ops;
	ops.ioctl = kernel_like_sic;
	g.ft->base.ops = &ops;
	sic_init(&s, 0, 0, INQUIRY_CDB, 6);
	atomic_store(&reads_seen, 0);
	raise_outlen_at = &s.outlen;
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	raise_outlen_at = NULL;
	cr_expect(eq(int, rep->kind, FAKE_ERR), "outlen changed between the reads: refused");
	rig_fini(&g);
}

/*
 * sg's SCSI_IOCTL_SEND_COMMAND reaches sg_scsi_ioctl(), which asks
 * scsi_cmd_allowed(cmd, f_mode) of every command, O_RDWR or scanner alike;
 * only sg's SG_IO skips the table.  With the sg rule (a binding of an sg
 * descriptor, or 'kernel sg' in --policy) WRITE BUFFER must still be EPERM.
 */
Test(midlayer, send_command_takes_the_table_under_the_sg_rule_too)
{
	static const uint8_t write_buffer[10] = { 0x3b, 0x05, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct filter_policy fp;
	struct rig g;
	struct fake_reply *rep;
	struct sic s;

	rig_init(&g, 1, O_RDWR);
	filter_init(&fp);
	fp.kernel = FILTER_KERNEL_SG;
	cr_assert(zero(int, policy_new(&fp, &g.d.policy)));
	g.d.policy_kernel = POLICY_KERNEL_OWN;
	sic_init(&s, 0, 0, write_buffer, 10);
	fake_set_rawio(false);
	rep = round_trip(&g, 1, true, &s, NULL, 0, 0);
	fake_set_rawio(true);
	cr_expect(eq(int, rep->kind, FAKE_ERR), "the kernel's sg_scsi_ioctl() refuses it");
	cr_expect(eq(int, rep->err, EPERM));
	cr_expect(zero(u32, g.ft->ioctl.calls), "WRITE BUFFER reached the target");
	rig_fini(&g);
	policy_free(g.d.policy);
}

/* ---- SG_IO on the pool, held at the target's gate and interrupted ---- */

/*
 * g with 2 workers, its target answering GOOD with 512 bytes but holding
 * each call at its gate until the call's tag opens; SG_SET_KEEP_ORPHAN if
 * keep_orphan.
 */
static void gated_rig(struct rig *g, bool keep_orphan)
{
	rig_init(g, 2, O_RDWR);
	script_good(g->ft, 512);
	fake_target_set_gate(g->ft, true);
	if (keep_orphan)
		ioctl_set(g, SG_SET_KEEP_ORPHAN, 1);
}

/* An SG_IO of h on the pool, let reach the target's gate, then interrupted: its request. */
static fuse_req_t held_sg_io_interrupted(struct rig *g, struct sg_io_hdr *h)
{
	fuse_req_t req = ioctl_as(g, gettid(), SG_IO, h);

	cr_assert(fake_target_wait_entered(g->ft, 1));
	fake_interrupt(req);
	return req;
}

/* The same, for a signal that ends the call: it is answered EINTR at once. */
static fuse_req_t interrupted_sg_io(struct rig *g, struct sg_io_hdr *h)
{
	fuse_req_t req = held_sg_io_interrupted(g, h);

	cr_assert(eq(int, err_of(req), EINTR), "the caller is answered at once");
	return req;
}

/*
 * A stop: on gated_rig(g, false), whose signal judge says the signal ends
 * nothing, an SG_IO of b's READ (tag 1) held at the gate and interrupted.
 */
static fuse_req_t stopped_sg_io(struct rig *g, struct fake_cmd *b, struct sg_io_hdr *h)
{
	gated_rig(g, false);
	rig_judged(g, false);
	*h = v3_read(b, 1, 512, 1);
	return held_sg_io_interrupted(g, h);
}

Test(sgio, stopped_sg_io_completes)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t req = stopped_sg_io(&g, &b, &h);

	cr_expect(zero(u32, fake_req_replies(req)));
	fake_target_open(g.ft, 1);
	cr_expect(eq(int, reply_of(req)->kind, FAKE_IOCTL), "answered with its result");
	cr_expect(is_data_in(b.data, 512, 1));
	rig_fini(&g);
}

Test(sgio, watched_sg_io_gets_eintr_and_its_result_is_dropped)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t req = stopped_sg_io(&g, &b, &h);

	rig_judged(&g, true);
	cr_expect(eq(int, err_of(req), EINTR));
	fake_target_open(g.ft, 1);
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(req), 1));
	cr_expect(fake_all_bytes(b.data, 512, FAKE_UNTOUCHED), "nothing copied after EINTR");
	rig_fini(&g);
}

/* ---- the access policy ---- */

Test(sgio, policy_without_rawio_reads_but_writes_only_when_open_for_writing)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	unit_need_root("needs root: SG_IO on the direct path takes CAP_SYS_PTRACE");
	rig_init(&g, 1, O_RDONLY);
	script_good(g.ft, 512);
	fake_set_rawio(false); /* a caller without CAP_SYS_RAWIO */
	h = v3_read(&b, 1, 512, 1);
	cr_expect(zero(int, sg_io_errno(&g, &h)), "READ(10) on a read-only file");
	fake_cmd_init(&b, true, 2, 8);
	h = fake_v3_hdr(&b, SG_DXFER_TO_DEV, 512, 2);
	cr_expect(eq(int, sg_io_errno(&g, &h), EPERM), "WRITE(10) on a read-only file");
	cr_expect(eq(u32, fake_target_calls(g.ft), 1), "the refused one never ran");
	cr_expect(eq(ulong, stat_get(&g, STAT_REFUSED), 1));
	g.o->open_flags = O_RDWR;
	cr_expect(zero(int, sg_io_errno(&g, &h)), "WRITE(10) on a file open for writing");
	b.cdb[0] = 0x3b; /* WRITE BUFFER: in neither of the kernel's lists */
	cr_expect(eq(int, sg_io_errno(&g, &h), EPERM), "WRITE BUFFER needs CAP_SYS_RAWIO");
	fake_set_rawio(true);
	cr_expect(zero(int, sg_io_errno(&g, &h)), "and with it, it runs");
	rig_fini(&g);
}

Test(sgio, a_replaced_policy_applies_to_the_next_command)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct filter_policy deny, allow;
	char why[128];
	const char text[] = "deny READ_10\n";

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	filter_init(&allow);
	cr_assert(zero(int, filter_parse(text, strlen(text), &deny, why, sizeof(why))));
	cr_assert(zero(int, policy_new(&allow, &g.d.policy)));
	g.d.policy_kernel = POLICY_KERNEL_OWN;
	h = v3_read(&b, 1, 512, 1);
	cr_expect(zero(int, sg_io_errno(&g, &h)), "the kernel's rule: READ(10) runs");
	policy_replace(g.d.policy, &deny);
	cr_expect(eq(int, sg_io_errno(&g, &h), EPERM), "then denied, by the new policy");
	policy_replace(g.d.policy, &allow);
	cr_expect(zero(int, sg_io_errno(&g, &h)), "and back");
	cr_expect(eq(u32, fake_target_calls(g.ft), 2));
	rig_fini(&g);
	policy_free(g.d.policy);
}

/* ---- SG_SET_KEEP_ORPHAN ---- */

Test(sgio, keep_orphan_leaves_an_interrupted_sg_io_for_read)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t req;

	gated_rig(&g, true);
	h = v3_read(&b, 1, 512, 77);
	req = interrupted_sg_io(&g, &h);
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN), "still running");
	fake_target_open(g.ft, 1);
	wait_done(&g, 1);
	const struct sg_io_hdr *out = v3_out(read_ok(&g, V3, 0));

	cr_expect(eq(int, out->pack_id, 77), "the interrupted command's header");
	cr_expect(zero(int, out->status));
	cr_expect(is_data_in(b.data, 512, 1), "its data-in, into the reader");
	cr_expect(eq(u32, fake_req_replies(req), 1), "the SG_IO was answered once, with EINTR");
	rig_fini(&g);
}

Test(sgio, without_keep_orphan_an_interrupted_sg_io_is_dropped)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	gated_rig(&g, false);
	h = v3_read(&b, 1, 512, 77);
	interrupted_sg_io(&g, &h);
	fake_target_open(g.ft, 1);
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED),
		  "nothing copied after EINTR");
	rig_fini(&g);
}

/*
 * An SG_IO from a context other than the opener's (here: the opener's
 * credentials differ) is not kept when interrupted: only the opener's
 * context may take a completion, so it would be nobody's, or worse.
 */
Test(sgio, keep_orphan_keeps_only_the_openers_context_sg_io)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	uint32_t uid;

	gated_rig(&g, true);
	uid = g.o->ident.c.uid[0];
	g.o->ident.c.uid[0] ^= 1; /* the file was opened by another real uid */
	h = v3_read(&b, 1, 512, 77);
	interrupted_sg_io(&g, &h);
	fake_target_open(g.ft, 1);
	rig_stop(&g);
	g.o->ident.c.uid[0] = uid;
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(zero(int, cmdq_num_waiting(g.o)), "dropped, as without SG_SET_KEEP_ORPHAN");
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED),
		  "nothing copied after EINTR");
	rig_fini(&g);
}

Test(sgio, keep_orphan_result_is_freed_if_the_file_goes_first)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	gated_rig(&g, true);
	h = v3_read(&b, 1, 512, 5);
	interrupted_sg_io(&g, &h);
	rig_release(&g);
	cr_expect(eq(u32, fake_target_chans_open(g.ft), 1), "the kept command holds the opener");
	fake_target_open(g.ft, 1);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_chans_open(g.ft)), "freed with its last command");
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

/*
 * Kept orphans take places in the file's queue, as sg's SG_IO takes one of
 * the file's 16 requests (sg_add_request(): EDOM when none is free): past
 * the bound an interrupted SG_IO is dropped, not kept, so that no file
 * holds more than its queue (each with its struct cmd and up to 1024 iovec
 * segments, charged nowhere).
 */
Test(sgio, keep_orphan_keeps_no_more_than_the_files_queue)
{
	enum { N = 24 };
	struct rig g;
	struct fake_cmd b[N];
	struct sg_io_hdr h[N];

	rig_init(&g, N, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	ioctl_set(&g, SG_SET_KEEP_ORPHAN, 1);
	for (int i = 0; i < N; i++) {
		fuse_req_t req;

		h[i] = v3_read(&b[i], 1, 512, 100 + i);
		req = ioctl_as(&g, gettid(), SG_IO, &h[i]);
		if (!fake_target_wait_entered(g.ft, i + 1))
			break; /* refused (EDOM), as sg's 17th */
		fake_interrupt(req);
		cr_assert(eq(int, err_of(req), EINTR));
	}
	fake_target_open(g.ft, 1);
	rig_stop(&g);
	cr_expect(le(int, cmdq_num_waiting(g.o), SG_MAX_QUEUE),
		  "%d completions kept on a file whose queue holds %d", cmdq_num_waiting(g.o),
		  SG_MAX_QUEUE);
	rig_fini(&g);
}

/*
 * A kept SG_IO orphan (SG_SET_KEEP_ORPHAN) gets a generated_tag of its own
 * on the file's list: without one (cmd_new()'s zero) it answered for the
 * tag SG_IOSUBMIT gave the file's first command, and SG_IORECEIVE (and
 * SG_IOABORT) by that tag took the wrong command.
 */
Test(sgio, kept_orphan_does_not_answer_for_another_commands_tag)
{
	struct rig g;
	struct fake_cmd b1, b2;
	struct sg_io_v4 h1, h2, r;

	gated_rig(&g, true);
	ioctl_set(&g, SG_SET_FORCE_PACK_ID, 1);
	atomic_store(&g.o->prefer_tag, 1); /* SG_CTL_FLAGM_TAG_FOR_PACK_ID */

	h1 = v4_read(&b1, 1, 512, 77);
	(void)interrupted_sg_io(&g, (struct sg_io_hdr *)&h1); /* kept for read() */
	fake_target_open(g.ft, 1);
	wait_done(&g, 1);

	h2 = v4_read(&b2, 2, 512, 88);
	h2.flags = SGV4_FLAG_YIELD_TAG;
	h2.generated_tag = 12345;
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h2)));
	cr_assert(ne(u64, h2.generated_tag, 12345), "a tag yielded");
	fake_target_open(g.ft, 2);
	wait_done(&g, 2);

	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	r.request_tag = h2.generated_tag;
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)));
	cr_expect(eq(u32, r.request_extra, 88),
		  "SG_IORECEIVE by the tag SG_IOSUBMIT yielded returns another command (the kept "
		  "SG_IO orphan, pack_id %u)",
		  r.request_extra);
	rig_fini(&g);
}
