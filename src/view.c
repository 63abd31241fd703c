// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view's client.  It trusts only a socket of root's in a
 * directory of root's (unless named on the command line), and writes what
 * a daemon says to a terminal with no control character but newlines and
 * tabs.  The table and the watch mode ask for rows (show.h), keep the
 * last answer's, and print each row's counts or its rates since then.
 */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "show.h"
#include "view.h"

#define CLIENT_WAIT_S 5	   /* a daemon's answer at most */
#define ROWS_MAX      8192 /* rows of a table kept, of every daemon */
#define WATCH_MAX_S   86400

struct client {
	enum show_form form;
	bool table;
	unsigned watch_s; /* 0: once */
	long count;	  /* answers with --watch; 0: until stopped */
	const char *name; /* NODE, without /dev/; or NULL */
	const char *socket;
	unsigned shown;	  /* daemons that answered with something */
	unsigned daemons; /* that answered at all */
	bool failed;
	bool tty;
	bool headed; /* the table's heading written (once, with stamped lines) */
	/* the table: this answer's rows, and the last one's */
	struct show_row *rows, *prev;
	unsigned nrows, nprev;
	int64_t now_ns, prev_ns;
};

/* The daemon's answer at path, read whole into *ret (malloc'd).  0 or -errno. */
static int ask(const char *path, const struct client *cl, char **ret, size_t *ret_len)
{
	static const char *const forms[] = { "text", "json", "rows" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = CLIENT_WAIT_S };
	size_t cap = SHOW_OUT_MAX + LIVE_REQUEST_MAX, len = 0;
	char req[LIVE_REQUEST_MAX], *buf;
	ssize_t n = 0;
	int fd, err = 0;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >= (int)sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(req, sizeof(req), "%s%s%s\n", forms[cl->form], cl->name ? " " : "",
		 cl->name ? cl->name : "");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	buf = malloc(cap + 1);
	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
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

/* s, len bytes, with no control character but newline and tab. */
static void print_clean(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		putchar((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c);
	}
}

/* A row of an answer kept for the table (past ROWS_MAX: dropped). */
static void keep_rows(struct client *cl, char *body)
{
	char *line, *save = NULL;
	struct show_row r;

	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int64_t t;
		int ret = show_row_parse(line, &r, &t);

		if (ret == 0)
			cl->now_ns = t;
		else if (ret > 0 && cl->nrows < ROWS_MAX)
			cl->rows[cl->nrows++] = r;
	}
}

/* A daemon's answer, printed, kept or said why not. */
static void take_answer(struct client *cl, const char *path, char *buf, size_t len)
{
	char *body = strchr(buf, '\n');

	cl->daemons++;
	if (body && !strncmp(buf, "ok\n", 3)) {
		if (cl->form == SHOW_ROWS) {
			keep_rows(cl, body + 1);
		} else {
			len -= 3;
			if (cl->form == SHOW_JSON && len && body[len] == '\n')
				len--; /* the array's on one line */
			printf("%s", cl->shown ? (cl->form == SHOW_JSON ? "," : "\n") : "");
			print_clean(body + 1, len);
		}
		cl->shown++;
	} else if (!strncmp(buf, "denied\n", 7) && cl->name) {
		fprintf(stderr, "cuse_bsg: %s: permission denied (as to open the node)\n",
			cl->name);
		cl->failed = true;
	} else if (strncmp(buf, "none\n", 5) && strncmp(buf, "denied\n", 7)) {
		fprintf(stderr, "cuse_bsg: %s: no answer\n", path);
		cl->failed = true;
	}
}

/*
 * Is the socket at path one to believe: root's, in a directory of root's
 * that no one else may write to?  (Only a daemon run as root makes one.)
 */
static bool trusted(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != 0)
		return false;
	return lstat(dirname(dir), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	       !(st.st_mode & 022);
}

/* One daemon's answer; asked for every daemon, one that is gone is passed over. */
static void show_one(struct client *cl, const char *path, bool named)
{
	char *buf;
	size_t len;
	int err;

	if (!named && !trusted(path)) {
		fprintf(stderr,
			"cuse_bsg: %s: not root's socket in a directory of root's: passed "
			"over\n",
			path);
		return;
	}
	err = ask(path, cl, &buf, &len);
	if (err == -ECONNREFUSED || err == -ENOENT)
		return; /* a daemon that is gone, or going */
	if (err) {
		fprintf(stderr, "cuse_bsg: %s: %s\n", path, strerror(-err));
		cl->failed = true;
		return;
	}
	take_answer(cl, path, buf, len);
	free(buf);
}

/* Every daemon's answer (or the one's at cl->socket). */
static void ask_all(struct client *cl)
{
	glob_t g = { 0 };

	cl->shown = cl->daemons = cl->nrows = 0;
	cl->failed = false;
	cl->now_ns = 0;
	if (cl->socket) {
		show_one(cl, cl->socket, true);
		return;
	}
	/* a daemon started by hand, and a unit's in its runtime directory */
	glob(LIVE_DIR "/{*,*/*}.sock", GLOB_BRACE, NULL, &g);
	for (size_t i = 0; i < g.gl_pathc; i++)
		show_one(cl, g.gl_pathv[i], false);
	globfree(&g);
}

/* The same row in the last answer, or NULL. */
static const struct show_row *prev_of(const struct client *cl, const struct show_row *r)
{
	for (unsigned i = 0; i < cl->nprev; i++)
		if (show_row_same(&cl->prev[i], r))
			return &cl->prev[i];
	return NULL;
}

static void time_words(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

/*
 * The table: counts once; rates when watching.  On a terminal each answer
 * replaces the last, as top; else each line carries its time.
 */
static void print_table(struct client *cl, bool rates)
{
	char line[512], when[32];
	bool stamp = rates && !cl->tty;

	time_words(cl->now_ns, when, sizeof(when));
	if (rates && cl->tty)
		printf("\033[H\033[J%s, every %u s: rates over the last %.1f s\n\n", when,
		       cl->watch_s, (double)(cl->now_ns - cl->prev_ns) / 1e9);
	if (!stamp || !cl->headed) {
		show_table_head(rates, line, sizeof(line));
		printf("%s%s\n", stamp ? "TIME                 " : "", line);
		cl->headed = true;
	}
	for (unsigned i = 0; i < cl->nrows; i++) {
		const struct show_row *r = &cl->rows[i];
		const struct show_row *p = rates ? prev_of(cl, r) : NULL;

		if (rates && !p && r->kind == 'O')
			continue; /* opened since: its rate next time */
		show_table_line(r, rates ? (p ? p : r) : NULL, cl->now_ns - cl->prev_ns, line,
				sizeof(line));
		printf("%s%s%s\n", stamp ? when : "", stamp ? " " : "", line);
	}
	fflush(stdout);
}

/* The answers of the last round become the previous ones. */
static void swap_rows(struct client *cl)
{
	struct show_row *t = cl->prev;

	cl->prev = cl->rows;
	cl->rows = t;
	cl->nprev = cl->nrows;
	cl->prev_ns = cl->now_ns;
}

static int watch(struct client *cl)
{
	if (cl->form == SHOW_JSON)
		printf("[");
	ask_all(cl);
	if (cl->form == SHOW_JSON)
		printf("]\n");
	fflush(stdout);
	if (!cl->daemons)
		return 1;
	swap_rows(cl);
	for (long n = 0; !cl->count || n < cl->count; n++) {
		sleep(cl->watch_s);
		printf("%s", cl->form == SHOW_JSON ? "[" : "");
		ask_all(cl);
		if (cl->form == SHOW_JSON) {
			printf("]\n"); /* one line each time: a consumer makes the rates */
			fflush(stdout);
			continue;
		}
		print_table(cl, true);
		swap_rows(cl);
	}
	return cl->failed ? 1 : 0;
}

static int client_usage(FILE *f, int status)
{
	fprintf(f, "usage: cuse_bsg --show [--json|--table] [--watch N [--count K]] "
		   "[NODE|SOCKET]\n"
		   "  What each running cuse_bsg (or the one serving /dev/NODE, or\n"
		   "  listening on SOCKET) is doing: its nodes and their devices, their\n"
		   "  commands, data, errors and latency, their openers, its memory and\n"
		   "  threads against their bounds.  Only nodes the caller may open are\n"
		   "  shown.  --table: one line a node and an opener.  --watch N: the\n"
		   "  table's rates every N seconds (with --json: the answers, one line\n"
		   "  every N seconds), K times or until interrupted.\n");
	return status;
}

/* A number in [1, max] from s, or 0. */
static long number(const char *s, long max)
{
	char *end;
	long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	return !*s || *end || errno || v < 1 || v > max ? 0 : v;
}

/* A usage error of --show: one line naming it, as the daemon's own. */
static int usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "cuse_bsg: --show: %s '%s' (see --help)\n", what, arg);
	else
		fprintf(stderr, "cuse_bsg: --show: %s (see --help)\n", what);
	return 2;
}

static int client_args(int argc, char **argv, struct client *cl, const char **arg)
{
	*arg = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json"))
			cl->form = SHOW_JSON;
		else if (!strcmp(a, "--table"))
			cl->table = true;
		else if (!strcmp(a, "--watch") && (cl->watch_s = number(argv[i + 1], WATCH_MAX_S)))
			i++;
		else if (!strcmp(a, "--count") && (cl->count = number(argv[i + 1], 1L << 30)))
			i++;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return client_usage(stdout, -1);
		else if (!strcmp(a, "--watch") || !strcmp(a, "--count"))
			return usage_error("no whole number above 0 after", a);
		else if (a[0] == '-')
			return usage_error("unknown option", a);
		else if (*arg)
			return usage_error("a second NODE", a);
		else
			*arg = a;
	}
	if (cl->table && cl->form == SHOW_JSON)
		return usage_error("--table and --json together", NULL);
	if (cl->count && !cl->watch_s)
		return usage_error("--count without --watch", NULL);
	return 0;
}

static int once(struct client *cl, const char *arg)
{
	printf("%s", cl->form == SHOW_JSON ? "[" : "");
	ask_all(cl);
	if (cl->form == SHOW_ROWS)
		print_table(cl, false);
	printf("%s", cl->form == SHOW_JSON ? "]\n" : "");
	if (!cl->daemons && !cl->failed) {
		fprintf(stderr, "cuse_bsg: no daemon is running\n");
		return 1;
	}
	if (!cl->shown && !cl->failed)
		fprintf(stderr, "cuse_bsg: %s\n",
			arg ? "no running cuse_bsg serves it"
			    : "no running cuse_bsg serves a node you may open");
	return cl->failed || (arg && !cl->shown) ? 1 : 0;
}

int view_main(int argc, char **argv)
{
	struct client cl = { .tty = isatty(STDOUT_FILENO) };
	struct stat st;
	const char *arg;
	int ret = client_args(argc, argv, &cl, &arg);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (arg && arg[0] == '/' && stat(arg, &st) == 0 && S_ISSOCK(st.st_mode))
		cl.socket = arg;
	else
		cl.name = arg && !strncmp(arg, "/dev/", 5) ? arg + 5 : arg;
	if (cl.table || (cl.watch_s && cl.form != SHOW_JSON))
		cl.form = SHOW_ROWS;
	cl.rows = calloc(ROWS_MAX, sizeof(*cl.rows));
	cl.prev = calloc(ROWS_MAX, sizeof(*cl.prev));
	if (!cl.rows || !cl.prev) {
		fprintf(stderr, "cuse_bsg: %s\n", strerror(ENOMEM));
		ret = 1;
	} else if (cl.watch_s) {
		ret = watch(&cl);
		if (!cl.daemons)
			fprintf(stderr, "cuse_bsg: no daemon is running\n");
	} else {
		ret = once(&cl, arg);
	}
	free(cl.rows);
	free(cl.prev);
	return ret;
}
