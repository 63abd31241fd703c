// SPDX-License-Identifier: GPL-2.0-only
/*
 * udev.c's pure rules: which events make or remove a node, how the node of
 * a SCSI device is named, H:C:T:L parsing, and which subsystem is watched.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "udev.h"

TestSuite(udev, .timeout = 10);

struct classify_case {
	const char *want, *action, *subsystem, *devtype, *devnode, *hctl;
	enum uev_action expect;
};

static const struct classify_case classify_cases[] = {
	/* what makes a node */
	{ "scsi_generic", "add", "scsi_generic", NULL, "/dev/sg1", "2:0:0:0", UEV_ADD },
	{ "scsi_generic", NULL, "scsi_generic", NULL, "/dev/sg0", "0:0:0:0", UEV_ADD },
	{ "bsg", "add", "bsg", NULL, "/dev/bsg/3:0:1:7", "3:0:1:7", UEV_ADD },
	/* what removes one: the device may be gone from sysfs, so nothing else is needed */
	{ "scsi_generic", "remove", "scsi_generic", NULL, NULL, NULL, UEV_REMOVE },
	{ "bsg", "remove", "bsg", NULL, "/dev/bsg/0:0:0:0", NULL, UEV_REMOVE },
	/* another subsystem */
	{ "scsi_generic", "add", "block", "disk", "/dev/sda", "0:0:0:0", UEV_IGNORE },
	{ "scsi_generic", "remove", "bsg", NULL, NULL, NULL, UEV_IGNORE },
	{ "scsi_generic", "add", NULL, NULL, "/dev/sg1", "2:0:0:0", UEV_IGNORE },
	/* a partition */
	{ "bsg", "add", "bsg", "partition", "/dev/bsg/0:0:0:0", "0:0:0:0", UEV_IGNORE },
	{ "bsg", "remove", "bsg", "partition", NULL, NULL, UEV_IGNORE },
	/* not a SCSI device's node: a SAS or FC transport's bsg node */
	{ "bsg", "add", "bsg", NULL, "/dev/bsg/sas_host0", NULL, UEV_IGNORE },
	{ "bsg", "add", "bsg", NULL, "/dev/bsg/end_device-0:1", "end_device-0:1", UEV_IGNORE },
	/* no node to open */
	{ "scsi_generic", "add", "scsi_generic", NULL, NULL, "2:0:0:0", UEV_IGNORE },
	{ "scsi_generic", "add", "scsi_generic", NULL, "", "2:0:0:0", UEV_IGNORE },
	/* other actions leave the node alone */
	{ "scsi_generic", "change", "scsi_generic", NULL, "/dev/sg1", "2:0:0:0", UEV_IGNORE },
	{ "scsi_generic", "bind", "scsi_generic", NULL, "/dev/sg1", "2:0:0:0", UEV_IGNORE },
	{ "scsi_generic", "move", "scsi_generic", NULL, "/dev/sg1", "2:0:0:0", UEV_IGNORE },
	{ "scsi_generic", "online", "scsi_generic", NULL, "/dev/sg1", "2:0:0:0", UEV_IGNORE },
};

Test(udev, classify_table)
{
	for (size_t i = 0; i < sizeof(classify_cases) / sizeof(classify_cases[0]); i++) {
		const struct classify_case *c = &classify_cases[i];

		cr_expect_eq(uev_classify(c->want, c->action, c->subsystem, c->devtype, c->devnode,
					  c->hctl),
			     c->expect, "case %zu: %s %s %s", i, c->action ? c->action : "(scan)",
			     c->subsystem ? c->subsystem : "(none)", c->devnode ? c->devnode : "");
	}
}

Test(udev, parse_hctl_accepts_four_numbers)
{
	unsigned v[4] = { 0 };

	cr_assert_eq(uev_parse_hctl("0:0:0:0", v), 0);
	cr_assert_eq(uev_parse_hctl("12:3:45:4294967295", v), 0);
	cr_expect_eq(v[0], 12);
	cr_expect_eq(v[1], 3);
	cr_expect_eq(v[2], 45);
	cr_expect_eq(v[3], 4294967295u);
}

Test(udev, parse_hctl_refuses_anything_else)
{
	static const char *const bad[] = {
		"",	   "0:0:0",    "0:0:0:0:0", "0:0:0:0 ", " 0:0:0:0", "-1:0:0:0", "0:+1:0:0",
		"a:0:0:0", "0:0:0:0x", "sg0",	    "host0",	"0::0:0",   ":0:0:0",	"0:0:0:",
	};
	unsigned v[4] = { 7, 7, 7, 7 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(uev_parse_hctl(bad[i], v), -EINVAL, "'%s'", bad[i]);
	cr_expect_eq(uev_parse_hctl(NULL, v), -EINVAL);
	cr_expect_eq(v[0], 7, "nothing written on failure");
}

Test(udev, node_name_mirrors_hctl)
{
	char name[64];

	cr_assert_eq(uev_node_name("0:0:0:0", name, sizeof(name)), 0);
	cr_expect_str_eq(name, "bsg/0:0:0:0-cuse");
	cr_assert_eq(uev_node_name("10:2:33:4", name, sizeof(name)), 0);
	cr_expect_str_eq(name, "bsg/10:2:33:4-cuse");
}

Test(udev, node_name_is_one_target_default_for_the_bsg_node)
{
	/* cuse_bsg /dev/bsg/H:C:T:L names its node bsg/<basename>-cuse */
	char name[64], one[64];
	const char *target = "/dev/bsg/3:0:1:2";

	snprintf(one, sizeof(one), "bsg/%s-cuse", strrchr(target, '/') + 1);
	cr_assert_eq(uev_node_name("3:0:1:2", name, sizeof(name)), 0);
	cr_expect_str_eq(name, one);
}

Test(udev, node_name_refuses)
{
	char name[64], tiny[8];

	cr_expect_eq(uev_node_name("sas_host0", name, sizeof(name)), -EINVAL);
	cr_expect_eq(uev_node_name(NULL, name, sizeof(name)), -EINVAL);
	cr_expect_eq(uev_node_name("0:0:0:0", tiny, sizeof(tiny)), -ENAMETOOLONG);
}

static void make_dir(const char *root, const char *sub)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, sub);
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s", path);
}

Test(udev, subsystem_is_sg_when_loaded_else_bsg)
{
	char root[] = "/tmp/test_udev.XXXXXX";
	char path[512];

	cr_assert_not_null(mkdtemp(root));
	make_dir(root, "class");
	make_dir(root, "class/bsg");
	cr_expect_str_eq(uev_pick_subsystem(root), "bsg");
	make_dir(root, "class/scsi_generic");
	cr_expect_str_eq(uev_pick_subsystem(root), "scsi_generic");
	snprintf(path, sizeof(path), "%s/class/scsi_generic", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class/bsg", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class", root);
	rmdir(path);
	rmdir(root);
}
