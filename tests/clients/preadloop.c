// SPDX-License-Identifier: GPL-2.0-only
/*
 * preadloop: what every read() on the machine pays for the credential gate
 * (make bench).  N pread()s of one byte at offset 0 of FILE, timed; prints
 * the calls a second.  The gate's program runs on each (its hook is
 * file_permission), whatever the file: a tmpfs file and /dev/null show its
 * cost to the rest of the system, with the gate loaded and without.
 *
 *   preadloop FILE N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	long n = argc == 3 ? atol(argv[2]) : 0;
	char byte;
	double s;
	int fd;

	if (n <= 0) {
		fprintf(stderr, "usage: preadloop FILE N\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		if (pread(fd, &byte, 1, 0) < 0) {
			perror("pread");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%.0f\n", n / s);
	return 0;
}
