/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pure SCSI pass-through header handling: decode and validate the v3
 * (struct sg_io_hdr) and v4 (struct sg_io_v4) headers a client hands us,
 * fill their output fields the way drivers/scsi/sg.c and block/bsg.c do,
 * and build the header we send to the target.  No system calls, no
 * allocation: bytes in, structs out.  Every function returning int returns
 * 0 or a negative errno chosen to match the kernel for the same mistake.
 */
#ifndef CUSE_BSG_SCSI_H
#define CUSE_BSG_SCSI_H

#include <linux/bsg.h>
#include <linux/ioctl.h>
#include <scsi/sg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCSI_V3_HDR_LEN	    88u		 /* sizeof(struct sg_io_hdr) on LP64 */
#define SCSI_V4_HDR_LEN	    160u	 /* sizeof(struct sg_io_v4) */
#define SCSI_CDB_MAX	    32u		 /* sizeof(scmd->cmnd): the longest CDB a target takes */
#define SCSI_V3_CDB_MAX	    252u	 /* sg's bound before EMSGSIZE */
#define SCSI_SENSE_MAX	    96u		 /* SCSI_SENSE_BUFFERSIZE: most sense the kernel keeps */
#define SCSI_XFER_LIMIT	    (256u << 20) /* sg refuses dxfer_len >= 256 MiB */
#define SCSI_IOV_MAX	    1024u	 /* UIO_MAXIOV, import_iovec()'s bound */
#define SCSI_DRIVER_SENSE   0x08u	 /* driver_status when sense was returned */
#define SCSI_DID_NO_CONNECT 0x01u	 /* host_status of a command whose device is gone */
#define SCSI_SG_VERSION	    30536	 /* what SG_GET_VERSION_NUM says: sg 3.5.36 */

/* Missing from glibc's <scsi/sg.h>; values from the kernel's uapi. */
#ifndef SG_FLAG_MMAP_IO
#define SG_FLAG_MMAP_IO 4
#endif
#ifndef SG_FLAG_Q_AT_TAIL
#define SG_FLAG_Q_AT_TAIL 0x10
#endif
#ifndef SG_FLAG_Q_AT_HEAD
#define SG_FLAG_Q_AT_HEAD 0x20
#endif

/*
 * Douglas Gilbert's sg v4 driver's asynchronous ioctls (sg 4.0.47's uapi
 * <scsi/sg.h>, carried by sg3_utils as testing/uapi_sg.h; never merged, so
 * in no system header).  A struct sg_io_v4 throughout; a "control object"
 * with SGV4_FLAG_MULTIPLE_REQS names an array of them in dout_xferp
 * (submit) or din_xferp (receive).
 */
#define SG_IOSUBMIT	_IOWR(0x22, 0x41, struct sg_io_v4)
#define SG_IORECEIVE	_IOWR(0x22, 0x42, struct sg_io_v4)
#define SG_IOABORT	_IOW(0x22, 0x43, struct sg_io_v4)
#define SG_IOSUBMIT_V3	_IOWR(0x22, 0x45, struct sg_io_hdr)
#define SG_IORECEIVE_V3 _IOWR(0x22, 0x46, struct sg_io_hdr)

#define SGV4_FLAG_YIELD_TAG	0x8	/* SG_IOSUBMIT writes generated_tag back */
#define SGV4_FLAG_COMPLETE_B4	0x100	/* mrq: complete this one before the next */
#define SGV4_FLAG_IMMED		0x400	/* submit without waiting; receive without blocking */
#define SGV4_FLAG_STOP_IF	0x1000	/* blocking mrq: stop at the first error */
#define SGV4_FLAG_DEV_SCOPE	0x2000	/* SG_IOABORT across the device's files */
#define SGV4_FLAG_SHARE		0x4000	/* shared file descriptors' buffer */
#define SGV4_FLAG_DO_ON_OTHER	0x8000	/* ... on the other of a shared pair */
#define SGV4_FLAG_MULTIPLE_REQS 0x40000 /* a control object */
#define SG_INFO_ABORTED		0x10	/* in info: SG_IOABORT reached it */
#define SG_INFO_MRQ_FINI	0x20	/* in info: completed through a control object */
/* SG_SET_GET_EXTENDED: of it, the node keeps one flag (README) */
struct sg_extended_info {
	uint32_t sei_wr_mask, sei_rd_mask;
	uint32_t ctl_flags_wr_mask, ctl_flags_rd_mask, ctl_flags;
	uint32_t read_value, reserved_sz, tot_fd_thresh, minor_index, share_fd, sgat_elem_sz;
	int32_t num;
	uint8_t pad_to_96[48];
};
#define SG_SET_GET_EXTENDED	     _IOWR(0x22, 0x51, struct sg_extended_info)
#define SG_SEIM_CTL_FLAGS	     0x1
#define SG_CTL_FLAGM_TAG_FOR_PACK_ID 0x2	/* receive and abort by tag, not pack_id */
#define SCSI_V4_MRQ_MAX_BYTES	     (2u << 20) /* sg's SG_MAX_MULTI_REQ_SZ */
#define SCSI_DRIVER_SOFT	     0x04u	/* driver_status of an aborted command */
#define SCSI_DID_ABORT		     0x05u	/* host_status of one aborted before it ran */

enum scsi_dir {
	SCSI_DIR_NONE,
	SCSI_DIR_TO_DEV,
	SCSI_DIR_FROM_DEV,
	SCSI_DIR_TO_FROM_DEV, /* v3 only: data-out copied in, then read over */
};

union scsi_hdr {
	struct sg_io_hdr v3;
	struct sg_io_v4 v4;
	unsigned char raw[SCSI_V4_HDR_LEN];
};

/* A client's header, decoded and validated.  Addresses are the client's. */
struct scsi_req {
	union scsi_hdr hdr; /* as written; scsi_complete() fills the outputs */
	unsigned version;   /* 3 or 4 */
	unsigned hdr_len;   /* SCSI_V3_HDR_LEN or SCSI_V4_HDR_LEN */
	enum scsi_dir dir;
	uint64_t cdb_addr;
	unsigned cdb_len;    /* 6 .. SCSI_CDB_MAX */
	uint64_t data_addr;  /* flat buffer, or the sg_iovec array if iov_count */
	uint32_t data_len;   /* bytes asked for; 0 when dir is NONE */
	uint32_t iov_count;  /* 0 .. SCSI_IOV_MAX */
	uint64_t sense_addr; /* 0 when no sense is wanted */
	uint32_t sense_max;  /* room at sense_addr */
	uint32_t timeout_ms; /* 0: the target's default */
	bool q_at_head;	     /* sg and bsg queue at head unless told otherwise */
	bool no_dxfer;	     /* SG_FLAG_NO_DXFER: data stays in the daemon */
};

/* What the target answered. */
struct scsi_result {
	uint8_t status;		/* SCSI status byte */
	uint16_t host_status;	/* DID_* */
	uint16_t driver_status; /* without DRIVER_SENSE */
	int32_t resid;
	uint8_t sense_len; /* valid bytes in sense */
	uint8_t sense[SCSI_SENSE_MAX];
};

/* A contiguous piece of client memory. */
struct scsi_seg {
	uint64_t addr;
	uint64_t len;
};

/*
 * Which header the bytes start with: 3 ('S'), 4 ('Q'), or -ENOSYS, sg's
 * answer for a wrong interface_id.  len must be at least 4.
 */
int scsi_peek_version(const void *buf, size_t len);

/*
 * Decode and validate a whole header of len bytes (at least hdr_len of its
 * version).  Does not check the length against a path limit: the caller does.
 */
int scsi_decode(const void *buf, size_t len, struct scsi_req *ret);

/*
 * access_ok() for len bytes at addr: the whole range below limit, the end
 * of the user half (uaccess_user_limit()), without wrapping.
 */
bool scsi_user_range_ok(uint64_t addr, uint64_t len, uint64_t limit);

/*
 * The data segments of a request with iov_count > 0, from the client's
 * sg_iovec array: truncated to data_len as the kernel's iov_iter does.
 * Writes at most iov_count entries to segs; returns their number.  Every
 * entry, those past data_len too, must be a user range below limit
 * (-EFAULT), as import_iovec() checks; a total of zero is -EINVAL, as in
 * sg_start_req().
 */
int scsi_iov_segs(const struct scsi_req *r, const struct sg_iovec *uiov, uint64_t limit,
		  struct scsi_seg *segs);

/*
 * Fill the request's output fields from the target's result, as sg (v3) or
 * bsg (v4) would, and return how many sense bytes go to sense_addr.
 */
unsigned scsi_complete(struct scsi_req *r, const struct scsi_result *res, uint32_t duration_ms);

/*
 * SG_IOSUBMIT's control object: 0 or sg's errno (sg_submit_v4(),
 * sg_do_multi_req()).  *ret_n is the number of requests in dout_xferp (0:
 * nothing to do), *ret_cdb_len each one's room in the CDB array at
 * request, or 0 when each request names its own CDB.
 */
int scsi_mrq_submit_check(const struct sg_io_v4 *cop, unsigned *ret_n, unsigned *ret_cdb_len);

/*
 * Request k of a control object's array, as sg_mrq_sanity() checks it:
 * 0, or -ERANGE.  Points its request into the CDB array (cdb_len room
 * each) and gives it the control object's sense buffer if it has none.
 */
int scsi_mrq_request(struct sg_io_v4 *h, const struct sg_io_v4 *cop, unsigned k, unsigned cdb_len,
		     bool immed);

/*
 * The array of an SG_IOSUBMIT control object that scsi_mrq_submit_check()
 * passed: its n requests, as copied from the client into hdrs, each
 * checked and completed in place by scsi_mrq_request().  0, or the first
 * refusal's errno: -ERANGE, or -EOPNOTSUPP for SGV4_FLAG_COMPLETE_B4 in a
 * blocking array (waiting for one before the next is not offered).
 */
int scsi_mrq_decode(const struct sg_io_v4 *cop, unsigned cdb_len, bool immed, struct sg_io_v4 *hdrs,
		    unsigned n);

/*
 * SG_IORECEIVE's control object: 0 or sg's errno (sg_mrq_ioreceive());
 * *ret_n is how many completions fit at din_xferp.
 */
int scsi_mrq_receive_check(const struct sg_io_v4 *cop, unsigned *ret_n);

/* The v3 header that runs cmd on an sg or sd target (pointers are ours). */
struct scsi_cmd {
	uint8_t cdb[SCSI_CDB_MAX];
	unsigned cdb_len;
	enum scsi_dir dir;
	void *data;
	uint32_t data_len;
	uint32_t timeout_ms;
	bool q_at_head;
	struct scsi_result res;
};

void scsi_cmd_from_req(const struct scsi_req *r, struct scsi_cmd *c);
void scsi_build_v3(const struct scsi_cmd *c, struct sg_io_hdr *h);
void scsi_result_v3(const struct sg_io_hdr *h, struct scsi_result *res);
void scsi_build_v4(const struct scsi_cmd *c, struct sg_io_v4 *h);
void scsi_result_v4(const struct sg_io_v4 *h, enum scsi_dir dir, struct scsi_result *res);

/* Human-readable names for debug logs, through libsgutils2. */
void scsi_opcode_name(const uint8_t *cdb, unsigned cdb_len, int peri_type, char *buf, int len);
void scsi_sense_str(const struct scsi_result *res, char *buf, int len);

/*
 * The unit serial number of a VPD page 0x80 of len bytes (as sysfs's
 * vpd_pg80 holds it), blanks around it dropped, into buf; empty if the
 * page is not one.
 */
void scsi_vpd80_serial(const uint8_t *page, size_t len, char *buf, size_t buf_len);

#endif /* CUSE_BSG_SCSI_H */
