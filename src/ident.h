/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A caller's identity: the security context of a thread blocked in its call,
 * read from /proc/TID (creds.h parses the texts), which an opener keeps
 * and its read() and write() callers must match (README, security model);
 * the kernel's capable() for the caller; its process.  Any thread; a
 * struct ident_cache serves one at a time (its user serialises it).
 */
#ifndef CUSE_BSG_IDENT_H
#define CUSE_BSG_IDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "creds.h"

/* One thread's /proc/TID kept open between checks, and what was read through it. */
struct ident_cache {
	pid_t tid;
	pid_t tgid;		     /* tid's process, once read; or 0 */
	int dir, status, stat, attr; /* or -1 */
	bool alive_seen;	     /* dir's thread was in the ident's process, alive */
	/*
	 * dir's pagemap, opened before the reads that found its program the
	 * ident's (mm_matched): it holds the address space the thread had
	 * then, and reads nothing once an execve (or the exit) has replaced
	 * it; or -1.
	 */
	int mm;
	bool mm_matched;
};

void ident_cache_init(struct ident_cache *cache);
void ident_cache_fini(struct ident_cache *cache);

#define IDENT_LSM_MAX 256

/*
 * A security context: every part of a thread's credentials that procfs
 * shows, its user namespace, the program it runs and the process it
 * belongs to.
 */
struct ident {
	struct creds c;
	char *groups;		   /* c.groups_len bytes, the Groups ids as text; NULL: unknown */
	uint64_t userns;	   /* inode of its user namespace */
	uint64_t exe_dev, exe_ino; /* its executable */
	uint64_t layout[CREDS_LAYOUT_N];
	uint32_t lsm_len;
	char lsm[IDENT_LSM_MAX]; /* its LSM label (attr/current), or empty */
	int pidfd;		 /* its process, or -1 */
};

/*
 * The security context of thread tid, blocked in its call, into *ret
 * (ident_fini() frees it).  0 or -errno: any part unreadable fails the
 * whole.
 */
int ident_read(struct ident_cache *cache, pid_t tid, struct ident *ret);
void ident_fini(struct ident *id);

/*
 * Is thread tid, blocked in its call, in the security context id?  0, or
 * -EPERM with what differs (or why it cannot be told) in *why.  Unsure is
 * different; the daemon's own want of memory or descriptors, which says
 * nothing of the caller, is that errno (-ENOMEM, -EMFILE, -ENFILE), still
 * a refusal.  any_process: the credentials only, of any process and
 * program (--shared-queue's files share one opener).
 */
int ident_match(struct ident_cache *cache, pid_t tid, const struct ident *id, bool any_process,
		const char **why);

/*
 * The kernel's capable(cap) for thread tid, blocked in its call: cap in its
 * effective set, and its user namespace the initial one.  Unreadable: false.
 */
bool ident_capable(pid_t tid, unsigned cap);

/*
 * The process (tgid) of thread tid, blocked in its call: read once from
 * /proc/TID/status and kept in cache while that thread lives.  0 or -errno.
 */
int ident_tgid(struct ident_cache *cache, pid_t tid, pid_t *ret);

#endif /* CUSE_BSG_IDENT_H */
