// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line's values, checked by rule (options.h).  strtoull() is
 * not used: it takes leading blanks and signs, and wraps "-1" to the
 * largest value, which a size would take for "no limit".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"

static bool is_digit(char c, enum opt_kind kind)
{
	return kind == OPT_OCTAL ? c >= '0' && c <= '7' : c >= '0' && c <= '9';
}

/* The digits of s, up to *end; -ERANGE past UINT64_MAX, -EINVAL without any. */
static int digits(const char *s, enum opt_kind kind, uint64_t *ret, const char **end)
{
	unsigned base = kind == OPT_OCTAL ? 8 : 10;
	uint64_t v = 0;
	const char *p = s;

	for (; is_digit(*p, kind); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*end = p;
	if (p == s)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The shift of a size's suffix, or -1. */
static int size_shift(const char *s)
{
	static const char units[] = "KMG";
	const char *u;

	if (!*s)
		return 0;
	u = s[1] ? NULL : strchr(units, *s);
	return u ? 10 * (int)(u - units + 1) : -1;
}

void options_size_name(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "\0KMG";
	unsigned i = 0;

	while (i < 3 && v && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	if (i)
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[i]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static bool is_control(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/* arg as a message may show it: one line, control characters as '?', at most 64 bytes. */
static const char *shown(const char *arg, char *buf, size_t len)
{
	size_t i = 0;

	for (; arg[i] && i + 4 < len && i < 64; i++)
		buf[i] = is_control(arg[i]) ? '?' : arg[i];
	if (arg[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

static void range_why(const struct opt_range *r, const char *value, char *why, size_t why_len)
{
	char lo[32], hi[32], buf[80];
	const char *arg = shown(value, buf, sizeof(buf));

	switch (r->kind) {
	case OPT_SIZE:
		options_size_name(r->min, lo, sizeof(lo));
		options_size_name(r->max, hi, sizeof(hi));
		snprintf(why, why_len,
			 "invalid %s '%s': a size of %s..%s bytes, digits with an optional K, M "
			 "or G suffix (KiB, MiB, GiB)",
			 r->option, arg, lo, hi);
		break;
	case OPT_OCTAL:
		snprintf(why, why_len, "invalid %s '%s': octal digits, %#llo..%#llo", r->option,
			 arg, (unsigned long long)r->min, (unsigned long long)r->max);
		break;
	default:
		snprintf(why, why_len, "invalid %s '%s': a whole number, %llu..%llu, no suffix",
			 r->option, arg, (unsigned long long)r->min, (unsigned long long)r->max);
	}
}

int options_number(const struct opt_range *r, const char *arg, uint64_t *ret, char *why,
		   size_t why_len)
{
	const char *end;
	uint64_t v;
	int shift = 0;
	int err = digits(arg, r->kind, &v, &end);

	if (!err && r->kind == OPT_SIZE)
		shift = size_shift(end);
	else if (!err && *end)
		shift = -1;
	if (err || shift < 0 || v > UINT64_MAX >> shift || v << shift < r->min ||
	    v << shift > r->max) {
		range_why(r, arg, why, why_len);
		return -EINVAL;
	}
	*ret = v << shift;
	return 0;
}

int options_check_text(const char *option, const char *arg, char *why, size_t why_len)
{
	if (!*arg) {
		snprintf(why, why_len, "invalid %s '': empty", option);
		return -EINVAL;
	}
	for (const char *p = arg; *p; p++)
		if (is_control(*p)) {
			/* not the value itself: that is what would forge a line */
			snprintf(
				why, why_len,
				"invalid %s: control character 0x%02x at byte %zu; none is allowed",
				option, (unsigned char)*p, (size_t)(p - arg));
			return -EINVAL;
		}
	return 0;
}

/* A component of a name: not empty, ".", ".."; no blank. */
static bool good_component(const char *s, size_t len)
{
	if (!len || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2)))
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ' ')
			return false;
	return true;
}

int options_check_name(const char *arg, size_t max_len, char *why, size_t why_len)
{
	const char *p = arg, *slash;
	char buf[80];
	int err = options_check_text("--name", arg, why, why_len);

	if (err)
		return err;
	if (strlen(arg) >= max_len || !strncmp(arg, "cuse", 4))
		goto bad;
	for (;;) {
		slash = strchr(p, '/');
		if (!good_component(p, slash ? (size_t)(slash - p) : strlen(p)))
			goto bad;
		if (!slash)
			return 0;
		p = slash + 1;
	}
bad:
	snprintf(why, why_len,
		 "invalid --name '%s': a path under /dev of 1..%zu bytes, relative, no blank, "
		 "no empty, '.' or '..' component, not cuse's own",
		 shown(arg, buf, sizeof(buf)), max_len - 1);
	return -EINVAL;
}

int options_parse_id(const char *option, const char *arg, uint32_t *ret, char *why, size_t why_len)
{
	const struct opt_range r = { option, OPT_DECIMAL, 0, OPT_ID_MAX };
	char buf[80];
	uint64_t v;

	if (options_check_text(option, arg, why, why_len) < 0)
		return -EINVAL;
	if (options_number(&r, arg, &v, why, why_len) < 0) {
		snprintf(why, why_len, "invalid %s '%s': a name, or a number 0..%llu", option,
			 shown(arg, buf, sizeof(buf)), OPT_ID_MAX);
		return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

int options_check_memory(uint64_t max_memory, uint64_t opener_memory, char *why, size_t why_len)
{
	char a[32], b[32];

	if (opener_memory <= max_memory)
		return 0;
	options_size_name(opener_memory, a, sizeof(a));
	options_size_name(max_memory, b, sizeof(b));
	snprintf(why, why_len, "invalid --opener-memory '%s': at most --max-memory, %s", a, b);
	return -EINVAL;
}
