// SPDX-License-Identifier: GPL-2.0-only
/*
 * stallfs: a FUSE file system whose answers to the daemon do not come, for
 * tests/vm/starve.sh.  Every name is a regular file of 1 MiB of zeroes,
 * mode 0666.  A read of one, and a getattr or flush asked by uid 0 (the
 * daemon: its fstat() and close() of a descriptor a client gave it), waits
 * SECONDS, or until STATE/release exists.  Each such wait appends a line to
 * STATE/events when it begins ("begin") and when it ends ("end"), so that a
 * test can tell that a stall is in progress by the events alone.
 *
 *    stallfs STATE SECONDS MOUNTPOINT [FUSE options, e.g. -o allow_other]
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (1 << 20)

static const char *state;
static int stall_s;

static void event(const char *what)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/events", state);
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
}

/* Wait the stall out: SECONDS, or until STATE/release appears. */
static void stall(void)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/release", state);
	event("begin");
	for (int waited = 0; waited < stall_s * 20 && access(path, F_OK) != 0; waited++)
		nanosleep(&tick, NULL);
	event("end");
}

static bool from_root(void)
{
	return fuse_get_context()->uid == 0;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (from_root())
		stall();
	st->st_mode = S_IFREG | 0666;
	st->st_nlink = 1;
	st->st_size = FILE_SIZE;
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	fi->keep_cache = 0;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	stall();
	if (off >= FILE_SIZE)
		return 0;
	if ((size_t)(FILE_SIZE - off) < size)
		size = FILE_SIZE - off;
	memset(buf, 0, size);
	return (int)size;
}

static int fs_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	if (from_root())
		stall();
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.open = fs_open,
	.read = fs_read,
	.flush = fs_flush,
};

int main(int argc, char **argv)
{
	char *args[64];
	int n = 0;

	if (argc < 4 || argc > 60) {
		fprintf(stderr, "usage: stallfs STATE SECONDS MOUNTPOINT [FUSE options]\n");
		return 2;
	}
	state = argv[1];
	stall_s = atoi(argv[2]);
	args[n++] = argv[0];
	args[n++] = "-f";
	for (int i = 3; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	return fuse_main(n, args, &ops, NULL);
}
