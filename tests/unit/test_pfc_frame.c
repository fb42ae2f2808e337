/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The PFC frame (IEEE 802.1Qbb): byte layout, round trip through the encoder, the decoder
 * and frame_parse, every malformed form refused, pause times in quanta at a link's rate,
 * and the receiver's pause timers (qpace/pause.h) with injected time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/frame.h"
#include "qpace/pause.h"
#include "test_rng.h"

static const uint8_t SRC[6] = { 0x02, 0x51, 0x46, 0x00, 0x00, 0x01 };

static struct frame_pfc pfc(uint8_t enable, unsigned prio, uint16_t quanta)
{
	struct frame_pfc f = { .enable = enable };

	memcpy(f.src, SRC, 6);
	f.quanta[prio] = quanta;
	return f;
}

static void test_layout(void **state)
{
	static const uint8_t want[34] = {
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,   /* DA */
		0x02, 0x51, 0x46, 0x00, 0x00, 0x01,   /* SA */
		0x88, 0x08, 0x01, 0x01,               /* MAC control, PFC */
		0x00, 0x08,                           /* class-enable vector: priority 3 */
		0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct frame_pfc f = pfc(1u << 3, 3, 0xffff);
	uint8_t buf[80], zero[26] = { 0 };
	(void)state;

	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(frame_build_pfc(buf, sizeof(buf), &f), FRAME_ETH_MIN);
	assert_memory_equal(buf, want, sizeof(want));
	assert_memory_equal(buf + 34, zero, sizeof(zero));   /* padded with zeros */
	assert_int_equal(buf[60], 0xaa);                     /* and nothing beyond */
	assert_int_equal(frame_build_pfc(buf, FRAME_ETH_MIN - 1, &f), -EMSGSIZE);
	f.src[0] = 0x01;
	assert_int_equal(frame_build_pfc(buf, sizeof(buf), &f), -EINVAL);
}

static void test_round_trip(void **state)
{
	uint64_t r = 42;
	uint8_t buf[FRAME_ETH_MIN];
	struct frame_parsed p;
	struct frame_pfc f, g;
	(void)state;

	for (int n = 0; n < 2000; n++) {
		memcpy(f.src, SRC, 6);
		f.src[5] = (uint8_t)test_rng(&r);
		f.enable = (uint8_t)test_rng(&r);
		for (int i = 0; i < FRAME_PFC_PRIOS; i++)
			f.quanta[i] = (uint16_t)test_rng(&r);
		assert_int_equal(frame_build_pfc(buf, sizeof(buf), &f), FRAME_ETH_MIN);
		memset(&g, 0, sizeof(g));
		assert_int_equal(frame_pfc_decode(&g, buf, sizeof(buf)), FRAME_PFC_LEN);
		assert_memory_equal(&f, &g, sizeof(f));
		assert_int_equal(frame_parse(&p, buf, sizeof(buf)), 0);
		assert_int_equal(p.layers, FRAME_L_ETH | FRAME_L_PFC);
		assert_int_equal(p.eth.ethertype, FRAME_ETHERTYPE_MAC_CONTROL);
		assert_memory_equal(&p.pfc, &f, sizeof(f));
	}
	/* The fields alone (34 bytes, unpadded) decode too. */
	assert_int_equal(frame_pfc_decode(&g, buf, FRAME_PFC_LEN), FRAME_PFC_LEN);
}

/* Every way a frame can fail to be PFC: the decoder refuses it and writes nothing;
 * frame_parse refuses a frame that carries the PFC opcode but is not a valid PFC frame,
 * and passes other MAC control opcodes (802.3x PAUSE) as Ethernet only. */
static void test_malformed(void **state)
{
	struct frame_pfc f = pfc(0x08, 3, 100), g;
	uint8_t good[FRAME_ETH_MIN], buf[FRAME_ETH_MIN];
	struct frame_parsed p;
	static const struct { size_t off; uint8_t val; const char *what; } bad[] = {
		{ 0, 0x03, "DA byte 0" }, { 1, 0x81, "DA byte 1" }, { 2, 0xc3, "DA byte 2" },
		{ 3, 0x01, "DA byte 3" }, { 4, 0x01, "DA byte 4" },
		{ 5, 0x02, "DA 01-80-C2-00-00-02 (slow protocols)" },
		{ 5, 0x00, "DA 01-80-C2-00-00-00 (STP)" },
		{ 6, 0x03, "multicast SA" },
		{ 16, 0x01, "reserved octet of the enable vector" },
		{ 16, 0x80, "reserved octet, top bit" },
	};
	(void)state;

	assert_int_equal(frame_build_pfc(good, sizeof(good), &f), FRAME_ETH_MIN);
	for (size_t len = 0; len < FRAME_PFC_LEN; len++) {
		memset(&g, 0x5a, sizeof(g));
		assert_int_equal(frame_pfc_decode(&g, good, len), -EMSGSIZE);
		assert_int_equal(((uint8_t *)&g)[0], 0x5a);   /* untouched */
		if (len >= FRAME_ETH_HLEN + 2)   /* the opcode says PFC: the parse fails */
			assert_int_equal(frame_parse(&p, good, len), -EMSGSIZE);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, good, sizeof(buf));
		buf[bad[i].off] = bad[i].val;
		print_message("refused: %s\n", bad[i].what);
		assert_int_equal(frame_pfc_decode(&g, buf, sizeof(buf)), -EBADMSG);
		assert_int_equal(frame_parse(&p, buf, sizeof(buf)), -EBADMSG);
	}
	/* Another EtherType or opcode: not PFC. */
	memcpy(buf, good, sizeof(buf));
	buf[13] = 0x09;   /* 0x8809, slow protocols */
	assert_int_equal(frame_pfc_decode(&g, buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(frame_parse(&p, buf, sizeof(buf)), 0);
	assert_int_equal(p.layers, FRAME_L_ETH);
	memcpy(buf, good, sizeof(buf));
	buf[14] = 0x00;   /* opcode 0x0001: 802.3x PAUSE */
	assert_int_equal(frame_pfc_decode(&g, buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(frame_parse(&p, buf, sizeof(buf)), 0);
	assert_int_equal(p.layers, FRAME_L_ETH);
}

static void test_quanta(void **state)
{
	static const struct { uint16_t q; uint64_t bps, ns; } t[] = {
		{ 0xffff, 1000000000ull, 33553920 },    /* 65535 x 512 ns */
		{ 0xffff, 10000000000ull, 3355392 },
		{ 0xffff, 100000000000ull, 335540 },    /* 335539.2 rounded up */
		{ 1, 3000000000ull, 171 },              /* 170.67 */
		{ 1, 100000000ull, 5120 },
		{ 0, 100000000ull, 0 },
		{ 100, 0, 0 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(frame_pfc_quanta_ns(t[i].q, t[i].bps), t[i].ns);
	assert_int_equal(frame_tos_priority(26 << 2), 3);   /* DSCP 26 */
	assert_int_equal(frame_tos_priority((26 << 2) | 3), 3);
	assert_int_equal(frame_tos_priority(0xb8), 5);      /* EF */
	assert_int_equal(frame_tos_priority(0), 0);
}

static void test_pause_timer(void **state)
{
	struct qp_pause s = { 0 };
	struct frame_pfc f;
	(void)state;

	/* 1 Gb/s: a quantum is 512 ns. Pause prio 3 for 100 quanta at t = 1000. */
	f = pfc(0x08, 3, 100);
	f.quanta[4] = 7;   /* not enabled: ignored */
	assert_int_equal(qp_pause_rx(&s, &f, 1000000000ull, 1000), 0x08);
	assert_true(qp_pause_active(&s, 3, 1000));
	assert_true(qp_pause_active(&s, 3, 1000 + 51199));
	assert_false(qp_pause_active(&s, 3, 1000 + 51200));
	assert_false(qp_pause_active(&s, 4, 2000));
	assert_int_equal(qp_pause_until(&s, 3), 52200);
	assert_int_equal(qp_pause_until(&s, 4), 0);
	assert_int_equal(qp_pause_time(&s, 3, 11000), 10000);
	/* A refresh at 21000 restarts the timer: paused until 21000 + 51200. */
	assert_int_equal(qp_pause_rx(&s, &f, 1000000000ull, 21000), 0x08);
	assert_int_equal(qp_pause_until(&s, 3), 72200);
	assert_int_equal(qp_pause_time(&s, 3, 31000), 30000);
	/* XON at 41000 ends it: 40000 ns paused in all, and no more. */
	f.quanta[3] = 0;
	qp_pause_rx(&s, &f, 1000000000ull, 41000);
	assert_false(qp_pause_active(&s, 3, 41000));
	assert_int_equal(qp_pause_until(&s, 3), 0);
	assert_int_equal(qp_pause_time(&s, 3, 1000000), 40000);
	/* A pause that runs out: counted to its end, not to the time asked. */
	f.quanta[3] = 10;
	qp_pause_rx(&s, &f, 1000000000ull, 100000);
	assert_int_equal(qp_pause_time(&s, 3, 200000), 40000 + 5120);
	assert_int_equal(qp_pause_until(&s, 3), 105120);
	qp_pause_expire(&s, 105119);
	assert_int_equal(qp_pause_until(&s, 3), 105120);
	qp_pause_expire(&s, 105120);
	assert_int_equal(qp_pause_until(&s, 3), 0);
	assert_int_equal(qp_pause_time(&s, 3, 300000), 40000 + 5120);
	assert_int_equal(s.pauses[3], 3);
	assert_int_equal(s.xons[3], 1);
	assert_int_equal(s.pauses[4] + s.xons[4], 0);
	/* Several priorities in one frame; out-of-range priorities are never paused. */
	f = pfc(0x81, 0, 1);
	f.quanta[7] = 2;
	qp_pause_rx(&s, &f, 1000000000ull, 500000);
	assert_true(qp_pause_active(&s, 0, 500000) && qp_pause_active(&s, 7, 500600));
	assert_false(qp_pause_active(&s, 0, 500600));
	assert_false(qp_pause_active(&s, 8, 500000));
	assert_int_equal(qp_pause_time(&s, 9, 500000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_quanta),
		cmocka_unit_test(test_pause_timer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
