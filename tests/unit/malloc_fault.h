/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Failing allocations, for the paths a failing malloc takes: a test binary
 * linked with this file and with -Wl,--wrap=malloc fails the malloc a test
 * chooses, one of its own thread's (counted) or any thread's next of a
 * given size.
 */
#ifndef CUSE_BSG_TESTS_MALLOC_FAULT_H
#define CUSE_BSG_TESTS_MALLOC_FAULT_H

#include <stddef.h>

/*
 * The calling thread counts its mallocs from now and fails the one at
 * fail_at (counted from 1; 0 fails none).
 */
void malloc_fault_arm(unsigned fail_at);
/* The mallocs made since malloc_fault_arm(), and no more failures. */
unsigned malloc_fault_disarm(void);
/* The next malloc of size bytes, on any thread, fails; 0 disarms. */
void malloc_fault_size(size_t size);

#endif /* CUSE_BSG_TESTS_MALLOC_FAULT_H */
