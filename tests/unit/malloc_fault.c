// SPDX-License-Identifier: GPL-2.0-only
/*
 * Failing allocations (malloc_fault.h): the binary is linked with
 * --wrap=malloc, so every malloc() comes here first.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "malloc_fault.h"

static __thread struct {
	bool armed;
	unsigned seen, fail_at;
} malloc_fault;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

/* Any thread's next malloc of this size fails (0: none); see malloc_fault_size(). */
static _Atomic size_t malloc_fault_of_size;

void *__wrap_malloc(size_t size)
{
	size_t want = size;

	if (size && atomic_compare_exchange_strong(&malloc_fault_of_size, &want, 0)) {
		errno = ENOMEM;
		return NULL;
	}
	if (malloc_fault.armed && ++malloc_fault.seen == malloc_fault.fail_at) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(size);
}

void malloc_fault_arm(unsigned fail_at)
{
	malloc_fault.seen = 0;
	malloc_fault.fail_at = fail_at;
	malloc_fault.armed = true;
}

void malloc_fault_size(size_t size)
{
	atomic_store(&malloc_fault_of_size, size);
}

unsigned malloc_fault_disarm(void)
{
	malloc_fault.armed = false;
	return malloc_fault.seen;
}
