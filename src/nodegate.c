// SPDX-License-Identifier: GPL-2.0-only
/*
 * A node's credential gate (nodegate.h).  The proof is made on the node
 * itself, by this process: its own open of /dev/NAME, still devtmpfs's
 * 0600 root:root, and a forked child's read() (gate_prove()).  Runs on the
 * libfuse worker of init_done, while the node's other workers answer the
 * proof's calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bsgdev.h"
#include "gate.h"
#include "nodegate.h"

int nodegate_arm(struct gate *g, struct bsgdev *d, dev_t dev)
{
	int err = gate_arm(g, dev, d->name);

	if (err)
		bsgdev_log(d, LOG_ERR, "cannot arm the credential gate for /dev/%s: %s", d->name,
			   strerror(-err));
	return err;
}

/*
 * The first node of a process proves the gate live: the child's read()
 * must be refused, by the kernel, or by us on the witness's verdict.  Not
 * live: the /proc check, or (kernel, witness) no node.
 */
static int prove(struct gate *g, bool required, struct bsgdev *d, dev_t dev)
{
	char path[160], why[256];
	int fd, err;

	if (gate_live(g))
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", d->name);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); /* each hook: read, write, ioctl */
	if (fd < 0) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot open /dev/%s to prove the gate: %s", d->name,
			 strerror(errno));
	} else {
		err = gate_prove(g, fd, dev, &d->stats[STAT_READ], why, sizeof(why));
		close(fd);
	}
	bsgdev_log(d, err ? (required ? LOG_ERR : LOG_WARNING) : LOG_INFO, "credential check: %s%s",
		   why, !err || required ? "" : "; the /proc check serves instead");
	return required ? err : 0;
}

int nodegate_prove(struct gate *g, bool required, struct bsgdev *d, dev_t dev)
{
	int err;

	d->verdicts = gate_verdicts(g); /* read from the proof on (none: /proc) */
	atomic_store(&d->cred, gate_loaded(g) == GATE_SEEN ? GATE_SEEN : GATE_NONE);
	err = prove(g, required, d, dev);
	atomic_store(&d->cred, (int)gate_live(g));
	return err;
}
