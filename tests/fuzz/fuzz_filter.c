// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for filter_parse().  Beyond not crashing: the reason is
 * always a bounded string, *ret is untouched on failure, every decision is
 * in range, filter_check() answers only 0 or -EPERM, and a policy written
 * back out as text parses to the same struct.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "fuzz.h"

/* The policy in the file format: one line per opcode that is not default. */
static size_t unparse(const struct filter_policy *p, char *buf, size_t size)
{
	size_t n = snprintf(buf, size, "kernel %s\n", p->kernel == FILTER_KERNEL_SG ? "sg" : "bsg");

	for (unsigned op = 0; op < 256; op++)
		if (p->op[op] != FILTER_DEFAULT)
			n += snprintf(buf + n, size - n, "%s 0x%02x\n",
				      filter_decision_name(p->op[op]), op);
	check(n < size);
	return n;
}

static void check_answers(const struct filter_policy *p)
{
	static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR, O_ACCMODE };

	for (unsigned op = 0; op < 256; op++) {
		uint8_t cdb[6] = { op };

		check(p->op[op] <= FILTER_DENY);
		for (unsigned m = 0; m < 4 * 2 * 2; m++) {
			struct filter_ctx c = { .open_flags = modes[m % 4],
						.rawio = m / 4 % 2,
						.by_write = m / 8 };
			int err = filter_check(p, cdb, sizeof(cdb), &c);

			check(err == 0 || err == -EPERM);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[64 << 10];
	struct filter_policy p, again, before;
	char why[96];
	int err;

	memset(&p, 0x5a, sizeof(p));
	before = p;
	memset(why, 'x', sizeof(why));
	err = filter_parse((const char *)data, size, &p, why, sizeof(why));
	check(memchr(why, '\0', sizeof(why)) != NULL);
	if (err) {
		check(err == -EINVAL);
		check(!strncmp(why, "line ", 5) || !strncmp(why, "larger than", 11));
		check(!memcmp(&p, &before, sizeof(p)));
		return 0;
	}
	check(why[0] == '\0');
	check(p.kernel == FILTER_KERNEL_BSG || p.kernel == FILTER_KERNEL_SG);
	check_answers(&p);
	check(!filter_parse(text, unparse(&p, text, sizeof(text)), &again, why, sizeof(why)));
	check(!memcmp(&p, &again, sizeof(p)));
	return 0;
}
