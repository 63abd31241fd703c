// SPDX-License-Identifier: GPL-2.0-only
/*
 * make bench-gate's baseline: BPF LSM programs on the credential gate's two
 * hooks that decide nothing.  What a read() pays with these loaded is the
 * hook's own entry (the BPF trampoline); the gate's program costs the rest.
 */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct file;

SEC("lsm/file_permission")
int BPF_PROG(hook_rw, struct file *file, int mask, int ret)
{
	return ret;
}

SEC("lsm/file_ioctl")
int BPF_PROG(hook_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return ret;
}

char LICENSE[] SEC("license") = "GPL";
