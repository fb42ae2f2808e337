/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "frame6.h"
#include "qpace/bytes.h"

int frame6_build(uint8_t *f, size_t cap, const struct frame6_spec *s)
{
	size_t pad = (4 - s->payload_len % 4) % 4;
	size_t udp_len = FRAME_UDP_HLEN + FRAME_BTH_LEN + s->payload_len + pad + FRAME_ICRC_LEN;
	size_t len = FRAME_ETH_HLEN + FRAME_IPV6_HLEN + udp_len;
	uint8_t *ip = f + FRAME_ETH_HLEN, *udp = ip + FRAME_IPV6_HLEN, *bth = udp + FRAME_UDP_HLEN;
	struct frame_bth b = s->bth;
	uint32_t icrc;

	if (len > cap || udp_len > UINT16_MAX)
		return -EMSGSIZE;
	memset(f, 0, len);
	memcpy(f, s->dst_mac, 6);
	memcpy(f + 6, s->src_mac, 6);
	qp_put16(f + 12, FRAME_ETHERTYPE_IPV6);
	qp_put32(ip, 6u << 28 | (uint32_t)s->tclass << 20 | (s->flow_label & 0xfffff));
	qp_put16(ip + 4, (uint16_t)udp_len);
	ip[6] = FRAME_IPPROTO_UDP;
	ip[7] = 64;
	memcpy(ip + 8, s->src, 16);
	memcpy(ip + 24, s->dst, 16);
	qp_put16(udp, s->sport);
	qp_put16(udp + 2, FRAME_ROCEV2_PORT);
	qp_put16(udp + 4, (uint16_t)udp_len);
	qp_put16(udp + 6, 0x5a5a);   /* masked by the ICRC; nothing here checks it */
	b.pad = (uint8_t)pad;
	if (!b.pkey)
		b.pkey = 0xffff;
	frame_bth_encode(bth, FRAME_BTH_LEN, &b);
	if (s->payload)
		memcpy(bth + FRAME_BTH_LEN, s->payload, s->payload_len);
	else
		memset(bth + FRAME_BTH_LEN, (int)(b.psn & 0xff), s->payload_len);
	icrc = frame_icrc_ipv6(ip, FRAME_IPV6_HLEN + udp_len);
	for (int k = 0; k < 4; k++)
		f[len - 4 + (size_t)k] = (uint8_t)(icrc >> (8 * k));
	return (int)len;
}
