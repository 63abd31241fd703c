// SPDX-License-Identifier: GPL-2.0-only
/*
 * verdict.c: the witness's verdicts, read as the daemon reads them.  The
 * slots are written here as witness.bpf.c writes them: fh, then the tag,
 * at a call's entry; the tag taken back, if still its own, when the call
 * returns.  That the program writes them so in the kernel, and that the
 * daemon refuses on them, is the VM suites' (tests/vm/security.sh,
 * --cred-check=witness).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <string.h>

#include "verdict.h"
#include "verdict_bpf.h"

TestSuite(verdict, .timeout = 10);

static struct witness_slot slots[WITNESS_SLOTS];

static uint64_t tag_of(pid_t tid, unsigned what)
{
	return (uint64_t)tid << 32 | what;
}

static void call_enters(pid_t tid, uint64_t fh, unsigned what)
{
	struct witness_slot *s = &slots[(unsigned)tid & (WITNESS_SLOTS - 1)];

	s->fh = fh;
	__atomic_exchange_n(&s->tag, tag_of(tid, what), __ATOMIC_SEQ_CST);
}

static void call_returns(pid_t tid, unsigned what)
{
	struct witness_slot *s = &slots[(unsigned)tid & (WITNESS_SLOTS - 1)];
	uint64_t tag = tag_of(tid, what);

	__atomic_compare_exchange_n(&s->tag, &tag, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void slots_clear(void)
{
	memset(slots, 0, sizeof(slots));
}

Test(verdict, a_call_in_progress_has_its_verdict)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_SAME));
	call_enters(101, 0xf1, WITNESS_OTHER);
	cr_assert(eq(int, verdict_of(slots, 101, 0xf1), VERDICT_OTHER));
}

Test(verdict, a_returned_call_leaves_no_verdict)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	call_returns(100, WITNESS_SAME);
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_UNSEEN));
}

Test(verdict, a_thread_whose_credentials_changed_gets_its_new_verdict)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	call_returns(100, WITNESS_SAME);
	call_enters(100, 0xf1, WITNESS_OTHER); /* setuid() between the two calls */
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_OTHER));
}

Test(verdict, a_call_whose_return_was_missed_is_replaced_by_the_next)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	call_enters(100, 0xf1, WITNESS_OTHER);
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_OTHER));
}

Test(verdict, another_thread_of_the_same_process_has_none)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	cr_assert(eq(int, verdict_of(slots, 101, 0xf1), VERDICT_UNSEEN));
	cr_assert(eq(int, verdict_of(slots, 100 + WITNESS_SLOTS, 0xf1), VERDICT_UNSEEN));
}

Test(verdict, another_file_has_none)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	cr_assert(eq(int, verdict_of(slots, 100, 0xf2), VERDICT_UNSEEN));
}

Test(verdict, a_slot_taken_by_another_thread_gives_none_to_the_first)
{
	slots_clear();
	pid_t a = 100, b = 100 + WITNESS_SLOTS; /* the same slot */

	call_enters(a, 0xf1, WITNESS_SAME);
	call_enters(b, 0xf2, WITNESS_OTHER);
	cr_assert(eq(int, verdict_of(slots, a, 0xf1), VERDICT_UNSEEN));
	/* the first returns: the second's verdict stays, not the first's to take */
	call_returns(a, WITNESS_SAME);
	cr_assert(eq(int, verdict_of(slots, b, 0xf2), VERDICT_OTHER));
}

Test(verdict, a_torn_slot_gives_none)
{
	slots_clear();
	/* another thread's fh written over this one's, the tag still this one's */
	call_enters(100, 0xf1, WITNESS_SAME);
	slots[100].fh = 0xf2;
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_UNSEEN));
}

Test(verdict, a_reused_thread_id_has_none_until_its_own_call)
{
	slots_clear();
	call_enters(100, 0xf1, WITNESS_SAME);
	call_returns(100, WITNESS_SAME); /* the thread is killed: its call returns */
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_UNSEEN));
	call_enters(100, 0xf1, WITNESS_OTHER); /* a new thread, the same id */
	cr_assert(eq(int, verdict_of(slots, 100, 0xf1), VERDICT_OTHER));
}

Test(verdict, no_slots_or_no_thread_gives_none)
{
	slots_clear();
	cr_assert(eq(int, verdict_of(NULL, 100, 0xf1), VERDICT_UNSEEN));
	cr_assert(eq(int, verdict_of(slots, 0, 0), VERDICT_UNSEEN));
}

Test(verdict, the_proofs_child_is_told_apart_and_counted)
{
	struct verdicts v = { .slots = slots };

	slots_clear();
	call_enters(100, 0xf1, WITNESS_OTHER);
	call_enters(101, 0xf1, WITNESS_OTHER);
	atomic_store(&v.proof_pid, 100);
	cr_assert(eq(int, verdicts_read(&v, 100, 0xf1), VERDICT_PROOF));
	cr_assert(eq(int, verdicts_read(&v, 101, 0xf1), VERDICT_OTHER));
	cr_assert(eq(u32, atomic_load(&v.proof_seen), 1));
	/* the proof over, its pid is another's: refused and counted as any */
	atomic_store(&v.proof_pid, 0);
	cr_assert(eq(int, verdicts_read(&v, 100, 0xf1), VERDICT_OTHER));
	cr_assert(eq(int, verdicts_read(NULL, 100, 0xf1), VERDICT_UNSEEN));
}
