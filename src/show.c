// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view's two forms, as tgtadm's --op show prints for people
 * (indented blocks, one fact a line) and as one JSON object.  A node that
 * does not fit in the buffer is left out whole, and the answer says so:
 * the JSON stays valid, however long the names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "show.h"

#define END_ROOM 64 /* kept free for show_end() while nodes are written */

int show_out_init(struct show_out *o, bool json)
{
	*o = (struct show_out){ .json = json, .cap = SHOW_OUT_MAX };
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
	char used[32], max[32], file[32], user[32];
	uint64_t t = dm->uptime_s;

	size_words(dm->mem_used, used, sizeof(used));
	PUT(o, "Daemon: pid %d, cuse_bsg %s, up %" PRIu64 ":%02" PRIu64 ":%02" PRIu64 "\n",
	    (int)dm->pid, dm->version, t / 3600, t / 60 % 60, t % 60);
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
	PUT(o, "{\"pid\":%d,\"version\":", (int)dm->pid);
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
	if (o->json)
		json_daemon(o, dm);
	else
		text_daemon(o, dm);
}

static void text_opener(struct show_out *o, const struct show_opener *op)
{
	char mem[32];

	size_words(op->mem, mem, sizeof(mem));
	PUT(o, "        pid %d, uid %u: queued %u, in flight %u, calls %u, memory %s\n",
	    (int)op->pid, (unsigned)op->uid, op->queued, op->in_flight, op->calls, mem);
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

static void text_node(struct show_out *o, const struct show_node *n)
{
	PUT(o, "Node: ");
	put_text_str(o, n->name);
	if (n->have_stat)
		PUT(o, " (char %u:%u)", n->major, n->minor);
	PUT(o, "\n    Target: ");
	put_text_str(o, n->target[0] ? n->target : "any device bound with BSG_IOC_ADD");
	PUT(o, "\n    State: %s\n", n->gone ? "device gone; ends with its last opener" : "serving");
	text_access(o, n);
	PUT(o,
	    "    Threads: workers %u, work queued %u; copy threads %u of %u; libfuse's %u at "
	    "most\n",
	    n->workers, n->backlog, n->copy_threads, n->copy_threads_max, n->fuse_threads_max);
	PUT(o, "    At the target: %u\n    Counters:", n->at_target);
	for (unsigned i = 0; i < n->ncounters; i++)
		PUT(o, "%s %s %" PRIu64, i ? "," : "", n->counters[i].name, n->counters[i].value);
	PUT(o, "\n    Openers: %u\n", n->openers);
	for (unsigned i = 0; i < n->nopeners; i++)
		text_opener(o, &n->opener[i]);
	if (n->openers > n->nopeners)
		PUT(o, "        (%u more not listed)\n", n->openers - n->nopeners);
}

static void json_openers(struct show_out *o, const struct show_node *n)
{
	PUT(o, ",\"openers\":[");
	for (unsigned i = 0; i < n->nopeners; i++) {
		const struct show_opener *op = &n->opener[i];

		PUT(o,
		    "%s{\"pid\":%d,\"uid\":%u,\"queued\":%u,\"in_flight\":%u,\"calls\":%u,"
		    "\"memory\":%" PRIu64 "}",
		    i ? "," : "", (int)op->pid, (unsigned)op->uid, op->queued, op->in_flight,
		    op->calls, op->mem);
	}
	PUT(o, "],\"openers_alive\":%u,\"openers_unlisted\":%u", n->openers,
	    n->openers > n->nopeners ? n->openers - n->nopeners : 0);
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
	if (n->have_stat)
		PUT(o, ",\"dev\":\"%u:%u\",\"mode\":\"%04o\",\"uid\":%u,\"gid\":%u", n->major,
		    n->minor, (unsigned)n->mode, (unsigned)n->uid, (unsigned)n->gid);
	PUT(o,
	    ",\"state\":\"%s\",\"cred_check\":\"%s\",\"gate_refused\":%" PRIu64
	    ",\"cred_unseen\":%" PRIu64,
	    n->gone ? "gone" : "serving", show_cred(n), n->gate_refused, n->cred_unseen);
	PUT(o,
	    ",\"threads\":{\"workers\":%u,\"backlog\":%u,\"copy\":%u,\"copy_max\":%u,"
	    "\"fuse_max\":%u},\"at_target\":%u,\"counters\":{",
	    n->workers, n->backlog, n->copy_threads, n->copy_threads_max, n->fuse_threads_max,
	    n->at_target);
	for (unsigned i = 0; i < n->ncounters; i++)
		PUT(o, "%s\"%s\":%" PRIu64, i ? "," : "", n->counters[i].name,
		    n->counters[i].value);
	PUT(o, "}");
	json_openers(o, n);
	PUT(o, "}");
}

void show_add_node(struct show_out *o, const struct show_node *n)
{
	size_t before = o->len;

	if (o->over)
		return;
	if (o->json)
		json_node(o, n);
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
	if (!o->json) {
		if (o->truncated)
			put(o, o->cap, "(more nodes than fit in %u KiB not shown)\n",
			    SHOW_OUT_MAX >> 10);
		return;
	}
	put(o, o->cap, "],\"truncated\":%s}\n", o->truncated ? "true" : "false");
}

static bool in_groups(gid_t g, gid_t gid, const gid_t *groups, size_t ngroups)
{
	if (g == gid)
		return true;
	for (size_t i = 0; i < ngroups; i++)
		if (groups[i] == g)
			return true;
	return false;
}

bool show_may_open(const struct show_node *n, uid_t uid, gid_t gid, const gid_t *groups,
		   size_t ngroups)
{
	unsigned bits;

	if (uid == 0)
		return true;
	if (!n->have_stat)
		return false;
	if (uid == n->uid)
		bits = n->mode >> 6;
	else if (in_groups(n->gid, gid, groups, ngroups))
		bits = n->mode >> 3;
	else
		bits = n->mode;
	return (bits & 06) != 0;
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
