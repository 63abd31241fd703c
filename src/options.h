/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The values of the command line's options: numbers in a range, sizes with
 * a suffix, octal modes, ids and names.  Each rule is data (struct
 * opt_range), and every refusal is one line naming the option, the value,
 * the accepted range and the accepted suffixes.
 *
 * Pure: no system calls, no allocation.  A value is taken only as written:
 * digits, no sign, no blank, no overflow.  Then the command line itself,
 * parsed into struct options (options_parse()).
 */
#ifndef CUSE_BSG_OPTIONS_H
#define CUSE_BSG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bsgdev.h"
#include "gate.h"
#include "node.h"
#include "share.h"

enum opt_kind {
	OPT_DECIMAL, /* digits */
	OPT_OCTAL,   /* octal digits, any number of leading zeros */
	OPT_SIZE,    /* digits and one of K, M, G (KiB, MiB, GiB), or none: bytes */
};

/* One option's accepted values. */
struct opt_range {
	const char *option; /* "--threads", as the message names it */
	enum opt_kind kind;
	uint64_t min, max;
};

/* The sizes' range: a page, and far more memory than a buffer budget needs. */
#define OPT_SIZE_MIN 4096ull
#define OPT_SIZE_MAX (1ull << 40)

/* The most a user or group number may be: (uid_t)-1 is chown()'s "unchanged". */
#define OPT_ID_MAX 4294967294ull

/*
 * arg as r says: 0 and *ret, or -EINVAL and the reason in why (one line,
 * naming r->option, arg, the range and the suffixes).
 */
int options_number(const struct opt_range *r, const char *arg, uint64_t *ret, char *why,
		   size_t why_len);

/* "4K", "1G", "1536": a size as options_number(OPT_SIZE) takes it, for messages. */
void options_size_name(uint64_t v, char *buf, size_t len);

/*
 * Any option's value, and TARGET: 0, or -EINVAL if it is empty or holds a
 * control character (a newline would forge a log line), with why.
 */
int options_check_text(const char *option, const char *arg, char *why, size_t why_len);

/*
 * --name: a path under /dev of at most max_len - 1 bytes, relative, without
 * "." or ".." or empty components, no blank or control character, not
 * cuse's own node.  0, or -EINVAL with why.
 */
int options_check_name(const char *arg, size_t max_len, char *why, size_t why_len);

/*
 * --owner and --group given as a number (what names no user or group):
 * digits only, 0..OPT_ID_MAX.  0, or -EINVAL with why naming option.
 */
int options_parse_id(const char *option, const char *arg, uint32_t *ret, char *why, size_t why_len);

/*
 * --opener-memory against --max-memory: one file may not be promised more
 * than every file together.  0, or -EINVAL with why.
 */
int options_check_memory(uint64_t max_memory, uint64_t opener_memory, char *why, size_t why_len);

/* The command line, parsed. */
struct options {
	const char *target;    /* or NULL: --all, --control */
	struct mem_budget mem; /* --max-memory: every node's buffers */
	char name[128];
	bool foreground;
	bool all;
	bool control;
	bool check;		   /* --check: validate, say what would be served, exit */
	bool opener_mem_given;	   /* --opener-memory was given, not defaulted */
	const char *policy_file;   /* --policy FILE, or NULL: the kernel's rule */
	struct share_limits share; /* --max-files, --max-files-per-user */
	enum gate_mode cred_check; /* --cred-check */
	char gate_why[256];	   /* why the gate is not used, if it is not */
	struct node_config node;
};

/* The environment's word that --shared-queue is for a test: "1". */
#define OPTIONS_SHARED_QUEUE_ENV "CUSE_BSG_TEST_SHARED_QUEUE"

/*
 * argv into opt, every value checked and every default set (log_err() says
 * why not): 0 to go on, -1 for done (--help, --version: exit 0), or the exit
 * status (2, a usage error).
 */
int options_parse(int argc, char **argv, struct options *opt);

#endif /* CUSE_BSG_OPTIONS_H */
