// SPDX-License-Identifier: GPL-2.0-only
/*
 * The end-to-end tests' rig (rig.h): a device with a real pool, the fake
 * target and the fake libfuse, one opener, and the calls made on it as the
 * CUSE callbacks make them.  Every wait is bounded by FAKE_WAIT_SECONDS;
 * waits are on replies and poll notifications, never on sleeps.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "opener.h"
#include "pool.h"
#include "queue/async.h"
#include "queue/cmdq.h"
#include "rig.h"
#include "root.h"

/* ---- the rig ---- */

static void rig_setup(struct rig *g, bool direct, unsigned threads, int open_flags)
{
	memset(g, 0, sizeof(*g));
	g->fs = fake_session_new();
	g->ft = fake_target_new();
	g->d.name = "fake";
	g->d.target = &g->ft->base;
	g->d.direct = direct;
	/* as main() sets them for each path */
	g->d.max_xfer = direct ? g->ft->base.info.max_xfer : RETRY_MAX_XFER;
	g->d.max_xfer_errno = direct ? g->ft->base.info.max_xfer_errno : ENOMEM;
	cr_assert(zero(int, pool_new(threads, &g->d.pool)));
	bsgdev_init(&g->d);
	/* as cb_open() does */
	cr_assert(zero(int, opener_new(&g->d, open_flags, false, gettid(), NULL, &g->o)));
	cr_assert(eq(int, atomic_load(&g->o->chan), -1), "no channel until a command runs");
}

void rig_init(struct rig *g, unsigned threads, int open_flags)
{
	rig_setup(g, true, threads, open_flags);
}

void rig_init_retry(struct rig *g, unsigned threads, int open_flags)
{
	rig_setup(g, false, threads, open_flags);
}

void rig_release(struct rig *g)
{
	cmdq_release(g->o);
	g->o = NULL;
}

void rig_stop(struct rig *g)
{
	async_bsgdev_fini(&g->d);
	fake_target_set_gate(g->ft, false);
	fake_target_release(g->ft);
	pool_free(g->d.pool);
	g->d.pool = NULL;
}

void rig_fini(struct rig *g)
{
	if (g->o)
		rig_release(g);
	rig_stop(g);
	cr_expect(zero(u32, fake_misuse_count(g->fs)), "a call on a request already answered");
	cr_expect(zero(u32, fake_target_chans_open(g->ft)), "the channel is closed exactly once");
	cr_expect(zero(u32, fake_pollhandles_live(g->fs)), "a poll handle was never destroyed");
	target_free(&g->ft->base);
	fake_session_free(g->fs);
}

unsigned long stat_get(struct rig *g, enum stat_id id)
{
	return atomic_load(&g->d.stats[id]);
}

/* ---- the signal judge ---- */

static atomic_bool signal_ends_now;

static bool judge_fake(pid_t tid)
{
	(void)tid;
	return atomic_load(&signal_ends_now);
}

void rig_judged(struct rig *g, bool ends)
{
	atomic_store(&signal_ends_now, ends);
	g->d.signal_ends = judge_fake;
}

/* ---- the calls, as the CUSE callbacks make them ---- */

fuse_req_t call_write(struct rig *g, const void *buf, size_t size, int flags)
{
	fuse_req_t req = fake_req_new(g->fs);

	async_write(req, g->o, buf, size, flags);
	return req;
}

fuse_req_t call_read(struct rig *g, size_t size, int flags)
{
	fuse_req_t req = fake_req_new(g->fs);

	async_read(req, g->o, size, flags);
	return req;
}

struct fake_reply *reply_of(fuse_req_t req)
{
	struct fake_reply *rep = fake_req_wait(req);

	cr_assert(not(eq(ptr, rep, NULL)), "no reply within %d s", FAKE_WAIT_SECONDS);
	return rep;
}

size_t write_ok(struct rig *g, const void *buf, size_t size, int flags)
{
	struct fake_reply *rep = reply_of(call_write(g, buf, size, flags));

	cr_assert(eq(int, rep->kind, FAKE_WRITE), "write answered %s %d",
		  rep->kind == FAKE_ERR ? "errno" : "kind",
		  rep->kind == FAKE_ERR ? rep->err : (int)rep->kind);
	return rep->count;
}

int err_of(fuse_req_t req)
{
	struct fake_reply *rep = reply_of(req);

	return rep->kind == FAKE_ERR ? rep->err : 0;
}

struct fake_reply *read_ok(struct rig *g, size_t size, int flags)
{
	struct fake_reply *rep = reply_of(call_read(g, size, flags));

	cr_assert(eq(int, rep->kind, FAKE_BUF), "read answered errno %d",
		  rep->kind == FAKE_ERR ? rep->err : -1);
	return rep;
}

unsigned poll_once(struct rig *g, struct fuse_pollhandle *ph)
{
	fuse_req_t req = fake_req_new(g->fs);
	struct fake_reply *rep;

	async_poll(req, g->o, ph);
	rep = reply_of(req);
	cr_assert(eq(int, rep->kind, FAKE_POLL));
	return rep->revents;
}

void wait_done(struct rig *g, unsigned n)
{
	/* the handle is registered before the count is looked at, so a
	 * completion after the look notifies it */
	for (;;) {
		unsigned seen = fake_notify_count(g->fs);

		poll_once(g, fake_pollhandle_new(g->fs));
		if (cmdq_num_waiting(g->o) >= (int)n)
			return;
		cr_assert(fake_wait_notify(g->fs, seen), "%u completions never arrived", n);
	}
}

fuse_req_t ioctl_on(struct rig *g, fuse_req_t req, pid_t tid, unsigned cmd, void *arg)
{
	return fake_ioctl_on(req, g->o, tid, cmd, arg);
}

fuse_req_t ioctl_as(struct rig *g, pid_t tid, unsigned cmd, void *arg)
{
	return ioctl_on(g, fake_req_new(g->fs), tid, cmd, arg);
}

int ioctl_result(fuse_req_t req)
{
	struct fake_reply *rep = reply_of(req);

	if (rep->kind == FAKE_ERR)
		return -rep->err;
	cr_assert(eq(int, rep->kind, FAKE_IOCTL));
	return rep->result;
}

int call_ioctl(struct rig *g, unsigned cmd, void *arg)
{
	return ioctl_result(ioctl_as(g, gettid(), cmd, arg));
}

int ioctl_get(struct rig *g, unsigned cmd)
{
	int val = -12345;

	cr_assert(zero(int, call_ioctl(g, cmd, &val)));
	return val;
}

void ioctl_set(struct rig *g, unsigned cmd, int val)
{
	cr_assert(zero(int, call_ioctl(g, cmd, &val)));
}

int sg_io_errno(struct rig *g, struct sg_io_hdr *h)
{
	return -call_ioctl(g, SG_IO, h);
}

/* ---- clients and scripts ---- */

struct sg_io_hdr v3_read(struct fake_cmd *b, unsigned tag, unsigned len, int pack_id)
{
	fake_cmd_init(b, false, tag, 8);
	return fake_v3_hdr(b, SG_DXFER_FROM_DEV, len, pack_id);
}

struct sg_io_v4 v4_read(struct fake_cmd *b, unsigned tag, unsigned len, int pack_id)
{
	fake_cmd_init(b, false, tag, 8);
	return fake_v4_hdr(b, false, len, pack_id);
}

void write_v3_reads(struct rig *g, struct fake_cmd *b, int n, int first)
{
	for (int i = 0; i < n; i++) {
		struct sg_io_hdr h = v3_read(&b[i], first + i, 512, first + i);

		cr_assert(eq(sz, write_ok(g, &h, V3, 0), V3), "write %d", i);
	}
}

void write_held(struct rig *g, const struct sg_io_hdr *h)
{
	fake_target_set_block(g->ft, true);
	write_ok(g, h, V3, 0);
	cr_assert(fake_target_wait_entered(g->ft, 1));
}

struct sg_io_v4 rcv_hdr(int pack_id, uint32_t flags)
{
	return (struct sg_io_v4){ .guard = 'Q', .request_extra = pack_id, .flags = flags };
}

void script_good(struct fake_target *t, size_t data_in_len)
{
	fake_script_good(t, data_in_len, 0, true);
}

void script_check(struct fake_target *t, size_t data_in_len, int32_t resid)
{
	script_good(t, data_in_len);
	t->script.resid = resid;
	fake_script_check_condition(t);
}

bool is_data_in(const unsigned char *p, size_t n, unsigned tag)
{
	return fake_is_pattern(p, 0, n, tag);
}

const struct sg_io_hdr *v3_out(const struct fake_reply *rep)
{
	cr_assert(eq(sz, rep->len, V3), "a v3 read returns one header");
	return (const struct sg_io_hdr *)rep->data;
}

struct sg_io_v4 v4_out(const struct fake_reply *rep, unsigned i)
{
	struct sg_io_v4 h;

	cr_assert(le(sz, (i + 1) * V4, rep->len));
	memcpy(&h, rep->data + i * V4, sizeof(h));
	return h;
}

/* ---- a client's memory that stalls ---- */

void stall_init(struct stall *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	/*
	 * Not UFFD_USER_MODE_ONLY, which a user may have: a fault of the
	 * kernel's own copy (process_vm_writev()) in such a page gives EFAULT
	 * at once instead of waiting, and waiting is what is tested.
	 */
	s->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	unit_skip_unless(s->uffd >= 0 || errno != EPERM,
			 "needs root: a userfaultfd that stalls the kernel's copies "
			 "(or vm.unprivileged_userfaultfd=1)");
	cr_assert(ge(int, s->uffd, 0), "userfaultfd: %s", strerror(errno));
	cr_assert(zero(int, ioctl(s->uffd, UFFDIO_API, &api)));
	s->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(s->page != MAP_FAILED);
	reg = (struct uffdio_register){ .range = { (uintptr_t)s->page, 4096 },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	cr_assert(zero(int, ioctl(s->uffd, UFFDIO_REGISTER, &reg)));
}

void stall_wake(struct stall *s)
{
	struct uffdio_zeropage z = { .range = { (uintptr_t)s->page, 4096 } };

	cr_assert(zero(int, ioctl(s->uffd, UFFDIO_ZEROPAGE, &z)));
}

void stall_fini(struct stall *s)
{
	close(s->uffd);
	munmap(s->page, 4096);
}

void stall_release(struct stall *s)
{
	stall_wake(s);
	stall_fini(s);
}

void wait_unstuck(struct opener *o)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (atomic_load(&o->stuck)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert(lt(long, now.tv_sec - start.tv_sec, FAKE_WAIT_SECONDS),
			  "the stalled copy never returned");
		sched_yield();
	}
}
