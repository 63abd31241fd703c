/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Logging: one format-checked function, to stderr or syslog.  Every line of
 * the daemon names the node it comes from: the prefix (log_set_prefix) when
 * the daemon serves one node, log_node() when it serves several.
 * Thread-safe: each line is formatted into a local buffer and written with
 * one call.
 */
#ifndef CUSE_BSG_LOG_H
#define CUSE_BSG_LOG_H

#include <stdbool.h>
#include <syslog.h>

extern int log_level; /* the one global: LOG_ERR .. LOG_DEBUG */

void log_set_prefix(const char *prefix);
void log_use_syslog(bool on);
/* When stderr is the journal's stream (systemd's JOURNAL_STREAM names it),
 * begin each line with "<N>", its syslog priority, which the journal keeps. */
void log_detect_journal(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line of one node: "cuse_bsg[NODE]: ...", whatever the prefix. */
void log_node(int level, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...)  log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                   \
	do {                                             \
		if (log_level >= LOG_DEBUG)              \
			log_msg(LOG_DEBUG, __VA_ARGS__); \
	} while (0)

#endif /* CUSE_BSG_LOG_H */
