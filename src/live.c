// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view's socket and its client.  The daemon's side is one thread
 * that takes one connection at a time: it reads the request, takes the
 * snapshot through the owner's collect function, writes it and closes.
 * Each read and write waits a second at most, and a whole answer two, so
 * that a client which never reads or writes holds only this thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "live.h"
#include "log.h"

#define IO_TIMEOUT_S  1
#define ANSWER_S      2
#define REQUEST_MAX   256
#define PEER_GROUPS   65536 /* the kernel's NGROUPS_MAX */
#define CLIENT_WAIT_S 5	    /* a daemon's answer at most, for the client */

struct live {
	struct sockaddr_un addr;
	int fd;
	int stopfd;
	pthread_t thread;
	live_collect_fn *collect;
	void *arg;
	gid_t *groups; /* the peer's, SO_PEERGROUPS: PEER_GROUPS of them at most */
};

/* The socket's path: the unit's runtime directory, or NAME.sock in LIVE_DIR. */
static int socket_path(const char *name, struct sockaddr_un *sa)
{
	const char *rd = getenv("RUNTIME_DIRECTORY");
	size_t n = sizeof(sa->sun_path);
	struct stat st;
	int len;

	sa->sun_family = AF_UNIX;
	/* the unit's (an instance's name may hold the ':' that would part several) */
	if (rd && !strncmp(rd, LIVE_DIR "/", strlen(LIVE_DIR) + 1) && stat(rd, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		len = snprintf(sa->sun_path, n, "%s/live.sock", rd);
		return len < (int)n ? 0 : -ENAMETOOLONG;
	}
	if (mkdir(LIVE_DIR, 0755) == 0)
		chmod(LIVE_DIR, 0755); /* whatever the umask: clients look in it */
	else if (errno != EEXIST)
		return -errno;
	len = snprintf(sa->sun_path, n, "%s/%s.sock", LIVE_DIR, name);
	if (len >= (int)n)
		return -ENAMETOOLONG;
	for (char *p = sa->sun_path + strlen(LIVE_DIR) + 1; *p; p++)
		if (*p == '/')
			*p = '!'; /* as the kernel names cciss/c0d0 in sysfs */
	return 0;
}

/* A socket left by a daemon that died is taken over; a live one's is not. */
static int bind_socket(int fd, const struct sockaddr_un *sa)
{
	int probe;

	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		return 0;
	if (errno != EADDRINUSE)
		return -errno;
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	if (connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	    errno != ECONNREFUSED) {
		close(probe);
		return -EADDRINUSE;
	}
	close(probe);
	unlink(sa->sun_path);
	return bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ? 0 : -errno;
}

/* Anyone may connect (0666): each node is shown only to those who may open it. */
static int open_socket(struct live *l, const char *name)
{
	int err = socket_path(name, &l->addr);

	if (err)
		return err;
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return -errno;
	err = bind_socket(l->fd, &l->addr);
	if (err)
		return err;
	if (chmod(l->addr.sun_path, 0666) < 0 || listen(l->fd, 16) < 0) {
		err = -errno;
		unlink(l->addr.sun_path);
	}
	return err;
}

static void set_timeouts(int fd, unsigned s)
{
	struct timeval tv = { .tv_sec = s };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One line of at most REQUEST_MAX - 1 bytes, NUL in place of its newline.  0 or -errno. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t got = 0;
	char *nl;

	while (got < len - 1) {
		ssize_t n = recv(fd, buf + got, len - 1 - got, 0);

		if (n <= 0)
			return n == 0 ? -EPIPE : -errno;
		got += n;
		buf[got] = '\0';
		nl = memchr(buf, '\n', got);
		if (nl) {
			*nl = '\0';
			return 0;
		}
	}
	return -EMSGSIZE;
}

static bool past(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return !timespec_before(&now, end);
}

/* All of buf, or as much as the client took before end. */
static void send_all(int fd, const char *buf, size_t len, const struct timespec *end)
{
	while (len && !past(end)) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		buf += n;
		len -= n;
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

/* "text" or "json", then " NAME" or nothing: json into *json, the name or NULL. */
static int parse_request(char *req, bool *json, const char **name)
{
	char *sp = strchr(req, ' ');

	*name = sp && sp[1] ? sp + 1 : NULL;
	if (sp)
		*sp = '\0';
	*json = !strcmp(req, "json");
	return *json || !strcmp(req, "text") ? 0 : -EINVAL;
}

static void answer(struct live *l, int fd)
{
	char req[REQUEST_MAX];
	struct live_peer peer;
	struct show_out o;
	struct timespec end;
	const char *name, *status = "ok\n";
	unsigned matched;
	bool json;

	end = deadline_ms(CLOCK_MONOTONIC, ANSWER_S * 1000);
	set_timeouts(fd, IO_TIMEOUT_S);
	if (read_line(fd, req, sizeof(req)) < 0 || parse_request(req, &json, &name) < 0 ||
	    read_peer(l, fd, &peer) < 0 || show_out_init(&o, json) < 0)
		return;
	matched = l->collect(l->arg, &peer, name, &o);
	if (!o.nodes && matched && peer.uid != 0)
		status = "denied\n";
	else if (!o.nodes && name)
		status = "none\n";
	send_all(fd, status, strlen(status), &end);
	if (status[0] == 'o')
		send_all(fd, o.buf, o.len, &end);
	show_out_fini(&o);
}

static void *live_thread(void *arg)
{
	struct live *l = arg;
	struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN },
			       { .fd = l->stopfd, .events = POLLIN } };

	pthread_setname_np(pthread_self(), "bsg-live");
	for (;;) {
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue; /* gone before we took it, or out of descriptors: next time */
		answer(l, c);
		close(c);
	}
	return NULL;
}

static void live_free(struct live *l)
{
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
	*l = (struct live){ .fd = -1, .collect = collect, .arg = arg };
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

/* The client's side: cuse_bsg --show. */
struct client {
	bool json;
	const char *name; /* NODE, without /dev/; or NULL */
	unsigned shown;
	bool failed;
};

/* The daemon's answer at path, read whole into *ret (malloc'd).  0 or -errno. */
static int ask(const char *path, const struct client *cl, char **ret, size_t *ret_len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t cap = SHOW_OUT_MAX + REQUEST_MAX, len = 0;
	char req[REQUEST_MAX], *buf;
	ssize_t n;
	int fd, err = 0;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >= (int)sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(req, sizeof(req), "%s%s%s\n", cl->json ? "json" : "text", cl->name ? " " : "",
		 cl->name ? cl->name : "");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	buf = malloc(cap + 1);
	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	set_timeouts(fd, CLIENT_WAIT_S);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		err = -errno;
		goto out;
	}
	while (len < cap && (n = recv(fd, buf + len, cap - len, 0)) > 0)
		len += n;
	if (n < 0 && len < cap)
		err = -errno;
out:
	if (fd >= 0)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

/*
 * One daemon's answer, printed or said why not.  Asked for every daemon,
 * one whose nodes the caller may not open is left out without a word.
 */
static void show_one(struct client *cl, const char *path)
{
	const char *who = cl->name ? cl->name : path;
	char *buf, *body;
	size_t len;
	int err = ask(path, cl, &buf, &len);

	if (err == -ECONNREFUSED || err == -ENOENT)
		return; /* a daemon that is gone, or going */
	if (err) {
		fprintf(stderr, "cuse_bsg: %s: %s\n", path, strerror(-err));
		cl->failed = true;
		return;
	}
	body = strchr(buf, '\n');
	if (body && !strncmp(buf, "ok\n", 3)) {
		printf("%s%.*s", cl->shown ? (cl->json ? "," : "\n") : "", (int)(len - 3),
		       body + 1);
		cl->shown++;
	} else if (!strncmp(buf, "denied\n", 7) && cl->name) {
		fprintf(stderr, "cuse_bsg: %s: permission denied (as to open the node)\n", who);
		cl->failed = true;
	} else if (strncmp(buf, "none\n", 5) && strncmp(buf, "denied\n", 7)) {
		fprintf(stderr, "cuse_bsg: %s: no answer\n", path);
		cl->failed = true;
	}
	free(buf);
}

static int client_usage(FILE *f, int status)
{
	fprintf(f, "usage: cuse_bsg --show [--json] [NODE|SOCKET]\n"
		   "  What each running cuse_bsg (or the one serving /dev/NODE, or\n"
		   "  listening on SOCKET) is doing: its nodes, their openers, its\n"
		   "  memory and threads against their bounds.  Only nodes the caller\n"
		   "  may open are shown.\n");
	return status;
}

/* A usage error of --show: one line naming it, as the daemon's own. */
static int client_misuse(const char *what, const char *arg)
{
	fprintf(stderr, "cuse_bsg: --show: %s '%s' (see --help)\n", what, arg);
	return 2;
}

static int client_args(int argc, char **argv, struct client *cl, const char **arg)
{
	*arg = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			cl->json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return client_usage(stdout, -1);
		else if (argv[i][0] == '-' || *arg)
			return client_misuse(argv[i][0] == '-' ? "unknown option" : "a second NODE",
					     argv[i]);
		else
			*arg = argv[i];
	}
	return 0;
}

int live_client(int argc, char **argv)
{
	struct client cl = { 0 };
	struct stat st;
	const char *arg;
	glob_t g = { 0 };
	int ret = client_args(argc, argv, &cl, &arg);

	if (ret)
		return ret < 0 ? 0 : ret;
	printf("%s", cl.json ? "[" : "");
	if (arg && arg[0] == '/' && stat(arg, &st) == 0 && S_ISSOCK(st.st_mode)) {
		show_one(&cl, arg);
	} else {
		cl.name = arg && !strncmp(arg, "/dev/", 5) ? arg + 5 : arg;
		/* a daemon started by hand, and a unit's in its runtime directory */
		glob(LIVE_DIR "/{*,*/*}.sock", GLOB_BRACE, NULL, &g);
		for (size_t i = 0; i < g.gl_pathc; i++)
			show_one(&cl, g.gl_pathv[i]);
		globfree(&g);
	}
	printf("%s", cl.json ? "]\n" : "");
	if (!cl.shown && !cl.failed)
		fprintf(stderr, "cuse_bsg: %s\n",
			arg ? "no running cuse_bsg serves it"
			    : "no running cuse_bsg serves a node you may open");
	return cl.failed || (arg && !cl.shown) ? 1 : 0;
}
