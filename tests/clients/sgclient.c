// SPDX-License-Identifier: GPL-2.0-only
/*
 * sgclient: a small SG_IO client for the integration suite.  It speaks v4
 * (struct sg_io_v4), which no sg3_utils tool sends to a non-bsg node, and it
 * runs the bad-input table: each case prints one line, so that the output
 * against the kernel's own node and against cuse_bsg's can be diffed.
 *
 *   sgclient v4-inquiry DEV [VPD_PAGE]   INQUIRY through v4, hex dump
 *   sgclient v4-read DEV LBA BLOCKS      READ(10) through v4 to stdout
 *   sgclient v4-write DEV LBA BLOCKS     WRITE(10) through v4 from stdin
 *   sgclient errors-v3 DEV               the v3 bad-input table
 *   sgclient errors-v4 DEV               the v4 bad-input table
 *   sgclient tur DEV N                   N x TEST UNIT READY, prints ops/s
 *   sgclient ioctls DEV                  the informational ioctls' answers
 *   sgclient tur-intr DEV MS             one TEST UNIT READY, SIGALRM after MS ms
 *   sgclient read-loop DEV N BYTES       N x READ(10) of BYTES, prints ops/s
 *   sgclient tur-lines DEV               one TEST UNIT READY per line read on
 *                                        stdin, on the one open file: "ok" or
 *                                        the errno's name, a line each
 *                                        (tur, read-loop: v4 if SGCLIENT_V4 is set)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
#include <linux/fs.h>
#include <scsi/scsi.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define BLOCK	512
#define BAD_PTR ((void *)16)

static int fd;

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320 & -(c & 1));
	}
	return ~c;
}

/* A READ(10), or a WRITE(10) if write. */
static void rw10(uint8_t *cdb, uint32_t lba, uint16_t blocks, bool write)
{
	read10(cdb, lba, blocks);
	if (write)
		cdb[0] = 0x2a;
}

static void v4_init(struct sg_io_v4 *h, uint8_t *cdb, unsigned cdb_len, uint8_t *sense)
{
	memset(h, 0, sizeof(*h));
	h->guard = 'Q';
	h->request = (uintptr_t)cdb;
	h->request_len = cdb_len;
	h->response = (uintptr_t)sense;
	h->max_response_len = 64;
	h->timeout = 20000;
}

static void v4_print(const struct sg_io_v4 *h, const uint8_t *sense)
{
	fprintf(stderr,
		"device_status=0x%x transport_status=0x%x driver_status=0x%x info=0x%x "
		"din_resid=%d dout_resid=%d response_len=%u",
		h->device_status, h->transport_status, h->driver_status, h->info, h->din_resid,
		h->dout_resid, h->response_len);
	for (unsigned i = 0; i < h->response_len && i < 32; i++)
		fprintf(stderr, "%s%02x", i ? " " : " sense=", sense[i]);
	fputc('\n', stderr);
}

static int v4_inquiry(int argc, char **argv)
{
	uint8_t cdb[6] = { 0x12, 0, 0, 0, 255, 0 }, buf[255] = { 0 }, sense[64];
	struct sg_io_v4 h;

	if (argc > 3) {
		cdb[1] = 1;
		cdb[2] = strtol(argv[3], NULL, 0);
	}
	v4_init(&h, cdb, sizeof(cdb), sense);
	h.din_xferp = (uintptr_t)buf;
	h.din_xfer_len = sizeof(buf);
	if (ioctl(fd, SG_IO, &h) < 0)
		die("SG_IO");
	v4_print(&h, sense);
	for (unsigned i = 0; i < sizeof(buf) - h.din_resid; i++)
		printf("%02x%c", buf[i], i % 16 == 15 ? '\n' : ' ');
	printf("\n");
	return h.info & SG_INFO_CHECK ? 3 : 0;
}

static int v4_rw(char **argv, bool write)
{
	uint32_t lba = strtoul(argv[3], NULL, 0);
	unsigned blocks = strtoul(argv[4], NULL, 0);
	size_t len = (size_t)blocks * BLOCK;
	uint8_t cdb[10], sense[64], *buf = calloc(1, len ? len : 1);
	struct sg_io_v4 h;

	if (!buf)
		die("calloc");
	if (write && fread(buf, 1, len, stdin) != len)
		die("short input");
	rw10(cdb, lba, blocks, write);
	v4_init(&h, cdb, sizeof(cdb), sense);
	if (write) {
		h.dout_xferp = (uintptr_t)buf;
		h.dout_xfer_len = len;
	} else {
		h.din_xferp = (uintptr_t)buf;
		h.din_xfer_len = len;
	}
	if (ioctl(fd, SG_IO, &h) < 0)
		die("SG_IO");
	v4_print(&h, sense);
	if (!write && fwrite(buf, 1, len, stdout) != len)
		die("write");
	free(buf);
	return h.info & SG_INFO_CHECK ? 3 : 0;
}

/* One row of a bad-input table: prepare a header, then SG_IO it. */
struct bad_case {
	const char *name;
	void (*prep)(void *hdr, uint8_t *cdb, uint8_t *buf, uint8_t *sense);
};

static uint8_t *ro_page;

static void v3_base(struct sg_io_hdr *h, uint8_t *cdb, uint8_t *buf, uint8_t *sense)
{
	v3_read10(h, cdb, buf, BLOCK, 0, 20000);
	h->sbp = sense;
	h->mx_sb_len = 64;
}

/* A case: its header of type made by base, then what the case changes in it. */
#define BAD_CASE(fn_name, type, base, ...)                                       \
	static void fn_name(void *p, uint8_t *cdb, uint8_t *buf, uint8_t *sense) \
	{                                                                        \
		type *h = p;                                                     \
		base(h, cdb, buf, sense);                                        \
		__VA_ARGS__;                                                     \
	}
#define V3(fn_name, ...) BAD_CASE(fn_name, struct sg_io_hdr, v3_base, __VA_ARGS__)

static struct sg_iovec iov2[2];

V3(v3_ok, (void)0)
V3(v3_interface_id, h->interface_id = 'X')
V3(v3_cmd_len_5, h->cmd_len = 5)
V3(v3_cmd_len_253, h->cmd_len = 253)
V3(v3_cmd_len_40, h->cmd_len = 40)
V3(v3_cmd_len_16, h->cmd_len = 16)
V3(v3_null_cdb, h->cmdp = NULL)
V3(v3_dxfer_256m, h->dxfer_len = 256u << 20)
V3(v3_bad_cdb_ptr, h->cmdp = BAD_PTR)
V3(v3_bad_data_ptr, h->dxferp = BAD_PTR)
V3(v3_ro_data_ptr, h->dxferp = ro_page)
V3(v3_bad_sense_ptr, read10(cdb, 0x7ffffff0, 1); h->sbp = BAD_PTR)
V3(v3_beyond_capacity, read10(cdb, 0x7ffffff0, 1))
V3(v3_bad_direction, h->dxfer_direction = -7)
V3(v3_unknown_dir_no_data, h->dxfer_direction = -7; h->dxfer_len = 0)
V3(v3_hipri_flag, h->flags = 0x800)
V3(v3_iovec_huge, h->iovec_count = 2000; h->dxferp = iov2)
V3(v3_iovec_bad_ptr, h->iovec_count = 2; h->dxferp = BAD_PTR)
V3(v3_iovec_zero, iov2[0].iov_len = iov2[1].iov_len = 0; h->iovec_count = 2; h->dxferp = iov2)
V3(v3_iovec_read, iov2[0] = (struct sg_iovec){ buf, 200 };
   iov2[1] = (struct sg_iovec){ buf + 200, 312 }; h->iovec_count = 2; h->dxferp = iov2)
V3(v3_no_sense_room, read10(cdb, 0x7ffffff0, 1); h->mx_sb_len = 0)
V3(v3_short_sense, read10(cdb, 0x7ffffff0, 1); h->mx_sb_len = 8)

static void v4_base(struct sg_io_v4 *h, uint8_t *cdb, uint8_t *buf, uint8_t *sense)
{
	read10(cdb, 0, 1);
	v4_init(h, cdb, 10, sense);
	h->din_xferp = (uintptr_t)buf;
	h->din_xfer_len = BLOCK;
}

#define V4(fn_name, ...) BAD_CASE(fn_name, struct sg_io_v4, v4_base, __VA_ARGS__)

V4(v4_ok, (void)0)
V4(v4_guard, h->guard = 'X')
V4(v4_protocol, h->protocol = 1)
V4(v4_subprotocol, h->subprotocol = 1)
V4(v4_bidi, h->dout_xferp = (uintptr_t)buf; h->dout_xfer_len = BLOCK)
V4(v4_request_len_40, h->request_len = 40)
V4(v4_bad_request_ptr, h->request = (uintptr_t)BAD_PTR)
V4(v4_bad_din_ptr, h->din_xferp = (uintptr_t)BAD_PTR)
V4(v4_ro_din_ptr, h->din_xferp = (uintptr_t)ro_page)
V4(v4_bad_response_ptr, read10(cdb, 0x7ffffff0, 1); h->response = (uintptr_t)BAD_PTR)
V4(v4_beyond_capacity, read10(cdb, 0x7ffffff0, 1))
V4(v4_short_response, read10(cdb, 0x7ffffff0, 1); h->max_response_len = 8)
V4(v4_write_read_back, rw10(cdb, 1, 1, true); h->din_xfer_len = 0; h->din_xferp = 0;
   memset(buf, 0xa5, BLOCK); h->dout_xferp = (uintptr_t)buf; h->dout_xfer_len = BLOCK)

static const struct bad_case v3_cases[] = {
	{ "v3_ok", v3_ok },
	{ "v3_interface_id", v3_interface_id },
	{ "v3_cmd_len_5", v3_cmd_len_5 },
	{ "v3_cmd_len_253", v3_cmd_len_253 },
	{ "v3_cmd_len_40", v3_cmd_len_40 },
	{ "v3_cmd_len_16", v3_cmd_len_16 },
	{ "v3_null_cdb", v3_null_cdb },
	{ "v3_dxfer_256m", v3_dxfer_256m },
	{ "v3_bad_cdb_ptr", v3_bad_cdb_ptr },
	{ "v3_bad_data_ptr", v3_bad_data_ptr },
	{ "v3_ro_data_ptr", v3_ro_data_ptr },
	{ "v3_bad_sense_ptr", v3_bad_sense_ptr },
	{ "v3_beyond_capacity", v3_beyond_capacity },
	{ "v3_bad_direction", v3_bad_direction },
	{ "v3_unknown_dir_no_data", v3_unknown_dir_no_data },
	{ "v3_hipri_flag", v3_hipri_flag },
	{ "v3_iovec_huge", v3_iovec_huge },
	{ "v3_iovec_bad_ptr", v3_iovec_bad_ptr },
	{ "v3_iovec_zero", v3_iovec_zero },
	{ "v3_iovec_read", v3_iovec_read },
	{ "v3_no_sense_room", v3_no_sense_room },
	{ "v3_short_sense", v3_short_sense },
	{ NULL, NULL },
};

static const struct bad_case v4_cases[] = {
	{ "v4_ok", v4_ok },
	{ "v4_guard", v4_guard },
	{ "v4_protocol", v4_protocol },
	{ "v4_subprotocol", v4_subprotocol },
	{ "v4_bidi", v4_bidi },
	{ "v4_request_len_40", v4_request_len_40 },
	{ "v4_bad_request_ptr", v4_bad_request_ptr },
	{ "v4_bad_din_ptr", v4_bad_din_ptr },
	{ "v4_ro_din_ptr", v4_ro_din_ptr },
	{ "v4_bad_response_ptr", v4_bad_response_ptr },
	{ "v4_beyond_capacity", v4_beyond_capacity },
	{ "v4_short_response", v4_short_response },
	{ "v4_write_read_back", v4_write_read_back },
	{ NULL, NULL },
};

/* A failed command's data-in is undefined (sg may return its reserve buffer's
 * old contents, bsg leaves the caller's bytes): compare only good data. */
static void print_data(unsigned info, const uint8_t *buf)
{
	if (info & SG_INFO_CHECK)
		printf(" data=undefined\n");
	else
		printf(" data=%08x\n", crc32(buf, BLOCK));
}

static void report_v3(const struct sg_io_hdr *h, const uint8_t *buf, const uint8_t *sense)
{
	printf("ok status=0x%x masked=0x%x host=0x%x driver=0x%x info=0x%x resid=%d sb=%u",
	       h->status, h->masked_status, h->host_status, h->driver_status, h->info, h->resid,
	       h->sb_len_wr);
	for (unsigned i = 0; i < h->sb_len_wr; i++)
		printf("%s%02x", i ? "" : ":", sense[i]);
	print_data(h->info, buf);
}

static void report_v4(const struct sg_io_v4 *h, const uint8_t *buf, const uint8_t *sense)
{
	printf("ok device=0x%x transport=0x%x driver=0x%x info=0x%x din_resid=%d "
	       "dout_resid=%d response=%u",
	       h->device_status, h->transport_status, h->driver_status, h->info, h->din_resid,
	       h->dout_resid, h->response_len);
	for (unsigned i = 0; i < h->response_len; i++)
		printf("%s%02x", i ? "" : ":", sense[i]);
	print_data(h->info, buf);
}

static int run_table(const struct bad_case *cases, bool v4)
{
	union {
		struct sg_io_hdr v3;
		struct sg_io_v4 v4;
	} hdr;
	static uint8_t buf[BLOCK], sense[64], cdb[64];

	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro_page == MAP_FAILED)
		die("mmap");
	for (const struct bad_case *c = cases; c->name; c++) {
		memset(buf, 0x5a, sizeof(buf));
		memset(sense, 0, sizeof(sense));
		c->prep(&hdr, cdb, buf, sense);
		printf("%s: ", c->name);
		if (ioctl(fd, SG_IO, &hdr) < 0)
			printf("%s\n", strerrorname_np(errno));
		else if (v4)
			report_v4(&hdr.v4, buf, sense);
		else
			report_v3(&hdr.v3, buf, sense);
	}
	/* the header itself unreadable */
	printf("%s_bad_hdr_ptr: %s\n", v4 ? "v4" : "v3",
	       ioctl(fd, SG_IO, BAD_PTR) < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* One data-in (or no-data) command, v3 or v4 as SGCLIENT_V4 says; returns info. */
static unsigned one_cmd(bool v4, uint8_t *cdb, unsigned cdb_len, uint8_t *buf, unsigned len)
{
	uint8_t sense[32];
	struct sg_io_hdr h3 = { .interface_id = 'S',
				.cmdp = cdb,
				.cmd_len = cdb_len,
				.dxfer_direction = len ? SG_DXFER_FROM_DEV : SG_DXFER_NONE,
				.dxferp = buf,
				.dxfer_len = len,
				.sbp = sense,
				.mx_sb_len = sizeof(sense),
				.timeout = 20000 };
	struct sg_io_v4 h4;

	if (!v4) {
		if (ioctl(fd, SG_IO, &h3) < 0)
			die("SG_IO");
		return h3.info;
	}
	v4_init(&h4, cdb, cdb_len, sense);
	h4.din_xferp = (uintptr_t)buf;
	h4.din_xfer_len = len;
	if (ioctl(fd, SG_IO, &h4) < 0)
		die("SG_IO");
	return h4.info;
}

/* n synchronous commands; prints commands a second. */
static int loop(long n, uint8_t *cdb, unsigned cdb_len, unsigned len)
{
	bool v4 = getenv("SGCLIENT_V4");
	uint8_t *buf = calloc(1, len ? len : 1);
	double t0 = now_s();

	if (!buf)
		die("calloc");
	for (long i = 0; i < n; i++) {
		if (one_cmd(v4, cdb, cdb_len, buf, len) & SG_INFO_CHECK) {
			fprintf(stderr, "command %ld of %ld failed\n", i, n);
			return 3;
		}
	}
	printf("%.0f\n", n / (now_s() - t0));
	free(buf);
	return 0;
}

static int tur(char **argv)
{
	uint8_t cdb[6] = { 0 };

	return loop(strtol(argv[3], NULL, 0), cdb, sizeof(cdb), 0);
}

/* READ(10)s of one size from LBA 0, for the benchmark. */
static int read_loop(char **argv)
{
	long bytes = strtol(argv[4], NULL, 0);
	uint8_t cdb[10];

	if (bytes < BLOCK || bytes % BLOCK || bytes > (1 << 24))
		die("read-loop: BYTES must be a multiple of 512, at most 16 MiB");
	read10(cdb, 0, bytes / BLOCK);
	return loop(strtol(argv[3], NULL, 0), cdb, sizeof(cdb), bytes);
}

/* A client that holds its file open across whatever happens between its lines. */
static int tur_lines(void)
{
	uint8_t cdb[6] = { 0 };
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		struct sg_io_hdr h = { .interface_id = 'S',
				       .cmdp = cdb,
				       .cmd_len = sizeof(cdb),
				       .dxfer_direction = SG_DXFER_NONE,
				       .timeout = 20000 };

		if (ioctl(fd, SG_IO, &h) < 0)
			printf("%s\n", strerrorname_np(errno));
		else
			printf("%s\n", h.info & SG_INFO_CHECK ? "check" : "ok");
	}
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal with a handler (no SA_RESTART) must end a blocked SG_IO with EINTR. */
static int tur_intr(char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value.tv_usec = strtol(argv[3], NULL, 0) * 1000 };
	uint8_t cdb[6] = { 0 };
	struct sg_io_hdr h = { .interface_id = 'S',
			       .cmdp = cdb,
			       .cmd_len = 6,
			       .dxfer_direction = SG_DXFER_NONE,
			       .timeout = 60000 };
	struct timespec t0, t1;
	int r;

	sigaction(SIGALRM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setitimer(ITIMER_REAL, &it, NULL);
	r = ioctl(fd, SG_IO, &h);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s after %ld ms\n", r < 0 ? strerrorname_np(errno) : "completed",
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	return r < 0 && errno == EINTR ? 0 : 1;
}

static void show_int(const char *name, unsigned long req)
{
	int v = -12345;
	int r = ioctl(fd, req, &v);

	if (r < 0)
		printf("%s: %s\n", name, strerrorname_np(errno));
	else
		printf("%s: ret=%d val=%d\n", name, r, v);
}

static void set_int(const char *name, unsigned long req, int v)
{
	printf("%s(%d): %s\n", name, v, ioctl(fd, req, &v) < 0 ? strerrorname_np(errno) : "ok");
}

static int ioctls(void)
{
	struct sg_scsi_id id;
	int idlun[2];
	struct sg_req_info table[SG_MAX_QUEUE];

	show_int("SG_GET_VERSION_NUM", SG_GET_VERSION_NUM);
	printf("SG_GET_TIMEOUT: ret=%d\n", ioctl(fd, SG_GET_TIMEOUT, NULL));
	set_int("SG_SET_TIMEOUT", SG_SET_TIMEOUT, -1);
	set_int("SG_SET_TIMEOUT", SG_SET_TIMEOUT, 1234);
	printf("SG_GET_TIMEOUT: ret=%d\n", ioctl(fd, SG_GET_TIMEOUT, NULL));
	show_int("SG_GET_RESERVED_SIZE", SG_GET_RESERVED_SIZE);
	set_int("SG_SET_RESERVED_SIZE", SG_SET_RESERVED_SIZE, -1);
	set_int("SG_SET_RESERVED_SIZE", SG_SET_RESERVED_SIZE, 65536);
	show_int("SG_GET_RESERVED_SIZE", SG_GET_RESERVED_SIZE);
	set_int("SG_SET_RESERVED_SIZE", SG_SET_RESERVED_SIZE, 1 << 30);
	show_int("SG_GET_RESERVED_SIZE", SG_GET_RESERVED_SIZE);
	show_int("SG_EMULATED_HOST", SG_EMULATED_HOST);
	memset(&id, 0xff, sizeof(id));
	if (ioctl(fd, SG_GET_SCSI_ID, &id) < 0)
		printf("SG_GET_SCSI_ID: %s\n", strerrorname_np(errno));
	else
		printf("SG_GET_SCSI_ID: %d:%d:%d:%d type=%d cmd_per_lun=%d queue_depth=%d "
		       "unused=%d,%d\n",
		       id.host_no, id.channel, id.scsi_id, id.lun, id.scsi_type, id.h_cmd_per_lun,
		       id.d_queue_depth, id.unused[0], id.unused[1]);
	if (ioctl(fd, SCSI_IOCTL_GET_IDLUN, idlun) < 0)
		printf("SCSI_IOCTL_GET_IDLUN: %s\n", strerrorname_np(errno));
	else
		printf("SCSI_IOCTL_GET_IDLUN: dev_id=0x%08x host_unique_id=%d\n", idlun[0],
		       idlun[1]);
	show_int("SCSI_IOCTL_GET_BUS_NUMBER", SCSI_IOCTL_GET_BUS_NUMBER);
	show_int("SG_GET_SG_TABLESIZE", SG_GET_SG_TABLESIZE);
	show_int("SG_GET_ACCESS_COUNT", 0x2289);
	show_int("BLKSECTGET", BLKSECTGET);
	show_int("SG_GET_COMMAND_Q", SG_GET_COMMAND_Q);
	set_int("SG_SET_COMMAND_Q", SG_SET_COMMAND_Q, 7);
	show_int("SG_GET_COMMAND_Q", SG_GET_COMMAND_Q);
	show_int("SG_GET_PACK_ID", SG_GET_PACK_ID);
	show_int("SG_GET_NUM_WAITING", SG_GET_NUM_WAITING);
	set_int("SG_SET_KEEP_ORPHAN", SG_SET_KEEP_ORPHAN, 1);
	show_int("SG_GET_KEEP_ORPHAN", SG_GET_KEEP_ORPHAN);
	show_int("SG_GET_LOW_DMA", SG_GET_LOW_DMA);
	set_int("SG_SET_FORCE_LOW_DMA", SG_SET_FORCE_LOW_DMA, 1);
	set_int("SG_NEXT_CMD_LEN", SG_NEXT_CMD_LEN, 300);
	set_int("SG_NEXT_CMD_LEN", SG_NEXT_CMD_LEN, 12);
	memset(table, 0x55, sizeof(table));
	if (ioctl(fd, SG_GET_REQUEST_TABLE, table) < 0)
		printf("SG_GET_REQUEST_TABLE: %s\n", strerrorname_np(errno));
	else
		printf("SG_GET_REQUEST_TABLE: crc=%08x\n", crc32((uint8_t *)table, sizeof(table)));
	show_int("unknown 0x22ff", 0x22ff);
	printf("SG_GET_VERSION_NUM(bad ptr): %s\n",
	       ioctl(fd, SG_GET_VERSION_NUM, BAD_PTR) < 0 ? strerrorname_np(errno) : "ok");
	return 0;
}

int main(int argc, char **argv)
{
	need_args(argc, 3,
		  "sgclient v4-inquiry|v4-read|v4-write|errors-v3|errors-v4|tur DEV [ARGS]");
	fd = open(argv[2], (getenv("SGCLIENT_RDONLY") ? O_RDONLY : O_RDWR) | O_NONBLOCK);
	if (fd < 0)
		die(argv[2]);
	if (!strcmp(argv[1], "v4-inquiry"))
		return v4_inquiry(argc, argv);
	if (!strcmp(argv[1], "v4-read") && argc == 5)
		return v4_rw(argv, false);
	if (!strcmp(argv[1], "v4-write") && argc == 5)
		return v4_rw(argv, true);
	if (!strcmp(argv[1], "errors-v3"))
		return run_table(v3_cases, false);
	if (!strcmp(argv[1], "errors-v4"))
		return run_table(v4_cases, true);
	if (!strcmp(argv[1], "tur") && argc == 4)
		return tur(argv);
	if (!strcmp(argv[1], "ioctls"))
		return ioctls();
	if (!strcmp(argv[1], "tur-intr") && argc == 4)
		return tur_intr(argv);
	if (!strcmp(argv[1], "read-loop") && argc == 5)
		return read_loop(argv);
	if (!strcmp(argv[1], "tur-lines"))
		return tur_lines();
	fprintf(stderr, "sgclient: unknown command %s\n", argv[1]);
	return 2;
}
