// SPDX-License-Identifier: GPL-2.0-only
/* bsgadd.c: BSG_IOC_ADD's argument and the file it names, table-driven. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bsgadd.h"

TestSuite(bsgadd, .timeout = 10);

Test(bsgadd, argument_names_a_descriptor_number_or_none)
{
	static const struct {
		uint64_t arg;
		int err, fd;
	} t[] = {
		{ 0, 0, 0 },
		{ 3, 0, 3 },
		{ INT32_MAX, 0, INT32_MAX },
		{ (uint64_t)INT32_MAX + 1, -ENODEV, -7 },
		{ (uint64_t)-1, -ENODEV, -7 }, /* a negative int, sign-extended */
		{ 1ull << 32 | 3, -ENODEV, -7 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int fd = -7;

		cr_expect(eq(int, bsgadd_decode(t[i].arg, &fd), t[i].err), "arg %#llx",
			  (unsigned long long)t[i].arg);
		cr_expect(eq(int, fd, t[i].fd), "arg %#llx", (unsigned long long)t[i].arg);
	}
}

Test(bsgadd, o_path_descriptors_are_ebadf_other_non_devices_einval)
{
	static const struct {
		struct bsgadd_file f;
		int err;
	} t[] = {
		{ { O_RDWR, S_IFCHR | 0600 }, 0 },
		{ { O_RDONLY, S_IFBLK | 0660 }, 0 },
		{ { O_WRONLY | O_NONBLOCK, S_IFCHR }, 0 },
		{ { O_PATH, S_IFCHR | 0600 }, -EBADF },
		{ { O_PATH | O_NOFOLLOW, S_IFBLK | 0600 }, -EBADF },
		{ { O_PATH, S_IFREG | 0644 }, -EBADF },
		{ { O_RDONLY, S_IFREG | 0644 }, -EINVAL },
		{ { O_RDONLY | O_DIRECTORY, S_IFDIR | 0755 }, -EINVAL },
		{ { O_RDWR, S_IFIFO | 0600 }, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *why = "untouched";
		int err = bsgadd_check(&t[i].f, &why);

		cr_expect(eq(int, err, t[i].err), "case %zu", i);
		cr_expect(err ? why != NULL : why == NULL, "a reason with each refusal, case %zu",
			  i);
	}
}

Test(bsgadd, access_mode_names)
{
	cr_expect(eq(str, (char *)bsgadd_mode_name(O_RDONLY | O_NONBLOCK), "read-only"));
	cr_expect(eq(str, (char *)bsgadd_mode_name(O_WRONLY), "write-only"));
	cr_expect(eq(str, (char *)bsgadd_mode_name(O_RDWR | O_EXCL), "read-write"));
	cr_expect(eq(str, (char *)bsgadd_mode_name(O_ACCMODE), "ioctl-only"));
}
