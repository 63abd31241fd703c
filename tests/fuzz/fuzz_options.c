// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for options.c: every input, cut at its first NUL, is an
 * option's value for each rule (a decimal range, an octal mode, a size, a
 * name, an id, any text).  Beyond not crashing: 0 or -EINVAL, the result
 * untouched on failure and in range on success, a value taken only if it
 * is made of the rule's digits (and one suffix for a size), a message that
 * is one line naming the option, and a size written back by
 * options_size_name() read again to the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "options.h"

static const struct opt_range rules[] = {
	{ "--threads", OPT_DECIMAL, 1, 64 },
	{ "--mode", OPT_OCTAL, 0, 0777 },
	{ "--max-memory", OPT_SIZE, OPT_SIZE_MIN, OPT_SIZE_MAX },
	{ "--wide", OPT_DECIMAL, 0, UINT64_MAX },
};

static void one_line_naming(const char *why, const char *option)
{
	check(strchr(why, '\n') == NULL);
	check(strstr(why, option) != NULL);
}

static void number(const struct opt_range *r, const char *s)
{
	const char *digits = r->kind == OPT_OCTAL ? "01234567" : "0123456789";
	size_t n = strspn(s, digits);
	char why[512] = "", back[32];
	uint64_t v = 42, again = 0;
	int err = options_number(r, s, &v, why, sizeof(why));

	check(err == 0 || err == -EINVAL);
	if (err) {
		check(v == 42);
		one_line_naming(why, r->option);
		return;
	}
	check(v >= r->min && v <= r->max);
	check(n > 0);
	check(!s[n] || (r->kind == OPT_SIZE && strchr("KMG", s[n]) && !s[n + 1]));
	if (r->kind != OPT_SIZE)
		return;
	options_size_name(v, back, sizeof(back));
	check(options_number(r, back, &again, why, sizeof(why)) == 0 && again == v);
}

/* A name taken: short, relative, each component neither empty, "." nor "..", no blank. */
static void valid_name(const char *s)
{
	const char *c = s;

	check(strlen(s) < 128 && strncmp(s, "cuse", 4) && !strchr(s, ' '));
	for (const char *p = s;; p++) {
		if (*p && *p != '/')
			continue;
		check(p > c && !(p - c == 1 && c[0] == '.') &&
		      !(p - c == 2 && !strncmp(c, "..", 2)));
		if (!*p)
			break;
		c = p + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), why[512] = "";
	uint32_t id = 7;
	int err;

	check(s != NULL);
	memcpy(s, data, size);
	s[size] = '\0';
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		number(&rules[i], s);
	err = options_check_name(s, 128, why, sizeof(why));
	check(err == 0 || err == -EINVAL);
	if (err)
		one_line_naming(why, "--name");
	else
		valid_name(s);
	err = options_parse_id("--owner", s, &id, why, sizeof(why));
	check(err == 0 || err == -EINVAL);
	check(err == 0 || id == 7);
	if (err)
		one_line_naming(why, "--owner");
	err = options_check_text("--policy", s, why, sizeof(why));
	if (err)
		one_line_naming(why, "--policy");
	else
		for (const char *p = s; *p; p++)
			check((unsigned char)*p >= 0x20 && *p != 0x7f);
	free(s);
	return 0;
}
