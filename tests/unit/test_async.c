// SPDX-License-Identifier: GPL-2.0-only
/*
 * The asynchronous interface end to end: async_write(), async_read() and
 * async_poll() with a real pool, the fake target and the fake libfuse
 * (the rig of rig.h).  The client is this process: the daemon moves CDBs, data
 * and sense with process_vm_readv/writev on the thread a fake request names,
 * which is the test's own unless fake_req_ctx() says otherwise.  The order
 * in which commands complete is chosen with the fake target's gate (a call
 * waits until its CDB's tag is opened); waits are on replies and poll
 * notifications, never on sleeps.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <sched.h>
#include <scsi/scsi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "copyjob.h"
#include "fake.h"
#include "guard.h"
#include "ioctl.h"
#include "ioctx.h"
#include "malloc_fault.h"
#include "opener.h"
#include "policy.h"
#include "queue/async.h"
#include "queue/cmdq.h"
#include "queue/cmdq_i.h"
#include "rig.h"
#include "root.h"
#include "sgio.h"
#include "share.h"

TestSuite(async, .timeout = 60);

/* ---- write, then read: one command ---- */

Test(async, v3_read_write_returns_count_and_read_returns_the_completion)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h, before;
	struct fake_reply *rep;
	const struct sg_io_hdr *out;

	rig_init(&g, 2, O_RDWR);
	h = v3_read(&b, 1, 4096, 1234);
	before = h;
	script_check(g.ft, 1000, 3096);
	cr_expect(eq(sz, write_ok(&g, &h, V3, 0), V3));
	cr_expect(eq(int, atomic_load(&g.o->cmd_q), 1), "a v3 write turns command queuing on");

	rep = read_ok(&g, V3, 0);
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	cr_expect(zero(int, memcmp(g.ft->seen.cdb, b.cdb, 10)), "the CDB, from the writer");
	cr_expect(eq(u32, g.ft->seen.cdb_len, 10));
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_FROM_DEV));
	cr_expect(eq(u32, g.ft->seen.data_len, 4096));
	cr_expect(eq(u32, g.ft->seen.timeout_ms, 20000));
	cr_expect(eq(int, g.ft->seen.chan, g.o->achan[0]),
		  "the opener's own channel for written commands");
	cr_expect(eq(int, atomic_load(&g.o->chan), -1), "not the one SG_IO takes");

	out = v3_out(rep);
	cr_expect(eq(int, out->interface_id, 'S'));
	cr_expect(eq(u8, out->status, 0x02));
	cr_expect(eq(u8, out->masked_status, CHECK_CONDITION));
	cr_expect(zero(u16, out->host_status));
	cr_expect(eq(u16, out->driver_status, SCSI_DRIVER_SENSE));
	cr_expect(eq(u8, out->sb_len_wr, 18));
	cr_expect(eq(u32, out->info, SG_INFO_CHECK));
	cr_expect(eq(i32, out->resid, 3096));
	cr_expect(lt(u32, out->duration, 10000));
	cr_expect(eq(int, out->pack_id, 1234), "pack_id preserved");
	cr_expect(eq(ptr, out->usr_ptr, h.usr_ptr), "usr_ptr preserved");
	cr_expect(eq(ptr, out->dxferp, b.data));

	cr_expect(is_data_in(b.data, 1000, 1), "data-in, into the buffer the header named");
	cr_expect(fake_all_bytes(b.data + 1000, 4096 - 1000, 0), "zero-filled to dxfer_len");
	cr_expect(fake_all_bytes(b.data + 4096, sizeof(b.data) - 4096, FAKE_UNTOUCHED));
	cr_expect(zero(int, memcmp(b.sense, g.ft->script.sense, 18)), "sense, into sbp");
	cr_expect(fake_all_bytes(b.sense + 18, sizeof(b.sense) - 18, FAKE_UNTOUCHED));
	cr_expect(zero(int, memcmp(&h, &before, sizeof(h))),
		  "the header goes back in the reply only");
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(eq(ulong, stat_get(&g, STAT_SG_IO), 1));
	rig_fini(&g);
}

Test(async, v3_write_data_out_reaches_the_target)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct fake_reply *rep;

	rig_init(&g, 2, O_RDWR);
	fake_cmd_init(&b, true, 9, 8);
	h = fake_v3_hdr(&b, SG_DXFER_TO_DEV, 2048, 77);
	script_good(g.ft, 512); /* a target answering data to a WRITE: must not land */
	cr_expect(eq(sz, write_ok(&g, &h, V3, O_NONBLOCK), V3));
	rep = read_ok(&g, V3, 0);
	cr_expect(eq(int, g.ft->seen.dir, SCSI_DIR_TO_DEV));
	cr_expect(eq(u32, g.ft->seen.cdb[0], 0x2a));
	cr_assert(eq(sz, g.ft->seen.data_out_len, 2048));
	for (size_t i = 0; i < 2048; i++)
		cr_assert(eq(u8, g.ft->seen.data_out[i], fake_pattern(i + 9)), "data-out byte %zu",
			  i);
	cr_expect(zero(u8, v3_out(rep)->status));
	cr_expect(eq(int, v3_out(rep)->pack_id, 77));
	for (size_t i = 0; i < sizeof(b.data); i++)
		cr_assert(eq(u8, b.data[i], fake_pattern(i + 9)),
			  "a WRITE's buffer written back, byte %zu", i);
	cr_expect(fake_all_bytes(b.sense, sizeof(b.sense), FAKE_UNTOUCHED), "no sense for GOOD");
	rig_fini(&g);
}

Test(async, v3_write_longer_than_a_header_answers_count)
{
	struct rig g;
	struct fake_cmd b;
	unsigned char buf[200];
	struct sg_io_hdr h;

	rig_init(&g, 1, O_RDWR);
	h = v3_read(&b, 1, 512, 5);
	memset(buf, 0x55, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	script_good(g.ft, 512);
	cr_expect(eq(sz, write_ok(&g, buf, sizeof(buf), 0), sizeof(buf)), "sg says count");
	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 5));
	cr_expect(eq(u32, fake_target_calls(g.ft), 1), "one header taken, the rest ignored");
	rig_fini(&g);
}

Test(async, target_errno_is_the_read_error_and_drops_the_completion)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	rig_init(&g, 1, O_RDWR);
	h = v3_read(&b, 3, 512, 5);
	script_good(g.ft, 512);
	g.ft->script.fail_tag = 3;
	g.ft->script.fail_ret = -EIO;
	write_ok(&g, &h, V3, 0);
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), EIO));
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

/*
 * The queue engine's hand-off, recorded: how many answers the write had when
 * its command reached the target.  The queue completes each command at once,
 * or refuses it with queue_ret.
 */
static struct {
	fuse_req_t write;
	unsigned answers[4];
	unsigned n;
	int queue_ret;
	unsigned here, here_answers; /* run by queue_sg_io(); the write's answers then */
} handoff;

static int handoff_queue_open(struct target *t, struct target_queue **ret)
{
	*ret = (struct target_queue *)t; /* never looked into */
	return 0;
}

static void handoff_queue_close(struct target *t, struct target_queue *q)
{
	(void)t, (void)q;
}

static int handoff_queue_submit(struct target *t, struct target_queue *q, struct scsi_cmd *c)
{
	(void)t, (void)q;
	handoff.answers[handoff.n++ % 4] = fake_req_replies(handoff.write);
	if (handoff.queue_ret)
		return handoff.queue_ret;
	c->res = (struct scsi_result){ 0 };
	cmdq_target_done(c, 0);
	return 0;
}

static int handoff_queue_sg_io(struct target *t, struct target_queue *q, struct scsi_cmd *c)
{
	(void)t, (void)q;
	handoff.here++;
	handoff.here_answers = fake_req_replies(handoff.write);
	c->res = (struct scsi_result){ 0 };
	return 0;
}

/* A write() of size bytes at buf through the hand-off: its request is handoff.write. */
static void handoff_write(struct rig *g, const void *buf, size_t size)
{
	handoff.write = fake_req_new(g->fs);
	async_write(handoff.write, g->o, buf, size, 0);
}

/* The rig's target with the hand-off queue (ops: the caller's, to outlive the rig's use). */
static void handoff_install(struct rig *g, struct target_ops *ops)
{
	*ops = *g->ft->base.ops;
	ops->queue_open = handoff_queue_open;
	ops->queue_close = handoff_queue_close;
	ops->queue_submit = handoff_queue_submit;
	ops->queue_sg_io = handoff_queue_sg_io;
	g->ft->base.ops = ops;
	g->d.queue = true;
	memset(&handoff, 0, sizeof(handoff));
}

Test(async, write_is_answered_before_its_commands_reach_the_target)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct sg_io_v4 v4[3];
	struct target_ops ops;

	rig_init(&g, 1, O_RDWR);
	handoff_install(&g, &ops); /* no libfuse worker may run a command: the queue */

	h = v3_read(&b, 1, 512, 7);
	handoff_write(&g, &h, V3);
	cr_expect(eq(u32, handoff.n, 1));
	cr_expect(eq(u32, handoff.answers[0], 1), "the write was answered first");
	cr_expect(eq(int, reply_of(handoff.write)->kind, FAKE_WRITE));
	cr_expect(zero(u8, v3_out(read_ok(&g, V3, 0))->status));

	for (int i = 0; i < 3; i++)
		v4[i] = v4_read(&b, 2, 512, 10 + i);
	handoff.n = 0;
	handoff_write(&g, v4, sizeof(v4));
	cr_expect(eq(u32, handoff.n, 3));
	for (int i = 0; i < 3; i++)
		cr_expect(eq(u32, handoff.answers[i], 1), "v4 header %d: after the answer", i);
	cr_expect(eq(sz, reply_of(handoff.write)->count, sizeof(v4)));
	cr_expect(eq(sz, read_ok(&g, 3 * V4, 0)->len, 3 * V4), "three completions");

	/* what the target refuses after the answer comes back through read() */
	handoff.queue_ret = -EIO;
	h = v3_read(&b, 3, 512, 8);
	write_ok(&g, &h, V3, 0);
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), EIO));
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	rig_fini(&g);
}

/*
 * A large buffer goes back to its opener and serves the next command: what
 * the client reads is still only what the device wrote, zeroes after it,
 * never the earlier command's data; data-out overwrites it whole.
 */
Test(async, reused_large_buffer_shows_only_what_the_device_wrote)
{
	const unsigned len = 96 << 10, part = 1000;
	unsigned char *big = malloc(len);
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	cr_assert(not(eq(ptr, big, NULL)));
	rig_init(&g, 1, O_RDWR);
	h = v3_read(&b, 1, len, 1);
	h.dxferp = big;
	script_good(g.ft, len);
	write_ok(&g, &h, V3, 0);
	read_ok(&g, V3, 0);
	cr_expect(is_data_in(big, len, 1));
	cr_expect(eq(u32, g.o->nbufs, 1), "the buffer went back to its opener");

	h = v3_read(&b, 2, len, 2);
	h.dxferp = big;
	memset(big, FAKE_UNTOUCHED, len);
	script_good(g.ft, part);
	g.ft->script.resid = (int32_t)(len - part);
	write_ok(&g, &h, V3, 0);
	cr_expect(eq(i32, v3_out(read_ok(&g, V3, 0))->resid, (int32_t)(len - part)));
	cr_expect(is_data_in(big, part, 2));
	cr_expect(fake_all_bytes(big + part, len - part, 0),
		  "zeroes, not the first command's data");
	cr_expect(eq(u32, g.o->nbufs, 1), "the same one buffer");

	fake_cmd_init(&b, true, 3, 8);
	h = fake_v3_hdr(&b, SG_DXFER_TO_DEV, len, 3);
	for (unsigned i = 0; i < len; i++)
		big[i] = (unsigned char)(i * 13 + 5);
	h.dxferp = big;
	script_good(g.ft, 0);
	write_ok(&g, &h, V3, 0);
	read_ok(&g, V3, 0);
	cr_expect(eq(sz, g.ft->seen.data_out_len, len));
	cr_expect(zero(int, memcmp(g.ft->seen.data_out, big, len)), "data-out, whole");
	rig_fini(&g);
	free(big);
}

/* ---- ordering ---- */

Test(async, reads_return_completions_oldest_first)
{
	enum { N = 5 };
	static const unsigned order[N] = { 3, 1, 5, 2, 4 };
	struct fake_cmd b[N + 1];
	struct sg_io_hdr h;
	struct rig g;
	unsigned seen[N + 1] = { 0 };

	rig_init(&g, N, O_RDWR);
	script_good(g.ft, 4096);
	fake_target_set_gate(g.ft, true);
	for (unsigned tag = 1; tag <= N; tag++) {
		h = v3_read(&b[tag], tag, 4096, 100 + tag);
		write_ok(&g, &h, V3, 0);
	}
	cr_assert(fake_target_wait_entered(g.ft, N), "not all commands reached the target");
	for (unsigned i = 0; i < N; i++) {
		fake_target_open(g.ft, order[i]);
		wait_done(&g, i + 1);
	}
	for (unsigned i = 0; i < N; i++) {
		const struct sg_io_hdr *out = v3_out(read_ok(&g, V3, O_NONBLOCK));
		unsigned tag = out->pack_id - 100;

		cr_assert(eq(int, out->pack_id, 100 + order[i]), "read %u", i);
		cr_expect(eq(ptr, out->dxferp, b[tag].data));
		cr_expect(is_data_in(b[tag].data, 4096, tag), "command %u's data", tag);
		seen[tag]++;
	}
	for (unsigned tag = 1; tag <= N; tag++)
		cr_expect(eq(u32, seen[tag], 1), "command %u delivered once", tag);
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN), "a sixth completion");
	rig_fini(&g);
}

/* ---- queue depth ---- */

ParameterizedTestParameters(async, v3_seventeenth_outstanding_write_is_edom)
{
	static int flags[] = { 0, O_NONBLOCK };

	return cr_make_param_array(int, flags, 2);
}

ParameterizedTest(int *flags, async, v3_seventeenth_outstanding_write_is_edom)
{
	struct fake_cmd *b = calloc(SG_MAX_QUEUE + 1, sizeof(*b));
	struct sg_io_hdr h;
	struct rig g;

	cr_assert(not(eq(ptr, b, NULL)));
	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	for (int i = 0; i < SG_MAX_QUEUE; i++) {
		h = v3_read(&b[i], i, 512, i);
		cr_assert(eq(sz, write_ok(&g, &h, V3, *flags), V3), "write %d", i);
	}
	h = v3_read(&b[SG_MAX_QUEUE], SG_MAX_QUEUE, 512, SG_MAX_QUEUE);
	/* unread completions count: a slot is freed by read(), not by completion */
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, *flags)), EDOM),
		  "sg: EDOM, blocking or not");
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, *flags)), EDOM));
	read_ok(&g, V3, 0);
	cr_expect(eq(sz, write_ok(&g, &h, V3, *flags), V3), "a read frees a slot");
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), SG_MAX_QUEUE + 1), "a refused write never ran");
	rig_fini(&g);
	free(b);
}

/* --queue-depth N: the node's depth for v3 writes; without it (0) sg's 16 */
struct depth_case {
	unsigned queue_depth; /* d->queue_depth, as the option sets it */
	unsigned limit;	      /* what an open file may then have outstanding */
	int flags;
};

ParameterizedTestParameters(async, v3_write_past_the_nodes_queue_depth_is_edom)
{
	static struct depth_case cases[] = {
		{ .queue_depth = 0, .limit = SG_MAX_QUEUE, .flags = 0 },
		{ .queue_depth = 0, .limit = SG_MAX_QUEUE, .flags = O_NONBLOCK },
		{ .queue_depth = 64, .limit = 64, .flags = 0 },
		{ .queue_depth = 64, .limit = 64, .flags = O_NONBLOCK },
		{ .queue_depth = BSGDEV_MAX_DEPTH, .limit = BSGDEV_MAX_DEPTH, .flags = 0 },
	};

	return cr_make_param_array(struct depth_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct depth_case *dc, async, v3_write_past_the_nodes_queue_depth_is_edom)
{
	struct fake_cmd *b = calloc(dc->limit + 1, sizeof(*b));
	struct sg_io_hdr h;
	struct rig g;

	cr_assert(not(eq(ptr, b, NULL)));
	rig_init(&g, 2, O_RDWR);
	g.d.queue_depth = dc->queue_depth;
	script_good(g.ft, 512);
	for (unsigned i = 0; i < dc->limit; i++) {
		h = v3_read(&b[i], i, 512, (int)i);
		cr_assert(eq(sz, write_ok(&g, &h, V3, dc->flags), V3), "write %u of %u", i + 1,
			  dc->limit);
	}
	h = v3_read(&b[dc->limit], dc->limit, 512, (int)dc->limit);
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, dc->flags)), EDOM), "write %u: EDOM",
		  dc->limit + 1);
	cr_expect(eq(int, ioctl_get(&g, SG_GET_COMMAND_Q), 1), "sg's switch, whatever the depth");
	read_ok(&g, V3, 0);
	cr_expect(eq(sz, write_ok(&g, &h, V3, dc->flags), V3), "a read frees a slot");
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), dc->limit + 1), "a refused write never ran");
	rig_fini(&g);
	free(b);
}

/*
 * An sg target runs 16 commands of a descriptor at once: the rest of a
 * deeper v3 queue waits in the daemon, in the order written, and starts as
 * those end; every completion comes back, and sg's request table stays 16
 * entries long.
 */
Test(async, v3_queue_deeper_than_the_targets_slots_waits_in_order)
{
	enum { N = 64 };
	struct fake_cmd *b = calloc(N, sizeof(*b));
	struct sg_req_info t[SG_MAX_QUEUE + 1];
	bool seen[N + 1] = { false };
	struct rig g;

	cr_assert(not(eq(ptr, b, NULL)));
	rig_init(&g, SG_MAX_QUEUE, O_RDWR);
	g.d.queue_depth = N;
	g.d.max_running = SG_MAX_QUEUE; /* as node.c sets it for an sg target */
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	write_v3_reads(&g, b, N, 1);
	cr_assert(fake_target_wait_entered(g.ft, SG_MAX_QUEUE));
	cr_expect(eq(u32, fake_target_calls(g.ft), SG_MAX_QUEUE), "16 at the target, 48 held back");

	memset(t, FAKE_UNTOUCHED, sizeof(t));
	cr_assert(zero(int, call_ioctl(&g, SG_GET_REQUEST_TABLE, t)));
	for (int i = 0; i < SG_MAX_QUEUE; i++) {
		cr_expect(eq(int, t[i].req_state, 1), "entry %d: running", i);
		cr_expect(eq(int, t[i].pack_id, i + 1), "entry %d: the oldest first", i);
	}
	cr_expect(fake_all_bytes((unsigned char *)&t[SG_MAX_QUEUE], sizeof(t[0]), FAKE_UNTOUCHED),
		  "sg's 16 entries, not one more");

	fake_target_open(g.ft, 1);
	wait_done(&g, 1);
	cr_assert(fake_target_wait_entered(g.ft, SG_MAX_QUEUE + 1), "an end lets the next start");
	cr_expect(eq(u8, g.ft->seen.cdb[FAKE_TAG_BYTE], SG_MAX_QUEUE + 1),
		  "the oldest held back goes first");
	fake_target_set_gate(g.ft, false);
	wait_done(&g, N);
	cr_expect(eq(int, ioctl_get(&g, SG_GET_NUM_WAITING), N));
	for (int i = 0; i < N; i++) {
		const struct sg_io_hdr *out = v3_out(read_ok(&g, V3, 0));
		int id = out->pack_id;

		cr_assert(id >= 1 && id <= N && !seen[id], "pack_id %d once", id);
		seen[id] = true;
		cr_expect(zero(int, out->status));
		cr_expect(is_data_in(b[id - 1].data, 512, id), "command %d's data", id);
	}
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), N));
	rig_fini(&g);
	free(b);
}

Test(async, poll_says_pollout_up_to_the_v3_depth_of_the_node)
{
	enum { N = 64, FIRST = 20 };
	struct fake_cmd *b = calloc(N, sizeof(*b));
	struct rig g;

	cr_assert(not(eq(ptr, b, NULL)));
	rig_init(&g, 2, O_RDWR);
	g.d.queue_depth = N;
	script_good(g.ft, 512);
	write_v3_reads(&g, b, FIRST, 0);
	wait_done(&g, FIRST);
	cr_expect(eq(u32, poll_once(&g, NULL), POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM),
		  "past sg's 16 a v3 writer still has room");
	write_v3_reads(&g, b + FIRST, N - FIRST, FIRST);
	wait_done(&g, N);
	cr_expect(eq(u32, poll_once(&g, NULL), POLLIN | POLLRDNORM), "full at the node's depth");
	rig_fini(&g);
	free(b);
}

/* A deep queue holds no more data than --opener-memory: past it, ENOMEM. */
Test(async, deep_v3_queue_is_bounded_by_the_openers_memory)
{
	enum { N = 64, FIT = 20 };
	struct fake_cmd *b = calloc(N, sizeof(*b));
	struct sg_io_hdr h;
	struct rig g;

	cr_assert(not(eq(ptr, b, NULL)));
	rig_init(&g, 2, O_RDWR);
	g.d.queue_depth = N;
	g.d.opener_mem_max = FIT * 512;
	script_good(g.ft, 512);
	write_v3_reads(&g, b, FIT, 0);
	h = v3_read(&b[FIT], FIT, 512, FIT);
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, 0)), ENOMEM),
		  "the 21st command's buffer is past the open file's bound");
	read_ok(&g, V3, 0);
	cr_expect(eq(sz, write_ok(&g, &h, V3, 0), V3), "a read gives its buffer back");
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), FIT + 1));
	rig_fini(&g);
	free(b);
}

Test(async, v4_write_past_command_q_nonblocking_is_eagain)
{
	enum { Q = 4 };
	struct fake_cmd b[Q + 1];
	struct sg_io_v4 h[Q + 1];
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	ioctl_set(&g, SG_SET_COMMAND_Q, Q); /* bsg: the queue depth */
	for (int i = 0; i <= Q; i++)
		h[i] = v4_read(&b[i], i, 512, i);
	cr_expect(eq(sz, write_ok(&g, h, Q * V4, O_NONBLOCK), Q * V4));
	cr_expect(eq(int, err_of(call_write(&g, &h[Q], V4, O_NONBLOCK)), EAGAIN));
	wait_done(&g, Q);
	cr_expect(eq(int, err_of(call_write(&g, &h[Q], V4, O_NONBLOCK)), EAGAIN),
		  "completions still unread hold their slots");
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), Q));
	rig_fini(&g);
}

Test(async, v4_blocking_write_past_the_limit_parks_until_a_read_frees_a_slot)
{
	enum { Q = 2 };
	struct fake_cmd b[Q + 1];
	struct sg_io_v4 h[Q + 1];
	struct fake_reply *rep;
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	atomic_store(&g.o->cmd_q, Q);
	for (int i = 0; i <= Q; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	cr_expect(eq(sz, write_ok(&g, h, Q * V4, 0), Q * V4));
	wait_done(&g, Q);
	w = call_write(&g, &h[Q], V4, 0);
	cr_expect(zero(u32, fake_req_replies(w)), "a blocking writer waits for room");
	cr_expect(eq(u32, fake_target_calls(g.ft), Q), "and its header is not submitted");

	rep = read_ok(&g, V4, 0);
	cr_expect(eq(sz, rep->len, V4));
	rep = reply_of(w);
	cr_assert(eq(int, rep->kind, FAKE_WRITE),
		  "the parked write is answered once a slot is free");
	cr_expect(eq(sz, rep->count, V4));
	wait_done(&g, 2);
	rep = read_ok(&g, 2 * V4, 0);
	cr_expect(eq(sz, rep->len, 2 * V4));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), Q + 1));
	cr_expect(eq(u32, fake_req_replies(w), 1));
	cr_expect(is_data_in(b[Q].data, 512, Q + 1), "the resumed write's command ran");
	rig_fini(&g);
}

Test(async, v4_array_that_fits_partly_is_a_short_write)
{
	struct fake_cmd b[4];
	struct sg_io_v4 h[4];
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	atomic_store(&g.o->cmd_q, 3);
	for (int i = 0; i < 4; i++)
		h[i] = v4_read(&b[i], i, 512, i);
	cr_expect(eq(sz, write_ok(&g, h, V4, O_NONBLOCK), V4));
	cr_expect(eq(sz, write_ok(&g, &h[1], 3 * V4, 0), 2 * V4),
		  "what fits is taken, blocking or not, and the count says so");
	cr_expect(eq(int, err_of(call_write(&g, &h[3], V4, O_NONBLOCK)), EAGAIN));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 3));
	rig_fini(&g);
}

Test(async, v4_array_stops_at_a_bad_header)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	for (int i = 0; i < 3; i++)
		h[i] = v4_read(&b[i], i, 512, i);
	h[1].request_len = 0; /* no CDB */
	cr_expect(eq(sz, write_ok(&g, h, 3 * V4, 0), V4), "the headers before it are taken");
	cr_expect(eq(int, err_of(call_write(&g, &h[1], 2 * V4, 0)), EINVAL),
		  "the client's retry from the bad one fails");
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 1));
	rig_fini(&g);
}

/* ---- reads with nothing done ---- */

Test(async, nonblocking_read_with_nothing_done_is_eagain)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;

	rig_init(&g, 2, O_RDWR);
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN), "nothing written");
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_held(&g, &h);
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN), "one still running");
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	fake_target_release(g.ft);
	read_ok(&g, V3, 0);
	rig_fini(&g);
}

Test(async, blocking_read_parks_until_a_command_completes)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct fake_reply *rep;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	script_check(g.ft, 4096, 0);
	h = v3_read(&b, 6, 4096, 61);
	write_held(&g, &h);
	r = call_read(&g, V3, 0);
	cr_expect(zero(u32, fake_req_replies(r)), "parked, without a reply");
	fake_target_release(g.ft);
	rep = reply_of(r);
	cr_assert(eq(int, rep->kind, FAKE_BUF), "the parked read is answered by the completion");
	cr_expect(eq(int, v3_out(rep)->pack_id, 61));
	cr_expect(eq(u8, v3_out(rep)->sb_len_wr, 18));
	cr_expect(is_data_in(b.data, 4096, 6), "data-in copied to the parked reader");
	cr_expect(zero(int, memcmp(b.sense, g.ft->script.sense, 18)));
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	rig_fini(&g);
}

/*
 * The file's v4 queue two deep (cmd_q) and full: h[0] and h[1], READs 1
 * and 2 of b, written; h[2], READ 3, ready for a write that must wait.
 */
static void queue_full(struct rig *g, struct fake_cmd *b, struct sg_io_v4 *h)
{
	atomic_store(&g->o->cmd_q, 2);
	for (int i = 0; i < 3; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	write_ok(g, h, 2 * V4, 0);
}

/* ---- interrupts ---- */

Test(async, parked_read_interrupted_gets_eintr_once)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_held(&g, &h);
	r = call_read(&g, V3, 0);
	cr_assert(zero(u32, fake_req_replies(r)));
	fake_interrupt(r);
	cr_assert(eq(u32, fake_req_replies(r), 1), "EINTR from the interrupt callback itself");
	cr_expect(eq(int, err_of(r), EINTR));
	cr_expect(eq(ulong, stat_get(&g, STAT_INTERRUPT), 1));

	fake_target_release(g.ft);
	wait_done(&g, 1); /* the completion is not given to the interrupted reader */
	cr_expect(eq(int, v3_out(read_ok(&g, V3, O_NONBLOCK))->pack_id, 1));
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	rig_fini(&g);
}

/* ---- copies into parked readers hold their user's share of threads ---- */

/* The rig with an elastic pool for copies, its file in a share of one call a user. */
struct share_rig {
	struct share *s;
	struct share_file *sf, *other; /* the rig's file; another file of the same user */
	struct share_call held;	       /* a call of the user on the other file, holding its share */
};

static void share_rig_init(struct rig *g, struct share_rig *sr)
{
	const struct share_limits lim = {
		.max_files = 8, .files_per_user = 8, .calls_per_file = 1, .calls_per_user = 1
	};

	cr_assert(zero(int, pool_new_elastic(4, &g->d.serve)));
	cr_assert(zero(int, share_new(&lim, &sr->s)));
	cr_assert(zero(int, share_file_open(sr->s, getuid(), &sr->sf)));
	cr_assert(zero(int, share_file_open(sr->s, getuid(), &sr->other)));
	cmdq_set_share(g->o, sr->s, sr->sf, getuid());
	cr_assert(share_enter(sr->other, getuid(), &sr->held), "the user's one share");
}

/* The user's calls parked (or holding a share, if busy) reach n; no sleep, the test's timeout bounds it. */
static void share_wait_counts(struct share_rig *sr, unsigned want_busy, unsigned want_parked)
{
	unsigned busy, parked, files;

	for (;;) {
		share_user_counts(sr->s, getuid(), &busy, &parked, &files);
		if (busy == want_busy && parked == want_parked)
			return;
		sched_yield();
	}
}

/* The node's end, the rig's file released and closed: the other file, the pools, the share. */
static void share_rig_end(struct rig *g, struct share_rig *sr)
{
	share_file_close(sr->other);
	rig_stop(g);
	pool_free(g->d.serve);
	g->d.serve = NULL;
	rig_fini(g);
	share_free(sr->s);
}

/* As cb_release() then node's end: the opener, its share_files, the pools. */
static void share_rig_fini(struct rig *g, struct share_rig *sr)
{
	rig_release(g);
	share_file_close(sr->sf);
	share_rig_end(g, sr);
}

Test(async, copy_into_a_parked_reader_waits_for_its_users_share)
{
	struct rig g;
	struct share_rig sr;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct fake_reply *rep;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	share_rig_init(&g, &sr);
	script_check(g.ft, 4096, 0);
	h = v3_read(&b, 6, 4096, 62);
	write_held(&g, &h);
	r = call_read(&g, V3, 0);
	cr_assert(zero(u32, fake_req_replies(r)), "parked, without a reply");
	fake_target_release(g.ft);
	/* the completion's copy into the reader waits parked for the user's share */
	share_wait_counts(&sr, 1, 1);
	cr_expect(zero(u32, fake_req_replies(r)), "not copied while the user's share is held");
	share_end(&sr.held); /* the user's call ends: its share goes to the copy */
	rep = reply_of(r);
	cr_assert(eq(int, rep->kind, FAKE_BUF), "the parked read is answered by the completion");
	cr_expect(eq(int, v3_out(rep)->pack_id, 62));
	cr_expect(is_data_in(b.data, 4096, 6), "data-in copied to the parked reader");
	share_wait_counts(&sr, 0, 0); /* the copy gave its share back */
	cr_expect(eq(u32, fake_req_replies(r), 1));
	share_rig_fini(&g, &sr);
}

/*
 * On a thread of its file's, holding its share, a written command runs there,
 * blocking, once the write() is answered, and the parked reader it satisfies
 * is answered there too: no completion thread, no copy job.  On a slow
 * device, past the budget of workers that run commands, or on a thread that
 * is not the file's, it goes to the target's queue.
 */
Test(async, a_written_command_runs_on_its_writers_thread_within_the_budget)
{
	struct rig g;
	struct share_rig sr;
	struct share_call mine;
	struct target_ops ops;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct sg_io_v4 v4[3];
	fuse_req_t r;

	rig_init(&g, 1, O_RDWR);
	share_rig_init(&g, &sr);
	share_end(&sr.held); /* the user's one share: this thread's call on the rig's file */
	cr_assert(share_enter(sr.sf, getuid(), &mine));
	share_set_current(&mine);
	handoff_install(&g, &ops);
	g.d.inline_max = 1;

	r = call_read(&g, V3, 0);
	cr_assert(zero(u32, fake_req_replies(r)), "parked, without a reply");
	h = v3_read(&b, 1, 512, 21);
	handoff_write(&g, &h, V3);
	cr_expect(eq(u32, handoff.here, 1), "run here, blocking");
	cr_expect(zero(u32, handoff.n), "not through the queue");
	cr_expect(eq(u32, handoff.here_answers, 1), "after the write's answer");
	/* a copy job would wait for the user's one share, which this thread holds */
	cr_assert(eq(u32, fake_req_replies(r), 1), "the parked reader is answered here");
	cr_expect(eq(int, v3_out(reply_of(r))->pack_id, 21));
	cr_expect(zero(u32, atomic_load(&g.d.inline_busy)), "the budget given back");

	/* a call's several commands: here, one after another, on a fast device only */
	for (int i = 0; i < 3; i++)
		v4[i] = v4_read(&b, 4, 512, 30 + i);
	handoff_write(&g, v4, sizeof(v4));
	cr_expect(eq(u32, handoff.here, 4), "three more here: the device is fast");
	cr_expect(eq(sz, read_ok(&g, 3 * V4, 0)->len, 3 * V4));
	atomic_store(&g.d.target_us, 5000); /* 5 ms a command: the device gets them at once */
	handoff_write(&g, v4, sizeof(v4));
	cr_expect(eq(u32, handoff.n, 3), "a slow device's: through the queue");
	cr_expect(eq(u32, handoff.here, 4));
	cr_expect(eq(sz, read_ok(&g, 3 * V4, 0)->len, 3 * V4));
	h = v3_read(&b, 5, 512, 24);
	handoff_write(&g, &h, V3);
	cr_expect(eq(u32, handoff.n, 4), "a call's one command too: the queue, no thread held");
	cr_expect(eq(u32, handoff.here, 4));
	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 24));
	atomic_store(&g.d.target_us, 0);
	handoff.n = 0;
	handoff.here = 1;

	atomic_store(&g.d.inline_busy, 1); /* another worker runs a command */
	h = v3_read(&b, 2, 512, 22);
	handoff_write(&g, &h, V3);
	cr_expect(eq(u32, handoff.n, 1), "past the budget: the queue");
	cr_expect(eq(u32, handoff.here, 1));
	atomic_store(&g.d.inline_busy, 0);
	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 22));

	share_set_current(NULL);
	share_end(&mine);
	h = v3_read(&b, 3, 512, 23);
	handoff_write(&g, &h, V3);
	cr_expect(eq(u32, handoff.n, 2), "not the file's thread: the queue");
	cr_expect(eq(u32, handoff.here, 1));
	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 23));
	share_rig_fini(&g, &sr);
}

Test(async, copy_parked_for_its_share_is_dropped_when_the_file_goes)
{
	struct rig g;
	struct share_rig sr;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	share_rig_init(&g, &sr);
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_held(&g, &h);
	r = call_read(&g, V3, 0);
	fake_target_release(g.ft);
	share_wait_counts(&sr, 1, 1);
	fake_interrupt(r); /* the reader goes, then its file */
	cr_expect(eq(int, err_of(r), EINTR));
	rig_release(&g);
	share_wait_counts(&sr, 1, 0); /* the parked copy was dropped with the file */
	share_end(&sr.held);	      /* resumes nothing */
	share_wait_counts(&sr, 0, 0);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	share_file_close(sr.sf);
	share_rig_end(&g, &sr);
}

struct late_job {
	struct copy_job c;
	bool ran, dropped;
};

static void late_ran(struct copy_job *c)
{
	struct late_job *j = container_of(c, struct late_job, c);

	j->ran = true;
	opener_put(c->o);
}

static void late_dropped(struct copy_job *c)
{
	struct late_job *j = container_of(c, struct late_job, c);

	j->dropped = true;
	opener_put(c->o);
}

/*
 * A completion saw a reader parked and made a copy job; the reader took
 * EINTR, and the file was released and its share_file closed, before the
 * job was submitted.  It is dropped, without a look at the freed share_file.
 */
Test(async, copy_submitted_after_the_release_is_dropped)
{
	struct rig g;
	struct share_rig sr;
	struct late_job j = { 0 };
	struct opener *o;

	rig_init(&g, 2, O_RDWR);
	share_rig_init(&g, &sr);
	o = g.o;
	opener_get(o); /* the job's, as cmdq_serve_later() takes it */
	rig_release(&g);
	share_file_close(sr.sf); /* freed: no call of the file holds a thread */
	j.c = (struct copy_job){ .o = o, .run = late_ran, .drop = late_dropped };
	copyjob_submit(&j.c);
	cr_expect(j.dropped, "a job of a released file runs");
	cr_expect(not(j.ran));
	share_end(&sr.held);
	share_rig_end(&g, &sr);
}

Test(async, parked_write_interrupted_gets_eintr_once)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	queue_full(&g, b, h);
	w = call_write(&g, &h[2], V4, 0);
	cr_assert(zero(u32, fake_req_replies(w)));
	fake_interrupt(w);
	cr_assert(eq(u32, fake_req_replies(w), 1), "EINTR from the interrupt callback itself");
	cr_expect(eq(int, err_of(w), EINTR));

	fake_target_set_gate(g.ft, false);
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), 2), "the interrupted write was submitted");
	cr_expect(eq(u32, fake_req_replies(w), 1));
	cr_expect(fake_all_bytes(b[2].data, sizeof(b[2].data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(async, read_interrupted_before_it_parks_gets_eintr)
{
	struct rig g;
	fuse_req_t r;

	rig_init(&g, 1, O_RDWR);
	r = fake_req_new(g.fs);
	fake_interrupt(r); /* the INTERRUPT came before the callback registered */
	async_read(r, g.o, V3, 0);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	cr_expect(eq(int, err_of(r), EINTR));
	rig_fini(&g);
}

Test(async, write_interrupted_before_it_parks_gets_eintr)
{
	struct fake_cmd b[2];
	struct sg_io_v4 h[2];
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	atomic_store(&g.o->cmd_q, 1); /* 0 and 1 are sg's switch: the v4 depth stays 16 */
	for (int i = 0; i < 2; i++)
		h[i] = v4_read(&b[i], i, 512, i);
	for (int i = 0; i < SG_MAX_QUEUE; i++)
		write_ok(&g, &h[0], V4, 0);
	w = fake_req_new(g.fs);
	fake_interrupt(w);
	async_write(w, g.o, (const char *)&h[1], V4, 0);
	cr_expect(eq(u32, fake_req_replies(w), 1));
	cr_expect(eq(int, err_of(w), EINTR));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), SG_MAX_QUEUE));
	rig_fini(&g);
}

Test(async, interrupt_after_the_answer_is_ignored)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct fake_reply *rep;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_ok(&g, &h, V3, 0);
	rep = read_ok(&g, V3, 0);
	fake_interrupt(rep->req);
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(rep->req), 1));
	cr_expect(zero(ulong, stat_get(&g, STAT_INTERRUPT)));
	rig_fini(&g);
}

/* ---- signals that end nothing: a stop, the freezer ---- */

Test(async, parked_read_stopped_waits_on_and_takes_its_completion)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	rig_judged(&g, false);
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_held(&g, &h);
	r = call_read(&g, V3, 0);
	fake_interrupt(r); /* SIGSTOP: FUSE interrupts, sg's read would go on */
	cr_expect(zero(u32, fake_req_replies(r)), "no EINTR for a signal that ends nothing");
	fake_target_release(g.ft);
	cr_expect(eq(int, v3_out(reply_of(r))->pack_id, 1), "the completion, to the same read");
	cr_expect(is_data_in(b.data, 512, 1));
	cr_expect(zero(ulong, stat_get(&g, STAT_INTERRUPT)));
	rig_fini(&g);
}

Test(async, parked_read_watched_gets_eintr_once_a_signal_ends_it)
{
	struct rig g;
	fuse_req_t r;

	rig_init(&g, 1, O_RDWR);
	rig_judged(&g, false);
	r = call_read(&g, V3, 0);
	fake_interrupt(r);
	cr_expect(zero(u32, fake_req_replies(r)));
	rig_judged(&g, true); /* then SIGUSR1 with a handler, or SIGKILL */
	cr_expect(eq(int, err_of(r), EINTR), "the watcher answers it");
	cr_expect(eq(ulong, stat_get(&g, STAT_INTERRUPT), 1));
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	rig_fini(&g);
}

Test(async, interrupt_before_parking_is_watched_too)
{
	struct rig g;
	fuse_req_t r;

	rig_init(&g, 1, O_RDWR);
	rig_judged(&g, false);
	r = fake_req_new(g.fs);
	fake_interrupt(r);
	async_read(r, g.o, V3, 0);
	cr_expect(zero(u32, fake_req_replies(r)), "parked, not answered");
	rig_judged(&g, true);
	cr_expect(eq(int, err_of(r), EINTR));
	rig_fini(&g);
}

Test(async, stopped_writer_waits_for_room_and_is_taken)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 2, O_RDWR);
	rig_judged(&g, false);
	script_good(g.ft, 512);
	queue_full(&g, b, h);
	w = call_write(&g, &h[2], V4, 0);
	fake_interrupt(w);
	cr_expect(zero(u32, fake_req_replies(w)));
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4), "room for the parked write");
	cr_expect(eq(int, reply_of(w)->kind, FAKE_WRITE), "the write goes in after the stop");
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	rig_fini(&g);
}

/* ---- a blocked write's copy is charged ---- */

Test(async, blocked_write_past_the_opener_bound_gets_enomem)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	queue_full(&g, b, h);
	g.d.opener_mem_max = atomic_load(&g.o->mem_used) + V4 - 1;
	cr_expect(eq(int, err_of(call_write(&g, &h[2], V4, 0)), ENOMEM), "no room to copy it");
	g.d.opener_mem_max = 0;
	fake_target_set_gate(g.ft, false);
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	rig_fini(&g);
}

Test(async, blocked_write_charge_is_given_back)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct mem_budget mem = { .max = 1u << 30 };
	unsigned long long before;
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 2, O_RDWR);
	g.d.mem = &mem;
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	queue_full(&g, b, h);
	before = atomic_load(&mem.used);
	w = call_write(&g, &h[2], V4, 0);
	cr_expect(eq(ulong, (unsigned long)(atomic_load(&mem.used) - before), V4),
		  "the parked copy, charged");
	fake_interrupt(w);
	cr_expect(eq(int, err_of(w), EINTR));
	cr_expect(eq(ulong, (unsigned long)atomic_load(&mem.used), (unsigned long)before),
		  "given back with the call");
	fake_target_set_gate(g.ft, false);
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	cr_expect(eq(sz, read_ok(&g, V4, 0)->len, V4));
	rig_fini(&g);
}

/* ---- v4 arrays ---- */

ParameterizedTestParameters(async, v4_array_read_back_in_reads_of_1_5_20_and_16)
{
	static unsigned n[] = { 1, 7, 64 };

	return cr_make_param_array(unsigned, n, 3);
}

/* One worker: commands complete in submission order, so reads return it. */
ParameterizedTest(unsigned *np, async, v4_array_read_back_in_reads_of_1_5_20_and_16)
{
	static const unsigned sizes[] = { 1, 5, 20 };
	unsigned n = *np, got = 0, calls = 0;
	struct fake_cmd *b = calloc(n, sizeof(*b));
	struct sg_io_v4 *h = calloc(n, sizeof(*h));
	struct rig g;

	cr_assert(b && h);
	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	ioctl_set(&g, SG_SET_COMMAND_Q, 64);
	for (unsigned i = 0; i < n; i++)
		h[i] = v4_read(&b[i], i + 1, 512, 1000 + i);
	cr_expect(eq(sz, write_ok(&g, h, n * V4, 0), n * V4));
	wait_done(&g, n);
	while (got < n) {
		unsigned want = calls < 3 ? sizes[calls] : 16;
		unsigned expect = want < 16 ? want : 16;
		struct fake_reply *rep = read_ok(&g, want * V4, O_NONBLOCK);

		if (expect > n - got)
			expect = n - got;
		cr_assert(eq(sz, rep->len, expect * V4), "read %u of %u headers' room", calls,
			  want);
		for (unsigned k = 0; k < expect; k++, got++) {
			struct sg_io_v4 o = v4_out(rep, k);

			cr_assert(eq(int, (int)o.request_extra, (int)(1000 + got)), "header %u",
				  got);
			cr_expect(eq(u64, o.usr_ptr, FAKE_USR_PTR(1000 + got)));
			cr_expect(eq(u64, o.din_xferp, (uintptr_t)b[got].data));
			cr_expect(zero(u32, o.device_status));
			cr_expect(zero(u32, o.info));
			cr_expect(zero(i32, o.din_resid));
			cr_expect(is_data_in(b[got].data, 512, got + 1), "command %u's data", got);
			cr_expect(
				fake_all_bytes(b[got].sense, sizeof(b[got].sense), FAKE_UNTOUCHED));
		}
		calls++;
	}
	cr_expect(eq(int, err_of(call_read(&g, V4, O_NONBLOCK)), EAGAIN));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), n));
	rig_fini(&g);
	free(h);
	free(b);
}

enum hdr_kind { HDR_V3, HDR_V4, HDR_SG_HEADER, HDR_BAD_ID };

struct size_case {
	char name[40];
	enum hdr_kind kind;
	size_t size;
	int err;
};

ParameterizedTestParameters(async, write_size_and_header_rules)
{
	static struct size_case cases[] = {
		{ "v4 under a header", HDR_V4, 100, EINVAL },
		{ "v4 one byte short", HDR_V4, V4 - 1, EINVAL },
		{ "v4 not a multiple", HDR_V4, V4 + 40, EINVAL },
		{ "v4 two and a byte", HDR_V4, 2 * V4 + 1, EINVAL },
		{ "v3 one byte short", HDR_V3, V3 - 1, EINVAL },
		{ "v3 at 36", HDR_V3, 36, EINVAL },
		{ "v3 under sg_header", HDR_V3, 35, EIO },
		{ "v3 tiny", HDR_V3, 4, EIO },
		{ "v3 empty", HDR_V3, 0, EIO },
		{ "legacy sg_header", HDR_SG_HEADER, 36, EINVAL },
		{ "legacy sg_header, long", HDR_SG_HEADER, 100, EINVAL },
		{ "bad interface_id", HDR_BAD_ID, V3, ENOSYS },
	};

	return cr_make_param_array(struct size_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct size_case *tc, async, write_size_and_header_rules)
{
	unsigned char buf[4 * V4];
	struct fake_cmd b[4];
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 4; i++) {
		struct sg_io_v4 h4 = v4_read(&b[i], i, 512, i);
		struct sg_io_hdr h3 = v3_read(&b[i], i, 512, i);

		if (tc->kind == HDR_V4)
			memcpy(buf + i * V4, &h4, V4);
		else if (i == 0)
			memcpy(buf, &h3, V3);
	}
	if (tc->kind == HDR_SG_HEADER) {
		struct sg_header old = { .pack_len = 36, .reply_len = 36, .pack_id = 1 };

		memcpy(buf, &old, sizeof(old));
	}
	if (tc->kind == HDR_BAD_ID)
		((struct sg_io_hdr *)buf)->interface_id = 'Z';
	cr_expect(eq(int, err_of(call_write(&g, buf, tc->size, 0)), tc->err), "%s", tc->name);
	cr_expect(eq(int, err_of(call_write(&g, buf, tc->size, O_NONBLOCK)), tc->err), "%s",
		  tc->name);
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)), "%s", tc->name);
	cr_expect(zero(int, cmdq_num_waiting(g.o)), "%s", tc->name);
	rig_fini(&g);
}

/*
 * The kernel cuts writes over 32 pages at the page boundaries of the
 * writer's buffer: a piece may end inside a header, and the first piece of
 * a buffer that starts inside a page is shorter than 32 pages.
 */
Test(async, v4_piece_of_a_split_write_takes_whole_headers)
{
	static const size_t sizes[] = { 32 << 12, (32 << 12) - 100, (32 << 12) - 4095 };
	unsigned char *buf = calloc(1, 32 << 12);
	struct fake_cmd b[2];

	cr_assert(not(eq(ptr, buf, NULL)));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct rig g;

		rig_init(&g, 1, O_RDWR);
		script_good(g.ft, 512);
		atomic_store(&g.o->cmd_q, 2);
		for (int i = 0; i < 2; i++) {
			struct sg_io_v4 h = v4_read(&b[i], i, 512, i);

			memcpy(buf + i * V4, &h, V4);
		}
		cr_assert(not(zero(u32, sizes[k] % V4)));
		cr_expect(eq(sz, write_ok(&g, buf, sizes[k], O_NONBLOCK), 2 * V4),
			  "a piece of %zu bytes: what fits, a short write", sizes[k]);
		wait_done(&g, 2);
		cr_expect(eq(sz, read_ok(&g, 2 * V4, 0)->len, 2 * V4));
		rig_stop(&g);
		cr_expect(eq(u32, fake_target_calls(g.ft), 2));
		rig_fini(&g);
	}
	free(buf);
}

/* A write no piece of a split could be: only whole headers, as bsg took. */
Test(async, v4_write_of_31_pages_not_in_headers_is_einval)
{
	unsigned char *buf = calloc(1, 31 << 12);
	struct fake_cmd b;
	struct sg_io_v4 h = v4_read(&b, 1, 512, 1);
	struct rig g;

	cr_assert(not(eq(ptr, buf, NULL)));
	memcpy(buf, &h, V4);
	rig_init(&g, 1, O_RDWR);
	cr_expect(eq(int, err_of(call_write(&g, buf, 31 << 12, O_NONBLOCK)), EINVAL));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
	free(buf);
}

/* ---- a read too small for the header ---- */

Test(async, v3_read_too_small_is_einval_and_drops_the_completion)
{
	struct rig g;
	struct fake_cmd b[2];

	rig_init(&g, 1, O_RDWR);
	script_check(g.ft, 512, 0);
	write_v3_reads(&g, b, 2, 1);
	wait_done(&g, 2);
	cr_expect(eq(int, err_of(call_read(&g, V3 - 1, 0)), EINVAL));
	cr_expect(eq(int, cmdq_num_waiting(g.o), 1), "sg drops that completion");
	cr_expect(fake_all_bytes(b[0].data, sizeof(b[0].data), FAKE_UNTOUCHED),
		  "nothing copied for it");
	cr_expect(fake_all_bytes(b[0].sense, sizeof(b[0].sense), FAKE_UNTOUCHED));
	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 2), "the next one is intact");
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN));
	rig_fini(&g);
}

Test(async, parked_read_too_small_is_einval_when_served)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t r;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	h = v3_read(&b, 1, 512, 1);
	write_held(&g, &h);
	r = call_read(&g, 40, 0);
	cr_assert(zero(u32, fake_req_replies(r)));
	fake_target_release(g.ft);
	cr_expect(eq(int, err_of(r), EINVAL));
	rig_stop(&g);
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(async, v4_read_too_small_is_einval_and_drops_the_completion)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_v4 h;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	h = v4_read(&b, 1, 512, 1);
	write_ok(&g, &h, V4, 0);
	wait_done(&g, 1);
	cr_expect(eq(int, err_of(call_read(&g, V4 - 1, 0)), EINVAL));
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

/* ---- a place at the target ---- */

Test(async, max_running_holds_the_rest_back_in_order)
{
	struct rig g;
	struct fake_cmd b[4];

	rig_init(&g, 4, O_RDWR);
	g.d.max_running = 2;	 /* as an sg descriptor's slots */
	g.d.slots_shared = true; /* one open file's (a binding's): no more channels */
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	write_v3_reads(&g, b, 4, 1);
	cr_assert(fake_target_wait_entered(g.ft, 2));
	cr_expect(eq(u32, fake_target_calls(g.ft), 2), "two at the target, two held back");
	cr_expect(eq(int, cmdq_num_waiting(g.o), 0));
	fake_target_open(g.ft, 2);
	wait_done(&g, 1);
	cr_assert(fake_target_wait_entered(g.ft, 3), "an end lets the next one start");
	cr_expect(eq(u8, g.ft->seen.cdb[FAKE_TAG_BYTE], 3), "the oldest held back goes first");
	fake_target_open(g.ft, 1);
	fake_target_open(g.ft, 3);
	fake_target_open(g.ft, 4);
	wait_done(&g, 4);
	for (int want = 2, i = 0; i < 4; i++) {
		const struct sg_io_hdr *out = v3_out(read_ok(&g, V3, 0));

		if (i == 0)
			cr_expect(eq(int, out->pack_id, want), "completion order");
		cr_expect(eq(int, out->status, 0));
	}
	cr_expect(eq(u32, fake_target_calls(g.ft), 4));
	rig_fini(&g);
}

/*
 * On descriptors of its own (a node's), a queue deeper than one channel's
 * slots opens more channels, each within its slots; once none of the
 * file's commands runs, the extra ones close.
 */
Test(async, a_deeper_queue_opens_more_channels_and_closes_them_when_idle)
{
	struct rig g;
	struct fake_cmd b[5];
	unsigned chans, per[3], open_after;

	rig_init(&g, 5, O_RDWR);
	g.d.max_running = 2; /* as an sg descriptor's slots */
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	write_v3_reads(&g, b, 5, 1);
	cr_assert(fake_target_wait_entered(g.ft, 5), "all five at the target");
	pthread_mutex_lock(&g.o->lock);
	chans = g.o->nchans;
	memcpy(per, g.o->chan_running, sizeof(per));
	pthread_mutex_unlock(&g.o->lock);
	cr_expect(eq(u32, chans, 3), "three channels of two slots");
	cr_expect(eq(u32, per[0] + per[1] + per[2], 5));
	cr_expect(per[0] <= 2 && per[1] <= 2 && per[2] <= 2, "none past its slots");
	for (uint8_t tag = 1; tag <= 5; tag++)
		fake_target_open(g.ft, tag);
	wait_done(&g, 5);
	pthread_mutex_lock(&g.o->lock);
	chans = g.o->nchans;
	pthread_mutex_unlock(&g.o->lock);
	cr_expect(eq(u32, chans, 1), "the extra channels taken off once none runs");
	for (int i = 0; i < 5; i++)
		cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->status, 0));
	rig_stop(&g); /* the pool's threads, which closed them after their answer, are done */
	open_after = fake_target_chans_open(g.ft);
	cr_expect(eq(u32, open_after, 1), "and closed: the target has only the first open");
	rig_fini(&g);
}

/* ---- the access policy ---- */

Test(async, policy_deny_refuses_a_write_too_and_leaves_the_queue_empty)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct filter_policy p;
	char why[128];
	const char text[] = "deny READ_10\n";

	rig_init(&g, 1, O_RDWR);
	cr_assert(zero(int, filter_parse(text, strlen(text), &p, why, sizeof(why))));
	cr_assert(zero(int, policy_new(&p, &g.d.policy)));
	g.d.policy_kernel = POLICY_KERNEL_OWN;
	h = v3_read(&b, 1, 512, 1);
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, 0)), EPERM), "denied for everyone");
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN), "nothing queued");
	cr_expect(eq(int, sg_io_errno(&g, &h), EPERM), "SG_IO alike");
	rig_fini(&g);
	policy_free(g.d.policy);
}

/* ---- release ---- */

Test(async, release_with_commands_running_touches_nothing_and_frees_all)
{
	struct rig g;
	struct fake_cmd b[3];
	unsigned replies;

	rig_init(&g, 3, O_RDWR);
	script_check(g.ft, 512, 0);
	fake_target_set_gate(g.ft, true);
	write_v3_reads(&g, b, 3, 1);
	cr_assert(fake_target_wait_entered(g.ft, 3));
	fake_target_open(g.ft, 1);
	wait_done(&g, 1); /* one done and unread, two running; and a poller */
	poll_once(&g, fake_pollhandle_new(g.fs));
	replies = fake_reply_count(g.fs);

	rig_release(&g);
	cr_expect(eq(u32, fake_target_chans_open(g.ft), 1),
		  "running commands keep the opener and its written commands' channel (SG_IO's "
		  "is opened only by a command)");
	fake_target_open(g.ft, 2);
	fake_target_open(g.ft, 3);
	rig_stop(&g);
	cr_expect(zero(u32, fake_pollhandles_live(g.fs)), "the poll handle goes with the file");
	cr_expect(eq(u32, fake_target_calls(g.ft), 3));
	cr_expect(eq(u32, fake_reply_count(g.fs), replies), "a reply after release");
	for (int i = 0; i < 3; i++) {
		cr_expect(fake_all_bytes(b[i].data, sizeof(b[i].data), FAKE_UNTOUCHED),
			  "command %d data", i);
		cr_expect(fake_all_bytes(b[i].sense, sizeof(b[i].sense), FAKE_UNTOUCHED),
			  "command %d sense", i);
	}
	cr_expect(zero(u32, fake_target_chans_open(g.ft)), "closed once, by the last command");
	rig_fini(&g);
}

Test(async, release_with_unread_completions_frees_them)
{
	struct rig g;
	struct fake_cmd b[2];
	struct sg_io_v4 h[2];
	unsigned replies;

	rig_init(&g, 1, O_RDWR);
	script_check(g.ft, 512, 0);
	for (int i = 0; i < 2; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	write_ok(&g, h, 2 * V4, 0);
	wait_done(&g, 2);
	replies = fake_reply_count(g.fs);
	rig_release(&g);
	cr_expect(zero(u32, fake_target_chans_open(g.ft)), "nothing running: closed at once");
	rig_stop(&g);
	cr_expect(eq(u32, fake_reply_count(g.fs), replies));
	for (int i = 0; i < 2; i++) {
		cr_expect(fake_all_bytes(b[i].data, sizeof(b[i].data), FAKE_UNTOUCHED),
			  "command %d data", i);
		cr_expect(fake_all_bytes(b[i].sense, sizeof(b[i].sense), FAKE_UNTOUCHED),
			  "command %d sense", i);
	}
	rig_fini(&g);
}

/* ---- who may call ---- */

Test(async, caller_with_other_credentials_is_eperm)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h3;
	struct sg_io_v4 h4;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	g.o->ident.c.uid[0] ^= 1; /* the file was opened by another real uid */
	h3 = v3_read(&b, 1, 512, 1);
	cr_expect(eq(int, err_of(call_write(&g, &h3, V3, 0)), EPERM));
	h4 = v4_read(&b, 1, 512, 1);
	cr_expect(eq(int, err_of(call_write(&g, &h4, V4, O_NONBLOCK)), EPERM));
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), EPERM));
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EPERM));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED));
	rig_fini(&g);
}

Test(async, without_the_direct_path_is_einval)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	fuse_req_t req;

	rig_init(&g, 1, O_RDWR);
	h = v3_read(&b, 1, 512, 1);
	/* a caller in another pid namespace: libfuse gives pid 0 */
	req = fake_req_new(g.fs);
	fake_req_ctx(req)->pid = 0;
	async_write(req, g.o, (const char *)&h, V3, 0);
	cr_expect(eq(int, err_of(req), EINVAL));
	req = fake_req_new(g.fs);
	fake_req_ctx(req)->pid = 0;
	async_read(req, g.o, V3, 0);
	cr_expect(eq(int, err_of(req), EINVAL));
	/* a daemon without CAP_SYS_PTRACE */
	g.d.direct = false;
	cr_expect(eq(int, err_of(call_write(&g, &h, V3, 0)), EINVAL));
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), EINVAL));
	rig_stop(&g);
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* ---- poll ---- */

Test(async, poll_reports_room_and_waiting_completions)
{
	struct rig g;
	struct fake_cmd b[SG_MAX_QUEUE];
	struct sg_io_hdr h;
	unsigned seen;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	cr_expect(eq(u32, poll_once(&g, NULL), POLLOUT | POLLWRNORM),
		  "empty: room, nothing to read");

	fake_target_set_gate(g.ft, true);
	h = v3_read(&b[0], 1, 512, 1);
	write_ok(&g, &h, V3, 0);
	cr_assert(fake_target_wait_entered(g.ft, 1));
	seen = fake_notify_count(g.fs);
	cr_expect(eq(u32, poll_once(&g, fake_pollhandle_new(g.fs)), POLLOUT | POLLWRNORM),
		  "running is not readable");
	poll_once(&g, fake_pollhandle_new(g.fs)); /* a newer poller: the old handle goes */
	cr_expect(eq(u32, fake_pollhandles_live(g.fs), 1));
	fake_target_open(g.ft, 1);
	cr_assert(fake_wait_notify(g.fs, seen), "a completion notifies the kept handle");
	cr_expect(eq(u32, fake_notify_count(g.fs), seen + 1));
	cr_expect(eq(u32, poll_once(&g, NULL), POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM));
	read_ok(&g, V3, 0);
	cr_expect(eq(u32, poll_once(&g, NULL), POLLOUT | POLLWRNORM), "read: nothing waits");

	/* full: no POLLOUT; a read that frees a slot wakes the poller */
	fake_target_set_gate(g.ft, false);
	write_v3_reads(&g, b, SG_MAX_QUEUE, 0);
	wait_done(&g, SG_MAX_QUEUE);
	rig_stop(&g); /* no worker runs from here: the next notification is the read's */
	cr_expect(le(u32, fake_pollhandles_live(g.fs), 1), "only the newest poller's is kept");
	seen = fake_notify_count(g.fs);
	cr_expect(eq(u32, poll_once(&g, fake_pollhandle_new(g.fs)), POLLIN | POLLRDNORM));
	read_ok(&g, V3, 0);
	cr_expect(fake_wait_notify(g.fs, seen), "room appeared: the poller is told");
	cr_expect(eq(u32, poll_once(&g, NULL), POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM));
	rig_fini(&g);
}

Test(async, target_gone_answers_parked_calls_enodev_and_wakes_the_poller)
{
	enum { Q = 2 };
	struct fake_cmd b[Q + 1];
	struct sg_io_v4 h[Q + 1];
	struct rig g, g2;
	fuse_req_t r, w;
	unsigned seen;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	r = call_read(&g, V3, 0);
	cr_expect(zero(u32, fake_req_replies(r)), "a blocking reader with nothing done parks");
	poll_once(&g, fake_pollhandle_new(g.fs));
	seen = fake_notify_count(g.fs);
	atomic_store(&g.d.target_gone, true);
	cmdq_target_gone(&g.d);
	cr_expect(eq(int, err_of(r), ENODEV), "the parked read gets ENODEV");
	cr_expect(fake_wait_notify(g.fs, seen), "the poller is told");
	cr_expect(eq(u32, poll_once(&g, NULL), POLLHUP | POLLERR));
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), ENODEV), "so does a new one");
	rig_stop(&g);
	cr_expect(eq(u32, fake_req_replies(r), 1));
	rig_fini(&g);

	/* a v4 writer waiting for room */
	rig_init(&g2, 2, O_RDWR);
	script_good(g2.ft, 512);
	atomic_store(&g2.o->cmd_q, Q);
	for (int i = 0; i <= Q; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	cr_expect(eq(sz, write_ok(&g2, h, Q * V4, 0), Q * V4));
	wait_done(&g2, Q);
	w = call_write(&g2, &h[Q], V4, 0);
	cr_expect(zero(u32, fake_req_replies(w)), "a blocking writer waits for room");
	atomic_store(&g2.d.target_gone, true);
	cmdq_target_gone(&g2.d);
	cr_expect(eq(int, err_of(w), ENODEV), "the parked write gets ENODEV");
	cr_expect(eq(u32, fake_target_calls(g2.ft), Q), "its header never reached the target");
	rig_stop(&g2);
	cr_expect(eq(u32, fake_req_replies(w), 1));
	rig_fini(&g2);
}

Test(async, commands_running_when_the_target_goes_end_with_a_did_no_connect_header)
{
	struct fake_cmd b[2];
	struct sg_io_hdr h[2];
	const struct sg_io_hdr *out;
	unsigned seen_ids = 0;
	struct rig g;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	g.ft->script.ret = -ENODEV; /* the device goes under them */
	fake_target_set_block(g.ft, true);
	for (int i = 0; i < 2; i++) {
		h[i] = v3_read(&b[i], i + 1, 512, i + 1);
		write_ok(&g, &h[i], V3, 0);
	}
	cr_assert(fake_target_wait_entered(g.ft, 2));
	atomic_store(&g.d.target_gone, true); /* as node_gone() */
	cmdq_target_gone(&g.d);
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN),
		  "nothing done yet, detaching or not: sg's EAGAIN");
	r = call_read(&g, V3, 0);
	cr_expect(zero(u32, fake_req_replies(r)), "a reader waits while commands still run");
	fake_target_release(g.ft);
	for (int i = 0; i < 2; i++) {
		struct fake_reply *rep = i ? read_ok(&g, V3, 0) : reply_of(r);

		cr_assert(eq(int, rep->kind, FAKE_BUF), "each written command gets its header");
		out = (const struct sg_io_hdr *)rep->data;
		cr_expect(eq(u16, out->host_status, 0x01), "DID_NO_CONNECT");
		cr_expect(eq(u8, out->status, 0));
		cr_expect(eq(i32, out->resid, 512), "nothing moved");
		cr_expect(eq(u32, out->info & SG_INFO_CHECK, SG_INFO_CHECK));
		seen_ids |= 1u << out->pack_id;
	}
	cr_expect(eq(u32, seen_ids, 0x6), "pack_ids 1 and 2, once each");
	cr_expect(eq(int, err_of(call_read(&g, V3, 0)), ENODEV), "then nothing left: ENODEV");
	cr_expect(eq(int, err_of(call_read(&g, V3, O_NONBLOCK)), EAGAIN));
	cr_expect(eq(u32, poll_once(&g, NULL), POLLHUP | POLLERR));
	rig_fini(&g);
}

/* ---- the informational ioctls ---- */

static const struct sg_req_info *table_entry(const struct sg_req_info *t, int pack_id)
{
	for (int i = 0; i < SG_MAX_QUEUE; i++)
		if (t[i].req_state && t[i].pack_id == pack_id)
			return &t[i];
	return NULL;
}

Test(async, ioctls_report_waiting_completions_and_the_request_table)
{
	struct rig g;
	struct fake_cmd b[3];
	struct sg_io_hdr h;
	struct sg_req_info t[SG_MAX_QUEUE];
	const struct sg_req_info *e;

	rig_init(&g, 3, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	for (int i = 0; i < 3; i++) {
		h = v3_read(&b[i], i + 1, 512, 11 + i);
		write_ok(&g, &h, V3, 0);
	}
	cr_assert(fake_target_wait_entered(g.ft, 3));
	cr_expect(zero(int, ioctl_get(&g, SG_GET_NUM_WAITING)));
	cr_expect(eq(int, ioctl_get(&g, SG_GET_PACK_ID), -1), "none done");
	memset(t, 0xff, sizeof(t));
	cr_assert(zero(int, call_ioctl(&g, SG_GET_REQUEST_TABLE, t)));
	for (int i = 0; i < 3; i++) {
		e = table_entry(t, 11 + i);
		cr_assert(not(eq(ptr, (void *)e, NULL)), "pack_id %d listed", 11 + i);
		cr_expect(eq(int, e->req_state, 1), "pack_id %d running", 11 + i);
		cr_expect(eq(ptr, e->usr_ptr, (void *)(uintptr_t)FAKE_USR_PTR(11 + i)));
		cr_expect(zero(int, e->problem));
	}
	cr_expect(zero(int, t[3].req_state), "the rest zeroed");
	cr_expect(fake_all_bytes((unsigned char *)&t[3], sizeof(t) - 3 * sizeof(t[0]), 0));

	fake_target_open(g.ft, 2);
	wait_done(&g, 1);
	fake_target_open(g.ft, 3);
	wait_done(&g, 2);
	cr_expect(eq(int, ioctl_get(&g, SG_GET_NUM_WAITING), 2));
	cr_expect(eq(int, ioctl_get(&g, SG_GET_PACK_ID), 12), "the first completion's");
	cr_assert(zero(int, call_ioctl(&g, SG_GET_REQUEST_TABLE, t)));
	cr_expect(eq(int, table_entry(t, 11)->req_state, 1));
	cr_expect(eq(int, table_entry(t, 12)->req_state, 2));
	cr_expect(eq(int, table_entry(t, 13)->req_state, 2));

	cr_expect(eq(int, v3_out(read_ok(&g, V3, 0))->pack_id, 12));
	cr_expect(eq(int, ioctl_get(&g, SG_GET_NUM_WAITING), 1));
	cr_expect(eq(int, ioctl_get(&g, SG_GET_PACK_ID), 13));
	cr_assert(zero(int, call_ioctl(&g, SG_GET_REQUEST_TABLE, t)));
	cr_expect(eq(ptr, (void *)table_entry(t, 12), NULL), "a read command leaves the table");
	fake_target_open(g.ft, 1);
	read_ok(&g, V3, 0);
	read_ok(&g, V3, 0);
	cr_expect(zero(int, ioctl_get(&g, SG_GET_NUM_WAITING)));
	rig_fini(&g);
}

/* ---- SG_SET_FORCE_PACK_ID ---- */

/*
 * A client thread asleep in read(2) on a pipe, into a buffer holding a v3
 * header, as a real reader of the node sleeps in read(2) of it; or asleep
 * in poll(2), which /proc shows as another system call.
 */
struct sleeper {
	pthread_t thread;
	int pipe[2];
	bool poll;
	bool readv;	  /* readv(2), the header in the first of two buffers */
	atomic_bool spin; /* running in user space until cleared */
	struct sg_io_hdr buf;
	unsigned char rest[64];
	_Atomic pid_t tid;
};

#define NR_READ	 0 /* x86_64 */
#define NR_POLL	 7
#define NR_READV 19

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct pollfd p = { .fd = s->pipe[0], .events = POLLIN };

	struct iovec iov[2] = { { &s->buf, sizeof(s->buf) }, { s->rest, sizeof(s->rest) } };

	atomic_store(&s->tid, gettid());
	while (atomic_load(&s->spin))
		; /* /proc says "running" */
	if (s->poll && poll(&p, 1, -1) < 0)
		return NULL;
	if (s->readv ? readv(s->pipe[0], iov, 2) < 0
		     : read(s->pipe[0], &s->buf, sizeof(s->buf)) < 0)
		return NULL;
	return NULL;
}

/* Whether /proc shows s asleep in its system call. */
static bool asleep(const struct sleeper *s, pid_t tid)
{
	char path[64], line[256];
	unsigned long long nr, a0, a1;
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && sscanf(line, "%llu %llx %llx", &nr, &a0, &a1) == 3)
		ok = s->poll	? nr == NR_POLL
		     : s->readv ? nr == NR_READV
				: nr == NR_READ && a1 == (uintptr_t)&s->buf;
	fclose(f);
	return ok;
}

/*
 * There is no event for "asleep in a system call": watch /proc, bounded,
 * yielding.
 */
static void sleeper_run(struct sleeper *s, int pack_id)
{
	s->buf = (struct sg_io_hdr){ .interface_id = 'S',
				     .dxfer_direction = SG_DXFER_FROM_DEV,
				     .pack_id = pack_id };
	cr_assert(zero(int, pipe(s->pipe)));
	cr_assert(zero(int, pthread_create(&s->thread, NULL, sleeper_main, s)));
}

/* Until /proc shows s asleep in its call. */
static void sleeper_wait(struct sleeper *s)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t tid = atomic_load(&s->tid);

		if (tid && asleep(s, tid))
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert(lt(long, now.tv_sec - start.tv_sec, FAKE_WAIT_SECONDS),
			  "the sleeper never went to sleep");
		sched_yield();
	}
}

static void sleeper_start(struct sleeper *s, bool in_poll, int pack_id)
{
	memset(s, 0, sizeof(*s));
	s->poll = in_poll;
	sleeper_run(s, pack_id);
	sleeper_wait(s);
}

static void sleeper_stop(struct sleeper *s)
{
	cr_assert(eq(long, write(s->pipe[1], "x", 1), 1));
	pthread_join(s->thread, NULL);
	close(s->pipe[0]);
	close(s->pipe[1]);
}

/* A read by the sleeper: the daemon reads its buffer and writes its memory. */
static fuse_req_t call_read_as(struct rig *g, pid_t tid, size_t size, int flags)
{
	fuse_req_t req = fake_req_new(g->fs);

	fake_req_ctx(req)->pid = tid;
	async_read(req, g->o, size, flags);
	return req;
}

/* ---- a call FUSE cut short: the rest of the caller's buffer is unmapped ---- */

/*
 * FUSE hands the daemon what it could map of a caller's buffer.  A read()
 * of V3 bytes whose buffer runs into an unmapped page arrives as a read of
 * fewer: sg's copy faults there, EFAULT, and the completion is gone.
 */
Test(async, v3_read_cut_short_by_a_fault_is_efault_and_drops_the_completion)
{
	struct rig g;
	struct fake_cmd b[2];
	struct sleeper s;

	rig_init(&g, 1, O_RDWR);
	script_check(g.ft, 512, 0);
	write_v3_reads(&g, b, 2, 1);
	wait_done(&g, 2);
	sleeper_start(&s, false, 0); /* asleep in read() of V3 bytes */
	cr_expect(eq(int, err_of(call_read_as(&g, s.tid, 40, 0)), EFAULT));
	cr_expect(eq(int, cmdq_num_waiting(g.o), 1), "sg drops that completion");
	cr_expect(fake_all_bytes(b[0].data, sizeof(b[0].data), FAKE_UNTOUCHED));
	/* a vectored read cannot be told from a short one: sg's EINVAL */
	sleeper_stop(&s);
	memset(&s, 0, sizeof(s));
	s.readv = true;
	sleeper_run(&s, 0);
	sleeper_wait(&s);
	cr_expect(eq(int, err_of(call_read_as(&g, s.tid, 40, 0)), EINVAL));
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	sleeper_stop(&s);
	rig_fini(&g);
}

/* A client thread asleep in write(2) of count bytes to a full pipe. */
struct blocked_writer {
	pthread_t thread;
	int pipe[2];
	size_t count;
	char buf[4096];
	_Atomic pid_t tid;
};

static void *blocked_writer_main(void *arg)
{
	struct blocked_writer *w = arg;

	atomic_store(&w->tid, gettid());
	if (write(w->pipe[1], w->buf, w->count) < 0)
		return NULL;
	return NULL;
}

static bool in_write(pid_t tid)
{
	char path[64], line[256];
	unsigned long long nr;
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	yes = fgets(line, sizeof(line), f) && sscanf(line, "%llu", &nr) == 1 && nr == SYS_write;
	fclose(f);
	return yes;
}

static void blocked_writer_start(struct blocked_writer *w, size_t count)
{
	struct timespec start, now;
	pid_t tid;

	memset(w, 0, sizeof(*w));
	w->count = count;
	cr_assert(zero(int, pipe2(w->pipe, O_NONBLOCK)));
	while (write(w->pipe[1], w->buf, sizeof(w->buf)) > 0)
		; /* full */
	cr_assert(zero(int, fcntl(w->pipe[1], F_SETFL, 0)));
	cr_assert(zero(int, pthread_create(&w->thread, NULL, blocked_writer_main, w)));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!(tid = atomic_load(&w->tid)) || !in_write(tid)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert(lt(long, now.tv_sec - start.tv_sec, FAKE_WAIT_SECONDS),
			  "the writer never went to sleep");
		sched_yield();
	}
}

static void blocked_writer_stop(struct blocked_writer *w)
{
	cr_assert(gt(long, read(w->pipe[0], w->buf, sizeof(w->buf)), 0));
	pthread_join(w->thread, NULL);
	close(w->pipe[0]);
	close(w->pipe[1]);
}

static int write_as(struct rig *g, pid_t tid, const void *buf, size_t size)
{
	fuse_req_t req = fake_req_new(g->fs);

	fake_req_ctx(req)->pid = tid;
	async_write(req, g->o, buf, size, 0);
	return err_of(req);
}

/* A v3 header whose end lies in an unmapped page: sg's copy faults, EFAULT, nothing queued. */
Test(async, v3_write_cut_short_by_a_fault_is_efault)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct blocked_writer w;

	rig_init(&g, 1, O_RDWR);
	h = v3_read(&b, 1, 512, 1);
	blocked_writer_start(&w, V3);
	cr_expect(eq(int, write_as(&g, w.tid, &h, 40), EFAULT));
	cr_expect(eq(int, write_as(&g, w.tid, &h, 20), EFAULT), "short of sg_header too");
	blocked_writer_stop(&w);
	/* the call's own count too short: sg's EIO and EINVAL */
	blocked_writer_start(&w, 30);
	cr_expect(eq(int, write_as(&g, w.tid, &h, 20), EIO));
	blocked_writer_stop(&w);
	blocked_writer_start(&w, 60);
	cr_expect(eq(int, write_as(&g, w.tid, &h, 40), EINVAL));
	blocked_writer_stop(&w);
	rig_stop(&g);
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	cr_expect(zero(u32, fake_target_calls(g.ft)));
	rig_fini(&g);
}

/* SG_SET_FORCE_PACK_ID on, and n READs done with pack_ids 1..n. */
static void force_pack_id_rig(struct rig *g, struct fake_cmd *b, int n)
{
	/* the daemon finds a reader's buffer there: without it, fail, never skip */
	cr_assert(zero(int, access("/proc/self/syscall", R_OK)), "no /proc/PID/syscall here");
	rig_init(g, 1, O_RDWR);
	script_good(g->ft, 512);
	ioctl_set(g, SG_SET_FORCE_PACK_ID, 1);
	write_v3_reads(g, b, n, 1);
	wait_done(g, n);
}

Test(async, force_pack_id_takes_the_one_the_reader_names)
{
	struct sleeper s;
	struct rig g;
	struct fake_cmd b[3];
	struct fake_reply *rep;

	force_pack_id_rig(&g, b, 3);

	sleeper_start(&s, false, 2);
	rep = reply_of(call_read_as(&g, atomic_load(&s.tid), V3, 0));
	cr_assert(eq(int, rep->kind, FAKE_BUF));
	cr_expect(eq(int, v3_out(rep)->pack_id, 2), "the pack_id in the reader's buffer");
	cr_expect(is_data_in(b[1].data, 512, 2));
	cr_expect(fake_all_bytes(b[0].data, sizeof(b[0].data), FAKE_UNTOUCHED), "older ones wait");
	s.buf.pack_id = 7; /* the sleeper's buffer is read at each call */
	cr_expect(eq(int, err_of(call_read_as(&g, atomic_load(&s.tid), V3, O_NONBLOCK)), EAGAIN),
		  "no completion with that pack_id: EAGAIN although two wait");
	s.buf.pack_id = -1;
	rep = reply_of(call_read_as(&g, atomic_load(&s.tid), V3, 0));
	cr_expect(eq(int, v3_out(rep)->pack_id, 1), "-1: any, the oldest");
	sleeper_stop(&s);
	cr_expect(eq(int, cmdq_num_waiting(g.o), 1));
	rig_fini(&g);
}

/*
 * No pack_id to be found: the reader is not in read(2) (readv(2), say), so
 * /proc/TID/syscall names no buffer.  sg's fallback: any completion.  (The
 * test thread itself cannot be the reader here: /proc would show it in the
 * daemon's own read(2) of that very file.)
 */
Test(async, force_pack_id_without_a_reader_buffer_takes_the_oldest)
{
	struct sleeper s;
	struct rig g;
	struct fake_cmd b[2];
	struct fake_reply *rep;

	force_pack_id_rig(&g, b, 2);
	sleeper_start(&s, true, 2);
	rep = reply_of(call_read_as(&g, atomic_load(&s.tid), V3, 0));
	cr_assert(eq(int, rep->kind, FAKE_BUF));
	cr_expect(eq(int, v3_out(rep)->pack_id, 1), "any completion: the oldest, not pack_id 2");
	cr_expect(is_data_in(b[0].data, 512, 1));
	rep = reply_of(call_read_as(&g, atomic_load(&s.tid), V3, 0));
	cr_expect(eq(int, v3_out(rep)->pack_id, 2));
	sleeper_stop(&s);
	rig_fini(&g);
}

/* readv(2), as sgp_dd's readers may use: the header is in the first buffer. */
Test(async, force_pack_id_reads_the_first_buffer_of_a_readv)
{
	struct sleeper s = { .readv = true };
	struct rig g;
	struct fake_cmd b[3];
	struct fake_reply *rep;

	force_pack_id_rig(&g, b, 3);
	sleeper_run(&s, 3);
	sleeper_wait(&s);
	rep = reply_of(call_read_as(&g, atomic_load(&s.tid), V3, 0));
	cr_assert(eq(int, rep->kind, FAKE_BUF));
	cr_expect(eq(int, v3_out(rep)->pack_id, 3), "the pack_id in the readv's first buffer");
	cr_expect(is_data_in(b[2].data, 512, 3));
	sleeper_stop(&s);
	rig_fini(&g);
}

/*
 * A reader /proc still shows running: the read waits, parked, and no
 * worker waits with it; the resolver finds the pack_id once the reader
 * sleeps in its call.
 */
Test(async, force_pack_id_of_a_reader_not_yet_asleep_is_resolved_later)
{
	struct sleeper s = { .readv = true };
	struct rig g;
	struct fake_cmd b[3];
	struct fake_reply *rep;
	fuse_req_t req;
	pid_t tid;

	force_pack_id_rig(&g, b, 3);
	atomic_store(&s.spin, true);
	sleeper_run(&s, 2);
	while (!(tid = atomic_load(&s.tid)))
		sched_yield();
	req = call_read_as(&g, tid, V3, O_NONBLOCK);
	cr_expect(zero(u32, fake_req_replies(req)), "parked, even O_NONBLOCK: its pack_id unknown");
	atomic_store(&s.spin, false);
	rep = reply_of(req);
	cr_assert(eq(int, rep->kind, FAKE_BUF));
	cr_expect(eq(int, v3_out(rep)->pack_id, 2), "the pack_id it then named");
	cr_expect(eq(int, cmdq_num_waiting(g.o), 2));
	sleeper_stop(&s);
	rig_fini(&g);
}

/* ---- concurrency ---- */

enum { THREADS = 4, PER_THREAD = 500, WINDOW = 4 };

struct worker {
	pthread_t thread;
	struct rig *g;
	struct fake_cmd *b;    /* the whole run's, one per command */
	_Atomic unsigned *got; /* per pack_id: deliveries */
	unsigned first;	       /* this worker's first pack_id */
	unsigned failures;     /* replies that were not what they should be */
	char why[96];
};

static void worker_fail(struct worker *w, const char *why, int val)
{
	if (!w->failures++)
		snprintf(w->why, sizeof(w->why), "%s (%d)", why, val);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (unsigned i = 0; i < PER_THREAD && !w->failures; i += WINDOW) {
		for (unsigned k = i; k < i + WINDOW; k++) {
			unsigned id = w->first + k;
			struct sg_io_hdr h = fake_v3_hdr(&w->b[id], SG_DXFER_FROM_DEV, 512, id);
			struct fake_reply *rep = fake_req_wait(call_write(w->g, &h, V3, 0));

			if (!rep || rep->kind != FAKE_WRITE || rep->count != V3)
				worker_fail(w, "write", rep ? rep->err : -1);
		}
		for (unsigned k = 0; k < WINDOW; k++) {
			struct fake_reply *rep = fake_req_wait(call_read(w->g, V3, 0));
			struct sg_io_hdr out;

			if (!rep || rep->kind != FAKE_BUF || rep->len != V3) {
				worker_fail(w, "read", rep ? rep->err : -1);
				break;
			}
			memcpy(&out, rep->data, sizeof(out));
			if (out.pack_id < 0 || out.pack_id >= THREADS * PER_THREAD)
				worker_fail(w, "pack_id", out.pack_id);
			else
				atomic_fetch_add(&w->got[out.pack_id], 1);
		}
	}
	return NULL;
}

Test(async, four_threads_on_one_opener_get_every_completion_once)
{
	enum { N = THREADS * PER_THREAD };
	struct fake_cmd *b = calloc(N, sizeof(*b));
	_Atomic unsigned *got = calloc(N, sizeof(*got));
	struct worker w[THREADS];
	struct rig g;

	cr_assert(b && got);
	rig_init(&g, 4, O_RDWR);
	script_good(g.ft, 512);
	for (unsigned id = 0; id < N; id++)
		fake_cmd_init(&b[id], false, id, 8);
	for (unsigned t = 0; t < THREADS; t++) {
		w[t] = (struct worker){ .g = &g, .b = b, .got = got, .first = t * PER_THREAD };
		cr_assert(zero(int, pthread_create(&w[t].thread, NULL, worker_main, &w[t])));
	}
	for (unsigned t = 0; t < THREADS; t++) {
		pthread_join(w[t].thread, NULL);
		cr_expect(zero(u32, w[t].failures), "worker %u: %s", t, w[t].why);
	}
	for (unsigned id = 0; id < N; id++) {
		cr_assert(eq(u32, atomic_load(&got[id]), 1), "pack_id %u delivered %u times", id,
			  atomic_load(&got[id]));
		cr_assert(is_data_in(b[id].data, 512, id & 0xff), "pack_id %u's data", id);
	}
	cr_expect(zero(int, cmdq_num_waiting(g.o)));
	rig_stop(&g);
	cr_expect(eq(u32, fake_target_calls(g.ft), N));
	rig_fini(&g);
	free(got);
	free(b);
}

/* ---- a completion or a free slot in the window before a call parks ---- */

struct window {
	struct rig *g;
	unsigned tag;  /* open this tag and wait for its completion, or */
	bool read;     /* read one completion, freeing a slot */
	unsigned seen; /* notifications before */
};

/* Runs where the caller has checked and not yet parked. */
static void in_the_window(void *arg)
{
	struct window *win = arg;
	struct fake_reply *rep;

	if (win->read) {
		rep = fake_req_wait(call_read(win->g, V4, O_NONBLOCK));
		cr_assert(rep && rep->kind == FAKE_BUF, "the read in the window failed");
		return;
	}
	fake_target_open(win->g->ft, win->tag);
	cr_assert(fake_wait_notify(win->g->fs, win->seen), "the completion never arrived");
}

Test(async, completion_just_before_a_read_parks_still_answers_it)
{
	struct rig g;
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct window win = { .g = &g, .tag = 1 };
	struct fake_reply *rep;
	fuse_req_t r;

	rig_init(&g, 2, O_RDWR);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	h = v3_read(&b, 1, 512, 1);
	write_ok(&g, &h, V3, 0);
	cr_assert(fake_target_wait_entered(g.ft, 1));
	win.seen = fake_notify_count(g.fs);
	poll_once(&g, fake_pollhandle_new(g.fs)); /* to see the completion land */

	r = fake_req_new(g.fs);
	fake_req_on_register(r, in_the_window, &win);
	async_read(r, g.o, V3, 0);
	rep = fake_req_wait(r);
	cr_expect(not(eq(ptr, rep, NULL)),
		  "lost wake-up: a completion that lands after the read looked and before it "
		  "parked leaves the read parked with a completion waiting (%d waiting)",
		  cmdq_num_waiting(g.o));
	if (!rep) {
		fake_interrupt(r); /* to clean up */
		rep = fake_req_wait(r);
		cr_assert(not(eq(ptr, rep, NULL)));
		read_ok(&g, V3, 0);
	} else {
		cr_expect(eq(int, rep->kind, FAKE_BUF));
		cr_expect(eq(int, v3_out(rep)->pack_id, 1));
	}
	rig_fini(&g);
}

Test(async, slot_freed_just_before_a_write_parks_still_answers_it)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct window win = { .read = true };
	struct fake_reply *rep;
	struct rig g;
	fuse_req_t w;

	rig_init(&g, 2, O_RDWR);
	win.g = &g;
	script_good(g.ft, 512);
	queue_full(&g, b, h);
	wait_done(&g, 2);

	w = fake_req_new(g.fs);
	fake_req_on_register(w, in_the_window, &win);
	async_write(w, g.o, (const char *)&h[2], V4, 0);
	rep = fake_req_wait(w);
	cr_expect(not(eq(ptr, rep, NULL)),
		  "lost wake-up: a slot freed after the write found the queue full and before it "
		  "parked leaves the write parked with room free");
	if (!rep) {
		fake_interrupt(w);
		cr_assert(not(eq(ptr, fake_req_wait(w), NULL)));
	} else {
		cr_expect(eq(int, rep->kind, FAKE_WRITE));
		cr_expect(eq(sz, rep->count, V4));
	}
	rig_fini(&g);
}

/* ---- one failed command in a multi-header read ---- */

/* Read everything waiting in reads of room headers; count each pack_id seen. */
static unsigned drain_v4(struct rig *g, unsigned room, unsigned *got, unsigned n)
{
	unsigned errors = 0;

	for (unsigned i = 0; i <= n; i++) {
		struct fake_reply *rep = reply_of(call_read(g, room * V4, O_NONBLOCK));

		if (rep->kind == FAKE_ERR && rep->err == EAGAIN)
			break;
		if (rep->kind == FAKE_ERR) {
			errors++;
			continue;
		}
		for (size_t k = 0; k < rep->len / V4; k++) {
			uint32_t id = v4_out(rep, k).request_extra;

			if (id < n)
				got[id]++;
		}
	}
	return errors;
}

Test(async, failed_command_in_a_v4_batch_loses_no_other_completion)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	unsigned got[4] = { 0 };
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	g.ft->script.fail_tag = 2;
	g.ft->script.fail_ret = -EIO;
	for (int i = 0; i < 3; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	write_ok(&g, h, 3 * V4, 0);
	wait_done(&g, 3);
	/* bsg's read: the headers before the failed one; the rest stay for later */
	cr_expect(le(u32, drain_v4(&g, 3, got, 4), 1));
	cr_expect(eq(u32, got[1], 1), "completion 1 lost to completion 2's error");
	cr_expect(eq(u32, got[3], 1), "completion 3 lost to completion 2's error");
	cr_expect(is_data_in(b[2].data, 512, 3));
	rig_fini(&g);
}

Test(async, bad_data_address_in_a_v4_batch_loses_no_other_completion)
{
	struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	unsigned got[4] = { 0 };
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	script_good(g.ft, 512);
	for (int i = 0; i < 3; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	h[1].din_xferp = 8; /* faults when its data-in is copied, at read() */
	write_ok(&g, h, 3 * V4, 0);
	wait_done(&g, 3);
	cr_expect(le(u32, drain_v4(&g, 3, got, 4), 1));
	cr_expect(eq(u32, got[1], 1), "completion 1 lost to completion 2's EFAULT");
	cr_expect(eq(u32, got[3], 1), "completion 3 lost to completion 2's EFAULT");
	cr_expect(is_data_in(b[0].data, 512, 1));
	cr_expect(is_data_in(b[2].data, 512, 3));
	rig_fini(&g);
}

/* ---- memory bounds ---- */

#define BIG (512u << 10)

/* n v4 READs of BIG bytes each into big, tags and pack_ids from 1. */
static void big_reads(struct fake_cmd *b, struct sg_io_v4 *h, unsigned n, unsigned char *big)
{
	for (unsigned i = 0; i < n; i++) {
		h[i] = v4_read(&b[i], i + 1, 512, (int)i + 1);
		h[i].din_xfer_len = BIG;
		h[i].din_xferp = (uintptr_t)(big + (size_t)i * BIG);
	}
}

static unsigned char *big_area(unsigned n)
{
	void *p = mmap(NULL, (size_t)n * BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	cr_assert(p != MAP_FAILED);
	return p;
}

Test(async, past_the_open_files_memory_bound_a_command_gets_enomem)
{
	static struct fake_cmd b[4];
	struct sg_io_v4 h[4];
	unsigned char *big = big_area(4);
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	g.d.opener_mem_max = 2 * BIG;
	script_good(g.ft, 512);
	big_reads(b, h, 4, big);
	cr_expect(eq(sz, write_ok(&g, h, 4 * V4, O_NONBLOCK), 2 * V4),
		  "the headers before the one over the bound are taken");
	cr_expect(eq(int, err_of(call_write(&g, h + 2, 2 * V4, O_NONBLOCK)), ENOMEM),
		  "the first header over it: ENOMEM");
	wait_done(&g, 2);
	read_ok(&g, 2 * V4, 0);
	/* their buffers are kept for the file, still charged to it, and taken again */
	cr_expect(eq(sz, write_ok(&g, h + 2, 2 * V4, O_NONBLOCK), 2 * V4));
	wait_done(&g, 2);
	read_ok(&g, 2 * V4, 0);
	cr_expect(eq(u64, atomic_load(&g.o->mem_used), 2 * BIG), "the kept buffers' charge");
	rig_fini(&g);
	munmap(big, 4 * BIG);
}

Test(async, past_the_daemons_memory_bound_a_command_gets_enomem)
{
	static struct fake_cmd b[3];
	struct sg_io_v4 h[3];
	struct mem_budget m = { .max = BIG };
	unsigned char *big = big_area(3);
	struct fake_cmd s;
	struct sg_io_hdr h3;
	struct rig g;

	rig_init(&g, 1, O_RDWR);
	g.d.mem = &m;
	script_good(g.ft, 512);
	big_reads(b, h, 3, big);
	cr_expect(eq(sz, write_ok(&g, h, 3 * V4, O_NONBLOCK), V4));
	cr_expect(eq(u64, atomic_load(&m.used), BIG));
	h3 = v3_read(&s, 9, 512, 9);
	cr_expect(eq(int, -call_ioctl(&g, SG_IO, &h3), ENOMEM),
		  "SG_IO is bounded by the same budget");
	wait_done(&g, 1);
	read_ok(&g, V4, 0);
	rig_release(&g);
	cr_expect(zero(u64, atomic_load(&m.used)), "all given back once the file is gone");
	rig_fini(&g);
	munmap(big, 3 * BIG);
}

/* ---- a client's memory that stalls ---- */

/* A second open file of g's daemon. */
static struct opener *second_opener(struct rig *g)
{
	struct opener *o;

	cr_assert(zero(int, opener_new(&g->d, O_RDWR, false, gettid(), NULL, &o)));
	return o;
}

/*
 * Opener A's data-in lands in a page that stalls: its read gets EFAULT
 * once the bound has passed, while opener B's completion, which came at
 * the same moment, is delivered; A's next copies get EFAULT at once until
 * the stalled one returns, which then answers nothing a second time.
 */
Test(async, a_stalled_copy_delays_no_other_opener_and_ends_in_efault)
{
	struct fake_cmd a, b;
	struct sg_io_hdr ha, hb;
	struct fake_reply *rep;
	struct opener *o2;
	struct stall s;
	fuse_req_t ra, rb;
	struct rig g;

	stall_init(&s);
	rig_init(&g, 1, O_RDWR); /* one pool worker: both completions come through it */
	cr_assert(zero(int, watchdog_new(300, "fake", &g.d.wd)));
	cr_assert(zero(int, pool_new_elastic(8, &g.d.serve)));
	o2 = second_opener(&g);
	script_good(g.ft, 512);
	fake_target_set_gate(g.ft, true);
	ha = v3_read(&a, 1, 512, 1);
	ha.dxferp = s.page;
	cr_assert(eq(sz, write_ok(&g, &ha, V3, 0), V3));
	ra = call_read(&g, V3, 0); /* parked */
	hb = v3_read(&b, 2, 512, 2);
	rb = fake_req_new(g.fs);
	async_write(rb, o2, (const char *)&hb, V3, 0);
	cr_assert(eq(int, reply_of(rb)->kind, FAKE_WRITE));
	rb = fake_req_new(g.fs);
	async_read(rb, o2, V3, 0); /* parked */
	fake_target_set_gate(g.ft, false);
	fake_target_release(g.ft);

	rep = reply_of(rb);
	cr_assert(eq(int, rep->kind, FAKE_BUF), "the other opener's read is answered");
	cr_expect(eq(int, v3_out(rep)->pack_id, 2));
	cr_expect(is_data_in(b.data, 512, 2));
	rep = reply_of(ra);
	cr_expect(eq(int, rep->kind, FAKE_ERR));
	cr_expect(eq(int, rep->err, EFAULT), "the stalled reader: EFAULT after the bound");
	cr_expect(eq(u32, atomic_load(&g.o->stuck), 1));
	ha = v3_read(&a, 3, 512, 3);
	cr_expect(eq(int, err_of(call_write(&g, &ha, V3, 0)), EFAULT),
		  "its file's next copy: EFAULT at once");
	stall_release(&s);
	wait_unstuck(g.o);
	cr_expect(eq(u32, fake_req_replies(ra), 1), "answered once");
	cr_expect(pool_free_within(g.d.serve, 1000), "every elastic thread came back");
	g.d.serve = NULL;
	cr_expect(zero(u32, watchdog_free(g.d.wd)));
	g.d.wd = NULL;
	cmdq_release(o2);
	rig_fini(&g);
}

struct stalled_read {
	struct rig *g;
	size_t size;
	struct fake_reply *rep;
};

static void *stalled_read_thread(void *arg)
{
	struct stalled_read *sr = arg;

	sr->rep = reply_of(call_read(sr->g, sr->size, 0));
	return NULL;
}

/*
 * g with a 300 ms watchdog and three completions, the first one's data-in
 * in s's page, which stalls; a read of all three on *t, stalled in that copy.
 */
static void stalled_read_start(struct rig *g, struct stall *s, struct fake_cmd *b,
			       struct stalled_read *sr, pthread_t *t)
{
	struct sg_io_v4 h[3];

	stall_init(s);
	rig_init(g, 1, O_RDWR);
	cr_assert(zero(int, watchdog_new(300, "fake", &g->d.wd)));
	script_good(g->ft, 512);
	for (int i = 0; i < 3; i++)
		h[i] = v4_read(&b[i], i + 1, 512, i + 1);
	h[0].din_xferp = (uintptr_t)s->page;
	cr_assert(eq(sz, write_ok(g, h, 3 * V4, 0), 3 * V4));
	wait_done(g, 3);
	*sr = (struct stalled_read){ .g = g, .size = 3 * V4 };
	cr_assert(zero(int, pthread_create(t, NULL, stalled_read_thread, sr)));
	while (!atomic_load(&g->o->stuck))
		sched_yield(); /* the test's timeout bounds it */
}

/*
 * A read of three completions stalls on the first one's data; the watchdog
 * answers it EFAULT and its client closes the file.  Once the copy returns,
 * the two not reached would go back to the done list: the release has
 * swept that list already, so they are freed instead.
 */
Test(async, completions_not_reached_after_the_release_are_freed)
{
	struct fake_cmd b[3];
	struct stalled_read sr;
	struct opener *o;
	struct stall s;
	pthread_t t;
	struct rig g;
	bool empty;

	stalled_read_start(&g, &s, b, &sr, &t);
	o = g.o;
	opener_get(o);
	rig_release(&g); /* answered: its client may close the file */
	stall_release(&s);
	wait_unstuck(o);
	pthread_join(t, NULL);
	cr_expect(eq(int, sr.rep->kind, FAKE_ERR));
	cr_expect(eq(int, sr.rep->err, EFAULT));
	pthread_mutex_lock(&o->lock);
	empty = list_empty(&o->cmds) && o->queued == 0 && o->done == 0;
	pthread_mutex_unlock(&o->lock);
	cr_expect(empty, "a completion went back to a released file's list, where none frees it");
	opener_put(o);
	cr_expect(zero(u32, watchdog_free(g.d.wd)));
	g.d.wd = NULL;
	rig_fini(&g);
}

/*
 * The same read, its file still open: once the watchdog has answered, the
 * call is over for the client (which may run a new program by then), and
 * the copy that was stalled is the last: the second completion's data is
 * not written, and it and the third stay for a later read.
 */
Test(async, after_the_watchdog_answers_no_further_copy_reaches_the_client)
{
	struct fake_cmd b[3];
	struct stalled_read sr;
	struct fake_reply *rep;
	struct stall s;
	pthread_t t;
	struct rig g;

	stalled_read_start(&g, &s, b, &sr, &t);
	stall_wake(&s);
	wait_unstuck(g.o);
	pthread_join(t, NULL);
	stall_fini(&s);
	cr_expect(eq(int, sr.rep->kind, FAKE_ERR));
	cr_expect(eq(int, sr.rep->err, EFAULT));
	cr_expect(fake_all_bytes(b[1].data, sizeof(b[1].data), FAKE_UNTOUCHED),
		  "written after the watchdog had answered");
	cr_expect(fake_all_bytes(b[2].data, sizeof(b[2].data), FAKE_UNTOUCHED));
	rep = read_ok(&g, V4, O_NONBLOCK);
	cr_expect(eq(int, v4_out(rep, 0).request_extra, 2), "the one not copied is kept");
	cr_expect(is_data_in(b[1].data, 512, 2));
	rep = read_ok(&g, V4, O_NONBLOCK);
	cr_expect(eq(int, v4_out(rep, 0).request_extra, 3));
	cr_expect(zero(u32, watchdog_free(g.d.wd)));
	g.d.wd = NULL;
	rig_fini(&g);
}

/* ---- the resolver reads no client's memory on the thread every opener shares ---- */

struct uffd_reader {
	pthread_t thread;
	int pipe[2];
	void *iov; /* in a page that stalls */
	atomic_bool spin;
	_Atomic pid_t tid;
};

static void *uffd_reader_main(void *arg)
{
	struct uffd_reader *u = arg;

	atomic_store(&u->tid, gettid());
	while (atomic_load(&u->spin))
		; /* /proc says "running": its read goes to the resolver */
	/* the kernel's import of the iovec faults in the stalled page: the
	 * thread sleeps in readv(2) with the iovec's address in /proc */
	(void)readv(u->pipe[0], u->iov, 2);
	return NULL;
}

/* The syscall number the thread named comm sleeps in, or -1. */
static long task_syscall(const char *comm)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	long nr = -1;

	while (dir && (e = readdir(dir))) {
		char path[300], name[64] = "", line[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, comm))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		if ((f = fopen(path, "re"))) {
			if (fgets(line, sizeof(line), f))
				nr = strtol(line, NULL, 10);
			fclose(f);
		}
	}
	if (dir)
		closedir(dir);
	return nr;
}

/*
 * SECURITY.md: "No such copy runs on a thread other callers need".  The
 * resolver (one thread per device, shared by every opener) finds where a
 * parked reader's buffer is from its /proc file alone; a readv() reader's
 * iovec array is read by the resumed read, on the elastic pool, guarded.
 * A client whose iovec page stalls holds no thread another opener needs:
 * another opener's forced-pack_id read is answered meanwhile.
 */
Test(async, stalled_iovec_page_holds_no_thread_other_readers_need)
{
	struct uffd_reader a = { 0 };
	struct sleeper s = { .readv = true };
	struct stall st;
	struct rig g;
	struct fake_cmd b[3];
	struct opener *o2;
	struct fake_reply *rep;
	fuse_req_t ra, rc;
	pid_t tid;

	stall_init(&st);
	force_pack_id_rig(&g, b, 3); /* opener 1: another client's, 3 completions */
	cr_assert(zero(int, pool_new_elastic(4, &g.d.serve))); /* the node's, for copies */
	o2 = second_opener(&g);				       /* opener 2: the hostile client's */
	atomic_store(&o2->force_pack_id, 1);

	/* the hostile reader: its read() reaches the daemon while it still runs */
	a.iov = st.page;
	atomic_store(&a.spin, true);
	cr_assert(zero(int, pipe(a.pipe)));
	cr_assert(zero(int, pthread_create(&a.thread, NULL, uffd_reader_main, &a)));
	while (!(tid = atomic_load(&a.tid)))
		sched_yield();
	ra = fake_req_new(g.fs);
	fake_req_ctx(ra)->pid = tid;
	async_read(ra, o2, V3, O_NONBLOCK);
	cr_assert(zero(u32, fake_req_replies(ra)), "parked for the resolver");
	atomic_store(&a.spin, false);
	while (!asleep(&(struct sleeper){ .readv = true }, tid))
		sched_yield();
	usleep(100 * 1000); /* the resolver's 1 ms tick: it looks at a's iovec now */
	cr_expect(not(eq(long, task_syscall("bsg-resolver"), (long)SYS_process_vm_readv)),
		  "the shared resolver thread sleeps in process_vm_readv() of a client's page");

	/* another client's reader, not yet asleep: its pack_id is the resolver's to find */
	atomic_store(&s.spin, true);
	sleeper_run(&s, 2);
	while (!(tid = atomic_load(&s.tid)))
		sched_yield();
	rc = call_read_as(&g, tid, V3, O_NONBLOCK);
	atomic_store(&s.spin, false);
	rep = fake_req_wait(rc);
	cr_expect(not(eq(ptr, rep, NULL)),
		  "another opener's forced-pack_id read is never answered: the resolver thread "
		  "every opener shares is stalled in process_vm_readv() of the first client's "
		  "iovec page");

	/* clean up: the page comes, the resolver goes on */
	stall_wake(&st);
	if (!rep)
		rep = fake_req_wait(rc);
	cr_assert(not(eq(ptr, rep, NULL)));
	if (!fake_req_replies(ra)) {
		rep = fake_req_wait(ra);
		if (!rep) {
			fake_interrupt(ra);
			fake_req_wait(ra);
		}
	}
	sleeper_stop(&s);
	pthread_join(a.thread, NULL);
	close(a.pipe[0]);
	close(a.pipe[1]);
	stall_fini(&st);
	cmdq_release(o2);
	rig_stop(&g);
	pool_free(g.d.serve);
	g.d.serve = NULL;
	rig_fini(&g);
}

/*
 * A completion whose parked reader finds no memory for the job that would
 * serve it on the elastic pool: the reader is answered ENOMEM where the
 * completion came, its memory untouched there (that thread may be one
 * every opener shares), and the completion stays for the next read.
 */
Test(async, a_reader_without_memory_to_serve_it_loses_no_completion)
{
	struct fake_cmd b;
	struct sg_io_hdr h;
	struct fake_reply *rep;
	fuse_req_t rq;
	struct rig g;

	rig_init(&g, 2, O_RDWR);
	cr_assert(zero(int, pool_new_elastic(4, &g.d.serve)));
	script_good(g.ft, 512);
	rq = call_read(&g, V3, 0);
	cr_assert(zero(u32, fake_req_replies(rq)), "parked");
	h = v3_read(&b, 1, 512, 1);
	malloc_fault_size(sizeof(struct copy_job));
	cr_assert(eq(sz, write_ok(&g, &h, V3, 0), V3));
	rep = reply_of(rq);
	malloc_fault_size(0);
	cr_expect(eq(int, err_of(rq), ENOMEM), "the reader: ENOMEM (answered %d)", rep->kind);
	cr_expect(fake_all_bytes(b.data, sizeof(b.data), FAKE_UNTOUCHED), "its memory untouched");
	wait_done(&g, 1);
	cr_expect(eq(int, cmdq_num_waiting(g.o), 1), "the completion is kept");
	rep = reply_of(call_read(&g, V3, 0));
	cr_assert(eq(int, rep->kind, FAKE_BUF));
	cr_expect(eq(int, v3_out(rep)->pack_id, 1));
	cr_expect(is_data_in(b.data, 512, 1));
	rig_stop(&g);
	pool_free(g.d.serve);
	g.d.serve = NULL;
	rig_fini(&g);
}

/* A reply held on the watchdog's thread, and whether watchdog_busy() returned meanwhile. */
struct held_reply {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct watchdog *w;
	bool in_reply, busy_returned, returned_in_reply; /* protected by lock */
	unsigned busy;
};

static void hold_reply(void *arg)
{
	struct held_reply *h = arg;
	struct timespec end;

	pthread_mutex_lock(&h->lock);
	h->in_reply = true;
	pthread_cond_broadcast(&h->cond);
	/* a bound, long enough for an unblocked watchdog_busy() to return */
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 1;
	while (!h->busy_returned && pthread_cond_timedwait(&h->cond, &h->lock, &end) != ETIMEDOUT)
		;
	h->returned_in_reply = h->busy_returned;
	pthread_mutex_unlock(&h->lock);
}

static void *busy_of(void *arg)
{
	struct held_reply *h = arg;
	unsigned n = watchdog_busy(h->w);

	pthread_mutex_lock(&h->lock);
	h->busy = n;
	h->busy_returned = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/*
 * The watchdog answers a stalled copy EFAULT, and the copy ends while that
 * answer is being sent: the node must not take the session down then (its
 * end waits for watchdog_busy() to say 0), or the answer would use a
 * session already destroyed.
 */
Test(async, the_watchdog_holds_the_session_until_its_efault_is_sent)
{
	struct held_reply h = { .lock = PTHREAD_MUTEX_INITIALIZER,
				.cond = PTHREAD_COND_INITIALIZER };
	atomic_uint stuck = 0;
	struct guard gd;
	struct rig g;
	fuse_req_t req;
	pthread_t t;

	rig_init(&g, 1, O_RDWR);
	cr_assert(zero(int, watchdog_new(50, "fake", &h.w)));
	req = fake_req_new(g.fs);
	fake_req_on_reply(req, hold_reply, &h);
	cr_assert(zero(int, guard_begin(h.w, &gd, req, gettid(), &stuck)));
	pthread_mutex_lock(&h.lock);
	while (!h.in_reply)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);
	/* the stalled copy returns now, its call already answered */
	cr_assert(not(guard_end(h.w, &gd)), "the watchdog's call");
	cr_assert(zero(int, pthread_create(&t, NULL, busy_of, &h)));
	pthread_join(t, NULL);
	cr_expect(not(h.returned_in_reply),
		  "watchdog_busy() said the session was free while its EFAULT was being sent");
	cr_expect(zero(u32, h.busy));
	cr_expect(eq(int, err_of(req), EFAULT));
	cr_expect(zero(u32, watchdog_free(h.w)));
	rig_fini(&g);
}
