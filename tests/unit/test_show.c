// SPDX-License-Identifier: GPL-2.0-only
/*
 * show: the live view's text and JSON from a filled snapshot; names that
 * would break JSON or a terminal; a view too long for its buffer; who may
 * see a node; the SIGUSR1 line.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "show.h"

TestSuite(show, .timeout = 10);

static const struct show_daemon daemon_fixture = {
	.pid = 4242,
	.version = "0.1.0",
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
	show_counter_add(n, "open", 5);
	show_counter_add(n, "sg_io", 9);
	n->openers = 2;
	n->nopeners = 2;
	n->opener[0] = (struct show_opener){
		.pid = 123, .uid = 1000, .queued = 3, .in_flight = 2, .calls = 1, .mem = 65536
	};
	n->opener[1] = (struct show_opener){ .pid = 124, .uid = 0 };
}

static void render(struct show_out *o, bool json, const struct show_node *n, unsigned count)
{
	cr_assert_eq(show_out_init(o, json), 0);
	show_begin(o, &daemon_fixture);
	for (unsigned i = 0; i < count; i++)
		show_add_node(o, n);
	show_end(o);
	cr_assert_eq(strlen(o->buf), o->len);
}

static void has(const char *text, const char *want)
{
	cr_expect(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
}

Test(show, text_names_node_openers_and_bounds)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "bsg/sg1-cuse");
	render(&o, false, &n, 1);
	has(o.buf, "Daemon: pid 4242, cuse_bsg 0.1.0, up 1:02:05\n");
	has(o.buf, "    Memory: 64 KiB used of 512 MiB (--max-memory); a file: 128 MiB; a user: "
		   "no bound\n");
	has(o.buf, "    Calls holding a thread: 2, parked: 0; a file: 16 at most, a user: 32\n");
	has(o.buf, "Node: bsg/sg1-cuse (char 240:1)\n    Target: /dev/sg1\n");
	has(o.buf, "    Access: mode 0660, owner uid 0, group gid 6\n");
	has(o.buf, "    Credential check: witness; refused on sg's test: 7; left to /proc: 2\n");
	has(o.buf, "    Counters: open 5, sg_io 9\n    Openers: 2\n");
	has(o.buf, "        pid 123, uid 1000: queued 3, in flight 2, calls 1, memory 64 KiB\n");
	has(o.buf, "        pid 124, uid 0: queued 0, in flight 0, calls 0, memory 0 B\n");
	show_out_fini(&o);
}

Test(show, json_is_one_object_with_every_field)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "sg1-cuse");
	n.nopeners = 1;
	render(&o, true, &n, 1);
	cr_expect_str_eq(
		o.buf,
		"{\"pid\":4242,\"version\":\"0.1.0\",\"uptime_s\":3725,"
		"\"memory\":{\"used\":65536,\"max\":536870912,\"per_file_max\":134217728,"
		"\"per_user_max\":0},"
		"\"threads\":{\"process\":40,\"calls_busy\":2,\"calls_parked\":0,"
		"\"calls_per_file_max\":16,\"calls_per_user_max\":32},"
		"\"files\":{\"open\":3,\"max\":4096,\"per_user_max\":1024},"
		"\"nodes\":[{\"name\":\"sg1-cuse\",\"target\":\"/dev/sg1\",\"dev\":\"240:1\","
		"\"mode\":\"0660\",\"uid\":0,\"gid\":6,\"state\":\"serving\",\"cred_check\":"
		"\"witness\","
		"\"gate_refused\":7,\"cred_unseen\":2,\"threads\":{\"workers\":4,\"backlog\":0,"
		"\"copy\":0,"
		"\"copy_max\":256,\"fuse_max\":128},\"at_target\":2,"
		"\"counters\":{\"open\":5,\"sg_io\":9},"
		"\"openers\":[{\"pid\":123,\"uid\":1000,\"queued\":3,\"in_flight\":2,\"calls\":1,"
		"\"memory\":65536}],\"openers_alive\":2,\"openers_unlisted\":1}],"
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
	render(&o, true, &n, 1);
	has(o.buf,
	    "\"name\":\"a\\\"b\\\\c\\u0001\\u007fd\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	    "\\ufffd\",\"target\":null,");
	show_out_fini(&o);
}

Test(show, text_hides_control_characters)
{
	struct show_node n;
	struct show_out o;

	node_fixture(&n, "x\033[2Jy\n");
	render(&o, false, &n, 1);
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
	render(&o, true, &n, 200);
	cr_expect_lt(o.nodes, 200);
	cr_expect_gt(o.nodes, 10);
	cr_expect_eq(count(o.buf, "{\"name\""), o.nodes);
	cr_expect_eq(count(o.buf, "\"openers_unlisted\":36}"), o.nodes);
	cr_expect(strstr(o.buf, "}],\"truncated\":true}\n") != NULL);
	cr_expect_eq(o.buf[o.len - 1], '\n');
	cr_expect_lt(o.len, (size_t)SHOW_OUT_MAX);
	show_out_fini(&o);

	render(&o, false, &n, 200);
	cr_expect_eq(count(o.buf, "Node: "), o.nodes);
	cr_expect_eq(count(o.buf, "(36 more not listed)"), o.nodes);
	has(o.buf, "(more nodes than fit in 256 KiB not shown)\n");
	show_out_fini(&o);
}

Test(show, a_node_is_shown_to_whom_may_open_it)
{
	static const struct {
		mode_t mode;
		uid_t uid;
		gid_t gid, extra;
		bool may;
	} cases[] = {
		{ 0660, 0, 0, 0, true },				       /* root: always */
		{ 0000, 0, 0, 0, true },	{ 0600, 1000, 1000, 0, true }, /* the owner */
		{ 0060, 1000, 1000, 0, false }, /* the owner's class decides, as the kernel's */
		{ 0660, 1001, 6, 0, true },	/* the group, primary */
		{ 0660, 1001, 100, 6, true },	/* the group, supplementary */
		{ 0660, 1001, 100, 7, false },	/* neither */
		{ 0606, 1001, 6, 0, false },	/* in the group: its bits, not others' */
		{ 0604, 1001, 100, 0, true },	/* others may read */
		{ 0602, 1001, 100, 0, true },	/* or write */
		{ 0661, 1001, 100, 0, false },	/* execute is no open */
	};
	struct show_node n;

	node_fixture(&n, "sg1-cuse");
	n.uid = 1000;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gid_t groups[2] = { 50, cases[i].extra };

		n.mode = cases[i].mode;
		cr_expect_eq(show_may_open(&n, cases[i].uid, cases[i].gid, groups, 2), cases[i].may,
			     "case %zu", i);
	}
	n.have_stat = false;
	cr_expect_eq(show_may_open(&n, 1000, 1000, NULL, 0), false, "no /dev node: root only");
	cr_expect(show_may_open(&n, 0, 0, NULL, 0));
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
