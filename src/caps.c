// SPDX-License-Identifier: GPL-2.0-only
/*
 * capset(2) directly: the daemon needs three calls of libcap's worth, not
 * another dependency.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

static const char *const cap_names[] = {
	[CAP_CHOWN] = "CAP_CHOWN",
	[CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_FOWNER] = "CAP_FOWNER",
	[CAP_SETGID] = "CAP_SETGID",
	[CAP_SETUID] = "CAP_SETUID",
	[CAP_SYS_RAWIO] = "CAP_SYS_RAWIO",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
	[CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
};

void caps_names(uint64_t set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned cap = 0; cap < 64 && off < len; cap++) {
		const char *name =
			cap < sizeof(cap_names) / sizeof(cap_names[0]) ? cap_names[cap] : NULL;
		int n;

		if (!(set & CAPS_BIT(cap)))
			continue;
		n = name ? snprintf(buf + off, len - off, "%s%s", off ? " " : "", name)
			 : snprintf(buf + off, len - off, "%scap_%u", off ? " " : "", cap);
		off += n > 0 ? (size_t)n : 0;
	}
}

int caps_limit(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	uint64_t eff, prm;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	eff = ((uint64_t)data[1].effective << 32 | data[0].effective) & keep;
	prm = ((uint64_t)data[1].permitted << 32 | data[0].permitted) & keep;
	/* the bounding set needs CAP_SETPCAP, which goes last; without it
	 * (a container may withhold it) the other sets still shrink */
	for (unsigned cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (!(keep & CAPS_BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EPERM && errno != EINVAL)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(data, 0, sizeof(data));
	data[0].effective = (uint32_t)eff;
	data[1].effective = (uint32_t)(eff >> 32);
	data[0].permitted = (uint32_t)prm;
	data[1].permitted = (uint32_t)(prm >> 32);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}
