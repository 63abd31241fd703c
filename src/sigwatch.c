// SPDX-License-Identifier: GPL-2.0-only
/*
 * The signal judge and the watcher of calls whose interrupt ended nothing.
 * The watcher has at most one thread, detached, started by the first entry
 * and gone once none is left.  Each round it takes the entries one at a
 * time: marked firing, the entry is judged and fired with the lock let go,
 * and sigwatch_cancel() waits while its entry is the one firing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "creds.h"
#include "deadline.h"
#include "lockcheck.h"
#include "sigwatch.h"

struct sigwatch {
	pthread_mutex_t lock;
	pthread_cond_t wake;	       /* the thread's: an entry added, or stop */
	pthread_cond_t idle;	       /* an entry fired, or the thread left */
	struct list_head entries;      /* protected by lock: judged, to be judged next tick */
	struct list_head fresh;	       /* protected by lock: to be judged now */
	struct sigwatch_entry *firing; /* protected by lock: being judged or fired */
	bool running;		       /* protected by lock: the thread is there */
	bool stop;		       /* protected by lock */
	bool (*ends_call)(pid_t tid);
};

static int hex_field(const char *text, size_t len, const char *name, uint64_t *ret)
{
	size_t n = strlen(name);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if ((size_t)(line_end - p) > n && !memcmp(p, name, n) && p[n] == ':') {
			char buf[32];
			size_t vlen = (size_t)(line_end - p) - n - 1;
			char *stop;

			if (vlen >= sizeof(buf))
				return -EINVAL;
			memcpy(buf, p + n + 1, vlen);
			buf[vlen] = '\0';
			errno = 0;
			*ret = strtoull(buf, &stop, 16);
			return errno || stop == buf || (*stop && *stop != ' ') ? -EINVAL : 0;
		}
		p = line_end + 1;
	}
	return -EINVAL;
}

int sigwatch_parse(const char *text, size_t len, struct sigwatch_sigs *ret)
{
	struct sigwatch_sigs s;

	if (hex_field(text, len, "SigPnd", &s.pending) ||
	    hex_field(text, len, "ShdPnd", &s.shared) ||
	    hex_field(text, len, "SigBlk", &s.blocked) ||
	    hex_field(text, len, "SigIgn", &s.ignored) || hex_field(text, len, "SigCgt", &s.caught))
		return -EINVAL;
	*ret = s;
	return 0;
}

#define BIT(sig) (1ull << (-1 + (sig)))

/* The signals whose default action neither kills nor dumps core: stop, or ignore. */
static const uint64_t dfl_harmless = BIT(SIGSTOP) | BIT(SIGTSTP) | BIT(SIGTTIN) | BIT(SIGTTOU) |
				     BIT(SIGCHLD) | BIT(SIGCONT) | BIT(SIGURG) | BIT(SIGWINCH);

bool sigwatch_sigs_end_call(const struct sigwatch_sigs *s)
{
	/* SIGKILL cannot be blocked, caught or ignored: SigBlk never holds it */
	uint64_t live = (s->pending | s->shared) & (~s->blocked | BIT(SIGKILL));

	if (live & s->caught)
		return true;
	return (live & ~s->ignored & ~dfl_harmless) != 0;
}

bool sigwatch_ends_call(pid_t tid)
{
	char path[32], stack[4096], *text = stack;
	size_t size = sizeof(stack);
	struct sigwatch_sigs s;
	ssize_t n;
	bool ends;
	int fd;

	/* the whole text: the signal lines come after the groups, whose length varies */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = tid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return true;
	n = creds_read_text(fd, &text, &size, stack);
	close(fd);
	ends = n <= 0 || sigwatch_parse(text, (size_t)n, &s) || sigwatch_sigs_end_call(&s);
	if (text != stack)
		free(text);
	return ends;
}

int sigwatch_new(bool (*ends_call)(pid_t tid), struct sigwatch **ret)
{
	struct sigwatch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&w->idle, NULL);
	list_init(&w->entries);
	list_init(&w->fresh);
	w->ends_call = ends_call;
	*ret = w;
	return 0;
}

/* Caller holds w->lock: the next entry to judge, off its list and firing, or NULL. */
static struct sigwatch_entry *take_fresh(struct sigwatch *w)
{
	struct sigwatch_entry *e = list_first_entry_or_null(&w->fresh, struct sigwatch_entry, node);

	assert_held(&w->lock);
	if (e) {
		list_del(&e->node);
		list_init(&e->node);
		w->firing = e;
	}
	return e;
}

/* Caller holds w->lock: judge e (firing), fire it or put it back to wait a tick. */
static void judge(struct sigwatch *w, struct sigwatch_entry *e)
{
	bool ends = w->stop;

	assert_held(&w->lock);
	pthread_mutex_unlock(&w->lock);
	ends = ends || w->ends_call(e->tid);
	if (ends)
		e->fire(e->req, e->data); /* e may be gone after this */
	pthread_mutex_lock(&w->lock);
	if (!ends)
		list_add_tail(&e->node, &w->entries);
	w->firing = NULL;
	pthread_cond_broadcast(&w->idle);
}

static void next_tick(struct sigwatch *w)
{
	struct timespec t = deadline_ms(CLOCK_MONOTONIC, SIGWATCH_TICK_MS);

	while (!w->stop && list_empty(&w->fresh))
		if (pthread_cond_timedwait(&w->wake, &w->lock, &t) == ETIMEDOUT)
			break;
	list_splice_tail(&w->entries, &w->fresh);
	list_init(&w->entries);
}

static void *watch_main(void *arg)
{
	struct sigwatch *w = arg;
	struct sigwatch_entry *e;

	pthread_setname_np(pthread_self(), "bsg-sigwatch"); /* top -H, ps -L */
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		while (!w->stop && (e = take_fresh(w)))
			judge(w, e);
		if (list_empty(&w->entries))
			break;
		next_tick(w);
	}
	w->running = false;
	pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int sigwatch_add(struct sigwatch *w, struct sigwatch_entry *e)
{
	pthread_attr_t attr;
	pthread_t t;
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (!w->running && !w->stop) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		err = -pthread_create(&t, &attr, watch_main, w);
		pthread_attr_destroy(&attr);
		w->running = !err;
	}
	if (!err && w->stop)
		err = -ESHUTDOWN;
	if (!err) {
		e->w = w;
		list_add_tail(&e->node, &w->fresh);
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

int sigwatch_watch(struct sigwatch *_Atomic *slot, bool (*ends_call)(pid_t tid),
		   struct sigwatch_entry *e)
{
	struct sigwatch *w = atomic_load(slot), *mine;
	int err;

	if (!ends_call)
		return -ENOSYS;
	if (!w) {
		err = sigwatch_new(ends_call, &mine);
		if (err)
			return err;
		if (atomic_compare_exchange_strong(slot, &w, mine))
			w = mine;
		else
			sigwatch_free(mine); /* another was first: w is its */
	}
	return sigwatch_add(w, e);
}

void sigwatch_cancel(struct sigwatch_entry *e)
{
	struct sigwatch *w = e->w;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	while (w->firing == e)
		pthread_cond_wait(&w->idle, &w->lock);
	/* a judged entry is on a list; a fired one, or one taken off, is on none */
	list_del(&e->node);
	list_init(&e->node);
	pthread_mutex_unlock(&w->lock);
}

void sigwatch_free(struct sigwatch *w)
{
	struct sigwatch_entry *e;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	while (w->running)
		pthread_cond_wait(&w->idle, &w->lock);
	list_splice_tail(&w->entries, &w->fresh);
	list_init(&w->entries);
	while ((e = take_fresh(w)))
		judge(w, e); /* stop: each is fired */
	pthread_mutex_unlock(&w->lock);
	pthread_cond_destroy(&w->idle);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
