/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The credential gate: kernel sg's own test that read(), write() and the
 * asynchronous sg v4 ioctls come from the security context that opened
 * the file (filp->f_cred == current_real_cred()), done in the kernel by a
 * BPF LSM program (gate.bpf.c) before the call reaches the daemon.  One
 * gate serves a whole process: each node arms its device number before it
 * answers its first open, and disarms it once its session is over.
 *
 * Where the program cannot load (no BPF LSM in the kernel's active list, no
 * BTF, lockdown, no privilege), the daemon checks each call itself from
 * /proc (uaccess.h): the procfs mode.  Thread-safe: the map is the kernel's.
 */
#ifndef CUSE_BSG_GATE_H
#define CUSE_BSG_GATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --cred-check: which check the daemon is to use. */
enum gate_mode {
	GATE_AUTO,   /* the gate if it loads and proves live, else procfs */
	GATE_KERNEL, /* the gate, or the daemon does not start */
	GATE_PROCFS, /* the /proc check alone */
};

struct gate;

/*
 * The gate for mode: NULL in *ret for procfs, chosen or fallen back to
 * (auto: the reason in why, for the log).  -errno with the reason in why
 * only where mode is kernel and the program cannot load and attach.
 */
int gate_new(enum gate_mode mode, struct gate **ret, char *why, size_t why_len);

/*
 * What the daemon does after the load: 0 to go on (*procfs: with the /proc
 * check), or -errno to refuse to start.  Pure: mode and the load's result
 * (0 or -errno) in, the choice out.
 */
int gate_choose(enum gate_mode mode, int load_err, bool *procfs);

/*
 * Check the files of device dev (st_rdev of the node).  Before the node
 * answers its first open.  0 or -errno (the map full: -E2BIG).  Each call
 * the gate refuses on them is logged under the node's name (at most eight
 * warnings a second a node, the rest at debug), by a thread the first arm
 * starts: after any fork.
 */
int gate_arm(struct gate *g, dev_t dev, const char *name);

/* No longer: the node is gone, its number free for another driver. */
void gate_disarm(struct gate *g, dev_t dev);

/* Calls on dev's files the gate refused so far. */
uint64_t gate_refused(const struct gate *g, dev_t dev);

/*
 * Prove that the gate is live, once a process: the file fd of armed node
 * dev, opened by this process, read() from a forked child must be refused
 * with EPERM by the kernel, *reads (the node's count of read requests)
 * unchanged, and the gate's count for dev one more.  0: proven (later
 * calls need no /proc check), or -errno with the reason in why.
 */
int gate_prove(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
	       size_t why_len);

/* Proven live: calls on armed nodes need no other check of the caller's context. */
bool gate_live(const struct gate *g);

/* The words for the log and stats: "kernel (BPF LSM)" or "procfs". */
const char *gate_describe(const struct gate *g);

/* Detach and unload.  NULL is fine. */
void gate_free(struct gate *g);

#endif /* CUSE_BSG_GATE_H */
