/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the fuzz harnesses: check() aborts, naming the broken promise (the
 * harness's file and line, and the condition) for the crash report;
 * dup_exact() makes the heap copy of exactly the bytes a contract gives,
 * so that ASan sees a read past them.  Header-only: each harness is built
 * from its one file and the module it tests.
 */
#ifndef CUSE_BSG_FUZZ_H
#define CUSE_BSG_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(cond) ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond))

static inline void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

/* A heap copy of exactly n bytes (malloc(0) too: any read of it is caught). */
static inline void *dup_exact(const void *p, size_t n)
{
	void *q = malloc(n);

	check(q != NULL || n == 0);
	if (n)
		memcpy(q, p, n);
	return q;
}

#endif
