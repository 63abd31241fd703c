// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "ioctl.h"
#include "opener.h"

/* A new opener's own channel; counted first, so that a device going away sees it or it sees gone. */
static int open_chan(struct daemon *d)
{
	daemon_opener_get(d);
	if (atomic_load(&d->target_gone))
		return -ENODEV;
	return d->target->ops->chan_open(d->target);
}

int opener_new(struct daemon *d, int flags, bool shared, pid_t tid, struct uaccess_ident *ident,
	       struct opener **ret)
{
	struct opener *o;
	int err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return ENOMEM;
	o->d = d;
	o->open_flags = flags;
	o->shared = shared;
	o->chan = open_chan(d);
	if (o->chan < 0) {
		err = o->chan;
		if (err != -ENODEV)
			daemon_warn(d, "cannot open %s for a new opener: %s", d->target->info.path,
				    strerror(-err));
		free(o);
		daemon_opener_put(d);
		/* the device node vanishing with the device is sg's ENODEV */
		return err == -ENOENT ? ENODEV : -err;
	}
	ioctl_opener_init(o);
	err = async_opener_init(o, tid, ident);
	if (err) {
		/* deny when unsure: never an opener taken for someone else */
		daemon_warn(d, "tid %d: open refused: its credentials cannot be read: %s", tid,
			    strerror(-err));
		d->target->ops->chan_close(d->target, o->chan);
		free(o);
		daemon_opener_put(d);
		return err == -EMFILE || err == -ENFILE || err == -ENOMEM ? -err : EACCES;
	}
	*ret = o;
	return 0;
}
