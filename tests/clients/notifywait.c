// SPDX-License-Identifier: GPL-2.0-only
/*
 * notifywait: listen where a service manager would, for tests/vm/udev.sh.
 *
 *   notifywait SOCKET NODE SECONDS
 *
 * Binds the datagram socket SOCKET (a path, or @name for an abstract one),
 * prints "listening", then for every line of every datagram received prints
 *
 *   pid=PID node=absent|MODE:UID:GID LINE
 *
 * with the sender's pid (from its credentials, as systemd checks
 * NotifyAccess=main) and the state of NODE when the datagram arrived.  Exits
 * 0 after a datagram with STOPPING=1, 1 if none came within SECONDS.
 * Written apart from notify.c on purpose: it checks that module's addresses.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd, on = 1;

	if (len >= sizeof(sa.sun_path) || (name[0] != '/' && name[0] != '@')) {
		fprintf(stderr, "notifywait: bad socket name %s\n", name);
		return -1;
	}
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++; /* the NUL */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len) < 0) {
		fprintf(stderr, "notifywait: %s: %s\n", name, strerror(errno));
		return -1;
	}
	return fd;
}

static void node_state(const char *node, char *buf, size_t size)
{
	struct stat st;

	if (stat(node, &st) < 0)
		snprintf(buf, size, "absent");
	else
		snprintf(buf, size, "%04o:%u:%u", (unsigned)(st.st_mode & 07777),
			 (unsigned)st.st_uid, (unsigned)st.st_gid);
}

/* One datagram: its lines printed; 1 if it said STOPPING=1. */
static int take(int fd, const char *node)
{
	char buf[4096], state[64], ctl[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	struct cmsghdr *c;
	int pid = -1, stop = 0;
	ssize_t n = recvmsg(fd, &mh, 0);

	node_state(node, state, sizeof(state));
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
			pid = ((struct ucred *)CMSG_DATA(c))->pid;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		printf("pid=%d node=%s %s\n", pid, state, line);
		stop |= !strcmp(line, "STOPPING=1");
	}
	fflush(stdout);
	return stop;
}

int main(int argc, char **argv)
{
	time_t end;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: notifywait SOCKET NODE SECONDS\n");
		return 2;
	}
	fd = listen_on(argv[1]);
	if (fd < 0)
		return 1;
	printf("listening\n");
	fflush(stdout);
	end = time(NULL) + atoi(argv[3]);
	while (time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (take(fd, argv[2]) == 1)
			return 0;
	}
	fprintf(stderr, "notifywait: no STOPPING=1 within %s s\n", argv[3]);
	return 1;
}
