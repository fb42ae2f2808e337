/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's out-of-band exchange (qpace/pt_wire.h): the key message byte for byte as
 * perftest's KEY_PRINT_FMT_GID prints it (lowercase hex, 108 bytes with the NUL) and back;
 * uppercase hex accepted; every truncation refused without writing; every byte of a key
 * changed to a character its place cannot hold refused; the version, MTU and report
 * fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/pt_wire.h"

/* What perftest 4.5 prints for this QP (sprintf of KEY_PRINT_FMT_GID). */
static const char perftest_key[] =
	"0000:0080:000011:9b2f1c:000006b6:000055d4ace75000:"
	"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01:00000000:";

static const struct pt_key key = {
	.lid = 0, .out_reads = 0x80, .qpn = 0x11, .psn = 0x9b2f1c, .rkey = 0x6b6,
	.vaddr = 0x000055d4ace75000ull,
	.gid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 },
};

static void test_key(void **state)
{
	uint8_t b[PT_KEY_LEN], u[PT_KEY_LEN];
	struct pt_key k;
	(void)state;

	assert_int_equal(sizeof(perftest_key), PT_KEY_LEN);
	assert_int_equal(pt_key_encode(b, &key), PT_KEY_LEN);
	assert_memory_equal(b, perftest_key, PT_KEY_LEN);
	assert_int_equal(pt_key_decode(&k, b, sizeof(b)), PT_KEY_LEN);
	assert_memory_equal(&k, &key, sizeof(k));
	/* uppercase hex (sscanf takes it) */
	memcpy(u, perftest_key, PT_KEY_LEN);
	for (size_t i = 0; i < PT_KEY_LEN; i++)
		if (u[i] >= 'a' && u[i] <= 'f')
			u[i] = (uint8_t)(u[i] - 'a' + 'A');
	assert_int_equal(pt_key_decode(&k, u, sizeof(u)), PT_KEY_LEN);
	assert_memory_equal(&k, &key, sizeof(k));
	/* a QPN beyond 24 bits is not encoded */
	k.qpn = 0x1000000;
	assert_int_equal(pt_key_encode(b, &k), -EINVAL);
}

static void test_key_refusals(void **state)
{
	uint8_t b[PT_KEY_LEN];
	struct pt_key k;
	(void)state;

	for (size_t len = 0; len < PT_KEY_LEN; len++) {
		uint8_t *p = malloc(len ? len : 1);

		memcpy(p, perftest_key, len);
		memset(&k, 0x5a, sizeof(k));
		assert_int_equal(pt_key_decode(&k, p, len), -EMSGSIZE);
		assert_int_equal(k.lid, 0x5a5a);
		free(p);
	}
	/* each place with a character it cannot hold: a colon for a digit, 'g' anywhere,
	 * a digit for a colon or the NUL */
	for (size_t i = 0; i < PT_KEY_LEN; i++) {
		memcpy(b, perftest_key, PT_KEY_LEN);
		b[i] = perftest_key[i] == ':' || perftest_key[i] == 0 ? '7' : 'g';
		memset(&k, 0x5a, sizeof(k));
		assert_int_equal(pt_key_decode(&k, b, sizeof(b)), -EBADMSG);
		assert_int_equal(k.lid, 0x5a5a);
	}
}

static void test_version(void **state)
{
	uint8_t b[PT_VERSION_LEN];
	unsigned v;
	(void)state;

	assert_int_equal(pt_version_encode(b, PT_VERSION), PT_VERSION_LEN);
	assert_int_equal(pt_version_decode(&v, b, sizeof(b)), PT_VERSION_LEN);
	assert_int_equal(v, 606);
	assert_int_equal(pt_version_encode(b, "5.7"), PT_VERSION_LEN);
	assert_int_equal(pt_version_decode(&v, b, sizeof(b)), PT_VERSION_LEN);
	assert_int_equal(v, 570);
	assert_int_equal(pt_version_decode(&v, b, 15), -EMSGSIZE);
	assert_int_equal(pt_version_encode(b, "1234567890123456"), -EINVAL);
	static const char *const bad[] = { "", ".5", "6.", "6.0x", "6.06.1", "a.1", "6.123" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pt_version_encode(b, bad[i]), PT_VERSION_LEN);
		v = 7;
		assert_int_equal(pt_version_decode(&v, b, sizeof(b)), -EBADMSG);
		assert_int_equal(v, 7);
	}
	memcpy(b, "6.06\0\0\0\0\0\0\0\0\0\0\0x", 16);   /* junk after the NUL */
	assert_int_equal(pt_version_decode(&v, b, sizeof(b)), -EBADMSG);
}

static void test_mtu_and_fields(void **state)
{
	uint8_t b[8];
	uint32_t m;
	uint64_t u;
	double d;
	(void)state;

	for (uint32_t mtu = 256; mtu <= 4096; mtu *= 2) {
		assert_int_equal(pt_mtu_encode(b, mtu), PT_MTU_LEN);
		assert_int_equal(pt_mtu_decode(&m, b, 2), PT_MTU_LEN);
		assert_int_equal(m, mtu);
	}
	assert_memory_equal((pt_mtu_encode(b, 1024), b), "3", 2);
	assert_int_equal(pt_mtu_encode(b, 1000), -EINVAL);
	assert_int_equal(pt_mtu_decode(&m, (const uint8_t *)"6", 2), -EBADMSG);
	assert_int_equal(pt_mtu_decode(&m, (const uint8_t *)"33", 2), -EBADMSG);
	assert_int_equal(pt_mtu_decode(&m, (const uint8_t *)"3", 1), -EMSGSIZE);
	pt_u32_encode(b, 4096);
	assert_memory_equal(b, "\0\0\x10\0", 4);
	assert_int_equal(pt_u32_decode(&m, b, 4), 4);
	assert_int_equal(m, 4096);
	pt_u64_encode(b, 65536);
	assert_memory_equal(b, "\0\0\0\0\0\x01\0\0", 8);
	assert_int_equal(pt_u64_decode(&u, b, 8), 8);
	assert_true(u == 65536);
	pt_double_encode(b, 1.5);   /* 0x3ff8000000000000, big-endian */
	assert_memory_equal(b, "\x3f\xf8\0\0\0\0\0\0", 8);
	assert_int_equal(pt_double_decode(&d, b, 8), 8);
	assert_true(d == 1.5);
	memcpy(b, "\x7f\xf8\0\0\0\0\0\0", 8);   /* NaN */
	assert_int_equal(pt_double_decode(&d, b, 8), -EBADMSG);
	assert_int_equal(pt_double_decode(&d, b, 7), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_key_refusals),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_mtu_and_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
