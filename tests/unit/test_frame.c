/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frame codecs: byte layout, round trips, ICRC against an independent bitwise CRC-32,
 * every truncation of valid frames and random bytes (exact-size heap buffers, so ASan
 * sees any read past the end). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/frame.h"

static const struct frame_addr host_a = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ip = 0x0a000001, .port = 0xc123 };
static const struct frame_addr host_b = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0b }, .ip = 0x0a000002, .port = 9000 };

/* Reflected CRC-32 (poly 0xEDB88320), one bit at a time: no table, no zlib. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* The ICRC as references §9 describes it, written out independently of lib/frame.c:
 * 8 x 0xFF, then IPv4 (TOS, TTL, checksum masked), UDP (checksum masked), BTH (byte 4
 * masked) and the rest of the UDP payload without the last 4 bytes. */
static uint32_t icrc_reference(const uint8_t *f, size_t ip_total)
{
	uint8_t *m = malloc(8 + ip_total);
	uint32_t crc;
	size_t ihl;

	assert_non_null(m);
	memset(m, 0xff, 8);
	memcpy(m + 8, f + 14, ip_total);
	ihl = (size_t)(m[8] & 0x0f) * 4;
	m[8 + 1] = 0xff;
	m[8 + 8] = 0xff;
	m[8 + 10] = m[8 + 11] = 0xff;
	m[8 + ihl + 6] = m[8 + ihl + 7] = 0xff;
	m[8 + ihl + 8 + 4] = 0xff;
	crc = crc32_bitwise(0, m, 8 + ip_total - 4);
	free(m);
	return crc;
}

static uint32_t stored_icrc(const uint8_t *f, size_t end)
{
	return (uint32_t)f[end - 4] | (uint32_t)f[end - 3] << 8 | (uint32_t)f[end - 2] << 16 |
	       (uint32_t)f[end - 1] << 24;
}

static int build_icrc(uint8_t *buf, size_t cap, uint8_t opcode, size_t payload_len,
		      bool no_icrc)
{
	uint8_t payload[2048];
	struct frame_roce_spec s = {
		.src = host_a, .dst = host_b,
		.bth = { .opcode = opcode, .dest_qp = 0x123456, .psn = 0xabcdef, .ackreq = true },
		.reth = { .va = 0x1122334455667788ULL, .rkey = 0xdeadbeef, .dma_len = 4096 },
		.aeth = { .syndrome = 0x1f, .msn = 0x00beef },
		.imm = 0xcafef00d,
		.payload = payload, .payload_len = payload_len, .no_icrc = no_icrc,
	};
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	return frame_build_roce(buf, cap, &s);
}

static int build(uint8_t *buf, size_t cap, uint8_t opcode, size_t payload_len)
{
	return build_icrc(buf, cap, opcode, payload_len, false);
}

static const struct { uint8_t op; size_t payload; } cases[] = {
	{ FRAME_OP_RC_SEND_ONLY, 1024 }, { FRAME_OP_RC_SEND_FIRST, 1024 },
	{ FRAME_OP_RC_SEND_MIDDLE, 1024 }, { FRAME_OP_RC_SEND_LAST, 3 },
	{ FRAME_OP_RC_SEND_ONLY_IMM, 17 }, { FRAME_OP_RC_WRITE_FIRST, 1024 },
	{ FRAME_OP_RC_WRITE_MIDDLE, 1024 }, { FRAME_OP_RC_WRITE_LAST, 2 },
	{ FRAME_OP_RC_WRITE_ONLY, 1 }, { FRAME_OP_RC_WRITE_ONLY_IMM, 0 },
	{ FRAME_OP_RC_WRITE_LAST_IMM, 5 }, { FRAME_OP_RC_ACK, 0 }, { FRAME_OP_CNP, 0 },
	{ FRAME_OP_RC_READ_REQUEST, 0 }, { FRAME_OP_RC_READ_RESP_ONLY, 64 },
};

static void test_roce_layout(void **state)
{
	uint8_t f[2048];
	struct frame_parsed p;
	int n;
	(void)state;

	n = build(f, sizeof(f), FRAME_OP_RC_SEND_ONLY, 1024);
	/* 14 + 20 + 8 + 12 + 1024 + 4 = 1082 */
	assert_int_equal(n, 1082);
	assert_int_equal(f[12], 0x08);
	assert_int_equal(f[13], 0x00);
	assert_int_equal(f[14], 0x45);
	assert_int_equal(f[15], 0x00);          /* TOS 0 like rxe */
	assert_int_equal(f[16] << 8 | f[17], 1068);
	assert_int_equal(f[20], 0x40);          /* DF */
	assert_int_equal(f[22], 64);            /* TTL */
	assert_int_equal(f[23], 17);
	assert_int_equal(f[34] << 8 | f[35], 0xc123);
	assert_int_equal(f[36] << 8 | f[37], 4791);
	assert_int_equal(f[38] << 8 | f[39], 1048);
	assert_int_equal(f[40] | f[41], 0);     /* UDP checksum 0 */
	assert_int_equal(f[42], FRAME_OP_RC_SEND_ONLY);
	assert_int_equal(f[43], 0x00);          /* SE 0, M 0, pad 0, tver 0 */
	assert_int_equal(f[44] << 8 | f[45], 0xffff);
	assert_int_equal(f[46], 0);
	assert_int_equal(f[47] << 16 | f[48] << 8 | f[49], 0x123456);
	assert_int_equal(f[50], 0x80);          /* AckReq */
	assert_int_equal(f[51] << 16 | f[52] << 8 | f[53], 0xabcdef);
	assert_int_equal(frame_ipv4_csum(f + 14, 20), 0);
	assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
	assert_true(p.layers & FRAME_L_ROCE);
	assert_int_equal(p.payload_off, 54);
	assert_int_equal(p.payload_len, 1024);
	assert_true(frame_icrc_ok(f, &p));
}

/* no_icrc (virtual time's --icrc off): the same frame, byte for byte, but the four ICRC
 * bytes, which are 0, so a check of it fails. */
static void test_no_icrc(void **state)
{
	uint8_t f[2048], g[2048];
	struct frame_parsed p;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = build(f, sizeof(f), cases[i].op, cases[i].payload);
		int m = build_icrc(g, sizeof(g), cases[i].op, cases[i].payload, true);

		assert_true(n > 0);
		assert_int_equal(m, n);
		assert_int_equal(frame_parse(&p, g, (size_t)m), 0);
		size_t end = (size_t)p.udp_off + p.udp.len;
		assert_memory_equal(f, g, end - 4);
		assert_memory_equal(f + end, g + end, (size_t)n - end);
		assert_int_equal(stored_icrc(g, end), 0);
		assert_int_not_equal(stored_icrc(f, end), 0);
		assert_false(frame_icrc_ok(g, &p));
	}
}

static void test_roce_round_trip_and_icrc(void **state)
{
	uint8_t f[2048];
	struct frame_parsed p;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct frame_opinfo *op = frame_opinfo(cases[i].op);
		int n = build(f, sizeof(f), cases[i].op, cases[i].payload);
		size_t end;

		assert_true(n > 0);
		assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
		assert_true(p.layers & FRAME_L_ROCE);
		assert_int_equal(p.bth.opcode, cases[i].op);
		assert_int_equal(p.bth.dest_qp, 0x123456);
		assert_int_equal(p.bth.psn, 0xabcdef);
		assert_int_equal(p.payload_len,
				 cases[i].op == FRAME_OP_CNP ? FRAME_CNP_PAYLOAD : cases[i].payload);
		assert_int_equal((p.payload_len + p.bth.pad) % 4, 0);
		if (op->ext & FRAME_X_RETH) {
			assert_int_equal(p.reth.va, 0x1122334455667788ULL);
			assert_int_equal(p.reth.rkey, 0xdeadbeef);
			assert_int_equal(p.reth.dma_len, 4096);
		}
		if (op->ext & FRAME_X_AETH) {
			assert_int_equal(p.aeth.syndrome, 0x1f);
			assert_int_equal(p.aeth.msn, 0xbeef);
		}
		if (op->ext & FRAME_X_IMMDT)
			assert_int_equal(p.imm, 0xcafef00d);
		end = (size_t)p.udp_off + p.udp.len;
		assert_int_equal(stored_icrc(f, end), icrc_reference(f, p.ip.total_len));
		assert_int_equal(frame_icrc(f, &p), p.icrc);
		/* ECN marking changes TOS only: IPv4 checksum and ICRC stay right. */
		frame_ipv4_set_ecn(f + 14, FRAME_ECN_CE);
		assert_int_equal(f[15] & 3, 3);
		assert_int_equal(frame_ipv4_csum(f + 14, 20), 0);
		assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
		assert_true(frame_icrc_ok(f, &p));
		/* A flipped payload bit breaks the ICRC. */
		f[p.bth_off + 12] ^= 0x10;
		assert_false(frame_icrc_ok(f, &p));
	}
	print_message("ICRC matches the bitwise reference for %zu opcodes\n",
		      sizeof(cases) / sizeof(cases[0]));
}

static void test_build_rejects(void **state)
{
	uint8_t f[2048];
	(void)state;
	assert_int_equal(build(f, sizeof(f), FRAME_OP_UD_SEND_ONLY, 10), -EINVAL);
	assert_int_equal(build(f, sizeof(f), FRAME_OP_RC_FETCH_ADD, 0), -EINVAL);
	assert_int_equal(build(f, sizeof(f), 0x1f, 0), -EINVAL);
	assert_int_equal(build(f, 100, FRAME_OP_RC_SEND_ONLY, 1024), -EMSGSIZE);
}

/* Every prefix of a valid frame, in a heap buffer of exactly that size. */
static void check_truncations(const uint8_t *f, size_t n, size_t whole)
{
	for (size_t len = 0; len < n; len++) {
		uint8_t *b = malloc(len ? len : 1);
		struct frame_parsed p;
		int rc;

		memcpy(b, f, len);
		memset(&p, 0x5a, sizeof(p));
		rc = frame_parse(&p, b, len);
		if (len < whole) {
			assert_true(rc < 0);
			assert_int_equal(((uint8_t *)&p)[0], 0x5a); /* untouched */
		}
		free(b);
	}
}

static void test_every_truncation(void **state)
{
	uint8_t f[2048];
	struct frame_parsed p;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = build(f, sizeof(f), cases[i].op, cases[i].payload);
		assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
		check_truncations(f, (size_t)n, p.len);
	}
	int n = frame_build_udp(f, sizeof(f), &host_a, &host_b, NULL, (const uint8_t *)"hi", 2);
	assert_int_equal(n, 60);
	assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
	check_truncations(f, (size_t)n, p.len);
}

#define DEC_WRAP(x) \
	static int dec_##x(void *o, const uint8_t *b, size_t l) { return frame_##x##_decode(o, b, l); }
DEC_WRAP(eth)
DEC_WRAP(ipv4)
DEC_WRAP(udp)
DEC_WRAP(bth)
DEC_WRAP(reth)

static void test_layer_truncations(void **state)
{
	uint8_t f[2048], out[64];
	(void)state;
	int n = build(f, sizeof(f), FRAME_OP_RC_WRITE_FIRST, 8);
	static const struct {
		int (*dec)(void *o, const uint8_t *b, size_t l);
		size_t off, hlen;
	} layers[] = {
		{ dec_eth, 0, 14 },
		{ dec_ipv4, 14, 20 },
		{ dec_udp, 34, 8 },
		{ dec_bth, 42, 12 },
		{ dec_reth, 54, 16 },
	};
	assert_true(n > 0);
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		for (size_t len = 0; len < layers[i].hlen; len++) {
			uint8_t *b = malloc(len ? len : 1);
			memcpy(b, f + layers[i].off, len);
			memset(out, 0x5a, sizeof(out));
			assert_int_equal(layers[i].dec(out, b, len), -EMSGSIZE);
			assert_int_equal(out[0], 0x5a);
			free(b);
		}
		assert_int_equal(layers[i].dec(out, f + layers[i].off, layers[i].hlen),
				 (int)layers[i].hlen);
	}
}

/* The one's-complement sum as RFC 1071 writes it: 16 bits at a time, folded. */
static uint16_t ref_csum(uint32_t sum, const uint8_t *b, size_t len)
{
	uint64_t acc = sum;

	for (size_t i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		acc += (uint32_t)b[len - 1] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

/* frame_csum_add (64-bit native words, carries counted apart, one byte swap) folds to the same checksum as the
 * 16-bit reference for every length 0..1600 at every alignment, all-zero and all-ones
 * buffers and random starting sums included; so does frame_ipv4_csum for every header
 * length 20..60 (its unrolled 20-byte path included) at every alignment. */
static void test_csum_reference(void **state)
{
	static uint8_t buf[1604];
	unsigned checked = 0;
	(void)state;

	srand(777);
	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = (uint8_t)rand();
	for (int fill = 0; fill < 3; fill++) {
		if (fill)
			memset(buf, fill == 1 ? 0 : 0xff, sizeof(buf));
		for (size_t off = 0; off < 4; off++)
			for (size_t len = 0; len <= 1600; len++) {
				uint32_t sum = fill ? 0 : (uint32_t)rand() & 0x3ffff;
				assert_int_equal(frame_csum_fold(frame_csum_add(sum, buf + off, len)),
						 ref_csum(sum, buf + off, len));
				checked++;
			}
		/* frame_ipv4_csum: the unrolled 20-byte header and headers with options */
		for (size_t off = 0; off < 4; off++)
			for (size_t hlen = 20; hlen <= 60; hlen += 4) {
				assert_int_equal(frame_ipv4_csum(buf + off + 7 * hlen, hlen),
						 ref_csum(0, buf + off + 7 * hlen, hlen));
				checked++;
			}
	}
	for (int k = 0; k < 10000; k++) {   /* random headers through the 20-byte path */
		for (size_t i = 0; i < 20; i++)
			buf[i] = (uint8_t)rand();
		assert_int_equal(frame_ipv4_csum(buf, 20), ref_csum(0, buf, 20));
		checked++;
	}
	print_message("checksum: %u sums equal to the 16-bit reference\n", checked);
}

static void test_random_bytes(void **state)
{
	unsigned seed = 12345, parsed = 0, roce = 0;
	(void)state;

	srand(seed);
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand() % 200);
		uint8_t *b = malloc(len ? len : 1);
		struct frame_parsed p;

		for (size_t k = 0; k < len; k++)
			b[k] = (uint8_t)rand();
		/* Steer half of them deep: IPv4, IHL 5, UDP, dport 4791, plausible lengths. */
		if ((i & 1) && len >= 54) {
			b[12] = 0x08; b[13] = 0; b[14] = 0x45; b[20] = 0; b[21] = 0; b[23] = 17;
			b[16] = (uint8_t)((len - 14 - (size_t)(rand() % 3)) >> 8);
			b[17] = (uint8_t)(len - 14 - (size_t)(rand() % 3));
			b[36] = 0x12; b[37] = 0xb7;
			b[38] = (uint8_t)((len - 34 - (size_t)(rand() % 3)) >> 8);
			b[39] = (uint8_t)(len - 34 - (size_t)(rand() % 3));
		}
		if (frame_parse(&p, b, len) == 0) {
			parsed++;
			if (p.layers & FRAME_L_ROCE) {
				roce++;
				assert_true((size_t)p.payload_off + p.payload_len <= len);
				(void)frame_icrc_ok(b, &p);
			}
		}
		free(b);
	}
	print_message("random frames: %u parsed, %u as RoCEv2, of 200000\n", parsed, roce);
	assert_true(roce > 1000);
}

static void test_udp_and_arp(void **state)
{
	uint8_t f[256];
	struct frame_parsed p;
	uint8_t payload[100];
	(void)state;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	int n = frame_build_udp(f, sizeof(f), &host_a, &host_b, NULL, payload, sizeof(payload));
	assert_int_equal(n, 142);
	assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
	assert_int_equal(p.layers, FRAME_L_ETH | FRAME_L_IPV4 | FRAME_L_UDP);
	assert_int_equal(p.udp.sport, 0xc123);
	assert_int_equal(p.payload_len, 100);
	assert_memory_equal(f + p.payload_off, payload, 100);
	/* A right checksum sums, with the pseudo-header, to 0xffff (fold gives 0). */
	uint32_t sum = (host_a.ip >> 16) + (host_a.ip & 0xffff) + (host_b.ip >> 16) +
		       (host_b.ip & 0xffff) + 17 + p.udp.len;
	assert_int_equal(frame_csum_fold(frame_csum_add(sum, f + p.udp_off, p.udp.len)), 0);

	n = frame_build_arp(f, sizeof(f), FRAME_ARP_REQUEST, host_a.mac, host_a.ip,
			    (const uint8_t[6]){ 0 }, host_b.ip);
	assert_int_equal(n, 60);
	assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
	assert_true(p.layers & FRAME_L_ARP);
	assert_int_equal(p.arp.op, FRAME_ARP_REQUEST);
	assert_int_equal(p.arp.spa, host_a.ip);
	assert_int_equal(p.arp.tpa, host_b.ip);
	assert_true(frame_mac_is_multicast(p.eth.dst));
}

static void test_opcode_table(void **state)
{
	(void)state;
	assert_string_equal(frame_opinfo(FRAME_OP_CNP)->name, "CNP");
	assert_true(frame_opinfo(FRAME_OP_RC_WRITE_FIRST)->ext & FRAME_X_RETH);
	assert_true(frame_opinfo(FRAME_OP_RC_WRITE_FIRST)->ext & FRAME_X_DATA);
	assert_false(frame_opinfo(FRAME_OP_RC_ACK)->ext & FRAME_X_DATA);
	assert_false(frame_opinfo(FRAME_OP_CNP)->ext & FRAME_X_DATA);
	assert_int_equal(frame_opinfo(FRAME_OP_RC_WRITE_ONLY_IMM)->ext_len, 20);
	assert_null(frame_opinfo(0x15)->name);
	assert_false(frame_opinfo(0x15)->ext & FRAME_X_KNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roce_layout),
		cmocka_unit_test(test_roce_round_trip_and_icrc),
		cmocka_unit_test(test_no_icrc),
		cmocka_unit_test(test_build_rejects),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_layer_truncations),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_csum_reference),
		cmocka_unit_test(test_udp_and_arp),
		cmocka_unit_test(test_opcode_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
