// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate: kernel sg's sg_check_file_access() for the daemon's
 * nodes, run in the kernel as a BPF LSM program.  A read(), write() (every
 * path through rw_verify_area(): readv, pread, aio, io_uring, splice) or
 * one of the asynchronous sg v4 ioctls on a file of a node in the nodes
 * map is refused with EPERM when the file's f_cred is not the calling
 * task's real_cred: the same one pointer compare as sg.  A refused call
 * never reaches the daemon; the map's value counts it.  One copy serves
 * every daemon of the machine (peers.h): the map holds all their nodes.
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

/*
 * Each refusal, for the daemon whose node it is to log (the call never
 * reaches it): the programs are shared by every daemon (peers.h), each of
 * which puts a ring of its own here under its pid, the owner of its nodes.
 */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GATE_RING_BYTES);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, GATE_DAEMONS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* the ioctls checked, set by the daemon before the load (scsi.h's numbers) */
const volatile __u32 gated_ioctls[GATE_IOCTLS] = { 0 };

/* Tell the node's daemon; a full ring, or none, loses the line, never the refusal. */
static __always_inline void report(__u32 owner, __u32 dev, __u32 what, int ioctl)
{
	void *ring = bpf_map_lookup_elem(&rings, &owner);
	struct gate_refusal *r;
	__u64 id = bpf_get_current_pid_tgid();

	if (!ring)
		return;
	r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);
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
	report(c->owner, dev, what, ioctl);
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
