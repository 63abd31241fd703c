/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The live view's socket: each daemon owns a Unix stream socket under
 * LIVE_DIR (its unit's RuntimeDirectory under it, or NAME.sock there, '/'
 * of NAME written '!'), answered by one thread of its own.  The daemon
 * makes LIVE_DIR or checks it (a directory, not a link, root's, writable
 * by no one else), and puts its socket there with its final mode.  A
 * client writes one line, "text", "json" or "rows", a blank and a node's
 * name if it asks for one; the daemon answers "ok", "denied" or "none" on
 * a line, then the view (show.h), and closes.  Anyone may connect: each
 * node is shown only to a peer (SO_PEERCRED, SO_PEERGROUPS) whom the
 * kernel would let open it now, each opener only to one who may see its
 * process in /proc.  A client that stalls or trickles holds one of its
 * user's few connections for a second or two, never the thread, another
 * user's view or a command.  view.h is the other end: cuse_bsg --show.
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

#define LIVE_REQUEST_MAX 256  /* a request line at most */
#define LIVE_REQUEST_MS	 1000 /* a whole request, from the connection's accept */
#define LIVE_ANSWER_MS	 2000 /* a whole answer, once made */
#define LIVE_CONNS	 64   /* connections at once */
#define LIVE_PER_USER	 4    /* of one user but root */
#define LIVE_ROOT_SPARE	 4    /* of LIVE_CONNS, root's alone */

struct live;

/* Who asks. */
struct live_peer {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
};

/*
 * Write the view for peer into o: show_begin(), then the nodes the peer
 * may see (live_judge()) of the one named, or of every one if name is
 * NULL, with show_add_node(), then show_end().  Returns how many nodes
 * matched name, shown or not.  On the live thread; the owner's nodes must
 * stay while it runs.
 */
typedef unsigned live_collect_fn(void *arg, const struct live_peer *peer, const char *name,
				 struct show_out *o);

/*
 * Which of nodes[0..n) peer may see, into visible[]: those the kernel lets
 * it open for reading or writing (its mode, owner, group and ACL, asked
 * with faccessat() on a thread of the peer's uid, gid and groups and no
 * capability); and of those, the openers whose process it may see in
 * /proc (hidepid), each with its name (comm).  The others are taken out of
 * the lists.  Root sees all.  0, or -errno: nothing is visible.
 */
int live_judge(const struct live_peer *peer, struct show_node *nodes, unsigned n, bool *visible);

/* A request line: "text", "json" or "rows", then " NAME" or not.  0 or -EINVAL. */
int live_parse_request(char *req, enum show_form *form, const char **name);

/*
 * Make the socket for a daemon serving name ("all": --all's) and start its
 * thread.  0, or -errno (logged): the daemon serves on without it.
 */
int live_start(const char *name, live_collect_fn *collect, void *arg, struct live **ret);

/* Stop the thread, remove the socket.  NULL is fine. */
void live_stop(struct live *l);

#endif /* CUSE_BSG_LIVE_H */
