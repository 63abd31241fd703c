// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sg v4 ioctls end to end (sgv4.c): SG_IOSUBMIT, SG_IORECEIVE and
 * SG_IOABORT, of one header or of an array through a control object,
 * blocking and not, with a real pool, the fake target and the fake libfuse
 * (the rig of rig.h).  The order in which commands complete is chosen with
 * the fake target's gate; waits are on replies and poll notifications,
 * never on sleeps.  The binary is linked with --wrap=malloc, so that a test
 * can fail one of the mallocs a call makes (malloc_fault.h).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "fake.h"
#include "guard.h"
#include "ioctl.h"
#include "ioctx.h"
#include "malloc_fault.h"
#include "opener.h"
#include "pool.h"
#include "queue/cmdq.h"
#include "queue/cmdq_i.h"
#include "rig.h"

TestSuite(sgv4, .timeout = 60);

/* ---- the sg v4 ioctls: SG_IOSUBMIT, SG_IORECEIVE, SG_IOABORT ---- */

/* A blocking SG_IORECEIVE of one completion, any: its pack_id. */
static uint32_t received(struct rig *g)
{
	struct sg_io_v4 r = rcv_hdr(-1, 0);

	cr_assert(zero(int, call_ioctl(g, SG_IORECEIVE, &r)));
	return r.request_extra;
}

/* g with one v4 READ (b's, h, tag and pack_id 1) submitted, and done. */
static void one_done(struct rig *g, struct fake_cmd *b, struct sg_io_v4 *h)
{
	rig_init(g, 2, O_RDWR);
	script_good(g->ft, 512);
	*h = v4_read(b, 1, 512, 1);
	cr_assert(zero(int, call_ioctl(g, SG_IOSUBMIT, h)));
	wait_done(g, 1);
}

/* h submitted, its command held at the target (fake_target_set_block()) once it reached it. */
static void submit_held(struct rig *g, struct sg_io_v4 *h)
{
	fake_target_set_block(g->ft, true);
	cr_assert(zero(int, call_ioctl(g, SG_IOSUBMIT, h)));
	cr_assert(fake_target_wait_entered(g->ft, 1));
}

/* A control object naming n requests at hdrs, and room for m completions at rsp. */
static struct sg_io_v4 mrq_ctl(struct sg_io_v4 *hdrs, unsigned n, struct sg_io_v4 *rsp, unsigned m,
			       uint32_t flags)
{
	return (struct sg_io_v4){
		.guard = 'Q',
		.flags = SGV4_FLAG_MULTIPLE_REQS | flags,
		.dout_xferp = (uintptr_t)hdrs,
		.dout_xfer_len = n * V4,
		.din_xferp = (uintptr_t)rsp,
		.din_xfer_len = m * V4,
	};
}

Test(sgv4, iosubmit_one_yields_its_tag_and_ioreceive_returns_it)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_v4 h, r;

	rig_init(&g, 2, O_RDWR);
	script_check(g.ft, 4096, 0);
	h = v4_read(&b, 7, 4096, 70);
	h.flags = SGV4_FLAG_YIELD_TAG;
	h.generated_tag = 12345;
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h)));
	cr_expect(not(eq(u64, h.generated_tag, 12345)), "the tag is written back");
	r = rcv_hdr(-1, 0);
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)));
	cr_expect(eq(i32, r.guard, 'Q'));
	cr_expect(eq(u32, r.request_extra, 70), "its pack_id");
	cr_expect(eq(u64, r.usr_ptr, FAKE_USR_PTR(70)));
	cr_expect(eq(u64, r.generated_tag, h.generated_tag), "the tag SG_IOSUBMIT gave");
	cr_expect(eq(u32, r.device_status, 2), "CHECK CONDITION");
	cr_expect(eq(u32, r.response_len, 18));
	cr_expect(eq(u32, r.info & SG_INFO_MRQ_FINI, 0), "not through a control object");
	cr_expect(is_data_in(b.data, 4096, 7), "data-in copied during SG_IORECEIVE");
	cr_expect(zero(int, memcmp(b.sense, g.ft->script.sense, 18)));
	cr_expect(eq(int, err_of(call_read(&g, V4, O_NONBLOCK)), EAGAIN), "taken once");
	rig_fini(&g);
}

Test(sgv4, iosubmit_array_and_ioreceive_array_in_one_call_each)
{
	enum { N = 5, ROOM = 8 };
	static const unsigned order[N] = { 4, 2, 5, 1, 3 };
	struct fake_cmd b[N + 1];
	struct sg_io_v4 h[N], rsp[ROOM], ctl;
	struct rig g;
	fuse_req_t r;
	unsigned seen[N + 1] = { 0 };

	rig_init(&g, N, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	for (unsigned i = 0; i < N; i++)
		h[i] = v4_read(&b[i + 1], i + 1, 512, 10 + i + 1);
	ctl = mrq_ctl(h, N, NULL, 0, SGV4_FLAG_IMMED);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &ctl)));
	cr_expect(eq(u32, ctl.info, N), "all submitted");
	cr_expect(eq(i32, ctl.dout_resid, 0));
	cr_assert(fake_target_wait_entered(g.ft, N));

	/* blocking: waits until as many are done as are outstanding (5 < room 8) */
	memset(rsp, 0xa5, sizeof(rsp));
	ctl = mrq_ctl(NULL, 0, rsp, ROOM, 0);
	r = ioctl_as(&g, gettid(), SG_IORECEIVE, &ctl);
	for (unsigned i = 0; i < N; i++) {
		cr_expect(zero(u32, fake_req_replies(r)), "still waiting after %u", i);
		fake_target_open(g.ft, order[i]);
		wait_done(&g, i == N - 1 ? 0 : i + 1);
	}
	cr_assert(zero(int, ioctl_result(r)));
	cr_expect(eq(u32, ctl.info, N), "five received");
	cr_expect(eq(i32, ctl.din_resid, ROOM - N));
	for (unsigned i = 0; i < N; i++) {
		unsigned tag = rsp[i].request_extra - 10;

		cr_assert(le(u32, tag, N));
		if (i == 0)
			cr_expect(eq(u32, tag, order[0]), "completion order");
		cr_expect(eq(u32, rsp[i].info & SG_INFO_MRQ_FINI, SG_INFO_MRQ_FINI));
		cr_expect(is_data_in(b[tag].data, 512, tag), "command %u's data", tag);
		seen[tag]++;
	}
	for (unsigned t = 1; t <= N; t++)
		cr_expect(eq(u32, seen[t], 1), "command %u once", t);
	cr_expect(fake_all_bytes((unsigned char *)&rsp[N], (ROOM - N) * V4, 0xa5),
		  "nothing past what was received");
	rig_fini(&g);
}

Test(sgv4, ioreceive_without_blocking_is_eagain_and_an_array_enodata_or_none)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_v4 h, r, rsp[4], ctl;

	rig_init(&g, 2, O_RDWR);
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EAGAIN), "nothing submitted");
	ctl = mrq_ctl(NULL, 0, rsp, 4, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &ctl), -ENODATA),
		  "an array: nothing outstanding");
	script_good(g.ft, 512);
	h = v4_read(&b, 1, 512, 1);
	submit_held(&g, &h);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EAGAIN), "one running");
	ctl = mrq_ctl(NULL, 0, rsp, 4, SGV4_FLAG_IMMED);
	cr_expect(zero(int, call_ioctl(&g, SG_IORECEIVE, &ctl)), "an array takes none");
	cr_expect(zero(u32, ctl.info));
	cr_expect(eq(i32, ctl.din_resid, 4));
	fake_target_release(g.ft);
	r = rcv_hdr(-1, 0);
	cr_expect(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)));
	cr_expect(eq(u32, r.request_extra, 1));
	rig_fini(&g);
}

Test(sgv4, ioreceive_by_pack_id_or_tag_under_force_pack_id)
{
	enum { N = 3 };
	struct fake_cmd b[N + 1];
	struct sg_io_v4 h[N + 1], r;
	struct rig g;
	fuse_req_t req;

	rig_init(&g, N, O_RDWR);
	script_good(g.ft, 512);
	ioctl_set(&g, SG_SET_FORCE_PACK_ID, 1);
	fake_target_set_gate(g.ft, true);
	for (unsigned t = 1; t <= N; t++) {
		h[t] = v4_read(&b[t], t, 512, 100 + t);
		h[t].flags = SGV4_FLAG_YIELD_TAG;
		cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h[t])));
	}
	cr_assert(fake_target_wait_entered(g.ft, N));
	fake_target_open(g.ft, 1);
	wait_done(&g, 1);
	r = rcv_hdr(102, 0);
	req = ioctl_as(&g, gettid(), SG_IORECEIVE, &r);
	cr_expect(zero(u32, fake_req_replies(req)), "102 is not done: waits, 101 is not taken");
	fake_target_open(g.ft, 2);
	cr_assert(zero(int, ioctl_result(req)));
	cr_expect(eq(u32, r.request_extra, 102));
	cr_expect(is_data_in(b[2].data, 512, 2));

	struct sg_extended_info sei = { .sei_wr_mask = SG_SEIM_CTL_FLAGS,
					.sei_rd_mask = SG_SEIM_CTL_FLAGS,
					.ctl_flags_wr_mask = SG_CTL_FLAGM_TAG_FOR_PACK_ID,
					.ctl_flags_rd_mask = SG_CTL_FLAGM_TAG_FOR_PACK_ID,
					.ctl_flags = SG_CTL_FLAGM_TAG_FOR_PACK_ID };

	cr_assert(zero(int, call_ioctl(&g, SG_SET_GET_EXTENDED, &sei)));
	cr_expect(eq(u32, sei.ctl_flags, SG_CTL_FLAGM_TAG_FOR_PACK_ID), "read back");
	fake_target_open(g.ft, 3);
	wait_done(&g, 2);
	r = rcv_hdr(-1, 0);
	r.request_tag = h[3].generated_tag;
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)));
	cr_expect(eq(u32, r.request_extra, 103), "by its tag");
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	r.request_tag = h[3].generated_tag;
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EAGAIN), "that tag is taken");
	r.request_tag = (uint64_t)-1;
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "tag -1: any");
	cr_expect(eq(u32, r.request_extra, 101));
	rig_fini(&g);
}

Test(sgv4, ioctls_and_write_read_share_the_queue)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3], r;
	struct fake_reply *rep;
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	h[0] = v4_read(&b[0], 1, 512, 1);
	h[1] = v4_read(&b[1], 2, 512, 2);
	h[2] = v4_read(&b[2], 3, 512, 3);
	write_ok(&g, &h[0], V4, 0);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h[1])));
	write_ok(&g, &h[2], V4, 0);
	wait_done(&g, 3);
	/* completion order is the pool's: which one goes where is open, all go once */
	r = rcv_hdr(-1, 0);
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "one, by ioctl");
	rep = read_ok(&g, 2 * V4, 0);
	cr_expect(eq(sz, rep->len, 2 * V4), "the other two, by read()");
	cr_expect(eq(u32,
		     1u << r.request_extra | 1u << v4_out(rep, 0).request_extra |
			     1u << v4_out(rep, 1).request_extra,
		     0xeu),
		  "each of the three once, written or submitted");
	for (int i = 0; i < 3; i++)
		cr_expect(is_data_in(b[i].data, 512, i + 1));
	rig_fini(&g);
}

Test(sgv4, parked_ioreceive_interrupted_gets_eintr_and_leaves_the_completion)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_v4 h, r, rsp[2], ctl;
	fuse_req_t req;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	h = v4_read(&b, 1, 512, 1);
	submit_held(&g, &h);
	r = rcv_hdr(-1, 0);
	req = ioctl_as(&g, gettid(), SG_IORECEIVE, &r);
	cr_assert(zero(u32, fake_req_replies(req)));
	fake_interrupt(req);
	cr_expect(eq(int, ioctl_result(req), -EINTR));
	ctl = mrq_ctl(NULL, 0, rsp, 2, 0);
	req = ioctl_as(&g, gettid(), SG_IORECEIVE, &ctl);
	cr_assert(zero(u32, fake_req_replies(req)));
	fake_interrupt(req);
	cr_expect(eq(int, ioctl_result(req), -EINTR), "an array's wait alike");

	fake_target_release(g.ft);
	wait_done(&g, 1);
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED),
		  "nothing to the interrupted");
	cr_expect(eq(u32, received(&g), 1));
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(req), 1));
	rig_fini(&g);
}

Test(sgv4, ioabort_of_a_held_command_ends_it_unrun_and_others_as_they_end)
{
	struct fake_cmd b[2];
	struct sg_io_v4 h[2], r, a;
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	g.d.max_running = 1;
	g.d.slots_shared = true; /* one channel: the second is held back */
	script_good(g.ft, 512);
	fake_target_set_block(g.ft, true);
	h[0] = v4_read(&b[0], 1, 512, 1);
	h[1] = v4_read(&b[1], 2, 512, 2);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h[0])));
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h[1])));
	cr_assert(fake_target_wait_entered(g.ft, 1));
	a = rcv_hdr(2, 0);
	cr_expect(zero(int, call_ioctl(&g, SG_IOABORT, &a)), "held back: aborted");
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "it completes at once");
	cr_expect(eq(u32, r.request_extra, 2));
	cr_expect(eq(u32, r.transport_status, SCSI_DID_ABORT));
	cr_expect(eq(u32, r.driver_status, SCSI_DRIVER_SOFT));
	cr_expect(eq(u32, r.info & SG_INFO_ABORTED, SG_INFO_ABORTED));
	cr_expect(fake_all_bytes(b[1].data, sizeof(b[1].data), FAKE_UNTOUCHED) ||
			  fake_all_bytes(b[1].data, 512, 0),
		  "no device data");
	a = rcv_hdr(1, 0);
	cr_expect(zero(int, call_ioctl(&g, SG_IOABORT, &a)), "at the device: marked");
	a = rcv_hdr(99, 0);
	cr_expect(eq(int, call_ioctl(&g, SG_IOABORT, &a), -ENODATA), "no such pack_id");
	fake_target_release(g.ft);
	cr_expect(eq(u32, received(&g), 1));
	cr_expect(eq(u32, r.device_status, 0), "it ran to its end");
	cr_expect(eq(u32, r.info & SG_INFO_ABORTED, SG_INFO_ABORTED));
	cr_expect(is_data_in(b[0].data, 512, 1));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 1), "the aborted one never reached the target");
	rig_fini(&g);
}

Test(sgv4, ioctl_mistakes_get_the_sg_v4_errnos)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_v4 h, ctl, hs[2];
	struct sg_io_hdr h3;

	rig_init(&g, 1, O_RDONLY);
	h = v4_read(&b, 1, 512, 1);
	h.guard = 'S';
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &h), -EPERM), "guard");
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &h), -EPERM), "guard");
	h3 = v3_read(&b, 1, 512, 1);
	h3.interface_id = 'Q';
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT_V3, &h3), -EPERM), "interface_id");
	h = rcv_hdr(1, 0);
	cr_expect(eq(int, call_ioctl(&g, SG_IOABORT, &h), -EPERM), "abort on a read-only file");
	g.o->open_flags = O_RDWR;
	cr_expect(eq(int, call_ioctl(&g, SG_IOABORT, &h), -ENODATA));
	h = v4_read(&b, 1, 512, 1);
	h.request_len = 40;
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &h), -EINVAL), "a bad header: SG_IO's errno");
	hs[0] = v4_read(&b, 1, 512, 1);
	hs[1] = hs[0];
	hs[1].guard = 'S';
	ctl = mrq_ctl(hs, 2, NULL, 0, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &ctl), -ERANGE), "one bad: none taken");
	hs[1] = hs[0];
	hs[1].flags = SGV4_FLAG_COMPLETE_B4;
	ctl = mrq_ctl(hs, 2, NULL, 0, 0);
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &ctl), -EOPNOTSUPP),
		  "one before the next, in a blocking array");
	ctl = mrq_ctl(NULL, 0, hs, 2, 0);
	ctl.din_xfer_len = 100;
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &ctl), -ERANGE), "room not in headers");
	hs[0].flags = SGV4_FLAG_MULTIPLE_REQS;
	cr_expect(eq(int, sg_io_errno(&g, (struct sg_io_hdr *)&hs[0]), ERANGE),
		  "SG_IO of an array");
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	g.d.direct = false;
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &h), -EINVAL), "no direct path");
	rig_fini(&g);
}

Test(sgv4, iosubmit_array_stops_where_a_request_is_refused)
{
	struct fake_cmd b[3];
	struct sg_io_v4 hs[3], ctl, r;
	struct rig g;

	fake_set_rawio(false); /* before the open: the opener's context is the caller's */
	rig_init(&g, 2, O_RDONLY);
	script_good(g.ft, 512);
	hs[0] = v4_read(&b[0], 1, 512, 1);
	hs[1] = v4_read(&b[1], 2, 512, 2);
	fake_cmd_init(&b[2], true, 3, 1);
	hs[2] = fake_v4_hdr(&b[2], true, 512, 3); /* WRITE(10) on a read-only file */
	hs[1].flags = 0;
	ctl = mrq_ctl(hs, 3, NULL, 0, SGV4_FLAG_IMMED);
	ctl.din_xfer_len = V4; /* asks for why, in spare_out */
	ctl.din_xferp = (uintptr_t)&r;
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &ctl)));
	cr_expect(eq(u32, ctl.info, 2), "two taken");
	cr_expect(eq(i32, ctl.dout_resid, 1));
	cr_expect(eq(u32, ctl.spare_out, EPERM), "the third refused");
	wait_done(&g, 2);
	cr_expect(eq(u32, fake_target_calls(g.ft), 2));
	fake_set_rawio(true);
	rig_fini(&g);
}

/*
 * A child process, sharing the file as a forked child or a process it was
 * passed to does: as its read() would, its SG_IORECEIVE gets EPERM (the
 * context is not the opener's) and takes nothing of this process's
 * (their addresses are this process's).
 */
Test(sgv4, ioreceive_from_another_process_is_eperm)
{
	struct fake_cmd b;
	struct sg_io_v4 h, r;
	struct rig g;
	int pipefd[2];
	pid_t child;
	char c;

	one_done(&g, &b, &h);
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_assert(zero(int, pipe(pipefd)));
	child = fork();
	cr_assert(ge(int, child, 0));
	if (child == 0) {
		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1); /* blocked, as in its ioctl */
		_exit(0);
	}
	close(pipefd[0]);
	cr_expect(eq(int, ioctl_result(ioctl_as(&g, child, SG_IORECEIVE, &r)), -EPERM),
		  "the child sees nothing of ours");
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED) ||
			  fake_all_bytes(b.data, 512, FAKE_UNTOUCHED),
		  "nothing copied for it");
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "ours is still there");
	cr_expect(eq(u32, r.request_extra, 1));
	close(pipefd[1]);
	waitpid(child, NULL, 0);
	rig_fini(&g);
}

/*
 * The identity read() and write() require holds for each of the ioctls
 * too: the same process after a change of credentials (or an execve(),
 * which keeps its id) gets EPERM, and nothing is run or copied.
 */
Test(sgv4, ioctls_from_another_context_are_eperm)
{
	struct fake_cmd b;
	struct sg_io_hdr h3, r3 = { .interface_id = 'S', .flags = SGV4_FLAG_IMMED };
	struct sg_io_v4 h, r, a = { .guard = 'Q', .request_extra = 1 }, ctl, rsp[2];
	struct rig g;
	uint32_t uid;

	one_done(&g, &b, &h);
	uid = g.o->ident.c.uid[0];
	g.o->ident.c.uid[0] ^= 1; /* the file was opened by another real uid */
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EPERM));
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE_V3, &r3), -EPERM));
	ctl = mrq_ctl(NULL, 0, rsp, 2, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &ctl), -EPERM), "an array too");
	cr_expect(eq(int, call_ioctl(&g, SG_IOABORT, &a), -EPERM));
	h = v4_read(&b, 2, 512, 2);
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT, &h), -EPERM));
	h3 = v3_read(&b, 3, 512, 3);
	cr_expect(eq(int, call_ioctl(&g, SG_IOSUBMIT_V3, &h3), -EPERM));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1), "only the first ran");
	cr_expect(eq(int, cmdq_num_waiting(g.o), 1), "its completion is still there");
	g.o->ident.c.uid[0] = uid;
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "for the opener's context");
	cr_expect(eq(u32, r.request_extra, 1));
	rig_fini(&g);
}

Test(sgv4, release_with_ioctl_commands_running_and_a_parked_receive)
{
	struct fake_cmd b[3];
	struct sg_io_v4 hs[3], ctl, rsp[3];
	struct rig g;
	fuse_req_t req;

	rig_init(&g, 3, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_block(g.ft, true);
	for (int i = 0; i < 3; i++)
		hs[i] = v4_read(&b[i], i + 1, 512, i + 1);
	ctl = mrq_ctl(hs, 3, NULL, 0, SGV4_FLAG_IMMED);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &ctl)));
	cr_assert(fake_target_wait_entered(g.ft, 3));
	ctl = mrq_ctl(NULL, 0, rsp, 3, 0);
	req = ioctl_as(&g, gettid(), SG_IORECEIVE, &ctl);
	fake_interrupt(req); /* the kernel ends a dying client's call so */
	cr_expect(eq(int, ioctl_result(req), -EINTR));
	rig_release(&g);
	fake_target_release(g.ft);
	rig_stop(&g);
	for (int i = 0; i < 3; i++)
		cr_expect(fake_all_bytes(b[i].data, sizeof(b[i].data), FAKE_UNTOUCHED),
			  "no user memory touched after release");
	rig_fini(&g);
}

Test(sgv4, iosubmit_v3_and_ioreceive_v3_take_v3_headers_only)
{
	struct fake_cmd b[2];
	struct sg_io_hdr h3, r3;
	struct sg_io_v4 h4;
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	h4 = v4_read(&b[0], 1, 512, 1);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h4)));
	h3 = v3_read(&b[1], 2, 512, 2);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT_V3, &h3)));
	wait_done(&g, 2);
	r3 = (struct sg_io_hdr){ .interface_id = 'S' };
	cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE_V3, &r3)),
		  "the v3 one, though not the oldest");
	cr_expect(eq(int, r3.pack_id, 2));
	cr_expect(eq(ptr, r3.usr_ptr, h3.usr_ptr));
	cr_expect(is_data_in(b[1].data, 512, 2));
	r3 = (struct sg_io_hdr){ .interface_id = 'S', .flags = SGV4_FLAG_IMMED };
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE_V3, &r3), -EAGAIN), "no v3 one left");
	cr_expect(eq(u32, received(&g), 1));
	rig_fini(&g);
}

Test(sgv4, blocking_array_waits_for_all_and_answers_each_at_its_place)
{
	enum { N = 3 };
	struct fake_cmd b[N];
	struct sg_io_v4 hs[N], rsp[N + 1], ctl, r;
	struct rig g;
	fuse_req_t req;

	rig_init(&g, N, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	for (unsigned i = 0; i < N; i++)
		hs[i] = v4_read(&b[i], i + 1, 512, 20 + i);
	memset(rsp, 0xa5, sizeof(rsp));
	ctl = mrq_ctl(hs, N, rsp, N + 1, 0); /* no IMMED: sg's "variable blocking" */
	req = ioctl_as(&g, gettid(), SG_IOSUBMIT, &ctl);
	cr_assert(fake_target_wait_entered(g.ft, N));
	fake_target_open(g.ft, 3);
	fake_target_open(g.ft, 1);
	wait_done(&g, 2); /* done, but the array's own */
	cr_expect(zero(u32, fake_req_replies(req)), "one is still running");
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EAGAIN), "no one else sees them");
	cr_expect(eq(int, err_of(call_read(&g, V4, O_NONBLOCK)), EAGAIN), "nor read()");
	fake_target_open(g.ft, 2);
	cr_assert(zero(int, ioctl_result(req)));
	cr_expect(eq(u32, ctl.info, N), "all completed");
	cr_expect(zero(i32, ctl.dout_resid));
	cr_expect(eq(i32, ctl.din_resid, 0));
	for (unsigned i = 0; i < N; i++) {
		cr_expect(eq(u32, rsp[i].request_extra, 20 + i), "at its request's place");
		cr_expect(eq(u32, rsp[i].info & SG_INFO_MRQ_FINI, SG_INFO_MRQ_FINI));
		cr_expect(is_data_in(b[i].data, 512, i + 1));
	}
	cr_expect(fake_all_bytes((unsigned char *)&rsp[N], V4, 0xa5), "nothing past the array");
	rig_fini(&g);
}

/* The opener's commands still marked as a blocking array's (on_reply hook). */
struct marked {
	struct opener *o;
	int n;
};

static void count_marked(void *arg)
{
	struct marked *m = arg;
	struct cmd *c;

	pthread_mutex_lock(&m->o->lock);
	m->n = 0;
	list_for_each_entry(c, &m->o->cmds, node)
		m->n += c->mrq != 0;
	pthread_mutex_unlock(&m->o->lock);
}

/*
 * A blocking array's SG_IOSUBMIT, its n commands held by the target: the
 * call, parked; m counts at its answer (on_reply hook) the commands still
 * the array's.
 */
static fuse_req_t blocking_array(struct rig *g, struct fake_cmd *b, struct sg_io_v4 *hs, unsigned n,
				 struct sg_io_v4 *ctl, struct marked *m)
{
	fuse_req_t req = fake_req_new(g->fs);

	for (unsigned i = 0; i < n; i++)
		hs[i] = v4_read(&b[i], i + 1, 512, i + 1);
	*ctl = mrq_ctl(hs, n, hs, n, 0);
	m->o = g->o;
	m->n = -1;
	fake_req_on_reply(req, count_marked, m); /* before: it may be answered at once */
	return ioctl_on(g, req, gettid(), SG_IOSUBMIT, ctl);
}

Test(sgv4, blocking_array_without_memory_to_wait_leaves_its_completions_to_any_receive)
{
	enum { N = 2 };
	struct fake_cmd b[3][N];
	struct sg_io_v4 hs[3][N], ctl[3], r;
	struct marked m[3];
	unsigned mallocs;
	struct rig g;
	fuse_req_t req;

	rig_init(&g, 3 * N, O_RDWR); /* a thread for each command the target holds */
	script_good(g.ft, 512);
	fake_target_set_block(g.ft, true);
	/* a first array makes what a file makes once; it is interrupted */
	req = blocking_array(&g, b[0], hs[0], N, &ctl[0], &m[0]);
	cr_assert(fake_target_wait_entered(g.ft, N));
	fake_interrupt(req);
	cr_assert(eq(int, ioctl_result(req), -EINTR));
	/* the second counts the mallocs of such a call: the last parks it */
	malloc_fault_arm(0);
	req = blocking_array(&g, b[1], hs[1], N, &ctl[1], &m[1]);
	mallocs = malloc_fault_disarm();
	cr_assert(fake_target_wait_entered(g.ft, 2 * N));
	cr_assert(zero(u32, fake_req_replies(req)), "parked");
	fake_interrupt(req);
	cr_assert(eq(int, ioctl_result(req), -EINTR));
	/* the third finds no memory to park in */
	malloc_fault_arm(mallocs);
	req = blocking_array(&g, b[2], hs[2], N, &ctl[2], &m[2]);
	cr_assert(eq(u32, malloc_fault_disarm(), mallocs));
	cr_assert(eq(int, ioctl_result(req), -ENOMEM), "the call is answered at once");
	cr_expect(zero(int, m[2].n), "%d commands still the array's at the ENOMEM", m[2].n);
	cr_assert(fake_target_wait_entered(g.ft, 3 * N));
	fake_target_release(g.ft);
	/* every command, the third array's too, is any receive's */
	for (unsigned i = 0; i < 3 * N; i++) {
		r = rcv_hdr(-1, 0);
		cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "%u", i);
	}
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	cr_expect(eq(int, call_ioctl(&g, SG_IORECEIVE, &r), -EAGAIN), "no more");
	for (unsigned i = 0; i < N; i++)
		cr_expect(is_data_in(b[2][i].data, 512, i + 1), "the third array's data, %u", i);
	rig_fini(&g);
}

Test(sgv4, interrupted_blocking_array_leaves_its_completions_to_any_receive)
{
	struct marked m = { .n = -1 };
	struct fake_cmd b[2];
	struct sg_io_v4 hs[2], ctl, r;
	struct rig g;
	fuse_req_t req;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_block(g.ft, true);
	hs[0] = v4_read(&b[0], 1, 512, 1);
	hs[1] = v4_read(&b[1], 2, 512, 2);
	ctl = mrq_ctl(hs, 2, hs, 2, 0);
	req = ioctl_as(&g, gettid(), SG_IOSUBMIT, &ctl);
	cr_assert(fake_target_wait_entered(g.ft, 2));
	cr_assert(zero(u32, fake_req_replies(req)));
	m.o = g.o;
	fake_req_on_reply(req, count_marked, &m);
	fake_interrupt(req);
	cr_expect(eq(int, ioctl_result(req), -EINTR));
	/* once answered, the client may close the file: nothing is left to do */
	cr_expect(zero(int, m.n), "%d commands still the array's when its EINTR went", m.n);
	fake_target_release(g.ft);
	for (int i = 0; i < 2; i++) {
		r = rcv_hdr(-1, 0);
		cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "%d", i);
		cr_expect(is_data_in(b[r.request_extra - 1].data, 512, r.request_extra));
	}
	rig_fini(&g);
}

/*
 * An SG_IORECEIVE that finds no memory, at any of its mallocs, is answered
 * ENOMEM and loses no completion: each is there for the next receive.
 */
Test(sgv4, receive_without_memory_loses_no_completion)
{
	enum { N = 32 };
	struct fake_cmd b[N];
	struct sg_io_v4 h[N], r;
	unsigned mallocs, left = N;
	struct rig g;
	fuse_req_t req;
	int err;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	for (unsigned i = 0; i < N; i++) {
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
		cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h[i])), "%u", i);
	}
	wait_done(&g, N);
	/* one receive, its mallocs counted */
	r = rcv_hdr(-1, SGV4_FLAG_IMMED);
	req = fake_req_new(g.fs);
	malloc_fault_arm(0);
	ioctl_on(&g, req, gettid(), SG_IORECEIVE, &r);
	mallocs = malloc_fault_disarm();
	cr_assert(zero(int, ioctl_result(req)));
	left--;
	cr_assert(gt(u32, mallocs, 0), "a receive allocates");
	cr_assert(lt(u32, mallocs, left), "a completion for each malloc to fail");
	/* each of them failing in turn */
	for (unsigned k = 1; k <= mallocs; k++) {
		r = rcv_hdr(-1, SGV4_FLAG_IMMED);
		req = fake_req_new(g.fs);
		malloc_fault_arm(k);
		ioctl_on(&g, req, gettid(), SG_IORECEIVE, &r);
		malloc_fault_disarm();
		err = ioctl_result(req);
		if (!err)
			left--;
		else
			cr_expect(eq(int, err, -ENOMEM), "malloc %u", k);
		cr_expect(eq(int, cmdq_num_waiting(g.o), (int)left), "malloc %u: a completion lost",
			  k);
	}
	while (left) {
		r = rcv_hdr(-1, SGV4_FLAG_IMMED);
		cr_assert(zero(int, call_ioctl(&g, SG_IORECEIVE, &r)), "%u left", left);
		cr_expect(is_data_in(b[r.request_extra - 1].data, 512, r.request_extra));
		left--;
	}
	rig_fini(&g);
}

struct stalled_submit {
	struct rig *g;
	fuse_req_t req;
	struct sg_io_v4 h;
};

static void *stalled_submit_thread(void *arg)
{
	struct stalled_submit *ss = arg;

	ioctl_on(ss->g, ss->req, gettid(), SG_IOSUBMIT, &ss->h);
	return NULL;
}

static unsigned queued_of(struct opener *o)
{
	return fake_locked(&o->lock, &o->queued);
}

/*
 * A blocking array's SG_IORECEIVE counts the file's commands it waits for,
 * one of them a command whose SG_IOSUBMIT is still reading its CDB (from a
 * page that stalls).  That submit ends without its command (the watchdog
 * answered it EFAULT), and the command leaves the queue unrun: the array,
 * which now has every command it can get, is answered then, not left
 * parked until some other completion or a signal.
 */
Test(sgv4, an_undone_submit_lets_a_parked_array_receive_go)
{
	struct fake_cmd b1, b2;
	struct sg_io_v4 h1, rsp[2], ctl;
	struct stalled_submit ss;
	struct fake_reply *rep;
	struct stall st;
	struct rig g;
	fuse_req_t req;
	pthread_t t;

	stall_init(&st);
	rig_init(&g, 2, O_RDWR);
	cr_assert(zero(int, watchdog_new(300, "fake", &g.d.wd)));
	cr_assert(zero(int, pool_new_elastic(8, &g.d.serve)));
	script_good(g.ft, 512);
	h1 = v4_read(&b1, 1, 512, 1);
	cr_assert(zero(int, call_ioctl(&g, SG_IOSUBMIT, &h1)));
	wait_done(&g, 1);
	ss = (struct stalled_submit){ .g = &g, .req = fake_req_new(g.fs) };
	ss.h = v4_read(&b2, 2, 512, 2);
	ss.h.request = (uintptr_t)st.page;
	cr_assert(zero(int, pthread_create(&t, NULL, stalled_submit_thread, &ss)));
	while (queued_of(g.o) < 2)
		sched_yield(); /* its command counted, its CDB not read */
	ctl = mrq_ctl(NULL, 0, rsp, 2, 0);
	req = ioctl_as(&g, gettid(), SG_IORECEIVE, &ctl);
	cr_assert(zero(u32, fake_req_replies(req)), "parked: two commands, one done");
	rep = fake_req_wait(ss.req);
	cr_assert(not(eq(ptr, rep, NULL)));
	cr_assert(eq(int, ioctl_result(ss.req), -EFAULT), "the submit, past the bound");
	cr_assert(zero(u32, fake_req_replies(req)), "still parked: the command is still counted");
	stall_release(&st);
	pthread_join(t, NULL);
	wait_unstuck(g.o);
	rep = fake_req_wait(req);
	cr_expect(not(eq(ptr, rep, NULL)),
		  "the array's receive is answered once the command is gone");
	if (rep) {
		cr_expect(zero(int, ioctl_result(req)));
		cr_expect(eq(u32, rsp[0].request_extra, 1), "the one completion");
	} else {
		fake_interrupt(req);
	}
	cr_expect(eq(u32, queued_of(g.o), 0));
	cr_expect(pool_free_within(g.d.serve, 1000), "every elastic thread came back");
	g.d.serve = NULL;
	cr_expect(zero(u32, watchdog_free(g.d.wd)));
	g.d.wd = NULL;
	rig_fini(&g);
}
