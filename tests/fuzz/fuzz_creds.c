// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for creds.c: every input is given to both parsers, as
 * a /proc/TID/status text and as a /proc/TID/stat text, in a heap buffer of
 * exactly its size with no NUL after it, so that ASan sees a read past len.
 * Beyond not crashing: 0 or -EINVAL, the result untouched on failure, the
 * Groups text inside the input and made of ids, creds_has_cap() in range,
 * and what was parsed, written back out the way procfs writes it, parses
 * to the same thing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "creds.h"
#include "fuzz.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The Groups ids, without the blanks around them, as creds.h keeps them. */
static void check_groups(const char *text, size_t len, const struct creds *c)
{
	const char *g = text + c->groups_off;

	check((uint64_t)c->groups_off + c->groups_len <= len);
	for (uint32_t i = 0; i < c->groups_len; i++)
		check(is_digit(g[i]) || is_blank(g[i]));
	check(!c->groups_len || (is_digit(g[0]) && is_digit(g[c->groups_len - 1])));
}

static void check_caps(const struct creds *c)
{
	for (unsigned cap = 0; cap < 64; cap++)
		check(creds_has_cap(c, cap) == ((c->cap_eff >> cap) & 1));
	check(!creds_has_cap(c, 64) && !creds_has_cap(c, UINT32_MAX));
}

/* c as procfs prints it, groups being the text c's Groups came from. */
static size_t unparse_status(const struct creds *c, const char *groups, char *buf, size_t size)
{
	int n = snprintf(buf, size,
			 "Name:\tx\nTgid:\t%d\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
			 "Groups:\t%.*s \nCapInh:\t%016" PRIx64 "\nCapPrm:\t%016" PRIx64
			 "\nCapEff:\t%016" PRIx64 "\nCapBnd:\t%016" PRIx64 "\nCapAmb:\t%016" PRIx64
			 "\nNoNewPrivs:\t%u\n",
			 c->tgid, c->uid[0], c->uid[1], c->uid[2], c->uid[3], c->gid[0], c->gid[1],
			 c->gid[2], c->gid[3], (int)c->groups_len, groups, c->cap_inh, c->cap_prm,
			 c->cap_eff, c->cap_bnd, c->cap_amb, c->no_new_privs);

	check(n > 0 && (size_t)n < size);
	return n;
}

/* Field by field: struct creds has padding. */
static int same_creds(const struct creds *a, const struct creds *b)
{
	return a->tgid == b->tgid && !memcmp(a->uid, b->uid, sizeof(a->uid)) &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid)) && a->cap_inh == b->cap_inh &&
	       a->cap_prm == b->cap_prm && a->cap_eff == b->cap_eff && a->cap_bnd == b->cap_bnd &&
	       a->cap_amb == b->cap_amb && a->no_new_privs == b->no_new_privs &&
	       a->groups_len == b->groups_len;
}

static void check_status(const char *text, size_t len)
{
	static char again_text[64 << 10];
	struct creds c, before, again;
	size_t n;
	int err;

	memset(&c, 0xa5, sizeof(c));
	memcpy(&before, &c, sizeof(c));
	err = creds_parse_status(text, len, &c);
	if (err) {
		check(err == -EINVAL && !memcmp(&c, &before, sizeof(c)));
		return;
	}
	check(c.tgid > 0 && c.no_new_privs <= 1);
	check_groups(text, len, &c);
	check_caps(&c);
	check(c.groups_len < sizeof(again_text) - 512);
	n = unparse_status(&c, text + c.groups_off, again_text, sizeof(again_text));
	check(!creds_parse_status(again_text, n, &again));
	check(same_creds(&again, &c));
	check(!memcmp(again_text + again.groups_off, text + c.groups_off, c.groups_len));
}

/* Fields of /proc/TID/stat that hold the layout, 1-based (proc(5)). */
static const unsigned layout_fields[CREDS_LAYOUT_N] = { 26, 27, 28, 45, 46, 47, 48, 49, 50, 51 };

/* A stat line with layout l and every other field after comm zero (52 in all). */
static size_t unparse_stat(const uint64_t *l, char *buf, size_t size)
{
	size_t n = snprintf(buf, size, "1 (x) S");
	unsigned k = 0;

	for (unsigned f = 4; f <= 52; f++) {
		uint64_t v = k < CREDS_LAYOUT_N && f == layout_fields[k] ? l[k++] : 0;

		n += snprintf(buf + n, size - n, " %" PRIu64, v);
	}
	n += snprintf(buf + n, size - n, "\n");
	check(k == CREDS_LAYOUT_N && n < size);
	return n;
}

static void check_stat(const char *text, size_t len)
{
	uint64_t l[CREDS_LAYOUT_N], before[CREDS_LAYOUT_N], again[CREDS_LAYOUT_N], any = 0;
	char line[1024];
	int err;

	memset(l, 0xa5, sizeof(l));
	memcpy(before, l, sizeof(l));
	err = creds_parse_stat(text, len, l);
	if (err) {
		check(err == -EINVAL && !memcmp(l, before, sizeof(l)));
		return;
	}
	for (unsigned k = 0; k < CREDS_LAYOUT_N; k++)
		any |= l[k];
	check(any != 0);
	check(l[2] != 0); /* start_stack: 0 when hidden or absent, never taken */
	check(!creds_parse_stat(line, unparse_stat(l, line, sizeof(line)), again));
	check(!memcmp(again, l, sizeof(l)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = dup_exact(data, size);

	check_status(text, size);
	check_stat(text, size);
	free(text);
	return 0;
}
