/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The live view of a running daemon (cuse_bsg --show): a snapshot of its
 * nodes, their openers and its bounds, written for people, as JSON or as
 * rows (one a node and an opener, tab-separated, for the table and the
 * watch mode) into a bounded buffer; and the rows read back, and turned
 * into a table of counts or of rates.  Pure: the caller fills the structs;
 * no system call but the buffer's one allocation.  One thread at a time
 * per show_out.
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
#define SHOW_LAT_WINDOW_S 10	       /* the latency window: the last 10 to 20 s (lat.h) */

/* Commands that reached the target, and their data. */
struct show_io {
	uint64_t cmds, bytes_in, bytes_out, errors, refused;
};

/* A recent window's latency, microseconds (lat.h). */
struct show_lat {
	uint64_t count;
	uint32_t p50, p99, max;
};

/* One open file of a node. */
struct show_opener {
	pid_t pid; /* the process that opened it; 0: unknown (another pid namespace) */
	uid_t uid;
	gid_t gid;	/* (gid_t)-1: unknown */
	char comm[16];	/* its process's name now, or empty */
	char user[33];	/* uid's name, or empty */
	char group[33]; /* gid's name, or empty */
	int64_t opened; /* when, in seconds since the epoch */
	struct show_io io;
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
	/* the device as read at start: empty strings and size 0 when unknown */
	char vendor[9], product[17], revision[5], serial[64];
	uint64_t size;	/* bytes */
	bool have_stat; /* the fields below from a stat() of /dev/NAME */
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
	struct show_io io;
	struct show_lat lat;	 /* from the call to the target's answer */
	struct show_lat dev_lat; /* at the device alone */
	unsigned openers;	 /* alive: open, or with a command still running */
	unsigned ncounters;
	struct show_counter counters[SHOW_COUNTERS_MAX];
	unsigned nopeners; /* listed in opener[]; openers - nopeners were not */
	struct show_opener opener[SHOW_OPENERS_MAX];
};

/* The process: what every node shares, against its bounds (0: none). */
struct show_daemon {
	pid_t pid;
	const char *version;
	int64_t now_s; /* the answer's time: since the epoch, and its nanoseconds */
	long now_ns;
	uint64_t uptime_s;
	uint64_t mem_used, mem_max, mem_per_file, mem_per_user;
	unsigned threads; /* the process's now */
	unsigned calls_busy, calls_parked, calls_per_file, calls_per_user;
	unsigned files, files_max, files_per_user;
};

enum show_form {
	SHOW_TEXT,
	SHOW_JSON,
	SHOW_ROWS,
};

/* An answer being written. */
struct show_out {
	char *buf;
	size_t len, cap;
	enum show_form form;
	bool truncated; /* nodes left out for want of room */
	bool over;	/* the piece being written did not fit */
	unsigned nodes; /* written */
};

/* An empty answer of at most SHOW_OUT_MAX bytes.  0 or -ENOMEM. */
int show_out_init(struct show_out *o, enum show_form form);
void show_out_fini(struct show_out *o);

/*
 * The daemon first, then each node, then the end (JSON: one object; rows:
 * "T", the time, then "N" a node and "O" each of its openers).
 */
void show_begin(struct show_out *o, const struct show_daemon *dm);
void show_add_node(struct show_out *o, const struct show_node *n);
void show_end(struct show_out *o);

/*
 * The SIGUSR1 line of n: its counters as NAME=VALUE, then at_target,
 * queued (its workers' backlog), openers, cred_check, gate_refused and
 * cred_unseen.
 */
void show_stats_line(const struct show_node *n, char *buf, size_t len);

/* Append a counter to n (past SHOW_COUNTERS_MAX: dropped). */
void show_counter_add(struct show_node *n, const char *name, uint64_t value);

/* A row read back (show_row_parse()): a node's or an opener's. */
struct show_row {
	char kind; /* 'N', 'O' */
	char node[128];
	pid_t pid;	/* an opener's */
	int64_t opened; /* an opener's */
	char label[64]; /* a node's device (vendor product), an opener's process and user */
	unsigned openers, at_target;
	struct show_io io;
	struct show_lat lat, dev_lat;
};

/*
 * Read one line of rows (no newline) into *ret: 1 a row, 0 the time line
 * (into *now_ns), -EINVAL anything else.
 */
int show_row_parse(const char *line, struct show_row *ret, int64_t *now_ns);

/* Is b the same node, or the same opener, as a (of two answers)? */
bool show_row_same(const struct show_row *a, const struct show_row *b);

/* The table's heading, for counts or rates. */
void show_table_head(bool rates, char *buf, size_t len);

/*
 * The table's line of r: its counts since it began or, given prev (the
 * same row interval_ns earlier), its rates over that interval.
 */
void show_table_line(const struct show_row *r, const struct show_row *prev, int64_t interval_ns,
		     char *buf, size_t len);

#endif /* CUSE_BSG_SHOW_H */
