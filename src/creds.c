// SPDX-License-Identifier: GPL-2.0-only
/*
 * The parsers of /proc/TID/status and /proc/TID/stat.  Every field the
 * rules need must be there and well formed, or the whole text is refused:
 * a caller whose credentials cannot be read is never taken for one whose
 * can (the fail-open the credentials check once had).  procfs writes the
 * status fields in a fixed order, so each search starts where the last one
 * ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "creds.h"

struct text {
	const char *p, *end;
};

/* The value after "\nKEY" at or after t->p, up to its line's end; t->p moves there. */
static int field(struct text *t, const char *key, struct text *ret)
{
	size_t klen = strlen(key);
	const char *v = memmem(t->p, t->end - t->p, key, klen), *nl;

	if (!v)
		return -EINVAL;
	v += klen;
	nl = memchr(v, '\n', t->end - v);
	ret->p = v;
	ret->end = nl ? nl : t->end;
	t->p = ret->end;
	return 0;
}

static void skip_blanks(struct text *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

/* One number in base (10 or 16) of at most max, after blanks. */
static int number(struct text *t, unsigned base, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start;

	skip_blanks(t);
	start = t->p;
	for (; t->p < t->end; t->p++) {
		char c = *t->p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		if (d > max || v > (max - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	if (t->p == start || (t->p < t->end && *t->p != ' ' && *t->p != '\t'))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* A line of exactly n decimal ids. */
static int ids(struct text *line, uint32_t *ret, unsigned n)
{
	uint64_t v;

	for (unsigned i = 0; i < n; i++) {
		if (number(line, 10, UINT32_MAX, &v))
			return -EINVAL;
		ret[i] = (uint32_t)v;
	}
	skip_blanks(line);
	return line->p == line->end ? 0 : -EINVAL;
}

static int one(struct text *t, const char *key, unsigned base, uint64_t max, uint64_t *ret)
{
	struct text line;

	if (field(t, key, &line) || number(&line, base, max, ret))
		return -EINVAL;
	skip_blanks(&line);
	return line.p == line.end ? 0 : -EINVAL;
}

/* Groups: any number of decimal ids, checked, kept as text without the blanks around. */
static int groups(struct text *t, const char *buf, struct creds *c)
{
	struct text line, scan;
	uint64_t v;

	if (field(t, "\nGroups:", &line))
		return -EINVAL;
	skip_blanks(&line);
	while (line.end > line.p && (line.end[-1] == ' ' || line.end[-1] == '\t'))
		line.end--;
	scan = line;
	for (skip_blanks(&scan); scan.p < scan.end; skip_blanks(&scan))
		if (number(&scan, 10, UINT32_MAX, &v))
			return -EINVAL;
	c->groups_off = (uint32_t)(line.p - buf);
	c->groups_len = (uint32_t)(line.end - line.p);
	return 0;
}

int creds_parse_status(const char *buf, size_t len, struct creds *ret)
{
	struct text t = { buf, buf + len }, line;
	struct creds c = { 0 };
	uint64_t v;

	if (len > UINT32_MAX)
		return -EINVAL;
	/* the name comes first and may hold anything, "\nUid:" included */
	if (len < 5 || memcmp(buf, "Name:", 5) || field(&t, "", &line))
		return -EINVAL;
	if (one(&t, "\nTgid:", 10, INT32_MAX, &v) || v == 0)
		return -EINVAL;
	c.tgid = (pid_t)v;
	if (field(&t, "\nUid:", &line) || ids(&line, c.uid, 4))
		return -EINVAL;
	if (field(&t, "\nGid:", &line) || ids(&line, c.gid, 4))
		return -EINVAL;
	if (groups(&t, buf, &c))
		return -EINVAL;
	if (one(&t, "\nCapInh:", 16, UINT64_MAX, &c.cap_inh) ||
	    one(&t, "\nCapPrm:", 16, UINT64_MAX, &c.cap_prm) ||
	    one(&t, "\nCapEff:", 16, UINT64_MAX, &c.cap_eff) ||
	    one(&t, "\nCapBnd:", 16, UINT64_MAX, &c.cap_bnd) ||
	    one(&t, "\nCapAmb:", 16, UINT64_MAX, &c.cap_amb) || one(&t, "\nNoNewPrivs:", 10, 1, &v))
		return -EINVAL;
	c.no_new_privs = (uint32_t)v;
	*ret = c;
	return 0;
}

/* Fields of /proc/TID/stat (1-based, proc(5)) that describe the address space. */
static const unsigned layout_fields[CREDS_LAYOUT_N] = { 26, 27, 28, 45, 46, 47, 48, 49, 50, 51 };

int creds_parse_stat(const char *buf, size_t len, uint64_t ret[CREDS_LAYOUT_N])
{
	/* "pid (comm) state ...": comm may hold ')' and blanks, so the
	 * fields start after the last ')' with field 3 */
	const char *close = NULL;
	struct text t;
	uint64_t out[CREDS_LAYOUT_N];
	unsigned f, k = 0;

	for (size_t i = 0; i < len; i++)
		if (buf[i] == ')')
			close = buf + i;
	if (!close || close + 2 > buf + len || close[1] != ' ')
		return -EINVAL;
	t = (struct text){ close + 2, buf + len };
	if (t.end > t.p && t.end[-1] == '\n')
		t.end--;
	/* field 3 is the state letter: step over it */
	while (t.p < t.end && *t.p != ' ')
		t.p++;
	for (f = 4; k < CREDS_LAYOUT_N; f++) {
		uint64_t v;

		/* some fields before the layout are signed (tpgid, priority,
		 * nice): only their digits matter for finding the next */
		skip_blanks(&t);
		if (t.p < t.end && *t.p == '-' && f != layout_fields[k])
			t.p++;
		if (number(&t, 10, UINT64_MAX, &v))
			return -EINVAL;
		if (f == layout_fields[k])
			out[k++] = v;
	}
	/* hidden (no ptrace rights: start_code and end_code say 1, the rest
	 * 0) or no address space at all: start_stack is 0 */
	if (!out[2])
		return -EINVAL;
	memcpy(ret, out, sizeof(out));
	return 0;
}

bool creds_has_cap(const struct creds *c, unsigned cap)
{
	return cap < 64 && (c->cap_eff >> cap & 1);
}

/*
 * The whole of fd's procfs text into *buf, of *size bytes (grown as
 * needed, up to CREDS_TEXT_MAX, and NUL-terminated): its length or -errno.
 * *buf is the heap's, or stack, the caller's own, which is left for the
 * heap only if the text does not fit: a status fits in a page, and a caller
 * short of memory still reads it.  procfs makes the whole text at each
 * read, so a read shorter than asked is the end.
 */
ssize_t creds_read_text(int fd, char **buf, size_t *size, const char *stack)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = pread(fd, *buf + len, *size - 1 - len, (off_t)len);
		char *p;

		if (n < 0)
			return -errno;
		len += (size_t)n;
		if (len < *size - 1 || n == 0)
			break;
		if (*size >= CREDS_TEXT_MAX)
			return -EFBIG;
		p = *buf == stack ? malloc(*size * 2) : realloc(*buf, *size * 2);
		if (!p)
			return -ENOMEM;
		if (*buf == stack)
			memcpy(p, stack, len);
		*buf = p;
		*size *= 2;
	}
	(*buf)[len] = '\0';
	return (ssize_t)len;
}
