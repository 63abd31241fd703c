/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Latency of a recent window: a fixed histogram of microseconds, eight
 * buckets an octave (an answer within 12.5 %), in two slots of
 * LAT_SLOT_S seconds each, the current one and the last.  Recording is a
 * few relaxed atomics, from any thread, with no allocation and no lock; a
 * slot is emptied by the first record of its new period, so a record that
 * races with that may be lost (a sample, never the counters).  Pure: the
 * caller gives the time.
 */
#ifndef CUSE_BSG_LAT_H
#define CUSE_BSG_LAT_H

#include <stdatomic.h>
#include <stdint.h>

#define LAT_SLOT_S  10	/* the window: the last 10 to 20 seconds */
#define LAT_SUB	    8	/* buckets an octave */
#define LAT_BUCKETS 240 /* to 2^32 us */

struct lat_slot {
	atomic_ullong period; /* now_s / LAT_SLOT_S of its records, plus one; 0: empty */
	atomic_uint max;
	atomic_uint n[LAT_BUCKETS];
};

struct lat {
	struct lat_slot slot[2];
};

/* The window's figures, in microseconds. */
struct lat_summary {
	uint64_t count;
	uint32_t p50, p99, max;
};

/* The bucket of us, and the most a value of bucket b can be. */
unsigned lat_bucket(uint32_t us);
uint32_t lat_bucket_top(unsigned b);

/* One command of us microseconds, ended at now_s (a monotonic second). */
void lat_record(struct lat *l, uint64_t now_s, uint32_t us);

/* The window that ends at now_s. */
void lat_summary(const struct lat *l, uint64_t now_s, struct lat_summary *ret);

#endif /* CUSE_BSG_LAT_H */
