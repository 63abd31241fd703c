/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A bound on copies to and from a client's memory.  process_vm_readv/writev
 * fault the client's pages in, and a page of a mapping the client controls
 * (a FUSE file it mounted, a userfaultfd range) may never come: the copying
 * thread then waits in the kernel, and nothing can make it stop.  So each
 * copy is guarded: past the bound, the watchdog's thread answers the
 * client's request with EFAULT and counts the copy stuck; the copying
 * thread, once the kernel lets it go, sees that and answers nothing.  Its
 * open file's further copies get EFAULT at once while one is stuck, so one
 * open file holds at most one thread.
 *
 * A guard lives on the copying thread's stack from guard_begin() to
 * guard_end(), and is that thread's guard meanwhile: each system call into
 * the client (uaccess.c) passes guard_copy_enter() first and
 * guard_copy_leave() after.  Once the watchdog has answered, no new one
 * starts: the call is over for the client, which may have run a new
 * program since, and only the one stalled then may still end.  The request
 * must be one nobody else may answer meanwhile (no interrupt callback that
 * answers it is registered).
 */
#ifndef CUSE_BSG_GUARD_H
#define CUSE_BSG_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "list.h"

struct fuse_req; /* libfuse's fuse_req_t */

struct guard {
	struct list_head node; /* protected by the watchdog's lock */
	struct fuse_req *req;
	int tid;
	atomic_uint *stuck; /* the open file's count of stuck copies */
	struct timespec start;
	atomic_int state; /* enum guard_state */
};

struct watchdog;

/* Start the watchdog's thread; name is for its log lines.  0 or -errno. */
int watchdog_new(unsigned timeout_ms, const char *name, struct watchdog **ret);

/* Stop its thread.  Guards still registered are copies that have not
 * returned: their count, and w stays allocated for them (leaked) if any. */
unsigned watchdog_free(struct watchdog *w);

/*
 * Copies now registered (running, or past the bound and not returned),
 * once every EFAULT the watchdog is sending has gone: 0 means the session
 * is no longer needed for them.
 */
unsigned watchdog_busy(struct watchdog *w);

/* Of those, the ones past the bound: stalled in a client's memory. */
unsigned watchdog_stalled(struct watchdog *w);

/*
 * Before copying for req: 0, or -EFAULT (no copy: answer it) when the open
 * file counted by stuck already has a copy stuck.  A NULL w guards nothing.
 */
int guard_begin(struct watchdog *w, struct guard *g, struct fuse_req *req, int tid,
		atomic_uint *stuck);

/* After it: true if the caller still answers req, false if the watchdog did. */
bool guard_end(struct watchdog *w, struct guard *g);

/*
 * Around each system call into a client, on the thread of a guard begun
 * (none: nothing to check).  Enter: 0, or -EFAULT if the watchdog has
 * answered (make no call).  Leave: false if it answered meanwhile (stop).
 */
int guard_copy_enter(void);
bool guard_copy_leave(void);

#endif /* CUSE_BSG_GUARD_H */
