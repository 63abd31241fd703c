// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pure header handling for v3 and v4 SCSI pass-through.  The rules, and the
 * order they are checked in, follow sg_new_write()/sg_start_req() for v3 and
 * bsg_sg_io()/scsi_bsg_sg_io_fn() for v4, so that a client sees the errno it
 * would see from the kernel for the same header.
 */
#include <errno.h>
#include <limits.h>
#include <scsi/scsi.h>
#include <scsi/sg_lib.h>
#include <stdio.h>
#include <string.h>

#include "scsi.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

int scsi_peek_version(const void *buf, size_t len)
{
	int32_t id;

	if (len < sizeof(id))
		return -EINVAL;
	memcpy(&id, buf, sizeof(id));
	if (id == 'S')
		return 3;
	if (id == 'Q')
		return 4;
	return -ENOSYS; /* sg's answer; FUSE hands it to the caller as ENOTTY */
}

static void decode_dir_v3(const struct sg_io_hdr *h, struct scsi_req *r)
{
	r->dir = SCSI_DIR_NONE;
	if (h->dxfer_len == 0 || h->dxfer_direction == SG_DXFER_NONE)
		return;
	if (h->dxfer_direction == SG_DXFER_TO_DEV)
		r->dir = SCSI_DIR_TO_DEV;
	else if (h->dxfer_direction == SG_DXFER_TO_FROM_DEV)
		r->dir = SCSI_DIR_TO_FROM_DEV;
	else
		r->dir = SCSI_DIR_FROM_DEV; /* sg_start_req(): all but TO_DEV read */
}

static int decode_v3(const struct sg_io_hdr *h, struct scsi_req *r)
{
	/* mmap() of a CUSE node is impossible, so there is no reserve to map */
	if (h->flags & SG_FLAG_MMAP_IO)
		return -EINVAL;
	if (!h->cmdp || h->cmd_len < 6 || h->cmd_len > SCSI_V3_CDB_MAX)
		return -EMSGSIZE;
	if (h->dxfer_len >= SCSI_XFER_LIMIT)
		return -EINVAL;
	if (h->cmd_len > SCSI_CDB_MAX)
		return -EINVAL; /* sg_start_req(): longer than scmd->cmnd */
	decode_dir_v3(h, r);
	if (r->dir != SCSI_DIR_NONE && h->iovec_count > SCSI_IOV_MAX)
		return -EINVAL;
	r->hdr_len = SCSI_V3_HDR_LEN;
	r->cdb_addr = (uintptr_t)h->cmdp;
	r->cdb_len = h->cmd_len;
	r->data_addr = (uintptr_t)h->dxferp;
	r->data_len = r->dir == SCSI_DIR_NONE ? 0 : h->dxfer_len;
	r->iov_count = r->dir == SCSI_DIR_NONE ? 0 : h->iovec_count;
	r->sense_addr = h->mx_sb_len ? (uintptr_t)h->sbp : 0;
	r->sense_max = r->sense_addr ? h->mx_sb_len : 0;
	r->timeout_ms = h->timeout;
	r->q_at_head = !(h->flags & SG_FLAG_Q_AT_TAIL);
	r->no_dxfer = h->flags & SG_FLAG_NO_DXFER;
	return 0;
}

static int decode_v4(const struct sg_io_v4 *h, struct scsi_req *r)
{
	if (h->protocol != BSG_PROTOCOL_SCSI || h->subprotocol != BSG_SUB_PROTOCOL_SCSI_CMD)
		return -EINVAL;
	if (h->dout_xfer_len && h->din_xfer_len)
		return -EOPNOTSUPP; /* bidi was removed from bsg */
	if (h->flags & SGV4_FLAG_MULTIPLE_REQS)
		return -ERANGE; /* a control object: SG_IOSUBMIT only (sg v4 write()'s errno) */
	/* bsg takes any request_len up to scmd->cmnd; we also refuse a CDB
	 * too short to hold an opcode's fields rather than send zeros */
	if (h->request_len > SCSI_CDB_MAX || h->request_len < 6)
		return -EINVAL;
	if (h->dout_xfer_len >= SCSI_XFER_LIMIT || h->din_xfer_len >= SCSI_XFER_LIMIT)
		return -EINVAL;
	r->hdr_len = SCSI_V4_HDR_LEN;
	r->cdb_addr = h->request;
	r->cdb_len = h->request_len;
	/* like the kernel since 4.19, *_iovec_count are ignored: flat buffers */
	if (h->dout_xfer_len) {
		r->dir = SCSI_DIR_TO_DEV;
		r->data_addr = h->dout_xferp;
		r->data_len = h->dout_xfer_len;
	} else if (h->din_xfer_len) {
		r->dir = SCSI_DIR_FROM_DEV;
		r->data_addr = h->din_xferp;
		r->data_len = h->din_xfer_len;
	}
	r->sense_addr = h->max_response_len ? h->response : 0;
	r->sense_max = r->sense_addr ? h->max_response_len : 0;
	r->timeout_ms = h->timeout;
	r->q_at_head = !(h->flags & BSG_FLAG_Q_AT_TAIL);
	return 0;
}

int scsi_decode(const void *buf, size_t len, struct scsi_req *ret)
{
	struct scsi_req r = { 0 };
	int version, err;

	version = scsi_peek_version(buf, len);
	if (version < 0)
		return version;
	if (len < (version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN))
		return -EINVAL;
	memcpy(r.hdr.raw, buf, version == 3 ? SCSI_V3_HDR_LEN : SCSI_V4_HDR_LEN);
	r.version = version;
	err = version == 3 ? decode_v3(&r.hdr.v3, &r) : decode_v4(&r.hdr.v4, &r);
	if (err < 0)
		return err;
	*ret = r;
	return 0;
}

bool scsi_user_range_ok(uint64_t addr, uint64_t len, uint64_t limit)
{
	return len <= limit && addr <= limit - len;
}

int scsi_iov_segs(const struct scsi_req *r, const struct sg_iovec *uiov, uint64_t limit,
		  struct scsi_seg *segs)
{
	uint64_t left = r->data_len;
	unsigned i, n = 0;

	/* import_iovec() checks every entry before the list is cut to
	 * dxfer_len: all lengths first, then each range as access_ok() does */
	for (i = 0; i < r->iov_count; i++)
		if (uiov[i].iov_len > (size_t)SSIZE_MAX)
			return -EINVAL;
	for (i = 0; i < r->iov_count; i++)
		if (!scsi_user_range_ok((uintptr_t)uiov[i].iov_base, uiov[i].iov_len, limit))
			return -EFAULT;
	for (i = 0; i < r->iov_count && left; i++) {
		uint64_t len = uiov[i].iov_len;

		if (!len)
			continue;
		segs[n].addr = (uintptr_t)uiov[i].iov_base;
		segs[n].len = MIN(len, left);
		left -= segs[n++].len;
	}
	if (left == r->data_len)
		return -EINVAL;
	return n;
}

static unsigned complete_v3(struct sg_io_hdr *h, const struct scsi_result *res,
			    uint32_t duration_ms)
{
	unsigned n = 0;

	h->status = res->status;
	h->masked_status = (res->status >> 1) & 0x7f;
	h->msg_status = 0;
	h->host_status = res->host_status;
	h->driver_status = res->driver_status;
	h->resid = res->resid;
	h->duration = duration_ms;
	h->sb_len_wr = 0;
	h->info = 0;
	/* sg_new_read(): sense goes out on CHECK CONDITION or valid sense */
	if (h->mx_sb_len > 0 && h->sbp &&
	    ((h->masked_status & CHECK_CONDITION) || (res->sense[0] & 0x70) == 0x70)) {
		n = MIN(8u + res->sense[7], MIN(h->mx_sb_len, SCSI_SENSE_MAX));
		h->driver_status = SCSI_DRIVER_SENSE;
		h->sb_len_wr = n;
	}
	if (h->masked_status || h->host_status || h->driver_status)
		h->info |= SG_INFO_CHECK;
	return n;
}

static unsigned complete_v4(struct sg_io_v4 *h, const struct scsi_result *res, uint32_t duration_ms)
{
	unsigned n = 0;

	h->device_status = res->status;
	h->transport_status = res->host_status;
	h->driver_status = (res->status & 0xfe) == 0x02 ? SCSI_DRIVER_SENSE : 0;
	h->info = 0;
	if (h->device_status || h->transport_status || h->driver_status)
		h->info |= SG_INFO_CHECK;
	h->duration = duration_ms; /* bsg before 4.19 filled it; 6.x leaves it */
	h->response_len = 0;
	if (res->sense_len && h->response) {
		n = MIN(h->max_response_len, res->sense_len);
		h->response_len = n;
	}
	if (h->dout_xfer_len)
		h->dout_resid = res->resid;
	else
		h->din_resid = res->resid;
	return n;
}

unsigned scsi_complete(struct scsi_req *r, const struct scsi_result *res, uint32_t duration_ms)
{
	if (r->version == 3)
		return complete_v3(&r->hdr.v3, res, duration_ms);
	return complete_v4(&r->hdr.v4, res, duration_ms);
}

void scsi_cmd_from_req(const struct scsi_req *r, struct scsi_cmd *c)
{
	c->cdb_len = r->cdb_len;
	c->dir = r->dir;
	c->data_len = r->data_len;
	c->timeout_ms = r->timeout_ms;
	c->q_at_head = r->q_at_head;
}

void scsi_build_v3(const struct scsi_cmd *c, struct sg_io_hdr *h)
{
	static const int dirs[] = {
		[SCSI_DIR_NONE] = SG_DXFER_NONE,
		[SCSI_DIR_TO_DEV] = SG_DXFER_TO_DEV,
		[SCSI_DIR_FROM_DEV] = SG_DXFER_FROM_DEV,
		[SCSI_DIR_TO_FROM_DEV] = SG_DXFER_TO_FROM_DEV,
	};

	memset(h, 0, sizeof(*h));
	h->interface_id = 'S';
	h->dxfer_direction = dirs[c->dir];
	h->cmd_len = c->cdb_len;
	h->mx_sb_len = SCSI_SENSE_MAX;
	h->dxfer_len = c->data_len;
	h->dxferp = c->data_len ? c->data : NULL;
	h->cmdp = (unsigned char *)c->cdb;
	h->sbp = (unsigned char *)c->res.sense;
	h->timeout = c->timeout_ms;
	h->flags = c->q_at_head ? SG_FLAG_Q_AT_HEAD : SG_FLAG_Q_AT_TAIL;
}

void scsi_result_v3(const struct sg_io_hdr *h, struct scsi_result *res)
{
	res->status = h->status;
	res->host_status = h->host_status;
	res->driver_status = h->driver_status & ~SCSI_DRIVER_SENSE;
	res->resid = h->resid;
	res->sense_len = MIN(h->sb_len_wr, SCSI_SENSE_MAX);
}

void scsi_build_v4(const struct scsi_cmd *c, struct sg_io_v4 *h)
{
	memset(h, 0, sizeof(*h));
	h->guard = 'Q';
	h->request_len = c->cdb_len;
	h->request = (uintptr_t)c->cdb;
	h->max_response_len = SCSI_SENSE_MAX;
	h->response = (uintptr_t)c->res.sense;
	if (c->dir == SCSI_DIR_TO_DEV) {
		h->dout_xfer_len = c->data_len;
		h->dout_xferp = (uintptr_t)c->data;
	} else if (c->dir != SCSI_DIR_NONE) {
		h->din_xfer_len = c->data_len;
		h->din_xferp = (uintptr_t)c->data;
	}
	h->timeout = c->timeout_ms;
	h->flags = c->q_at_head ? 0 : BSG_FLAG_Q_AT_TAIL;
}

void scsi_result_v4(const struct sg_io_v4 *h, enum scsi_dir dir, struct scsi_result *res)
{
	res->status = h->device_status;
	res->host_status = h->transport_status;
	res->driver_status = h->driver_status & ~SCSI_DRIVER_SENSE;
	res->resid = dir == SCSI_DIR_TO_DEV ? h->dout_resid : h->din_resid;
	res->sense_len = MIN(h->response_len, SCSI_SENSE_MAX);
}

void scsi_opcode_name(const uint8_t *cdb, unsigned cdb_len, int peri_type, char *buf, int len)
{
	if (cdb_len >= 10 && (cdb[0] == 0x7f || cdb[0] >= 0x9e))
		sg_get_opcode_sa_name(cdb[0], (cdb[1] & 0x1f), peri_type, len, buf);
	else
		sg_get_opcode_name(cdb[0], peri_type, len, buf);
}

void scsi_sense_str(const struct scsi_result *res, char *buf, int len)
{
	buf[0] = '\0';
	if (res->sense_len)
		sg_get_sense_str(NULL, res->sense, res->sense_len, false, len, buf);
}

int scsi_mrq_submit_check(const struct sg_io_v4 *cop, unsigned *ret_n, unsigned *ret_cdb_len)
{
	unsigned n = cop->dout_xfer_len / SCSI_V4_HDR_LEN;

	if (!cop->dout_xferp || cop->din_iovec_count || cop->dout_iovec_count ||
	    cop->dout_xfer_len % SCSI_V4_HDR_LEN)
		return -ERANGE;
	if (cop->flags & SG_FLAG_MMAP_IO)
		return -EBADFD; /* sg: no mmap() active on the file, as ever here */
	if (n > UINT16_MAX)
		return -ERANGE;
	if (cop->dout_xfer_len > SCSI_V4_MRQ_MAX_BYTES ||
	    cop->din_xfer_len > SCSI_V4_MRQ_MAX_BYTES || cop->request_len > SCSI_V4_MRQ_MAX_BYTES)
		return -E2BIG;
	if ((cop->flags & SGV4_FLAG_IMMED) && (cop->flags & SGV4_FLAG_STOP_IF))
		return -ERANGE;
	*ret_n = n;
	*ret_cdb_len = 0;
	if (!n)
		return 0;
	if (!cop->request_len != !cop->request)
		return -ERANGE; /* both or neither */
	if (cop->request_len) {
		if (cop->request_len % n || cop->request_len / n < 6)
			return -ERANGE;
		*ret_cdb_len = cop->request_len / n;
	}
	return 0;
}

int scsi_mrq_request(struct sg_io_v4 *h, const struct sg_io_v4 *cop, unsigned k, unsigned cdb_len,
		     bool immed)
{
	const uint32_t never = SGV4_FLAG_MULTIPLE_REQS | SGV4_FLAG_SHARE | SGV4_FLAG_DO_ON_OTHER;

	if (h->guard != 'Q' || h->protocol || h->subprotocol)
		return -ERANGE;
	/* nested arrays; sharing, as this node has no shared pair */
	if (h->flags & never)
		return -ERANGE;
	if (immed && (h->flags & SGV4_FLAG_COMPLETE_B4))
		return -ERANGE;
	if (cdb_len) {
		if (h->request_len > cdb_len)
			return -ERANGE;
		h->request = cop->request + (uint64_t)k * cdb_len;
	}
	if (cop->response && cop->max_response_len && !h->response && !h->max_response_len) {
		h->response = cop->response;
		h->max_response_len = cop->max_response_len;
	}
	return 0;
}

int scsi_mrq_decode(const struct sg_io_v4 *cop, unsigned cdb_len, bool immed, struct sg_io_v4 *hdrs,
		    unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		int err = scsi_mrq_request(&hdrs[k], cop, k, cdb_len, immed);

		if (err)
			return err;
		/* waiting for one before the next is not offered (README) */
		if (!immed && (hdrs[k].flags & SGV4_FLAG_COMPLETE_B4))
			return -EOPNOTSUPP;
	}
	return 0;
}

int scsi_mrq_receive_check(const struct sg_io_v4 *cop, unsigned *ret_n)
{
	uint32_t len = cop->din_xfer_len;

	if (len > SCSI_V4_MRQ_MAX_BYTES)
		return -E2BIG;
	if (!cop->din_xferp || len < SCSI_V4_HDR_LEN || len % SCSI_V4_HDR_LEN)
		return -ERANGE;
	*ret_n = len / SCSI_V4_HDR_LEN;
	return 0;
}

void scsi_vpd80_serial(const uint8_t *page, size_t len, char *buf, size_t buf_len)
{
	size_t n, start = 4, end;

	buf[0] = '\0';
	if (len < 4 || page[1] != 0x80)
		return;
	n = (size_t)page[2] << 8 | page[3];
	end = 4 + n < len ? 4 + n : len;
	while (start < end && (page[start] == ' ' || page[start] == '\0'))
		start++;
	while (end > start && (page[end - 1] == ' ' || page[end - 1] == '\0'))
		end--;
	if (end - start >= buf_len)
		end = start + buf_len - 1;
	for (size_t i = start; i < end; i++)
		buf[i - start] = page[i] >= 0x20 && page[i] < 0x7f ? (char)page[i] : '?';
	buf[end - start] = '\0';
}
