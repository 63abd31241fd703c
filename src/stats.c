// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device's figures for the live view.  Its identity comes from sysfs
 * (/sys/dev/char/MAJ:MIN/device, the SCSI device behind an sg or a bsg
 * node): the kernel read VPD page 0x80 when it scanned the device, so
 * that reading it costs no command; a disk's size is its block device's.
 */
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "scsi.h"
#include "stats.h"

/* Up to len bytes of path, or -1. */
static ssize_t read_small(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

/* The 512-byte sectors in the file at path, as bytes; 0 if unknown. */
static uint64_t sectors_bytes(const char *path)
{
	char buf[32];
	ssize_t n = read_small(path, buf, sizeof(buf) - 1);
	uint64_t v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%" SCNu64, &v) == 1 ? v * 512 : 0;
}

/* A disk's size: /sys/.../device/block/NAME/size of the SCSI device at dir. */
static uint64_t disk_size(const char *dir)
{
	char pat[160];
	glob_t g = { 0 };
	uint64_t size = 0;

	snprintf(pat, sizeof(pat), "%s/block/*/size", dir);
	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1)
		size = sectors_bytes(g.gl_pathv[0]);
	globfree(&g);
	return size;
}

void stats_read_device(struct bsgdev *d)
{
	uint8_t page[256];
	char dir[96], path[128];
	struct stat st;
	ssize_t n;

	if (!d->target || stat(d->target->info.path, &st) < 0)
		return;
	snprintf(dir, sizeof(dir), "/sys/dev/%s/%u:%u%s", S_ISBLK(st.st_mode) ? "block" : "char",
		 major(st.st_rdev), minor(st.st_rdev), S_ISBLK(st.st_mode) ? "" : "/device");
	snprintf(path, sizeof(path), "%s%s/vpd_pg80", dir, S_ISBLK(st.st_mode) ? "/device" : "");
	n = read_small(path, page, sizeof(page));
	if (n > 0)
		scsi_vpd80_serial(page, (size_t)n, d->serial, sizeof(d->serial));
	if (S_ISBLK(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/size", dir);
		d->size = sectors_bytes(path);
	} else {
		d->size = disk_size(dir);
	}
}

static void io_show(struct io_counters *io, struct show_io *s)
{
	*s = (struct show_io){
		.cmds = atomic_load_explicit(&io->cmds, memory_order_relaxed),
		.bytes_in = atomic_load_explicit(&io->bytes_in, memory_order_relaxed),
		.bytes_out = atomic_load_explicit(&io->bytes_out, memory_order_relaxed),
		.errors = atomic_load_explicit(&io->errors, memory_order_relaxed),
		.refused = atomic_load_explicit(&io->refused, memory_order_relaxed),
	};
}

static void lat_show(const struct lat *l, uint64_t now_s, struct show_lat *s)
{
	struct lat_summary sum;

	lat_summary(l, now_s, &sum);
	*s = (struct show_lat){ sum.count, sum.p50, sum.p99, sum.max };
}

/* every shown counter and avg_latency_us, or show_counter_add() drops the last */
_Static_assert(STAT_LATENCY_US + 1 <= SHOW_COUNTERS_MAX,
	       "a node's counters do not fit in struct show_node: raise SHOW_COUNTERS_MAX");

void stats_show(struct bsgdev *d, struct show_node *s)
{
	uint64_t sg_io = atomic_load(&d->stats[STAT_SG_IO]);
	struct timespec now;

	for (unsigned i = 0; i < STAT_LATENCY_US; i++) /* the shown ones (STAT_SHOWN) */
		show_counter_add(s, stat_name(i), atomic_load(&d->stats[i]));
	show_counter_add(s, "avg_latency_us",
			 sg_io ? atomic_load(&d->stats[STAT_LATENCY_US]) / sg_io : 0);
	io_show(&d->io, &s->io);
	s->io.cmds = sg_io;
	s->io.refused = atomic_load(&d->stats[STAT_REFUSED]);
	clock_gettime(CLOCK_MONOTONIC, &now);
	lat_show(&d->lat, now.tv_sec, &s->lat);
	lat_show(&d->dev_lat, now.tv_sec, &s->dev_lat);
	if (!d->target)
		return;
	snprintf(s->vendor, sizeof(s->vendor), "%s", d->target->info.vendor);
	snprintf(s->product, sizeof(s->product), "%s", d->target->info.product);
	snprintf(s->revision, sizeof(s->revision), "%s", d->target->info.revision);
	snprintf(s->serial, sizeof(s->serial), "%s", d->serial);
	s->size = d->size;
}
