// SPDX-License-Identifier: GPL-2.0-only
/*
 * The witness's verdicts as the daemon reads them (verdict.h).  The program
 * (witness.bpf.c) writes a slot's fh, then its tag in one exchange, and
 * takes the tag back when the call returns; two threads whose ids share a
 * slot may leave one's fh with the other's tag, which the reader takes for
 * no verdict unless the fh is the request's own.
 */
#include <stddef.h>

#include "verdict.h"
#include "verdict_bpf.h"

enum verdict verdict_of(const struct witness_slot *slots, pid_t tid, uint64_t fh)
{
	const struct witness_slot *s;
	uint64_t tag, f;

	if (!slots || tid <= 0)
		return VERDICT_UNSEEN;
	s = &slots[(unsigned)tid & (WITNESS_SLOTS - 1)];
	tag = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
	if (tag >> 32 != (uint64_t)tid)
		return VERDICT_UNSEEN;
	f = __atomic_load_n(&s->fh, __ATOMIC_ACQUIRE);
	/* the tag again: the fh read is the one its writer left with it */
	if (__atomic_load_n(&s->tag, __ATOMIC_ACQUIRE) != tag || f != fh)
		return VERDICT_UNSEEN;
	switch (tag & 3) {
	case WITNESS_SAME:
		return VERDICT_SAME;
	case WITNESS_OTHER:
		return VERDICT_OTHER;
	default:
		return VERDICT_UNSEEN;
	}
}

enum verdict verdicts_read(struct verdicts *v, pid_t tid, uint64_t fh)
{
	enum verdict r = verdict_of(v ? atomic_load(&v->slots) : NULL, tid, fh);

	if (r != VERDICT_OTHER || tid != atomic_load(&v->proof_pid))
		return r;
	atomic_fetch_add(&v->proof_seen, 1);
	return VERDICT_PROOF;
}
