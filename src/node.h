/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One served node: a target, its struct bsgdev (pool or queue engine,
 * counters, target_gone) and its own CUSE session on its own /dev/cuse
 * descriptor, run by libfuse's multi-threaded loop on a thread of the node.
 * Several nodes live side by side in one process; none touches another.
 *
 * Lifetime: node_new() (no thread yet: the caller may fork after it),
 * node_start(), then node_stop() or node_gone() from any thread; the node's
 * thread calls the ended function once its session is over, and the owner
 * then calls node_free() from another thread.
 */
#ifndef CUSE_BSG_NODE_H
#define CUSE_BSG_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gate;
struct mem_budget;
struct policy;
struct share;

enum node_copy { NODE_COPY_AUTO, NODE_COPY_DIRECT, NODE_COPY_RETRY };
enum node_engine { NODE_ENGINE_AUTO, NODE_ENGINE_QUEUE, NODE_ENGINE_POOL };

/*
 * Of a node's 128 libfuse workers, how many one open file's calls may hold
 * at once (sg's 16 commands a file), and one user's (a quarter): past
 * these, calls wait parked, without a thread (share.h).
 */
#define NODE_CALLS_PER_FILE 16
#define NODE_CALLS_PER_USER 32

/* What every node of a daemon shares; read-only while nodes exist. */
struct node_config {
	mode_t mode; /* (mode_t)-1, (uid_t)-1, (gid_t)-1: leave as udev made it */
	uid_t uid;
	gid_t gid;
	unsigned threads;
	enum node_copy copy;
	enum node_engine engine;
	int sg_minor; /* register as char 21:sg_minor, or -1 */
	bool shared_queue;
	struct policy *policy;	  /* who may send which command (policy.h) */
	struct mem_budget *mem;	  /* data buffers of every node, or NULL */
	uint64_t opener_mem_max;  /* data buffers of one open file; 0: no bound */
	unsigned copy_timeout_ms; /* a copy of a client's memory at most (guard.h) */
	unsigned queue_depth;	  /* v3 commands written, not read, per file; 0: 16 */
	struct share *share;	  /* open files and threads per user and per file (share.h) */
	struct gate *gate;	  /* the credential gate (gate.h), or NULL: the /proc check */
	bool gate_required;	  /* --cred-check=kernel: no node serves without it live */
};

struct node;

/* Called on the node's thread once its session has ended. */
typedef void node_ended_fn(struct node *n, void *arg);

/*
 * Open and check target, choose the data path, check that /dev/name is
 * free.  target NULL: a control node (control.h).  On failure, -errno and
 * a reason naming the device in why.
 */
int node_new(const struct node_config *cfg, const char *target, const char *name, struct node **ret,
	     char *why, size_t why_len);

/*
 * Start the workers and the CUSE session.  Returns once /dev/NAME exists
 * with its owner and mode (0), and ended will be called on the node's
 * thread once the session is over; or once registering it failed
 * (-errno, logged), the session over, and ended will not be called.
 */
int node_start(struct node *n, node_ended_fn *ended, void *arg);

/* End the session, open files or not.  Any thread; more than once is fine. */
void node_stop(struct node *n);

/*
 * The device went away: new calls get ENODEV, poll says POLLHUP, commands
 * not yet at the device get ENODEV; the session ends once no opener is
 * left (at once if none).
 */
void node_gone(struct node *n);

/* Log the request counters, one line naming the node. */
void node_log_stats(struct node *n);

/* n's state now, for the live view (show.h).  Any thread, while n is not freed. */
struct show_node;
void node_show(struct node *n, struct show_node *s);

const char *node_name(const struct node *n);
const char *node_target(const struct node *n);

/* Join the node's thread, free everything.  0, or -errno if the session failed.  NULL is fine. */
int node_free(struct node *n);

#endif /* CUSE_BSG_NODE_H */
