// SPDX-License-Identifier: GPL-2.0-only
/*
 * scsi: header decoding and validation (with the errno sg or bsg gives for
 * each mistake), iovec segmentation, completion as sg (v3) and bsg (v4)
 * fill the outputs, and the headers we build for the target.  Pure code,
 * so every rule is a row in a table.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <limits.h>
#include <scsi/scsi.h>
#include <string.h>

#include "scsi.h"

#ifndef SG_FLAG_NO_DXFER
#define SG_FLAG_NO_DXFER 0x10000
#endif
#ifndef SG_DXFER_UNKNOWN
#define SG_DXFER_UNKNOWN (-5) /* missing from glibc's <scsi/sg.h> */
#endif
#define DID_NO_CONNECT 0x01
#define MiB	       (1u << 20)

TestSuite(scsi, .timeout = 10);

/* ---- scsi_peek_version ---- */

struct peek_case {
	char name[32];
	int32_t id;
	size_t len;
	int expect;
};

ParameterizedTestParameters(scsi, peek_version)
{
	static struct peek_case cases[] = {
		{ "v3 'S'", 'S', SCSI_V3_HDR_LEN, 3 },
		{ "v4 'Q'", 'Q', SCSI_V4_HDR_LEN, 4 },
		{ "just 4 bytes", 'S', 4, 3 },
		{ "other id", 'Z', SCSI_V3_HDR_LEN, -ENOSYS },
		{ "id zero", 0, SCSI_V3_HDR_LEN, -ENOSYS },
		{ "'S' in a high byte", 'S' << 8, SCSI_V3_HDR_LEN, -ENOSYS },
		{ "3 bytes", 'S', 3, -EINVAL },
		{ "0 bytes", 'S', 0, -EINVAL },
	};

	return cr_make_param_array(struct peek_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct peek_case *pc, scsi, peek_version)
{
	unsigned char buf[SCSI_V4_HDR_LEN] = { 0 };

	memcpy(buf, &pc->id, sizeof(pc->id));
	cr_expect(eq(int, scsi_peek_version(buf, pc->len), pc->expect), "%s", pc->name);
}

/* ---- scsi_decode, v3 ---- */

struct v3_case {
	char name[48];
	int interface_id;
	int dxfer_direction;
	unsigned cmd_len;
	bool null_cmdp;
	unsigned dxfer_len;
	unsigned iovec_count;
	unsigned flags;
	/* expected */
	int expect;
	int dir;
	unsigned data_len;
	unsigned iov_count;
	bool q_at_head;
	bool no_dxfer;
};

/* a header with a CDB at cmdp unless null_cmdp; every row names what it checks */
#define V3(nm, id, dxdir, clen, nullp, dxlen, iovc, fl)                            \
	.name = nm, .interface_id = id, .dxfer_direction = dxdir, .cmd_len = clen, \
	.null_cmdp = nullp, .dxfer_len = dxlen, .iovec_count = iovc, .flags = fl
#define V3_ERR(err) .expect = err
#define V3_OK(d, dlen, iovc, head, nodx)                                               \
	.expect = 0, .dir = d, .data_len = dlen, .iov_count = iovc, .q_at_head = head, \
	.no_dxfer = nodx

ParameterizedTestParameters(scsi, decode_v3)
{
	static struct v3_case cases[] = {
		{ V3("good READ(10)", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, false) },
		{ V3("cmd_len 16 for a 10-byte opcode (fio)", 'S', SG_DXFER_FROM_DEV, 16, false,
		     4096, 0, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, false) },
		{ V3("flag 0x800 ignored", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0, 0x800),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, false) },
		{ V3("wrong interface_id", 'Z', SG_DXFER_FROM_DEV, 10, false, 4096, 0, 0),
		  V3_ERR(-ENOSYS) },
		{ V3("cmd_len 5", 'S', SG_DXFER_FROM_DEV, 5, false, 4096, 0, 0),
		  V3_ERR(-EMSGSIZE) },
		{ V3("cmd_len 253", 'S', SG_DXFER_FROM_DEV, 253, false, 4096, 0, 0),
		  V3_ERR(-EMSGSIZE) },
		{ V3("NULL cmdp", 'S', SG_DXFER_FROM_DEV, 10, true, 4096, 0, 0),
		  V3_ERR(-EMSGSIZE) },
		{ V3("cmd_len 33", 'S', SG_DXFER_FROM_DEV, 33, false, 4096, 0, 0),
		  V3_ERR(-EINVAL) },
		{ V3("cmd_len 252", 'S', SG_DXFER_FROM_DEV, 252, false, 4096, 0, 0),
		  V3_ERR(-EINVAL) },
		{ V3("cmd_len 32", 'S', SG_DXFER_FROM_DEV, 32, false, 4096, 0, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, false) },
		{ V3("cmd_len 6", 'S', SG_DXFER_NONE, 6, false, 0, 0, 0),
		  V3_OK(SCSI_DIR_NONE, 0, 0, true, false) },
		{ V3("dxfer_len 256 MiB", 'S', SG_DXFER_FROM_DEV, 10, false, 256 * MiB, 0, 0),
		  V3_ERR(-EINVAL) },
		{ V3("dxfer_len 256 MiB - 1", 'S', SG_DXFER_FROM_DEV, 10, false, 256 * MiB - 1, 0,
		     0),
		  V3_OK(SCSI_DIR_FROM_DEV, 256 * MiB - 1, 0, true, false) },
		/* sg_start_req(): every direction but TO_DEV (and NONE) reads */
		{ V3("unknown direction with data reads", 'S', -7, 10, false, 512, 0, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 512, 0, true, false) },
		{ V3("SG_DXFER_UNKNOWN reads", 'S', SG_DXFER_UNKNOWN, 10, false, 512, 0, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 512, 0, true, false) },
		{ V3("unknown direction without data", 'S', -7, 10, false, 0, 0, 0),
		  V3_OK(SCSI_DIR_NONE, 0, 0, true, false) },
		{ V3("DXFER_NONE with dxfer_len", 'S', SG_DXFER_NONE, 10, false, 512, 0, 0),
		  V3_OK(SCSI_DIR_NONE, 0, 0, true, false) },
		{ V3("TO_DEV", 'S', SG_DXFER_TO_DEV, 10, false, 512, 0, 0),
		  V3_OK(SCSI_DIR_TO_DEV, 512, 0, true, false) },
		{ V3("TO_FROM_DEV", 'S', SG_DXFER_TO_FROM_DEV, 10, false, 512, 0, 0),
		  V3_OK(SCSI_DIR_TO_FROM_DEV, 512, 0, true, false) },
		{ V3("iovec_count 1025", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 1025, 0),
		  V3_ERR(-EINVAL) },
		{ V3("iovec_count 1024", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 1024, 0),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 1024, true, false) },
		{ V3("SG_FLAG_MMAP_IO", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0,
		     SG_FLAG_MMAP_IO),
		  V3_ERR(-EINVAL) },
		{ V3("Q_AT_TAIL", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0, SG_FLAG_Q_AT_TAIL),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, false, false) },
		{ V3("Q_AT_HEAD", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0, SG_FLAG_Q_AT_HEAD),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, false) },
		{ V3("NO_DXFER", 'S', SG_DXFER_FROM_DEV, 10, false, 4096, 0, SG_FLAG_NO_DXFER),
		  V3_OK(SCSI_DIR_FROM_DEV, 4096, 0, true, true) },
	};

	return cr_make_param_array(struct v3_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct v3_case *tc, scsi, decode_v3)
{
	unsigned char cdb[256] = { 0x28 };
	unsigned char data[16], sense[32];
	struct sg_io_hdr h = {
		.interface_id = tc->interface_id,
		.dxfer_direction = tc->dxfer_direction,
		.cmd_len = tc->cmd_len,
		.mx_sb_len = sizeof(sense),
		.iovec_count = tc->iovec_count,
		.dxfer_len = tc->dxfer_len,
		.dxferp = data,
		.cmdp = tc->null_cmdp ? NULL : cdb,
		.sbp = sense,
		.timeout = 1234,
		.flags = tc->flags,
	};
	struct scsi_req r;

	memset(&r, 0xa5, sizeof(r));
	cr_assert(eq(int, scsi_decode(&h, sizeof(h), &r), tc->expect), "%s", tc->name);
	if (tc->expect) {
		unsigned char untouched[sizeof(r)];

		memset(untouched, 0xa5, sizeof(untouched));
		cr_expect(zero(int, memcmp(&r, untouched, sizeof(r))),
			  "%s: *ret written on failure", tc->name);
		return;
	}
	cr_expect(eq(u32, r.version, 3), "%s", tc->name);
	cr_expect(eq(u32, r.hdr_len, SCSI_V3_HDR_LEN), "%s", tc->name);
	cr_expect(eq(int, r.dir, tc->dir), "%s", tc->name);
	cr_expect(eq(u32, r.data_len, tc->data_len), "%s", tc->name);
	cr_expect(eq(u32, r.iov_count, tc->iov_count), "%s", tc->name);
	cr_expect(eq(u32, r.cdb_len, tc->cmd_len), "%s", tc->name);
	cr_expect(eq(int, r.q_at_head, tc->q_at_head), "%s", tc->name);
	cr_expect(eq(int, r.no_dxfer, tc->no_dxfer), "%s", tc->name);
}

Test(scsi, decode_v3_copies_addresses_and_header)
{
	unsigned char cdb[10] = { 0x28 }, data[512], sense[32];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_FROM_DEV,
		.cmd_len = sizeof(cdb),
		.mx_sb_len = sizeof(sense),
		.dxfer_len = sizeof(data),
		.dxferp = data,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = 30000,
		.pack_id = 77,
		.usr_ptr = (void *)0x1234,
	};
	struct scsi_req r;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	cr_expect(eq(u64, r.cdb_addr, (uintptr_t)cdb));
	cr_expect(eq(u64, r.data_addr, (uintptr_t)data));
	cr_expect(eq(u64, r.sense_addr, (uintptr_t)sense));
	cr_expect(eq(u32, r.sense_max, sizeof(sense)));
	cr_expect(eq(u32, r.timeout_ms, 30000));
	cr_expect(zero(int, memcmp(&r.hdr.v3, &h, sizeof(h))));
}

Test(scsi, decode_v3_no_sense_without_room_or_pointer)
{
	unsigned char cdb[10] = { 0x00 }, sense[32];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = 6,
		.cmdp = cdb,
		.sbp = sense,
		.mx_sb_len = 0,
	};
	struct scsi_req r;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	cr_expect(zero(u64, r.sense_addr));
	cr_expect(zero(u32, r.sense_max));
	h.mx_sb_len = 32;
	h.sbp = NULL;
	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	cr_expect(zero(u64, r.sense_addr));
	cr_expect(zero(u32, r.sense_max));
}

Test(scsi, decode_v3_short_buffer_is_einval)
{
	unsigned char cdb[10] = { 0x28 };
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = 10,
		.cmdp = cdb,
	};
	struct scsi_req r;

	cr_expect(eq(int, scsi_decode(&h, SCSI_V3_HDR_LEN - 1, &r), -EINVAL));
	cr_expect(eq(int, scsi_decode(&h, 4, &r), -EINVAL));
	cr_expect(eq(int, scsi_decode(&h, 3, &r), -EINVAL));
	cr_expect(zero(int, scsi_decode(&h, SCSI_V3_HDR_LEN, &r)));
}

/* ---- scsi_decode, v4 ---- */

struct v4_case {
	char name[48];
	uint32_t protocol, subprotocol;
	uint32_t request_len;
	uint32_t dout_xfer_len, din_xfer_len;
	uint32_t flags;
	int expect;
	int dir;
	uint32_t data_len;
	bool q_at_head;
};

#define V4(nm, proto, sub, rlen, dout, din, fl)                                 \
	.name = nm, .protocol = proto, .subprotocol = sub, .request_len = rlen, \
	.dout_xfer_len = dout, .din_xfer_len = din, .flags = fl
#define V4_ERR(err)	     .expect = err
#define V4_OK(d, dlen, head) .expect = 0, .dir = d, .data_len = dlen, .q_at_head = head

ParameterizedTestParameters(scsi, decode_v4)
{
	static struct v4_case cases[] = {
		{ V4("good din", 0, 0, 10, 0, 4096, 0), V4_OK(SCSI_DIR_FROM_DEV, 4096, true) },
		{ V4("good dout", 0, 0, 10, 512, 0, 0), V4_OK(SCSI_DIR_TO_DEV, 512, true) },
		{ V4("no data", 0, 0, 6, 0, 0, 0), V4_OK(SCSI_DIR_NONE, 0, true) },
		{ V4("protocol 1", 1, 0, 10, 0, 4096, 0), V4_ERR(-EINVAL) },
		{ V4("subprotocol 1", 0, 1, 10, 0, 4096, 0), V4_ERR(-EINVAL) },
		{ V4("din and dout (bidi)", 0, 0, 10, 512, 512, 0), V4_ERR(-EOPNOTSUPP) },
		{ V4("request_len 33", 0, 0, 33, 0, 4096, 0), V4_ERR(-EINVAL) },
		{ V4("request_len 5", 0, 0, 5, 0, 4096, 0), V4_ERR(-EINVAL) },
		{ V4("request_len 0", 0, 0, 0, 0, 4096, 0), V4_ERR(-EINVAL) },
		{ V4("request_len 32", 0, 0, 32, 0, 4096, 0),
		  V4_OK(SCSI_DIR_FROM_DEV, 4096, true) },
		{ V4("din 256 MiB", 0, 0, 10, 0, 256 * MiB, 0), V4_ERR(-EINVAL) },
		{ V4("dout 256 MiB", 0, 0, 10, 256 * MiB, 0, 0), V4_ERR(-EINVAL) },
		{ V4("din 256 MiB - 1", 0, 0, 10, 0, 256 * MiB - 1, 0),
		  V4_OK(SCSI_DIR_FROM_DEV, 256 * MiB - 1, true) },
		{ V4("BSG_FLAG_Q_AT_TAIL", 0, 0, 10, 0, 4096, BSG_FLAG_Q_AT_TAIL),
		  V4_OK(SCSI_DIR_FROM_DEV, 4096, false) },
	};

	return cr_make_param_array(struct v4_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct v4_case *tc, scsi, decode_v4)
{
	unsigned char cdb[32] = { 0x28 }, dout[16], din[16], sense[32];
	struct sg_io_v4 h = {
		.guard = 'Q',
		.protocol = tc->protocol,
		.subprotocol = tc->subprotocol,
		.request_len = tc->request_len,
		.request = (uintptr_t)cdb,
		.max_response_len = sizeof(sense),
		.response = (uintptr_t)sense,
		.dout_xfer_len = tc->dout_xfer_len,
		.dout_xferp = (uintptr_t)dout,
		.din_xfer_len = tc->din_xfer_len,
		.din_xferp = (uintptr_t)din,
		.timeout = 4321,
		.flags = tc->flags,
	};
	struct scsi_req r;

	cr_assert(eq(int, scsi_decode(&h, sizeof(h), &r), tc->expect), "%s", tc->name);
	if (tc->expect)
		return;
	cr_expect(eq(u32, r.version, 4), "%s", tc->name);
	cr_expect(eq(u32, r.hdr_len, SCSI_V4_HDR_LEN), "%s", tc->name);
	cr_expect(eq(int, r.dir, tc->dir), "%s", tc->name);
	cr_expect(eq(u32, r.data_len, tc->data_len), "%s", tc->name);
	cr_expect(eq(u32, r.cdb_len, tc->request_len), "%s", tc->name);
	cr_expect(eq(int, r.q_at_head, tc->q_at_head), "%s", tc->name);
	cr_expect(zero(u32, r.iov_count), "%s", tc->name);
	if (tc->dir == SCSI_DIR_TO_DEV)
		cr_expect(eq(u64, r.data_addr, (uintptr_t)dout), "%s", tc->name);
	if (tc->dir == SCSI_DIR_FROM_DEV)
		cr_expect(eq(u64, r.data_addr, (uintptr_t)din), "%s", tc->name);
	cr_expect(eq(u64, r.cdb_addr, (uintptr_t)cdb), "%s", tc->name);
	cr_expect(eq(u64, r.sense_addr, (uintptr_t)sense), "%s", tc->name);
	cr_expect(eq(u32, r.sense_max, sizeof(sense)), "%s", tc->name);
	cr_expect(eq(u32, r.timeout_ms, 4321), "%s", tc->name);
	cr_expect(zero(int, memcmp(&r.hdr.v4, &h, sizeof(h))), "%s", tc->name);
}

Test(scsi, decode_v4_short_buffer_is_einval)
{
	unsigned char cdb[10] = { 0x28 };
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
	};
	struct scsi_req r;

	cr_expect(eq(int, scsi_decode(&h, SCSI_V4_HDR_LEN - 1, &r), -EINVAL));
	cr_expect(eq(int, scsi_decode(&h, SCSI_V3_HDR_LEN, &r), -EINVAL));
	cr_expect(zero(int, scsi_decode(&h, SCSI_V4_HDR_LEN, &r)));
}

Test(scsi, decode_v4_no_sense_without_room)
{
	unsigned char cdb[10] = { 0x28 }, sense[32];
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
		.response = (uintptr_t)sense,
		.max_response_len = 0,
	};
	struct scsi_req r;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	cr_expect(zero(u64, r.sense_addr));
	cr_expect(zero(u32, r.sense_max));
}

/* ---- scsi_iov_segs ---- */

#define SEGS_MAX 4
#define HUGE_LEN ((uint64_t)SSIZE_MAX + 1)

struct segs_case {
	char name[64];
	uint32_t data_len;
	unsigned n;
	uint64_t len[SEGS_MAX];
	int expect; /* number of segments, or -errno */
	uint64_t seg_len[SEGS_MAX];
	unsigned seg_from[SEGS_MAX]; /* which uiov entry each segment is */
	uint64_t at[SEGS_MAX];	     /* an entry's address, if not 0 (else a buffer of ours) */
};

#define USER_LIMIT  ((1ull << 47) - 4096) /* TASK_SIZE_MAX, four-level page tables */
#define KERNEL_ADDR 0xffff888000000000ull
#define KADDR	    KERNEL_ADDR
#define LAST	    (USER_LIMIT - 4096) /* the last page of the user half */

ParameterizedTestParameters(scsi, iov_segs)
{
	/* name, data_len, n, iov lengths; expected count, segment lengths, from entry */
	static struct segs_case cases[] = {
		{ "exact", 600, 3, { 100, 200, 300 }, 3, { 100, 200, 300 }, { 0, 1, 2 }, { 0 } },
		{ "truncated", 250, 3, { 100, 200, 300 }, 2, { 100, 150 }, { 0, 1 }, { 0 } },
		{ "empty skipped", 150, 4, { 0, 100, 0, 50 }, 2, { 100, 50 }, { 1, 3 }, { 0 } },
		{ "shorter than data_len", 4096, 2, { 100, 50 }, 2, { 100, 50 }, { 0, 1 }, { 0 } },
		{ "total zero", 100, 2, { 0, 0 }, -EINVAL, { 0 }, { 0 }, { 0 } },
		{ "iov_len > SSIZE_MAX", 100, 1, { HUGE_LEN }, -EINVAL, { 0 }, { 0 }, { 0 } },
		/* access_ok() of the whole entry, before it is cut to data_len */
		{ "iov_len SSIZE_MAX", 100, 1, { SSIZE_MAX }, -EFAULT, { 0 }, { 0 }, { 0 } },
		/* import_iovec() checks every entry before the iter is truncated */
		{ "huge past data_len", 100, 2, { 100, HUGE_LEN }, -EINVAL, { 0 }, { 0 }, { 0 } },
		{ "kernel, past", 100, 2, { 100, 100 }, -EFAULT, { 0 }, { 0 }, { 0, KADDR } },
		{ "kernel, length 0", 100, 2, { 100, 0 }, -EFAULT, { 0 }, { 0 }, { 0, KADDR } },
		{ "wraps", 100, 2, { 100, 8192 }, -EFAULT, { 0 }, { 0 }, { 0, ~0ull - 4095 } },
		{ "ends at the limit", 100, 2, { 100, 4096 }, 1, { 100 }, { 0 }, { 0, LAST } },
		{ "one past the limit", 100, 2, { 100, 4097 }, -EFAULT, { 0 }, { 0 }, { 0, LAST } },
		/* the lengths are all checked before any address */
		{ "huge, kernel",
		  100,
		  3,
		  { 100, 100, HUGE_LEN },
		  -EINVAL,
		  { 0 },
		  { 0 },
		  { 0, KADDR } },
	};

	return cr_make_param_array(struct segs_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct segs_case *tc, scsi, iov_segs)
{
	static unsigned char buf[SEGS_MAX][64];
	struct sg_iovec uiov[SEGS_MAX];
	struct scsi_seg segs[SEGS_MAX];
	struct scsi_req r = {
		.version = 3,
		.dir = SCSI_DIR_FROM_DEV,
		.data_len = tc->data_len,
		.iov_count = tc->n,
	};
	int n;

	for (unsigned i = 0; i < tc->n; i++)
		uiov[i] = (struct sg_iovec){ tc->at[i] ? (void *)(uintptr_t)tc->at[i] : buf[i],
					     tc->len[i] };
	memset(segs, 0, sizeof(segs));
	n = scsi_iov_segs(&r, uiov, USER_LIMIT, segs);
	cr_assert(eq(int, n, tc->expect), "%s", tc->name);
	for (int i = 0; i < n; i++) {
		cr_expect(eq(u64, segs[i].len, tc->seg_len[i]), "%s: segment %d", tc->name, i);
		cr_expect(eq(u64, segs[i].addr, (uintptr_t)buf[tc->seg_from[i]]), "%s: segment %d",
			  tc->name, i);
	}
}

/* access_ok(): the whole range below the limit, no wrap */
Test(scsi, user_range)
{
	cr_expect(scsi_user_range_ok(0x1000, 4096, USER_LIMIT));
	cr_expect(scsi_user_range_ok(USER_LIMIT - 4096, 4096, USER_LIMIT));
	cr_expect(scsi_user_range_ok(USER_LIMIT, 0, USER_LIMIT));
	cr_expect(not(scsi_user_range_ok(USER_LIMIT - 4096, 4097, USER_LIMIT)));
	cr_expect(not(scsi_user_range_ok(KERNEL_ADDR, 512, USER_LIMIT)));
	cr_expect(not(scsi_user_range_ok(~0ull - 255, 512, USER_LIMIT)), "wraps");
	cr_expect(not(scsi_user_range_ok(0, USER_LIMIT + 1, USER_LIMIT)));
	cr_expect(scsi_user_range_ok(0x7ffffffff000ull, 8192, (1ull << 56) - 4096),
		  "five-level page tables: the user half goes on");
}

/* ---- scsi_complete, v3: drivers/scsi/sg.c's rules ---- */

struct complete_v3_case {
	char name[64];
	uint8_t status;
	uint16_t host_status, driver_status;
	uint8_t sense0, sense7;
	uint8_t mx_sb_len;
	bool no_sbp;
	/* expected */
	unsigned n;
	uint8_t masked_status;
	uint16_t driver_out;
	uint8_t sb_len_wr;
	uint32_t info;
};

ParameterizedTestParameters(scsi, complete_v3)
{
	static struct complete_v3_case cases[] = {
		{ "GOOD", 0, 0, 0, 0, 0, 32, false, 0, 0, 0, 0, 0 },
		{ "CHECK CONDITION, fixed sense", 0x02, 0, 0, 0x70, 10, 32, false, 18, 1, 0x08, 18,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION, mx_sb_len 8", 0x02, 0, 0, 0x70, 10, 8, false, 8, 1, 0x08, 8,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION, mx_sb_len 0", 0x02, 0, 0, 0x70, 10, 0, false, 0, 1, 0, 0,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION, sbp NULL", 0x02, 0, 0, 0x70, 10, 32, true, 0, 1, 0, 0,
		  SG_INFO_CHECK },
		{ "additional length 200, mx_sb_len 255", 0x02, 0, 0, 0x70, 200, 255, false, 96, 1,
		  0x08, 96, SG_INFO_CHECK },
		{ "descriptor sense 0x72", 0x02, 0, 0, 0x72, 20, 64, false, 28, 1, 0x08, 28,
		  SG_INFO_CHECK },
		{ "valid sense with GOOD status", 0, 0, 0, 0x70, 10, 32, false, 18, 0, 0x08, 18,
		  SG_INFO_CHECK },
		{ "DID_NO_CONNECT", 0, DID_NO_CONNECT, 0, 0, 0, 32, false, 0, 0, 0, 0,
		  SG_INFO_CHECK },
		{ "driver status passed on", 0, 0, 0x06, 0, 0, 32, false, 0, 0, 0x06, 0,
		  SG_INFO_CHECK },
		{ "RESERVATION CONFLICT", 0x18, 0, 0, 0, 0, 32, false, 0, 0x0c, 0, 0,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION without sense", 0x02, 0, 0, 0, 0, 32, false, 8, 1, 0x08, 8,
		  SG_INFO_CHECK },
	};

	return cr_make_param_array(struct complete_v3_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

static void req_v3(struct scsi_req *r, unsigned char *cdb, unsigned char *sense, unsigned mx_sb_len)
{
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_NONE,
		.cmd_len = 6,
		.cmdp = cdb,
		.sbp = sense,
		.mx_sb_len = mx_sb_len,
	};

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), r)));
}

ParameterizedTest(struct complete_v3_case *tc, scsi, complete_v3)
{
	unsigned char cdb[6] = { 0 }, sense[255];
	struct scsi_result res = {
		.status = tc->status,
		.host_status = tc->host_status,
		.driver_status = tc->driver_status,
	};
	struct scsi_req r;
	struct sg_io_hdr *h = &r.hdr.v3;
	unsigned n;

	res.sense[0] = tc->sense0;
	res.sense[7] = tc->sense7;
	res.sense_len = tc->sense0 ? 8 + (tc->sense7 < 88 ? tc->sense7 : 88) : 0;
	req_v3(&r, cdb, tc->no_sbp ? NULL : sense, tc->mx_sb_len);
	n = scsi_complete(&r, &res, 0);
	cr_expect(eq(u32, n, tc->n), "%s", tc->name);
	cr_expect(eq(u8, h->status, tc->status), "%s", tc->name);
	cr_expect(eq(u8, h->masked_status, tc->masked_status), "%s", tc->name);
	cr_expect(zero(u8, h->msg_status), "%s", tc->name);
	cr_expect(eq(u16, h->host_status, tc->host_status), "%s", tc->name);
	cr_expect(eq(u16, h->driver_status, tc->driver_out), "%s", tc->name);
	cr_expect(eq(u8, h->sb_len_wr, tc->sb_len_wr), "%s", tc->name);
	cr_expect(eq(u32, h->info, tc->info), "%s", tc->name);
}

Test(scsi, complete_v3_carries_resid_and_duration)
{
	unsigned char cdb[6] = { 0 }, sense[32];
	struct scsi_result res = { .status = 0, .resid = 512 };
	struct scsi_req r;

	req_v3(&r, cdb, sense, sizeof(sense));
	r.hdr.v3.info = SG_INFO_CHECK; /* stale: recomputed */
	cr_expect(zero(u32, scsi_complete(&r, &res, 1500)));
	cr_expect(eq(i32, r.hdr.v3.resid, 512));
	cr_expect(eq(u32, r.hdr.v3.duration, 1500));
	cr_expect(zero(u32, r.hdr.v3.info));
}

Test(scsi, complete_v3_preserves_client_inputs)
{
	unsigned char cdb[10] = { 0x28 }, data[512], sense[32];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_FROM_DEV,
		.cmd_len = sizeof(cdb),
		.mx_sb_len = sizeof(sense),
		.iovec_count = 0,
		.dxfer_len = sizeof(data),
		.dxferp = data,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = 20000,
		.flags = SG_FLAG_Q_AT_TAIL,
		.pack_id = 99,
		.usr_ptr = (void *)0xfeedu,
	};
	struct scsi_result res = { .status = 0x02, .resid = 7 };
	struct scsi_req r;
	const struct sg_io_hdr *o = &r.hdr.v3;

	res.sense[0] = 0x70;
	res.sense[7] = 10;
	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	scsi_complete(&r, &res, 3);
	cr_expect(eq(int, o->interface_id, 'S'));
	cr_expect(eq(int, o->dxfer_direction, SG_DXFER_FROM_DEV));
	cr_expect(eq(u8, o->cmd_len, sizeof(cdb)));
	cr_expect(eq(u8, o->mx_sb_len, sizeof(sense)));
	cr_expect(zero(u16, o->iovec_count));
	cr_expect(eq(u32, o->dxfer_len, sizeof(data)));
	cr_expect(eq(ptr, o->dxferp, data));
	cr_expect(eq(ptr, o->cmdp, cdb));
	cr_expect(eq(ptr, o->sbp, sense));
	cr_expect(eq(u32, o->timeout, 20000));
	cr_expect(eq(u32, o->flags, SG_FLAG_Q_AT_TAIL));
	cr_expect(eq(int, o->pack_id, 99));
	cr_expect(eq(ptr, o->usr_ptr, (void *)0xfeedu));
}

/* ---- scsi_complete, v4: block/bsg.c's rules ---- */

struct complete_v4_case {
	char name[64];
	uint8_t status;
	uint16_t host_status, driver_status;
	uint8_t sense_len;
	uint32_t max_response_len;
	bool no_response;
	/* expected */
	unsigned n;
	uint32_t driver_out;
	uint32_t info;
};

ParameterizedTestParameters(scsi, complete_v4)
{
	static struct complete_v4_case cases[] = {
		{ "GOOD", 0, 0, 0, 0, 32, false, 0, 0, 0 },
		{ "CHECK CONDITION with sense", 0x02, 0, 0, 18, 32, false, 18, 0x08,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION, max_response_len 8", 0x02, 0, 0, 18, 8, false, 8, 0x08,
		  SG_INFO_CHECK },
		{ "CHECK CONDITION, no sense", 0x02, 0, 0, 0, 32, false, 0, 0x08, SG_INFO_CHECK },
		{ "CHECK CONDITION, no response buffer", 0x02, 0, 0, 18, 32, true, 0, 0x08,
		  SG_INFO_CHECK },
		{ "status 0x03 is CHECK CONDITION too", 0x03, 0, 0, 18, 32, false, 18, 0x08,
		  SG_INFO_CHECK },
		{ "sense with GOOD status", 0, 0, 0, 18, 32, false, 18, 0, 0 },
		{ "RESERVATION CONFLICT", 0x18, 0, 0, 0, 32, false, 0, 0, SG_INFO_CHECK },
		{ "DID_NO_CONNECT", 0, DID_NO_CONNECT, 0, 0, 32, false, 0, 0, SG_INFO_CHECK },
		{ "target driver status not passed on", 0, 0, 0x06, 0, 32, false, 0, 0, 0 },
		{ "96 bytes of sense, room for 255", 0x02, 0, 0, 96, 255, false, 96, 0x08,
		  SG_INFO_CHECK },
	};

	return cr_make_param_array(struct complete_v4_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct complete_v4_case *tc, scsi, complete_v4)
{
	unsigned char cdb[10] = { 0x28 }, sense[255];
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
		.max_response_len = tc->max_response_len,
		.response = tc->no_response ? 0 : (uintptr_t)sense,
	};
	struct scsi_result res = {
		.status = tc->status,
		.host_status = tc->host_status,
		.driver_status = tc->driver_status,
		.sense_len = tc->sense_len,
	};
	struct scsi_req r;
	const struct sg_io_v4 *o = &r.hdr.v4;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	cr_expect(eq(u32, scsi_complete(&r, &res, 0), tc->n), "%s", tc->name);
	cr_expect(eq(u32, o->device_status, tc->status), "%s", tc->name);
	cr_expect(eq(u32, o->transport_status, tc->host_status), "%s", tc->name);
	cr_expect(eq(u32, o->driver_status, tc->driver_out), "%s", tc->name);
	cr_expect(eq(u32, o->info, tc->info), "%s", tc->name);
	cr_expect(eq(u32, o->response_len, tc->n), "%s", tc->name);
}

Test(scsi, complete_v4_resid_goes_to_the_data_direction)
{
	unsigned char cdb[10] = { 0x28 }, buf[512];
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
		.din_xfer_len = sizeof(buf),
		.din_xferp = (uintptr_t)buf,
	};
	struct scsi_result res = { .resid = 100 };
	struct scsi_req r;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	scsi_complete(&r, &res, 250);
	cr_expect(eq(i32, r.hdr.v4.din_resid, 100));
	cr_expect(zero(i32, r.hdr.v4.dout_resid));
	cr_expect(eq(u32, r.hdr.v4.duration, 250));

	h.din_xfer_len = 0;
	h.dout_xfer_len = sizeof(buf);
	h.dout_xferp = (uintptr_t)buf;
	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	scsi_complete(&r, &res, 0);
	cr_expect(eq(i32, r.hdr.v4.dout_resid, 100));
	cr_expect(zero(i32, r.hdr.v4.din_resid));
}

Test(scsi, complete_v4_preserves_client_inputs)
{
	unsigned char cdb[10] = { 0x28 }, buf[512], sense[32];
	struct sg_io_v4 h = {
		.guard = 'Q',
		.request_len = 10,
		.request = (uintptr_t)cdb,
		.max_response_len = sizeof(sense),
		.response = (uintptr_t)sense,
		.din_xfer_len = sizeof(buf),
		.din_xferp = (uintptr_t)buf,
		.timeout = 999,
		.usr_ptr = 0xabcd,
		.spare_in = 5,
	};
	struct scsi_result res = { .status = 0x02, .sense_len = 18 };
	struct scsi_req r;
	const struct sg_io_v4 *o = &r.hdr.v4;

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	scsi_complete(&r, &res, 1);
	cr_expect(eq(i32, o->guard, 'Q'));
	cr_expect(eq(u64, o->request, (uintptr_t)cdb));
	cr_expect(eq(u32, o->request_len, 10));
	cr_expect(eq(u64, o->response, (uintptr_t)sense));
	cr_expect(eq(u32, o->max_response_len, sizeof(sense)));
	cr_expect(eq(u64, o->din_xferp, (uintptr_t)buf));
	cr_expect(eq(u32, o->din_xfer_len, sizeof(buf)));
	cr_expect(eq(u32, o->timeout, 999));
	cr_expect(eq(u64, o->usr_ptr, 0xabcd));
	cr_expect(eq(u32, o->spare_in, 5));
}

/* ---- the target's headers ---- */

Test(scsi, cmd_from_req_copies_the_command)
{
	unsigned char cdb[16] = { 0x88 }, buf[512];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = SG_DXFER_TO_DEV,
		.cmd_len = 16,
		.cmdp = cdb,
		.dxfer_len = sizeof(buf),
		.dxferp = buf,
		.timeout = 777,
		.flags = SG_FLAG_Q_AT_TAIL,
	};
	struct scsi_req r;
	struct scsi_cmd c = { 0 };

	cr_assert(zero(int, scsi_decode(&h, sizeof(h), &r)));
	scsi_cmd_from_req(&r, &c);
	cr_expect(eq(u32, c.cdb_len, 16));
	cr_expect(eq(int, c.dir, SCSI_DIR_TO_DEV));
	cr_expect(eq(u32, c.data_len, sizeof(buf)));
	cr_expect(eq(u32, c.timeout_ms, 777));
	cr_expect(not(c.q_at_head));
}

struct build_case {
	char name[24];
	int dir;
	int v3_dir;
	bool q_at_head;
	bool v4_dout, v4_din;
};

ParameterizedTestParameters(scsi, build)
{
	static struct build_case cases[] = {
		{ "none", SCSI_DIR_NONE, SG_DXFER_NONE, true, false, false },
		{ "to dev", SCSI_DIR_TO_DEV, SG_DXFER_TO_DEV, true, true, false },
		{ "from dev", SCSI_DIR_FROM_DEV, SG_DXFER_FROM_DEV, false, false, true },
		{ "to from dev", SCSI_DIR_TO_FROM_DEV, SG_DXFER_TO_FROM_DEV, false, false, true },
	};

	return cr_make_param_array(struct build_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct build_case *tc, scsi, build)
{
	static unsigned char data[4096];
	struct scsi_cmd c = {
		.cdb = { 0x28, 0, 0, 0, 0, 8 },
		.cdb_len = 10,
		.dir = tc->dir,
		.data = tc->dir == SCSI_DIR_NONE ? NULL : data,
		.data_len = tc->dir == SCSI_DIR_NONE ? 0 : sizeof(data),
		.timeout_ms = 60000,
		.q_at_head = tc->q_at_head,
	};
	struct sg_io_hdr h3;
	struct sg_io_v4 h4;

	memset(&h3, 0xff, sizeof(h3));
	scsi_build_v3(&c, &h3);
	cr_expect(eq(int, h3.interface_id, 'S'), "%s", tc->name);
	cr_expect(eq(int, h3.dxfer_direction, tc->v3_dir), "%s", tc->name);
	cr_expect(eq(u8, h3.cmd_len, 10), "%s", tc->name);
	cr_expect(eq(ptr, h3.cmdp, c.cdb), "%s", tc->name);
	cr_expect(eq(ptr, h3.sbp, c.res.sense), "%s", tc->name);
	cr_expect(eq(u8, h3.mx_sb_len, SCSI_SENSE_MAX), "%s", tc->name);
	cr_expect(eq(u32, h3.dxfer_len, c.data_len), "%s", tc->name);
	cr_expect(eq(ptr, h3.dxferp, c.data), "%s", tc->name);
	cr_expect(zero(u16, h3.iovec_count), "%s", tc->name);
	cr_expect(eq(u32, h3.timeout, 60000), "%s", tc->name);
	cr_expect(eq(u32, h3.flags, tc->q_at_head ? SG_FLAG_Q_AT_HEAD : SG_FLAG_Q_AT_TAIL), "%s",
		  tc->name);

	memset(&h4, 0xff, sizeof(h4));
	scsi_build_v4(&c, &h4);
	cr_expect(eq(i32, h4.guard, 'Q'), "%s", tc->name);
	cr_expect(zero(u32, h4.protocol), "%s", tc->name);
	cr_expect(zero(u32, h4.subprotocol), "%s", tc->name);
	cr_expect(eq(u32, h4.request_len, 10), "%s", tc->name);
	cr_expect(eq(u64, h4.request, (uintptr_t)c.cdb), "%s", tc->name);
	cr_expect(eq(u32, h4.max_response_len, SCSI_SENSE_MAX), "%s", tc->name);
	cr_expect(eq(u64, h4.response, (uintptr_t)c.res.sense), "%s", tc->name);
	cr_expect(eq(u32, h4.dout_xfer_len, tc->v4_dout ? sizeof(data) : 0), "%s", tc->name);
	cr_expect(eq(u64, h4.dout_xferp, tc->v4_dout ? (uintptr_t)data : 0), "%s", tc->name);
	cr_expect(eq(u32, h4.din_xfer_len, tc->v4_din ? sizeof(data) : 0), "%s", tc->name);
	cr_expect(eq(u64, h4.din_xferp, tc->v4_din ? (uintptr_t)data : 0), "%s", tc->name);
	cr_expect(eq(u32, h4.timeout, 60000), "%s", tc->name);
	cr_expect(eq(u32, h4.flags, tc->q_at_head ? 0 : BSG_FLAG_Q_AT_TAIL), "%s", tc->name);
}

Test(scsi, result_v3_strips_driver_sense_and_caps_sense_len)
{
	struct sg_io_hdr h = {
		.status = 0x02,
		.host_status = 0x07,
		.driver_status = SCSI_DRIVER_SENSE | 0x06,
		.resid = 42,
		.sb_len_wr = 18,
	};
	struct scsi_result res = { 0 };

	scsi_result_v3(&h, &res);
	cr_expect(eq(u8, res.status, 0x02));
	cr_expect(eq(u16, res.host_status, 0x07));
	cr_expect(eq(u16, res.driver_status, 0x06));
	cr_expect(eq(i32, res.resid, 42));
	cr_expect(eq(u8, res.sense_len, 18));
	h.sb_len_wr = 200;
	scsi_result_v3(&h, &res);
	cr_expect(eq(u8, res.sense_len, SCSI_SENSE_MAX));
}

Test(scsi, result_v4_strips_driver_sense_and_picks_resid)
{
	struct sg_io_v4 h = {
		.device_status = 0x02,
		.transport_status = 0x03,
		.driver_status = SCSI_DRIVER_SENSE,
		.din_resid = 11,
		.dout_resid = 22,
		.response_len = 18,
	};
	struct scsi_result res = { 0 };

	scsi_result_v4(&h, SCSI_DIR_FROM_DEV, &res);
	cr_expect(eq(u8, res.status, 0x02));
	cr_expect(eq(u16, res.host_status, 0x03));
	cr_expect(zero(u16, res.driver_status));
	cr_expect(eq(i32, res.resid, 11));
	cr_expect(eq(u8, res.sense_len, 18));
	scsi_result_v4(&h, SCSI_DIR_TO_DEV, &res);
	cr_expect(eq(i32, res.resid, 22));
	h.response_len = 1000;
	scsi_result_v4(&h, SCSI_DIR_NONE, &res);
	cr_expect(eq(i32, res.resid, 11));
	cr_expect(eq(u8, res.sense_len, SCSI_SENSE_MAX));
}

/* ---- debug names through libsgutils2 ---- */

Test(scsi, opcode_and_sense_names)
{
	uint8_t cdb[10] = { 0x28 };
	struct scsi_result res = { 0 };
	char buf[256];

	scsi_opcode_name(cdb, sizeof(cdb), 0, buf, sizeof(buf));
	cr_expect(eq(str, buf, "Read(10)"));
	res.sense_len = 0;
	strcpy(buf, "stale");
	scsi_sense_str(&res, buf, sizeof(buf));
	cr_expect(zero(str, buf));
	res.sense[0] = 0x70;
	res.sense[2] = 0x05; /* ILLEGAL REQUEST */
	res.sense[7] = 10;
	res.sense[12] = 0x20; /* INVALID COMMAND OPERATION CODE */
	res.sense_len = 18;
	scsi_sense_str(&res, buf, sizeof(buf));
	cr_expect(not(zero(str, buf)));
	cr_expect(ne(ptr, strstr(buf, "Illegal Request"), NULL), "sense string: %s", buf);
}

/* ---- the sg v4 driver's control objects (SGV4_FLAG_MULTIPLE_REQS) ---- */

static struct sg_io_v4 cop_of(unsigned n, uint32_t flags)
{
	return (struct sg_io_v4){
		.guard = 'Q',
		.flags = SGV4_FLAG_MULTIPLE_REQS | flags,
		.dout_xferp = 0x10000,
		.dout_xfer_len = n * SCSI_V4_HDR_LEN,
	};
}

/* What a case changes in a good control object of four requests. */
enum mrq_change {
	M_NONE,
	M_NO_ARRAY,
	M_IOVEC,
	M_RAGGED,
	M_MMAP,
	M_BIG,
	M_IMMED_STOP,
	M_CDBS_NO_LEN,
	M_CDBS_RAGGED,
	M_CDBS_SHORT,
	M_CDBS_OK,
};

struct mrq_case {
	const char *what;
	enum mrq_change change;
	int err;
};

static void mrq_change(struct sg_io_v4 *h, enum mrq_change c)
{
	switch (c) {
	case M_NONE:
		break;
	case M_NO_ARRAY:
		h->dout_xferp = 0;
		break;
	case M_IOVEC:
		h->din_iovec_count = 1;
		break;
	case M_RAGGED:
		h->dout_xfer_len += 1;
		break;
	case M_MMAP:
		h->flags |= SG_FLAG_MMAP_IO;
		break;
	case M_BIG:
		h->din_xfer_len = SCSI_V4_MRQ_MAX_BYTES + 1;
		break;
	case M_IMMED_STOP:
		h->flags |= SGV4_FLAG_IMMED | SGV4_FLAG_STOP_IF;
		break;
	case M_CDBS_NO_LEN:
		h->request = 0x20000;
		break;
	case M_CDBS_RAGGED:
		h->request = 0x20000;
		h->request_len = 4 * 10 + 1;
		break;
	case M_CDBS_SHORT:
		h->request = 0x20000;
		h->request_len = 4 * 5;
		break;
	case M_CDBS_OK:
		h->request = 0x20000;
		h->request_len = 4 * 16;
		break;
	}
}

/* sg_submit_v4() and sg_do_multi_req(), in their order */
ParameterizedTestParameters(scsi, mrq_submit_check)
{
	static struct mrq_case cases[] = {
		{ "four requests", M_NONE, 0 },
		{ "no array", M_NO_ARRAY, -ERANGE },
		{ "iovecs", M_IOVEC, -ERANGE },
		{ "not whole headers", M_RAGGED, -ERANGE },
		{ "mmap on the control object", M_MMAP, -EBADFD },
		{ "over 2 MiB of room", M_BIG, -E2BIG },
		{ "IMMED with STOP_IF", M_IMMED_STOP, -ERANGE },
		{ "a CDB array without its length", M_CDBS_NO_LEN, -ERANGE },
		{ "a CDB array not a multiple", M_CDBS_RAGGED, -ERANGE },
		{ "CDBs of 5 bytes", M_CDBS_SHORT, -ERANGE },
		{ "CDBs of 16 bytes", M_CDBS_OK, 0 },
	};
	return cr_make_param_array(struct mrq_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct mrq_case *tc, scsi, mrq_submit_check)
{
	struct sg_io_v4 h = cop_of(4, 0);
	unsigned n = 99, cdb_len = 99;

	mrq_change(&h, tc->change);
	cr_expect(eq(int, scsi_mrq_submit_check(&h, &n, &cdb_len), tc->err), "%s", tc->what);
	if (tc->err)
		return;
	cr_expect(eq(u32, n, 4), "%s", tc->what);
	cr_expect(eq(u32, cdb_len, h.request_len / 4), "%s", tc->what);
}

Test(scsi, mrq_empty_array_is_nothing_to_do)
{
	struct sg_io_v4 h = cop_of(0, 0);
	unsigned n = 99, cdb_len = 99;

	cr_expect(zero(int, scsi_mrq_submit_check(&h, &n, &cdb_len)));
	cr_expect(zero(u32, n));
}

Test(scsi, mrq_request_takes_its_cdb_from_the_array_and_the_shared_sense)
{
	struct sg_io_v4 cop = cop_of(4, 0), h = { .guard = 'Q', .request_len = 10 };

	cop.request = 0x20000;
	cop.request_len = 4 * 16;
	cop.response = 0x30000;
	cop.max_response_len = 32;
	cr_assert(zero(int, scsi_mrq_request(&h, &cop, 2, 16, true)));
	cr_expect(eq(u64, h.request, 0x20000 + 2 * 16));
	cr_expect(eq(u64, h.response, 0x30000));
	cr_expect(eq(u32, h.max_response_len, 32));
	h.request_len = 17;
	cr_expect(eq(int, scsi_mrq_request(&h, &cop, 2, 16, true), -ERANGE),
		  "longer than its room");
	h.request_len = 10;
	h.guard = 'S';
	cr_expect(eq(int, scsi_mrq_request(&h, &cop, 0, 16, true), -ERANGE), "guard");
	h.guard = 'Q';
	for (unsigned i = 0; i < 3; i++) {
		static const uint32_t never[] = { SGV4_FLAG_MULTIPLE_REQS, SGV4_FLAG_SHARE,
						  SGV4_FLAG_DO_ON_OTHER };

		h.flags = never[i];
		cr_expect(eq(int, scsi_mrq_request(&h, &cop, 0, 16, false), -ERANGE), "%u", i);
	}
	h.flags = SGV4_FLAG_COMPLETE_B4;
	cr_expect(eq(int, scsi_mrq_request(&h, &cop, 0, 16, true), -ERANGE),
		  "COMPLETE_B4 with IMMED");
}

Test(scsi, mrq_receive_check)
{
	struct sg_io_v4 h = { .guard = 'Q', .din_xferp = 0x10000, .din_xfer_len = 3 * 160 };
	unsigned n = 0;

	cr_expect(zero(int, scsi_mrq_receive_check(&h, &n)));
	cr_expect(eq(u32, n, 3));
	h.din_xfer_len = 100;
	cr_expect(eq(int, scsi_mrq_receive_check(&h, &n), -ERANGE));
	h.din_xfer_len = 161;
	cr_expect(eq(int, scsi_mrq_receive_check(&h, &n), -ERANGE));
	h.din_xfer_len = SCSI_V4_MRQ_MAX_BYTES + 160;
	cr_expect(eq(int, scsi_mrq_receive_check(&h, &n), -E2BIG));
	h.din_xfer_len = 160;
	h.din_xferp = 0;
	cr_expect(eq(int, scsi_mrq_receive_check(&h, &n), -ERANGE));
}

Test(scsi, decode_refuses_a_control_object_as_one_command)
{
	struct sg_io_v4 h = {
		.guard = 'Q', .request_len = 10, .request = 0x1000, .flags = SGV4_FLAG_MULTIPLE_REQS
	};
	struct scsi_req r;

	cr_expect(eq(int, scsi_decode(&h, sizeof(h), &r), -ERANGE));
}

Test(scsi, vpd80_serial_trimmed_and_bounded)
{
	static const uint8_t page[] = { 0, 0x80, 0, 8, ' ', ' ', 'A', 'B', '1', 0x01, ' ', 0 };
	static const uint8_t other[] = { 0, 0x83, 0, 2, 'x', 'y' };
	static const uint8_t longer[] = { 0, 0x80, 0, 200, 'S', 'N', '4', '2' };
	char buf[16];

	scsi_vpd80_serial(page, sizeof(page), buf, sizeof(buf));
	cr_expect_str_eq(buf, "AB1?");
	scsi_vpd80_serial(other, sizeof(other), buf, sizeof(buf));
	cr_expect_str_eq(buf, "", "not page 0x80");
	scsi_vpd80_serial(page, 3, buf, sizeof(buf));
	cr_expect_str_eq(buf, "", "short");
	scsi_vpd80_serial(longer, sizeof(longer), buf, sizeof(buf));
	cr_expect_str_eq(buf, "SN42", "a length past the page: the page's bytes");
	scsi_vpd80_serial(longer, sizeof(longer), buf, 3);
	cr_expect_str_eq(buf, "SN");
}
