/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the credential gate's BPF programs (gate.bpf.c, witness.bpf.c) and
 * their loader (gate.c) share: the map's value and the sizes.  Plain C
 * types only: the BPF side includes this without the C library.  For the
 * programs alone, the kernel's types they read and the nodes they check.
 */
#ifndef CUSE_BSG_GATE_BPF_H
#define CUSE_BSG_GATE_BPF_H

#define GATE_NODES_MAX	4096	    /* nodes the daemons sharing a gate serve at once */
#define GATE_DAEMONS	1024	    /* daemons sharing the LSM gate, each with a ring */
#define GATE_RING_BYTES (64 * 1024) /* a daemon's ring of refusals */
#define GATE_IOCTLS	5	    /* SG_IOSUBMIT(_V3), SG_IORECEIVE(_V3), SG_IOABORT */
#define GATE_MINORBITS	20	    /* the kernel's dev_t: MKDEV(major, minor) */
#define GATE_MAJORS	4096	    /* char majors the kernel's dev_t can hold */

/* A node's entry: calls on its files the gate refused, and whose node it is. */
struct gate_count {
	unsigned long long refused;
	unsigned int owner; /* the daemon that armed it: its pid (the sweep; the LSM's ring) */
	unsigned int pad;
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

#ifdef __bpf__
/* the kernel's types: the few fields read, relocated against its BTF (CO-RE) */
struct cred;

struct inode {
	unsigned short i_mode;
	__u32 i_rdev; /* dev_t: the kernel's MKDEV(major, minor) */
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
	const struct cred *f_cred;
	void *private_data;
} __attribute__((preserve_access_index));

struct task_struct {
	const struct cred *real_cred;
} __attribute__((preserve_access_index));

#define S_IFMT	0170000
#define S_IFCHR 0020000

/* the armed nodes: the kernel's device number -> its count of refused calls */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_NODES_MAX);
	__type(key, __u32);
	__type(value, struct gate_count);
} nodes SEC(".maps");

/*
 * Armed nodes a major, kept by the daemon through the mapped .bss (shared by
 * its forked processes): a file of a major with none (a regular file's 0,
 * /dev/null, /dev/cuse, a disk) returns before the map's hash lookup.
 */
__u32 armed_majors[GATE_MAJORS] = { 0 };

/*
 * file's node entry, if it is a file of an armed node: a character device
 * (a block device may have a node's number: char and block dynamic majors
 * come from the same range) whose number is in the map.  Else NULL.
 */
static __always_inline struct gate_count *armed_node(struct file *file, __u32 *dev)
{
	struct inode *inode = file->f_inode;

	*dev = inode->i_rdev;
	if (!armed_majors[(*dev >> GATE_MINORBITS) & (GATE_MAJORS - 1)])
		return 0;
	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return 0;
	return bpf_map_lookup_elem(&nodes, dev);
}

/* The one pointer compare of sg's sg_check_file_access(). */
static __always_inline int same_context(struct file *file)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return file->f_cred == task->real_cred;
}
#endif /* __bpf__ */

#endif /* CUSE_BSG_GATE_BPF_H */
