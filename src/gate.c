// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate's loader (gate.h): opens, loads and attaches the BPF
 * program embedded as a bpftool skeleton (build/gate.skel.h, from
 * gate.bpf.c), keeps its nodes map, and proves it live once.  Any thread.
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
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "gate.h"
#include "gate.skel.h"
#include "gate_bpf.h"
#include "log.h"
#include "scsi.h"

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
	struct gate_bpf *skel;
	atomic_bool live;     /* gate_prove() saw it refuse in the kernel */
	atomic_int proof_pid; /* its child, whose refusal is not logged */
	pthread_mutex_t lock;
	struct gate_node *nodes; /* protected by lock */
	struct ring_buffer *ring;
	pthread_t thread;
	bool watching; /* protected by lock: thread runs */
	int stopfd;    /* an eventfd: written once, the thread ends */
};

/* The key of the nodes map: the kernel's dev_t (MKDEV: major << 20 | minor). */
static __u32 kdev(dev_t dev)
{
	return (__u32)major(dev) << GATE_MINORBITS | minor(dev);
}

/* The program's count of armed nodes of dev's major (its prefilter). */
static void count_major(struct gate *g, __u32 key, int by)
{
	__atomic_fetch_add(&g->skel->bss->armed_majors[key >> GATE_MINORBITS], by,
			   __ATOMIC_SEQ_CST);
}

/* libbpf's own messages go to debug logging only: the caller logs the reason once. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Why a load can fail, in the words an administrator acts on. */
static const char *load_hint(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "no privilege to load BPF (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN), "
		       "or lockdown forbids it";
	case -ENOENT:
	case -ESRCH:
		return "the kernel has no BTF (CONFIG_DEBUG_INFO_BTF) or no such LSM hook";
	case -EINVAL:
	case -EOPNOTSUPP:
	case -524: /* the kernel's own ENOTSUPP, which the bpf() call can return */
		return "the kernel has no BPF LSM (CONFIG_BPF_LSM)";
	default:
		return "the BPF program cannot be loaded";
	}
}

static int load(struct gate *g, char *why, size_t why_len)
{
	static const __u32 ioctls[GATE_IOCTLS] = { SG_IOSUBMIT, SG_IORECEIVE, SG_IOABORT,
						   SG_IOSUBMIT_V3, SG_IORECEIVE_V3 };
	const char *step = "open";
	int err;

	libbpf_set_print(quiet);
	g->skel = gate_bpf__open();
	if (!g->skel) {
		err = -errno;
		goto fail;
	}
	memcpy((void *)g->skel->rodata->gated_ioctls, ioctls, sizeof(ioctls));
	step = "load";
	err = gate_bpf__load(g->skel);
	if (!err) {
		step = "attach";
		err = gate_bpf__attach(g->skel);
	}
	if (!err)
		return 0;
fail:
	err = err ? err : -EINVAL;
	snprintf(why, why_len, "cannot %s the BPF LSM program: %s: %s", step, strerror(-err),
		 load_hint(err));
	return err;
}

int gate_choose(enum gate_mode mode, int load_err, bool *procfs)
{
	*procfs = mode == GATE_PROCFS || load_err;
	return mode == GATE_KERNEL && load_err ? load_err : 0;
}

int gate_new(enum gate_mode mode, struct gate **ret, char *why, size_t why_len)
{
	struct gate *g = NULL;
	bool procfs;
	int err = 0;

	why[0] = '\0';
	if (mode != GATE_PROCFS) {
		g = calloc(1, sizeof(*g));
		if (g)
			pthread_mutex_init(&g->lock, NULL);
		err = g ? load(g, why, why_len) : -ENOMEM;
		if (!g)
			snprintf(why, why_len, "cannot load the BPF LSM program: %s",
				 strerror(ENOMEM));
	}
	err = gate_choose(mode, err, &procfs);
	if (procfs) {
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

	if (size < sizeof(*r) || (int)r->tgid == atomic_load(&g->proof_pid))
		return 0;
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

	if (g->watching)
		return 0;
	g->stopfd = eventfd(0, EFD_CLOEXEC);
	if (g->stopfd < 0)
		return -errno;
	g->ring = ring_buffer__new(bpf_map__fd(g->skel->maps.refusals), log_refusal, g, NULL);
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

int gate_arm(struct gate *g, dev_t dev, const char *name)
{
	struct gate_count zero = { 0 };
	struct gate_node *n = calloc(1, sizeof(*n));
	__u32 key = kdev(dev);
	int err;

	if (!n)
		return -ENOMEM;
	n->key = key;
	snprintf(n->name, sizeof(n->name), "%s", name);
	pthread_mutex_lock(&g->lock);
	err = start_watch(g);
	if (!err) { /* the major first: the node is checked once both are in */
		count_major(g, key, 1);
		err = bpf_map__update_elem(g->skel->maps.nodes, &key, sizeof(key), &zero,
					   sizeof(zero), BPF_ANY);
		if (err)
			count_major(g, key, -1);
	}
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

	bpf_map__delete_elem(g->skel->maps.nodes, &key, sizeof(key), 0);
	pthread_mutex_lock(&g->lock);
	for (p = &g->nodes; *p && (*p)->key != key; p = &(*p)->next)
		;
	if (*p) {
		n = *p;
		*p = n->next;
		count_major(g, key, -1);
	}
	pthread_mutex_unlock(&g->lock);
	free(n);
}

uint64_t gate_refused(const struct gate *g, dev_t dev)
{
	struct gate_count c = { 0 };
	__u32 key = kdev(dev);

	if (bpf_map__lookup_elem(g->skel->maps.nodes, &key, sizeof(key), &c, sizeof(c), 0))
		return 0;
	return c.refused;
}

/*
 * The child: once its parent has noted its pid (go), one read() of fd; its
 * exit status is the errno (0: it was served).
 */
static void prove_child(int fd, int go)
{
	char buf[128];

	alarm(5); /* unanswered: SIGALRM ends it, and the proof fails */
	if (read(go, buf, 1) != 1)
		_exit(125);
	_exit(read(fd, buf, sizeof(buf)) < 0 ? errno : 0);
}

int gate_prove(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
	       size_t why_len)
{
	unsigned long before = atomic_load(reads);
	uint64_t refused = gate_refused(g, dev);
	int status, answer, go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0) {
		snprintf(why, why_len, "cannot prove the gate: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, why_len, "cannot fork to prove the gate: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (pid == 0)
		prove_child(fd, go[0]);
	atomic_store(&g->proof_pid, pid); /* its refusal is no client's */
	if (write(go[1], "", 1) != 1)
		kill(pid, SIGKILL);
	close(go[0]);
	close(go[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	answer = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (answer == EPERM && atomic_load(reads) == before &&
	    gate_refused(g, dev) == refused + 1) {
		atomic_store(&g->live, true);
		return 0;
	}
	snprintf(why, why_len,
		 "the BPF LSM program is loaded but does not run (is 'bpf' in the kernel's lsm= "
		 "list?): a forked child's read() %s%s",
		 answer == EPERM ? "was refused"
		 : answer < 0	 ? "got no answer"
				 : "was not refused",
		 atomic_load(reads) != before ? " and reached the daemon" : "");
	return -ENOPROTOOPT;
}

bool gate_live(const struct gate *g)
{
	return g && atomic_load(&g->live);
}

const char *gate_describe(const struct gate *g)
{
	return g ? "kernel (BPF LSM)" : "procfs";
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
	gate_bpf__destroy(g->skel);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
