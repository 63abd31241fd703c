/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the test clients: how many of this process's threads are blocked in
 * a given system call now, from /proc/self/task/TID/syscall, whose first
 * field is the call's number while a thread is in one ("running" or -1
 * otherwise).  A client waits with it until its threads are parked where
 * the test needs them.
 */
#ifndef CUSE_BSG_TEST_TASKS_H
#define CUSE_BSG_TEST_TASKS_H

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

/* Threads of this process in system call nr now; the client exits if it cannot tell. */
static inline int threads_in_syscall(long nr)
{
	char path[300], text[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	FILE *f;

	if (!d) {
		perror("/proc/self/task");
		exit(1);
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(path, "re");
		if (f && fgets(text, sizeof(text), f) && isdigit((unsigned char)text[0]) &&
		    strtol(text, NULL, 10) == nr)
			n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

#endif /* CUSE_BSG_TEST_TASKS_H */
