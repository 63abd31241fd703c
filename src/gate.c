// SPDX-License-Identifier: GPL-2.0-only
/*
 * The credential gate's loader (gate.h): opens, loads and attaches the BPF
 * program embedded as a bpftool skeleton (build/gate.skel.h, from
 * gate.bpf.c), keeps its nodes map, and proves it live once.  Any thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "gate.h"
#include "gate.skel.h"
#include "gate_bpf.h"
#include "scsi.h"

struct gate {
	struct gate_bpf *skel;
	atomic_bool live; /* gate_prove() saw it refuse in the kernel */
};

/* The key of the nodes map: the kernel's dev_t (MKDEV: major << 20 | minor). */
static __u32 kdev(dev_t dev)
{
	return (__u32)major(dev) << 20 | minor(dev);
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

int gate_arm(struct gate *g, dev_t dev)
{
	struct gate_count zero = { 0 };
	__u32 key = kdev(dev);
	int err = bpf_map__update_elem(g->skel->maps.nodes, &key, sizeof(key), &zero, sizeof(zero),
				       BPF_ANY);

	return err == -E2BIG || err == -ENOSPC ? -E2BIG : err;
}

void gate_disarm(struct gate *g, dev_t dev)
{
	__u32 key = kdev(dev);

	bpf_map__delete_elem(g->skel->maps.nodes, &key, sizeof(key), 0);
}

uint64_t gate_refused(const struct gate *g, dev_t dev)
{
	struct gate_count c = { 0 };
	__u32 key = kdev(dev);

	if (bpf_map__lookup_elem(g->skel->maps.nodes, &key, sizeof(key), &c, sizeof(c), 0))
		return 0;
	return c.refused;
}

/* The child: one read() of fd; its exit status is the errno (0: it was served). */
static void prove_child(int fd)
{
	char buf[128];

	alarm(5); /* unanswered: SIGALRM ends it, and the proof fails */
	_exit(read(fd, buf, sizeof(buf)) < 0 ? errno : 0);
}

int gate_prove(struct gate *g, int fd, dev_t dev, const atomic_ulong *reads, char *why,
	       size_t why_len)
{
	unsigned long before = atomic_load(reads);
	uint64_t refused = gate_refused(g, dev);
	int status, answer;
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(why, why_len, "cannot fork to prove the gate: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0)
		prove_child(fd);
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
	if (!g)
		return;
	gate_bpf__destroy(g->skel);
	free(g);
}
