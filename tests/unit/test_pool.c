// SPDX-License-Identifier: GPL-2.0-only
/*
 * pool: FIFO order, every item run exactly once, slots in range, pool_free
 * drains the queue, the constructor's contract.  Items that must wait are
 * held on a gate (mutex + condition variable), never with a sleep.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "count.h"
#include "pool.h"

TestSuite(pool, .timeout = 20);

/* A gate items can wait at, and a counter of how many have arrived. */
struct gate {
	struct count arrived;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open; /* protected by lock */
};

static void gate_init(struct gate *g)
{
	*g = (struct gate){ .arrived = COUNT_INIT,
			    .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
}

static void gate_pass(struct gate *g)
{
	count_add(&g->arrived);
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

struct log {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned n;	      /* protected by lock */
	unsigned order[1000]; /* protected by lock */
};

struct item {
	struct pool_work work;
	unsigned id;
	atomic_uint runs;
	atomic_uint slot;
	struct log *log;
	struct gate *gate; /* wait here first, if set */
};

#define to_item(w) ((struct item *)(((char *)(w)) - offsetof(struct item, work)))

static void item_run(struct pool_work *w, unsigned slot)
{
	struct item *it = to_item(w);

	if (it->gate)
		gate_pass(it->gate);
	atomic_fetch_add(&it->runs, 1);
	atomic_store(&it->slot, slot);
	if (it->log) {
		pthread_mutex_lock(&it->log->lock);
		if (it->log->n < sizeof(it->log->order) / sizeof(it->log->order[0]))
			it->log->order[it->log->n] = it->id;
		it->log->n++;
		pthread_cond_broadcast(&it->log->cond);
		pthread_mutex_unlock(&it->log->lock);
	}
}

static void log_init(struct log *l)
{
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->n = 0;
}

static void log_wait(struct log *l, unsigned n)
{
	pthread_mutex_lock(&l->lock);
	while (l->n < n)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

static void item_init(struct item *it, unsigned id, struct log *l, struct gate *g)
{
	it->work.run = item_run;
	it->id = id;
	atomic_init(&it->runs, 0);
	atomic_init(&it->slot, ~0u);
	it->log = l;
	it->gate = g;
}

/* A pool of one worker, held at g on items[0] (log l, started here): it runs when this returns. */
static struct pool *one_worker_held(struct item *items, struct log *l, struct gate *g)
{
	struct pool *p;

	log_init(l);
	gate_init(g);
	cr_assert(zero(int, pool_new(1, &p)));
	item_init(&items[0], 0, l, g);
	pool_submit(p, &items[0].work);
	count_wait(&g->arrived, 1);
	return p;
}

/* n items submitted to p, each to wait at g (started here) once it runs. */
static void submit_held(struct pool *p, struct item *it, unsigned n, struct gate *g)
{
	gate_init(g);
	for (unsigned i = 0; i < n; i++) {
		it[i].gate = g;
		it[i].work.run = item_run;
		pool_submit(p, &it[i].work);
	}
}

Test(pool, new_zero_threads_is_einval)
{
	struct pool *p = (struct pool *)0x1;

	cr_expect(eq(int, pool_new(0, &p), -EINVAL));
	cr_expect(eq(ptr, p, (struct pool *)0x1), "*ret written on failure");
}

Test(pool, free_null_is_fine)
{
	pool_free(NULL);
}

Test(pool, one_worker_runs_items_in_fifo_order)
{
	static struct item items[100];
	static struct log l;
	struct gate g;
	struct pool *p = one_worker_held(items, &l, &g);

	/* the worker held on the first item: the rest are all queued together */
	for (unsigned i = 1; i < 100; i++) {
		item_init(&items[i], i, &l, NULL);
		pool_submit(p, &items[i].work);
	}
	cr_expect(eq(u32, pool_backlog(p), 99));
	gate_open(&g);
	log_wait(&l, 100);
	pool_free(p);
	cr_assert(eq(u32, l.n, 100));
	for (unsigned i = 0; i < 100; i++) {
		cr_expect(eq(u32, l.order[i], i), "position %u", i);
		cr_expect(zero(u32, atomic_load(&items[i].slot)), "item %u", i);
	}
}

Test(pool, four_workers_run_each_of_1000_items_once)
{
	static struct item items[1000];
	static struct log l;
	struct pool *p;

	log_init(&l);
	cr_assert(zero(int, pool_new(4, &p)));
	for (unsigned i = 0; i < 1000; i++) {
		item_init(&items[i], i, &l, NULL);
		pool_submit(p, &items[i].work);
	}
	log_wait(&l, 1000);
	pool_free(p);
	cr_expect(eq(u32, l.n, 1000));
	for (unsigned i = 0; i < 1000; i++) {
		cr_expect(eq(u32, atomic_load(&items[i].runs), 1), "item %u", i);
		cr_expect(lt(u32, atomic_load(&items[i].slot), 4), "item %u", i);
	}
}

Test(pool, four_workers_run_at_once_with_distinct_slots)
{
	static struct item items[4];
	struct gate g;
	struct pool *p;
	unsigned seen = 0;

	gate_init(&g);
	cr_assert(zero(int, pool_new(4, &p)));
	for (unsigned i = 0; i < 4; i++) {
		item_init(&items[i], i, NULL, &g);
		pool_submit(p, &items[i].work);
	}
	/* all four are inside run() at the same time, or this never returns */
	count_wait(&g.arrived, 4);
	cr_expect(zero(u32, pool_backlog(p)));
	gate_open(&g);
	pool_free(p);
	for (unsigned i = 0; i < 4; i++) {
		unsigned slot = atomic_load(&items[i].slot);

		cr_assert(lt(u32, slot, 4), "item %u", i);
		seen |= 1u << slot;
	}
	cr_expect(eq(u32, seen, 0xf), "slots used: 0x%x", seen);
}

/*
 * pool_free() joins its workers only after it has set the stop flag and
 * woken them.  This wrapper (the executable's pthread_join() comes before
 * libc's) tells a test when that point is reached, once, so the test can
 * let the worker go knowing the pool is already stopping.
 */
static _Atomic(struct gate *) join_hook;

int pthread_join(pthread_t thread, void **ret)
{
	static int (*real_join)(pthread_t, void **);
	struct gate *g = atomic_exchange(&join_hook, NULL);

	if (!real_join)
		real_join = (int (*)(pthread_t, void **))dlsym(RTLD_NEXT, "pthread_join");
	if (g)
		count_add(&g->arrived);
	return real_join(thread, ret);
}

struct freer {
	struct pool *p;
	pthread_t thread;
};

static void *free_pool(void *arg)
{
	struct freer *f = arg;

	pool_free(f->p);
	return NULL;
}

Test(pool, free_runs_what_is_still_queued)
{
	static struct item items[11];
	struct gate g, joining;
	struct freer f;

	gate_init(&g);
	gate_init(&joining);
	cr_assert(zero(int, pool_new(1, &f.p)));
	item_init(&items[0], 0, NULL, &g);
	pool_submit(f.p, &items[0].work);
	count_wait(&g.arrived, 1);
	for (unsigned i = 1; i < 11; i++) {
		item_init(&items[i], i, NULL, NULL);
		pool_submit(f.p, &items[i].work);
	}
	cr_assert(eq(u32, pool_backlog(f.p), 10));
	/* the pool is told to stop while its worker is held with ten items queued */
	atomic_store(&join_hook, &joining);
	cr_assert(zero(int, pthread_create(&f.thread, NULL, free_pool, &f)));
	count_wait(&joining.arrived, 1);
	gate_open(&g);
	cr_assert(zero(int, pthread_join(f.thread, NULL)));
	for (unsigned i = 0; i < 11; i++)
		cr_expect(eq(u32, atomic_load(&items[i].runs), 1), "item %u", i);
}

Test(pool, backlog_counts_queued_not_running)
{
	static struct item items[4];
	static struct log l;
	struct gate g;
	struct pool *p;

	log_init(&l);
	gate_init(&g);
	cr_assert(zero(int, pool_new(1, &p)));
	cr_expect(zero(u32, pool_backlog(p)));
	item_init(&items[0], 0, &l, &g);
	pool_submit(p, &items[0].work);
	count_wait(&g.arrived, 1);
	cr_expect(zero(u32, pool_backlog(p)), "the running item is not backlog");
	for (unsigned i = 1; i < 4; i++) {
		item_init(&items[i], i, &l, NULL);
		pool_submit(p, &items[i].work);
		cr_expect(eq(u32, pool_backlog(p), i));
	}
	gate_open(&g);
	log_wait(&l, 4);
	cr_expect(zero(u32, pool_backlog(p)));
	pool_free(p);
}

Test(pool, items_can_be_resubmitted_after_running)
{
	static struct item it;
	static struct log l;
	struct pool *p;

	log_init(&l);
	cr_assert(zero(int, pool_new(2, &p)));
	item_init(&it, 7, &l, NULL);
	for (unsigned i = 0; i < 50; i++) {
		pool_submit(p, &it.work);
		log_wait(&l, i + 1);
	}
	pool_free(p);
	cr_expect(eq(u32, atomic_load(&it.runs), 50));
}

/* ---- the elastic pool ---- */

/* An item held at a gate does not hold back the next: a thread is made for it. */
Test(pool, elastic_runs_the_next_item_while_one_is_held)
{
	struct pool *p;
	struct gate g;
	struct log l;
	struct item held = { .id = 1 }, next = { .id = 2 };

	gate_init(&g);
	log_init(&l);
	held.gate = &g;
	next.log = &l;
	cr_assert(zero(int, pool_new_elastic(4, &p)));
	held.work.run = item_run;
	next.work.run = item_run;
	pool_submit(p, &held.work);
	count_wait(&g.arrived, 1);
	pool_submit(p, &next.work);
	log_wait(&l, 1);
	cr_expect(eq(u32, atomic_load(&next.runs), 1), "ran while the first was held");
	cr_expect(zero(u32, atomic_load(&held.runs)));
	gate_open(&g);
	cr_expect(pool_free_within(p, 5000), "every thread left");
	cr_expect(eq(u32, atomic_load(&held.runs), 1));
}

/* At most max threads: past it, items wait for one. */
Test(pool, elastic_makes_no_more_than_max_threads)
{
	struct pool *p;
	struct gate g;
	struct item it[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } };

	cr_assert(zero(int, pool_new_elastic(2, &p)));
	submit_held(p, it, 3, &g);
	count_wait(&g.arrived, 2);
	cr_expect(eq(u32, pool_backlog(p), 1), "the third waits for a thread");
	gate_open(&g);
	pool_free(p);
	for (int i = 0; i < 3; i++)
		cr_expect(eq(u32, atomic_load(&it[i].runs), 1));
}

/* A burst's threads leave once idle, but for POOL_KEEP_IDLE of them; items still run. */
Test(pool, elastic_threads_leave_once_idle)
{
	struct item it[6] = { { .id = 1 }, { .id = 2 }, { .id = 3 },
			      { .id = 4 }, { .id = 5 }, { .id = 6 } };
	struct item late = { .id = 7 };
	struct pool *p;
	struct gate g;
	struct log l;

	log_init(&l);
	cr_assert(zero(int, pool_new_elastic(8, &p)));
	submit_held(p, it, 6, &g);
	count_wait(&g.arrived, 6);
	cr_expect(eq(u32, pool_threads(p), 6), "one thread per held item");
	gate_open(&g);
	while (pool_threads(p) > POOL_KEEP_IDLE)
		sched_yield(); /* the idle bound passes: no event to wait on */
	cr_expect(eq(u32, pool_threads(p), POOL_KEEP_IDLE), "the last ones stay");
	late.log = &l;
	late.work.run = item_run;
	pool_submit(p, &late.work);
	log_wait(&l, 1);
	pool_free(p);
	for (int i = 0; i < 6; i++)
		cr_expect(eq(u32, atomic_load(&it[i].runs), 1));
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/*
 * The threads kept past the idle bound sleep: they do not wait again on a
 * bound that has already passed (each wait would end at once, a busy loop
 * taking whole CPUs from the commands).  The process's CPU time, not a
 * speed: over a second asleep it stays far below the second a spinning
 * thread takes.
 */
Test(pool, elastic_threads_kept_idle_sleep)
{
	struct item it[POOL_KEEP_IDLE] = { { .id = 1 } };
	struct timespec rest = { POOL_IDLE_MS / 1000 + 1, 0 }, second = { 1, 0 };
	struct pool *p;
	struct gate g;
	double cpu;

	cr_assert(zero(int, pool_new_elastic(POOL_KEEP_IDLE, &p)));
	submit_held(p, it, POOL_KEEP_IDLE, &g);
	count_wait(&g.arrived, POOL_KEEP_IDLE);
	gate_open(&g);
	nanosleep(&rest, NULL); /* past the idle bound */
	cr_expect(eq(u32, pool_threads(p), POOL_KEEP_IDLE), "kept");
	cpu = cpu_seconds();
	nanosleep(&second, NULL);
	cpu = cpu_seconds() - cpu;
	cr_expect(cpu < 0.2, "idle threads took %.2f s of CPU in 1 s", cpu);
	pool_free(p);
}
