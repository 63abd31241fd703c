// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate's programs (gateprogs.h): the bpftool skeletons
 * (build/witness.skel.h from witness.bpf.c, build/gate.skel.h from
 * gate.bpf.c) loaded and attached, or another daemon's taken (peers.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.skel.h"
#include "gateprogs.h"
#include "log.h"
#include "peers.h"
#include "witness.skel.h"

/*
 * libbpf's warnings and notes go to debug logging, a line each, so that
 * --debug shows a failed load's verifier log; its debug messages, many
 * lines to every load, are dropped.  The caller logs the reason once.
 */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text = NULL, *line, *save = NULL;

	if (level == LIBBPF_DEBUG || log_level < LOG_DEBUG || vasprintf(&text, fmt, ap) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_debug("%s", line);
	free(text);
	return 0;
}

/* Why a load can fail, in the words an administrator acts on. */
static const char *load_hint(enum progs_kind kind, int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "no privilege to load BPF (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN), "
		       "or lockdown forbids it";
	case -ENOENT:
	case -ESRCH:
		return kind == PROGS_WITNESS
			       ? "the kernel has no BTF for the cuse and fuse modules "
				 "(CONFIG_DEBUG_INFO_BTF_MODULES), or cuse is not loaded"
			       : "the kernel has no BTF (CONFIG_DEBUG_INFO_BTF) or no such "
				 "LSM hook";
	case -EINVAL:
	case -EOPNOTSUPP:
	case -524: /* the kernel's own ENOTSUPP, which the bpf() call can return */
		return kind == PROGS_WITNESS ? "the kernel has no BPF trampolines for module "
					       "functions (fentry)"
					     : "the kernel has no BPF LSM (CONFIG_BPF_LSM)";
	default:
		return "the BPF program cannot be loaded";
	}
}

static int load_failed(enum progs_kind kind, const char *step, int err, char *why, size_t why_len)
{
	err = err ? err : -EINVAL;
	snprintf(why, why_len, "cannot %s the %s: %s: %s", step,
		 kind == PROGS_WITNESS ? "witness (fentry on CUSE)" : "BPF LSM program",
		 strerror(-err), load_hint(kind, err));
	return err;
}

/*
 * The descriptors a gate hands on (peers.h): its maps, the nodes map
 * first, then its links: the witness's six, the LSM gate's two.
 */
#define GATE_MAPS   3
#define WITNESS_FDS (GATE_MAPS + 6)
#define LSM_FDS	    (GATE_MAPS + 2)
_Static_assert(WITNESS_FDS <= PEER_FDS && LSM_FDS <= PEER_FDS, "peers.h hands on a gate");

/* Our programs' descriptors, in peers.h's order: maps, then links. */
static void own_fds(struct progs *p, struct bpf_map *const maps[GATE_MAPS],
		    struct bpf_link *const *links, size_t n_links)
{
	p->n_fds = GATE_MAPS + n_links;
	for (int i = 0; i < GATE_MAPS; i++)
		p->fds[i] = bpf_map__fd(maps[i]);
	for (size_t i = 0; i < n_links; i++)
		p->fds[GATE_MAPS + i] = bpf_link__fd(links[i]);
}

/*
 * The name a gate goes by among daemons: its program (the object file),
 * what the daemon sets in it (the ioctls), and the pid namespace.
 */
static uint64_t gate_key(const void *elf, size_t len, const __u32 *ioctls, size_t n_ioctls,
			 uint64_t ns_dev, uint64_t ns_ino)
{
	uint64_t h = peers_key(PEERS_KEY_START, elf, len);

	h = peers_key(h, ioctls, n_ioctls * sizeof(__u32));
	h = peers_key(h, &ns_dev, sizeof(ns_dev));
	return peers_key(h, &ns_ino, sizeof(ns_ino));
}

/* Another daemon's maps, of the sizes ours would have: true if so. */
static bool maps_fit(struct bpf_map *const maps[GATE_MAPS], const int fds[PEER_FDS])
{
	for (int i = 0; i < GATE_MAPS; i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fds[i], &info, &len) ||
		    info.type != bpf_map__type(maps[i]) ||
		    info.value_size != bpf_map__value_size(maps[i]) ||
		    info.max_entries != bpf_map__max_entries(maps[i]))
			return false;
	}
	return true;
}

static const char *kind_name(enum progs_kind kind)
{
	return kind == PROGS_WITNESS ? "witness" : "BPF LSM gate";
}

/*
 * The gate of kind another daemon of this machine holds, if any: its
 * programs run once a call for every daemon's nodes.  maps: ours, opened
 * and not loaded, that its must match; n: its descriptors; armed_off: where
 * its count of armed nodes a major sits in the .bss (len bytes).  0: taken;
 * else ours is loaded.
 */
static int take_gate(struct progs *p, enum progs_kind kind, struct bpf_map *const maps[GATE_MAPS],
		     size_t n, size_t len, size_t armed_off)
{
	char why[200] = "";
	int fds[PEER_FDS], err;
	char *bss;

	err = peers_take(p->key, n, fds, &p->conn, why, sizeof(why));
	if (err) {
		if (err != -ECONNREFUSED && err != -ENOENT)
			log_warn("the %s is not shared: %s; this daemon loads its own",
				 kind_name(kind), why);
		return err;
	}
	bss = maps_fit(maps, fds) ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0)
				  : MAP_FAILED;
	if (bss == MAP_FAILED) {
		log_warn("the %s is not shared: its holder's maps are not ours; this daemon loads "
			 "its own",
			 kind_name(kind));
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		close(p->conn);
		p->conn = -1;
		return -EPROTO;
	}
	memcpy(p->fds, fds, sizeof(fds));
	p->n_fds = n;
	p->taken = true;
	p->bss_map = bss;
	p->bss_len = len;
	p->armed_majors = (__u32 *)(void *)(bss + armed_off);
	return 0;
}

static int take_witness(struct progs *p)
{
	struct witness_bpf *w = p->wit;
	struct bpf_map *const maps[GATE_MAPS] = { w->maps.nodes, w->maps.slots, w->maps.bss };

	return take_gate(p, PROGS_WITNESS, maps, WITNESS_FDS, sizeof(struct witness_bpf__bss),
			 offsetof(struct witness_bpf__bss, armed_majors));
}

static int take_lsm(struct progs *p)
{
	struct gate_bpf *l = p->lsm;
	struct bpf_map *const maps[GATE_MAPS] = { l->maps.nodes, l->maps.rings, l->maps.bss };

	return take_gate(p, PROGS_LSM, maps, LSM_FDS, sizeof(struct gate_bpf__bss),
			 offsetof(struct gate_bpf__bss, armed_majors));
}

/* Ours, loaded: its descriptors and its .bss's count. */
static void own_witness(struct progs *p)
{
	struct witness_bpf *w = p->wit;
	struct bpf_map *const maps[GATE_MAPS] = { w->maps.nodes, w->maps.slots, w->maps.bss };
	struct bpf_link *const links[WITNESS_FDS - GATE_MAPS] = {
		w->links.witness_read,	     w->links.witness_read_done, w->links.witness_write,
		w->links.witness_write_done, w->links.witness_ioctl,	 w->links.witness_ioctl_done
	};

	own_fds(p, maps, links, WITNESS_FDS - GATE_MAPS);
	p->armed_majors = w->bss->armed_majors;
}

static void own_lsm(struct progs *p)
{
	struct gate_bpf *l = p->lsm;
	struct bpf_map *const maps[GATE_MAPS] = { l->maps.nodes, l->maps.rings, l->maps.bss };
	struct bpf_link *const links[LSM_FDS - GATE_MAPS] = { l->links.gate_rw,
							      l->links.gate_ioctl };

	own_fds(p, maps, links, LSM_FDS - GATE_MAPS);
	p->armed_majors = l->bss->armed_majors;
}

/* Open ours, set what the daemon sets in it, and name it (its key): 0 or -errno. */
static int open_witness(struct progs *p)
{
	struct witness_bpf *w = witness_bpf__open();
	const void *elf;
	size_t len;

	if (!w)
		return -errno;
	p->wit = w;
	for (size_t i = 0; i < p->n_ioctls; i++)
		((__u32 *)w->rodata->owner_ioctls)[i] = p->ioctls[i];
	w->rodata->pidns_dev = p->pidns_dev;
	w->rodata->pidns_ino = p->pidns_ino;
	elf = witness_bpf__elf_bytes(&len);
	p->key = gate_key(elf, len, (const __u32 *)w->rodata->owner_ioctls, p->n_ioctls,
			  p->pidns_dev, p->pidns_ino);
	return 0;
}

static int open_lsm(struct progs *p)
{
	struct gate_bpf *l = gate_bpf__open();
	const void *elf;
	size_t len;

	if (!l)
		return -errno;
	p->lsm = l;
	for (size_t i = 0; i < p->n_ioctls; i++)
		((__u32 *)l->rodata->gated_ioctls)[i] = p->ioctls[i];
	elf = gate_bpf__elf_bytes(&len);
	p->key = gate_key(elf, len, (const __u32 *)l->rodata->gated_ioctls, p->n_ioctls,
			  p->pidns_dev, p->pidns_ino);
	return 0;
}

static int take(struct progs *p)
{
	return p->kind == PROGS_LSM ? take_lsm(p) : take_witness(p);
}

/* Our skeleton, opened or loaded, gone (a taken copy is not ours). */
static void destroy(struct progs *p)
{
	gate_bpf__destroy(p->lsm);
	p->lsm = NULL;
	witness_bpf__destroy(p->wit);
	p->wit = NULL;
}

/*
 * Ours opened: a holder's copy if there is one, else ours loaded and
 * attached; a holder that came while ours loaded is taken, and ours goes.
 * 0, or -errno at *step.
 */
static int take_or_load(struct progs *p, const char **step)
{
	bool lsm = p->kind == PROGS_LSM;
	int err;

	if (!take(p)) {
		destroy(p); /* nothing of it loaded */
		return 0;
	}
	*step = "load";
	err = lsm ? gate_bpf__load(p->lsm) : witness_bpf__load(p->wit);
	if (err)
		return err;
	*step = "attach";
	err = lsm ? gate_bpf__attach(p->lsm) : witness_bpf__attach(p->wit);
	if (err)
		return err;
	if (!take(p))
		destroy(p);
	else if (lsm)
		own_lsm(p);
	else
		own_witness(p);
	return 0;
}

int progs_load(struct progs *p, enum progs_kind kind, char *why, size_t why_len)
{
	const char *step = "open";
	int err;

	libbpf_set_print(libbpf_log);
	p->kind = kind;
	p->conn = -1;
	err = kind == PROGS_LSM ? open_lsm(p) : open_witness(p);
	if (!err)
		err = take_or_load(p, &step);
	if (err) {
		progs_unload(p);
		return load_failed(kind, step, err, why, why_len);
	}
	p->loaded = true;
	return 0;
}

void progs_unload(struct progs *p)
{
	if (p->conn >= 0)
		close(p->conn);
	p->conn = -1;
	if (p->taken) {
		munmap(p->bss_map, p->bss_len);
		for (size_t i = 0; i < p->n_fds; i++)
			close(p->fds[i]);
		p->taken = false;
	}
	destroy(p);
	p->n_fds = 0;
	p->armed_majors = NULL;
	p->loaded = false;
}
