// SPDX-License-Identifier: GPL-2.0-only
/*
 * filter: the kernel's rule for every opcode (bsg and sg), policy overrides
 * and their precedence, and the policy file parser with each of its errors.
 * Pure code, so every rule is a row in a table.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"

TestSuite(filter, .timeout = 10);

/*
 * The kernel's lists (6.1, drivers/scsi/scsi_ioctl.c scsi_cmd_allowed()),
 * written out again here by number, so that the module's table is checked
 * against an independent copy.
 */
static const uint8_t kernel_read_ok[] = {
	0x00, 0x03, 0x08, 0x28, 0xa8, 0x88, 0x3c, 0x37, 0x25, 0x3e, 0x12, 0x1a, 0x5a, 0x4d, 0x1b,
	0x2f, 0x8f, 0xa0, 0x9e, 0x1c, 0xa3, 0x5c, 0xbc, 0x45, 0x47, 0x48, 0x4b, 0xbe, 0xb9, 0x51,
	0xad, 0x44, 0x52, 0x42, 0x43, 0xa4, 0xba, 0x46, 0x23, 0x4a, 0xac, 0x2b, 0x4e, 0x95,
};

static const uint8_t kernel_write_ok[] = {
	0x0a, 0x2a, 0x2e, 0xaa, 0xae, 0x8a, 0x3f, 0xea, 0x41, 0x93, 0x0d,
	0x19, 0x55, 0x15, 0x4c, 0xa1, 0x5b, 0x35, 0x04, 0x58, 0x53, 0xbf,
	0xa2, 0x54, 0x5d, 0xbb, 0x1e, 0xa6, 0xb6, 0xa7, 0x94,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static bool listed(const uint8_t *list, size_t n, unsigned op)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == op)
			return true;
	return false;
}

static int check_op(const struct filter_policy *p, uint8_t op, int open_flags, bool rawio)
{
	struct filter_ctx c = { .open_flags = open_flags, .rawio = rawio };
	uint8_t cdb[16] = { op };

	return filter_check(p, cdb, sizeof(cdb), &c);
}

Test(filter, kernel_lists_have_the_kernels_sizes)
{
	unsigned read_ok = 0, write_ok = 0;

	for (unsigned op = 0; op < 256; op++) {
		read_ok += filter_kernel_decision(op) == FILTER_ALLOW;
		write_ok += filter_kernel_decision(op) == FILTER_ALLOW_WRITE;
	}
	cr_expect(eq(u32, read_ok, ARRAY_SIZE(kernel_read_ok)));
	cr_expect(eq(u32, write_ok, ARRAY_SIZE(kernel_write_ok)));
	cr_expect(eq(u32, read_ok, 44));
	cr_expect(eq(u32, write_ok, 31));
}

/* bsg and sd: read-safe for any opener, write-safe with FMODE_WRITE, the rest for rawio */
Test(filter, kernel_default_every_opcode)
{
	struct filter_policy init;

	filter_init(&init);
	for (unsigned op = 0; op < 256; op++) {
		bool r = listed(kernel_read_ok, ARRAY_SIZE(kernel_read_ok), op);
		bool w = r || listed(kernel_write_ok, ARRAY_SIZE(kernel_write_ok), op);
		int want_ro = r ? 0 : -EPERM, want_rw = w ? 0 : -EPERM;

		for (int i = 0; i < 2; i++) {
			const struct filter_policy *p = i ? &init : NULL;

			cr_expect(eq(int, check_op(p, op, O_RDONLY, false), want_ro), "0x%02x ro",
				  op);
			cr_expect(eq(int, check_op(p, op, O_ACCMODE, false), want_ro), "0x%02x 3",
				  op);
			cr_expect(eq(int, check_op(p, op, O_WRONLY, false), want_rw), "0x%02x wo",
				  op);
			cr_expect(eq(int, check_op(p, op, O_RDWR | O_NONBLOCK, false), want_rw),
				  "0x%02x rw", op);
			cr_expect(zero(int, check_op(p, op, O_RDONLY, true)), "0x%02x rawio", op);
			cr_expect(zero(int, check_op(p, op, O_RDWR, true)), "0x%02x rawio rw", op);
		}
	}
}

Test(filter, kernel_quirks_by_opcode_alone)
{
	cr_expect(zero(int, check_op(NULL, 0x42, O_RDONLY, false)), "UNMAP is READ SUB-CHANNEL");
	cr_expect(zero(int, check_op(NULL, 0x48, O_RDONLY, false)), "SANITIZE is PLAY AUDIO TI");
	cr_expect(zero(int, check_op(NULL, 0xa1, O_RDWR, false)), "ATA_12 is BLANK");
	cr_expect(zero(int, check_op(NULL, 0x04, O_RDWR, false)), "FORMAT UNIT with write");
	cr_expect(eq(int, check_op(NULL, 0x85, O_RDWR, false), -EPERM), "ATA_16");
	cr_expect(eq(int, check_op(NULL, 0x3b, O_RDWR, false), -EPERM), "WRITE BUFFER");
	cr_expect(eq(int, check_op(NULL, 0x7f, O_RDWR, false), -EPERM), "WRITE SAME(32)");
	cr_expect(zero(int, check_op(NULL, 0x0d, O_WRONLY, false)),
		  "0x0d, the kernel's WRITE_SAME_32");
}

Test(filter, only_the_opcode_counts)
{
	struct filter_ctx c = { .open_flags = O_RDONLY };
	uint8_t read_cap16[16] = { 0x9e, 0x10 }, other_sa[16] = { 0x9e, 0x1f };

	cr_expect(zero(int, filter_check(NULL, read_cap16, 16, &c)));
	cr_expect(zero(int, filter_check(NULL, other_sa, 16, &c)), "service actions not looked at");
	cr_expect(zero(int, filter_check(NULL, read_cap16, 1, &c)));
}

Test(filter, cdb_len_0_is_opcode_0)
{
	struct filter_policy p;
	struct filter_ctx c = { .open_flags = O_RDONLY };
	uint8_t fmt = 0x04; /* not looked at: the length is 0 */

	cr_expect(zero(int, filter_check(NULL, NULL, 0, &c)), "bsg checks the zeroed 0x00");
	cr_expect(zero(int, filter_check(NULL, &fmt, 0, &c)));
	filter_init(&p);
	p.op[0x00] = FILTER_DENY;
	cr_expect(eq(int, filter_check(&p, NULL, 0, &c), -EPERM));
}

/* ---- sg's rule against bsg's ---- */

struct rule_case {
	char name[48];
	enum filter_kernel kernel;
	int open_flags;
	bool by_write;
	int scsi_type;
	int inquiry, format_unit, write_buffer; /* expected */
};

ParameterizedTestParameters(filter, kernel_rule)
{
	static struct rule_case cases[] = {
		{ "bsg SG_IO ro", FILTER_KERNEL_BSG, O_RDONLY, false, 0, 0, -EPERM, -EPERM },
		{ "bsg SG_IO wo", FILTER_KERNEL_BSG, O_WRONLY, false, 0, 0, 0, -EPERM },
		{ "bsg SG_IO rw", FILTER_KERNEL_BSG, O_RDWR, false, 0, 0, 0, -EPERM },
		{ "bsg write() wo", FILTER_KERNEL_BSG, O_WRONLY, true, 0, 0, 0, -EPERM },
		{ "bsg write() rw", FILTER_KERNEL_BSG, O_RDWR, true, 0, 0, 0, -EPERM },
		{ "bsg scanner ro", FILTER_KERNEL_BSG, O_RDONLY, false, 6, 0, -EPERM, -EPERM },
		{ "sg SG_IO ro", FILTER_KERNEL_SG, O_RDONLY, false, 0, 0, -EPERM, -EPERM },
		{ "sg SG_IO mode 3", FILTER_KERNEL_SG, O_ACCMODE, false, 0, 0, -EPERM, -EPERM },
		{ "sg SG_IO wo", FILTER_KERNEL_SG, O_WRONLY, false, 0, 0, 0, -EPERM },
		{ "sg SG_IO rw: unchecked", FILTER_KERNEL_SG, O_RDWR, false, 0, 0, 0, 0 },
		{ "sg write() wo: unchecked", FILTER_KERNEL_SG, O_WRONLY, true, 0, 0, 0, 0 },
		{ "sg write() rw: unchecked", FILTER_KERNEL_SG, O_RDWR, true, 0, 0, 0, 0 },
		{ "sg scanner ro: unchecked", FILTER_KERNEL_SG, O_RDONLY, false, 6, 0, 0, 0 },
		{ "sg processor ro", FILTER_KERNEL_SG, O_RDONLY, false, 3, 0, -EPERM, -EPERM },
	};

	return cr_make_param_array(struct rule_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct rule_case *rc, filter, kernel_rule)
{
	struct filter_policy p;
	struct filter_ctx c = { .open_flags = rc->open_flags,
				.by_write = rc->by_write,
				.scsi_type = rc->scsi_type };
	uint8_t inq[6] = { 0x12 }, fmt[6] = { 0x04 }, wb[10] = { 0x3b };

	filter_init(&p);
	p.kernel = rc->kernel;
	cr_expect(eq(int, filter_check(&p, inq, 6, &c), rc->inquiry), "%s: INQUIRY", rc->name);
	cr_expect(eq(int, filter_check(&p, fmt, 6, &c), rc->format_unit), "%s: FORMAT UNIT",
		  rc->name);
	cr_expect(eq(int, filter_check(&p, wb, 10, &c), rc->write_buffer), "%s: WRITE BUFFER",
		  rc->name);
	c.rawio = true;
	cr_expect(zero(int, filter_check(&p, wb, 10, &c)), "%s: rawio", rc->name);
}

/* ---- overrides ---- */

struct override_case {
	char name[48];
	char text[96];
	uint8_t op;
	int open_flags;
	bool rawio;
	int expect;
};

ParameterizedTestParameters(filter, override)
{
	static struct override_case cases[] = {
		{ "allow widens", "allow WRITE_BUFFER", 0x3b, O_RDONLY, false, 0 },
		{ "allow-write widens", "allow-write 0x3b", 0x3b, O_WRONLY, false, 0 },
		{ "allow-write needs write", "allow-write 0x3b", 0x3b, O_RDONLY, false, -EPERM },
		{ "allow-write: rawio", "allow-write 0x3b", 0x3b, O_RDONLY, true, 0 },
		{ "allow-write narrows", "allow-write INQUIRY", 0x12, O_RDONLY, false, -EPERM },
		{ "allow-write, mode 3", "allow-write 0x3b", 0x3b, O_ACCMODE, false, -EPERM },
		{ "rawio narrows", "rawio INQUIRY", 0x12, O_RDWR, false, -EPERM },
		{ "rawio: rawio", "rawio INQUIRY", 0x12, O_RDONLY, true, 0 },
		{ "deny", "deny WRITE_10", 0x2a, O_RDWR, false, -EPERM },
		{ "deny: rawio too", "deny WRITE_10", 0x2a, O_RDWR, true, -EPERM },
		{ "default undoes", "deny 0x2a\ndefault 0x2a", 0x2a, O_RDWR, false, 0 },
		{ "last wins", "allow 0x3b\ndeny 0x3b", 0x3b, O_RDONLY, false, -EPERM },
		{ "last wins, one line", "deny 0x3b 0x3b-0x3b WRITE_BUFFER 0x3b", 0x3b, O_RDWR,
		  true, -EPERM },
		{ "range, then exception", "rawio 0x00-0xff\nallow INQUIRY", 0x12, O_RDONLY, false,
		  0 },
		{ "range holds", "rawio 0x00-0xff\nallow INQUIRY", 0x28, O_RDONLY, false, -EPERM },
		{ "range's last opcode", "deny 0xc0-0xff", 0xff, O_RDWR, true, -EPERM },
		{ "range's edge", "deny 0xc0-0xff", 0xbf, O_RDWR, false, 0 },
		{ "sg: deny beats O_RDWR", "kernel sg\ndeny 0x3b", 0x3b, O_RDWR, false, -EPERM },
		{ "sg: rawio beats O_RDWR", "kernel sg\nrawio 0x3b", 0x3b, O_RDWR, false, -EPERM },
		{ "sg: default, O_RDWR", "kernel sg", 0x3b, O_RDWR, false, 0 },
		{ "kernel: last wins", "kernel sg\nkernel bsg", 0x3b, O_RDWR, false, -EPERM },
	};

	return cr_make_param_array(struct override_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct override_case *oc, filter, override)
{
	struct filter_policy p;
	char why[128];

	cr_assert(zero(int, filter_parse(oc->text, strlen(oc->text), &p, why, sizeof(why))),
		  "%s: %s", oc->name, why);
	cr_expect(eq(int, check_op(&p, oc->op, oc->open_flags, oc->rawio), oc->expect), "%s",
		  oc->name);
}

Test(filter, corrupt_decision_fails_closed)
{
	struct filter_policy p;

	filter_init(&p);
	p.op[0x12] = 99;
	cr_expect(eq(int, check_op(&p, 0x12, O_RDWR, true), -EPERM));
}

/* ---- the parser ---- */

Test(filter, parse_good_file)
{
	static const char text[] = "# a policy\n"
				   "\n"
				   "   \t\n"
				   "kernel SG\r\n"
				   "allow       0x28 0x88 read_12   # numbers, names, any case\n"
				   "\tallow-write 0x2A\tWRITE_10\r\n"
				   "deny        FORMAT_UNIT\n"
				   "rawio       0xC0-0xcf 0xd0\n"
				   "allow 0x3c#no space before the comment\n"
				   "DENY 0x5f";
	struct filter_policy p;
	char why[128] = "untouched";

	cr_assert(zero(int, filter_parse(text, strlen(text), &p, why, sizeof(why))), "%s", why);
	cr_expect(eq(str, why, ""));
	cr_expect(eq(int, p.kernel, FILTER_KERNEL_SG));
	cr_expect(eq(u8, p.op[0x28], FILTER_ALLOW));
	cr_expect(eq(u8, p.op[0x88], FILTER_ALLOW));
	cr_expect(eq(u8, p.op[0xa8], FILTER_ALLOW));
	cr_expect(eq(u8, p.op[0x2a], FILTER_ALLOW_WRITE));
	cr_expect(eq(u8, p.op[0x04], FILTER_DENY));
	cr_expect(eq(u8, p.op[0xbf], FILTER_DEFAULT));
	for (unsigned op = 0xc0; op <= 0xd0; op++)
		cr_expect(eq(u8, p.op[op], FILTER_RAWIO), "0x%02x", op);
	cr_expect(eq(u8, p.op[0xd1], FILTER_DEFAULT));
	cr_expect(eq(u8, p.op[0x3c], FILTER_ALLOW));
	cr_expect(eq(u8, p.op[0x5f], FILTER_DENY));
	cr_expect(eq(u8, p.op[0x12], FILTER_DEFAULT));
}

Test(filter, parse_empty_is_kernel_default)
{
	struct filter_policy p, init;

	memset(&p, 0xaa, sizeof(p));
	filter_init(&init);
	cr_assert(zero(int, filter_parse("", 0, &p, NULL, 0)));
	cr_expect(zero(int, memcmp(&p, &init, sizeof(p))));
	cr_assert(zero(int, filter_parse("# nothing\n\n", 11, &p, NULL, 0)));
	cr_expect(zero(int, memcmp(&p, &init, sizeof(p))));
}

Test(filter, parse_respects_len)
{
	struct filter_policy p;

	cr_assert(zero(int, filter_parse("deny 0x28 junk", 9, &p, NULL, 0)));
	cr_expect(eq(u8, p.op[0x28], FILTER_DENY));
}

Test(filter, parse_line_of_max_length)
{
	char line[FILTER_LINE_MAX + 1];
	struct filter_policy p;
	char why[128];

	memset(line, ' ', sizeof(line));
	memcpy(line, "deny 0x28", 9);
	cr_expect(zero(int, filter_parse(line, FILTER_LINE_MAX, &p, why, sizeof(why))), "%s", why);
	cr_expect(eq(int, filter_parse(line, FILTER_LINE_MAX + 1, &p, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "line 1: longer than 256 bytes"));
	line[FILTER_LINE_MAX] = '\n';
	cr_expect(zero(int, filter_parse(line, FILTER_LINE_MAX + 1, &p, why, sizeof(why))),
		  "the newline does not count: %s", why);
}

struct bad_case {
	char text[96];
	size_t len; /* 0: strlen(text) */
	char why[80];
};

ParameterizedTestParameters(filter, parse_error)
{
	static struct bad_case cases[] = {
		{ "alow 0x28", 0, "line 1: unknown keyword 'alow'" },
		{ "0x28", 0, "line 1: unknown keyword '0x28'" },
		{ "allow-writes 0x28", 0, "line 1: unknown keyword 'allow-writes'" },
		{ "# ok\n\nallow READ_11", 0, "line 3: unknown opcode name 'READ_11'" },
		{ "allow READ-10", 0, "line 1: unknown opcode name 'READ-10'" },
		{ "allow \x01\x7f", 0,
		  "line 1: unknown opcode name '?"
		  "?'" },
		{ "allow 0x100", 0, "line 1: opcode 0x100 is over 0xff" },
		{ "allow 0x0000000000000000001ff", 0,
		  "line 1: opcode 0x0000000000000000001ff is over" },
		{ "allow 0xzz", 0, "line 1: '0xzz' is not a hex number" },
		{ "allow 0x", 0, "line 1: '0x' is not an opcode" },
		{ "allow 40", 0, "line 1: opcode '40' is not hex" },
		{ "allow", 0, "line 1: 'allow' needs at least one opcode" },
		{ "\n\n\n\nrawio   # none", 0, "line 5: 'rawio' needs at least one opcode" },
		{ "deny 0x30-0x20", 0, "line 1: range 0x30-0x20 runs backwards" },
		{ "deny 0x30-", 0, "line 1: '' is not an opcode" },
		{ "deny 0x30-40", 0, "line 1: '40' is not an opcode" },
		{ "deny 0x30-0x100", 0, "line 1: opcode 0x100 is over 0xff" },
		{ "deny 0x30--0x40", 0, "line 1: '-0x40' is not an opcode" },
		{ "kernel", 0, "line 1: 'kernel' takes bsg or sg" },
		{ "kernel scsi", 0, "line 1: 'kernel' takes bsg or sg" },
		{ "kernel sg bsg", 0, "line 1: 'kernel' takes one word" },
		{ "allow 0x28\ndeny 0x28\0", 21, "line 2: NUL byte" },
		{ "allow 0x28\r\nallow 0x2a 0x\r\n", 0, "line 2: '0x' is not an opcode" },
	};

	return cr_make_param_array(struct bad_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct bad_case *bc, filter, parse_error)
{
	struct filter_policy p, before;
	size_t len = bc->len ? bc->len : strlen(bc->text);
	char why[128];

	memset(&p, 0x5a, sizeof(p));
	before = p;
	cr_expect(eq(int, filter_parse(bc->text, len, &p, why, sizeof(why)), -EINVAL), "%s",
		  bc->text);
	cr_expect(zero(int, strncmp(why, bc->why, strlen(bc->why))), "got \"%s\", want \"%s\"", why,
		  bc->why);
	cr_expect(zero(int, memcmp(&p, &before, sizeof(p))), "*ret written on failure");
}

Test(filter, parse_long_line)
{
	char text[3 + FILTER_LINE_MAX + 2];
	struct filter_policy p;
	char why[128];

	memcpy(text, "\n\n", 2);
	memset(text + 2, ' ', sizeof(text) - 2);
	cr_expect(eq(int, filter_parse(text, sizeof(text), &p, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "line 3: longer than 256 bytes"));
}

Test(filter, parse_too_large)
{
	static char text[FILTER_TEXT_MAX + 1];
	struct filter_policy p;
	char why[128];

	memset(text, '\n', sizeof(text));
	cr_expect(zero(int, filter_parse(text, FILTER_TEXT_MAX, &p, why, sizeof(why))));
	cr_expect(eq(int, filter_parse(text, sizeof(text), &p, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "larger than 65536 bytes"));
}

Test(filter, parse_why_is_bounded)
{
	struct filter_policy p;
	char why[12];

	memset(why, 'x', sizeof(why));
	cr_expect(eq(int, filter_parse("bogus", 5, &p, why, sizeof(why)), -EINVAL));
	cr_expect(eq(str, why, "line 1: unk"));
	cr_expect(eq(int, filter_parse("bogus", 5, &p, NULL, 0), -EINVAL));
	memset(why, 'x', sizeof(why));
	cr_expect(eq(int, filter_parse("bogus", 5, &p, why, 1), -EINVAL));
	cr_expect(eq(chr, why[0], '\0'));
	cr_expect(eq(chr, why[1], 'x'));
}

/* ---- names ---- */

struct name_case {
	char name[32];
	uint8_t op;
};

ParameterizedTestParameters(filter, opcode_name)
{
	static struct name_case cases[] = {
		{ "TEST_UNIT_READY", 0x00 },
		{ "REQUEST_SENSE", 0x03 },
		{ "FORMAT_UNIT", 0x04 },
		{ "READ_6", 0x08 },
		{ "WRITE_6", 0x0a },
		{ "INQUIRY", 0x12 },
		{ "MODE_SELECT_6", 0x15 },
		{ "MODE_SENSE_6", 0x1a },
		{ "START_STOP_UNIT", 0x1b },
		{ "RECEIVE_DIAGNOSTIC", 0x1c },
		{ "SEND_DIAGNOSTIC", 0x1d },
		{ "READ_CAPACITY_10", 0x25 },
		{ "READ_10", 0x28 },
		{ "WRITE_10", 0x2a },
		{ "VERIFY_10", 0x2f },
		{ "SYNCHRONIZE_CACHE_10", 0x35 },
		{ "READ_DEFECT_DATA_10", 0x37 },
		{ "WRITE_BUFFER", 0x3b },
		{ "READ_BUFFER", 0x3c },
		{ "WRITE_SAME_10", 0x41 },
		{ "UNMAP", 0x42 },
		{ "SANITIZE", 0x48 },
		{ "LOG_SELECT", 0x4c },
		{ "LOG_SENSE", 0x4d },
		{ "MODE_SELECT_10", 0x55 },
		{ "MODE_SENSE_10", 0x5a },
		{ "PERSISTENT_RESERVE_IN", 0x5e },
		{ "PERSISTENT_RESERVE_OUT", 0x5f },
		{ "ATA_16", 0x85 },
		{ "READ_16", 0x88 },
		{ "WRITE_16", 0x8a },
		{ "VERIFY_16", 0x8f },
		{ "SYNCHRONIZE_CACHE_16", 0x91 },
		{ "WRITE_SAME_16", 0x93 },
		{ "SERVICE_ACTION_IN_16", 0x9e },
		{ "REPORT_LUNS", 0xa0 },
		{ "ATA_12", 0xa1 },
		{ "SECURITY_PROTOCOL_IN", 0xa2 },
		{ "READ_12", 0xa8 },
		{ "WRITE_12", 0xaa },
		{ "SECURITY_PROTOCOL_OUT", 0xb5 },
	};

	return cr_make_param_array(struct name_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct name_case *nc, filter, opcode_name)
{
	char text[64];
	struct filter_policy p;
	char why[128];

	cr_expect(eq(str, (char *)filter_opcode_name(nc->op), nc->name));
	snprintf(text, sizeof(text), "deny %s", nc->name);
	cr_assert(zero(int, filter_parse(text, strlen(text), &p, why, sizeof(why))), "%s", why);
	for (unsigned op = 0; op < 256; op++)
		cr_expect(eq(u8, p.op[op], op == nc->op ? FILTER_DENY : FILTER_DEFAULT),
			  "%s 0x%02x", nc->name, op);
}

Test(filter, aliases_and_unnamed)
{
	struct filter_policy p;
	static const char text[] = "deny READ_CAPACITY MODE_SENSE READ_DEFECT_DATA BLANK";

	cr_assert(zero(int, filter_parse(text, strlen(text), &p, NULL, 0)));
	cr_expect(eq(u8, p.op[0x25], FILTER_DENY));
	cr_expect(eq(u8, p.op[0x1a], FILTER_DENY));
	cr_expect(eq(u8, p.op[0x37], FILTER_DENY));
	cr_expect(eq(u8, p.op[0xa1], FILTER_DENY));
	cr_expect(eq(str, (char *)filter_opcode_name(0xa1), "ATA_12"), "the first name is its own");
	cr_expect(eq(ptr, (void *)filter_opcode_name(0xff), NULL));
	cr_expect(eq(str, (char *)filter_decision_name(FILTER_ALLOW_WRITE), "allow-write"));
	cr_expect(eq(str, (char *)filter_decision_name(42), "?"));
}

/* Every name filter_opcode_name() gives parses back to its opcode. */
Test(filter, names_round_trip)
{
	for (unsigned op = 0; op < 256; op++) {
		const char *name = filter_opcode_name(op);
		struct filter_policy p;
		char text[64];

		if (!name)
			continue;
		snprintf(text, sizeof(text), "rawio %s", name);
		cr_assert(zero(int, filter_parse(text, strlen(text), &p, NULL, 0)), "%s", name);
		cr_expect(eq(u8, p.op[op], FILTER_RAWIO), "%s", name);
	}
}

/* The example shipped with the daemon stays valid (make unit runs from the top). */
Test(filter, example_policy_parses)
{
	static char text[FILTER_TEXT_MAX];
	struct filter_policy p;
	char why[128];
	FILE *f = fopen("dist/policy.example", "r");
	size_t n;

	cr_assert(not(eq(ptr, f, NULL)), "dist/policy.example: %s", strerror(errno));
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	cr_assert(zero(int, filter_parse(text, n, &p, why, sizeof(why))), "dist/policy.example: %s",
		  why);
	cr_expect(eq(u8, p.op[0x3b], FILTER_DENY), "WRITE BUFFER denied");
}
