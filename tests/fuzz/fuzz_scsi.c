// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for scsi.c, down the path sgio.c and target.c take: a
 * client's header is peeked at and decoded, its sg_iovec array cut into
 * segments, the command built for a v3 and a v4 target, the target's answer
 * read back, and the client's header completed.  The input:
 *
 *   client header  SCSI_V3_HDR_LEN bytes ('S') or SCSI_V4_HDR_LEN ('Q');
 *                  anything else is only peeked at and decoded
 *   struct reply   what the target writes in its header's output fields
 *   sense          SCSI_SENSE_MAX bytes, what the target writes at sbp
 *   cdb            SCSI_CDB_MAX bytes, the CDB fetched from the client
 *   peri_type      one byte: the target's peripheral device type
 *   sg_iovec[]     the client's iovec array, iov_count entries
 *
 * A v4 header is also read as an sg v4 control object, and what follows it
 * as a request of its array (run_mrq()).  Missing bytes read as zero.  Every buffer scsi.c reads is a heap copy of
 * exactly the size its contract gives, so that ASan sees a read past it.
 * Beyond not crashing, the checks are the contracts in scsi.h and what its
 * callers rely on: a request moves no more than the header allows, in the
 * direction it names, and completion writes only the header's outputs.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scsi.h"

/* The output fields of a target's v3 or v4 header, as the input gives them. */
struct reply {
	uint8_t status, masked_status, msg_status, sb_len_wr;
	uint16_t host_status, driver_status;
	int32_t resid;
	uint32_t response_len, info, duration_ms;
};

struct input {
	const uint8_t *p;
	size_t left;
};

/* Everything the target side sees and answers, read before the iovecs. */
struct answer {
	struct reply reply;
	uint8_t sense[SCSI_SENSE_MAX];
	uint8_t cdb[SCSI_CDB_MAX];
	uint8_t peri_type;
};

/* n bytes of the input into dst, zeros past its end. */
static void take(struct input *in, void *dst, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	if (k)
		memcpy(dst, in->p, k);
	memset((char *)dst + k, 0, n - k);
	in->p += k;
	in->left -= k;
}

static size_t hdr_len(int version)
{
	return version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN;
}

static int same_req(const struct scsi_req *a, const struct scsi_req *b)
{
	return a->version == b->version && a->hdr_len == b->hdr_len && a->dir == b->dir &&
	       a->cdb_addr == b->cdb_addr && a->cdb_len == b->cdb_len &&
	       a->data_addr == b->data_addr && a->data_len == b->data_len &&
	       a->iov_count == b->iov_count && a->sense_addr == b->sense_addr &&
	       a->sense_max == b->sense_max && a->timeout_ms == b->timeout_ms &&
	       a->q_at_head == b->q_at_head && a->no_dxfer == b->no_dxfer;
}

/* sg_new_write()/sg_start_req(): what a v3 header allows. */
static void check_req_v3(const struct scsi_req *r)
{
	const struct sg_io_hdr *h = &r->hdr.v3;
	int none = h->dxfer_len == 0 || h->dxfer_direction == SG_DXFER_NONE;

	check(h->interface_id == 'S' && !(h->flags & SG_FLAG_MMAP_IO));
	check(r->cdb_addr == (uintptr_t)h->cmdp && r->cdb_addr && r->cdb_len == h->cmd_len);
	check((r->dir == SCSI_DIR_NONE) == none);
	check((r->dir == SCSI_DIR_TO_DEV) == (!none && h->dxfer_direction == SG_DXFER_TO_DEV));
	check((r->dir == SCSI_DIR_TO_FROM_DEV) ==
	      (!none && h->dxfer_direction == SG_DXFER_TO_FROM_DEV));
	check(none || (r->data_addr == (uintptr_t)h->dxferp && r->data_len == h->dxfer_len));
	check(r->iov_count == (none ? 0 : h->iovec_count));
	check(r->sense_max <= h->mx_sb_len);
	check(!r->sense_addr || r->sense_addr == (uintptr_t)h->sbp);
	check(r->timeout_ms == h->timeout);
	check(r->q_at_head == !(h->flags & SG_FLAG_Q_AT_TAIL));
	check(r->no_dxfer == !!(h->flags & SG_FLAG_NO_DXFER));
}

/* bsg_sg_io()/scsi_bsg_sg_io_fn(): what a v4 header allows; flat buffers only. */
static void check_req_v4(const struct scsi_req *r)
{
	const struct sg_io_v4 *h = &r->hdr.v4;

	check(h->guard == 'Q' && h->protocol == BSG_PROTOCOL_SCSI &&
	      h->subprotocol == BSG_SUB_PROTOCOL_SCSI_CMD);
	check(!h->dout_xfer_len || !h->din_xfer_len);
	check(r->cdb_addr == h->request && r->cdb_len == h->request_len);
	check(r->dir != SCSI_DIR_TO_FROM_DEV && r->iov_count == 0 && !r->no_dxfer);
	check(r->dir != SCSI_DIR_TO_DEV ||
	      (r->data_addr == h->dout_xferp && r->data_len == h->dout_xfer_len));
	check(r->dir != SCSI_DIR_FROM_DEV ||
	      (r->data_addr == h->din_xferp && r->data_len == h->din_xfer_len));
	check(r->dir != SCSI_DIR_NONE || (!h->dout_xfer_len && !h->din_xfer_len));
	check(r->sense_max <= h->max_response_len);
	check(!r->sense_addr || r->sense_addr == h->response);
	check(r->timeout_ms == h->timeout);
	check(r->q_at_head == !(h->flags & BSG_FLAG_Q_AT_TAIL));
}

static void check_req(const struct scsi_req *r, const uint8_t *hdr)
{
	check(r->version == 3 || r->version == 4);
	check(r->hdr_len == hdr_len(r->version));
	check(!memcmp(r->hdr.raw, hdr, r->hdr_len));
	check(r->cdb_len >= 6 && r->cdb_len <= SCSI_CDB_MAX);
	check(r->data_len < SCSI_XFER_LIMIT);
	check((r->dir == SCSI_DIR_NONE) == (r->data_len == 0));
	check(r->iov_count <= SCSI_IOV_MAX);
	check((r->sense_addr == 0) == (r->sense_max == 0));
	if (r->version == 3)
		check_req_v3(r);
	else
		check_req_v4(r);
}

/*
 * Peek and decode a header of len bytes, held in a buffer of exactly that
 * size; *ret is untouched on failure.  0 or the errno.
 */
static int decode(const uint8_t *data, size_t len, struct scsi_req *ret)
{
	uint8_t *buf = dup_exact(data, len);
	int version = scsi_peek_version(buf, len);
	struct scsi_req before;
	int err;

	check(len < 4 ? version == -EINVAL : (version == 3 || version == 4 || version == -ENOSYS));
	memset(ret, 0xa5, sizeof(*ret));
	memcpy(&before, ret, sizeof(before));
	err = scsi_decode(buf, len, ret);
	if (err) {
		check(err == -EINVAL || err == -ENOSYS || err == -EMSGSIZE || err == -EOPNOTSUPP ||
		      (err == -ERANGE && version == 4)); /* an sg v4 control object */
		check(version >= 0 || err == version);
		check(!memcmp(ret, &before, sizeof(before)));
	} else {
		check(version == (int)ret->version && len >= ret->hdr_len);
		check_req(ret, data);
	}
	free(buf);
	return err;
}

#define USER_LIMIT ((1ull << 47) - 4096) /* TASK_SIZE_MAX, four-level page tables */

/*
 * The client's iovecs, as sgio.c's cmd_set_segs() takes them: -EINVAL,
 * -EFAULT or the bytes they carry, which the segments must add up to, in
 * order, cut to data_len as the kernel's iov_iter does.
 */
static int64_t check_segs(const struct scsi_req *r, struct input *in)
{
	struct sg_iovec *uiov = malloc(r->iov_count * sizeof(*uiov));
	struct scsi_seg *segs = malloc(r->iov_count * sizeof(*segs));
	uint64_t left = r->data_len;
	int bad = 0, fault = 0, n, k = 0;

	check(uiov && segs);
	for (unsigned i = 0; i < r->iov_count; i++) {
		uint64_t base, len;

		take(in, &uiov[i], sizeof(uiov[i]));
		base = (uintptr_t)uiov[i].iov_base;
		len = uiov[i].iov_len;
		bad |= len > (size_t)SSIZE_MAX;
		fault |= len > USER_LIMIT || base + len > USER_LIMIT || base + len < base;
	}
	n = scsi_iov_segs(r, uiov, USER_LIMIT, segs);
	if (!bad && fault) {
		check(n == -EFAULT);
		free(uiov);
		free(segs);
		return n;
	}
	for (unsigned i = 0; !bad && i < r->iov_count && left; i++) {
		uint64_t len = uiov[i].iov_len < left ? uiov[i].iov_len : left;

		if (!len)
			continue;
		check(k < n && segs[k].addr == (uintptr_t)uiov[i].iov_base && segs[k].len == len);
		left -= len;
		k++;
	}
	if (bad || left == r->data_len)
		check(n == -EINVAL);
	else
		check(n == k && (unsigned)n <= r->iov_count);
	free(uiov);
	free(segs);
	return n < 0 ? n : (int64_t)(r->data_len - left);
}

/* A header built for the target decodes to the command it was built from. */
static void check_built(const struct scsi_cmd *c, const void *hdr, int version)
{
	enum scsi_dir dir = c->dir;
	struct scsi_req b;

	if (version == 4 && dir == SCSI_DIR_TO_FROM_DEV)
		dir = SCSI_DIR_FROM_DEV; /* bsg has no "to and from": data-in */
	check(decode(hdr, hdr_len(version), &b) == 0 && (int)b.version == version);
	check(b.cdb_addr == (uintptr_t)c->cdb && b.cdb_len == c->cdb_len);
	check(b.dir == dir && b.data_len == c->data_len);
	check(!b.data_len || b.data_addr == (uintptr_t)c->data);
	check(b.iov_count == 0 && !b.no_dxfer);
	check(b.sense_addr == (uintptr_t)c->res.sense && b.sense_max == SCSI_SENSE_MAX);
	check(b.timeout_ms == c->timeout_ms && b.q_at_head == c->q_at_head);
}

static void check_result(const struct scsi_result *res, uint8_t status, unsigned sense_len)
{
	check(res->status == status);
	check(res->sense_len == (sense_len < SCSI_SENSE_MAX ? sense_len : SCSI_SENSE_MAX));
	check(!(res->driver_status & SCSI_DRIVER_SENSE));
}

/* The target as target.c's sg_io_v3() drives it. */
static void target_v3(struct scsi_cmd *c, const struct answer *a)
{
	const struct reply *rp = &a->reply;
	struct sg_io_hdr h;

	scsi_build_v3(c, &h);
	check_built(c, &h, 3);
	memcpy(c->res.sense, a->sense, sizeof(a->sense));
	h.status = rp->status;
	h.masked_status = rp->masked_status;
	h.msg_status = rp->msg_status;
	h.sb_len_wr = rp->sb_len_wr;
	h.host_status = rp->host_status;
	h.driver_status = rp->driver_status;
	h.resid = rp->resid;
	h.duration = rp->duration_ms;
	h.info = rp->info;
	scsi_result_v3(&h, &c->res);
	check_result(&c->res, rp->status, rp->sb_len_wr);
	check(c->res.host_status == rp->host_status && c->res.resid == rp->resid);
}

/* The target as target.c's sg_io_v4() drives it. */
static void target_v4(struct scsi_cmd *c, const struct answer *a)
{
	const struct reply *rp = &a->reply;
	struct sg_io_v4 h;

	scsi_build_v4(c, &h);
	check_built(c, &h, 4);
	memcpy(c->res.sense, a->sense, sizeof(a->sense));
	h.device_status = rp->status;
	h.transport_status = rp->host_status;
	h.driver_status = rp->driver_status;
	h.response_len = rp->response_len;
	h.din_resid = rp->resid;
	h.dout_resid = ~rp->resid;
	h.duration = rp->duration_ms;
	h.info = rp->info;
	scsi_result_v4(&h, c->dir, &c->res);
	check_result(&c->res, rp->status, rp->response_len);
	check(c->res.resid == (c->dir == SCSI_DIR_TO_DEV ? ~rp->resid : rp->resid));
}

static void clear_outputs_v3(struct sg_io_hdr *h)
{
	h->status = h->masked_status = h->msg_status = h->sb_len_wr = 0;
	h->host_status = h->driver_status = 0;
	h->resid = 0;
	h->duration = h->info = 0;
}

static void clear_outputs_v4(struct sg_io_v4 *h)
{
	h->driver_status = h->transport_status = h->device_status = 0;
	h->retry_delay = h->info = h->duration = h->response_len = 0;
	h->din_resid = h->dout_resid = 0;
	h->generated_tag = 0;
	h->spare_out = 0;
}

static void check_done_v3(const struct sg_io_hdr *h, const struct scsi_result *res, unsigned n,
			  uint32_t ms)
{
	check(h->sb_len_wr == n && (!n || (h->driver_status & SCSI_DRIVER_SENSE)));
	check(h->status == res->status && h->masked_status == ((res->status >> 1) & 0x7f));
	check(h->host_status == res->host_status && h->resid == res->resid && h->duration == ms);
	check(!(h->info & SG_INFO_CHECK) ==
	      !(h->masked_status || h->host_status || h->driver_status));
}

static void check_done_v4(const struct sg_io_v4 *h, const struct scsi_result *res, unsigned n,
			  uint32_t ms)
{
	check(h->response_len == n && n <= res->sense_len);
	check(h->device_status == res->status && h->transport_status == res->host_status);
	check((h->dout_xfer_len ? h->dout_resid : h->din_resid) == res->resid);
	check(h->duration == ms);
	check(!(h->info & SG_INFO_CHECK) ==
	      !(h->device_status || h->transport_status || h->driver_status));
}

/*
 * Completion writes the header's outputs and nothing else: the header
 * decodes to the same request after, and the sense it reports fits both
 * the client's buffer and ours.
 */
static void check_complete(const struct scsi_req *r, const struct scsi_result *res, uint32_t ms)
{
	struct scsi_req done = *r, again;
	union scsi_hdr before = r->hdr;
	unsigned n = scsi_complete(&done, res, ms);

	check(n <= r->sense_max && n <= SCSI_SENSE_MAX);
	check(decode(done.hdr.raw, done.hdr_len, &again) == 0 && same_req(r, &again));
	if (r->version == 3) {
		check_done_v3(&done.hdr.v3, res, n, ms);
		clear_outputs_v3(&done.hdr.v3);
		clear_outputs_v3(&before.v3);
	} else {
		check_done_v4(&done.hdr.v4, res, n, ms);
		clear_outputs_v4(&done.hdr.v4);
		clear_outputs_v4(&before.v4);
	}
	check(!memcmp(&done.hdr, &before, r->hdr_len));
}

/* sgio_log_cmd()'s names: whatever the bytes, a string that fits. */
static void check_names(const struct scsi_cmd *c, const struct answer *a)
{
	char *op = malloc(64), *sense = malloc(256);

	check(op && sense);
	scsi_opcode_name(c->cdb, c->cdb_len, a->peri_type & 0x1f, op, 64);
	check(memchr(op, '\0', 64) != NULL);
	scsi_sense_str(&c->res, sense, 256);
	check(memchr(sense, '\0', 256) != NULL);
	free(op);
	free(sense);
}

/* The command as sgio_cmd_new() and cmd_set_segs() make it, to each kind of target. */
static void run_command(const struct scsi_req *r, uint32_t data_len, const struct answer *a)
{
	static uint8_t data; /* stands for the daemon's data buffer: never touched */
	struct scsi_cmd c;

	memset(&c, 0, sizeof(c));
	scsi_cmd_from_req(r, &c);
	check(c.cdb_len == r->cdb_len && c.dir == r->dir && c.data_len == r->data_len);
	check(c.timeout_ms == r->timeout_ms && c.q_at_head == r->q_at_head);
	memcpy(c.cdb, a->cdb, c.cdb_len);
	c.data_len = data_len;
	c.data = data_len ? &data : NULL;
	target_v3(&c, a);
	check_complete(r, &c.res, a->reply.duration_ms);
	target_v4(&c, a);
	check_complete(r, &c.res, a->reply.duration_ms);
	check_names(&c, a);
}

/*
 * A v4 header read as an sg v4 control object (SG_IOSUBMIT, SG_IORECEIVE),
 * and the bytes after it as request k of its array: what a check passes is
 * what async.c relies on (whole headers, CDB room, the CDB in the array).
 */
static void run_mrq(const uint8_t *data, size_t size)
{
	struct sg_io_v4 *cop = malloc(sizeof(*cop)), h = { 0 };
	unsigned n = 0, cdb_len = 0, k;

	memcpy(cop, data, sizeof(*cop));
	if (!scsi_mrq_receive_check(cop, &n))
		check(n >= 1 && (uint64_t)n * SCSI_V4_HDR_LEN == cop->din_xfer_len &&
		      cop->din_xferp);
	if (!scsi_mrq_submit_check(cop, &n, &cdb_len)) {
		check((uint64_t)n * SCSI_V4_HDR_LEN == cop->dout_xfer_len && cop->dout_xferp);
		check(!cdb_len || (cdb_len >= 6 && (uint64_t)cdb_len * n == cop->request_len));
		memcpy(&h, data + SCSI_V4_HDR_LEN,
		       size - SCSI_V4_HDR_LEN < sizeof(h) ? size - SCSI_V4_HDR_LEN : sizeof(h));
		k = n ? h.spare_in % n : 0;
		if (n && !scsi_mrq_request(&h, cop, k, cdb_len, cop->flags & SGV4_FLAG_IMMED))
			check(h.guard == 'Q' && !(h.flags & SGV4_FLAG_MULTIPLE_REQS) &&
			      (!cdb_len || (h.request_len <= cdb_len &&
					    h.request == cop->request + (uint64_t)k * cdb_len)));
	}
	free(cop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct scsi_req r, whole;
	struct answer a;
	int version = size >= 4 ? scsi_peek_version(data, 4) : -EINVAL;
	size_t len = size;
	int64_t data_len;
	int err;

	/* the header alone first, as the ioctl reads it */
	if (version > 0 && size > hdr_len(version))
		len = hdr_len(version);
	if (version == 4 && size >= SCSI_V4_HDR_LEN)
		run_mrq(data, size);
	err = decode(data, len, &r);
	/* what follows the header is not looked at: write() hands over a whole buffer */
	check(decode(data, size, &whole) == err && (err || same_req(&r, &whole)));
	if (err)
		return 0;
	in.p += r.hdr_len;
	in.left -= r.hdr_len;
	take(&in, &a.reply, sizeof(a.reply));
	take(&in, a.sense, sizeof(a.sense));
	take(&in, a.cdb, sizeof(a.cdb));
	take(&in, &a.peri_type, sizeof(a.peri_type));
	data_len = r.iov_count ? check_segs(&r, &in) : r.data_len;
	if (data_len >= 0)
		run_command(&r, data_len, &a);
	return 0;
}
