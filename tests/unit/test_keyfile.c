/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Key files (qpace/keyfile.h): a good key in every layout, each refused file (missing,
 * unreadable, empty, short, long, two words, bad hex) with its message and the key left as
 * it was, and the warning for a file others can read. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"
#include "qpace/keyfile.h"

#define HEX "00112233445566778899aabbccddeeff"

static const uint8_t want[QP_SIPHASH_KEY_BYTES] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};

static char dir[64], path[128], warned[400];
static unsigned warnings;

static void on_warn(const char *line)
{
	warnings++;
	snprintf(warned, sizeof(warned), "%s", line);
}

static void put(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "keyfile"))
		return -1;
	snprintf(path, sizeof(path), "%s/key", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void test_good(void **state)
{
	static const char *const layouts[] = {
		HEX, HEX "\n", "  \t\n" HEX " \r\n\n", "00112233445566778899AABBCCDDEEFF\n",
		"00112233445566778899AaBbCcDdEeFf",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		uint8_t key[QP_SIPHASH_KEY_BYTES] = { 0 };
		char err[300] = "";

		put(layouts[i], 0600);
		warnings = 0;
		assert_int_equal(qp_keyfile_read(path, key, on_warn, err, sizeof(err)), 0);
		assert_memory_equal(key, want, sizeof(key));
		assert_string_equal(err, "");
		assert_int_equal(warnings, 0);
	}
}

/* @text in the file: refused with @rc and exactly @msg (%s = the path). */
static void refused(const char *text, int rc, const char *msg)
{
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	char err[300] = "", expect[400];

	memset(key, 0x5a, sizeof(key));
	put(text, 0600);
	assert_int_equal(qp_keyfile_read(path, key, on_warn, err, sizeof(err)), rc);
	snprintf(expect, sizeof(expect), msg, path);
	assert_string_equal(err, expect);
	for (size_t i = 0; i < sizeof(key); i++)
		assert_int_equal(key[i], 0x5a);
}

static void test_refused(void **state)
{
	static const char *const words =
		"key file %s: expected 32 hex digits (a 128-bit key, e.g. from `openssl rand -hex "
		"16`) and nothing else";
	(void)state;

	refused("", -EINVAL, words);
	refused("\n\n", -EINVAL, words);
	refused("00112233445566778899aabbccddeef", -EINVAL, words);          /* 31 digits */
	refused(HEX "0", -EINVAL, words);                                   /* 33 digits */
	refused(HEX HEX, -EINVAL, words);                                   /* 64 digits */
	refused(HEX " 00", -EINVAL, words);                                 /* two words */
	refused("0011223344556677 8899aabbccddeeff", -EINVAL, words);
	refused("0x112233445566778899aabbccddeeff", -EINVAL,
		"key file %s: \"0x\" at digit 1 is not hexadecimal");
	refused("00112233445566778899aabbccddeefg", -EINVAL,
		"key file %s: \"fg\" at digit 31 is not hexadecimal");
	refused("00112233445566778899-abbccddeeff", -EINVAL,
		"key file %s: \"-a\" at digit 21 is not hexadecimal");
}

static void test_unreadable(void **state)
{
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	char err[300], missing[160], expect[400];
	(void)state;

	snprintf(missing, sizeof(missing), "%s/none", dir);
	assert_int_equal(qp_keyfile_read(missing, key, on_warn, err, sizeof(err)), -ENOENT);
	snprintf(expect, sizeof(expect), "key file %s: No such file or directory", missing);
	assert_string_equal(err, expect);
	/* a directory opens but does not read */
	assert_int_equal(qp_keyfile_read(dir, key, on_warn, err, sizeof(err)), -EIO);
	snprintf(expect, sizeof(expect), "key file %s: cannot read it", dir);
	assert_string_equal(err, expect);
	/* no message buffer */
	assert_int_equal(qp_keyfile_read(missing, key, NULL, NULL, 0), -ENOENT);
}

static void test_mode_warning(void **state)
{
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	char err[300], expect[400];
	(void)state;

	put(HEX "\n", 0644);
	warnings = 0;
	assert_int_equal(qp_keyfile_read(path, key, on_warn, err, sizeof(err)), 0);
	assert_memory_equal(key, want, sizeof(key));
	assert_int_equal(warnings, 1);
	snprintf(expect, sizeof(expect), "key file %s is readable by others (mode 0644); "
		 "chmod 600 it", path);
	assert_string_equal(warned, expect);

	put(HEX "\n", 0640);                          /* the group is "others" too */
	assert_int_equal(qp_keyfile_read(path, key, on_warn, err, sizeof(err)), 0);
	assert_int_equal(warnings, 2);
	put(HEX "\n", 0400);
	assert_int_equal(qp_keyfile_read(path, key, on_warn, err, sizeof(err)), 0);
	assert_int_equal(warnings, 2);
	put(HEX "\n", 0644);                          /* no hook: read all the same */
	assert_int_equal(qp_keyfile_read(path, key, NULL, err, sizeof(err)), 0);
	assert_int_equal(warnings, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_mode_warning),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
