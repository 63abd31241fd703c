/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The live view's socket: each daemon owns a Unix stream socket under
 * LIVE_DIR (its unit's RuntimeDirectory under it, or NAME.sock there, '/'
 * of NAME written '!'), answered by one thread of its own.  A client
 * writes one line, "text" or "json", a blank and a node's name if it asks
 * for one; the daemon answers "ok", "denied" or "none" on a line, then
 * the view (show.h), and closes.  Anyone may connect: each node is shown
 * only to a peer (SO_PEERCRED, SO_PEERGROUPS) who may open it now.  A
 * client that stalls holds the thread for a second or two at most, never
 * a command.  live_client() is the other end: cuse_bsg --show.
 */
#ifndef CUSE_BSG_LIVE_H
#define CUSE_BSG_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "show.h"

#ifndef LIVE_DIR
#define LIVE_DIR "/run/cuse-bsg"
#endif

struct live;

/* Who asks. */
struct live_peer {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
};

/*
 * Write the view for peer into o (show_begin(), show_add_node() for each
 * node it may open, of the one named, or of every one if name is NULL,
 * show_end()).  Returns how many nodes matched name, shown or not.  On the
 * live thread; the owner's nodes must stay while it runs.
 */
typedef unsigned live_collect_fn(void *arg, const struct live_peer *peer, const char *name,
				 struct show_out *o);

/*
 * Make the socket for a daemon serving name ("all": --all's) and start its
 * thread.  0, or -errno (logged): the daemon serves on without it.
 */
int live_start(const char *name, live_collect_fn *collect, void *arg, struct live **ret);

/* Stop the thread, remove the socket.  NULL is fine. */
void live_stop(struct live *l);

/*
 * cuse_bsg --show [--json] [NODE|SOCKET]: every running daemon's view (or
 * NODE's, or the daemon's at SOCKET) on stdout.  The exit status.
 */
int live_client(int argc, char **argv);

#endif /* CUSE_BSG_LIVE_H */
