/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who a caller is, in the terms of the kernel's rules: its credentials as
 * /proc/TID/status shows them and the layout of its address space as
 * /proc/TID/stat shows it.  The parsers are pure: text in, struct out; no
 * system calls, no allocation.  ident.c and sigwatch.c open the files
 * and read them whole with creds_read_text(), the one reader here.
 */
#ifndef CUSE_BSG_CREDS_H
#define CUSE_BSG_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CREDS_CAP_SYS_RAWIO 17
#define CREDS_CAP_SYS_ADMIN 21
/* include/linux/proc_ns.h: the inode of the initial user namespace */
#define CREDS_INIT_USER_NS 0xEFFFFFFDu

/*
 * A thread's credentials.  The supplementary groups are not copied: they
 * stay in the text, at groups_off, groups_len bytes (the ids as procfs
 * prints them), so that any number of them is compared exactly.
 */
struct creds {
	pid_t tgid;
	uint32_t uid[4], gid[4]; /* real, effective, saved, filesystem */
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint32_t no_new_privs;
	uint32_t groups_off, groups_len;
};

/*
 * Parse a /proc/TID/status text of len bytes (no NUL needed).  0, or
 * -EINVAL if a field is missing, short or malformed: a caller that cannot
 * be read is never taken for one that can.
 */
int creds_parse_status(const char *buf, size_t len, struct creds *ret);

/*
 * The address-space layout of a /proc/TID/stat text: start_code,
 * end_code, start_stack, start_data, end_data, start_brk, arg_start,
 * arg_end, env_start, env_end.  Every execve() makes a new one (with
 * address-space randomisation, different in every field).  0, or -EINVAL
 * if malformed or hidden (procfs shows a reader without ptrace rights 1, 1
 * and zeroes: nothing to compare).
 */
#define CREDS_LAYOUT_N 10
int creds_parse_stat(const char *buf, size_t len, uint64_t ret[CREDS_LAYOUT_N]);

/* Has the thread with these credentials cap (a CAP_ number) in its effective set? */
bool creds_has_cap(const struct creds *c, unsigned cap);

/* The most of a procfs text read: a status with 65536 groups is under 1 MiB. */
#define CREDS_TEXT_MAX (8u << 20)

ssize_t creds_read_text(int fd, char **buf, size_t *size, const char *stack);

#endif /* CUSE_BSG_CREDS_H */
