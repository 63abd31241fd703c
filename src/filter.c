// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command filter: the kernel's table of safe opcodes, the policy a file
 * lays over it, and the parser of that file.  Pure and thread-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <scsi/scsi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"

/*
 * The kernel's table (6.1, scsi_cmd_allowed()), by opcode.  It names
 * commands by their MMC meaning where SBC or SPC gave the opcode another
 * one, and the check is by opcode alone: so UNMAP (READ SUB-CHANNEL) and
 * SANITIZE (PLAY AUDIO TRACK INDEX) pass without write access, and ATA(12)
 * (BLANK) with it.  Service actions are never looked at.  Opcodes not listed
 * need CAP_SYS_RAWIO.
 */
static const uint8_t kernel_table[256] = {
	/* read-safe: anyone who has the node open */
	[0x00] = FILTER_ALLOW, /* TEST UNIT READY */
	[0x03] = FILTER_ALLOW, /* REQUEST SENSE */
	[0x08] = FILTER_ALLOW, /* READ(6) */
	[0x12] = FILTER_ALLOW, /* INQUIRY */
	[0x1a] = FILTER_ALLOW, /* MODE SENSE(6) */
	[0x1b] = FILTER_ALLOW, /* START STOP UNIT */
	[0x1c] = FILTER_ALLOW, /* RECEIVE DIAGNOSTIC RESULTS */
	[0x23] = FILTER_ALLOW, /* READ FORMAT CAPACITIES */
	[0x25] = FILTER_ALLOW, /* READ CAPACITY(10) */
	[0x28] = FILTER_ALLOW, /* READ(10) */
	[0x2b] = FILTER_ALLOW, /* SEEK(10) */
	[0x2f] = FILTER_ALLOW, /* VERIFY(10) */
	[0x37] = FILTER_ALLOW, /* READ DEFECT DATA(10) */
	[0x3c] = FILTER_ALLOW, /* READ BUFFER */
	[0x3e] = FILTER_ALLOW, /* READ LONG(10) */
	[0x42] = FILTER_ALLOW, /* READ SUB-CHANNEL, in SBC: UNMAP */
	[0x43] = FILTER_ALLOW, /* READ TOC/PMA/ATIP */
	[0x44] = FILTER_ALLOW, /* READ HEADER */
	[0x45] = FILTER_ALLOW, /* PLAY AUDIO(10) */
	[0x46] = FILTER_ALLOW, /* GET CONFIGURATION */
	[0x47] = FILTER_ALLOW, /* PLAY AUDIO MSF */
	[0x48] = FILTER_ALLOW, /* PLAY AUDIO TRACK INDEX, in SBC: SANITIZE */
	[0x4a] = FILTER_ALLOW, /* GET EVENT STATUS NOTIFICATION */
	[0x4b] = FILTER_ALLOW, /* PAUSE/RESUME */
	[0x4d] = FILTER_ALLOW, /* LOG SENSE */
	[0x4e] = FILTER_ALLOW, /* STOP PLAY/SCAN */
	[0x51] = FILTER_ALLOW, /* READ DISC INFORMATION */
	[0x52] = FILTER_ALLOW, /* READ TRACK INFORMATION */
	[0x5a] = FILTER_ALLOW, /* MODE SENSE(10) */
	[0x5c] = FILTER_ALLOW, /* READ BUFFER CAPACITY */
	[0x88] = FILTER_ALLOW, /* READ(16) */
	[0x8f] = FILTER_ALLOW, /* VERIFY(16) */
	[0x95] = FILTER_ALLOW, /* ZBC IN */
	[0x9e] = FILTER_ALLOW, /* SERVICE ACTION IN(16): READ CAPACITY(16) and others */
	[0xa0] = FILTER_ALLOW, /* REPORT LUNS */
	[0xa3] = FILTER_ALLOW, /* MAINTENANCE IN, in MMC: SEND KEY */
	[0xa4] = FILTER_ALLOW, /* REPORT KEY, in SPC: MAINTENANCE OUT */
	[0xa8] = FILTER_ALLOW, /* READ(12) */
	[0xac] = FILTER_ALLOW, /* GET PERFORMANCE */
	[0xad] = FILTER_ALLOW, /* READ DISC STRUCTURE */
	[0xb9] = FILTER_ALLOW, /* READ CD MSF */
	[0xba] = FILTER_ALLOW, /* SCAN */
	[0xbc] = FILTER_ALLOW, /* PLAY CD */
	[0xbe] = FILTER_ALLOW, /* READ CD */

	/* write-safe: only on a file open for writing */
	[0x04] = FILTER_ALLOW_WRITE, /* FORMAT UNIT */
	[0x0a] = FILTER_ALLOW_WRITE, /* WRITE(6) */
	[0x0d] = FILTER_ALLOW_WRITE, /* none: the kernel lists WRITE SAME(32)'s service action */
	[0x15] = FILTER_ALLOW_WRITE, /* MODE SELECT(6) */
	[0x19] = FILTER_ALLOW_WRITE, /* ERASE(6) */
	[0x1e] = FILTER_ALLOW_WRITE, /* PREVENT ALLOW MEDIUM REMOVAL */
	[0x2a] = FILTER_ALLOW_WRITE, /* WRITE(10) */
	[0x2e] = FILTER_ALLOW_WRITE, /* WRITE AND VERIFY(10) */
	[0x35] = FILTER_ALLOW_WRITE, /* SYNCHRONIZE CACHE(10) */
	[0x3f] = FILTER_ALLOW_WRITE, /* WRITE LONG(10) */
	[0x41] = FILTER_ALLOW_WRITE, /* WRITE SAME(10) */
	[0x4c] = FILTER_ALLOW_WRITE, /* LOG SELECT */
	[0x53] = FILTER_ALLOW_WRITE, /* RESERVE TRACK */
	[0x54] = FILTER_ALLOW_WRITE, /* SEND OPC INFORMATION */
	[0x55] = FILTER_ALLOW_WRITE, /* MODE SELECT(10) */
	[0x58] = FILTER_ALLOW_WRITE, /* REPAIR TRACK */
	[0x5b] = FILTER_ALLOW_WRITE, /* CLOSE TRACK/SESSION */
	[0x5d] = FILTER_ALLOW_WRITE, /* SEND CUE SHEET */
	[0x8a] = FILTER_ALLOW_WRITE, /* WRITE(16) */
	[0x93] = FILTER_ALLOW_WRITE, /* WRITE SAME(16) */
	[0x94] = FILTER_ALLOW_WRITE, /* ZBC OUT */
	[0xa1] = FILTER_ALLOW_WRITE, /* BLANK, in SAT: ATA PASS-THROUGH(12) */
	[0xa2] = FILTER_ALLOW_WRITE, /* SEND EVENT, in SPC: SECURITY PROTOCOL IN */
	[0xa6] = FILTER_ALLOW_WRITE, /* LOAD/UNLOAD MEDIUM */
	[0xa7] = FILTER_ALLOW_WRITE, /* SET READ AHEAD */
	[0xaa] = FILTER_ALLOW_WRITE, /* WRITE(12) */
	[0xae] = FILTER_ALLOW_WRITE, /* WRITE AND VERIFY(12) */
	[0xb6] = FILTER_ALLOW_WRITE, /* SET STREAMING */
	[0xbb] = FILTER_ALLOW_WRITE, /* SET CD SPEED */
	[0xbf] = FILTER_ALLOW_WRITE, /* SEND DISC STRUCTURE */
	[0xea] = FILTER_ALLOW_WRITE, /* vendor specific: what the kernel calls WRITE_LONG_2 */
};

enum filter_decision filter_kernel_decision(uint8_t op)
{
	return kernel_table[op] ? kernel_table[op] : FILTER_RAWIO;
}

void filter_init(struct filter_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->kernel = FILTER_KERNEL_BSG;
}

/* FMODE_WRITE: O_ACCMODE 3, open for ioctls only, has neither read nor write */
static bool open_for_write(int open_flags)
{
	int acc = open_flags & O_ACCMODE;

	return acc == O_WRONLY || acc == O_RDWR;
}

static int kernel_rule(enum filter_kernel kernel, uint8_t op, const struct filter_ctx *c)
{
	enum filter_decision k = filter_kernel_decision(op);

	if (c->rawio)
		return 0;
	/*
	 * sg_new_write() consults the table only for SG_IO on a file that is
	 * not O_RDWR: write() passes read_only = 0.  sg_allow_access() then
	 * waves everything through to a scanner.
	 */
	if (kernel == FILTER_KERNEL_SG && !c->scsi_ioctl &&
	    (c->by_write || (c->open_flags & O_ACCMODE) == O_RDWR || c->scsi_type == TYPE_SCANNER))
		return 0;
	if (k == FILTER_ALLOW || (k == FILTER_ALLOW_WRITE && open_for_write(c->open_flags)))
		return 0;
	return -EPERM;
}

int filter_check(const struct filter_policy *p, const uint8_t *cdb, unsigned cdb_len,
		 const struct filter_ctx *ctx)
{
	return filter_check_as(p, p ? p->kernel : FILTER_KERNEL_BSG, cdb, cdb_len, ctx);
}

int filter_check_as(const struct filter_policy *p, enum filter_kernel kernel, const uint8_t *cdb,
		    unsigned cdb_len, const struct filter_ctx *ctx)
{
	/* bsg copies no CDB into a zeroed command: the kernel checks 0x00 */
	uint8_t op = cdb_len ? cdb[0] : 0;

	if (!p)
		return kernel_rule(kernel, op, ctx);
	switch (p->op[op]) {
	case FILTER_DEFAULT:
		return kernel_rule(kernel, op, ctx);
	case FILTER_ALLOW:
		return 0;
	case FILTER_ALLOW_WRITE:
		return ctx->rawio || open_for_write(ctx->open_flags) ? 0 : -EPERM;
	case FILTER_RAWIO:
		return ctx->rawio ? 0 : -EPERM;
	default:
		return -EPERM; /* FILTER_DENY, and fail closed on a corrupt table */
	}
}

/* ---- names ---- */

static const char *const decision_names[] = {
	[FILTER_DEFAULT] = "default",
	[FILTER_ALLOW] = "allow",
	[FILTER_ALLOW_WRITE] = "allow-write",
	[FILTER_RAWIO] = "rawio",
	[FILTER_DENY] = "deny",
};

const char *filter_decision_name(enum filter_decision d)
{
	if ((unsigned)d >= sizeof(decision_names) / sizeof(decision_names[0]))
		return "?";
	return decision_names[d];
}

struct opname {
	uint8_t op;
	const char *name;
};

/* The first name of an opcode is its own; later ones are aliases. */
static const struct opname opnames[] = {
	{ 0x00, "TEST_UNIT_READY" },
	{ 0x01, "REZERO_UNIT" },
	{ 0x03, "REQUEST_SENSE" },
	{ 0x04, "FORMAT_UNIT" },
	{ 0x05, "READ_BLOCK_LIMITS" },
	{ 0x07, "REASSIGN_BLOCKS" },
	{ 0x08, "READ_6" },
	{ 0x0a, "WRITE_6" },
	{ 0x0b, "SEEK_6" },
	{ 0x10, "WRITE_FILEMARKS" },
	{ 0x11, "SPACE" },
	{ 0x12, "INQUIRY" },
	{ 0x15, "MODE_SELECT_6" },
	{ 0x16, "RESERVE_6" },
	{ 0x17, "RELEASE_6" },
	{ 0x19, "ERASE" },
	{ 0x1a, "MODE_SENSE_6" },
	{ 0x1b, "START_STOP_UNIT" },
	{ 0x1c, "RECEIVE_DIAGNOSTIC" },
	{ 0x1d, "SEND_DIAGNOSTIC" },
	{ 0x1e, "PREVENT_ALLOW_MEDIUM_REMOVAL" },
	{ 0x23, "READ_FORMAT_CAPACITIES" },
	{ 0x25, "READ_CAPACITY_10" },
	{ 0x28, "READ_10" },
	{ 0x2a, "WRITE_10" },
	{ 0x2b, "SEEK_10" },
	{ 0x2e, "WRITE_VERIFY_10" },
	{ 0x2f, "VERIFY_10" },
	{ 0x34, "PRE_FETCH_10" },
	{ 0x35, "SYNCHRONIZE_CACHE_10" },
	{ 0x37, "READ_DEFECT_DATA_10" },
	{ 0x3b, "WRITE_BUFFER" },
	{ 0x3c, "READ_BUFFER" },
	{ 0x3e, "READ_LONG_10" },
	{ 0x3f, "WRITE_LONG_10" },
	{ 0x41, "WRITE_SAME_10" },
	{ 0x42, "UNMAP" },
	{ 0x43, "READ_TOC" },
	{ 0x46, "GET_CONFIGURATION" },
	{ 0x48, "SANITIZE" },
	{ 0x4a, "GET_EVENT_STATUS_NOTIFICATION" },
	{ 0x4c, "LOG_SELECT" },
	{ 0x4d, "LOG_SENSE" },
	{ 0x55, "MODE_SELECT_10" },
	{ 0x56, "RESERVE_10" },
	{ 0x57, "RELEASE_10" },
	{ 0x5a, "MODE_SENSE_10" },
	{ 0x5e, "PERSISTENT_RESERVE_IN" },
	{ 0x5f, "PERSISTENT_RESERVE_OUT" },
	{ 0x7f, "VARIABLE_LENGTH" },
	{ 0x83, "EXTENDED_COPY" },
	{ 0x84, "RECEIVE_COPY_RESULTS" },
	{ 0x85, "ATA_16" },
	{ 0x88, "READ_16" },
	{ 0x89, "COMPARE_AND_WRITE" },
	{ 0x8a, "WRITE_16" },
	{ 0x8e, "WRITE_VERIFY_16" },
	{ 0x8f, "VERIFY_16" },
	{ 0x90, "PRE_FETCH_16" },
	{ 0x91, "SYNCHRONIZE_CACHE_16" },
	{ 0x93, "WRITE_SAME_16" },
	{ 0x94, "ZBC_OUT" },
	{ 0x95, "ZBC_IN" },
	{ 0x9e, "SERVICE_ACTION_IN_16" },
	{ 0x9f, "SERVICE_ACTION_OUT_16" },
	{ 0xa0, "REPORT_LUNS" },
	{ 0xa1, "ATA_12" },
	{ 0xa2, "SECURITY_PROTOCOL_IN" },
	{ 0xa3, "MAINTENANCE_IN" },
	{ 0xa4, "MAINTENANCE_OUT" },
	{ 0xa5, "MOVE_MEDIUM" },
	{ 0xa8, "READ_12" },
	{ 0xaa, "WRITE_12" },
	{ 0xab, "SERVICE_ACTION_IN_12" },
	{ 0xae, "WRITE_VERIFY_12" },
	{ 0xaf, "VERIFY_12" },
	{ 0xb5, "SECURITY_PROTOCOL_OUT" },
	{ 0xb7, "READ_DEFECT_DATA_12" },
	{ 0xb8, "READ_ELEMENT_STATUS" },
	{ 0xbe, "READ_CD" },
	/* aliases: the kernel's names, and short forms */
	{ 0x15, "MODE_SELECT" },
	{ 0x1a, "MODE_SENSE" },
	{ 0x1b, "START_STOP" },
	{ 0x25, "READ_CAPACITY" },
	{ 0x2f, "VERIFY" },
	{ 0x35, "SYNCHRONIZE_CACHE" },
	{ 0x37, "READ_DEFECT_DATA" },
	{ 0x41, "WRITE_SAME" },
	{ 0x42, "READ_SUB_CHANNEL" },
	{ 0x48, "PLAY_AUDIO_TI" },
	{ 0xa1, "BLANK" },
};

#define NR_OPNAMES (sizeof(opnames) / sizeof(opnames[0]))

const char *filter_opcode_name(uint8_t op)
{
	for (size_t i = 0; i < NR_OPNAMES; i++)
		if (opnames[i].op == op)
			return opnames[i].name;
	return NULL;
}

/* ---- the parser ---- */

/* A piece of the text: not NUL-terminated. */
struct tok {
	const char *s;
	size_t len;
};

struct parser {
	struct filter_policy p;
	unsigned line;
	char *why;
	size_t why_len;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ps->why_len)
		return -EINVAL;
	n = snprintf(ps->why, ps->why_len, "line %u: ", ps->line);
	if (n >= 0 && (size_t)n < ps->why_len) {
		va_start(ap, fmt);
		vsnprintf(ps->why + n, ps->why_len - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A token fit to quote in a message: at most 40 bytes, odd bytes as '?'. */
static const char *quote(struct tok t, char *buf, size_t size)
{
	size_t n = t.len < size - 1 ? t.len : size - 1;

	for (size_t i = 0; i < n; i++)
		buf[i] = t.s[i] > ' ' && t.s[i] < 0x7f ? t.s[i] : '?';
	buf[n] = '\0';
	return buf;
}

#define QUOTE(t) quote((t), (char[41]){ 0 }, 41)

static bool tok_is(struct tok t, const char *word)
{
	return strlen(word) == t.len && !strncasecmp(t.s, word, t.len);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next token of *line, consuming it; a token of length 0 at the end. */
static struct tok next_tok(struct tok *line)
{
	struct tok t;

	while (line->len && is_space(*line->s)) {
		line->s++;
		line->len--;
	}
	t.s = line->s;
	t.len = 0;
	while (t.len < line->len && !is_space(t.s[t.len]))
		t.len++;
	line->s += t.len;
	line->len -= t.len;
	return t;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "0x28": the opcode, or -EINVAL with why filled */
static int parse_hex(struct parser *ps, struct tok t)
{
	unsigned val = 0;

	if (t.len < 3 || t.s[0] != '0' || (t.s[1] != 'x' && t.s[1] != 'X'))
		return fail(ps, "'%s' is not an opcode: write 0x and hex digits", QUOTE(t));
	for (size_t i = 2; i < t.len; i++) {
		int d = hex_digit(t.s[i]);

		if (d < 0)
			return fail(ps, "'%s' is not a hex number", QUOTE(t));
		val = val * 16 + d;
		if (val > 0xff)
			return fail(ps, "opcode %s is over 0xff", QUOTE(t));
	}
	return val;
}

static int lookup_name(struct parser *ps, struct tok t)
{
	for (size_t i = 0; i < NR_OPNAMES; i++)
		if (tok_is(t, opnames[i].name))
			return opnames[i].op;
	if (t.s[0] >= '0' && t.s[0] <= '9')
		return fail(ps, "opcode '%s' is not hex: write it as 0x..", QUOTE(t));
	return fail(ps, "unknown opcode name '%s'", QUOTE(t));
}

/* One opcode, a range "0xc0-0xff" or a name: set them all to d. */
static int set_ops(struct parser *ps, struct tok t, enum filter_decision d)
{
	const char *dash = memchr(t.s, '-', t.len);
	int lo, hi;

	if (t.len >= 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'X')) {
		struct tok a = { t.s, dash ? (size_t)(dash - t.s) : t.len };
		struct tok b = { dash ? dash + 1 : t.s, dash ? t.len - a.len - 1 : t.len };

		lo = parse_hex(ps, a);
		if (lo < 0)
			return lo;
		hi = parse_hex(ps, b);
		if (hi < 0)
			return hi;
		if (lo > hi)
			return fail(ps, "range %s runs backwards", QUOTE(t));
	} else {
		lo = hi = lookup_name(ps, t);
		if (lo < 0)
			return lo;
	}
	for (int op = lo; op <= hi; op++)
		ps->p.op[op] = d;
	return 0;
}

static int parse_kernel(struct parser *ps, struct tok rest)
{
	struct tok t = next_tok(&rest);

	if (tok_is(t, "bsg"))
		ps->p.kernel = FILTER_KERNEL_BSG;
	else if (tok_is(t, "sg"))
		ps->p.kernel = FILTER_KERNEL_SG;
	else
		return fail(ps, "'kernel' takes bsg or sg");
	if (next_tok(&rest).len)
		return fail(ps, "'kernel' takes one word");
	return 0;
}

static int parse_decision(struct parser *ps, enum filter_decision d, struct tok rest)
{
	struct tok t = next_tok(&rest);
	int err;

	if (!t.len)
		return fail(ps, "'%s' needs at least one opcode", decision_names[d]);
	for (; t.len; t = next_tok(&rest)) {
		err = set_ops(ps, t, d);
		if (err)
			return err;
	}
	return 0;
}

static int parse_line(struct parser *ps, struct tok line)
{
	const char *hash = memchr(line.s, '#', line.len);
	struct tok kw;

	if (line.len > FILTER_LINE_MAX)
		return fail(ps, "longer than %u bytes", FILTER_LINE_MAX);
	if (memchr(line.s, '\0', line.len))
		return fail(ps, "NUL byte");
	if (hash)
		line.len = hash - line.s;
	kw = next_tok(&line);
	if (!kw.len)
		return 0;
	if (tok_is(kw, "kernel"))
		return parse_kernel(ps, line);
	for (unsigned d = 0; d < sizeof(decision_names) / sizeof(decision_names[0]); d++)
		if (tok_is(kw, decision_names[d]))
			return parse_decision(ps, d, line);
	return fail(ps, "unknown keyword '%s'", QUOTE(kw));
}

int filter_parse(const char *text, size_t len, struct filter_policy *ret, char *why, size_t why_len)
{
	struct parser ps = { .why = why, .why_len = why_len };
	const char *end = text + len;
	int err;

	if (why_len)
		why[0] = '\0';
	filter_init(&ps.p);
	if (len > FILTER_TEXT_MAX) {
		if (why_len)
			snprintf(why, why_len, "larger than %u bytes", FILTER_TEXT_MAX);
		return -EINVAL;
	}
	while (text < end) {
		const char *nl = memchr(text, '\n', end - text);
		struct tok line = { text, (nl ? nl : end) - text };

		ps.line++;
		err = parse_line(&ps, line);
		if (err)
			return err;
		text += line.len + (nl != NULL);
	}
	*ret = ps.p;
	return 0;
}
