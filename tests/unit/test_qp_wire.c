/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The connection message: round trip, every truncation, bad version/magic/fields, and a
 * deterministic mutation fuzz (whatever decodes must re-encode to the same bytes). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/qp_wire.h"

static struct qp_conn_info sample(void)
{
	struct qp_conn_info ci = {
		.qpn = 0x123456, .psn = 0xabcdef, .lid = 0, .mtu_bytes = 1024,
		.rkey = 0xdeadbeef, .addr = 0x00007f0012345678ULL, .len = 1ULL << 33,
	};
	static const uint8_t gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7 };

	memcpy(ci.gid, gid, sizeof(gid));
	return ci;
}

static void test_round_trip(void **state)
{
	struct qp_conn_info in = sample(), out;
	uint8_t buf[64];
	char err[160], text[200];
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };
	(void)state;

	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		in.mtu_bytes = mtus[i];
		assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), QP_WIRE_CONN_BYTES);
		memset(&out, 0x55, sizeof(out));
		assert_int_equal(qp_wire_conn_decode(&out, buf, QP_WIRE_CONN_BYTES, err, sizeof(err)), 0);
		assert_int_equal(out.qpn, in.qpn);
		assert_int_equal(out.psn, in.psn);
		assert_int_equal(out.mtu_bytes, in.mtu_bytes);
		assert_int_equal(out.rkey, in.rkey);
		assert_int_equal(out.addr, in.addr);
		assert_int_equal(out.len, in.len);
		assert_memory_equal(out.gid, in.gid, 16);
	}
	print_message("%s\n", qp_conn_info_str(&out, text, sizeof(text)));
	assert_non_null(strstr(text, "::ffff:10.0.0.7"));
	/* The header check for stream readers gives the length to read. */
	assert_int_equal(qp_wire_conn_peek(buf, QP_WIRE_CONN_HDR_BYTES, err, sizeof(err)),
			 QP_WIRE_CONN_BYTES);
}

static void test_encode_rejects_bad_fields(void **state)
{
	struct qp_conn_info in = sample();
	uint8_t buf[64];
	(void)state;

	assert_int_equal(qp_wire_conn_encode(&in, buf, QP_WIRE_CONN_BYTES - 1), -ENOSPC);
	in.mtu_bytes = 1500;
	assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), -EINVAL);
	in = sample();
	in.qpn = 0x1000000;
	assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), -EINVAL);
	in = sample();
	in.psn = 0x1000000;
	assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), -EINVAL);
}

static void test_every_truncation_rejected(void **state)
{
	struct qp_conn_info in = sample(), out, untouched;
	uint8_t buf[QP_WIRE_CONN_BYTES];
	char err[160];
	(void)state;

	assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), QP_WIRE_CONN_BYTES);
	memset(&untouched, 0x77, sizeof(untouched));
	for (size_t len = 0; len < QP_WIRE_CONN_BYTES; len++) {
		out = untouched;
		err[0] = 0;
		assert_int_equal(qp_wire_conn_decode(&out, buf, len, err, sizeof(err)), -EBADMSG);
		assert_memory_equal(&out, &untouched, sizeof(out)); /* *out only on success */
		assert_true(strlen(err) > 0);
		if (len == 0 || len == QP_WIRE_CONN_BYTES - 1)
			print_message("len %zu: %s\n", len, err);
	}
}

/* Change one byte; expect @rc and a message containing @word. */
static void expect_reject(size_t off, uint8_t val, int rc, const char *word)
{
	struct qp_conn_info in = sample(), out;
	uint8_t buf[QP_WIRE_CONN_BYTES];
	char err[160] = "";

	assert_int_equal(qp_wire_conn_encode(&in, buf, sizeof(buf)), QP_WIRE_CONN_BYTES);
	buf[off] = val;
	assert_int_equal(qp_wire_conn_decode(&out, buf, sizeof(buf), err, sizeof(err)), rc);
	print_message("byte %zu = 0x%02x: %s\n", off, val, err);
	assert_non_null(strstr(err, word));
}

static void test_bad_header_and_fields(void **state)
{
	(void)state;
	expect_reject(2, 2, -EPROTO, "version 2");
	expect_reject(2, 0, -EPROTO, "version 0");
	expect_reject(0, 0x00, -EBADMSG, "magic");
	expect_reject(3, 51, -EBADMSG, "length field 51");
	expect_reject(3, 200, -EBADMSG, "length field 200");
	expect_reject(4, 7, -EBADMSG, "mtu_log2 7");
	expect_reject(4, 13, -EBADMSG, "mtu_log2 13");
	expect_reject(5, 1, -EBADMSG, "reserved");
	expect_reject(8, 1, -EBADMSG, "24 bits");   /* QPN top byte */
	expect_reject(12, 0x80, -EBADMSG, "24 bits"); /* PSN top byte */
}

/* xorshift64*: deterministic, seeded. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void test_mutation_fuzz(void **state)
{
	struct qp_conn_info in = sample(), out;
	uint8_t good[QP_WIRE_CONN_BYTES + 8], buf[sizeof(good)], again[QP_WIRE_CONN_BYTES];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned accepted = 0, rejected = 0;
	char err[160];
	(void)state;

	memset(good, 0xee, sizeof(good));
	assert_int_equal(qp_wire_conn_encode(&in, good, sizeof(good)), QP_WIRE_CONN_BYTES);
	for (unsigned i = 0; i < 200000; i++) {
		size_t len = (size_t)(rng_next(&seed) % (sizeof(buf) + 1));
		unsigned flips = 1 + (unsigned)(rng_next(&seed) % 4);

		memcpy(buf, good, sizeof(buf));
		for (unsigned f = 0; f < flips; f++)
			buf[rng_next(&seed) % sizeof(buf)] = (uint8_t)rng_next(&seed);
		if (qp_wire_conn_decode(&out, buf, len, err, sizeof(err)) != 0) {
			rejected++;
			continue;
		}
		accepted++;
		assert_true(len >= QP_WIRE_CONN_BYTES);
		assert_int_equal(qp_wire_conn_encode(&out, again, sizeof(again)), QP_WIRE_CONN_BYTES);
		assert_memory_equal(again, buf, QP_WIRE_CONN_BYTES);
	}
	print_message("fuzz: %u accepted (each re-encodes byte-exact), %u rejected\n",
		      accepted, rejected);
	assert_true(accepted > 1000 && rejected > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_rejects_bad_fields),
		cmocka_unit_test(test_every_truncation_rejected),
		cmocka_unit_test(test_bad_header_and_fields),
		cmocka_unit_test(test_mutation_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
