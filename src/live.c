// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view's socket, on the daemon's side: one thread that polls the
 * listening socket and every connection.  A connection has one deadline
 * for its whole request (LIVE_REQUEST_MS from its accept, however it
 * trickles in) and one for its whole answer; a user holds LIVE_PER_USER
 * of them at most, and LIVE_ROOT_SPARE of the LIVE_CONNS are root's
 * alone, so that no user can keep root out.  The answer is made on this
 * thread, what the peer may see judged on a thread of the peer's own
 * credentials (live_judge()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "live.h"
#include "log.h"

#define PEER_GROUPS 65536 /* the kernel's NGROUPS_MAX */

/* One connection: its request coming in, then its answer going out. */
struct conn {
	int fd; /* -1: a free slot */
	uid_t uid;
	struct timespec end; /* of the request, then of the answer */
	char req[LIVE_REQUEST_MAX];
	size_t got;
	const char *status; /* the answer's first line; NULL: still reading */
	struct show_out o;
	size_t sent;
};

struct live {
	struct sockaddr_un addr;
	int fd;
	int stopfd;
	pthread_t thread;
	live_collect_fn *collect;
	void *arg;
	gid_t *groups; /* the peer's, SO_PEERGROUPS: PEER_GROUPS of them at most */
	struct conn conn[LIVE_CONNS];
	struct pollfd pfd[LIVE_CONNS + 2];
};

/*
 * path: a directory, not a link to one, owned by us (root), that no one
 * else may write to (unless sticky, as /run may be).  0 or -errno.
 */
static int check_dir(const char *path, bool sticky_ok)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || ((st.st_mode & 022) && !(sticky_ok && (st.st_mode & 01000))))
		return -EPERM;
	return 0;
}

/* LIVE_DIR, made if missing (0755 whatever the umask: clients look in it), then checked. */
static int make_live_dir(void)
{
	char parent[sizeof(LIVE_DIR)];
	char *slash;
	int err;

	snprintf(parent, sizeof(parent), "%s", LIVE_DIR);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	err = check_dir(parent, true);
	if (err)
		return err;
	if (mkdir(LIVE_DIR, 0700) == 0) {
		if (chmod(LIVE_DIR, 0755) < 0)
			return -errno;
	} else if (errno != EEXIST) {
		return -errno;
	}
	return check_dir(LIVE_DIR, false);
}

/*
 * The socket's directory into dir: the unit's runtime directory, a
 * directory right under LIVE_DIR, or LIVE_DIR.  Each checked.  The
 * socket's name in it into *base.
 */
static int socket_dir(const char *name, char *dir, size_t dir_len, char *base, size_t base_len)
{
	const char *rd = getenv("RUNTIME_DIRECTORY");
	size_t n = strlen(LIVE_DIR);
	int err = make_live_dir();

	if (err)
		return err;
	/* the unit's (an instance's name may hold the ':' that would part several) */
	if (rd && !strncmp(rd, LIVE_DIR "/", n + 1) && rd[n + 1] && !strchr(rd + n + 1, '/') &&
	    strcmp(rd + n + 1, "..") && check_dir(rd, false) == 0) {
		snprintf(dir, dir_len, "%s", rd);
		snprintf(base, base_len, "live.sock");
		return 0;
	}
	snprintf(dir, dir_len, "%s", LIVE_DIR);
	if (snprintf(base, base_len, "%s.sock", name) >= (int)base_len)
		return -ENAMETOOLONG;
	for (char *p = base; *p; p++)
		if (*p == '/')
			*p = '!'; /* as the kernel names cciss/c0d0 in sysfs */
	return 0;
}

/* Does a daemon answer at sa? */
static bool answered(const struct sockaddr_un *sa)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool yes;

	if (probe < 0)
		return true; /* unknown: never take it over */
	yes = connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	      errno != ECONNREFUSED;
	close(probe);
	return yes;
}

/*
 * tmp, a socket with its final mode, linked in at l->addr: a socket left by
 * a daemon that died is taken over, a live one's is not.
 */
static int link_socket(struct live *l, const char *tmp)
{
	if (link(tmp, l->addr.sun_path) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (answered(&l->addr))
		return -EADDRINUSE;
	unlink(l->addr.sun_path);
	return link(tmp, l->addr.sun_path) == 0 ? 0 : -errno;
}

/*
 * Bound in a private directory (0700) and given its mode there, then
 * linked into place: no moment when another user could reach it with
 * another mode, or put one of its own in its place.  Anyone may connect
 * (0666): each node is shown only to those who may open it.
 */
static int open_socket(struct live *l, const char *name)
{
	char dir[sizeof(l->addr.sun_path)], base[sizeof(l->addr.sun_path)], tmp[sizeof(dir) + 16];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err = socket_dir(name, dir, sizeof(dir), base, sizeof(base));

	if (err)
		return err;
	l->addr.sun_family = AF_UNIX;
	if (snprintf(l->addr.sun_path, sizeof(l->addr.sun_path), "%s/%s", dir, base) >=
		    (int)sizeof(l->addr.sun_path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.live.XXXXXX", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", tmp) >= (int)sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	if (!mkdtemp(tmp))
		return -errno;
	memcpy(sa.sun_path, tmp, strlen(tmp)); /* its X's, as mkdtemp() filled them */
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sa.sun_path, 0666) < 0 || listen(l->fd, LIVE_CONNS) < 0)
		err = -errno;
	if (!err)
		err = link_socket(l, sa.sun_path);
	unlink(sa.sun_path);
	rmdir(tmp);
	return err;
}

static void conn_close(struct conn *c)
{
	if (c->status)
		show_out_fini(&c->o);
	close(c->fd);
	*c = (struct conn){ .fd = -1 };
}

/* Connections of uid now, and in all. */
static unsigned conns_of(const struct live *l, uid_t uid, unsigned *ret_all)
{
	unsigned n = 0;

	*ret_all = 0;
	for (unsigned i = 0; i < LIVE_CONNS; i++) {
		if (l->conn[i].fd < 0)
			continue;
		(*ret_all)++;
		n += l->conn[i].uid == uid;
	}
	return n;
}

/* May a connection of uid be taken now? */
static bool conn_room(const struct live *l, uid_t uid)
{
	unsigned all, mine = conns_of(l, uid, &all);

	if (uid == 0)
		return all < LIVE_CONNS;
	return mine < LIVE_PER_USER && all < LIVE_CONNS - LIVE_ROOT_SPARE;
}

/* Every connection waiting, taken into a free slot or closed at once. */
static void take_conns(struct live *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cr;
		socklen_t len = sizeof(cr);
		unsigned i;

		if (fd < 0)
			return; /* none left, or out of descriptors: next time */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    !conn_room(l, cr.uid)) {
			close(fd);
			continue;
		}
		for (i = 0; l->conn[i].fd >= 0; i++)
			;
		l->conn[i] = (struct conn){ .fd = fd, .uid = cr.uid };
		l->conn[i].end = deadline_ms(CLOCK_MONOTONIC, LIVE_REQUEST_MS);
	}
}

/* The peer's credentials; its groups into l->groups.  0 or -errno. */
static int read_peer(struct live *l, int fd, struct live_peer *p)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	*p = (struct live_peer){ .uid = cr.uid, .gid = cr.gid, .groups = l->groups };
	len = PEER_GROUPS * sizeof(gid_t);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, l->groups, &len) < 0)
		return -errno; /* unknown groups: never taken for none */
	p->ngroups = len / sizeof(gid_t);
	return 0;
}

/* The answer to c's request (a whole line in c->req).  0 or -errno: close it. */
static int make_answer(struct live *l, struct conn *c)
{
	enum show_form form;
	struct live_peer peer;
	const char *name;
	unsigned matched;

	if (live_parse_request(c->req, &form, &name) < 0 || read_peer(l, c->fd, &peer) < 0 ||
	    show_out_init(&c->o, form) < 0)
		return -EINVAL;
	matched = l->collect(l->arg, &peer, name, &c->o);
	c->status = "ok\n";
	if (!c->o.nodes && matched && peer.uid != 0)
		c->status = "denied\n";
	else if (!c->o.nodes && name)
		c->status = "none\n";
	if (c->status[0] != 'o')
		c->o.len = 0;
	c->end = deadline_ms(CLOCK_MONOTONIC, LIVE_ANSWER_MS);
	return 0;
}

/* c's request, as much as has come.  0, or -errno: close it. */
static int conn_read(struct live *l, struct conn *c)
{
	ssize_t n = recv(c->fd, c->req + c->got, sizeof(c->req) - 1 - c->got, 0);
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	c->got += n;
	c->req[c->got] = '\0';
	nl = memchr(c->req, '\n', c->got);
	if (!nl)
		return c->got < sizeof(c->req) - 1 ? 0 : -EMSGSIZE;
	*nl = '\0';
	return make_answer(l, c);
}

/* c's answer, as much as the peer takes.  1 when all is sent, 0, or -errno. */
static int conn_write(struct conn *c)
{
	size_t slen = strlen(c->status), total = slen + c->o.len;
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 0 };
	ssize_t n;

	if (c->sent < slen)
		iov[msg.msg_iovlen++] =
			(struct iovec){ (char *)c->status + c->sent, slen - c->sent };
	if (c->o.len) {
		size_t off = c->sent > slen ? c->sent - slen : 0;

		iov[msg.msg_iovlen++] = (struct iovec){ c->o.buf + off, c->o.len - off };
	}
	n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	c->sent += n;
	return c->sent == total ? 1 : 0;
}

/* The poll timeout: the nearest deadline, in ms (-1: none). */
static int next_timeout(const struct live *l)
{
	struct timespec now;
	long best = -1;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (unsigned i = 0; i < LIVE_CONNS; i++) {
		const struct conn *c = &l->conn[i];
		long ms;

		if (c->fd < 0)
			continue;
		ms = (c->end.tv_sec - now.tv_sec) * 1000 + (c->end.tv_nsec - now.tv_nsec) / 1000000;
		ms = ms < 0 ? 0 : ms + 1;
		if (best < 0 || ms < best)
			best = ms;
	}
	return (int)best;
}

/* Serve one connection after poll(): on, or closed. */
static void conn_serve(struct live *l, struct conn *c, short revents)
{
	struct timespec now;
	int ret = 0;

	if (revents && c->status) {
		ret = conn_write(c);
	} else if (revents) {
		ret = conn_read(l, c);
		if (!ret && c->status)
			ret = conn_write(c); /* an answer just made: at once */
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ret != 0 || !timespec_before(&now, &c->end))
		conn_close(c);
}

static unsigned poll_set(struct live *l, unsigned *map)
{
	unsigned n = 2;

	l->pfd[0] = (struct pollfd){ .fd = l->fd, .events = POLLIN };
	l->pfd[1] = (struct pollfd){ .fd = l->stopfd, .events = POLLIN };
	for (unsigned i = 0; i < LIVE_CONNS; i++) {
		if (l->conn[i].fd < 0)
			continue;
		map[n] = i;
		l->pfd[n++] = (struct pollfd){ .fd = l->conn[i].fd,
					       .events = l->conn[i].status ? POLLOUT : POLLIN };
	}
	return n;
}

static void *live_thread(void *arg)
{
	struct live *l = arg;
	unsigned map[LIVE_CONNS + 2];

	pthread_setname_np(pthread_self(), "bsg-live");
	for (;;) {
		unsigned n = poll_set(l, map);

		if (poll(l->pfd, n, next_timeout(l)) < 0 && errno != EINTR)
			break;
		if (l->pfd[1].revents)
			break;
		for (unsigned i = 2; i < n; i++)
			conn_serve(l, &l->conn[map[i]], l->pfd[i].revents);
		if (l->pfd[0].revents & POLLIN)
			take_conns(l);
	}
	return NULL;
}

/* What the judge thread is asked, and answers. */
struct judge {
	const struct live_peer *peer;
	struct show_node *nodes;
	unsigned n;
	bool *visible;
	bool as_peer; /* on the peer's credentials: else, root's answer */
};

/* Is the opener's process one the judge may see in /proc?  Its name into op->comm. */
static bool judge_opener(struct judge *j, struct show_opener *op)
{
	char path[64];
	ssize_t n;
	int fd;

	if (op->pid <= 0)
		return !j->as_peer;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)op->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return !j->as_peer; /* gone: root still sees its line */
	n = read(fd, op->comm, sizeof(op->comm) - 1);
	close(fd);
	op->comm[n > 0 ? n : 0] = '\0';
	op->comm[strcspn(op->comm, "\n")] = '\0';
	return true;
}

static void judge_nodes(struct judge *j)
{
	for (unsigned i = 0; i < j->n; i++) {
		struct show_node *s = &j->nodes[i];
		char path[160];
		unsigned kept = 0;

		snprintf(path, sizeof(path), "/dev/%s", s->name);
		j->visible[i] = !j->as_peer || faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0 ||
				faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
		if (!j->visible[i])
			continue;
		for (unsigned k = 0; k < s->nopeners; k++)
			if (judge_opener(j, &s->opener[k]))
				s->opener[kept++] = s->opener[k];
		s->nopeners = kept;
	}
}

/*
 * The peer's groups, gid and uid as this thread's own (the system calls,
 * not libc's, which would change every thread's): every capability goes
 * with uid 0, so the kernel answers as it would the peer.
 */
static void *judge_thread(void *arg)
{
	struct judge *j = arg;
	const struct live_peer *p = j->peer;

	if (syscall(SYS_setgroups, p->ngroups, p->groups) < 0 ||
	    syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
	    syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
		return (void *)(intptr_t)-errno;
	judge_nodes(j);
	return NULL;
}

int live_judge(const struct live_peer *peer, struct show_node *nodes, unsigned n, bool *visible)
{
	struct judge j = { peer, nodes, n, visible, peer->uid != 0 };
	pthread_t t;
	void *ret;
	int err;

	memset(visible, 0, n * sizeof(*visible));
	if (!j.as_peer) {
		judge_nodes(&j);
		return 0;
	}
	err = -pthread_create(&t, NULL, judge_thread, &j);
	if (err)
		return err;
	pthread_join(t, &ret);
	if (ret) {
		memset(visible, 0, n * sizeof(*visible));
		log_debug("live view: cannot take uid %u's credentials: %s", (unsigned)peer->uid,
			  strerror(-(int)(intptr_t)ret));
	}
	return (int)(intptr_t)ret;
}

int live_parse_request(char *req, enum show_form *form, const char **name)
{
	char *sp = strchr(req, ' ');

	*name = sp && sp[1] ? sp + 1 : NULL;
	if (sp)
		*sp = '\0';
	if (!strcmp(req, "text"))
		*form = SHOW_TEXT;
	else if (!strcmp(req, "json"))
		*form = SHOW_JSON;
	else if (!strcmp(req, "rows"))
		*form = SHOW_ROWS;
	else
		return -EINVAL;
	return 0;
}

static void live_free(struct live *l)
{
	for (unsigned i = 0; i < LIVE_CONNS; i++)
		if (l->conn[i].fd >= 0)
			conn_close(&l->conn[i]);
	if (l->fd >= 0)
		close(l->fd);
	if (l->stopfd >= 0)
		close(l->stopfd);
	free(l->groups);
	free(l);
}

int live_start(const char *name, live_collect_fn *collect, void *arg, struct live **ret)
{
	struct live *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->fd = -1;
	l->collect = collect;
	l->arg = arg;
	for (unsigned i = 0; i < LIVE_CONNS; i++)
		l->conn[i].fd = -1;
	l->stopfd = eventfd(0, EFD_CLOEXEC);
	l->groups = malloc(PEER_GROUPS * sizeof(gid_t));
	err = l->stopfd < 0 ? -errno : !l->groups ? -ENOMEM : open_socket(l, name);
	if (!err) {
		err = -pthread_create(&l->thread, NULL, live_thread, l);
		if (err)
			unlink(l->addr.sun_path);
	}
	if (err) {
		log_warn("no live view (cuse_bsg --show): %s: %s",
			 l->addr.sun_path[0] ? l->addr.sun_path : LIVE_DIR, strerror(-err));
		live_free(l);
		return err;
	}
	*ret = l;
	return 0;
}

void live_stop(struct live *l)
{
	if (!l)
		return;
	if (eventfd_write(l->stopfd, 1) < 0)
		abort(); /* an eventfd takes this write */
	pthread_join(l->thread, NULL);
	unlink(l->addr.sun_path);
	live_free(l);
}
