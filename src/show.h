/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The live view of a running daemon (cuse_bsg --show): a snapshot of its
 * nodes, their openers and its bounds, written for people or as JSON into
 * a bounded buffer.  Pure: the caller fills the structs; no system call
 * but the buffer's one allocation.  One thread at a time per show_out.
 */
#ifndef CUSE_BSG_SHOW_H
#define CUSE_BSG_SHOW_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SHOW_OPENERS_MAX  64	       /* openers listed a node; the rest counted */
#define SHOW_COUNTERS_MAX 16	       /* counters a node */
#define SHOW_OUT_MAX	  (256u << 10) /* a whole answer at most */

/* One open file of a node. */
struct show_opener {
	pid_t pid; /* the process that opened it; 0: unknown (another pid namespace) */
	uid_t uid;
	unsigned queued;    /* written commands done, waiting for read() */
	unsigned in_flight; /* written commands not done yet */
	unsigned calls;	    /* its calls running now: an SG_IO, a blocked read(), ... */
	uint64_t mem;	    /* bytes of data buffers it holds */
};

struct show_counter {
	const char *name; /* a static string */
	uint64_t value;
};

struct show_node {
	char name[128];	       /* under /dev */
	char target[PATH_MAX]; /* the target's path, or empty: a control node */
	bool have_stat;	       /* the fields below from a stat() of /dev/NAME */
	unsigned major, minor;
	mode_t mode; /* permissions only */
	uid_t uid;
	gid_t gid;
	const char *cred_check; /* gate_describe()'s: witness, kernel, or procfs (NULL too) */
	uint64_t gate_refused;	/* calls refused on sg's test, made by the kernel */
	uint64_t cred_unseen;	/* calls the witness left no verdict for: checked from /proc */
	bool gone;		/* its device went: it ends with its last opener */
	unsigned workers;	/* its worker pool's threads; 0: none */
	unsigned backlog;	/* work queued for them */
	unsigned copy_threads, copy_threads_max;
	unsigned fuse_threads_max;
	unsigned at_target; /* commands at the target now */
	unsigned openers;   /* alive: open, or with a command still running */
	unsigned ncounters;
	struct show_counter counters[SHOW_COUNTERS_MAX];
	unsigned nopeners; /* listed in opener[]; openers - nopeners were not */
	struct show_opener opener[SHOW_OPENERS_MAX];
};

/* The process: what every node shares, against its bounds (0: none). */
struct show_daemon {
	pid_t pid;
	const char *version;
	uint64_t uptime_s;
	uint64_t mem_used, mem_max, mem_per_file, mem_per_user;
	unsigned threads; /* the process's now */
	unsigned calls_busy, calls_parked, calls_per_file, calls_per_user;
	unsigned files, files_max, files_per_user;
};

/* An answer being written. */
struct show_out {
	char *buf;
	size_t len, cap;
	bool json;
	bool truncated; /* nodes left out for want of room */
	bool over;	/* the piece being written did not fit */
	unsigned nodes; /* written */
};

/* An empty answer of at most SHOW_OUT_MAX bytes.  0 or -ENOMEM. */
int show_out_init(struct show_out *o, bool json);
void show_out_fini(struct show_out *o);

/* The daemon first, then each node, then the end (JSON: one object). */
void show_begin(struct show_out *o, const struct show_daemon *dm);
void show_add_node(struct show_out *o, const struct show_node *n);
void show_end(struct show_out *o);

/*
 * May a process of uid, gid and supplementary groups[0..ngroups) open the
 * node, read or write, as the kernel's permission check of its mode, owner
 * and group says (uid 0: always)?
 */
bool show_may_open(const struct show_node *n, uid_t uid, gid_t gid, const gid_t *groups,
		   size_t ngroups);

/*
 * The SIGUSR1 line of n: its counters as NAME=VALUE, then at_target,
 * queued (its workers' backlog), openers, cred_check, gate_refused and
 * cred_unseen.
 */
void show_stats_line(const struct show_node *n, char *buf, size_t len);

/* Append a counter to n (past SHOW_COUNTERS_MAX: dropped). */
void show_counter_add(struct show_node *n, const char *name, uint64_t value);

#endif /* CUSE_BSG_SHOW_H */
