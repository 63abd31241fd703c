// SPDX-License-Identifier: GPL-2.0-only
/*
 * The real target: sg and sd nodes take a v3 header, bsg nodes a v4 one.
 * Facts about the device come from sysfs, the same for all three kinds, so
 * that SG_GET_SCSI_ID and friends answer alike whichever node was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "list.h"
#include "lockcheck.h"
#include "target.h"

#define SG_MAJOR	  21
#define FALLBACK_MAX_XFER (64u << 10)

struct real_target {
	struct target base;
	int open_flags; /* O_RDWR, or O_RDONLY for a write-protected medium */
	/* sg's own queue: one completion thread over every queue's fd */
	target_done_fn *done;
	pthread_t thread;
	bool stopped; /* the thread has been joined (target_queue_stop()) */
	int epfd, stopfd;
	pthread_mutex_t lock;
	struct list_head closed; /* protected by lock: queues freed by the thread */
	int bulk_fd;		 /* an sg target's bsg node, for large transfers; or -1 */
	int own_fd;		 /* target_from_fd(): the descriptor every channel dups; or -1 */
	dev_t rdev;		 /* the node target_open() found behind the path */
};

struct target_queue {
	int fd;
	unsigned running;	/* protected by lock */
	bool closed, unwatched; /* protected by lock */
	/* protected by lock: the thread reads fd now, so a close leaves fd to
	 * it (its number must not be reused under that read) */
	bool reading;
	/* protected by lock: out of the epoll set while none of its written
	 * commands runs, since the answer of an SG_IO on its descriptor
	 * (queue_sg_io) wakes sg's readers, so the thread, with nothing to read */
	bool quiet;
	struct list_head link; /* protected by lock: in closed */
};

#define to_real(t) container_of(t, struct real_target, base)

const char *target_kind_name(enum target_kind kind)
{
	static const char *const names[] = {
		[TARGET_SG] = "sg", [TARGET_SD] = "sd", [TARGET_BSG] = "bsg"
	};
	return names[kind];
}

/*
 * By path, as the kernel's nodes are reopened; but the path may now lead
 * elsewhere (a link such as /dev/scsi_generic/ID follows its device, an sgN
 * is reused by the next device probed): only the node first found will do.
 */
static int real_chan_open(struct target *t)
{
	int fd = open(t->info.path, to_real(t)->open_flags | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && st.st_rdev == to_real(t)->rdev)
		return fd;
	close(fd);
	return -ENODEV; /* the device we serve is gone */
}

static void real_chan_close(struct target *t, int chan)
{
	(void)t;
	close(chan);
}

bool target_bulk(const struct target *t, const struct scsi_cmd *c)
{
	/* one direction: sg's v3-only "to and from" stays on sg */
	return t->info.bulk_min && c->data_len >= t->info.bulk_min &&
	       c->data_len <= t->info.bulk_max &&
	       (c->dir == SCSI_DIR_TO_DEV || c->dir == SCSI_DIR_FROM_DEV);
}

static int sg_io_v4(int fd, struct scsi_cmd *c)
{
	struct sg_io_v4 h;

	scsi_build_v4(c, &h);
	if (ioctl(fd, SG_IO, &h) < 0)
		return -errno;
	scsi_result_v4(&h, c->dir, &c->res);
	return 0;
}

static int sg_io_v3(int fd, struct scsi_cmd *c)
{
	struct sg_io_hdr h;

	scsi_build_v3(c, &h);
	if (ioctl(fd, SG_IO, &h) < 0)
		return -errno;
	scsi_result_v3(&h, &c->res);
	return 0;
}

static int real_sg_io(struct target *t, int fd, struct scsi_cmd *c)
{
	if (target_bulk(t, c))
		return sg_io_v4(to_real(t)->bulk_fd, c); /* bsg holds no state of an opener's */
	return t->info.kind == TARGET_BSG ? sg_io_v4(fd, c) : sg_io_v3(fd, c);
}

/*
 * A descriptor of its own, with the caller's O_NONBLOCK: sg reads it at the
 * call, so sg's is opened non-blocking (a blocking open waits out another
 * opener's O_EXCL) and made blocking after; sd reads it at open().
 */
static int real_ioctl(struct target *t, unsigned cmd, void *arg, bool nonblock)
{
	int flags = to_real(t)->open_flags | O_CLOEXEC;
	int fd, ret;

	if (nonblock || t->info.kind != TARGET_SD)
		flags |= O_NONBLOCK;
	fd = open(t->info.path, flags);
	if (fd < 0)
		return -errno;
	if (!nonblock && t->info.kind == TARGET_SG && fcntl(fd, F_SETFL, 0) < 0)
		ret = -errno;
	else if ((ret = ioctl(fd, cmd, arg)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void free_closed(struct real_target *rt)
{
	struct list_head closed = LIST_HEAD_INIT(closed);
	struct target_queue *q, *next;

	pthread_mutex_lock(&rt->lock);
	list_splice_tail(&rt->closed, &closed);
	pthread_mutex_unlock(&rt->lock);
	list_for_each_entry_safe(q, next, &closed, link)
		free(q);
}

static void real_free(struct target *t)
{
	struct real_target *rt = to_real(t);

	if (rt->done) {
		target_queue_stop(t);
		free_closed(rt);
		close(rt->epfd);
		close(rt->stopfd);
		pthread_mutex_destroy(&rt->lock);
	}
	if (rt->bulk_fd >= 0)
		close(rt->bulk_fd);
	if (rt->own_fd >= 0)
		close(rt->own_fd);
	free(rt);
}

static int real_queue_open(struct target *t, struct target_queue **ret)
{
	struct real_target *rt = to_real(t);
	struct epoll_event ev = { .events = EPOLLIN };
	struct target_queue *q;
	int fd;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	fd = real_chan_open(t);
	if (fd < 0) {
		free(q);
		return fd;
	}
	q->fd = fd;
	ev.data.ptr = q;
	if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int err = -errno;

		close(fd);
		free(q);
		return err;
	}
	*ret = q;
	return 0;
}

/* The thread may hold q from its last epoll_wait(): it frees q itself. */
static void real_queue_close(struct target *t, struct target_queue *q)
{
	struct real_target *rt = to_real(t);

	pthread_mutex_lock(&rt->lock);
	if (!q->unwatched && !q->quiet)
		epoll_ctl(rt->epfd, EPOLL_CTL_DEL, q->fd, NULL);
	if (!q->reading)
		close(q->fd);
	q->closed = true;
	list_add(&q->link, &rt->closed);
	pthread_mutex_unlock(&rt->lock);
}

/*
 * Caller holds rt->lock: q's completions wake the thread (on), or none does.
 * Out of the epoll set, not modified: an item keeps EPOLLHUP and EPOLLERR
 * whatever it asks, and so every wake-up of sg's readers.  0 or -errno.
 */
static int queue_watch(struct real_target *rt, struct target_queue *q, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = q };

	assert_held(&rt->lock);
	if (q->unwatched || q->quiet != on)
		return 0;
	if (epoll_ctl(rt->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, q->fd, &ev) < 0)
		return -errno;
	q->quiet = !on;
	return 0;
}

static int real_queue_submit(struct target *t, struct target_queue *q, struct scsi_cmd *c)
{
	struct real_target *rt = to_real(t);
	struct sg_io_hdr h;
	ssize_t n;
	int err;

	scsi_build_v3(c, &h);
	h.usr_ptr = c; /* comes back with the completion */
	pthread_mutex_lock(&rt->lock);
	err = queue_watch(rt, q, true); /* on again before the command is there */
	if (!err)
		q->running++;
	pthread_mutex_unlock(&rt->lock);
	if (err)
		return err;
	n = write(q->fd, &h, sizeof(h));
	if (n == (ssize_t)sizeof(h))
		return 0;
	pthread_mutex_lock(&rt->lock);
	q->running--;
	pthread_mutex_unlock(&rt->lock);
	return n < 0 ? -errno : -EIO;
}

static int real_queue_sg_io(struct target *t, struct target_queue *q, struct scsi_cmd *c)
{
	struct real_target *rt = to_real(t);

	/* its answer would wake the thread, in vain, if none of the queue's ran */
	pthread_mutex_lock(&rt->lock);
	if (!q->running)
		queue_watch(rt, q, false);
	pthread_mutex_unlock(&rt->lock);
	return real_sg_io(t, q->fd, c);
}

/*
 * One ready queue: read what has completed and hand it on.  The done
 * function may close q, which then stays allocated until free_closed() (this
 * thread's) but must not be read again: each read is after a look, under
 * the lock, that q is open and still runs commands.  A detaching sg reports
 * POLLHUP for good: stop watching a queue with nothing running, and tell
 * the caller to slow down while the SCSI layer fails the rest.
 */
#define REAP_MAX 16 /* completions read for one wake-up */

/* q's next completion into h (true), read with q kept open; q closed meanwhile is closed here. */
static bool read_completion(struct real_target *rt, struct target_queue *q, struct sg_io_hdr *h)
{
	ssize_t n = read(q->fd, h, sizeof(*h));
	int err = errno;
	bool closed;

	pthread_mutex_lock(&rt->lock);
	q->reading = false;
	closed = q->closed;
	pthread_mutex_unlock(&rt->lock);
	if (closed)
		close(q->fd); /* real_queue_close() left it to this read */
	errno = err;
	return n == (ssize_t)sizeof(*h);
}

static bool reap_one(struct real_target *rt, struct target_queue *q, uint32_t events)
{
	struct sg_io_hdr h;
	struct scsi_cmd *c;
	unsigned got;
	bool skip, idle;

	/* every completion there now, up to a bound, for one wake-up; q stays
	 * open while its commands run (a queue is closed only when idle), and
	 * while it is read */
	for (got = 0;; got++) {
		pthread_mutex_lock(&rt->lock);
		skip = q->closed || q->unwatched || (got && (!q->running || got == REAP_MAX));
		q->reading = !skip;
		pthread_mutex_unlock(&rt->lock);
		if (skip)
			return false;
		if (!read_completion(rt, q, &h))
			break;
		c = h.usr_ptr;
		scsi_result_v3(&h, &c->res);
		pthread_mutex_lock(&rt->lock);
		q->running--;
		pthread_mutex_unlock(&rt->lock);
		rt->done(c, 0);
	}
	if (got)
		return false; /* the rest, if any, at the next wake-up */
	/* a detaching sg says EAGAIN while its commands are still being
	 * failed, and POLLHUP all along: back off rather than spin */
	if ((errno == EAGAIN || errno == EINTR) && !(events & (EPOLLHUP | EPOLLERR)))
		return false;
	pthread_mutex_lock(&rt->lock);
	if (q->closed) { /* by its opener meanwhile: out of the set, its fd closed */
		pthread_mutex_unlock(&rt->lock);
		return false;
	}
	idle = q->running == 0;
	if (idle && !q->unwatched) {
		if (!q->quiet)
			epoll_ctl(rt->epfd, EPOLL_CTL_DEL, q->fd, NULL);
		q->unwatched = true;
	}
	pthread_mutex_unlock(&rt->lock);
	return !idle;
}

static void *completion_thread(void *arg)
{
	struct real_target *rt = arg;
	struct epoll_event ev[32];
	struct timespec backoff = { 0, 1000 * 1000 };
	struct sched_param batch = { 0 };

	pthread_setname_np(pthread_self(), "bsg-complete"); /* top -H, ps -L */
	/* SCHED_BATCH: a completion wakes it without preempting the thread
	 * that is writing the next commands on the same CPU; it then reads
	 * them together (an idle CPU still runs it at once) */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);

	for (;;) {
		bool slow = false;
		int n = epoll_wait(rt->epfd, ev, 32, -1);

		for (int i = 0; i < n; i++) {
			if (!ev[i].data.ptr)
				return NULL; /* the stop eventfd */
			slow |= reap_one(rt, ev[i].data.ptr, ev[i].events);
		}
		free_closed(rt);
		if (slow)
			nanosleep(&backoff, NULL);
	}
}

static const struct target_ops real_ops = {
	.chan_open = real_chan_open,
	.chan_close = real_chan_close,
	.sg_io = real_sg_io,
	.ioctl = real_ioctl,
	.free = real_free,
};

/* sg's queue: only an sg node has one, and it takes v3 headers. */
static const struct target_ops real_sg_ops = {
	.chan_open = real_chan_open,
	.chan_close = real_chan_close,
	.sg_io = real_sg_io,
	.ioctl = real_ioctl,
	.free = real_free,
	.queue_open = real_queue_open,
	.queue_close = real_queue_close,
	.queue_submit = real_queue_submit,
	.queue_sg_io = real_queue_sg_io,
};

int target_queue_start(struct target *t, target_done_fn *done)
{
	struct real_target *rt = to_real(t);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int err;

	if (!t->ops->queue_open)
		return -EOPNOTSUPP;
	rt->stopfd = -1;
	rt->epfd = epoll_create1(EPOLL_CLOEXEC);
	rt->stopfd = eventfd(0, EFD_CLOEXEC);
	if (rt->epfd < 0 || rt->stopfd < 0 ||
	    epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rt->stopfd, &ev) < 0) {
		err = -errno;
		goto err_close;
	}
	pthread_mutex_init(&rt->lock, NULL);
	rt->done = done; /* before the thread, which reads it */
	err = -pthread_create(&rt->thread, NULL, completion_thread, rt);
	if (err) {
		rt->done = NULL;
		pthread_mutex_destroy(&rt->lock);
		goto err_close;
	}
	return 0;
err_close:
	if (rt->epfd >= 0)
		close(rt->epfd);
	if (rt->stopfd >= 0)
		close(rt->stopfd);
	return err;
}

void target_queue_stop(struct target *t)
{
	struct real_target *rt = to_real(t);
	if (!t || t->ops->free != real_free || !rt->done || rt->stopped)
		return;
	if (eventfd_write(rt->stopfd, 1) < 0)
		abort(); /* an eventfd takes this write */
	pthread_join(rt->thread, NULL);
	rt->stopped = true;
}

unsigned target_max_queued(const struct target *t)
{
	/* sg's slots per file descriptor, for SG_IO and write() alike */
	return t->info.kind == TARGET_SG ? SG_MAX_QUEUE : 0;
}

void target_free(struct target *t)
{
	if (t)
		t->ops->free(t);
}

static int read_int(const char *path, int *ret)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	*ret = atoi(buf);
	return 0;
}

static int bsg_major(void)
{
	char line[128], name[64];
	FILE *f = fopen("/proc/devices", "re");
	int major, found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == 'B')
			break; /* "Block devices:" ends the character section */
		if (sscanf(line, "%d %63s", &major, name) == 2 && !strcmp(name, "bsg"))
			found = major;
	}
	fclose(f);
	return found;
}

/* sysfs: the node's directory in /sys/dev; its "device" is the scsi_device. */
static int classify_stat(const struct stat *st, struct target_info *info, char *sysdir, size_t len,
			 char *why, size_t why_len)
{
	const char *path = info->path;
	char probe[PATH_MAX];

	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == SG_MAJOR) {
		info->kind = TARGET_SG;
	} else if (S_ISCHR(st->st_mode) && (int)major(st->st_rdev) == bsg_major()) {
		info->kind = TARGET_BSG;
	} else if (S_ISBLK(st->st_mode)) {
		snprintf(probe, sizeof(probe), "/sys/dev/block/%u:%u/partition", major(st->st_rdev),
			 minor(st->st_rdev));
		if (access(probe, F_OK) == 0) {
			/* SG_IO on a partition reaches the whole disk */
			snprintf(why, why_len, "%s is a partition: give the whole disk", path);
			return -EINVAL;
		}
		info->kind = TARGET_SD;
	} else {
		snprintf(why, why_len, "%s is not an sg, bsg or SCSI disk node", path);
		return -ENOTTY;
	}
	snprintf(sysdir, len, "/sys/dev/%s/%u:%u", S_ISBLK(st->st_mode) ? "block" : "char",
		 major(st->st_rdev), minor(st->st_rdev));
	return 0;
}

/* path may be a link (/dev/scsi_generic/ID, /dev/disk/by-id/...): followed */
static int classify(const char *path, struct target_info *info, dev_t *ret_rdev, char *sysdir,
		    size_t len, char *why, size_t why_len)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	*ret_rdev = st.st_rdev;
	return classify_stat(&st, info, sysdir, len, why, why_len);
}

/* The scsi_device's sysfs directory is named H:C:T:L. */
static int read_address(const char *sysdir, struct target_info *info, char *why, size_t why_len)
{
	char sysdev[PATH_MAX + 8];
	char *real;
	char attr[PATH_MAX + 32];
	const char *base;
	int n;

	snprintf(sysdev, sizeof(sysdev), "%s/device", sysdir);
	real = realpath(sysdev, NULL);
	if (!real) {
		snprintf(why, why_len, "%s has no SCSI device in sysfs", info->path);
		return -ENOTTY;
	}
	base = strrchr(real, '/');
	n = sscanf(base ? base + 1 : real, "%d:%d:%d:%d", &info->host, &info->channel, &info->id,
		   &info->lun);
	if (n != 4) {
		snprintf(why, why_len, "%s is not a SCSI device (%s)", info->path, real);
		free(real);
		return -ENOTTY;
	}
	snprintf(attr, sizeof(attr), "%s/type", real);
	read_int(attr, &info->scsi_type);
	snprintf(attr, sizeof(attr), "%s/queue_depth", real);
	read_int(attr, &info->queue_depth);
	free(real);
	snprintf(attr, sizeof(attr), "/sys/class/scsi_host/host%d/cmd_per_lun", info->host);
	read_int(attr, &info->cmd_per_lun);
	snprintf(attr, sizeof(attr), "/sys/class/scsi_host/host%d/unique_id", info->host);
	read_int(attr, &info->unique_id);
	return 0;
}

/* The request queue behind any of the three nodes: the disk's, if there is one. */
static void read_queue_limits(const char *sysdir, struct target_info *info)
{
	char pattern[PATH_MAX + 32];
	int kb = 0, hw_kb = 0, segs = 0;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/device/block/*/queue", sysdir);
	if (info->kind == TARGET_SD)
		snprintf(pattern, sizeof(pattern), "%s/queue", sysdir);
	if (glob(pattern, 0, NULL, &g) == 0) {
		char attr[PATH_MAX + 64];

		snprintf(attr, sizeof(attr), "%s/max_sectors_kb", g.gl_pathv[0]);
		read_int(attr, &kb);
		snprintf(attr, sizeof(attr), "%s/max_hw_sectors_kb", g.gl_pathv[0]);
		read_int(attr, &hw_kb);
		snprintf(attr, sizeof(attr), "%s/max_segments", g.gl_pathv[0]);
		read_int(attr, &segs);
		globfree(&g);
	}
	info->max_sectors_bytes = kb > 0 ? (uint32_t)kb << 10 : FALLBACK_MAX_XFER;
	info->max_xfer = hw_kb > 0 ? (uint32_t)hw_kb << 10 : info->max_sectors_bytes;
	if (info->max_xfer >= SCSI_XFER_LIMIT)
		info->max_xfer = SCSI_XFER_LIMIT - 4096;
	info->max_segments = segs > 0 ? segs : 128;
	/* SG_IO on a block device says EIO for an overlong transfer; sg and
	 * bsg fail in the block layer's mapping with EINVAL */
	info->max_xfer_errno = info->kind == TARGET_SD ? EIO : EINVAL;
}

/* The first channel: read-write if the medium allows it. */
static int open_first(struct real_target *rt, char *why, size_t why_len)
{
	int fd;

	rt->open_flags = O_RDWR;
	fd = real_chan_open(&rt->base);
	if (fd == -EROFS || fd == -EACCES) {
		rt->open_flags = O_RDONLY; /* write-protected medium: reads still work */
		fd = real_chan_open(&rt->base);
	}
	if (fd < 0)
		snprintf(why, why_len, "cannot open %s: %s", rt->base.info.path, strerror(-fd));
	return fd;
}

/*
 * An sg target's large transfers go to the device's bsg node: bsg maps the
 * daemon's buffer for the device, where sg copies through buffers of its
 * own (make bench: READ 64 KiB, kernel bsg 2.5 times sg's rate).  Not if
 * the device has no bsg node: then sg takes everything.
 */
static void open_bulk(struct real_target *rt)
{
	struct target_info *info = &rt->base.info;
	char path[PATH_MAX];
	struct stat st;

	if (info->kind != TARGET_SG)
		return;
	snprintf(path, sizeof(path), "/dev/bsg/%d:%d:%d:%d", info->host, info->channel, info->id,
		 info->lun);
	if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode) || (int)major(st.st_rdev) != bsg_major())
		return;
	rt->bulk_fd = open(path, rt->open_flags | O_CLOEXEC);
	if (rt->bulk_fd < 0)
		return;
	snprintf(info->bulk_path, sizeof(info->bulk_path), "%s", path);
	/* what bsg maps in one piece: a segment a page of our page-aligned buffer */
	info->bulk_max = info->max_xfer;
	if ((uint64_t)info->max_segments * 4096 < info->bulk_max)
		info->bulk_max = (uint32_t)info->max_segments * 4096;
	if (info->bulk_max >= TARGET_BULK_MIN)
		info->bulk_min = TARGET_BULK_MIN;
}

/*
 * SG_EMULATED_HOST as sg answers it: the block layer (sd, bsg) always says
 * 1, so ask the device's sg node where there is one.
 */
static int read_emulated(const char *sysdir, int fd, enum target_kind kind)
{
	char pattern[PATH_MAX + 32], dev[64];
	int val = 0;
	glob_t g;

	if (kind == TARGET_SG)
		return ioctl(fd, SG_EMULATED_HOST, &val) < 0 ? 0 : val;
	snprintf(pattern, sizeof(pattern), "%s/device/scsi_generic/sg*", sysdir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	snprintf(dev, sizeof(dev), "/dev/%s", strrchr(g.gl_pathv[0], '/') + 1);
	globfree(&g);
	fd = open(dev, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, SG_EMULATED_HOST, &val) < 0)
		val = 0;
	close(fd);
	return val;
}

static void copy_trimmed(char *dst, const uint8_t *src, size_t len)
{
	memcpy(dst, src, len);
	dst[len] = '\0';
	while (len && dst[len - 1] == ' ')
		dst[--len] = '\0';
}

static int probe_inquiry(struct target *t, int chan, char *why, size_t why_len)
{
	uint8_t buf[36] = { 0 };
	struct scsi_cmd c = {
		.cdb = { 0x12, 0, 0, 0, sizeof(buf), 0 },
		.cdb_len = 6,
		.dir = SCSI_DIR_FROM_DEV,
		.data = buf,
		.data_len = sizeof(buf),
		.timeout_ms = 20000,
	};
	int ret = t->ops->sg_io(t, chan, &c);

	if (ret < 0) {
		snprintf(why, why_len, "%s answers no SG_IO: %s", t->info.path, strerror(-ret));
		return ret;
	}
	if (c.res.status || c.res.host_status || c.res.driver_status) {
		snprintf(why, why_len, "%s: INQUIRY failed (status 0x%02x host 0x%x driver 0x%x)",
			 t->info.path, c.res.status, c.res.host_status, c.res.driver_status);
		return -EIO;
	}
	copy_trimmed(t->info.vendor, buf + 8, 8);
	copy_trimmed(t->info.product, buf + 16, 16);
	copy_trimmed(t->info.revision, buf + 32, 4);
	return 0;
}

int target_open(const char *path, struct target **ret, char *why, size_t why_len)
{
	struct real_target *rt;
	char sysdir[PATH_MAX];
	int err, fd = -1;

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	list_init(&rt->closed);
	rt->base.ops = &real_ops;
	rt->bulk_fd = -1;
	rt->own_fd = -1;
	snprintf(rt->base.info.path, sizeof(rt->base.info.path), "%s", path);
	err = classify(path, &rt->base.info, &rt->rdev, sysdir, sizeof(sysdir), why, why_len);
	if (!err)
		err = read_address(sysdir, &rt->base.info, why, why_len);
	if (!err)
		err = fd = open_first(rt, why, why_len);
	if (fd >= 0)
		err = probe_inquiry(&rt->base, fd, why, why_len);
	if (err < 0) {
		if (fd >= 0)
			close(fd);
		real_free(&rt->base);
		return err;
	}
	if (rt->base.info.kind == TARGET_SG)
		rt->base.ops = &real_sg_ops;
	read_queue_limits(sysdir, &rt->base.info);
	rt->base.info.emulated = read_emulated(sysdir, fd, rt->base.info.kind);
	close(fd);
	open_bulk(rt);
	*ret = &rt->base;
	return 0;
}

/*
 * A descriptor's channels are duplicates of it: the same open file, with
 * the rights its opener had; nothing is opened again by name.
 */
static int fd_chan_open(struct target *t)
{
	int fd = fcntl(to_real(t)->own_fd, F_DUPFD_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

/*
 * On the descriptor itself: its O_NONBLOCK is its opener's, and changing
 * it would change the client's file too.
 */
static int fd_ioctl(struct target *t, unsigned cmd, void *arg, bool nonblock)
{
	int ret = ioctl(to_real(t)->own_fd, cmd, arg);

	(void)nonblock;
	return ret < 0 ? -errno : ret;
}

static const struct target_ops fd_ops = {
	.chan_open = fd_chan_open,
	.chan_close = real_chan_close,
	.sg_io = real_sg_io,
	.ioctl = fd_ioctl,
	.free = real_free,
};

int target_from_fd(int fd, const char *path, struct target **ret, char *why, size_t why_len)
{
	struct real_target *rt;
	char sysdir[PATH_MAX];
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	list_init(&rt->closed);
	rt->base.ops = &fd_ops;
	rt->bulk_fd = -1;
	rt->own_fd = -1;
	snprintf(rt->base.info.path, sizeof(rt->base.info.path), "%s", path);
	/* bsg_add_device(): EINVAL for what is no device to bind */
	err = classify_stat(&st, &rt->base.info, sysdir, sizeof(sysdir), why, why_len);
	if (err)
		err = -EINVAL;
	/* nor one a SCSI command can reach: ENOTBLK, bsg's "no request queue" */
	if (!err && read_address(sysdir, &rt->base.info, why, why_len) < 0)
		err = -ENOTBLK;
	if (err) {
		real_free(&rt->base);
		return err;
	}
	read_queue_limits(sysdir, &rt->base.info);
	/*
	 * The descriptor's own driver answers, as it would the client: sg
	 * the host's flag, sd and bsg 1.  Nothing is opened by name for a binding.
	 */
	if (ioctl(fd, SG_EMULATED_HOST, &rt->base.info.emulated) < 0)
		rt->base.info.emulated = 0;
	rt->base.info.fd_flags = fcntl(fd, F_GETFL);
	rt->own_fd = fd;
	*ret = &rt->base;
	return 0;
}

/* The block layer's own facts about a disk, none of which changes anything. */
static const struct {
	unsigned cmd;
	unsigned len;
} blk_info[] = {
	{ BLKGETSIZE64, sizeof(uint64_t) },
	{ BLKGETSIZE, sizeof(unsigned long) },
	{ BLKSSZGET, sizeof(int) },
	{ BLKPBSZGET, sizeof(unsigned int) },
	{ BLKBSZGET, sizeof(int) },
	{ BLKIOMIN, sizeof(unsigned int) },
	{ BLKIOOPT, sizeof(unsigned int) },
	{ BLKALIGNOFF, sizeof(int) },
	{ BLKROGET, sizeof(int) },
	{ BLKROTATIONAL, sizeof(unsigned short) },
	{ BLKDISCARDZEROES, sizeof(unsigned int) },
};

int target_blk_info(struct target *t, int chan, unsigned cmd, uint64_t *val, size_t *len)
{
	/* a binding's disk only: bsg's control node passed these on */
	if (t->info.kind != TARGET_SD || t->ops != &fd_ops)
		return -ENOTTY;
	for (size_t i = 0; i < sizeof(blk_info) / sizeof(blk_info[0]); i++) {
		if (blk_info[i].cmd != cmd)
			continue;
		*val = 0;
		/* a real target's channel is a descriptor of it */
		if (ioctl(chan, cmd, val) < 0)
			return -errno;
		*len = blk_info[i].len;
		return 0;
	}
	return -ENOTTY;
}
