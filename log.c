// SPDX-License-Identifier: GPL-2.0-only
/*
 * Logging to stderr or syslog.  The prefix is set once at start-up, before
 * any thread exists, and only read afterwards.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int log_level = LOG_NOTICE;

static char log_prefix[128] = "cuse_bsg";
static bool log_syslog;

void log_set_prefix(const char *prefix)
{
	snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
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

	if (node)
		n = snprintf(line, sizeof(line), "cuse_bsg[%s]: ", node);
	else
		n = snprintf(line, sizeof(line), "%s: ", log_prefix);
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
