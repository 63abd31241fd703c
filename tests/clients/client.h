/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the test clients: what several of them need alike.  A failed call
 * ends the client (CLIENT_FAIL_STATUS, 1 unless the client says otherwise
 * before it includes this), an errno by its name, a fork after stdout is
 * flushed (so that the child does not print the parent's buffered lines
 * again), a mapping at a fixed address, a usage line, a READ(10)'s CDB and a v3 or v4 header of one.
 * Header-only, as tasks.h: each client is built from its one file.
 */
#ifndef CUSE_BSG_TEST_CLIENT_H
#define CUSE_BSG_TEST_CLIENT_H

#include <linux/bsg.h>
#include <scsi/sg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef CLIENT_FAIL_STATUS
#define CLIENT_FAIL_STATUS 1
#endif

static inline void die(const char *msg)
{
	perror(msg);
	exit(CLIENT_FAIL_STATUS);
}

static inline const char *err_name(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "E?";
}

static inline pid_t fork_flushed(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	return pid;
}

/* A private mapping of len bytes at addr exactly, every byte fill. */
static inline uint8_t *map_fixed(void *addr, size_t len, int fill)
{
	uint8_t *p = mmap(addr, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != addr)
		die("mmap at the fixed address");
	memset(p, fill, len);
	return p;
}

/* Fewer than n arguments: "usage: " and usage on stderr, and exit status 2. */
static inline void need_args(int argc, int n, const char *usage)
{
	if (argc >= n)
		return;
	fprintf(stderr, "usage: %s\n", usage);
	exit(2);
}

/* A READ(10) of blocks blocks at lba in cdb's first 10 bytes. */
static inline void read10(uint8_t *cdb, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x28;
	cdb[2] = lba >> 24, cdb[3] = lba >> 16, cdb[4] = lba >> 8, cdb[5] = lba;
	cdb[7] = blocks >> 8, cdb[8] = blocks;
}

/* h: a v3 READ(10) (in cdb) of the block at lba, len bytes into buf. */
static inline void v3_read10(struct sg_io_hdr *h, uint8_t *cdb, void *buf, unsigned len,
			     uint32_t lba, unsigned timeout_ms)
{
	memset(h, 0, sizeof(*h));
	h->interface_id = 'S';
	read10(cdb, lba, 1);
	h->cmdp = cdb;
	h->cmd_len = 10;
	h->dxfer_direction = SG_DXFER_FROM_DEV;
	h->dxferp = buf;
	h->dxfer_len = len;
	h->timeout = timeout_ms;
}

/* The same in a v4 header. */
static inline void v4_read10(struct sg_io_v4 *h, uint8_t *cdb, void *buf, unsigned len,
			     uint32_t lba, unsigned timeout_ms)
{
	memset(h, 0, sizeof(*h));
	h->guard = 'Q';
	read10(cdb, lba, 1);
	h->request = (uintptr_t)cdb;
	h->request_len = 10;
	h->din_xferp = (uintptr_t)buf;
	h->din_xfer_len = len;
	h->timeout = timeout_ms;
}

#endif
