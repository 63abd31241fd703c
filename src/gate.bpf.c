// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate: kernel sg's sg_check_file_access() for the daemon's
 * nodes, run in the kernel as a BPF LSM program.  A read(), write() (every
 * path through rw_verify_area(): readv, pread, aio, io_uring, splice) or
 * one of the asynchronous sg v4 ioctls on a file of a node in the nodes
 * map is refused with EPERM when the file's f_cred is not the calling
 * task's real_cred: the same one pointer compare as sg.  A refused call
 * never reaches the daemon; the map's value counts it.
 *
 * The types are the few fields read, relocated against the running
 * kernel's BTF (CO-RE): nothing here depends on the build machine's kernel.
 */
#include <linux/bpf.h>
#include <linux/types.h>

/* after the kernel's types, which they use */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gate_bpf.h"

#define EPERM 1

struct cred;

struct inode {
	unsigned short i_mode;
	__u32 i_rdev; /* dev_t: the kernel's MKDEV(major, minor) */
} __attribute__((preserve_access_index));

#define S_IFMT	0170000
#define S_IFCHR 0020000

struct file {
	struct inode *f_inode;
	const struct cred *f_cred;
} __attribute__((preserve_access_index));

struct task_struct {
	const struct cred *real_cred;
} __attribute__((preserve_access_index));

/* the node's kernel device number -> its count of refused calls */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GATE_NODES_MAX);
	__type(key, __u32);
	__type(value, struct gate_count);
} nodes SEC(".maps");

/* each refusal, for the daemon to log: the call never reaches it */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} refusals SEC(".maps");

/*
 * Armed nodes a major, kept by the daemon through the mapped .bss (shared by
 * its forked processes): a file of a major with none (a regular file's 0,
 * /dev/null, /dev/cuse, a disk) returns before the map's hash lookup.
 */
__u32 armed_majors[GATE_MAJORS] = { 0 };

/* the ioctls checked, set by the daemon before the load (scsi.h's numbers) */
const volatile __u32 gated_ioctls[GATE_IOCTLS] = { 0 };

/* Tell the daemon; a full ring loses the line, never the refusal. */
static __always_inline void report(__u32 dev, __u32 what, int ioctl)
{
	struct gate_refusal *r = bpf_ringbuf_reserve(&refusals, sizeof(*r), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!r)
		return;
	r->dev = dev;
	r->tgid = id >> 32;
	r->tid = (__u32)id;
	r->what = what;
	r->ioctl = ioctl;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, 0);
}

static __always_inline int check(struct file *file, __u32 what, int ioctl)
{
	struct inode *inode = file->f_inode;
	__u32 dev = inode->i_rdev;
	struct task_struct *task;
	struct gate_count *c;

	if (!armed_majors[(dev >> GATE_MINORBITS) & (GATE_MAJORS - 1)])
		return 0;
	/* a block device may have a node's number: char and block majors are
	 * allocated from the same range */
	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return 0;
	c = bpf_map_lookup_elem(&nodes, &dev);
	if (!c)
		return 0;
	task = bpf_get_current_task_btf();
	if (file->f_cred == task->real_cred)
		return 0;
	__sync_fetch_and_add(&c->refused, 1);
	report(dev, what, ioctl);
	return -EPERM;
}

SEC("lsm/file_permission")
int BPF_PROG(gate_rw, struct file *file, int mask, int ret)
{
	if (ret)
		return ret;
	return check(file, mask, 0);
}

SEC("lsm/file_ioctl")
int BPF_PROG(gate_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	for (int i = 0; i < GATE_IOCTLS; i++)
		if (cmd == gated_ioctls[i])
			return check(file, cmd, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
