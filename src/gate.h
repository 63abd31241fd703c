/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The credential gate: kernel sg's own test that read(), write() and the
 * asynchronous sg v4 ioctls come from the security context that opened
 * the file (filp->f_cred == current_real_cred()), made in the kernel by one
 * of two BPF programs:
 *  - the witness (witness.bpf.c): tracing programs at CUSE's own entry
 *    points make the test in the caller's context and leave the verdict
 *    for the daemon, which refuses (verdict.h).  Needs BTF and BPF
 *    trampolines, no LSM; no other file of the machine pays for it.
 *  - the LSM gate (gate.bpf.c): BPF LSM programs refuse the call before it
 *    reaches the daemon.  Needs 'bpf' in the kernel's active LSMs; runs on
 *    every read() and write() of the machine.
 * One gate serves a whole process: each node arms its device number before
 * it answers its first open, and disarms it once its session is over.
 *
 * Where neither can load (no BTF, lockdown, no privilege), the daemon
 * checks each call itself from /proc (ident.h): the procfs mode.
 * Thread-safe: the maps are the kernel's.
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
	GATE_AUTO,    /* the witness if it loads and proves live, else the gate, else procfs */
	GATE_KERNEL,  /* the BPF LSM gate, or the daemon does not start */
	GATE_PROCFS,  /* the /proc check alone */
	GATE_WITNESS, /* the witness, or the daemon does not start */
};

/* Where sg's test is made for the calls on armed nodes. */
enum gate_kind {
	GATE_NONE, /* nowhere: the daemon's /proc check */
	GATE_LSM,  /* the BPF LSM gate refuses in the kernel; a refused call never reaches us */
	GATE_SEEN, /* the witness sees each call's entry; the daemon refuses (verdict.h) */
};

struct gate;
struct verdicts;

/*
 * The gate for mode, loaded and attached: NULL in *ret for procfs, chosen
 * or fallen back to (auto: the reason in why, for the log).  -errno with
 * the reason in why only where mode asks for one program and it cannot
 * load and attach.  ioctls: the n numbers of the calls that take or hand
 * over a file's commands (the ioctl table's), which the LSM gate refuses.
 */
int gate_new(enum gate_mode mode, const unsigned *ioctls, size_t n, struct gate **ret, char *why,
	     size_t why_len);

/*
 * What the daemon does after the loads: 0 to go on with *kind, or -errno
 * to refuse to start.  Pure: mode and each load's result (0 or -errno; a
 * program not tried: 1) in, the choice out.
 */
int gate_choose(enum gate_mode mode, int witness_err, int lsm_err, enum gate_kind *kind);

/*
 * Check the files of device dev (st_rdev of the node).  Before the node
 * answers its first open.  0 or -errno (the map full: -E2BIG).  Each call
 * the LSM gate refuses on them is logged under the node's name (at most
 * eight warnings a second a node, the rest at debug), by a thread the first
 * arm starts: after any fork.
 */
int gate_arm(struct gate *g, dev_t dev, const char *name);

/* No longer: the node is gone, its number free for another driver. */
void gate_disarm(struct gate *g, dev_t dev);

/* Calls on dev's files the LSM gate refused so far, its own proof's not counted. */
uint64_t gate_refused(struct gate *g, dev_t dev);

/*
 * Prove that the gate is live, once a process: the file fd of armed node
 * dev, opened by this process, read() from a forked child must be refused
 * with EPERM: by the kernel with *reads (the node's count of read requests)
 * unchanged and the gate's count for dev one more (the LSM gate), or by the
 * daemon on the witness's verdict.  In auto mode a witness that does not
 * prove live gives way to the LSM gate, armed again for every node, and that
 * is proved in turn.  0: proven (later calls need no /proc check), with
 * the proof's account (its child's pid) in why, or -errno with the reason.
 */
int gate_prove(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
	       size_t why_len);

/* Proven live: what checks calls on armed nodes (GATE_NONE: not live, or no gate). */
enum gate_kind gate_live(const struct gate *g);
/* Loaded, proven or not (GATE_NONE: no gate, or unloaded after a failed proof). */
enum gate_kind gate_loaded(const struct gate *g);

/* The witness's verdicts (verdict.h), for the nodes to read; NULL for no gate. */
struct verdicts *gate_verdicts(struct gate *g);

/* The words for the log and stats: "witness", "kernel" or "procfs". */
const char *gate_describe(const struct gate *g);
/* The same, and where the test is made, for the start-up line. */
const char *gate_describe_long(const struct gate *g);

/* Detach and unload.  NULL is fine. */
void gate_free(struct gate *g);

#endif /* CUSE_BSG_GATE_H */
