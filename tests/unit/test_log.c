// SPDX-License-Identifier: GPL-2.0-only
/*
 * log: under systemd (JOURNAL_STREAM naming stderr) each line begins with
 * its syslog priority, "<N>", which the journal keeps; anywhere else the
 * line is plain.  stderr is a temporary file here.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

TestSuite(log, .timeout = 10);

/* stderr into a fresh temporary file; its descriptor for reading back */
static int capture(void)
{
	FILE *f = tmpfile();

	cr_assert(f != NULL);
	cr_assert(dup2(fileno(f), STDERR_FILENO) == STDERR_FILENO);
	return dup(fileno(f));
}

static void read_back(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	cr_assert(n >= 0);
	buf[n] = 0;
}

static void set_stream(int fd)
{
	struct stat st;
	char v[64];

	cr_assert(fstat(fd, &st) == 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
}

Test(log, journal_stream_gets_priorities)
{
	int fd = capture();
	char out[512];

	set_stream(STDERR_FILENO);
	log_detect_journal();
	log_set_prefix("cuse_bsg[bsg/sg0-cuse]");
	log_err("cannot open the policy %s", "/etc/x");
	log_warn("w");
	log_node(LOG_NOTICE, "bsg/sg1-cuse", "serving");
	read_back(fd, out, sizeof(out));
	cr_assert(eq(str, out,
		     "<3>cuse_bsg[bsg/sg0-cuse]: cannot open the policy /etc/x\n"
		     "<4>cuse_bsg[bsg/sg0-cuse]: w\n"
		     "<5>cuse_bsg[bsg/sg1-cuse]: serving\n"));
}

Test(log, another_stream_is_plain)
{
	int fd = capture();
	char out[256];

	setenv("JOURNAL_STREAM", "1:1", 1); /* some other file */
	log_detect_journal();
	log_set_prefix("cuse_bsg");
	log_err("e");
	read_back(fd, out, sizeof(out));
	cr_assert(eq(str, out, "cuse_bsg: e\n"));
}

Test(log, no_journal_is_plain)
{
	int fd = capture();
	char out[256];

	unsetenv("JOURNAL_STREAM");
	log_detect_journal();
	log_set_prefix("cuse_bsg");
	log_err("e");
	read_back(fd, out, sizeof(out));
	cr_assert(eq(str, out, "cuse_bsg: e\n"));
}
