// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view's three forms, as tgtadm's --op show prints for people
 * (indented blocks, one fact a line), as one JSON object, and as rows the
 * client makes a table of, as multipathd's show maps, with counts or with
 * rates between two answers.  A node that does not fit in the buffer is
 * left out whole, and the answer says so: the JSON stays valid, however
 * long the names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "show.h"

#define END_ROOM 64 /* kept free for show_end() while nodes are written */

int show_out_init(struct show_out *o, enum show_form form)
{
	*o = (struct show_out){ .form = form, .cap = SHOW_OUT_MAX };
	o->buf = malloc(o->cap);
	if (!o->buf)
		return -ENOMEM;
	o->buf[0] = '\0';
	return 0;
}

void show_out_fini(struct show_out *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Append; past limit bytes, o->over and nothing more. */
static void put(struct show_out *o, size_t limit, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(struct show_out *o, size_t limit, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, limit - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= limit - o->len) {
		o->over = true;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += n;
}

#define PUT(o, ...) put(o, (o)->cap - END_ROOM, __VA_ARGS__)

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 && s[0] <= 0xf4  ? 4
		     : s[0] >= 0xe0		   ? 3
		     : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
						   : 0;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, a surrogate, past U+10FFFF */
	return len;
}

/* s as a JSON string: quotes, backslashes and controls escaped, bad UTF-8 as U+FFFD. */
static void put_json_str(struct show_out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	PUT(o, "\"");
	while (i < n) {
		size_t len = p[i] < 0x80 ? 1 : utf8_len(p + i, n - i);

		if (p[i] == '"' || p[i] == '\\')
			PUT(o, "\\%c", p[i]);
		else if (p[i] < 0x20 || p[i] == 0x7f)
			PUT(o, "\\u%04x", p[i]);
		else if (!len)
			PUT(o, "\\ufffd");
		else
			PUT(o, "%.*s", (int)len, (const char *)p + i);
		i += len ? len : 1;
	}
	PUT(o, "\"");
}

/* s for a terminal: a control character as '?'. */
static void put_text_str(struct show_out *o, const char *s)
{
	for (; *s; s++)
		PUT(o, "%c", (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

static void size_words(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned i = 0;
	uint64_t whole = v, tenths = 0;

	while (whole >= 1024 && i < 4) {
		tenths = (whole % 1024) * 10 / 1024;
		whole /= 1024;
		i++;
	}
	if (tenths)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, unit[i]);
	else
		snprintf(buf, len, "%" PRIu64 " %s", whole, unit[i]);
}

/* t (seconds since the epoch) as ISO 8601, UTC. */
static void time_words(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%" PRId64, t);
}

/* Microseconds for people: "850 us", "12.5 ms", "3.2 s". */
static void us_words(uint64_t us, char *buf, size_t len)
{
	if (us < 1000)
		snprintf(buf, len, "%" PRIu64 " us", us);
	else if (us < 1000000)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " ms", us / 1000, us % 1000 / 100);
	else
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " s", us / 1000000,
			 us % 1000000 / 100000);
}

/* "N" or, for 0, "no bound". */
static const char *bound_words(uint64_t v, bool size, char *buf, size_t len)
{
	if (!v)
		return "no bound";
	if (size)
		size_words(v, buf, len);
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static void text_daemon(struct show_out *o, const struct show_daemon *dm)
{
	char used[32], max[32], file[32], user[32], now[32];
	uint64_t t = dm->uptime_s;

	size_words(dm->mem_used, used, sizeof(used));
	time_words(dm->now_s, now, sizeof(now));
	PUT(o, "Daemon: pid %d, cuse_bsg %s, up %" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ", at %s\n",
	    (int)dm->pid, dm->version, t / 3600, t / 60 % 60, t % 60, now);
	PUT(o, "    Memory: %s used of %s (--max-memory); a file: %s; a user: %s\n", used,
	    bound_words(dm->mem_max, true, max, sizeof(max)),
	    bound_words(dm->mem_per_file, true, file, sizeof(file)),
	    bound_words(dm->mem_per_user, true, user, sizeof(user)));
	PUT(o, "    Threads: %u in the process\n", dm->threads);
	PUT(o, "    Calls holding a thread: %u, parked: %u; a file: %u at most, a user: %u\n",
	    dm->calls_busy, dm->calls_parked, dm->calls_per_file, dm->calls_per_user);
	PUT(o, "    Open files: %u; in all: %s; a user: %s\n", dm->files,
	    bound_words(dm->files_max, false, max, sizeof(max)),
	    bound_words(dm->files_per_user, false, user, sizeof(user)));
}

static void json_daemon(struct show_out *o, const struct show_daemon *dm)
{
	char now[32];

	time_words(dm->now_s, now, sizeof(now));
	PUT(o, "{\"time\":\"%s\",\"time_ns\":%" PRId64 ",\"pid\":%d,\"version\":", now,
	    dm->now_s * 1000000000 + dm->now_ns, (int)dm->pid);
	put_json_str(o, dm->version);
	PUT(o, ",\"uptime_s\":%" PRIu64, dm->uptime_s);
	PUT(o,
	    ",\"memory\":{\"used\":%" PRIu64 ",\"max\":%" PRIu64 ",\"per_file_max\":%" PRIu64
	    ",\"per_user_max\":%" PRIu64 "}",
	    dm->mem_used, dm->mem_max, dm->mem_per_file, dm->mem_per_user);
	PUT(o,
	    ",\"threads\":{\"process\":%u,\"calls_busy\":%u,\"calls_parked\":%u,"
	    "\"calls_per_file_max\":%u,\"calls_per_user_max\":%u}",
	    dm->threads, dm->calls_busy, dm->calls_parked, dm->calls_per_file, dm->calls_per_user);
	PUT(o, ",\"files\":{\"open\":%u,\"max\":%u,\"per_user_max\":%u},\"nodes\":[", dm->files,
	    dm->files_max, dm->files_per_user);
}

void show_begin(struct show_out *o, const struct show_daemon *dm)
{
	if (o->form == SHOW_JSON)
		json_daemon(o, dm);
	else if (o->form == SHOW_ROWS)
		PUT(o, "T\t%" PRId64 "\n", dm->now_s * 1000000000 + dm->now_ns);
	else
		text_daemon(o, dm);
}

static void text_io(struct show_out *o, const struct show_io *io)
{
	char in[32], out[32];

	size_words(io->bytes_in, in, sizeof(in));
	size_words(io->bytes_out, out, sizeof(out));
	PUT(o, "commands %" PRIu64 ", read %s, written %s, errors %" PRIu64 ", refused %" PRIu64,
	    io->cmds, in, out, io->errors, io->refused);
}

/* "user (uid)": the name as a terminal may show it. */
static void text_id(struct show_out *o, const char *what, const char *name, unsigned id)
{
	PUT(o, "%s ", what);
	if (name[0]) {
		put_text_str(o, name);
		PUT(o, " (%u)", id);
	} else {
		PUT(o, "%u", id);
	}
}

static void text_opener(struct show_out *o, const struct show_opener *op)
{
	char mem[32], when[32];

	size_words(op->mem, mem, sizeof(mem));
	time_words(op->opened, when, sizeof(when));
	PUT(o, "        pid %d", (int)op->pid);
	if (op->comm[0]) {
		PUT(o, " (");
		put_text_str(o, op->comm);
		PUT(o, ")");
	}
	PUT(o, ", ");
	text_id(o, "user", op->user, (unsigned)op->uid);
	if (op->gid != (gid_t)-1) {
		PUT(o, ", ");
		text_id(o, "group", op->group, (unsigned)op->gid);
	}
	PUT(o, ", opened %s\n            ", when);
	text_io(o, &op->io);
	PUT(o, "; queued %u, in flight %u, calls %u, memory %s\n", op->queued, op->in_flight,
	    op->calls, mem);
}

static const char *show_cred(const struct show_node *n)
{
	return n->cred_check ? n->cred_check : "procfs";
}

static void text_access(struct show_out *o, const struct show_node *n)
{
	if (n->have_stat)
		PUT(o, "    Access: mode %04o, owner uid %u, group gid %u\n", (unsigned)n->mode,
		    (unsigned)n->uid, (unsigned)n->gid);
	else
		PUT(o, "    Access: unknown (no /dev/%s)\n", n->name);
	PUT(o, "    Credential check: %s; refused on sg's test: %" PRIu64, show_cred(n),
	    n->gate_refused);
	if (n->cred_unseen)
		PUT(o, "; left to /proc: %" PRIu64, n->cred_unseen);
	PUT(o, "\n");
}

static void text_device(struct show_out *o, const struct show_node *n)
{
	char size[32];

	if (!n->target[0])
		return;
	PUT(o, "    Device: ");
	put_text_str(o, n->vendor[0] ? n->vendor : "?");
	PUT(o, " ");
	put_text_str(o, n->product[0] ? n->product : "?");
	PUT(o, " ");
	put_text_str(o, n->revision);
	PUT(o, ", serial ");
	put_text_str(o, n->serial[0] ? n->serial : "unknown");
	if (n->size) {
		size_words(n->size, size, sizeof(size));
		PUT(o, ", %s (%" PRIu64 " bytes)", size, n->size);
	}
	PUT(o, "\n");
}

static void text_lat(struct show_out *o, const struct show_lat *l)
{
	char p50[32], p99[32], max[32];

	us_words(l->p50, p50, sizeof(p50));
	us_words(l->p99, p99, sizeof(p99));
	us_words(l->max, max, sizeof(max));
	PUT(o, "p50 %s, p99 %s, max %s", p50, p99, max);
}

static void text_latency(struct show_out *o, const struct show_node *n)
{
	PUT(o, "    Latency, last %u-%u s: %" PRIu64 " commands", SHOW_LAT_WINDOW_S,
	    2 * SHOW_LAT_WINDOW_S, n->lat.count);
	if (n->lat.count) {
		PUT(o, "; ");
		text_lat(o, &n->lat);
		PUT(o, "; at the device: ");
		text_lat(o, &n->dev_lat);
	}
	PUT(o, "\n");
}

static void text_node(struct show_out *o, const struct show_node *n)
{
	PUT(o, "Node: ");
	put_text_str(o, n->name);
	if (n->have_stat)
		PUT(o, " (char %u:%u)", n->major, n->minor);
	PUT(o, "\n    Target: ");
	put_text_str(o, n->target[0] ? n->target : "any device bound with BSG_IOC_ADD");
	PUT(o, "\n");
	text_device(o, n);
	PUT(o, "    State: %s\n", n->gone ? "device gone; ends with its last opener" : "serving");
	text_access(o, n);
	PUT(o,
	    "    Threads: workers %u, work queued %u; copy threads %u of %u; libfuse's %u at "
	    "most\n",
	    n->workers, n->backlog, n->copy_threads, n->copy_threads_max, n->fuse_threads_max);
	PUT(o, "    At the target: %u\n    I/O: ", n->at_target);
	text_io(o, &n->io);
	PUT(o, "\n");
	text_latency(o, n);
	PUT(o, "    Counters:");
	for (unsigned i = 0; i < n->ncounters; i++)
		PUT(o, "%s %s %" PRIu64, i ? "," : "", n->counters[i].name, n->counters[i].value);
	PUT(o, "\n    Openers: %u\n", n->openers);
	for (unsigned i = 0; i < n->nopeners; i++)
		text_opener(o, &n->opener[i]);
	if (n->openers > n->nopeners)
		PUT(o, "        (%u more not listed)\n", n->openers - n->nopeners);
}

static void json_io(struct show_out *o, const struct show_io *io)
{
	PUT(o,
	    ",\"io\":{\"commands\":%" PRIu64 ",\"read_bytes\":%" PRIu64
	    ",\"written_bytes\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"refused\":%" PRIu64 "}",
	    io->cmds, io->bytes_in, io->bytes_out, io->errors, io->refused);
}

/* "name":"s", or "name":null for an empty s. */
static void json_opt_str(struct show_out *o, const char *name, const char *s)
{
	PUT(o, ",\"%s\":", name);
	if (s[0])
		put_json_str(o, s);
	else
		PUT(o, "null");
}

static void json_opener(struct show_out *o, const struct show_opener *op)
{
	char when[32];

	time_words(op->opened, when, sizeof(when));
	PUT(o, "{\"pid\":%d", (int)op->pid);
	json_opt_str(o, "comm", op->comm);
	PUT(o, ",\"uid\":%u", (unsigned)op->uid);
	json_opt_str(o, "user", op->user);
	if (op->gid != (gid_t)-1)
		PUT(o, ",\"gid\":%u", (unsigned)op->gid);
	else
		PUT(o, ",\"gid\":null");
	json_opt_str(o, "group", op->group);
	PUT(o, ",\"opened\":\"%s\",\"opened_s\":%" PRId64, when, op->opened);
	json_io(o, &op->io);
	PUT(o, ",\"queued\":%u,\"in_flight\":%u,\"calls\":%u,\"memory\":%" PRIu64 "}", op->queued,
	    op->in_flight, op->calls, op->mem);
}

static void json_openers(struct show_out *o, const struct show_node *n)
{
	PUT(o, ",\"openers\":[");
	for (unsigned i = 0; i < n->nopeners; i++) {
		PUT(o, "%s", i ? "," : "");
		json_opener(o, &n->opener[i]);
	}
	PUT(o, "],\"openers_alive\":%u,\"openers_unlisted\":%u", n->openers,
	    n->openers > n->nopeners ? n->openers - n->nopeners : 0);
}

static void json_lat(struct show_out *o, const char *name, const struct show_lat *l)
{
	PUT(o, ",\"%s\":{\"commands\":%" PRIu64 ",\"p50\":%u,\"p99\":%u,\"max\":%u}", name,
	    l->count, l->p50, l->p99, l->max);
}

static void json_device(struct show_out *o, const struct show_node *n)
{
	if (!n->target[0]) {
		PUT(o, ",\"device\":null");
		return;
	}
	PUT(o, ",\"device\":{\"vendor\":");
	put_json_str(o, n->vendor);
	PUT(o, ",\"product\":");
	put_json_str(o, n->product);
	PUT(o, ",\"revision\":");
	put_json_str(o, n->revision);
	json_opt_str(o, "serial", n->serial);
	if (n->size)
		PUT(o, ",\"size\":%" PRIu64 "}", n->size);
	else
		PUT(o, ",\"size\":null}");
}

static void json_node(struct show_out *o, const struct show_node *n)
{
	PUT(o, "%s{\"name\":", o->nodes ? "," : "");
	put_json_str(o, n->name);
	PUT(o, ",\"target\":");
	if (n->target[0])
		put_json_str(o, n->target);
	else
		PUT(o, "null");
	json_device(o, n);
	if (n->have_stat)
		PUT(o, ",\"dev\":\"%u:%u\",\"mode\":\"%04o\",\"uid\":%u,\"gid\":%u", n->major,
		    n->minor, (unsigned)n->mode, (unsigned)n->uid, (unsigned)n->gid);
	PUT(o,
	    ",\"state\":\"%s\",\"cred_check\":\"%s\",\"gate_refused\":%" PRIu64
	    ",\"cred_unseen\":%" PRIu64,
	    n->gone ? "gone" : "serving", show_cred(n), n->gate_refused, n->cred_unseen);
	PUT(o,
	    ",\"threads\":{\"workers\":%u,\"backlog\":%u,\"copy\":%u,\"copy_max\":%u,"
	    "\"fuse_max\":%u},\"at_target\":%u",
	    n->workers, n->backlog, n->copy_threads, n->copy_threads_max, n->fuse_threads_max,
	    n->at_target);
	json_io(o, &n->io);
	PUT(o, ",\"latency_window_s\":[%u,%u]", SHOW_LAT_WINDOW_S, 2 * SHOW_LAT_WINDOW_S);
	json_lat(o, "latency_us", &n->lat);
	json_lat(o, "device_latency_us", &n->dev_lat);
	PUT(o, ",\"counters\":{");
	for (unsigned i = 0; i < n->ncounters; i++)
		PUT(o, "%s\"%s\":%" PRIu64, i ? "," : "", n->counters[i].name,
		    n->counters[i].value);
	PUT(o, "}");
	json_openers(o, n);
	PUT(o, "}");
}

/* s in a row: no tab, newline or control character. */
static void put_row_str(struct show_out *o, const char *s)
{
	PUT(o, "\t");
	if (!*s)
		PUT(o, "-");
	for (; *s; s++)
		PUT(o, "%c", (unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s);
}

static void row_io(struct show_out *o, const struct show_io *io)
{
	PUT(o, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64, io->cmds,
	    io->bytes_in, io->bytes_out, io->errors, io->refused);
}

static void rows_node(struct show_out *o, const struct show_node *n)
{
	char label[64];

	snprintf(label, sizeof(label), "%s %s", n->vendor, n->product);
	PUT(o, "N");
	put_row_str(o, n->name);
	put_row_str(o, n->target[0] ? label : "control");
	PUT(o, "\t%u\t%u", n->openers, n->at_target);
	row_io(o, &n->io);
	PUT(o, "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%u\t%u\n", n->lat.count, n->lat.p50, n->lat.p99,
	    n->lat.max, n->dev_lat.p50, n->dev_lat.p99, n->dev_lat.max);
	for (unsigned i = 0; i < n->nopeners; i++) {
		const struct show_opener *op = &n->opener[i];

		snprintf(label, sizeof(label), "%d %s %s", (int)op->pid,
			 op->comm[0] ? op->comm : "?", op->user[0] ? op->user : "?");
		PUT(o, "O");
		put_row_str(o, n->name);
		put_row_str(o, label);
		PUT(o, "\t%d\t%" PRId64, (int)op->pid, op->opened);
		row_io(o, &op->io);
		PUT(o, "\n");
	}
}

void show_add_node(struct show_out *o, const struct show_node *n)
{
	size_t before = o->len;

	if (o->over)
		return;
	if (o->form == SHOW_JSON)
		json_node(o, n);
	else if (o->form == SHOW_ROWS)
		rows_node(o, n);
	else
		text_node(o, n);
	if (!o->over) {
		o->nodes++;
		return;
	}
	/* whole or not at all */
	o->len = before;
	o->buf[o->len] = '\0';
	o->truncated = true;
}

void show_end(struct show_out *o)
{
	o->over = false; /* END_ROOM is kept for this */
	if (o->form == SHOW_ROWS)
		return;
	if (o->form == SHOW_TEXT) {
		if (o->truncated)
			put(o, o->cap, "(more nodes than fit in %u KiB not shown)\n",
			    SHOW_OUT_MAX >> 10);
		return;
	}
	put(o, o->cap, "],\"truncated\":%s}\n", o->truncated ? "true" : "false");
}

void show_counter_add(struct show_node *n, const char *name, uint64_t value)
{
	if (n->ncounters < SHOW_COUNTERS_MAX)
		n->counters[n->ncounters++] = (struct show_counter){ name, value };
}

void show_stats_line(const struct show_node *n, char *buf, size_t len)
{
	struct show_out o = { .buf = buf, .cap = len };

	buf[0] = '\0';
	for (unsigned i = 0; i < n->ncounters; i++)
		put(&o, len, "%s=%" PRIu64 " ", n->counters[i].name, n->counters[i].value);
	put(&o, len,
	    "at_target=%u queued=%u openers=%u cred_check=%s gate_refused=%" PRIu64
	    " cred_unseen=%" PRIu64,
	    n->at_target, n->backlog, n->openers, show_cred(n), n->gate_refused, n->cred_unseen);
}

/* The next tab-separated field of *p, NUL-terminated in place; NULL past the last. */
static char *field(char **p)
{
	char *f = *p, *tab;

	if (!f)
		return NULL;
	tab = strchr(f, '\t');
	if (tab)
		*tab = '\0';
	*p = tab ? tab + 1 : NULL;
	return f;
}

/* n unsigned numbers from the fields of *p into v.  0 or -EINVAL. */
static int numbers(char **p, uint64_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		char *f = field(p), *end;

		if (!f || !*f || *f == '-')
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(f, &end, 10);
		if (*end || errno)
			return -EINVAL;
	}
	return 0;
}

static void io_from(struct show_io *io, const uint64_t *v)
{
	*io = (struct show_io){ v[0], v[1], v[2], v[3], v[4] };
}

static int parse_node(char **p, struct show_row *r)
{
	uint64_t v[14];

	if (numbers(p, v, 14) || *p)
		return -EINVAL;
	r->openers = (unsigned)v[0];
	r->at_target = (unsigned)v[1];
	io_from(&r->io, v + 2);
	r->lat = (struct show_lat){ v[7], (uint32_t)v[8], (uint32_t)v[9], (uint32_t)v[10] };
	r->dev_lat = (struct show_lat){ v[7], (uint32_t)v[11], (uint32_t)v[12], (uint32_t)v[13] };
	return 1;
}

static int parse_opener(char **p, struct show_row *r)
{
	uint64_t v[7];

	if (numbers(p, v, 7) || *p)
		return -EINVAL;
	r->pid = (pid_t)v[0];
	r->opened = (int64_t)v[1];
	io_from(&r->io, v + 2);
	return 1;
}

int show_row_parse(const char *line, struct show_row *ret, int64_t *now_ns)
{
	char copy[1024], *p = copy, *kind, *node, *label;
	uint64_t t;

	if (snprintf(copy, sizeof(copy), "%s", line) >= (int)sizeof(copy))
		return -EINVAL;
	kind = field(&p);
	if (!strcmp(kind, "T")) {
		if (numbers(&p, &t, 1) || p)
			return -EINVAL;
		*now_ns = (int64_t)t;
		return 0;
	}
	node = field(&p);
	label = field(&p);
	if (!label || strlen(kind) != 1 || (kind[0] != 'N' && kind[0] != 'O'))
		return -EINVAL;
	*ret = (struct show_row){ .kind = kind[0] };
	snprintf(ret->node, sizeof(ret->node), "%s", node);
	snprintf(ret->label, sizeof(ret->label), "%s", label);
	return kind[0] == 'N' ? parse_node(&p, ret) : parse_opener(&p, ret);
}

bool show_row_same(const struct show_row *a, const struct show_row *b)
{
	return a->kind == b->kind && !strcmp(a->node, b->node) &&
	       (a->kind == 'N' || (a->pid == b->pid && a->opened == b->opened));
}

/* A count or a size in five characters at most: 999, 12.3K, 4.0G. */
static void short_num(double v, bool bytes, char *buf, size_t len)
{
	static const char unit[] = " KMGTP";
	double base = bytes ? 1024 : 1000;
	unsigned i = 0;

	while (v >= 999.95 && i < sizeof(unit) - 2) {
		v /= base;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%c", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, unit[i]);
}

static void short_us(uint32_t us, char *buf, size_t len)
{
	if (us < 1000)
		snprintf(buf, len, "%uus", us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", us / 1000.0);
	else
		snprintf(buf, len, "%.1fs", us / 1000000.0);
}

#define TABLE_FMT "%-20s %-24.24s %4s %7s %7s %7s %6s %7s %7s %7s %7s %7s"

void show_table_head(bool rates, char *buf, size_t len)
{
	snprintf(buf, len, TABLE_FMT, "NODE", "DEVICE / OPENER", "OPEN", rates ? "CMD/S" : "CMDS",
		 rates ? "READ/S" : "READ", rates ? "WRITE/S" : "WRITTEN",
		 rates ? "ERR/S" : "ERRORS", rates ? "REF/S" : "REFUSED", "P50", "P99", "MAX",
		 "DEV-P99");
}

/* cur - prev over interval_ns, a second's worth; or cur without prev. */
static double per(uint64_t cur, uint64_t prev, bool have_prev, int64_t interval_ns)
{
	if (!have_prev)
		return (double)cur;
	if (interval_ns <= 0 || cur < prev)
		return 0;
	return (double)(cur - prev) * 1e9 / (double)interval_ns;
}

void show_table_line(const struct show_row *r, const struct show_row *prev, int64_t interval_ns,
		     char *buf, size_t len)
{
	const struct show_io *a = &r->io, *b = prev ? &prev->io : a;
	char v[5][16], lat[4][16] = { "-", "-", "-", "-" }, open[16] = "-", label[80];
	bool p = prev != NULL;

	short_num(per(a->cmds, b->cmds, p, interval_ns), false, v[0], sizeof(v[0]));
	short_num(per(a->bytes_in, b->bytes_in, p, interval_ns), true, v[1], sizeof(v[1]));
	short_num(per(a->bytes_out, b->bytes_out, p, interval_ns), true, v[2], sizeof(v[2]));
	short_num(per(a->errors, b->errors, p, interval_ns), false, v[3], sizeof(v[3]));
	short_num(per(a->refused, b->refused, p, interval_ns), false, v[4], sizeof(v[4]));
	if (r->kind == 'N') {
		snprintf(open, sizeof(open), "%u", r->openers);
		if (r->lat.count) {
			short_us(r->lat.p50, lat[0], sizeof(lat[0]));
			short_us(r->lat.p99, lat[1], sizeof(lat[1]));
			short_us(r->lat.max, lat[2], sizeof(lat[2]));
			short_us(r->dev_lat.p99, lat[3], sizeof(lat[3]));
		}
	}
	snprintf(label, sizeof(label), "%s%s", r->kind == 'O' ? "  " : "", r->label);
	snprintf(buf, len, TABLE_FMT, r->node, label, open, v[0], v[1], v[2], v[3], v[4], lat[0],
		 lat[1], lat[2], lat[3]);
}
