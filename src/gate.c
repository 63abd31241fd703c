// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate (gate.h): has one of its two programs loaded or taken
 * from another daemon (gateprogs.h), arms its nodes in their map, logs the
 * LSM gate's refusals, reads the witness's verdicts, proves it live once
 * and offers it to later daemons (peers.h).  Any thread.
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
#include "gate_bpf.h"
#include "gateprogs.h"
#include "lockcheck.h"
#include "log.h"
#include "peers.h"
#include "scsi.h"
#include "verdict.h"
#include "verdict_bpf.h"

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
	enum gate_kind kind; /* the program loaded: GATE_NONE once unloaded */
	struct progs p;	     /* its programs: ours, or another daemon's */
	int map;	     /* the loaded program's nodes map; -1: none */
	struct peers *peers; /* the thread that offers them, once live */
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
	int ringfd;	/* the LSM gate's refusals for our nodes, or -1 */
	__u32 ring_key; /* our pid, its key in the gate's rings map; 0: not in */
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
	__atomic_fetch_add(&g->p.armed_majors[key >> GATE_MINORBITS], by, __ATOMIC_SEQ_CST);
}

static int map_slots(struct gate *g)
{
	size_t len = WITNESS_SLOTS * sizeof(struct witness_slot);
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, g->p.fds[1], 0);

	if (p == MAP_FAILED)
		return -errno;
	g->slots_map = p;
	atomic_store(&g->v.slots, p);
	return 0;
}

/*
 * Our pid namespace: the witness numbers threads as our requests number
 * them, and a node's owner is a pid of it (the sweep's kill()).
 */
static int pidns(uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	*dev = (uint64_t)major(st.st_dev) << GATE_MINORBITS | minor(st.st_dev);
	*ino = st.st_ino;
	return 0;
}

/* The witness's programs, and its verdicts mapped: 0, or -errno with the reason in why. */
static int load_witness(struct gate *g, char *why, size_t why_len)
{
	int err = progs_load(&g->p, PROGS_WITNESS, why, why_len);

	if (!err)
		err = map_slots(g);
	if (err == 0) {
		g->kind = GATE_SEEN;
		g->map = g->p.fds[0];
	} else if (g->p.loaded) {
		unload(g);
		snprintf(why, why_len,
			 "cannot map the verdicts of the witness (fentry on CUSE): %s",
			 strerror(-err));
	}
	return err;
}

static int load_lsm(struct gate *g, char *why, size_t why_len)
{
	int err = progs_load(&g->p, PROGS_LSM, why, why_len);

	if (!err) {
		g->kind = GATE_LSM;
		g->map = g->p.fds[0];
	}
	return err;
}

/*
 * Detach and unload whichever is loaded (a gate taken from another daemon:
 * let go of it); the armed nodes stay listed.  The verdicts stay mapped
 * for a reader still in gate_witness(): gate_free() unmaps them.  Our ring
 * leaves the LSM gate's rings map; the watch thread's stays until then.
 */
static void unload(struct gate *g)
{
	atomic_store(&g->v.slots, NULL);
	peers_stop(g->peers);
	g->peers = NULL;
	if (g->ring_key && g->kind == GATE_LSM)
		bpf_map_delete_elem(g->p.fds[1], &g->ring_key);
	g->ring_key = 0;
	progs_unload(&g->p);
	g->map = -1;
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

	err = pidns(&g->p.pidns_dev, &g->p.pidns_ino);
	if (err) {
		snprintf(why, why_len,
			 "cannot load a BPF program: our pid namespace "
			 "(/proc/self/ns/pid): %s",
			 strerror(-err));
		return g->mode == GATE_AUTO ? 0 : err;
	}
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
	g->p.conn = -1;
	g->ringfd = -1;
	g->mode = mode;
	g->n_ioctls = n < GATE_IOCTLS ? n : GATE_IOCTLS;
	if (n)
		memcpy(g->ioctls, ioctls, g->n_ioctls * sizeof(*ioctls));
	g->p.ioctls = g->ioctls;
	g->p.n_ioctls = g->n_ioctls;
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

/*
 * Our ring of the LSM gate's refusals, put in its rings map under our pid,
 * the owner of the nodes we arm: the program tells each daemon of its own
 * nodes' refusals, whoever loaded it.  0 or -errno.
 */
static int own_ring(struct gate *g)
{
	__u32 key = (__u32)getpid();

	g->ringfd =
		bpf_map_create(BPF_MAP_TYPE_RINGBUF, "gate_refusals", 0, 0, GATE_RING_BYTES, NULL);
	if (g->ringfd < 0)
		return -errno;
	if (bpf_map_update_elem(g->p.fds[1], &key, &g->ringfd, BPF_ANY))
		return -errno;
	g->ring_key = key;
	return 0;
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
	err = own_ring(g);
	if (!err) {
		g->ring = ring_buffer__new(g->ringfd, log_refusal, g, NULL);
		err = g->ring ? -pthread_create(&g->thread, NULL, watch, g) : -errno;
	}
	if (err) {
		if (g->ring_key)
			bpf_map_delete_elem(g->p.fds[1], &g->ring_key);
		g->ring_key = 0;
		close(g->stopfd);
		ring_buffer__free(g->ring);
		g->ring = NULL;
		if (g->ringfd >= 0)
			close(g->ringfd);
		g->ringfd = -1;
		return err;
	}
	g->watching = true;
	return 0;
}

/* pid is no process of this pid namespace: its daemon is gone. */
static bool gone(__u32 pid)
{
	return pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/*
 * A shared gate's nodes whose daemon is gone (killed: it could not disarm
 * them) are taken out: each was counted in its major.  So are such
 * daemons' rings of the LSM gate.  Under lock.
 */
static void sweep(struct gate *g)
{
	__u32 key, next, *prev = NULL;
	struct gate_count c;

	assert_held(&g->lock);
	while (g->kind == GATE_LSM && !bpf_map_get_next_key(g->p.fds[1], prev, &next)) {
		key = next;
		prev = &key;
		if (gone(key))
			bpf_map_delete_elem(g->p.fds[1], &key);
	}
	prev = NULL;
	while (!bpf_map_get_next_key(g->map, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(g->map, &key, &c) || !gone(c.owner))
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
	if (g->p.key)
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
 * A gate proven live is offered to the daemons that start later (the
 * thread starts after the daemon's fork); the log says whose it is.
 */
static void offer(struct gate *g, char *why, size_t why_len)
{
	size_t n = strlen(why);
	int err = peers_hold(g->p.key, g->p.n_fds, g->p.fds, g->p.conn, &g->peers);

	if (!err)
		g->p.conn = -1; /* the thread's now */
	snprintf(why + n, why_len - n, "%s%s%s",
		 g->p.taken ? "; the programs are another daemon's, shared" : "",
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
	} else {
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
	unload(g); /* our ring out of the rings map before it goes */
	if (g->ringfd >= 0)
		close(g->ringfd);
	while ((n = g->nodes)) {
		g->nodes = n->next;
		free(n);
	}
	if (g->slots_map)
		munmap(g->slots_map, WITNESS_SLOTS * sizeof(struct witness_slot));
	pthread_mutex_destroy(&g->lock);
	free(g);
}
