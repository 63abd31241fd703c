// SPDX-License-Identifier: GPL-2.0-only
/*
 * notify: the NOTIFY_SOCKET address rules, the readiness message, and one
 * datagram end to end through a socket bound here (no root needed).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

TestSuite(notify, .timeout = 10);

#define SUN_OFF offsetof(struct sockaddr_un, sun_path)

Test(notify, path_keeps_its_nul)
{
	struct sockaddr_un sa;
	socklen_t len;

	cr_assert(eq(int, notify_addr("/run/systemd/notify", &sa, &len), 0));
	cr_assert(eq(int, sa.sun_family, AF_UNIX));
	cr_assert(eq(str, sa.sun_path, "/run/systemd/notify"));
	cr_assert(eq(u32, len, SUN_OFF + sizeof("/run/systemd/notify")));
}

Test(notify, at_sign_is_an_abstract_name)
{
	struct sockaddr_un sa;
	socklen_t len;

	cr_assert(eq(int, notify_addr("@cuse-bsg/test", &sa, &len), 0));
	cr_assert(eq(int, sa.sun_path[0], 0));
	cr_assert(eq(int, memcmp(sa.sun_path + 1, "cuse-bsg/test", 13), 0));
	/* counted by length: no trailing NUL belongs to the name */
	cr_assert(eq(u32, len, SUN_OFF + 14));
}

struct bad_addr {
	const char *name;
	int err;
};

static const struct bad_addr bad_addrs[] = {
	{ "", -EINVAL },
	{ "@", -EINVAL },
	{ "/", -EINVAL },
	{ "run/systemd/notify", -EINVAL },
	{ "vsock:2:1234", -EINVAL },
};

Test(notify, refuses_names_neither_path_nor_abstract)
{
	struct sockaddr_un sa = { 0 };
	socklen_t len = 0;

	for (size_t i = 0; i < sizeof(bad_addrs) / sizeof(bad_addrs[0]); i++) {
		cr_expect(eq(int, notify_addr(bad_addrs[i].name, &sa, &len), bad_addrs[i].err),
			  "%s", bad_addrs[i].name);
		cr_expect(eq(u32, len, 0), "%s wrote the length", bad_addrs[i].name);
	}
}

Test(notify, length_limits_of_sun_path)
{
	struct sockaddr_un sa;
	char name[sizeof(sa.sun_path) + 2];
	socklen_t len;

	/* a path: 107 characters and its NUL fit, 108 do not */
	memset(name, 'a', sizeof(name));
	name[0] = '/';
	name[sizeof(sa.sun_path) - 1] = '\0';
	cr_assert(eq(int, notify_addr(name, &sa, &len), 0));
	name[sizeof(sa.sun_path) - 1] = 'a';
	name[sizeof(sa.sun_path)] = '\0';
	cr_assert(eq(int, notify_addr(name, &sa, &len), -ENAMETOOLONG));
	/* an abstract name: 108 bytes with its leading NUL fit, 109 do not */
	name[0] = '@';
	cr_assert(eq(int, notify_addr(name, &sa, &len), 0));
	cr_assert(eq(u32, len, sizeof(sa)));
	name[sizeof(sa.sun_path)] = 'a';
	name[sizeof(sa.sun_path) + 1] = '\0';
	cr_assert(eq(int, notify_addr(name, &sa, &len), -ENAMETOOLONG));
}

Test(notify, ready_message_names_the_node)
{
	char buf[64];

	cr_assert(eq(int, notify_ready_msg(buf, sizeof(buf), "bsg/sg0-cuse"), 0));
	cr_assert(eq(str, buf, "READY=1\nSTATUS=serving /dev/bsg/sg0-cuse\n"));
	cr_assert(eq(int, notify_ready_msg(buf, 16, "bsg/sg0-cuse"), -ENAMETOOLONG));
}

Test(notify, without_notify_socket_nothing_is_sent)
{
	unsetenv("NOTIFY_SOCKET");
	cr_assert(eq(int, notify_send("READY=1\n"), 0));
	setenv("NOTIFY_SOCKET", "", 1);
	cr_assert(eq(int, notify_send("READY=1\n"), 0));
	setenv("NOTIFY_SOCKET", "relative", 1);
	cr_assert(eq(int, notify_send("READY=1\n"), -EINVAL));
}

/* Bind name (a path or @abstract), send msg through NOTIFY_SOCKET, receive it. */
static void round_trip(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len;
	char buf[128];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0);
	cr_assert(eq(int, notify_addr(name, &sa, &len), 0));
	cr_assert(eq(int, bind(fd, (struct sockaddr *)&sa, len), 0), "bind %s: %s", name,
		  strerror(errno));
	setenv("NOTIFY_SOCKET", name, 1);
	cr_assert(eq(int, notify_send("STOPPING=1\n"), 1));
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	cr_assert(eq(sz, n, 11));
	buf[n] = '\0';
	cr_assert(eq(str, buf, "STOPPING=1\n"));
	close(fd);
}

Test(notify, datagram_reaches_a_path_socket)
{
	char dir[] = "/tmp/test_notify.XXXXXX", path[64];

	cr_assert(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/notify", dir);
	round_trip(path);
	unlink(path);
	rmdir(dir);
}

Test(notify, datagram_reaches_an_abstract_socket)
{
	char name[64];

	snprintf(name, sizeof(name), "@cuse-bsg-test-notify-%d", (int)getpid());
	round_trip(name);
}

Test(notify, no_listener_is_an_errno)
{
	setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1);
	cr_assert(eq(int, notify_send("READY=1\n"), -ENOENT));
}
