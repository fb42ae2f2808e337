/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the frame parser and everything that reads a frame's bytes (the PFC
 * decoder and its round trip included). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_parsed p;
	union {
		struct frame_eth eth;
		struct frame_arp arp;
		struct frame_ipv4 ip;
		struct frame_ipv6 ip6;
		struct frame_udp udp;
		struct frame_bth bth;
		struct frame_reth reth;
		struct frame_aeth aeth;
		struct frame_pfc pfc;
	} u;
	uint8_t *copy;

	frame_eth_decode(&u.eth, data, size);
	frame_arp_decode(&u.arp, data, size);
	frame_ipv4_decode(&u.ip, data, size);
	frame_ipv6_decode(&u.ip6, data, size);
	frame_udp_decode(&u.udp, data, size);
	frame_bth_decode(&u.bth, data, size);
	frame_reth_decode(&u.reth, data, size);
	frame_aeth_decode(&u.aeth, data, size);
	/* PFC: what decodes re-encodes to the same 34 bytes, and the pause it asks for is
	 * finite at any rate. */
	if (frame_pfc_decode(&u.pfc, data, size) > 0) {
		uint8_t again[FRAME_ETH_MIN];
		if (frame_build_pfc(again, sizeof(again), &u.pfc) != FRAME_ETH_MIN ||
		    memcmp(again, data, FRAME_PFC_LEN))
			abort();
		for (int i = 0; i < FRAME_PFC_PRIOS; i++)
			if (frame_pfc_quanta_ns(u.pfc.quanta[i], 1000) > 65535ull * 512 * 1000000)
				abort();
	}
	if (frame_parse(&p, data, size) == 0) {
		if ((p.layers & FRAME_L_PFC) && p.eth.ethertype != FRAME_ETHERTYPE_MAC_CONTROL)
			abort();
		if (p.layers & FRAME_L_ROCE) {
			(void)frame_icrc_ok(data, &p);
			if ((size_t)p.payload_off + p.payload_len > size)
				abort();
		}
	}
	/* The in-place rewrites work on a copy of exactly the input's size. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	frame_complete_partial_csum(copy, size);
	/* CE into an IPv4 or IPv6 header: the frame still parses the same, ECN now CE, a
	 * good ICRC stays good (it masks TOS and the traffic class), an IPv4 checksum too */
	if (frame_parse(&p, copy, size) == 0 && (p.layers & (FRAME_L_IPV4 | FRAME_L_IPV6))) {
		bool icrc = (p.layers & FRAME_L_ROCE) && frame_icrc_ok(copy, &p);
		bool csum = (p.layers & FRAME_L_IPV4) && !frame_ipv4_csum(copy + p.ip_off, p.ip.hlen);
		struct frame_parsed q;

		frame_ip_set_ecn(copy + p.ip_off, FRAME_ECN_CE);
		if (frame_parse(&q, copy, size) || q.layers != p.layers ||
		    frame_ecn_of(&q) != FRAME_ECN_CE || (icrc && !frame_icrc_ok(copy, &q)) ||
		    (csum && frame_ipv4_csum(copy + q.ip_off, q.ip.hlen)))
			abort();
	}
	free(copy);
	return 0;
}
