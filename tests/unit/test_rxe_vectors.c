/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frames captured from kernel rxe (Linux 6.1; tests/vectors/README.md): between two QEMU
 * guests, and from one guest to qpace's soft backend on the host (WRITE with immediate,
 * ACKs and a sequence NAK to a soft requester).
 * First checked with code independent of qpace's own RoCEv2 codec: header fields as rxe
 * sends them, lengths per opcode, and the ICRC computed with zlib's crc32 over the masked
 * packet (references §9); the masking makes the ICRC blind to what a switch may rewrite
 * (TOS/ECN, TTL, IP checksum, FECN/BECN) and to nothing else. Then against qpace's codec
 * (include/qpace/frame.h): it parses each frame, accepts its ICRC, and rebuilds it from
 * the parsed fields byte for byte, as the soft backend must. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "pcap_frames.h"
#include <zlib.h>

#include "qpace/frame.h"

static const char *const vector_files[] = {
	"tests/vectors/rxe-rocev2.pcap",
	"tests/vectors/rxe-soft-interop.pcap",
};
#define MAX_FRAMES 32
#define MAX_FRAME_BYTES PCAP_FRAME_MAX_BYTES
#define ETH_BYTES 14
#define IP_BYTES 20
#define UDP_BYTES 8
#define BTH_BYTES 12
#define ICRC_BYTES 4
#define ROCE_MTU_BYTES 1024

static struct pcap_frame frames[MAX_FRAMES];
static size_t n_frames;

/* Extension headers after the BTH, per opcode (IBTA RC): RETH 16, AETH 4. */
struct opcode_shape {
	uint8_t opcode;
	const char *name;
	size_t ext_bytes;
	int full_mtu; /* payload is exactly one MTU (first/middle packets) */
};

static const struct opcode_shape shapes[] = {
	{ 0x00, "SEND_FIRST", 0, 1 },
	{ 0x01, "SEND_MIDDLE", 0, 1 },
	{ 0x02, "SEND_LAST", 0, 0 },
	{ 0x04, "SEND_ONLY", 0, 0 },
	{ 0x06, "WRITE_FIRST", 16, 1 },
	{ 0x07, "WRITE_MIDDLE", 0, 1 },
	{ 0x08, "WRITE_LAST", 0, 0 },
	{ 0x09, "WRITE_LAST_IMM", 4, 0 },
	{ 0x0a, "WRITE_ONLY", 16, 0 },
	{ 0x0c, "READ_REQUEST", 16, 0 },
	{ 0x0d, "READ_RESPONSE_FIRST", 4, 1 },
	{ 0x0e, "READ_RESPONSE_MIDDLE", 0, 1 },
	{ 0x0f, "READ_RESPONSE_LAST", 4, 0 },
	{ 0x10, "READ_RESPONSE_ONLY", 4, 0 },
	{ 0x11, "ACKNOWLEDGE", 4, 0 },
};

static const struct opcode_shape *shape_of(uint8_t opcode)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (shapes[i].opcode == opcode)
			return &shapes[i];
	return NULL;
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t get32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* CRC-32 over 8 bytes of 0xFF, then IP..end-of-payload with the variant fields masked. */
static uint32_t icrc_of(const struct pcap_frame *f)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t m[MAX_FRAME_BYTES];
	size_t n = f->len - ETH_BYTES - ICRC_BYTES;
	uLong crc;

	memcpy(m, f->b + ETH_BYTES, n);
	m[1] = 0xff;                     /* TOS: DSCP and ECN */
	m[8] = 0xff;                     /* TTL */
	m[10] = m[11] = 0xff;            /* IPv4 header checksum */
	m[IP_BYTES + 6] = m[IP_BYTES + 7] = 0xff; /* UDP checksum */
	m[IP_BYTES + UDP_BYTES + 4] = 0xff;       /* FECN, BECN, reserved */
	crc = crc32(0L, ones, sizeof(ones));
	crc = crc32(crc, m, (uInt)n);
	return (uint32_t)crc;
}

static uint32_t stored_icrc(const struct pcap_frame *f)
{
	return get32le(f->b + f->len - ICRC_BYTES);
}

static int load_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vector_files) / sizeof(vector_files[0]); i++)
		if (pcap_frames_load(vector_files[i], frames, MAX_FRAMES, &n_frames))
			return -1;
	return 0;
}

static void test_headers_as_rxe_sends_them(void **state)
{
	(void)state;
	assert_true(n_frames >= 10);
	for (size_t i = 0; i < n_frames; i++) {
		const struct pcap_frame *f = &frames[i];
		const uint8_t *ip = f->b + ETH_BYTES, *udp = ip + IP_BYTES, *bth = udp + UDP_BYTES;
		const struct opcode_shape *s;
		uint32_t sum = 0;
		size_t payload, pad;

		assert_true(f->len >= ETH_BYTES + IP_BYTES + UDP_BYTES + BTH_BYTES + ICRC_BYTES);
		assert_int_equal(get16(f->b + 12), 0x0800);
		assert_int_equal(ip[0], 0x45);            /* IPv4, no options */
		assert_int_equal(ip[1], 0);               /* TOS 0: no ECT */
		assert_int_equal(ip[8], 64);              /* TTL */
		assert_int_equal(ip[9], 17);              /* UDP */
		assert_int_equal(get16(ip + 6) & 0x4000, 0x4000); /* DF */
		assert_int_equal(get16(ip + 2), f->len - ETH_BYTES);
		for (size_t k = 0; k < IP_BYTES; k += 2)
			sum += get16(ip + k);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		assert_int_equal(sum, 0xffff);            /* IPv4 header checksum holds */
		assert_int_equal(get16(udp + 2), 4791);
		assert_int_equal(get16(udp + 4), f->len - ETH_BYTES - IP_BYTES);
		assert_int_equal(get16(udp + 6), 0);      /* rxe sends no UDP checksum */
		assert_int_equal(get16(udp) & 0xc000, 0xc000); /* source port 0xC000 + hash */
		assert_int_equal(bth[4], 0);              /* FECN, BECN, reserved */

		s = shape_of(bth[0]);
		assert_non_null(s);
		pad = (bth[1] >> 4) & 3;
		assert_true(f->len >= ETH_BYTES + IP_BYTES + UDP_BYTES + BTH_BYTES + s->ext_bytes +
					      pad + ICRC_BYTES);
		payload = f->len - ETH_BYTES - IP_BYTES - UDP_BYTES - BTH_BYTES - s->ext_bytes - pad -
			  ICRC_BYTES;
		if (s->full_mtu)
			assert_int_equal(payload, ROCE_MTU_BYTES);
		else /* a last packet is a full one when the message is a multiple of the MTU */
			assert_true(payload <= ROCE_MTU_BYTES);
		print_message("  %-22s %4zu bytes, payload %4zu, psn %#08x\n", s->name, f->len,
			      payload, (unsigned)(get16(bth + 9) << 8 | bth[11]));
	}
}

static void test_every_opcode_present(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		size_t found = 0;
		for (size_t i = 0; i < n_frames; i++)
			found += frames[i].b[ETH_BYTES + IP_BYTES + UDP_BYTES] == shapes[k].opcode;
		if (!found)
			print_error("no %s frame in tests/vectors/\n", shapes[k].name);
		assert_true(found > 0);
	}
}

static void test_icrc_matches(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_frames; i++) {
		uint32_t want = stored_icrc(&frames[i]), got = icrc_of(&frames[i]);
		if (got != want)
			print_error("frame %zu: ICRC computed %#010x, stored %#010x\n", i, got, want);
		assert_int_equal(got, want);
	}
	print_message("  %zu frames: computed ICRC == stored ICRC\n", n_frames);
}

/* A switch may set ECN and lower TTL (and so rewrite the IP checksum), or set FECN/BECN:
 * the ICRC must not change. Any other bit — AckReq, PSN, payload — must change it. */
static void test_icrc_masks_only_variant_fields(void **state)
{
	static const size_t variant[] = { 1, 8, 10, 11, IP_BYTES + 6, IP_BYTES + 7,
					  IP_BYTES + UDP_BYTES + 4 };
	(void)state;
	for (size_t i = 0; i < n_frames; i++) {
		struct pcap_frame f = frames[i];
		uint32_t want = stored_icrc(&frames[i]);
		size_t bth = ETH_BYTES + IP_BYTES + UDP_BYTES;

		for (size_t k = 0; k < sizeof(variant) / sizeof(variant[0]); k++)
			f.b[ETH_BYTES + variant[k]] ^= 0x03;
		assert_int_equal(icrc_of(&f), want);

		f = frames[i];
		f.b[bth + 8] ^= 0x80; /* AckReq: covered */
		assert_int_not_equal(icrc_of(&f), want);
		f = frames[i];
		f.b[bth + 11] ^= 0x01; /* PSN */
		assert_int_not_equal(icrc_of(&f), want);
		f = frames[i];
		f.b[f.len - ICRC_BYTES - 1] ^= 0x01; /* last byte before the ICRC */
		assert_int_not_equal(icrc_of(&f), want);
	}
}

/* qpace's parser and builder against rxe: same fields, same ICRC, same bytes. */
static void test_qpace_codec_rebuilds_rxe_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_frames; i++) {
		const struct pcap_frame *f = &frames[i];
		struct frame_parsed p;
		struct frame_roce_spec spec;
		uint8_t out[MAX_FRAME_BYTES];
		int n;

		assert_int_equal(frame_parse(&p, f->b, f->len), 0);
		assert_non_null(p.op);
		assert_int_equal(p.bth.opcode, f->b[ETH_BYTES + IP_BYTES + UDP_BYTES]);
		assert_int_equal(p.len, f->len);
		assert_int_equal(p.icrc, stored_icrc(f));
		assert_true(frame_icrc_ok(f->b, &p));
		assert_int_equal(frame_icrc(f->b, &p), icrc_of(f));

		memset(&spec, 0, sizeof(spec));
		memcpy(spec.src.mac, p.eth.src, FRAME_ETH_ALEN);
		memcpy(spec.dst.mac, p.eth.dst, FRAME_ETH_ALEN);
		spec.src.ip = p.ip.src;
		spec.dst.ip = p.ip.dst;
		spec.src.port = p.udp.sport;
		spec.ip.tos = p.ip.tos;
		spec.ip.ttl = p.ip.ttl;
		spec.ip.id = p.ip.id;
		spec.ip.no_df = !(p.ip.frag & FRAME_IPV4_DF);
		spec.bth = p.bth;
		spec.reth = p.reth;
		spec.aeth = p.aeth;
		spec.imm = p.imm;
		spec.payload = f->b + p.payload_off;
		spec.payload_len = p.payload_len;
		n = frame_build_roce(out, sizeof(out), &spec);
		if (n != (int)f->len || memcmp(out, f->b, f->len) != 0) {
			for (size_t k = 0; n > 0 && k < (size_t)n && k < f->len; k++)
				if (out[k] != f->b[k]) {
					print_error("frame %zu (%s): first difference at byte %zu: "
						    "built %#04x, rxe %#04x\n", i, p.op->name, k,
						    out[k], f->b[k]);
					break;
				}
		}
		assert_int_equal(n, f->len);
		assert_memory_equal(out, f->b, f->len);
	}
	print_message("  %zu frames: frame_parse + frame_build_roce reproduce rxe's bytes\n",
		      n_frames);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headers_as_rxe_sends_them),
		cmocka_unit_test(test_every_opcode_present),
		cmocka_unit_test(test_icrc_matches),
		cmocka_unit_test(test_icrc_masks_only_variant_fields),
		cmocka_unit_test(test_qpace_codec_rebuilds_rxe_frames),
	};
	return cmocka_run_group_tests(tests, load_vectors, NULL);
}
