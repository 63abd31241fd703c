// SPDX-License-Identifier: GPL-2.0-only
/*
 * Logging to stderr or syslog.  The prefix is set once at start-up, before
 * any thread exists, and only read afterwards; the switch to syslog comes
 * once the nodes are ready, while their threads log.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int log_level = LOG_NOTICE;

static char log_prefix[128] = "cuse_bsg";
static atomic_bool log_syslog; /* set once, by the main thread, as other threads log */
static bool log_levels;	       /* stderr is the journal's stream: "<N>" before each line */

void log_set_prefix(const char *prefix)
{
	snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
}

void log_detect_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* systemd sets it to stderr's device and inode when stderr is the journal */
	log_levels = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
		     fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void log_use_syslog(bool on)
{
	if (on && !log_syslog)
		openlog("cuse_bsg", LOG_PID, LOG_DAEMON);
	log_syslog = on;
}

static void vlog(int level, const char *node, const char *fmt, va_list ap)
{
	char line[1024];
	int n;
	char lv[4] = ""; /* "<N>": the journal's priority of the line */

	if (log_levels && !log_syslog)
		snprintf(lv, sizeof(lv), "<%d>", level & 7);
	if (node)
		n = snprintf(line, sizeof(line), "%scuse_bsg[%s]: ", lv, node);
	else
		n = snprintf(line, sizeof(line), "%s%s: ", lv, log_prefix);
	if (n < 0 || n >= (int)sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (log_syslog) {
		syslog(level, "%s", line);
		return;
	}
	n = strlen(line);
	if (n < (int)sizeof(line) - 1)
		line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		return; /* nowhere left to report it */
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vlog(level, NULL, fmt, ap);
	va_end(ap);
}

void log_node(int level, const char *node, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vlog(level, node, fmt, ap);
	va_end(ap);
}
