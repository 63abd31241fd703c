/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Readiness for a service manager: the datagram protocol of systemd's
 * Type=notify services, spoken directly (no libsystemd).  NOTIFY_SOCKET names
 * an AF_UNIX datagram socket, a path or, with a leading '@', an abstract
 * name; each message is one datagram of VARIABLE=value lines.  Without
 * NOTIFY_SOCKET every call is a no-op.  Called from one thread at a time.
 */
#ifndef CUSE_BSG_NOTIFY_H
#define CUSE_BSG_NOTIFY_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/*
 * Pure: the address for the NOTIFY_SOCKET value name.  -EINVAL unless name
 * starts with '/' or '@' (and is more than the '@'); -ENAMETOOLONG if it
 * does not fit sun_path.
 */
int notify_addr(const char *name, struct sockaddr_un *ret, socklen_t *ret_len);

/* Pure: "READY=1\nSTATUS=serving /dev/NODE\n" into buf; -ENAMETOOLONG if cut. */
int notify_ready_msg(char *buf, size_t size, const char *node);

/* Send msg to NOTIFY_SOCKET: 1 sent, 0 no NOTIFY_SOCKET, or -errno. */
int notify_send(const char *msg);

#endif /* CUSE_BSG_NOTIFY_H */
