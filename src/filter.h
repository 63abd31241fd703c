/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which SCSI commands a caller of the node may send.  By default the rule of
 * the kernel (6.1): drivers/scsi/scsi_ioctl.c scsi_cmd_allowed(), which bsg
 * and sd's SG_IO apply to every command, and which sg applies only to SG_IO
 * on a file not opened O_RDWR (sg_allow_access() in drivers/scsi/sg.c).  A
 * policy file (docs/POLICY.md) overrides that rule opcode by opcode.
 *
 * Pure: no system calls, no allocation.  The policy is a plain struct the
 * caller owns; after filter_parse() it is read-only and may be shared by
 * any number of threads.
 */
#ifndef CUSE_BSG_FILTER_H
#define CUSE_BSG_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FILTER_LINE_MAX 256u	    /* longest policy line, newline excluded */
#define FILTER_TEXT_MAX (64u << 10) /* largest policy file */

/* What a policy says about one opcode. */
enum filter_decision {
	FILTER_DEFAULT,	    /* the kernel rule chosen by the policy's 'kernel' */
	FILTER_ALLOW,	    /* any caller: having the node open is enough */
	FILTER_ALLOW_WRITE, /* callers whose file is open for writing, or CAP_SYS_RAWIO */
	FILTER_RAWIO,	    /* callers with CAP_SYS_RAWIO only */
	FILTER_DENY,	    /* nobody, CAP_SYS_RAWIO included */
};

/* Which kernel driver FILTER_DEFAULT follows. */
enum filter_kernel {
	FILTER_KERNEL_BSG, /* bsg, and SG_IO on sd: every command is checked */
	FILTER_KERNEL_SG,  /* sg: only SG_IO without O_RDWR, and never for a scanner */
};

/* Embeddable, so that filter_parse() needs no allocation. */
struct filter_policy {
	enum filter_kernel kernel;
	uint8_t op[256]; /* enum filter_decision, by opcode */
};

/* Everything besides the CDB that the kernel looks at. */
struct filter_ctx {
	int open_flags;	 /* the file's open(2) flags: only O_ACCMODE counts */
	bool rawio;	 /* the calling thread has CAP_SYS_RAWIO (the kernel asks
			 * capable() of the caller, at each command) */
	bool by_write;	 /* the command came by write(), not by ioctl(SG_IO) */
	int scsi_type;	 /* the target's peripheral device type */
	bool scsi_ioctl; /* by SCSI_IOCTL_SEND_COMMAND: the kernel's table even on
			  * sg (scsi_ioctl() checks every command; only sg's own
			  * SG_IO and write() skip it) */
};

/* The kernel default: every opcode FILTER_DEFAULT, FILTER_KERNEL_BSG. */
void filter_init(struct filter_policy *p);

/*
 * May ctx send cdb?  0, or -EPERM, the kernel's errno for a refused
 * command.  A NULL policy is the kernel default.  Only cdb[0] is looked at,
 * as in the kernel; a cdb_len of 0 counts as opcode 0x00 (cdb may then be
 * NULL), which is what bsg checks when given no CDB.
 */
int filter_check(const struct filter_policy *p, const uint8_t *cdb, unsigned cdb_len,
		 const struct filter_ctx *ctx);

/* filter_check(), with kernel's rule where p leaves an opcode to the kernel. */
int filter_check_as(const struct filter_policy *p, enum filter_kernel kernel, const uint8_t *cdb,
		    unsigned cdb_len, const struct filter_ctx *ctx);

/*
 * The kernel's table, in the policy's words: FILTER_ALLOW for its read-safe
 * opcodes, FILTER_ALLOW_WRITE for its write-safe ones, FILTER_RAWIO for the
 * rest.
 */
enum filter_decision filter_kernel_decision(uint8_t op);

/*
 * Parse a policy file of len bytes (no NUL needed) into *ret, which is
 * written only on success.  -EINVAL for a malformed file, with the line
 * number and the reason in why (always NUL-terminated when why_len > 0).
 */
int filter_parse(const char *text, size_t len, struct filter_policy *ret, char *why,
		 size_t why_len);

/* The name a policy file gives op, or NULL when it has none. */
const char *filter_opcode_name(uint8_t op);

/* "default", "allow", "allow-write", "rawio" or "deny". */
const char *filter_decision_name(enum filter_decision d);

#endif /* CUSE_BSG_FILTER_H */
