/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The credential gate's programs (gate.h): the witness's or the LSM
 * gate's, opened, loaded and attached from the skeletons embedded in the
 * daemon, or taken from another daemon that holds the same ones (peers.h):
 * then nothing is loaded, and every daemon's nodes are in the one copy's
 * maps.  Let go of with progs_unload().  Not thread-safe: the gate's lock.
 */
#ifndef CUSE_BSG_GATEPROGS_H
#define CUSE_BSG_GATEPROGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers.h"

enum progs_kind {
	PROGS_WITNESS, /* witness.bpf.c: tracing programs at CUSE's entry points */
	PROGS_LSM,     /* gate.bpf.c: BPF LSM programs */
};

struct gate_bpf;
struct witness_bpf;

struct progs {
	/* in: what the daemon sets in them, and its pid namespace (MKDEV, inode) */
	const unsigned *ioctls;
	size_t n_ioctls;
	uint64_t pidns_dev, pidns_ino;
	/* out */
	bool loaded; /* ours or taken: fds, armed_majors and key are valid */
	enum progs_kind kind;
	struct gate_bpf *lsm;	 /* ours, loaded: the LSM gate's skeleton */
	struct witness_bpf *wit; /* ours, loaded: the witness's */
	/*
	 * The descriptors peers.h hands on: the nodes map, the witness's
	 * slots or the LSM gate's rings, the .bss, then the links.
	 */
	int fds[PEER_FDS];
	size_t n_fds;
	unsigned *armed_majors; /* the .bss's count of armed nodes a major, mapped */
	bool taken;		/* another daemon's: fds and the mapping are ours to close */
	void *bss_map;		/* taken: the .bss, mapped, bss_len bytes */
	size_t bss_len;
	uint64_t key; /* the name the programs go by among daemons */
	int conn;     /* peers_take()'s connection to the holder, or -1 */
};

/*
 * Take kind's programs from a daemon that holds them, else load and attach
 * ours, with p's ins (the ioctls they are to check: the ioctl table's): 0,
 * or -errno with the reason in why, in an administrator's words (nothing
 * left loaded).
 */
int progs_load(struct progs *p, enum progs_kind kind, char *why, size_t why_len);

/*
 * Detach and unload ours, or let go of another daemon's.  Again, or before
 * any load (conn -1): nothing.
 */
void progs_unload(struct progs *p);

#endif /* CUSE_BSG_GATEPROGS_H */
