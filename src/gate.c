// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate's loader (gate.h): opens, loads and attaches one of
 * the two BPF programs embedded as bpftool skeletons (build/witness.skel.h
 * from witness.bpf.c, build/gate.skel.h from gate.bpf.c), keeps its nodes
 * map, reads the witness's verdicts, and proves it live once.  Any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.h"
#include "gate.skel.h"
#include "gate_bpf.h"
#include "lockcheck.h"
#include "log.h"
#include "peers.h"
#include "scsi.h"
#include "verdict.h"
#include "verdict_bpf.h"
#include "witness.skel.h"

/* The calls a proof makes, each on one of the programs' hooks (prove_child()). */
#define PROOF_CALLS 3
#define PROOF_ALL   ((1 << PROOF_CALLS) - 1)

/* Refusals a node logs as warnings in one second; the rest at debug level. */
#define GATE_WARNINGS 8

/* An armed node, for the log's lines. */
struct gate_node {
	struct gate_node *next;
	__u32 key;	  /* the nodes map's */
	time_t second;	  /* the second of the last warning */
	unsigned warned;  /* refusals logged as warnings in that second */
	unsigned quieted; /* refusals logged at debug since */
	char name[128];
};

struct gate {
	enum gate_mode mode;
	enum gate_kind kind;	 /* the program loaded: GATE_NONE once unloaded */
	struct gate_bpf *lsm;	 /* GATE_LSM's */
	struct witness_bpf *wit; /* GATE_SEEN's */
	int map;		 /* the loaded program's nodes map; -1: none */
	__u32 *armed_majors;	 /* and its count of armed nodes a major, mapped */
	/* the witness: its descriptors (peers.h), ours or another daemon's */
	int fds[PEER_FDS];
	bool taken;	     /* another daemon's: fds and armed_majors are ours to close */
	uint64_t key;	     /* the name it is offered under */
	int conn;	     /* peers_take()'s connection to its holder, or -1 */
	struct peers *peers; /* the thread that offers it, once live */
	struct verdicts v;   /* the witness's, mapped (slots_map) until the gate is freed */
	void *slots_map;
	unsigned ioctls[GATE_IOCTLS]; /* those that hand over commands: checked */
	size_t n_ioctls;
	atomic_bool live;      /* gate_prove() saw it refuse */
	atomic_int proof_pid;  /* its child, whose refusals are no client's (the LSM gate's) */
	atomic_int proof_left; /* those refusals not yet seen on the ring */
	__u32 proof_key;       /* the node the LSM gate's proof was counted on */
	char failed[256];      /* protected by lock: why it did not prove live */
	pthread_mutex_t lock;
	struct gate_node *nodes; /* protected by lock */
	struct ring_buffer *ring;
	pthread_t thread;
	bool watching; /* protected by lock: thread runs */
	int stopfd;    /* an eventfd: written once, the thread ends */
};

static void unload(struct gate *g);

/* The key of the nodes map: the kernel's dev_t (MKDEV: major << 20 | minor). */
static __u32 kdev(dev_t dev)
{
	return (__u32)major(dev) << GATE_MINORBITS | minor(dev);
}

/* The program's count of armed nodes of dev's major (its prefilter). */
static void count_major(struct gate *g, __u32 key, int by)
{
	__atomic_fetch_add(&g->armed_majors[key >> GATE_MINORBITS], by, __ATOMIC_SEQ_CST);
}

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
static const char *load_hint(enum gate_kind kind, int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "no privilege to load BPF (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN), "
		       "or lockdown forbids it";
	case -ENOENT:
	case -ESRCH:
		return kind == GATE_SEEN
			       ? "the kernel has no BTF for the cuse and fuse modules "
				 "(CONFIG_DEBUG_INFO_BTF_MODULES), or cuse is not loaded"
			       : "the kernel has no BTF (CONFIG_DEBUG_INFO_BTF) or no such "
				 "LSM hook";
	case -EINVAL:
	case -EOPNOTSUPP:
	case -524: /* the kernel's own ENOTSUPP, which the bpf() call can return */
		return kind == GATE_SEEN ? "the kernel has no BPF trampolines for module "
					   "functions (fentry)"
					 : "the kernel has no BPF LSM (CONFIG_BPF_LSM)";
	default:
		return "the BPF program cannot be loaded";
	}
}

static int load_failed(enum gate_kind kind, const char *step, int err, char *why, size_t why_len)
{
	err = err ? err : -EINVAL;
	snprintf(why, why_len, "cannot %s the %s: %s: %s", step,
		 kind == GATE_SEEN ? "witness (fentry on CUSE)" : "BPF LSM program", strerror(-err),
		 load_hint(kind, err));
	return err;
}

static int load_lsm(struct gate *g, char *why, size_t why_len)
{
	const char *step = "open";
	int err;

	g->lsm = gate_bpf__open();
	if (!g->lsm)
		return load_failed(GATE_LSM, step, -errno, why, why_len);
	for (size_t i = 0; i < g->n_ioctls; i++)
		((__u32 *)g->lsm->rodata->gated_ioctls)[i] = g->ioctls[i];
	step = "load";
	err = gate_bpf__load(g->lsm);
	if (!err) {
		step = "attach";
		err = gate_bpf__attach(g->lsm);
	}
	if (err) {
		gate_bpf__destroy(g->lsm);
		g->lsm = NULL;
		return load_failed(GATE_LSM, step, err, why, why_len);
	}
	g->kind = GATE_LSM;
	g->map = bpf_map__fd(g->lsm->maps.nodes);
	g->armed_majors = g->lsm->bss->armed_majors;
	return 0;
}

/* The witness's threads are numbered as our requests number them: our pid namespace. */
static int own_pidns(struct witness_bpf *w)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	w->rodata->pidns_dev = (__u64)major(st.st_dev) << GATE_MINORBITS | minor(st.st_dev);
	w->rodata->pidns_ino = st.st_ino;
	return 0;
}

static int map_slots(struct gate *g)
{
	size_t len = WITNESS_SLOTS * sizeof(struct witness_slot);
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, g->fds[1], 0);

	if (p == MAP_FAILED)
		return -errno;
	g->slots_map = p;
	atomic_store(&g->v.slots, p);
	return 0;
}

/* The witness's descriptors, in peers.h's order: maps, then links. */
static void witness_fds(struct gate *g)
{
	struct witness_bpf *w = g->wit;
	struct bpf_link *links[] = { w->links.witness_read,  w->links.witness_read_done,
				     w->links.witness_write, w->links.witness_write_done,
				     w->links.witness_ioctl, w->links.witness_ioctl_done };

	_Static_assert(3 + sizeof(links) / sizeof(links[0]) == PEER_FDS, "a witness's descriptors");
	g->fds[0] = bpf_map__fd(w->maps.nodes);
	g->fds[1] = bpf_map__fd(w->maps.slots);
	g->fds[2] = bpf_map__fd(w->maps.bss);
	for (int i = 0; i < PEER_FDS - 3; i++)
		g->fds[3 + i] = bpf_link__fd(links[i]);
}

/*
 * The name the witness goes by among daemons: its program (the object
 * file), what the daemon sets in it (the ioctls, the pid namespace).
 */
static uint64_t witness_key(struct witness_bpf *w, size_t n_ioctls)
{
	size_t len;
	const void *elf = witness_bpf__elf_bytes(&len);
	uint64_t h = peers_key(PEERS_KEY_START, elf, len);

	h = peers_key(h, (const void *)w->rodata->owner_ioctls, n_ioctls * sizeof(__u32));
	h = peers_key(h, (const void *)&w->rodata->pidns_dev, sizeof(w->rodata->pidns_dev));
	return peers_key(h, (const void *)&w->rodata->pidns_ino, sizeof(w->rodata->pidns_ino));
}

/* Another daemon's maps, of the sizes ours would have: true if so. */
static bool maps_fit(struct witness_bpf *w, const int fds[PEER_FDS])
{
	struct bpf_map *maps[] = { w->maps.nodes, w->maps.slots, w->maps.bss };

	for (int i = 0; i < 3; i++) {
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

/*
 * The witness another daemon of this machine holds, if any: its programs
 * run once a call for every daemon's nodes.  0: taken; else ours is loaded.
 */
static int take_witness(struct gate *g)
{
	size_t len = sizeof(struct witness_bpf__bss);
	char why[200] = "";
	int fds[PEER_FDS], err;
	void *bss;

	err = peers_take(g->key, fds, &g->conn, why, sizeof(why));
	if (err) {
		if (err != -ECONNREFUSED && err != -ENOENT)
			log_warn("the witness is not shared: %s; this daemon loads its own", why);
		return err;
	}
	bss = maps_fit(g->wit, fds) ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0)
				    : MAP_FAILED;
	if (bss == MAP_FAILED) {
		log_warn("the witness is not shared: its holder's maps are not ours; this "
			 "daemon loads its own");
		for (int i = 0; i < PEER_FDS; i++)
			close(fds[i]);
		close(g->conn);
		g->conn = -1;
		return -EPROTO;
	}
	memcpy(g->fds, fds, sizeof(fds));
	g->taken = true;
	g->armed_majors = ((struct witness_bpf__bss *)bss)->armed_majors;
	return 0;
}

static int load_witness(struct gate *g, char *why, size_t why_len)
{
	const char *step = "open";
	int err;

	g->wit = witness_bpf__open();
	if (!g->wit)
		return load_failed(GATE_SEEN, step, -errno, why, why_len);
	for (size_t i = 0; i < g->n_ioctls; i++)
		((__u32 *)g->wit->rodata->owner_ioctls)[i] = g->ioctls[i];
	err = own_pidns(g->wit);
	if (!err) {
		g->key = witness_key(g->wit, g->n_ioctls);
		if (!take_witness(g)) {
			witness_bpf__destroy(g->wit); /* nothing of it loaded */
			g->wit = NULL;
		} else {
			step = "load";
			err = witness_bpf__load(g->wit);
			if (!err) {
				step = "attach";
				err = witness_bpf__attach(g->wit);
			}
			if (!err && !take_witness(g)) { /* a holder came while ours loaded */
				witness_bpf__destroy(g->wit);
				g->wit = NULL;
			} else if (!err) {
				witness_fds(g);
				g->armed_majors = g->wit->bss->armed_majors;
			}
		}
	}
	if (!err) {
		step = "map the verdicts of";
		err = map_slots(g);
	}
	if (err) {
		unload(g);
		return load_failed(GATE_SEEN, step, err, why, why_len);
	}
	g->kind = GATE_SEEN;
	g->map = g->fds[0];
	return 0;
}

/*
 * Detach and unload whichever is loaded (a witness taken from another
 * daemon: let go of it); the armed nodes stay listed.  The verdicts stay
 * mapped for a reader still in gate_witness(): gate_free() unmaps them.
 */
static void unload(struct gate *g)
{
	atomic_store(&g->v.slots, NULL);
	peers_stop(g->peers);
	g->peers = NULL;
	if (g->conn >= 0)
		close(g->conn);
	g->conn = -1;
	if (g->taken) {
		munmap(g->armed_majors, sizeof(struct witness_bpf__bss));
		for (int i = 0; i < PEER_FDS; i++)
			close(g->fds[i]);
		g->taken = false;
	}
	witness_bpf__destroy(g->wit);
	g->wit = NULL;
	gate_bpf__destroy(g->lsm);
	g->lsm = NULL;
	g->map = -1;
	g->armed_majors = NULL;
	g->kind = GATE_NONE;
}

int gate_choose(enum gate_mode mode, int witness_err, int lsm_err, enum gate_kind *kind)
{
	*kind = GATE_NONE;
	switch (mode) {
	case GATE_PROCFS:
		return 0;
	case GATE_WITNESS:
		if (!witness_err)
			*kind = GATE_SEEN;
		return witness_err;
	case GATE_KERNEL:
		if (!lsm_err)
			*kind = GATE_LSM;
		return lsm_err;
	default:
		*kind = !witness_err ? GATE_SEEN : !lsm_err ? GATE_LSM : GATE_NONE;
		return 0;
	}
}

/* Load what mode asks for; the choice's reason (a program that did not load) in why. */
static int load(struct gate *g, char *why, size_t why_len)
{
	enum gate_kind kind;
	int werr = 1, lerr = 1, err;
	char lwhy[256] = "";

	if (g->mode == GATE_AUTO || g->mode == GATE_WITNESS)
		werr = load_witness(g, why, why_len);
	if (g->mode == GATE_KERNEL || (g->mode == GATE_AUTO && werr))
		lerr = load_lsm(g, g->mode == GATE_KERNEL ? why : lwhy, sizeof(lwhy));
	err = gate_choose(g->mode, werr, lerr, &kind);
	if (g->mode == GATE_AUTO && lerr && lerr != 1) {
		size_t n = strlen(why);

		snprintf(why + n, why_len - n, "; %s", lwhy);
	}
	return err;
}

int gate_new(enum gate_mode mode, const unsigned *ioctls, size_t n, struct gate **ret, char *why,
	     size_t why_len)
{
	struct gate *g;
	int err;

	why[0] = '\0';
	if (mode == GATE_PROCFS) {
		*ret = NULL;
		return 0;
	}
	if (n > GATE_IOCTLS) { /* the table grew past the program's list: fix GATE_IOCTLS */
		snprintf(why, why_len, "%zu ioctls to check, the BPF LSM program holds %d", n,
			 GATE_IOCTLS);
		return -E2BIG;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(why, why_len, "cannot load a BPF program: %s", strerror(ENOMEM));
		return mode == GATE_AUTO ? (*ret = NULL, 0) : -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->map = -1;
	g->conn = -1;
	g->mode = mode;
	g->n_ioctls = n < GATE_IOCTLS ? n : GATE_IOCTLS;
	if (n)
		memcpy(g->ioctls, ioctls, g->n_ioctls * sizeof(*ioctls));
	libbpf_set_print(libbpf_log);
	err = load(g, why, why_len);
	if (err || g->kind == GATE_NONE) {
		gate_free(g);
		g = NULL;
	}
	if (!err)
		*ret = g;
	return err;
}

/* What was refused, in the words of the log. */
static const char *call_name(const struct gate_refusal *r)
{
	if (!r->ioctl)
		return r->what & GATE_MAY_READ ? "read()" : "write()";
	switch (r->what) {
	case SG_IOSUBMIT:
		return "SG_IOSUBMIT";
	case SG_IOSUBMIT_V3:
		return "SG_IOSUBMIT_V3";
	case SG_IORECEIVE:
		return "SG_IORECEIVE";
	case SG_IORECEIVE_V3:
		return "SG_IORECEIVE_V3";
	default:
		return "SG_IOABORT";
	}
}

/* On the watch thread: one refusal, logged under its node's name. */
static int log_refusal(void *ctx, void *data, size_t size)
{
	struct gate *g = ctx;
	const struct gate_refusal *r = data;
	time_t now = time(NULL);
	struct gate_node *n;
	unsigned quieted = 0;
	char name[128] = "";
	int level = LOG_DEBUG;

	if (size < sizeof(*r))
		return 0;
	if ((int)r->tgid == atomic_load(&g->proof_pid)) {
		/* its refusals all seen: the pid may go to another process */
		if (atomic_fetch_sub(&g->proof_left, 1) <= 1)
			atomic_store(&g->proof_pid, 0);
		return 0;
	}
	pthread_mutex_lock(&g->lock);
	for (n = g->nodes; n && n->key != r->dev; n = n->next)
		;
	if (n && n->second != now) {
		n->second = now;
		n->warned = 0;
	}
	if (n && n->warned < GATE_WARNINGS) {
		level = LOG_WARNING;
		quieted = n->quieted;
		n->warned++;
		n->quieted = 0;
	} else if (n) {
		n->quieted++;
	}
	if (n)
		snprintf(name, sizeof(name), "%s", n->name);
	pthread_mutex_unlock(&g->lock);
	if (name[0] && (level < LOG_DEBUG || log_level >= LOG_DEBUG))
		log_node(level, name,
			 "tid %u (%.16s, process %u): %s refused in the kernel: not the opener's "
			 "security context (EPERM, as sg)%s",
			 r->tid, r->comm, r->tgid, call_name(r),
			 quieted ? "; refusals past the bound since logged at debug" : "");
	return 0;
}

static void *watch(void *arg)
{
	struct gate *g = arg;

	pthread_setname_np(pthread_self(), "bsg-gate");
	struct pollfd p[2] = { { .fd = ring_buffer__epoll_fd(g->ring), .events = POLLIN },
			       { .fd = g->stopfd, .events = POLLIN } };

	/* asleep until a refusal or the end: no periodic wake-up of an idle daemon */
	while (poll(p, 2, -1) >= 0 || errno == EINTR) {
		if (p[1].revents)
			break;
		if (p[0].revents)
			ring_buffer__consume(g->ring);
	}
	return NULL;
}

/* The log's thread, once: after the daemon's fork, which threads do not survive. */
static int start_watch(struct gate *g)
{
	int err = 0;

	if (g->watching || g->kind != GATE_LSM)
		return 0;
	g->stopfd = eventfd(0, EFD_CLOEXEC);
	if (g->stopfd < 0)
		return -errno;
	g->ring = ring_buffer__new(bpf_map__fd(g->lsm->maps.refusals), log_refusal, g, NULL);
	err = g->ring ? -pthread_create(&g->thread, NULL, watch, g) : -errno;
	if (err) {
		close(g->stopfd);
		ring_buffer__free(g->ring);
		g->ring = NULL;
		return err;
	}
	g->watching = true;
	return 0;
}

/*
 * A shared witness's nodes whose daemon is gone (killed: it could not
 * disarm them) are taken out: each was counted in its major.  Under lock.
 */
static void sweep(struct gate *g)
{
	__u32 key, next, *prev = NULL;
	struct gate_count c;

	assert_held(&g->lock);
	while (!bpf_map_get_next_key(g->map, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(g->map, &key, &c) || !c.owner ||
		    kill((pid_t)c.owner, 0) == 0 || errno != ESRCH)
			continue;
		if (!bpf_map_delete_elem(g->map, &key)) { /* not a sweep beside ours */
			count_major(g, key, -1);
			log_info("credential check: node %u:%u of a daemon that is gone (pid %u) "
				 "disarmed",
				 key >> GATE_MINORBITS, key & ((1u << GATE_MINORBITS) - 1),
				 c.owner);
		}
	}
}

/* The loaded program checks key's files: 0 or -errno.  Under lock. */
static int arm_key(struct gate *g, __u32 key)
{
	struct gate_count entry = { .owner = (unsigned)getpid() };
	int err;

	assert_held(&g->lock);

	if (g->map < 0)
		return 0; /* unloaded after a failed proof: the /proc check serves */
	if (g->key)
		sweep(g);
	count_major(g, key, 1); /* the major first: the node is checked once both are in */
	err = bpf_map_update_elem(g->map, &key, &entry, BPF_ANY) ? -errno : 0;
	if (err)
		count_major(g, key, -1);
	return err;
}

int gate_arm(struct gate *g, dev_t dev, const char *name)
{
	struct gate_node *n = calloc(1, sizeof(*n));
	__u32 key = kdev(dev);
	int err;

	if (!n)
		return -ENOMEM;
	n->key = key;
	snprintf(n->name, sizeof(n->name), "%s", name);
	pthread_mutex_lock(&g->lock);
	err = start_watch(g);
	if (!err)
		err = arm_key(g, key);
	if (!err) {
		n->next = g->nodes;
		g->nodes = n;
	}
	pthread_mutex_unlock(&g->lock);
	if (err)
		free(n);
	return err == -E2BIG || err == -ENOSPC ? -E2BIG : err;
}

void gate_disarm(struct gate *g, dev_t dev)
{
	__u32 key = kdev(dev);
	struct gate_node **p, *n = NULL;

	pthread_mutex_lock(&g->lock);
	for (p = &g->nodes; *p && (*p)->key != key; p = &(*p)->next)
		;
	if (*p) {
		n = *p;
		*p = n->next;
	}
	if (n && g->map >= 0) {
		bpf_map_delete_elem(g->map, &key);
		count_major(g, key, -1);
	}
	pthread_mutex_unlock(&g->lock);
	free(n);
}

/* Under lock: the map may go with a failed proof. */
static uint64_t refused_locked(const struct gate *g, dev_t dev)
{
	struct gate_count c = { 0 };
	__u32 key = kdev(dev);

	assert_held(&g->lock);
	if (g->kind != GATE_LSM || bpf_map_lookup_elem(g->map, &key, &c))
		return 0;
	if (key == g->proof_key && atomic_load(&g->live)) /* the proof's own */
		c.refused -= c.refused < PROOF_CALLS ? c.refused : PROOF_CALLS;
	return c.refused;
}

uint64_t gate_refused(struct gate *g, dev_t dev)
{
	uint64_t n;

	if (!g)
		return 0;
	pthread_mutex_lock(&g->lock);
	n = refused_locked(g, dev);
	pthread_mutex_unlock(&g->lock);
	return n;
}

/*
 * The child: once its parent has noted its pid (go), a read(), a write()
 * and an SG_IOABORT of fd, each of which must be refused; its exit status
 * has a bit set for each that was refused with EPERM (PROOF_ALL: all).
 */
static void prove_child(int fd, int go)
{
	struct sg_io_v4 h = { .guard = 'Q' };
	char buf[128] = { 0 };
	int refused = 0;

	alarm(5); /* unanswered: SIGALRM ends it, and the proof fails */
	if (read(go, buf, 1) != 1)
		_exit(125);
	refused |= (read(fd, buf, sizeof(buf)) < 0 && errno == EPERM) << 0;
	refused |= (write(fd, buf, sizeof(buf)) < 0 && errno == EPERM) << 1;
	refused |= (ioctl(fd, SG_IOABORT, &h) < 0 && errno == EPERM) << 2;
	_exit(refused);
}

/*
 * A forked child's calls on fd (prove_child()): which were refused, or -1
 * (no answer, or -errno); the child's pid in *child.
 */
static int child_calls(struct gate *g, int fd, pid_t *child)
{
	int status, go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (pid == 0)
		prove_child(fd, go[0]);
	*child = pid;
	atomic_store(&g->proof_left, PROOF_CALLS);
	atomic_store(&g->proof_pid, pid); /* its refusals are no client's */
	atomic_store(&g->v.proof_pid, pid);
	if (write(go[1], "", 1) != 1)
		kill(pid, SIGKILL);
	close(go[0]);
	close(go[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	atomic_store(&g->v.proof_pid, 0); /* its calls are over */
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What a proof's child saw, in the log's words. */
static void answer_words(int answer, char *buf, size_t len)
{
	static const char *const calls[PROOF_CALLS] = { "read()", "write()", "SG_IOABORT" };
	size_t n = 0;

	if (answer < 0) {
		snprintf(buf, len, "got no answer");
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < PROOF_CALLS; i++)
		if (!(answer & 1 << i))
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
				      calls[i]);
	if (!n)
		snprintf(buf, len, "refused all");
	else if (n < len)
		snprintf(buf + n, len - n, " not refused");
}

/* The LSM gate: refused by the kernel, never seen by us, counted by the program. */
static int prove_lsm(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
		     size_t why_len)
{
	unsigned long before = atomic_load(reads);
	uint64_t refused = refused_locked(g, dev);
	pid_t child = 0;
	int answer = child_calls(g, fd, &child);
	char words[80];

	if (answer == PROOF_ALL && atomic_load(reads) == before &&
	    refused_locked(g, dev) == refused + PROOF_CALLS) {
		g->proof_key = kdev(dev);
		snprintf(why, why_len,
			 "kernel (BPF LSM) proven live: a forked child's read(), write() and "
			 "SG_IOABORT (pid %d) refused in the kernel",
			 (int)child);
		return 0;
	}
	atomic_store(&g->proof_pid, 0);
	answer_words(answer, words, sizeof(words));
	snprintf(why, why_len,
		 "the BPF LSM program is loaded but does not run (is 'bpf' in the kernel's lsm= "
		 "list?): a forked child's calls: %s%s",
		 words, atomic_load(reads) != before ? "; its read() reached the daemon" : "");
	return -ENOPROTOOPT;
}

/* The witness: the calls reached us with their verdicts, and we refused them on those. */
static int prove_witness(struct gate *g, int fd, char *why, size_t why_len)
{
	unsigned seen = atomic_load(&g->v.proof_seen);
	pid_t child = 0;
	int answer = child_calls(g, fd, &child);
	char words[80];

	atomic_store(&g->proof_pid, 0);
	if (answer == PROOF_ALL && atomic_load(&g->v.proof_seen) == seen + PROOF_CALLS) {
		snprintf(why, why_len,
			 "witness proven live: a forked child's read(), write() and SG_IOABORT "
			 "(pid %d) refused on its verdicts",
			 (int)child);
		return 0;
	}
	answer_words(answer, words, sizeof(words));
	snprintf(why, why_len,
		 "the witness is attached but does not see every call (fentry on CUSE's entry "
		 "points): a forked child's calls: %s; %u of %d refused on a verdict",
		 words, atomic_load(&g->v.proof_seen) - seen, PROOF_CALLS);
	return -ENOPROTOOPT;
}

/* Auto: the witness did not prove live; the LSM gate takes its place, every node armed. */
static int fall_back(struct gate *g, char *why, size_t why_len)
{
	size_t n = strlen(why);
	int err;

	unload(g);
	err = load_lsm(g, why + n, why_len - n);
	if (!err)
		err = start_watch(g);
	for (struct gate_node *node = g->nodes; node && !err; node = node->next)
		err = arm_key(g, node->key);
	return err;
}

/*
 * A witness proven live is offered to the daemons that start later (the
 * thread starts after the daemon's fork); the log says whose it is.
 */
static void offer(struct gate *g, char *why, size_t why_len)
{
	size_t n = strlen(why);
	int err = peers_hold(g->key, g->fds, g->conn, &g->peers);

	if (!err)
		g->conn = -1; /* the thread's now */
	snprintf(why + n, why_len - n, "%s%s%s",
		 g->taken ? "; the programs are another daemon's, shared" : "",
		 err ? "; not offered to later daemons: " : "", err ? strerror(-err) : "");
}

int gate_prove(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
	       size_t why_len)
{
	int err;

	pthread_mutex_lock(&g->lock);
	if (g->failed[0]) {
		snprintf(why, why_len, "%s", g->failed);
		pthread_mutex_unlock(&g->lock);
		return -ENOPROTOOPT;
	}
	err = g->kind == GATE_SEEN ? prove_witness(g, fd, why, why_len)
				   : prove_lsm(g, fd, dev, reads, why, why_len);
	if (err && g->kind == GATE_SEEN && g->mode == GATE_AUTO) {
		strncat(why, "; ", why_len - strlen(why) - 1);
		err = fall_back(g, why, why_len);
		if (!err)
			err = prove_lsm(g, fd, dev, reads, why, why_len);
	}
	if (err) {
		snprintf(g->failed, sizeof(g->failed), "%s", why);
		unload(g); /* nothing left attached that does not run */
	} else if (g->kind == GATE_SEEN) {
		offer(g, why, why_len);
	}
	atomic_store(&g->live, !err);
	pthread_mutex_unlock(&g->lock);
	return err;
}

enum gate_kind gate_live(const struct gate *g)
{
	return g && atomic_load(&g->live) ? g->kind : GATE_NONE;
}

enum gate_kind gate_loaded(const struct gate *g)
{
	return g ? g->kind : GATE_NONE;
}

struct verdicts *gate_verdicts(struct gate *g)
{
	return g ? &g->v : NULL;
}

const char *gate_describe(const struct gate *g)
{
	enum gate_kind k = g ? g->kind : GATE_NONE;

	return k == GATE_SEEN ? "witness" : k == GATE_LSM ? "kernel" : "procfs";
}

const char *gate_describe_long(const struct gate *g)
{
	enum gate_kind k = g ? g->kind : GATE_NONE;

	return k == GATE_SEEN  ? "witness (fentry on CUSE's entry points; the daemon refuses)"
	       : k == GATE_LSM ? "kernel (BPF LSM; the kernel refuses)"
			       : "procfs";
}

void gate_free(struct gate *g)
{
	struct gate_node *n;

	if (!g)
		return;
	if (g->watching) {
		if (eventfd_write(g->stopfd, 1) < 0)
			abort(); /* an eventfd takes this write */
		pthread_join(g->thread, NULL);
		ring_buffer__free(g->ring);
		close(g->stopfd);
	}
	while ((n = g->nodes)) {
		g->nodes = n->next;
		free(n);
	}
	unload(g);
	if (g->slots_map)
		munmap(g->slots_map, WITNESS_SLOTS * sizeof(struct witness_slot));
	pthread_mutex_destroy(&g->lock);
	free(g);
}
