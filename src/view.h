/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cuse_bsg --show: the live view's client (the daemon's side is live.h).
 * It asks every running daemon (or the one serving a node, or the one at
 * a socket) once, or every N seconds with --watch, and prints the answers:
 * each daemon's blocks, a JSON array of them, or one table of every node
 * and opener, with their counts or their rates over the interval.
 */
#ifndef CUSE_BSG_VIEW_H
#define CUSE_BSG_VIEW_H

/*
 * cuse_bsg --show [--json|--table] [--watch N [--count K]] [NODE|SOCKET]
 * (argv[0] is "--show").  The exit status.
 */
int view_main(int argc, char **argv);

#endif /* CUSE_BSG_VIEW_H */
