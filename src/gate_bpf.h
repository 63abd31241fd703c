/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the credential gate's BPF program (gate.bpf.c) and its loader
 * (gate.c) share: the map's value and the sizes.  Plain C types only: the
 * BPF side includes this without the C library.
 */
#ifndef CUSE_BSG_GATE_BPF_H
#define CUSE_BSG_GATE_BPF_H

#define GATE_NODES_MAX 4096 /* nodes one daemon process serves at once */
#define GATE_IOCTLS    5    /* SG_IOSUBMIT(_V3), SG_IORECEIVE(_V3), SG_IOABORT */
#define GATE_MINORBITS 20   /* the kernel's dev_t: MKDEV(major, minor) */
#define GATE_MAJORS    4096 /* char majors the kernel's dev_t can hold */

/* A node's entry: calls on its files the gate refused. */
struct gate_count {
	unsigned long long refused;
};

#define GATE_MAY_READ 4 /* the kernel's MAY_READ, as file_permission's mask has it */

/* One refusal, for the daemon's log (the refusals ring). */
struct gate_refusal {
	unsigned int dev;  /* the node's, as the nodes map's key */
	unsigned int tgid; /* the caller, in the initial pid namespace */
	unsigned int tid;
	unsigned int what;  /* file_permission's mask, or the ioctl's number */
	unsigned int ioctl; /* what is an ioctl's number */
	char comm[16];
};

#endif /* CUSE_BSG_GATE_BPF_H */
