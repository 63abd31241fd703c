// SPDX-License-Identifier: GPL-2.0-only
/*
 * One gate for every daemon of the machine (peers.h): the abstract
 * socket, the descriptors' hand-over, and the holders' thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "peers.h"

/* Holders that watch the one with the name; past it, a holder gets no answer. */
#define PEERS_MAX 1024
/* A name not free yet (its holder still going): tried again after 10 ms, doubling to 1 s */
#define RETRY_FIRST_MS 10
#define RETRY_LAST_MS  1000

struct peers {
	uint64_t key;
	size_t n_fds;
	int fds[PEER_FDS];	 /* the caller's: n_fds */
	int stopfd;		 /* an eventfd: written once, the thread ends */
	int name;		 /* the listening socket, while the name is ours; else -1 */
	int conn;		 /* the connection to the name's holder; else -1 */
	int watchers[PEERS_MAX]; /* answered, kept until they close: n_watchers */
	size_t n_watchers;
	int retry_ms; /* the wait before the next try to take the name or rejoin */
	pthread_t thread;
};

uint64_t peers_key(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static socklen_t peer_addr(uint64_t key, struct sockaddr_un *a)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "cuse-bsg/gate/%016" PRIx64, key);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The other end is root's: the only one a gate's descriptors go to or come from. */
static bool peer_is_root(int s)
{
	struct ucred c;
	socklen_t len = sizeof(c);

	return getsockopt(s, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0 && c.uid == 0;
}

static void set_timeout(int s, int opt, long ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };

	(void)setsockopt(s, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* Receive one hand-over of n descriptors on s: 0, or -errno (why). */
static int receive(int s, size_t n_fds, int fds[PEER_FDS], char *why, size_t why_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PEER_FDS)];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	bool some;
	ssize_t n;

	set_timeout(s, SO_RCVTIMEO, 2000);
	n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	c = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int) * n_fds) && !(m.msg_flags & MSG_CTRUNC)) {
		memcpy(fds, CMSG_DATA(c), sizeof(int) * n_fds);
		return 0;
	}
	some = c != NULL;
	for (c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) /* none kept */
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)(void *)CMSG_DATA(c))[i]);
	snprintf(why, why_len, "the gate's holder answered %s",
		 n < 0	? strerror(errno)
		 : some ? "another count of descriptors"
			: "no descriptors");
	return n < 0 ? -errno : -EPROTO;
}

int peers_take(uint64_t key, size_t n, int fds[PEER_FDS], int *conn, char *why, size_t why_len)
{
	struct sockaddr_un a;
	socklen_t len = peer_addr(key, &a);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	*conn = -1;
	if (n > PEER_FDS)
		return -EINVAL;
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, len) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	if (!peer_is_root(s)) {
		snprintf(why, why_len, "the gate's socket @%s is held by a user other than root",
			 a.sun_path + 1);
		close(s);
		return -EPERM;
	}
	err = receive(s, n, fds, why, why_len);
	if (err) {
		close(s);
		return err;
	}
	*conn = s;
	return 0;
}

/* Take the name, to answer later daemons: true if it is ours now. */
static bool take_name(struct peers *p)
{
	struct sockaddr_un a;
	socklen_t len = peer_addr(p->key, &a);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (s < 0)
		return false;
	if (bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 16) < 0) {
		close(s);
		return false;
	}
	log_debug("the credential gate is offered to later daemons on @%s", a.sun_path + 1);
	p->name = s;
	return true;
}

/* Watch the name's holder again (another daemon took it): true if connected. */
static bool rejoin(struct peers *p)
{
	int fds[PEER_FDS];
	char why[160];

	if (peers_take(p->key, p->n_fds, fds, &p->conn, why, sizeof(why)))
		return false;
	for (size_t i = 0; i < p->n_fds; i++) /* the same programs: ours are kept */
		close(fds[i]);
	return true;
}

/* A later daemon: the descriptors, then its connection is kept until it closes. */
static void answer(struct peers *p)
{
	char byte = 0;
	union {
		char buf[CMSG_SPACE(sizeof(int) * PEER_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int s = accept4(p->name, NULL, NULL, SOCK_CLOEXEC);

	if (s < 0)
		return;
	if (!peer_is_root(s) || p->n_watchers == PEERS_MAX) {
		log_debug("the gate's socket: a peer %s",
			  peer_is_root(s) ? "too many" : "not root's");
		close(s);
		return;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * p->n_fds);
	m.msg_controllen = CMSG_SPACE(sizeof(int) * p->n_fds);
	memcpy(CMSG_DATA(c), p->fds, sizeof(int) * p->n_fds);
	set_timeout(s, SO_SNDTIMEO, 1000);
	if (sendmsg(s, &m, MSG_NOSIGNAL) != 1) {
		close(s);
		return;
	}
	p->watchers[p->n_watchers++] = s;
}

/* fd has something to read: true if it is an end (a peer's close, an error). */
static bool ended(int fd)
{
	char buf[16];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* One round: 1 to go on, 0 to stop. */
static int round_trip(struct peers *p)
{
	struct pollfd f[2 + PEERS_MAX];
	size_t n = 2;

	if (p->name < 0 && p->conn < 0 && !take_name(p) && !rejoin(p)) {
		/*
		 * a holder that is going, or not listening yet: again soon, so
		 * that a daemon starting meanwhile finds the name held
		 */
		int wait = p->retry_ms;

		p->retry_ms = wait * 2 > RETRY_LAST_MS ? RETRY_LAST_MS : wait * 2;
		f[0] = (struct pollfd){ .fd = p->stopfd, .events = POLLIN };
		return poll(f, 1, wait) == 1 ? 0 : 1;
	}
	p->retry_ms = RETRY_FIRST_MS;
	f[0] = (struct pollfd){ .fd = p->stopfd, .events = POLLIN };
	f[1] = (struct pollfd){ .fd = p->name >= 0 ? p->name : p->conn, .events = POLLIN };
	for (size_t i = 0; i < p->n_watchers; i++)
		f[n++] = (struct pollfd){ .fd = p->watchers[i], .events = POLLIN };
	if (poll(f, n, -1) < 0)
		return errno == EINTR;
	if (f[0].revents)
		return 0;
	if (f[1].revents && p->name >= 0) {
		answer(p);
	} else if (f[1].revents && ended(p->conn)) { /* the holder is gone: take its place */
		close(p->conn);
		p->conn = -1;
	}
	for (size_t i = n; i-- > 2;)
		if (f[i].revents && ended(p->watchers[i - 2])) {
			close(p->watchers[i - 2]);
			p->watchers[i - 2] = p->watchers[--p->n_watchers];
		}
	return 1;
}

static void *hold(void *arg)
{
	struct peers *p = arg;

	while (round_trip(p))
		;
	return NULL;
}

int peers_hold(uint64_t key, size_t n, const int fds[PEER_FDS], int conn, struct peers **ret)
{
	struct peers *p = n <= PEER_FDS ? calloc(1, sizeof(*p)) : NULL;
	int err;

	if (!p)
		return n <= PEER_FDS ? -ENOMEM : -EINVAL;
	p->key = key;
	p->n_fds = n;
	memcpy(p->fds, fds, sizeof(int) * n);
	p->name = -1;
	p->conn = conn;
	p->retry_ms = RETRY_FIRST_MS;
	p->stopfd = eventfd(0, EFD_CLOEXEC);
	if (p->stopfd < 0) {
		err = -errno;
		free(p);
		return err;
	}
	err = -pthread_create(&p->thread, NULL, hold, p);
	if (err) {
		close(p->stopfd);
		free(p);
		return err;
	}
	*ret = p;
	return 0;
}

void peers_stop(struct peers *p)
{
	if (!p)
		return;
	if (eventfd_write(p->stopfd, 1) < 0)
		abort(); /* an eventfd takes this write */
	pthread_join(p->thread, NULL);
	/* the name first: a watcher that sees its connection end can take it */
	if (p->name >= 0)
		close(p->name);
	for (size_t i = 0; i < p->n_watchers; i++)
		close(p->watchers[i]);
	if (p->conn >= 0)
		close(p->conn);
	close(p->stopfd);
	free(p);
}
