// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recent window's histogram.  Its buckets are HDR-like: the first
 * LAT_SUB values exact, then LAT_SUB a power of two, so that a bucket's
 * index is a count of leading zeros and a shift, and its top the largest
 * value that falls in it.
 */
#include <string.h>

#include "lat.h"

unsigned lat_bucket(uint32_t us)
{
	unsigned e;

	if (us < LAT_SUB)
		return us;
	e = 31 - __builtin_clz(us); /* 3 and up */
	return (e - 2) * LAT_SUB + ((us >> (e - 3)) & (LAT_SUB - 1));
}

uint32_t lat_bucket_top(unsigned b)
{
	unsigned e, sub;

	if (b < LAT_SUB)
		return b;
	e = b / LAT_SUB + 2;
	sub = b % LAT_SUB;
	return (uint32_t)(((uint64_t)(LAT_SUB + sub + 1) << (e - 3)) - 1);
}

/* The slot for period p (now_s / LAT_SLOT_S + 1), emptied if it held an older one. */
static struct lat_slot *slot_for(struct lat *l, uint64_t p)
{
	struct lat_slot *s = &l->slot[p & 1];
	unsigned long long old = atomic_load_explicit(&s->period, memory_order_relaxed);

	if (old == p)
		return s;
	/* one thread wins and empties it; a racing record may be lost */
	if (atomic_compare_exchange_strong(&s->period, &old, p)) {
		for (unsigned i = 0; i < LAT_BUCKETS; i++)
			atomic_store_explicit(&s->n[i], 0, memory_order_relaxed);
		atomic_store_explicit(&s->max, 0, memory_order_relaxed);
	}
	return s;
}

void lat_record(struct lat *l, uint64_t now_s, uint32_t us)
{
	struct lat_slot *s = slot_for(l, now_s / LAT_SLOT_S + 1);
	unsigned max = atomic_load_explicit(&s->max, memory_order_relaxed);

	atomic_fetch_add_explicit(&s->n[lat_bucket(us)], 1, memory_order_relaxed);
	while (us > max && !atomic_compare_exchange_weak_explicit(
				   &s->max, &max, us, memory_order_relaxed, memory_order_relaxed))
		;
}

/* The value at rank (1-based) of the summed buckets n, no more than max. */
static uint32_t at_rank(const uint64_t *n, uint64_t rank, uint32_t max)
{
	uint64_t sum = 0;

	for (unsigned b = 0; b < LAT_BUCKETS; b++) {
		sum += n[b];
		if (sum >= rank)
			return lat_bucket_top(b) < max ? lat_bucket_top(b) : max;
	}
	return max;
}

void lat_summary(const struct lat *l, uint64_t now_s, struct lat_summary *ret)
{
	uint64_t n[LAT_BUCKETS] = { 0 }, p = now_s / LAT_SLOT_S + 1;

	*ret = (struct lat_summary){ 0 };
	for (unsigned i = 0; i < 2; i++) {
		const struct lat_slot *s = &l->slot[i];
		uint64_t sp = atomic_load_explicit(&s->period, memory_order_relaxed);
		uint32_t max = atomic_load_explicit(&s->max, memory_order_relaxed);

		if (!sp || sp + 1 < p || sp > p)
			continue; /* empty, or older than the last period */
		for (unsigned b = 0; b < LAT_BUCKETS; b++) {
			uint32_t c = atomic_load_explicit(&s->n[b], memory_order_relaxed);

			n[b] += c;
			ret->count += c;
		}
		if (max > ret->max)
			ret->max = max;
	}
	if (!ret->count)
		return;
	ret->p50 = at_rank(n, (ret->count + 1) / 2, ret->max);
	ret->p99 = at_rank(n, ret->count - ret->count / 100, ret->max);
}
