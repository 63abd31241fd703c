// SPDX-License-Identifier: GPL-2.0-only
/*
 * lat: the buckets' bounds; the window's p50, p99 and max; a slot emptied
 * by its next period; a window that has passed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "lat.h"

TestSuite(lat, .timeout = 10);

Test(lat, every_value_in_a_bucket_within_an_eighth)
{
	for (uint64_t us = 0; us <= UINT32_MAX; us = us < 64 ? us + 1 : us + us / 7 + 1) {
		unsigned b = lat_bucket((uint32_t)us);

		cr_assert_lt(b, LAT_BUCKETS, "%llu", (unsigned long long)us);
		cr_assert_geq(lat_bucket_top(b), us, "%llu", (unsigned long long)us);
		cr_assert(b == 0 || lat_bucket_top(b - 1) < us, "%llu", (unsigned long long)us);
		cr_assert_leq(lat_bucket_top(b) - us, us / 8, "%llu", (unsigned long long)us);
	}
	cr_expect_eq(lat_bucket(UINT32_MAX), LAT_BUCKETS - 1);
	cr_expect_eq(lat_bucket_top(LAT_BUCKETS - 1), UINT32_MAX);
}

Test(lat, percentiles_and_max_of_the_window)
{
	static struct lat l;
	struct lat_summary s;

	for (unsigned i = 0; i < 98; i++)
		lat_record(&l, 100, 100);
	lat_record(&l, 100, 5000);
	lat_record(&l, 101, 70000);
	lat_summary(&l, 105, &s);
	cr_expect_eq(s.count, 100);
	cr_expect_eq(s.p50, 103, "100 us falls in [96, 103]: %u", s.p50);
	cr_expect(s.p99 >= 5000 && s.p99 <= 5000 + 5000 / 8, "%u", s.p99);
	cr_expect_eq(s.max, 70000);
}

Test(lat, the_window_is_this_period_and_the_last)
{
	static struct lat l;
	struct lat_summary s;

	lat_record(&l, 5, 10);	/* period 0 */
	lat_record(&l, 15, 20); /* period 1 */
	lat_summary(&l, 19, &s);
	cr_expect_eq(s.count, 2);
	cr_expect_eq(s.max, 20);
	lat_summary(&l, 25, &s); /* period 2: the last is 1 */
	cr_expect_eq(s.count, 1);
	cr_expect_eq(s.max, 20);
	lat_summary(&l, 40, &s); /* both passed */
	cr_expect_eq(s.count, 0);
	cr_expect_eq(s.p50 | s.p99 | s.max, 0);
	lat_record(&l, 25, 7); /* period 2 takes period 0's slot, emptied */
	lat_summary(&l, 25, &s);
	cr_expect_eq(s.count, 2);
	cr_expect_eq(s.p50, 7);
	cr_expect_eq(s.max, 20);
}
