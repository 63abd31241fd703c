// SPDX-License-Identifier: GPL-2.0-only
/*
 * A node's open files (files.h): each counted in the shares (share.h) and
 * given its opener, or, on a control node, a file to bind.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bsgdev.h"
#include "control.h"
#include "files.h"
#include "log.h"
#include "opener.h"
#include "queue/cmdq.h"
#include "share.h"

/* The last file of o is gone (with --shared-queue, maybe not yet). */
static void release_shared(struct files *fs, struct opener *o)
{
	struct share_file *sf = NULL;
	bool last = true;

	if (fs->shared_queue) {
		pthread_mutex_lock(&fs->shared_lock);
		if (fs->shared == o) {
			last = --fs->shared_files == 0;
			if (last) {
				fs->shared = NULL;
				sf = fs->shared_sf;
				fs->shared_sf = NULL;
			}
		}
		pthread_mutex_unlock(&fs->shared_lock);
	}
	if (last)
		cmdq_release(o);
	if (sf)
		share_file_close(sf); /* after the release: nothing parks on it now */
}

/* A new opener for the file being opened: 0, or the errno to answer. */
static int file_opener_new(struct files *fs, pid_t pid, int flags, struct opener **ret)
{
	return opener_new(fs->d, flags, fs->shared_queue, pid, NULL, ret);
}

/*
 * --shared-queue: pre-4.19 bsg kept one queue per device, so that any
 * opener could read any other's completions.  Reproduced on request, to
 * show that flaw: every file opened shares one opener, made by the first
 * open under the lock, so that two first opens at once still share it.
 */
static int open_shared(struct files *fs, pid_t pid, uid_t uid, int flags, struct opener **ret)
{
	int err = 0;

	pthread_mutex_lock(&fs->shared_lock);
	if (!fs->shared) {
		err = file_opener_new(fs, pid, flags, &fs->shared);
		/* the queue's own file in the shares, its first opener's: copies
		 * into any of its readers hold that file's share of threads */
		if (!err && share_file_open(fs->share, uid, &fs->shared_sf)) {
			cmdq_release(fs->shared);
			fs->shared = NULL;
			err = ENOMEM;
		} else if (!err) {
			cmdq_set_share(fs->shared, fs->share, fs->shared_sf, uid);
		}
	}
	if (!err) {
		fs->shared_files++;
		*ret = fs->shared;
	}
	pthread_mutex_unlock(&fs->shared_lock);
	return err;
}

static int open_file(struct files *fs, pid_t pid, uid_t uid, int flags, void **ret)
{
	if (fs->ctl)
		return control_open(fs->ctl, pid, flags, (struct control_file **)ret);
	if (fs->shared_queue)
		return open_shared(fs, pid, uid, flags, (struct opener **)ret);
	return file_opener_new(fs, pid, flags, (struct opener **)ret);
}

void files_release(struct files *fs, struct node_file *nf)
{
	if (fs->ctl)
		control_release(fs->ctl, nf->file);
	else
		release_shared(fs, nf->file);
	share_file_close(nf->sf);
	free(nf);
}

/*
 * uid's new file, counted in its share: 0 or the errno to answer.  sg's
 * only limit on open files is memory (sg_add_sfp()): ENOMEM.
 */
static int count_file(struct files *fs, uid_t uid, struct node_file *nf)
{
	int err = share_file_open(fs->share, uid, &nf->sf);

	if (!err) {
		atomic_store_explicit(&fs->warned, false, memory_order_relaxed);
		return 0;
	}
	if (err != -ENOMEM && !atomic_exchange(&fs->warned, true))
		log_node(LOG_WARNING, fs->name, "uid %u: open refused: %s: ENOMEM", (unsigned)uid,
			 err == -EMFILE ? "its files open are at --max-files-per-user"
					: "the daemon's files open are at --max-files");
	return ENOMEM;
}

int files_open(struct files *fs, pid_t pid, uid_t uid, int flags, struct node_file **ret)
{
	struct node_file *nf = calloc(1, sizeof(*nf));
	int err = nf ? count_file(fs, uid, nf) : ENOMEM;

	if (!err) {
		err = open_file(fs, pid, uid, flags, &nf->file);
		if (err)
			share_file_close(nf->sf);
		else if (fs->ctl)
			control_set_share(nf->file, fs->share, nf->sf, uid, (uintptr_t)nf);
		/* a shared opener outlives its first file: it has a share of its own */
		else if (!fs->shared_queue)
			cmdq_set_share(nf->file, fs->share, nf->sf, uid);
		if (!err && !fs->ctl && !fs->shared_queue) /* the witness names it so (gate.h) */
			((struct opener *)nf->file)->fh = (uintptr_t)nf;
	}
	if (err) {
		free(nf);
		return err;
	}
	*ret = nf;
	return 0;
}

void files_init(struct files *fs, struct bsgdev *d, const char *name, struct share *share,
		bool shared_queue)
{
	fs->d = d;
	fs->name = name;
	fs->share = share;
	fs->shared_queue = shared_queue;
	pthread_mutex_init(&fs->shared_lock, NULL);
}

void files_fini(struct files *fs)
{
	pthread_mutex_destroy(&fs->shared_lock);
}
