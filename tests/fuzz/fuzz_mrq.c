// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for the sg v4 ioctls' array decoder in scsi.c, down
 * the path async.c takes for SG_IOSUBMIT of a control object
 * (SGV4_FLAG_MULTIPLE_REQS) and for SG_IORECEIVE of one.  The input:
 *
 *   file flags     one byte: bit 0, the file was opened O_NONBLOCK (an
 *                  array is then submitted without waiting, as IMMED)
 *   control object SCSI_V4_HDR_LEN bytes, as the caller's struct sg_io_v4
 *   requests       the array at its dout_xferp, as many headers as the
 *                  control object says (missing bytes read as zero)
 *
 * The array is held in a heap buffer of exactly its size, so that ASan
 * sees a read past it.  Beyond not crashing: what the checks pass is what
 * async.c relies on (whole headers, within the bounds, each request a v4
 * SCSI header with its CDB inside the CDB array, no nested array, no
 * COMPLETE_B4 where it cannot be honoured), and each request then decodes
 * as submit_one() decodes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scsi.h"

/* n bytes of the input at *p into dst, zeros past its end. */
static void take(const uint8_t **p, size_t *left, void *dst, size_t n)
{
	size_t k = n < *left ? n : *left;

	if (k)
		memcpy(dst, *p, k);
	memset((char *)dst + k, 0, n - k);
	*p += k;
	*left -= k;
}

/* One request the decoder passed: as sg_mrq_sanity() allows, and decodable. */
static void check_request(const struct sg_io_v4 *h, const struct sg_io_v4 *before,
			  const struct sg_io_v4 *cop, unsigned k, unsigned cdb_len)
{
	struct scsi_req r;
	int err;

	check(h->guard == 'Q' && !h->protocol && !h->subprotocol);
	check(!(h->flags & (SGV4_FLAG_MULTIPLE_REQS | SGV4_FLAG_SHARE | SGV4_FLAG_DO_ON_OTHER)));
	check(!(h->flags & SGV4_FLAG_COMPLETE_B4));
	if (cdb_len)
		check(h->request_len <= cdb_len &&
		      h->request == cop->request + (uint64_t)k * cdb_len);
	else
		check(h->request == before->request);
	check(h->flags == before->flags && h->dout_xferp == before->dout_xferp &&
	      h->din_xferp == before->din_xferp && h->din_xfer_len == before->din_xfer_len &&
	      h->dout_xfer_len == before->dout_xfer_len);
	if (before->response || before->max_response_len)
		check(h->response == before->response &&
		      h->max_response_len == before->max_response_len);
	err = scsi_decode(h, SCSI_V4_HDR_LEN, &r);
	if (!err)
		check(r.version == 4 && r.hdr_len == SCSI_V4_HDR_LEN && r.cdb_addr == h->request &&
		      r.cdb_len == h->request_len);
	else
		check(err == -EINVAL || err == -EMSGSIZE || err == -EOPNOTSUPP || err == -ENOSYS);
}

static void submit(const struct sg_io_v4 *cop, bool nonblock, const uint8_t *p, size_t left)
{
	bool immed = (cop->flags & SGV4_FLAG_IMMED) || nonblock;
	struct sg_io_v4 *hdrs, *before;
	unsigned n, cdb_len;
	int err;

	if (scsi_mrq_submit_check(cop, &n, &cdb_len))
		return;
	check((uint64_t)n * SCSI_V4_HDR_LEN == cop->dout_xfer_len && cop->dout_xferp);
	check(cop->dout_xfer_len <= SCSI_V4_MRQ_MAX_BYTES);
	check(!cdb_len || (cdb_len >= 6 && (uint64_t)cdb_len * n == cop->request_len));
	check(!(cop->flags & SGV4_FLAG_IMMED) || !(cop->flags & SGV4_FLAG_STOP_IF));
	hdrs = malloc(n * sizeof(*hdrs));
	before = malloc(n * sizeof(*before));
	check(!n || (hdrs && before));
	for (unsigned k = 0; k < n; k++)
		take(&p, &left, &hdrs[k], sizeof(hdrs[k]));
	if (n)
		memcpy(before, hdrs, n * sizeof(*hdrs));
	err = scsi_mrq_decode(cop, cdb_len, immed, hdrs, n);
	if (err) {
		check(err == -ERANGE || (err == -EOPNOTSUPP && !immed));
	} else {
		for (unsigned k = 0; k < n; k++)
			check_request(&hdrs[k], &before[k], cop, k, cdb_len);
	}
	free(hdrs);
	free(before);
}

static void receive(const struct sg_io_v4 *cop)
{
	unsigned n = 0;

	if (scsi_mrq_receive_check(cop, &n))
		return;
	check(n >= 1 && (uint64_t)n * SCSI_V4_HDR_LEN == cop->din_xfer_len && cop->din_xferp);
	check(cop->din_xfer_len <= SCSI_V4_MRQ_MAX_BYTES);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	struct sg_io_v4 *cop = malloc(sizeof(*cop));
	uint8_t flags;

	check(cop != NULL);
	take(&p, &left, &flags, 1);
	take(&p, &left, cop, sizeof(*cop));
	submit(cop, flags & 1, p, left);
	receive(cop);
	free(cop);
	return 0;
}
