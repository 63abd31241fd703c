// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for bsgadd.c: BSG_IOC_ADD's argument and the file the
 * descriptor it names is open on, as control.c decodes them.  The input:
 *
 *   arg    8 bytes, the ioctl's argument as the kernel passes it on
 *   flags  4 bytes, what fcntl(F_GETFL) said of the descriptor taken
 *   mode   4 bytes, its st_mode
 *
 * (missing bytes read as zero).  Beyond not crashing: a descriptor number
 * only for an argument a descriptor can be, an O_PATH descriptor always
 * EBADF, only a device node accepted, a reason exactly with a refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bsgadd.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[16] = { 0 };
	struct bsgadd_file f;
	const char *why = "untouched", *name;
	uint64_t arg;
	int fd = -12345, err;

	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	memcpy(&arg, in, 8);
	memcpy(&f.flags, in + 8, 4);
	memcpy(&f.mode, in + 12, 4);
	err = bsgadd_decode(arg, &fd);
	if (arg <= INT_MAX)
		check(!err && fd == (int)arg);
	else
		check(err == -ENODEV && fd == -12345);
	err = bsgadd_check(&f, &why);
	if (f.flags & O_PATH)
		check(err == -EBADF);
	else if (!S_ISCHR(f.mode) && !S_ISBLK(f.mode))
		check(err == -EINVAL);
	else
		check(err == 0);
	check((err != 0) == (why != NULL) && (!why || strlen(why) < 128));
	name = bsgadd_mode_name(f.flags);
	check(name && (!strcmp(name, "read-only") || !strcmp(name, "write-only") ||
		       !strcmp(name, "read-write") || !strcmp(name, "ioctl-only")));
	check(!strcmp(name, "read-write") == ((f.flags & O_ACCMODE) == O_RDWR));
	return 0;
}
