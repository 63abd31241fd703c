// SPDX-License-Identifier: GPL-2.0-only
/*
 * notify: READY=1 and STOPPING=1 to the service manager, one datagram each.
 * The manager learns the sender's pid from the socket's credentials (it
 * sets SO_PASSCRED), so nothing else needs sending for NotifyAccess=main.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify.h"

int notify_addr(const char *name, struct sockaddr_un *ret, socklen_t *ret_len)
{
	size_t len = strlen(name);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if ((name[0] != '/' && name[0] != '@') || len < 2)
		return -EINVAL;
	/* a path needs its NUL; an abstract name is counted by the length alone */
	if (len + (name[0] == '/') > sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	*ret = sa;
	*ret_len = offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/');
	return 0;
}

int notify_ready_msg(char *buf, size_t size, const char *node)
{
	int n = snprintf(buf, size, "READY=1\nSTATUS=serving /dev/%s\n", node);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int notify_send(const char *msg)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t len;
	ssize_t n;
	int fd, err;

	if (!name || !*name)
		return 0;
	err = notify_addr(name, &sa, &len);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	err = n < 0 ? -errno : 1;
	close(fd);
	return err;
}
