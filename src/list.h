/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Circular doubly linked lists in the manner of the kernel's list_head: a
 * struct list_head embedded in each element, found again with container_of.
 * Adding and removing are O(1).  No locking: whoever owns the head says
 * which lock protects it.
 */
#ifndef CUSE_BSG_LIST_H
#define CUSE_BSG_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
	struct list_head *prev, *next;
};

/* (written so that clang-format 14 and 19 agree on its spaces) */
#define container_of(ptr, type, member) ((type *)(((char *)(ptr)) - offsetof(type, member)))

#define LIST_HEAD_INIT(name) ((struct list_head){ &(name), &(name) })

static inline void list_init(struct list_head *h)
{
	h->prev = h;
	h->next = h;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_insert(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Add n at the front of h. */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	list_insert(n, h, h->next);
}

/* Add n at the back of h. */
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	list_insert(n, h->prev, h);
}

/* Take n off its list; n is left linked to itself, so list_empty(n) holds. */
static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

/* Move every element of from to the back of to; from is left empty. */
static inline void list_splice_tail(struct list_head *from, struct list_head *to)
{
	if (list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)

/* The first element; h must not be empty. */
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)

/* The first element, or NULL when h is empty. */
#define list_first_entry_or_null(h, type, member) \
	(list_empty(h) ? NULL : list_first_entry(h, type, member))

#define list_next_entry(pos, member) list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_for_each_entry(pos, h, member)                                              \
	for (pos = list_entry((h)->next, __typeof__(*pos), member); &pos->member != (h); \
	     pos = list_next_entry(pos, member))

/* The same, but pos may be taken off the list in the body. */
#define list_for_each_entry_safe(pos, n, h, member)                 \
	for (pos = list_entry((h)->next, __typeof__(*pos), member), \
	    n = list_next_entry(pos, member);                       \
	     &pos->member != (h); pos = n, n = list_next_entry(n, member))

#endif
