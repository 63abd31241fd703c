// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live access policy (policy.h): a table under a reader-writer lock
 * that prefers the writer, so that a reload is not held off for ever by a
 * steady stream of commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

struct policy {
	pthread_rwlock_t lock;
	struct filter_policy cur; /* protected by lock */
};

int policy_new(const struct filter_policy *first, struct policy **ret)
{
	struct policy *p = calloc(1, sizeof(*p));
	pthread_rwlockattr_t attr;
	int err;

	if (!p)
		return -ENOMEM;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	err = pthread_rwlock_init(&p->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	if (err) {
		free(p);
		return -err;
	}
	p->cur = *first;
	*ret = p;
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	pthread_rwlock_destroy(&p->lock);
	free(p);
}

void policy_replace(struct policy *p, const struct filter_policy *next)
{
	pthread_rwlock_wrlock(&p->lock);
	p->cur = *next;
	pthread_rwlock_unlock(&p->lock);
}

int policy_check(struct policy *p, int kernel, const uint8_t *cdb, unsigned cdb_len,
		 const struct filter_ctx *ctx)
{
	int ret;

	if (!p)
		return filter_check_as(NULL, FILTER_KERNEL_BSG, cdb, cdb_len, ctx);
	pthread_rwlock_rdlock(&p->lock);
	ret = filter_check_as(
		&p->cur, kernel == POLICY_KERNEL_OWN ? p->cur.kernel : (enum filter_kernel)kernel,
		cdb, cdb_len, ctx);
	pthread_rwlock_unlock(&p->lock);
	return ret;
}

/* The file's bytes, one more than the parser takes: -errno and why. */
static int read_text(const char *path, char *text, size_t *len, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int err;

	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot open the policy %s: %s", path, strerror(-err));
		return err;
	}
	err = fstat(fd, &st) < 0 ? -errno : 0;
	if (!err && !S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	while (!err && got < FILTER_TEXT_MAX + 1) {
		n = read(fd, text + got, FILTER_TEXT_MAX + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (err == -EINVAL)
		snprintf(why, why_len, "policy %s: not a regular file", path);
	else if (err)
		snprintf(why, why_len, "policy %s: %s", path, strerror(-err));
	*len = got;
	return err;
}

int policy_load(const char *path, struct filter_policy *ret, char *why, size_t why_len)
{
	char *text = malloc(FILTER_TEXT_MAX + 1), reason[256];
	size_t len = 0;
	int err;

	if (!text) {
		snprintf(why, why_len, "policy %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = read_text(path, text, &len, why, why_len);
	if (!err) {
		err = filter_parse(text, len, ret, reason, sizeof(reason));
		if (err)
			snprintf(why, why_len, "policy %s: %s", path, reason);
	}
	free(text);
	return err;
}
