// SPDX-License-Identifier: GPL-2.0-only
/*
 * One switch, one small helper per ioctl.  Values and errnos follow
 * sg_ioctl_common() in drivers/scsi/sg.c.  None of these ioctl numbers
 * carries a size, so each argument is fetched or stored through ioctx.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/blktrace_api.h>
#include <linux/fs.h>
#include <scsi/scsi.h>
#include <string.h>

#include "async.h"
#include "daemon.h"
#include "ioctl.h"
#include "ioctx.h"
#include "log.h"
#include "midlayer.h"
#include "opener.h"
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
	uint32_t max = daemon_max_sectors_bytes(x->o->d);
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
	uint32_t max = daemon_max_sectors_bytes(x->o->d);
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

	async_request_table(x->o, table, SG_MAX_QUEUE);
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
	if (val < 0 || val > DAEMON_MAX_DEPTH) {
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
	if (!gone(x))
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

	daemon_debug(x->o->d, "tid %d: unknown ioctl 0x%x", x->tid, cmd);
	ioctx_reply(x, rw ? -EINVAL : -EPERM);
}

void ioctl_dispatch(struct ioctx *x, unsigned cmd, unsigned flags)
{
	const struct target_info *t = &x->o->d->target->info;

	if (flags & FUSE_IOCTL_COMPAT) {
		daemon_warn(x->o->d,
			    "tid %d: 32-bit caller refused (ioctl 0x%x): use a 64-bit client",
			    x->tid, cmd);
		ioctx_reply(x, -ENOTTY);
		return;
	}
	switch (cmd) {
	case SG_IO:
		sgio_ioctl(x);
		break;
	case SG_IOSUBMIT:
		async_iosubmit(x, 4);
		break;
	case SG_IOSUBMIT_V3:
		async_iosubmit(x, 3);
		break;
	case SG_IORECEIVE:
		async_ioreceive(x, 4);
		break;
	case SG_IORECEIVE_V3:
		async_ioreceive(x, 3);
		break;
	case SG_IOABORT:
		async_ioabort(x);
		break;
	case SG_SET_GET_EXTENDED:
		set_get_extended(x);
		break;
	case SG_GET_VERSION_NUM:
		put_int(x, SCSI_SG_VERSION);
		break;
	case SG_SET_TIMEOUT:
		set_timeout(x);
		break;
	case SG_GET_TIMEOUT: /* sg returns it as the ioctl's value */
		ioctx_reply(x, atomic_load(&x->o->timeout_user));
		break;
	case SG_GET_RESERVED_SIZE:
		get_reserved(x);
		break;
	case SG_SET_RESERVED_SIZE:
		set_reserved(x);
		break;
	case SG_EMULATED_HOST:
		if (!gone(x))
			put_int(x, t->emulated);
		break;
	case SG_GET_SCSI_ID:
		if (!gone(x))
			get_scsi_id(x);
		break;
	case SCSI_IOCTL_GET_IDLUN:
		if (!gone(x))
			get_idlun(x);
		break;
	case SCSI_IOCTL_GET_BUS_NUMBER:
		if (!gone(x))
			put_int(x, t->host);
		break;
	case SG_GET_TRANSFORM:
		get_transform(x);
		break;
	case SG_SCSI_RESET:
		midlayer_reset(x);
		break;
	case SCSI_IOCTL_SEND_COMMAND:
		midlayer_send_command(x);
		break;
	case MIDLAYER_PROBE_HOST:
		midlayer_probe_host(x);
		break;
	case MIDLAYER_GET_PCI:
		midlayer_get_pci(x);
		break;
	case MIDLAYER_START_UNIT:
	case MIDLAYER_STOP_UNIT:
	case MIDLAYER_DOORLOCK:
	case MIDLAYER_DOORUNLOCK:
	case MIDLAYER_CDROMEJECT:
	case MIDLAYER_CDROMCLOSETRAY:
		midlayer_no_arg(x, cmd);
		break;
	case BLKTRACESETUP:
	case BLKTRACESTART:
	case BLKTRACESTOP:
	case BLKTRACETEARDOWN:
		/* sg traces its own request queue; the daemon's node has none to
		 * trace: sg's answer on a kernel built without block tracing */
		ioctx_reply(x, -ENOTTY);
		break;
	case SG_GET_SG_TABLESIZE:
		put_int(x, t->max_segments);
		break;
	case SG_GET_ACCESS_COUNT:
		put_int(x, 1); /* sg fakes it too */
		break;
	case BLKSECTGET: /* sg: bytes, not sectors */
		put_int(x, daemon_max_sectors_bytes(x->o->d));
		break;
	case SG_GET_COMMAND_Q:
		put_int(x, atomic_load(&x->o->cmd_q));
		break;
	case SG_SET_COMMAND_Q:
		set_command_q(x);
		break;
	case SG_SET_FORCE_PACK_ID:
		set_flag(x, &x->o->force_pack_id);
		break;
	case SG_GET_PACK_ID:
		put_int(x, async_pack_id(x->o));
		break;
	case SG_GET_NUM_WAITING:
		put_int(x, async_num_waiting(x->o));
		break;
	case SG_GET_REQUEST_TABLE:
		get_request_table(x);
		break;
	case SG_SET_KEEP_ORPHAN:
		set_flag(x, &x->o->keep_orphan);
		break;
	case SG_GET_KEEP_ORPHAN:
		put_int(x, atomic_load(&x->o->keep_orphan));
		break;
	case SG_SET_FORCE_LOW_DMA: /* a no-op in sg that never failed */
		ioctx_reply(x, 0);
		break;
	case SG_GET_LOW_DMA:
		put_int(x, 0);
		break;
	case SG_NEXT_CMD_LEN:
		set_next_cmd_len(x);
		break;
	case SG_SET_DEBUG:
		set_debug(x);
		break;
	default:
		unknown(x, cmd);
		break;
	}
}
