/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the witness's BPF program (witness.bpf.c) and the daemon's reader of
 * its verdicts (verdict.c) share: sg's verdict on a call, left in a slot of
 * a memory-mapped array indexed by the calling thread's id.  The program
 * writes fh, then the tag in one exchange; it clears the tag when the call
 * returns.  Plain C types only: the BPF side includes this without the C
 * library.
 */
#ifndef CUSE_BSG_VERDICT_BPF_H
#define CUSE_BSG_VERDICT_BPF_H

#define WITNESS_SLOTS 16384 /* a power of two */
#define WITNESS_SAME  1u    /* f_cred == the caller's real_cred: sg serves it */
#define WITNESS_OTHER 2u    /* a different security context: sg refuses it */

struct witness_slot {
	unsigned long long fh;	/* the FUSE file's handle: the daemon's for the open file */
	unsigned long long tag; /* thread id << 32 | WITNESS_SAME or _OTHER; 0: none */
};

#endif /* CUSE_BSG_VERDICT_BPF_H */
