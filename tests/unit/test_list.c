// SPDX-License-Identifier: GPL-2.0-only
/*
 * list: order of list_add and list_add_tail, O(1) removal from anywhere,
 * removal while walking, splicing, and an element found again from its
 * embedded head.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "list.h"

TestSuite(list, .timeout = 10);

struct item {
	int v;
	struct list_head node;
};

/* The values of h in order, as many as fit in out; the count. */
static int values(struct list_head *h, int *out, int max)
{
	struct item *it;
	int n = 0;

	list_for_each_entry(it, h, node) {
		if (n < max)
			out[n] = it->v;
		n++;
	}
	return n;
}

Test(list, new_head_is_empty)
{
	struct list_head h;

	list_init(&h);
	cr_assert(list_empty(&h));
	cr_assert_null(list_first_entry_or_null(&h, struct item, node));
	cr_assert(eq(int, values(&h, NULL, 0), 0));
}

Test(list, add_tail_keeps_order_add_goes_first)
{
	struct list_head h = LIST_HEAD_INIT(h);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };
	int v[3];

	list_add_tail(&a.node, &h);
	list_add_tail(&b.node, &h);
	list_add(&c.node, &h);
	cr_assert(eq(int, values(&h, v, 3), 3));
	cr_assert(eq(int, v[0], 3));
	cr_assert(eq(int, v[1], 1));
	cr_assert(eq(int, v[2], 2));
	cr_assert(eq(ptr, list_first_entry(&h, struct item, node), &c));
}

Test(list, del_from_middle_front_and_back)
{
	struct list_head h = LIST_HEAD_INIT(h);
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	int v[4];

	for (int i = 0; i < 4; i++)
		list_add_tail(&it[i].node, &h);
	list_del(&it[2].node);
	cr_assert(list_empty(&it[2].node));
	list_del(&it[0].node);
	list_del(&it[3].node);
	cr_assert(eq(int, values(&h, v, 4), 1));
	cr_assert(eq(int, v[0], 1));
	list_del(&it[1].node);
	cr_assert(list_empty(&h));
}

Test(list, safe_walk_may_delete_each)
{
	struct list_head h = LIST_HEAD_INIT(h);
	struct item it[5], *pos, *n;
	int seen = 0;

	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		list_add_tail(&it[i].node, &h);
	}
	list_for_each_entry_safe(pos, n, &h, node) {
		cr_assert(eq(int, pos->v, seen));
		seen++;
		if (pos->v % 2 == 0)
			list_del(&pos->node);
	}
	cr_assert(eq(int, seen, 5));
	int v[5];

	cr_assert(eq(int, values(&h, v, 5), 2));
	cr_assert(eq(int, v[0], 1));
	cr_assert(eq(int, v[1], 3));
}

Test(list, splice_tail_appends_and_empties)
{
	struct list_head a = LIST_HEAD_INIT(a), b = LIST_HEAD_INIT(b);
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	int v[4];

	list_splice_tail(&b, &a);
	cr_assert(list_empty(&a));
	list_add_tail(&it[0].node, &a);
	list_add_tail(&it[1].node, &a);
	list_add_tail(&it[2].node, &b);
	list_add_tail(&it[3].node, &b);
	list_splice_tail(&b, &a);
	cr_assert(list_empty(&b));
	cr_assert(eq(int, values(&a, v, 4), 4));
	for (int i = 0; i < 4; i++)
		cr_assert(eq(int, v[i], i));
}

Test(list, container_of_finds_the_element)
{
	struct item x = { .v = 7 };

	cr_assert(eq(ptr, container_of(&x.node, struct item, node), &x));
}
