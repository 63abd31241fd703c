/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One gate for every daemon of the machine (gate.h): the witness, or the
 * LSM gate.  Each daemon's own programs would run on every call their hooks
 * see, each for its own nodes: N daemons, N programs a call.  Instead the
 * first daemon's programs are handed on: their maps and links, as
 * descriptors (SCM_RIGHTS), to each later daemon of the same programs and
 * pid namespace, over an abstract socket named for both (key).  A holder
 * keeps the programs attached; they go with the last holder.
 *
 * Every holder runs a thread (peers_hold()): the one that has the name
 * answers, the others keep a connection to it and, once it is gone, try to
 * take the name, so that a later daemon finds a holder while any lives.
 * Only root is answered, and only root's answer is taken: a map's
 * descriptor can write verdicts.
 */
#ifndef CUSE_BSG_PEERS_H
#define CUSE_BSG_PEERS_H

#include <stddef.h>
#include <stdint.h>

/* The most descriptors a gate has: the witness's three maps and six links. */
#define PEER_FDS 9

struct peers;

/*
 * Take the n descriptors a holder of key hands out, into fds (close-on-exec):
 * 0, -ECONNREFUSED or -ENOENT (no holder), -EPROTO (not n of them), or
 * another -errno with the reason in why.  The connection stays open in
 * *conn for peers_hold().
 */
int peers_take(uint64_t key, size_t n, int fds[PEER_FDS], int *conn, char *why, size_t why_len);

/*
 * Hold n fds (not taken over: they stay the caller's until peers_stop())
 * for later daemons of key; conn: peers_take()'s connection, or -1 (taken
 * over).  After the process's last fork.  0 or -errno.
 */
int peers_hold(uint64_t key, size_t n, const int fds[PEER_FDS], int conn, struct peers **ret);

/* Stop answering and watching; the thread is joined.  NULL: nothing. */
void peers_stop(struct peers *p);

/* FNV-1a over len bytes of p, on from h (start: PEERS_KEY_START). */
#define PEERS_KEY_START 0xcbf29ce484222325ull
uint64_t peers_key(uint64_t h, const void *p, size_t len);

#endif /* CUSE_BSG_PEERS_H */
