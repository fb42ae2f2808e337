/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ICRC's CRC-32 (frame_crc32, ISA-L's crc32_gzip_refl) against zlib's crc32, the
 * reference it replaced on the hot path: every length 0..300 at every offset 0..15 (the
 * folding code's short and unaligned tails), random lengths up to 9,000 at random offsets,
 * chained calls cut at random points (and chains that mix the two), and frame_icrc of
 * random RoCEv2 frames against the independent bitwise ICRC (tests/support/icrc_ref.c).
 * Buffers are exact-size heap copies, so ASan sees any read past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "qpace/frame.h"
#include "qpace/rng.h"
#include "icrc_ref.h"

#define POOL 16384

static uint8_t pool[POOL];

static void fill_pool(struct qp_rng *r)
{
	for (size_t i = 0; i < POOL; i++)
		pool[i] = (uint8_t)qp_rng_next(r);
}

static uint32_t zlib_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc, p, (uInt)n);
}

/* frame_crc32 over an exact-size heap copy of pool[off, off + n), from @crc. */
static uint32_t ours(uint32_t crc, size_t off, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	uint32_t c;

	assert_non_null(b);
	memcpy(b, pool + off, n);
	c = frame_crc32(crc, b, n);
	free(b);
	return c;
}

static void test_short_and_unaligned(void **state)
{
	struct qp_rng r;
	(void)state;

	qp_rng_seed(&r, 1);
	fill_pool(&r);
	for (size_t off = 0; off < 16; off++)
		for (size_t n = 0; n <= 300; n++) {
			assert_int_equal(ours(0, off, n), zlib_crc(0, pool + off, n));
			/* a non-zero start, as the ICRC's second and third calls have */
			assert_int_equal(ours(0xdeadbeefu, off, n),
					 zlib_crc(0xdeadbeefu, pool + off, n));
		}
}

static void test_random_lengths_offsets(void **state)
{
	struct qp_rng r;
	(void)state;

	qp_rng_seed(&r, 2);
	fill_pool(&r);
	for (int i = 0; i < 3000; i++) {
		size_t off = (size_t)qp_rng_below(&r, 64), n = (size_t)qp_rng_below(&r, 9001);
		uint32_t start = i % 3 ? (uint32_t)qp_rng_next(&r) : 0;

		assert_int_equal(ours(start, off, n), zlib_crc(start, pool + off, n));
	}
}

/* One buffer cut into 1-8 pieces at random points: the chained CRC of the pieces is the
 * one-shot CRC, whichever implementation computes each piece. */
static void test_chained(void **state)
{
	struct qp_rng r;
	(void)state;

	qp_rng_seed(&r, 3);
	fill_pool(&r);
	for (int i = 0; i < 2000; i++) {
		size_t off = (size_t)qp_rng_below(&r, 64), n = (size_t)qp_rng_below(&r, 9001);
		unsigned pieces = 1 + (unsigned)qp_rng_below(&r, 8);
		uint32_t want = zlib_crc(0, pool + off, n), got = 0, mixed = 0;
		size_t at = 0;

		for (unsigned k = 0; k < pieces; k++) {
			size_t len = k + 1 == pieces ? n - at : (size_t)qp_rng_below(&r, n - at + 1);

			got = ours(got, off + at, len);
			mixed = k % 2 ? zlib_crc(mixed, pool + off + at, len) : ours(mixed, off + at, len);
			at += len;
		}
		assert_int_equal(at, n);
		assert_int_equal(got, want);
		assert_int_equal(mixed, want);
	}
}

static const uint8_t ops[] = {
	FRAME_OP_RC_SEND_ONLY, FRAME_OP_RC_SEND_MIDDLE, FRAME_OP_RC_SEND_LAST_IMM,
	FRAME_OP_RC_WRITE_FIRST, FRAME_OP_RC_WRITE_MIDDLE, FRAME_OP_RC_WRITE_ONLY_IMM,
	FRAME_OP_RC_ACK, FRAME_OP_CNP, FRAME_OP_RC_READ_REQUEST, FRAME_OP_RC_READ_RESP_ONLY,
};

static void test_icrc_random_frames(void **state)
{
	static uint8_t f[4200];
	struct qp_rng r;
	(void)state;

	qp_rng_seed(&r, 4);
	fill_pool(&r);
	for (int i = 0; i < 2000; i++) {
		struct frame_roce_spec s = {
			.src = { .mac = { 2, 0, 0, 0, 0, 1 }, .ip = (uint32_t)qp_rng_next(&r),
				 .port = (uint16_t)qp_rng_next(&r) },
			.dst = { .mac = { 2, 0, 0, 0, 0, 2 }, .ip = (uint32_t)qp_rng_next(&r) },
			.ip = { .tos = (uint8_t)qp_rng_next(&r), .ttl = (uint8_t)qp_rng_next(&r),
				.id = (uint16_t)qp_rng_next(&r) },
			.bth = { .opcode = ops[qp_rng_below(&r, sizeof(ops))],
				 .dest_qp = (uint32_t)qp_rng_below(&r, 1u << 24),
				 .psn = (uint32_t)qp_rng_below(&r, 1u << 24),
				 .ackreq = qp_rng_below(&r, 2), .fecn = qp_rng_below(&r, 2),
				 .becn = qp_rng_below(&r, 2) },
			.reth = { .va = qp_rng_next(&r), .rkey = (uint32_t)qp_rng_next(&r),
				  .dma_len = 4096 },
			.aeth = { .syndrome = 0x1f, .msn = (uint32_t)qp_rng_below(&r, 1u << 24) },
			.imm = (uint32_t)qp_rng_next(&r),
			.payload = pool + qp_rng_below(&r, 64),
			.payload_len = (size_t)qp_rng_below(&r, 4097),
		};
		struct frame_parsed p;
		uint32_t want;
		uint8_t *g;
		int n;

		if (s.bth.opcode == FRAME_OP_RC_ACK || s.bth.opcode == FRAME_OP_CNP ||
		    s.bth.opcode == FRAME_OP_RC_READ_REQUEST)
			s.payload_len = 0;
		n = frame_build_roce(f, sizeof(f), &s);
		assert_true(n > 0);
		g = malloc((size_t)n);
		assert_non_null(g);
		memcpy(g, f, (size_t)n);
		assert_int_equal(frame_parse(&p, g, (size_t)n), 0);
		assert_true(p.layers & FRAME_L_ROCE);
		assert_true(icrc_ref(g, (size_t)n, &want));
		assert_int_equal(frame_icrc(g, &p), want);
		assert_true(frame_icrc_ok(g, &p));
		/* one bit flipped past the masked headers (BTH's PSN onward) breaks it */
		g[p.bth_off + 9 + qp_rng_below(&r, (uint64_t)(p.udp_off + p.udp.len - 4 -
							    p.bth_off - 9))] ^=
			(uint8_t)(1u << qp_rng_below(&r, 8));
		assert_false(frame_icrc_ok(g, &p));
		free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_and_unaligned),
		cmocka_unit_test(test_random_lengths_offsets),
		cmocka_unit_test(test_chained),
		cmocka_unit_test(test_icrc_random_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
