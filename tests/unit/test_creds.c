// SPDX-License-Identifier: GPL-2.0-only
/*
 * creds.c: the status and stat parsers on set texts.  Whatever cannot be
 * read in full is refused, never read as something else.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "creds.h"

TestSuite(creds, .timeout = 30);

#define HEAD "Name:\tx\\nUid:\t7 7 7 7\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"
#define IDS  "Uid:\t1000\t1001\t1002\t1003\nGid:\t2000\t2001\t2002\t2003\nFDSize:\t64\n"
#define CAPS                                                                                \
	"CapInh:\t0000000000000001\nCapPrm:\t000001ffffffffff\nCapEff:\t0000000000020400\n" \
	"CapBnd:\t000001fffffffffe\nCapAmb:\t0000000000000002\nNoNewPrivs:\t1\nSeccomp:\t0\n"

static int parse(const char *text, struct creds *c)
{
	return creds_parse_status(text, strlen(text), c);
}

Test(creds, status_each_field_from_its_own_line)
{
	static const char text[] = HEAD IDS "Groups:\t4 24 27 1000 \nNStgid:\t42\n" CAPS;
	struct creds c;

	cr_assert(zero(int, parse(text, &c)));
	cr_expect(eq(int, c.tgid, 42));
	cr_expect(eq(u32, c.uid[0], 1000), "not the escaped name's Uid");
	cr_expect(eq(u32, c.uid[3], 1003));
	cr_expect(eq(u32, c.gid[0], 2000));
	cr_expect(eq(u32, c.gid[3], 2003));
	cr_expect(eq(u64, c.cap_inh, 1));
	cr_expect(eq(u64, c.cap_prm, 0x1ffffffffffull));
	cr_expect(eq(u64, c.cap_eff, 0x20400));
	cr_expect(eq(u64, c.cap_bnd, 0x1fffffffffeull));
	cr_expect(eq(u64, c.cap_amb, 2));
	cr_expect(eq(u32, c.no_new_privs, 1));
	cr_expect(eq(u32, c.groups_len, 12), "the ids, not the blanks around them");
	cr_expect(zero(int, strncmp(text + c.groups_off, "4 24 27 1000", c.groups_len)));
	cr_expect(creds_has_cap(&c, 17) && creds_has_cap(&c, 10) && !creds_has_cap(&c, 21));
}

Test(creds, status_groups_of_any_number)
{
	static char text[64 << 10];
	size_t off;
	struct creds c;

	off = (size_t)snprintf(text, sizeof(text), "%s%sGroups:\t", HEAD, IDS);
	for (unsigned g = 1; g <= 2000; g++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%u ", 100000 + g);
	snprintf(text + off, sizeof(text) - off, "\n%s", CAPS);
	cr_assert(zero(int, parse(text, &c)), "a status text of %zu bytes", strlen(text));
	cr_expect(eq(u32, c.groups_len, 2000 * 7 - 1), "all 2000 groups, not the first 64");
	cr_expect(eq(u64, c.cap_eff, 0x20400), "CapEff past the first 8 KiB");
}

Test(creds, status_no_groups_stops_at_the_line_end)
{
	static const char text[] = HEAD IDS "Groups:\t\n12 13\n" CAPS;
	struct creds c;

	cr_assert(zero(int, parse(text, &c)));
	cr_expect(zero(u32, c.groups_len), "the next line is not read");
}

Test(creds, status_missing_short_or_malformed_is_refused)
{
	static const char *const bad[] = {
		"",
		HEAD "Gid:\t0\t0\t0\t0\nGroups:\t\n" CAPS,
		HEAD "Uid:\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n" CAPS,
		HEAD "Uid:\t0\t0\t0\t0 5\nGid:\t0\t0\t0\t0\nGroups:\t\n" CAPS,
		HEAD IDS CAPS,
		HEAD IDS "Groups:\t1 x\n" CAPS,
		HEAD IDS "Groups:\t99999999999\n" CAPS,
		HEAD IDS "Groups:\t\nCapInh:\t0\nCapPrm:\t0\nCapEff:\t0\n", /* cut off */
		HEAD IDS "Groups:\t\nCapInh:\t0\nCapPrm:\t0\nCapEff:\t0\nCapBnd:\t0\nCapAmb:\t0\n",
		HEAD IDS "Groups:\t\nCapInh:\t0\nCapPrm:\t0\nCapEff:\tzz\nCapBnd:\t0\nCapAmb:\t0\n"
			 "NoNewPrivs:\t0\n",
		HEAD IDS "Groups:\t\nCapInh:\t0\nCapPrm:\t0\nCapEff:\t10000000000000000\n"
			 "CapBnd:\t0\nCapAmb:\t0\nNoNewPrivs:\t0\n",
		"Name:\tx\nUid:\t0\t0\t0\t0\n", /* no Tgid */
		"Uid:\t0\t0\t0\t0\nTgid:\t1\n", /* no Name first */
		HEAD IDS "Groups:\t\nCapInh:\t0\nCapPrm:\t0\nCapEff:\t0\nCapBnd:\t0\nCapAmb:\t0\n"
			 "NoNewPrivs:\t7\n", /* past its bound by one digit */
	};
	struct creds c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int, parse(bad[i], &c), -EINVAL), "text %zu", i);
}

#define STAT_HEAD "1234 (a) b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 55 "
/* fields 23-25, then 26-28 (start_code, end_code, start_stack), 29-44, 45-51 */
#define STAT_MID  "1000 200 18446744073709551615 4096 8192 140000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
#define STAT_TAIL "12288 16384 20480 140100 140200 140300 140400 0\n"

Test(creds, stat_layout_after_the_last_parenthesis)
{
	static const char text[] = STAT_HEAD STAT_MID STAT_TAIL;
	uint64_t l[CREDS_LAYOUT_N];

	cr_assert(zero(int, creds_parse_stat(text, strlen(text), l)));
	cr_expect(eq(u64, l[0], 4096), "start_code");
	cr_expect(eq(u64, l[1], 8192), "end_code");
	cr_expect(eq(u64, l[2], 140000), "start_stack");
	cr_expect(eq(u64, l[3], 12288), "start_data");
	cr_expect(eq(u64, l[9], 140400), "env_end");
}

Test(creds, stat_hidden_or_malformed_is_refused)
{
	/* as procfs shows it to a reader without ptrace rights */
	static const char hidden[] = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 1 2 3 "
				     "1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	static const char *const bad[] = { hidden, "", "1 (x", "1 (x) S 1 2 3\n",
					   STAT_HEAD "12 x 13\n" };
	uint64_t l[CREDS_LAYOUT_N];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int, creds_parse_stat(bad[i], strlen(bad[i]), l), -EINVAL), "text %zu",
			  i);
}

/* A file of len bytes, each its offset's low byte but never NUL, at offset 0. */
static int text_file(size_t len)
{
	FILE *f = tmpfile();
	int fd;

	cr_assert(not(eq(ptr, f, NULL)), "tmpfile");
	for (size_t i = 0; i < len; i++)
		cr_assert(eq(int, fputc('a' + (int)(i % 26), f), 'a' + (int)(i % 26)));
	cr_assert(zero(int, fflush(f)));
	fd = dup(fileno(f));
	fclose(f);
	return fd;
}

Test(creds, read_text_grows_from_the_callers_stack_buffer)
{
	char stack[64], *text = stack;
	size_t size = sizeof(stack);
	int fd = text_file(10000);
	ssize_t n = creds_read_text(fd, &text, &size, stack);

	cr_assert(eq(sz, (size_t)n, 10000));
	cr_assert(not(eq(ptr, text, stack)), "moved to the heap");
	cr_assert(ge(sz, size, 10001));
	cr_assert(eq(chr, text[10000], '\0'));
	for (size_t i = 0; i < 10000; i++)
		cr_assert(eq(chr, text[i], (char)('a' + i % 26)), "byte %zu", i);
	free(text);
	close(fd);
}

Test(creds, read_text_that_fits_stays_in_the_stack_buffer)
{
	char stack[64], *text = stack;
	size_t size = sizeof(stack);
	int fd = text_file(62);

	cr_assert(eq(sz, (size_t)creds_read_text(fd, &text, &size, stack), 62));
	cr_assert(eq(ptr, text, stack));
	cr_assert(eq(chr, text[62], '\0'));
	close(fd);
	/* 63 bytes fill 64 but for the NUL: a full read may not be the end, so
	 * the text moves to the heap, and the next read finds the end */
	fd = text_file(63);
	cr_assert(eq(sz, (size_t)creds_read_text(fd, &text, &size, stack), 63));
	cr_assert(not(eq(ptr, text, stack)));
	cr_assert(eq(chr, text[62], 'a' + 62 % 26));
	cr_assert(eq(chr, text[63], '\0'));
	free(text);
	close(fd);
}

Test(creds, read_text_past_the_bound_is_refused)
{
	size_t size = 4096;
	char *text = malloc(size);
	int fd = text_file(CREDS_TEXT_MAX + 1);

	cr_assert(eq(int, (int)creds_read_text(fd, &text, &size, NULL), -EFBIG));
	free(text);
	close(fd);
}
