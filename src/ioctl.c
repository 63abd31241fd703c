// SPDX-License-Identifier: GPL-2.0-only
/*
 * One table, one small helper per ioctl.  Values and errnos follow
 * sg_ioctl_common() in drivers/scsi/sg.c.  None of these ioctl numbers
 * carries a size, so each argument is fetched or stored through ioctx.
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/blktrace_api.h>
#include <linux/fs.h>
#include <scsi/scsi.h>
#include <string.h>

#include "bsgdev.h"
#include "ioctl.h"
#include "ioctx.h"
#include "log.h"
#include "midlayer.h"
#include "opener.h"
#include "queue/cmdq.h"
#include "queue/sgv4.h"
#include "sgio.h"

#ifndef SCSI_IOCTL_GET_BUS_NUMBER
#define SCSI_IOCTL_GET_BUS_NUMBER 0x5386
#endif
#ifndef SG_GET_TRANSFORM
#define SG_GET_TRANSFORM 0x2205
#endif
#ifndef SCSI_IOCTL_SEND_COMMAND
#define SCSI_IOCTL_SEND_COMMAND 1
#endif
#ifndef SG_GET_ACCESS_COUNT
#define SG_GET_ACCESS_COUNT 0x2289 /* missing from glibc's <scsi/sg.h> */
#endif

struct scsi_idlun {
	int dev_id;
	int host_unique_id;
};

static void put_int(struct ioctx *x, int val)
{
	ioctx_reply_out(x, 0, &val, sizeof(val));
}

/* Fetch an int argument; false if the call was answered meanwhile. */
static bool get_int(struct ioctx *x, int *val)
{
	return ioctx_fetch(x, val, sizeof(*val)) == 1;
}

static void set_flag(struct ioctx *x, atomic_int *flag)
{
	int val;

	if (!get_int(x, &val))
		return;
	atomic_store(flag, val ? 1 : 0);
	ioctx_reply(x, 0);
}

static void set_timeout(struct ioctx *x)
{
	int val;

	if (!get_int(x, &val))
		return;
	if (val < 0) {
		ioctx_reply(x, -EIO);
		return;
	}
	atomic_store(&x->o->timeout_user, val);
	ioctx_reply(x, 0);
}

static void set_reserved(struct ioctx *x)
{
	uint32_t max = bsgdev_max_sectors_bytes(x->o->d);
	int val;

	if (!get_int(x, &val))
		return;
	if (val < 0) {
		ioctx_reply(x, -EINVAL);
		return;
	}
	atomic_store(&x->o->reserved, (uint32_t)val < max ? val : (int)max);
	ioctx_reply(x, 0);
}

static void get_reserved(struct ioctx *x)
{
	uint32_t max = bsgdev_max_sectors_bytes(x->o->d);
	int val = atomic_load(&x->o->reserved);

	put_int(x, (uint32_t)val < max ? val : (int)max);
}

static void set_next_cmd_len(struct ioctx *x)
{
	int val;

	if (!get_int(x, &val))
		return;
	if (val > (int)SCSI_V3_CDB_MAX) {
		ioctx_reply(x, -ENOMEM);
		return;
	}
	atomic_store(&x->o->next_cmd_len, val > 0 ? val : 0);
	ioctx_reply(x, 0);
}

static void set_debug(struct ioctx *x)
{
	int val;

	if (!get_int(x, &val))
		return;
	atomic_store(&x->o->debug, val);
	ioctx_reply(x, 0);
}

static void get_scsi_id(struct ioctx *x)
{
	const struct target_info *t = &x->o->d->target->info;
	struct sg_scsi_id id = {
		.host_no = t->host,
		.channel = t->channel,
		.scsi_id = t->id,
		.lun = t->lun,
		.scsi_type = t->scsi_type,
		.h_cmd_per_lun = t->cmd_per_lun,
		.d_queue_depth = t->queue_depth,
	};

	ioctx_reply_out(x, 0, &id, sizeof(id));
}

static void get_idlun(struct ioctx *x)
{
	const struct target_info *t = &x->o->d->target->info;
	struct scsi_idlun idlun = {
		.dev_id = (t->id & 0xff) | (t->lun & 0xff) << 8 | (t->channel & 0xff) << 16 |
			  (t->host & 0xff) << 24,
		.host_unique_id = t->unique_id,
	};

	ioctx_reply_out(x, 0, &idlun, sizeof(idlun));
}

/* sg's ABI: 16 entries, whatever the node's queue depth (the first 16 of a deeper queue) */
static void get_request_table(struct ioctx *x)
{
	struct sg_req_info table[SG_MAX_QUEUE];

	cmdq_request_table(x->o, table, SG_MAX_QUEUE);
	ioctx_reply_out(x, 0, table, sizeof(table));
}

/*
 * sg: a 0/1 switch; bsg: the queue depth.  Both are kept: 0, 1 or a depth
 * for v4 writes.  A v3 file's depth is the node's (--queue-depth).
 */
static void set_command_q(struct ioctx *x)
{
	int val;

	if (!get_int(x, &val))
		return;
	if (val < 0 || val > BSGDEV_MAX_DEPTH) {
		ioctx_reply(x, -EINVAL);
		return;
	}
	atomic_store(&x->o->cmd_q, val);
	ioctx_reply(x, 0);
}

/* sg answers these from the device, ENODEV once it is going away */
static bool gone(struct ioctx *x)
{
	if (!atomic_load(&x->o->d->target_gone))
		return false;
	ioctx_reply(x, -ENODEV);
	return true;
}

/*
 * sg passes it to scsi_ioctl(), which passes it to the host's own ioctl or
 * answers EINVAL: no host driver the daemon knows has one, and its
 * argument's size is the host's, so the daemon cannot pass it on.
 */
static void get_transform(struct ioctx *x)
{
	ioctx_reply(x, -EINVAL);
}

/*
 * The sg v4 driver's SG_SET_GET_EXTENDED, of which only the control flag
 * SG_CTL_FLAGM_TAG_FOR_PACK_ID is kept (SG_IORECEIVE and SG_IOABORT by
 * tag); every other field is left as given, as sg ignores what it does not
 * know, and flags read back are 0.
 */
static void set_get_extended(struct ioctx *x)
{
	struct sg_extended_info sei;
	bool tag;

	if (ioctx_fetch(x, &sei, sizeof(sei)) != 1)
		return;
	if ((sei.sei_wr_mask & SG_SEIM_CTL_FLAGS) &&
	    (sei.ctl_flags_wr_mask & SG_CTL_FLAGM_TAG_FOR_PACK_ID))
		atomic_store(&x->o->prefer_tag, !!(sei.ctl_flags & SG_CTL_FLAGM_TAG_FOR_PACK_ID));
	if (sei.sei_rd_mask & SG_SEIM_CTL_FLAGS) {
		tag = atomic_load(&x->o->prefer_tag);
		sei.ctl_flags = (sei.ctl_flags & ~sei.ctl_flags_rd_mask) |
				(tag ? sei.ctl_flags_rd_mask & SG_CTL_FLAGM_TAG_FOR_PACK_ID : 0);
	}
	ioctx_reply_out(x, 0, &sei, sizeof(sei));
}

/* sg: anything it does not know is refused on a file not opened read-write */
static void unknown(struct ioctx *x, unsigned cmd)
{
	bool rw = (x->o->open_flags & O_ACCMODE) == O_RDWR;

	bsgdev_debug(x->o->d, "tid %d: unknown ioctl 0x%x", x->tid, cmd);
	ioctx_reply(x, rw ? -EINVAL : -EPERM);
}

/* The trampolines of the table below, each for one ioctl. */
static void sg_io(struct ioctx *x)
{
	sgio_ioctl(x);
}

static void iosubmit_v4(struct ioctx *x)
{
	sgv4_iosubmit(x, 4);
}

static void iosubmit_v3(struct ioctx *x)
{
	sgv4_iosubmit(x, 3);
}

static void ioreceive_v4(struct ioctx *x)
{
	sgv4_ioreceive(x, 4);
}

static void ioreceive_v3(struct ioctx *x)
{
	sgv4_ioreceive(x, 3);
}

static void set_force_pack_id(struct ioctx *x)
{
	set_flag(x, &x->o->force_pack_id);
}

static void set_keep_orphan(struct ioctx *x)
{
	set_flag(x, &x->o->keep_orphan);
}

/* sg traces its own request queue; the daemon's node has none to trace:
 * sg's answer on a kernel built without block tracing */
static void no_trace(struct ioctx *x)
{
	ioctx_reply(x, -ENOTTY);
}

/* The values the table's getters answer with. */
static int version_num(struct ioctx *x)
{
	(void)x;
	return SCSI_SG_VERSION;
}

static int timeout_user(struct ioctx *x)
{
	return atomic_load(&x->o->timeout_user);
}

static int emulated_host(struct ioctx *x)
{
	return x->o->d->target->info.emulated;
}

static int bus_number(struct ioctx *x)
{
	return x->o->d->target->info.host;
}

static int sg_tablesize(struct ioctx *x)
{
	return x->o->d->target->info.max_segments;
}

static int access_count(struct ioctx *x)
{
	(void)x;
	return 1; /* sg fakes it too */
}

static int max_sectors_bytes(struct ioctx *x)
{
	return bsgdev_max_sectors_bytes(x->o->d); /* BLKSECTGET, sg: bytes, not sectors */
}

static int command_q(struct ioctx *x)
{
	return atomic_load(&x->o->cmd_q);
}

static int pack_id(struct ioctx *x)
{
	return cmdq_pack_id(x->o);
}

static int num_waiting(struct ioctx *x)
{
	return cmdq_num_waiting(x->o);
}

static int keep_orphan(struct ioctx *x)
{
	return atomic_load(&x->o->keep_orphan);
}

static int zero(struct ioctx *x)
{
	(void)x;
	return 0;
}

#define OP_GONE_FAILS 1u /* ENODEV once the device is going away (sg answers from it) */
#define OP_RESULT     2u /* value() is the ioctl's result, not an int copied out */
/*
 * It takes or hands over the file's commands: only from the opener's
 * security context, as read() and write() (sg_check_file_access()).  The
 * credential gate refuses the same list (ioctl_owner_cmds()).
 */
#define OP_OWNER 4u

/*
 * One ioctl: exactly one of call (answers x itself), call_cmd (the same,
 * told the number) or value (the int to answer with).
 */
struct ioctl_op {
	unsigned cmd;
	const char *name; /* OP_OWNER's: for the log */
	void (*call)(struct ioctx *x);
	void (*call_cmd)(struct ioctx *x, unsigned cmd);
	int (*value)(struct ioctx *x);
	unsigned flags;
};

static const struct ioctl_op ops[] = {
	{ SG_IO, .call = sg_io },
	{ SG_IOSUBMIT, "SG_IOSUBMIT", .call = iosubmit_v4, .flags = OP_OWNER },
	{ SG_IOSUBMIT_V3, "SG_IOSUBMIT_V3", .call = iosubmit_v3, .flags = OP_OWNER },
	{ SG_IORECEIVE, "SG_IORECEIVE", .call = ioreceive_v4, .flags = OP_OWNER },
	{ SG_IORECEIVE_V3, "SG_IORECEIVE_V3", .call = ioreceive_v3, .flags = OP_OWNER },
	{ SG_IOABORT, "SG_IOABORT", .call = sgv4_ioabort, .flags = OP_OWNER },
	{ SG_SET_GET_EXTENDED, .call = set_get_extended },
	{ SG_GET_VERSION_NUM, .value = version_num },
	{ SG_SET_TIMEOUT, .call = set_timeout },
	{ SG_GET_TIMEOUT, .value = timeout_user, .flags = OP_RESULT }, /* sg: as the value */
	{ SG_GET_RESERVED_SIZE, .call = get_reserved },
	{ SG_SET_RESERVED_SIZE, .call = set_reserved },
	{ SG_EMULATED_HOST, .value = emulated_host, .flags = OP_GONE_FAILS },
	{ SG_GET_SCSI_ID, .call = get_scsi_id, .flags = OP_GONE_FAILS },
	{ SCSI_IOCTL_GET_IDLUN, .call = get_idlun, .flags = OP_GONE_FAILS },
	{ SCSI_IOCTL_GET_BUS_NUMBER, .value = bus_number, .flags = OP_GONE_FAILS },
	{ SG_GET_TRANSFORM, .call = get_transform, .flags = OP_GONE_FAILS },
	{ SG_SCSI_RESET, .call = midlayer_reset },
	{ SCSI_IOCTL_SEND_COMMAND, .call = midlayer_send_command },
	{ MIDLAYER_PROBE_HOST, .call = midlayer_probe_host },
	{ MIDLAYER_GET_PCI, .call = midlayer_get_pci },
	{ MIDLAYER_START_UNIT, .call_cmd = midlayer_no_arg },
	{ MIDLAYER_STOP_UNIT, .call_cmd = midlayer_no_arg },
	{ MIDLAYER_DOORLOCK, .call_cmd = midlayer_no_arg },
	{ MIDLAYER_DOORUNLOCK, .call_cmd = midlayer_no_arg },
	{ MIDLAYER_CDROMEJECT, .call_cmd = midlayer_no_arg },
	{ MIDLAYER_CDROMCLOSETRAY, .call_cmd = midlayer_no_arg },
	{ BLKTRACESETUP, .call = no_trace },
	{ BLKTRACESTART, .call = no_trace },
	{ BLKTRACESTOP, .call = no_trace },
	{ BLKTRACETEARDOWN, .call = no_trace },
	{ SG_GET_SG_TABLESIZE, .value = sg_tablesize },
	{ SG_GET_ACCESS_COUNT, .value = access_count },
	{ BLKSECTGET, .value = max_sectors_bytes },
	{ SG_GET_COMMAND_Q, .value = command_q },
	{ SG_SET_COMMAND_Q, .call = set_command_q },
	{ SG_SET_FORCE_PACK_ID, .call = set_force_pack_id },
	{ SG_GET_PACK_ID, .value = pack_id },
	{ SG_GET_NUM_WAITING, .value = num_waiting },
	{ SG_GET_REQUEST_TABLE, .call = get_request_table },
	{ SG_SET_KEEP_ORPHAN, .call = set_keep_orphan },
	{ SG_GET_KEEP_ORPHAN, .value = keep_orphan },
	{ SG_SET_FORCE_LOW_DMA, .value = zero, .flags = OP_RESULT }, /* a no-op that never failed */
	{ SG_GET_LOW_DMA, .value = zero },
	{ SG_NEXT_CMD_LEN, .call = set_next_cmd_len },
	{ SG_SET_DEBUG, .call = set_debug },
};

static const struct ioctl_op *find_op(unsigned cmd)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].cmd == cmd)
			return &ops[i];
	return NULL;
}

size_t ioctl_owner_cmds(unsigned *cmds, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].flags & OP_OWNER) {
			if (n < max)
				cmds[n] = ops[i].cmd;
			n++;
		}
	return n;
}

const char *ioctl_owner_name(unsigned cmd)
{
	const struct ioctl_op *op = find_op(cmd);

	return op && (op->flags & OP_OWNER) ? op->name : NULL;
}

/*
 * OP_OWNER: the caller in the opener's context, checked before the call
 * sees anything.  They need the direct-copy path.  true: go on; false:
 * answered.
 */
static bool owner_ok(struct ioctx *x, const struct ioctl_op *op)
{
	struct opener *o = x->o;
	int err = -EINVAL;

	if (!x->direct) {
		if (!atomic_exchange(&o->warned_path, true))
			bsgdev_warn(o->d,
				    "tid %d: %s refused: the sg v4 ioctls need the direct-copy "
				    "path (CAP_SYS_PTRACE over callers)",
				    x->tid, op->name);
	} else {
		err = opener_check_caller(o, x->tid, op->name);
	}
	if (err)
		ioctx_reply(x, err);
	return !err;
}

void ioctl_dispatch(struct ioctx *x, unsigned cmd, unsigned flags)
{
	const struct ioctl_op *op = find_op(cmd);

	if (flags & FUSE_IOCTL_COMPAT) {
		bsgdev_warn(x->o->d,
			    "tid %d: 32-bit caller refused (ioctl 0x%x): use a 64-bit client",
			    x->tid, cmd);
		ioctx_reply(x, -ENOTTY);
		return;
	}
	if (!op) {
		unknown(x, cmd);
		return;
	}
	if ((op->flags & OP_OWNER) && !owner_ok(x, op))
		return;
	if ((op->flags & OP_GONE_FAILS) && gone(x))
		return;
	if (op->call)
		op->call(x);
	else if (op->call_cmd)
		op->call_cmd(x, cmd);
	else if (op->flags & OP_RESULT)
		ioctx_reply(x, op->value(x));
	else
		put_int(x, op->value(x));
}
