/*
 * lsmhook: load and attach lsmhook.bpf.c (BPF LSM programs that decide
 * nothing, on the credential gate's hooks), say so on stdout, and hold them
 * until a signal.  make bench-gate compares a read() loop without any
 * program, with these, and with the gate.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lsmhook.skel.h"

int main(void)
{
	struct lsmhook_bpf *skel = lsmhook_bpf__open_and_load();
	sigset_t set;
	int sig, err;

	if (!skel) {
		perror("lsmhook: load");
		return 1;
	}
	err = lsmhook_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "lsmhook: attach: %s\n", strerror(-err));
		lsmhook_bpf__destroy(skel);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("lsmhook: attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	lsmhook_bpf__destroy(skel);
	return 0;
}
