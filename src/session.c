// SPDX-License-Identifier: GPL-2.0-only
/*
 * A node's CUSE session (session.h): libfuse's session on a /dev/cuse
 * descriptor of its own, and the thread that runs its multi-threaded loop.
 * The only file that makes, runs, stops and destroys a libfuse session;
 * what the callbacks do, and what a session's end means to its node, are
 * the owner's (node.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <fuse3/cuse_lowlevel.h>
#include <linux/fuse.h>

#include "session.h"

#define SG_MAJOR 21 /* the sg driver's char major, which sg_dd and sgp_dd test for */

/* libfuse's read of the next request (fuseio.h). */
static ssize_t session_read(int fd, void *buf, size_t len, void *userdata)
{
	struct session *s = userdata;

	return fuseio_read(&s->io, fd, buf, len);
}

static ssize_t session_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static const struct fuse_custom_io session_io = {
	.read = session_read,
	.writev = session_writev,
};

void session_init(struct session *s)
{
	*s = (struct session){ .io.stopfd = -1, .io.idlefd = -1 };
}

static int new_fuse_session(struct session *s, const char *name, int sg_minor,
			    const struct cuse_lowlevel_ops *ops)
{
	char devname[160];
	const char *dev_info[] = { devname };
	char *argv[] = { "cuse_bsg", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct cuse_info ci = {
		.dev_major = sg_minor >= 0 ? SG_MAJOR : 0,
		.dev_minor = sg_minor >= 0 ? sg_minor : 0,
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	int fd, err;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", name);
	s->se = cuse_lowlevel_new(&args, &ci, ops, s);
	fuse_opt_free_args(&args);
	if (!s->se)
		return -EIO;
	fd = open("/dev/cuse", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fuse_session_custom_io(s->se, &session_io, fd);
	if (err) {
		close(fd);
		return err;
	}
	return 0;
}

int session_new(struct session *s, const char *name, int sg_minor,
		const struct cuse_lowlevel_ops *ops)
{
	int err;

	s->io.stopfd = eventfd(0, EFD_CLOEXEC);
	s->io.idlefd = eventfd(0, EFD_CLOEXEC);
	err = s->io.stopfd < 0 || s->io.idlefd < 0 ? -errno : 0;
	if (!err)
		err = new_fuse_session(s, name, sg_minor, ops);
	if (err)
		session_free(s); /* empty again */
	return err;
}

static void *session_thread(void *arg)
{
	struct session *s = arg;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret = -ENOMEM;

	pthread_setname_np(pthread_self(), "bsg-fuse"); /* top -H, ps -L */
	if (cfg) {
		fuse_loop_cfg_set_max_threads(cfg, FUSE_THREADS);
		fuse_loop_cfg_set_idle_threads(cfg, FUSE_IDLE_THREADS);
		ret = fuse_session_loop_mt(s->se, cfg) < 0 ? -EIO : 0;
		fuse_loop_cfg_destroy(cfg);
	}
	s->over(s, ret);
	return NULL;
}

int session_start(struct session *s, session_over_fn *over)
{
	s->over = over;
	return -pthread_create(&s->thread, NULL, session_thread, s);
}

void session_stop(struct session *s)
{
	fuse_session_exit(s->se);
	if (eventfd_write(s->io.stopfd, 1) < 0)
		abort(); /* an eventfd takes this write */
}

int session_join(struct session *s, unsigned ms)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	return -pthread_timedjoin_np(s->thread, NULL, &end);
}

/*
 * libfuse keeps an INTERRUPT that comes after its request was answered (a
 * killed client's close sends one) until its next request takes it, and
 * fuse_session_destroy() never frees one.  Once the loop is over, a FORGET
 * of no inode (which CUSE answers with nothing) for each INTERRUPT read,
 * at most LATE_INTERRUPTS_MAX, takes them before the session goes.
 */
#define LATE_INTERRUPTS_MAX 4096

static void drop_late_interrupts(struct session *s)
{
	struct {
		struct fuse_in_header h;
		struct fuse_forget_in f;
	} r = { .h = { .len = sizeof(r), .opcode = FUSE_FORGET } };
	struct fuse_buf buf = { .size = sizeof(r), .mem = &r };
	unsigned long n = atomic_load(&s->io.interrupts);

	for (unsigned long i = 0; i < n && i < LATE_INTERRUPTS_MAX; i++)
		fuse_session_process_buf(s->se, &buf);
}

void session_destroy(struct session *s)
{
	if (s->se) {
		drop_late_interrupts(s);
		fuse_session_destroy(s->se);
	}
	s->se = NULL;
}

void session_free(struct session *s)
{
	session_destroy(s);
	if (s->io.stopfd >= 0)
		close(s->io.stopfd);
	if (s->io.idlefd >= 0)
		close(s->io.idlefd);
	s->io.stopfd = -1;
	s->io.idlefd = -1;
}
