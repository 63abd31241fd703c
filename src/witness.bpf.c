// SPDX-License-Identifier: GPL-2.0-only
/*
 * The witness: kernel sg's sg_check_file_access() made at CUSE's own entry
 * points, for the daemon's nodes only.  fentry programs on cuse_read_iter(),
 * cuse_write_iter() and cuse_file_ioctl() run in the calling task's context
 * before the call becomes a FUSE request; they compare the file's f_cred
 * with the task's real_cred, the same one pointer compare as sg, and leave
 * the verdict in the calling thread's slot (gate_bpf.h), with the FUSE
 * file's fh.  fexit programs on the same functions take it back when the
 * call returns, so that a verdict lives only as long as its call.  They
 * refuse nothing: the daemon reads the slot when the request arrives and
 * answers EPERM itself (gate.h).  No other file of the machine runs them.
 *
 * The types are the few fields read (here and in gate_bpf.h), relocated
 * against the running kernel's BTF and the fuse module's (CO-RE).
 */
#include <linux/bpf.h>
#include <linux/types.h>

/* after the kernel's types, which they use */
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gate_bpf.h"
#include "verdict_bpf.h"

struct kiocb {
	struct file *ki_filp;
} __attribute__((preserve_access_index));

/* the fuse module's open file, a CUSE file's private_data */
struct fuse_file {
	__u64 fh;
} __attribute__((preserve_access_index));

/* the verdicts, one slot a thread (its id modulo the size); mapped by the daemon */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, WITNESS_SLOTS);
	__type(key, __u32);
	__type(value, struct witness_slot);
} slots SEC(".maps");

/* the ioctls that hand over commands, set by the daemon before the load */
const volatile __u32 owner_ioctls[GATE_IOCTLS] = { 0 };

/* the daemon's pid namespace: thread ids as its requests give them */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* The calling thread's id in the daemon's pid namespace; 0: not in it. */
static __always_inline __u32 caller_tid(void)
{
	struct bpf_pidns_info ns;

	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return 0;
	return ns.pid;
}

/* A file of an armed node: its slot's tag for this call, else 0. */
static __always_inline __u64 witness(struct file *file, __u32 *tid)
{
	__u32 dev;

	if (!armed_node(file, &dev))
		return 0;
	*tid = caller_tid();
	if (!*tid)
		return 0; /* the request's pid is 0 too: the daemon checks from /proc */
	return (__u64)*tid << 32 | (same_context(file) ? WITNESS_SAME : WITNESS_OTHER);
}

static __always_inline void enter(struct file *file)
{
	struct witness_slot *s;
	struct fuse_file *ff;
	__u32 tid = 0, key;
	__u64 tag = witness(file, &tid), fh;

	if (!tag)
		return;
	key = tid & (WITNESS_SLOTS - 1);
	s = bpf_map_lookup_elem(&slots, &key);
	/* private_data is untyped to the verifier: read through the helper */
	ff = file->private_data;
	if (!s || bpf_core_read(&fh, sizeof(fh), &ff->fh))
		return;
	s->fh = fh;
	/* the tag last, in one exchange: a reader that sees it sees this fh */
	__sync_lock_test_and_set(&s->tag, tag);
}

/* The call returns: its verdict goes, unless another thread's took the slot. */
static __always_inline void leave(struct file *file)
{
	struct witness_slot *s;
	__u32 tid = 0, key;
	__u64 tag = witness(file, &tid);

	if (!tag)
		return;
	key = tid & (WITNESS_SLOTS - 1);
	s = bpf_map_lookup_elem(&slots, &key);
	if (s)
		__sync_val_compare_and_swap(&s->tag, tag, 0);
}

SEC("fentry/cuse_read_iter")
int BPF_PROG(witness_read, struct kiocb *kiocb)
{
	enter(kiocb->ki_filp);
	return 0;
}

SEC("fexit/cuse_read_iter")
int BPF_PROG(witness_read_done, struct kiocb *kiocb)
{
	leave(kiocb->ki_filp);
	return 0;
}

SEC("fentry/cuse_write_iter")
int BPF_PROG(witness_write, struct kiocb *kiocb)
{
	enter(kiocb->ki_filp);
	return 0;
}

SEC("fexit/cuse_write_iter")
int BPF_PROG(witness_write_done, struct kiocb *kiocb)
{
	leave(kiocb->ki_filp);
	return 0;
}

/* An ioctl the daemon checks (the table's, set before the load): SG_IO and the rest pass by. */
static __always_inline int checked(unsigned int cmd)
{
	for (int i = 0; i < GATE_IOCTLS; i++)
		if (cmd == owner_ioctls[i])
			return 1;
	return 0;
}

SEC("fentry/cuse_file_ioctl")
int BPF_PROG(witness_ioctl, struct file *file, unsigned int cmd)
{
	if (checked(cmd))
		enter(file);
	return 0;
}

SEC("fexit/cuse_file_ioctl")
int BPF_PROG(witness_ioctl_done, struct file *file, unsigned int cmd)
{
	if (checked(cmd))
		leave(file);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
