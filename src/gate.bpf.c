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
 * The types are the few fields read (gate_bpf.h), relocated against the
 * running kernel's BTF (CO-RE): nothing here depends on the build machine's
 * kernel.
 */
#include <linux/bpf.h>
#include <linux/types.h>

/* after the kernel's types, which they use */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gate_bpf.h"

#define EPERM 1

/* each refusal, for the daemon to log: the call never reaches it */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} refusals SEC(".maps");

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
	struct gate_count *c;
	__u32 dev;

	c = armed_node(file, &dev);
	if (!c || same_context(file))
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
