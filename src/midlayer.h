/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The SCSI mid-layer's ioctls that sg passes on to scsi_ioctl() and that
 * only the device's driver can answer: SG_SCSI_RESET, the legacy
 * SCSI_IOCTL_SEND_COMMAND, SCSI_IOCTL_PROBE_HOST, SCSI_IOCTL_GET_PCI and
 * the command ioctls without an argument (SCSI_IOCTL_START_UNIT, STOP_UNIT,
 * DOORLOCK, DOORUNLOCK, CDROMEJECT, CDROMCLOSETRAY).
 * SCSI_IOCTL_TEST_UNIT_READY (2) never reaches a driver: it is FIGETBSZ to
 * the kernel's VFS, which answers it first.
 *
 * Each is checked as the kernel checks it, on the caller, then issued on a
 * descriptor of the target's own: its answer is the target's.  A bsg
 * target's node takes none of them, so the node answers what bsg_ioctl()
 * does.  A call moves: the libfuse worker (checks, copies in) -> a pool
 * worker (the ioctl, which may take as long as the device) -> the elastic
 * pool for the copy out, as SG_IO's.  Like the kernel's, these calls are
 * not interrupted by a signal.
 */
#ifndef CUSE_BSG_MIDLAYER_H
#define CUSE_BSG_MIDLAYER_H

struct ioctx;

/* Missing from glibc's headers; values from the kernel's scsi_ioctl.h and cdrom.h. */
#define MIDLAYER_START_UNIT	5
#define MIDLAYER_STOP_UNIT	6
#define MIDLAYER_DOORLOCK	0x5380
#define MIDLAYER_DOORUNLOCK	0x5381
#define MIDLAYER_PROBE_HOST	0x5385
#define MIDLAYER_GET_PCI	0x5387
#define MIDLAYER_CDROMEJECT	0x5309
#define MIDLAYER_CDROMCLOSETRAY 0x5319

/* Each answers the call, now or later. */

/* SG_SCSI_RESET, as scsi_ioctl_reset(): the caller needs CAP_SYS_ADMIN and CAP_SYS_RAWIO. */
void midlayer_reset(struct ioctx *x);

/* SCSI_IOCTL_SEND_COMMAND, as sg_scsi_ioctl(): the command passes the access policy. */
void midlayer_send_command(struct ioctx *x);

/* SCSI_IOCTL_PROBE_HOST: the host's description, as ioctl_probe() copies it. */
void midlayer_probe_host(struct ioctx *x);

/* SCSI_IOCTL_GET_PCI: the host's device name, on a file open read-write (sg's rule). */
void midlayer_get_pci(struct ioctx *x);

/* A command ioctl without an argument (the list above), on a file open read-write. */
void midlayer_no_arg(struct ioctx *x, unsigned cmd);

#endif /* CUSE_BSG_MIDLAYER_H */
