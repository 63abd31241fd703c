/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The witness's verdicts as the daemon reads them (gate.h): for one request,
 * did the kernel see its call come from the opener's security context?
 * The slots are the witness program's array, mapped read-only by the gate;
 * a reader needs no lock and makes no system call.  Any thread.
 */
#ifndef CUSE_BSG_VERDICT_H
#define CUSE_BSG_VERDICT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

struct witness_slot;

/* What the witness saw of one request's call. */
enum verdict {
	VERDICT_UNSEEN, /* no verdict for that thread and file: check from /proc */
	VERDICT_SAME,	/* the opener's security context: serve it */
	VERDICT_OTHER,	/* another: refuse it with EPERM, as sg */
	VERDICT_PROOF,	/* the gate's own proof (proof_pid): refuse it, count and log nothing */
};

/* One process's verdicts: the gate's, which the nodes read. */
struct verdicts {
	const struct witness_slot *_Atomic slots; /* WITNESS_SLOTS of them; NULL: none */
	atomic_int proof_pid;			  /* the gate's proving child, while it runs */
	atomic_uint proof_seen;			  /* its calls refused on a verdict */
};

/*
 * Pure: the verdict slots hold for thread tid's call on the file of handle
 * fh; never VERDICT_PROOF.  A verdict counts only where its slot's tag
 * names tid and, read again after fh, is unchanged.
 */
enum verdict verdict_of(const struct witness_slot *slots, pid_t tid, uint64_t fh);

/* The same from v (NULL: none), the proof's child told apart and counted. */
enum verdict verdicts_read(struct verdicts *v, pid_t tid, uint64_t fh);

#endif /* CUSE_BSG_VERDICT_H */
