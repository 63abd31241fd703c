/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A node's open files (files.c): each counted in its user's and the
 * daemon's bounds on open files (share.h: past one, ENOMEM, as sg's only
 * limit on open files is memory), then given its opener, or, on a control
 * node, a file that BSG_IOC_ADD binds.  With --shared-queue every file
 * shares one opener, as bsg's one queue per device before Linux 4.19.
 */
#ifndef CUSE_BSG_FILES_H
#define CUSE_BSG_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

struct bsgdev;
struct control;
struct opener;
struct share;
struct share_file;

/* An open file of the node, as fi->fh says. */
struct node_file {
	void *file;	       /* its struct opener, or a control node's struct control_file */
	struct share_file *sf; /* its count of open files and of calls holding a thread */
};

struct files {
	struct bsgdev *d;
	const char *name;    /* the node's, for the log */
	struct control *ctl; /* --control: files bind to devices; or NULL */
	struct share *share;
	bool shared_queue; /* --shared-queue: every open file is this one opener */
	pthread_mutex_t shared_lock;
	struct opener *shared;	      /* protected by shared_lock */
	struct share_file *shared_sf; /* protected by shared_lock: its own, while it lives */
	unsigned shared_files;	      /* protected by shared_lock */
	atomic_bool warned;	      /* an open past the bounds on open files was logged */
};

void files_init(struct files *fs, struct bsgdev *d, const char *name, struct share *share,
		bool shared_queue);
void files_fini(struct files *fs);

/*
 * A file opened by pid of uid with flags (open(2)'s): counted and made,
 * into *ret: 0, or the positive errno to answer.
 */
int files_open(struct files *fs, pid_t pid, uid_t uid, int flags, struct node_file **ret);

/* The file's last reference is gone: no call of it can be in flight. */
void files_release(struct files *fs, struct node_file *nf);

#endif /* CUSE_BSG_FILES_H */
