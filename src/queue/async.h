/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The asynchronous interface of the node: write() of v3 or v4 headers,
 * read() of their completions, poll(), per opener.  Every call below is a
 * CUSE callback's body and answers its request, now or later: a read with
 * nothing done, or a blocking v4 write with no room, is parked and answered
 * from the thread that completes a command or frees a slot.
 */
#ifndef CUSE_BSG_ASYNC_H
#define CUSE_BSG_ASYNC_H

#include <stddef.h>

struct bsgdev;
struct fuse_pollhandle;
struct fuse_req; /* libfuse's fuse_req_t */
struct opener;

/*
 * Stop what the asynchronous interface runs for d (the resolver of forced
 * pack_ids, the signal watcher), before its pool and session go.  Reads
 * still waiting for theirs take any completion; calls whose signal is
 * still watched get EINTR.
 */
void async_bsgdev_fini(struct bsgdev *d);

void async_write(struct fuse_req *req, struct opener *o, const char *buf, size_t size, int flags);
void async_read(struct fuse_req *req, struct opener *o, size_t size, int flags);
void async_poll(struct fuse_req *req, struct opener *o, struct fuse_pollhandle *ph);

#endif /* CUSE_BSG_ASYNC_H */
