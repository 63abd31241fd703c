/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control node of cuse_bsg --control: what a client needs to bind an
 * open file of it to a device.  Installed as <cuse_bsg/control.h>.
 *
 *	int ctl = open(CUSE_BSG_CONTROL_PATH, O_RDWR);
 *	int dev = open("/dev/sda", O_RDONLY);
 *	ioctl(ctl, BSG_IOC_ADD, dev);	0, or -1 with errno EBUSY, ENODEV,
 *					EINVAL, ENOTBLK or EPERM
 *	close(dev);			the binding keeps its own reference
 *
 * From then on ctl is used as any sg or bsg node: SG_IO, write()/read(),
 * poll() and the sg ioctls, with the rights of the descriptor given.
 */
#ifndef CUSE_BSG_CONTROL_PUBLIC_H
#define CUSE_BSG_CONTROL_PUBLIC_H

/* The control node's default path (cuse_bsg --control without --name). */
#define CUSE_BSG_CONTROL_PATH "/dev/bsg-control"

/*
 * Bind the file to the device the descriptor given is open on: a whole SCSI
 * disk, an sg node or a bsg node.  The argument is the descriptor number
 * itself, passed by value (not a pointer): the 2004 bsg driver's number and
 * calling convention.
 */
#define BSG_IOC_ADD 0x8900

#endif /* CUSE_BSG_CONTROL_PUBLIC_H */
