// SPDX-License-Identifier: GPL-2.0-only
/*
 * show: the live view's text, JSON and rows from a filled snapshot; names
 * that would break JSON or a terminal; a view too long for its buffer; the
 * rows read back and the table's counts and rates; the SIGUSR1 line.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "show.h"

TestSuite(show, .timeout = 10);

static const struct show_daemon daemon_fixture = {
	.pid = 4242,
	.version = "0.1.0",
	.now_s = 1796000000, /* 2026-11-30T00:53:20Z */
	.now_ns = 5,
	.uptime_s = 3725,
	.mem_used = 65536,
	.mem_max = 512u << 20,
	.mem_per_file = 128u << 20,
	.threads = 40,
	.calls_busy = 2,
	.calls_per_file = 16,
	.calls_per_user = 32,
	.files = 3,
	.files_max = 4096,
	.files_per_user = 1024,
};

static void node_fixture(struct show_node *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->target, sizeof(n->target), "/dev/sg1");
	snprintf(n->vendor, sizeof(n->vendor), "Linux");
	snprintf(n->product, sizeof(n->product), "scsi_debug");
	snprintf(n->revision, sizeof(n->revision), "0191");
	snprintf(n->serial, sizeof(n->serial), "2000");
	n->size = 16u << 20;
	n->have_stat = true;
	n->major = 240;
	n->minor = 1;
	n->mode = 0660;
	n->gid = 6;
	n->cred_check = "witness";
	n->cred_unseen = 2;
	n->gate_refused = 7;
	n->workers = 4;
	n->copy_threads_max = 256;
	n->fuse_threads_max = 128;
	n->at_target = 2;
	n->io = (struct show_io){ 9, 1u << 20, 4096, 1, 3 };
	n->lat = (struct show_lat){ 9, 250, 1500, 2100000 };
	n->dev_lat = (struct show_lat){ 9, 200, 1400, 2000000 };
	show_counter_add(n, "open", 5);
	show_counter_add(n, "sg_io", 9);
	n->openers = 2;
	n->nopeners = 2;
	n->opener[0] = (struct show_opener){ .pid = 123,
					     .uid = 1000,
					     .gid = 6,
					     .comm = "fio",
					     .user = "alice",
					     .group = "disk",
					     .opened = 1796000000,
					     .io = { 7, 1u << 20, 0, 1, 2 },
					     .queued = 3,
					     .in_flight = 2,
					     .calls = 1,
					     .mem = 65536 };
	n->opener[1] = (struct show_opener){ .pid = 124, .uid = 0, .gid = (gid_t)-1 };
}

static void render(struct show_out *o, enum show_form form, const struct show_node *n,
		   unsigned count)
{
	cr_assert_eq(show_out_init(o, form), 0);
	show_begin(o, &daemon_fixture);
	for (unsigned i = 0; i < count; i++)
		show_add_node(o, n);
	show_end(o);
	cr_assert_eq(strlen(o->buf), o->len);
}

/* The fixture's node, named name, alone in an answer. */
static void render_fixture(struct show_out *o, enum show_form form, struct show_node *n,
			   const char *name)
{
	node_fixture(n, name);
	render(o, form, n, 1);
}

static void has(const char *text, const char *want)
{
	cr_expect(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
}

Test(show, text_names_node_openers_and_bounds)
{
	struct show_node n;
	struct show_out o;

	render_fixture(&o, SHOW_TEXT, &n, "bsg/sg1-cuse");
	has(o.buf, "Daemon: pid 4242, cuse_bsg 0.1.0, up 1:02:05, at 2026-11-30T00:53:20Z\n");
	has(o.buf, "    Memory: 64 KiB used of 512 MiB (--max-memory); a file: 128 MiB; a user: "
		   "no bound\n");
	has(o.buf, "    Calls holding a thread: 2, parked: 0; a file: 16 at most, a user: 32\n");
	has(o.buf, "Node: bsg/sg1-cuse (char 240:1)\n    Target: /dev/sg1\n"
		   "    Device: Linux scsi_debug 0191, serial 2000, 16 MiB (16777216 bytes)\n");
	has(o.buf, "    Access: mode 0660, owner uid 0, group gid 6\n");
	has(o.buf, "    Credential check: witness; refused on sg's test: 7; left to /proc: 2\n");
	has(o.buf, "    I/O: commands 9, read 1 MiB, written 4 KiB, errors 1, refused 3\n");
	has(o.buf, "    Latency, last 10-20 s: 9 commands; p50 250 us, p99 1.5 ms, max 2.1 s; "
		   "at the device: p50 200 us, p99 1.4 ms, max 2.0 s\n");
	has(o.buf, "    Counters: open 5, sg_io 9\n    Openers: 2\n");
	has(o.buf,
	    "        pid 123 (fio), user alice (1000), group disk (6), opened "
	    "2026-11-30T00:53:20Z\n            commands 7, read 1 MiB, written 0 B, errors 1, "
	    "refused 2; queued 3, in flight 2, calls 1, memory 64 KiB\n");
	has(o.buf, "        pid 124, user 0, opened 1970-01-01T00:00:00Z\n            commands 0, "
		   "read 0 B, written 0 B, errors 0, refused 0; queued 0, in flight 0, calls 0, "
		   "memory 0 B\n");
	show_out_fini(&o);
}

Test(show, json_is_one_object_with_every_field)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "sg1-cuse");
	n.nopeners = 1;
	render(&o, SHOW_JSON, &n, 1);
	cr_expect_str_eq(
		o.buf,
		"{\"time\":\"2026-11-30T00:53:20Z\",\"time_ns\":1796000000000000005,"
		"\"pid\":4242,\"version\":\"0.1.0\",\"uptime_s\":3725,"
		"\"memory\":{\"used\":65536,\"max\":536870912,\"per_file_max\":134217728,"
		"\"per_user_max\":0},"
		"\"threads\":{\"process\":40,\"calls_busy\":2,\"calls_parked\":0,"
		"\"calls_per_file_max\":16,\"calls_per_user_max\":32},"
		"\"files\":{\"open\":3,\"max\":4096,\"per_user_max\":1024},"
		"\"nodes\":[{\"name\":\"sg1-cuse\",\"target\":\"/dev/sg1\","
		"\"device\":{\"vendor\":\"Linux\",\"product\":\"scsi_debug\",\"revision\":\"0191\","
		"\"serial\":\"2000\",\"size\":16777216},\"dev\":\"240:1\","
		"\"mode\":\"0660\",\"uid\":0,\"gid\":6,\"state\":\"serving\",\"cred_check\":"
		"\"witness\","
		"\"gate_refused\":7,\"cred_unseen\":2,\"threads\":{\"workers\":4,\"backlog\":0,"
		"\"copy\":0,"
		"\"copy_max\":256,\"fuse_max\":128},\"at_target\":2,"
		"\"io\":{\"commands\":9,\"read_bytes\":1048576,\"written_bytes\":4096,"
		"\"errors\":1,\"refused\":3},\"latency_window_s\":[10,20],"
		"\"latency_us\":{\"commands\":9,\"p50\":250,\"p99\":1500,\"max\":2100000},"
		"\"device_latency_us\":{\"commands\":9,\"p50\":200,\"p99\":1400,\"max\":2000000},"
		"\"counters\":{\"open\":5,\"sg_io\":9},"
		"\"openers\":[{\"pid\":123,\"comm\":\"fio\",\"uid\":1000,\"user\":\"alice\","
		"\"gid\":6,\"group\":\"disk\",\"opened\":\"2026-11-30T00:53:20Z\","
		"\"opened_s\":1796000000,\"io\":{\"commands\":7,\"read_bytes\":1048576,"
		"\"written_bytes\":0,\"errors\":1,\"refused\":2},\"queued\":3,\"in_flight\":2,"
		"\"calls\":1,\"memory\":65536}],\"openers_alive\":2,\"openers_unlisted\":1}],"
		"\"truncated\":false}\n");
	show_out_fini(&o);
}

Test(show, json_escapes_quotes_controls_and_bad_utf8)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "a\"b\\c\x01\x7f"
			 "d\xc3\xa9\xff\xc0\xaf\xed\xa0\x80");
	n.target[0] = '\0'; /* a control node: no target */
	render(&o, SHOW_JSON, &n, 1);
	has(o.buf,
	    "\"name\":\"a\\\"b\\\\c\\u0001\\u007fd\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	    "\\ufffd\",\"target\":null,");
	show_out_fini(&o);
}

Test(show, text_hides_control_characters)
{
	struct show_node n;
	struct show_out o;

	render_fixture(&o, SHOW_TEXT, &n, "x\033[2Jy\n");
	has(o.buf, "Node: x?[2Jy? (char 240:1)\n");
	show_out_fini(&o);
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

Test(show, too_many_nodes_are_left_out_whole_and_said)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "sg1-cuse");
	n.nopeners = SHOW_OPENERS_MAX;
	n.openers = 100;
	render(&o, SHOW_JSON, &n, 200);
	cr_expect_lt(o.nodes, 200);
	cr_expect_gt(o.nodes, 10);
	cr_expect_eq(count(o.buf, "{\"name\""), o.nodes);
	cr_expect_eq(count(o.buf, "\"openers_unlisted\":36}"), o.nodes);
	cr_expect(strstr(o.buf, "}],\"truncated\":true}\n") != NULL);
	cr_expect_eq(o.buf[o.len - 1], '\n');
	cr_expect_lt(o.len, (size_t)SHOW_OUT_MAX);
	show_out_fini(&o);

	render(&o, SHOW_TEXT, &n, 200);
	cr_expect_eq(count(o.buf, "Node: "), o.nodes);
	cr_expect_eq(count(o.buf, "(36 more not listed)"), o.nodes);
	has(o.buf, "(more nodes than fit in 256 KiB not shown)\n");
	show_out_fini(&o);
}

Test(show, stats_line_keeps_its_fields)
{
	struct show_node n;
	char line[256];

	node_fixture(&n, "sg1-cuse");
	n.backlog = 3;
	show_stats_line(&n, line, sizeof(line));
	cr_expect_str_eq(line, "open=5 sg_io=9 at_target=2 queued=3 openers=2 cred_check=witness "
			       "gate_refused=7 cred_unseen=2");
}

/* The rows of an answer, as the client reads them back. */
static unsigned read_rows(char *buf, struct show_row *rows, unsigned max, int64_t *now_ns)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int ret = show_row_parse(line, &rows[n], now_ns);

		cr_assert_geq(ret, 0, "a row not read back: '%s'", line);
		if (ret > 0 && n < max)
			n++;
	}
	return n;
}

Test(show, rows_read_back_as_written)
{
	struct show_node n;
	struct show_out o;
	struct show_row r[4];
	int64_t now = 0;

	node_fixture(&n, "bsg/sg 1\tx");
	snprintf(n.opener[1].comm, sizeof(n.opener[1].comm), "a b");
	render(&o, SHOW_ROWS, &n, 1);
	cr_assert_eq(read_rows(o.buf, r, 4, &now), 3, "%s", o.buf);
	cr_expect_eq(now, 1796000000000000005);
	cr_expect_eq(r[0].kind, 'N');
	cr_expect_str_eq(r[0].node, "bsg/sg 1_x");
	cr_expect_str_eq(r[0].label, "Linux scsi_debug");
	cr_expect_eq(r[0].openers, 2);
	cr_expect_eq(r[0].io.cmds, 9);
	cr_expect_eq(r[0].io.bytes_in, 1u << 20);
	cr_expect_eq(r[0].io.bytes_out, 4096);
	cr_expect_eq(r[0].io.errors, 1);
	cr_expect_eq(r[0].io.refused, 3);
	cr_expect_eq(r[0].lat.p99, 1500);
	cr_expect_eq(r[0].dev_lat.max, 2000000);
	cr_expect_eq(r[1].kind, 'O');
	cr_expect_str_eq(r[1].node, "bsg/sg 1_x");
	cr_expect_str_eq(r[1].label, "123 fio alice");
	cr_expect_eq(r[1].pid, 123);
	cr_expect_eq(r[1].opened, 1796000000);
	cr_expect_eq(r[1].io.refused, 2);
	cr_expect_str_eq(r[2].label, "124 a b ?");
	cr_expect(show_row_same(&r[1], &r[1]));
	cr_expect_not(show_row_same(&r[1], &r[2]));
	cr_expect_not(show_row_same(&r[0], &r[1]));
	show_out_fini(&o);
}

Test(show, rows_refuse_what_is_not_one)
{
	static const char *const bad[] = {
		"",
		"X\ta\tb",
		"N\tname\tlabel\t1\t2",						     /* short */
		"N\tname\tlabel\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15", /* long */
		"O\tname\tlabel\t1\t2\t3\t4\t5\t6\tx",
		"O\tname\tlabel\t1\t2\t3\t4\t5\t6\t-7",
		"T\t",
		"T\t12\t13",
	};
	struct show_row r;
	int64_t now;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(show_row_parse(bad[i], &r, &now), -EINVAL, "'%s'", bad[i]);
	cr_expect_eq(show_row_parse("O\tname\tlabel\t1\t2\t3\t4\t5\t6\t7", &r, &now), 1);
}

Test(show, table_counts_then_rates)
{
	struct show_row prev = { .kind = 'N', .node = "sg1-cuse", .label = "Linux scsi_debug" };
	struct show_row cur = prev;
	char line[256], head[256];

	prev.io = (struct show_io){ 1000, 1u << 20, 0, 0, 0 };
	cur.io = (struct show_io){ 3000, 9u << 20, 2048, 4, 0 };
	cur.openers = 2;
	cur.lat = (struct show_lat){ 10, 120, 950, 12500 };
	cur.dev_lat = (struct show_lat){ 10, 100, 800, 12000 };
	show_table_head(false, head, sizeof(head));
	cr_expect(strstr(head, "NODE") == head && strstr(head, "CMDS") && strstr(head, "DEV-P99"),
		  "%s", head);
	show_table_line(&cur, NULL, 0, line, sizeof(line));
	cr_expect_str_eq(
		line, "sg1-cuse             Linux scsi_debug            2   3.00K   9.00M   2.00K "
		      "     4       0   120us   950us  12.5ms   800us");
	show_table_head(true, head, sizeof(head));
	cr_expect(strstr(head, "CMD/S") && strstr(head, "READ/S"), "%s", head);
	show_table_line(&cur, &prev, 2000000000, line, sizeof(line));
	cr_expect_str_eq(
		line, "sg1-cuse             Linux scsi_debug            2   1.00K   4.00M   1.00K "
		      "     2       0   120us   950us  12.5ms   800us");
	cur.kind = prev.kind = 'O';
	snprintf(cur.label, sizeof(cur.label), "123 fio alice");
	show_table_line(&cur, &prev, 2000000000, line, sizeof(line));
	cr_expect_str_eq(
		line, "sg1-cuse               123 fio alice             -   1.00K   4.00M   1.00K "
		      "     2       0       -       -       -       -");
}

Test(show, json_of_a_control_node_has_no_device)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "bsg/ctl");
	n.target[0] = '\0';
	render(&o, SHOW_JSON, &n, 1);
	has(o.buf, "\"target\":null,\"device\":null,");
	show_out_fini(&o);
}
