/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parsing a frame as RoCEv2 in a tc BPF program (included by tc_egress.bpf.c and
 * tc_ingress.bpf.c): Ethernet / IPv4 or IPv6 / UDP 4791 / BTH, read with
 * bpf_skb_load_bytes so a non-linear skb parses too. The result is QP_TC_C_ROCE with *p
 * filled, or the reason the frame is not RoCEv2 (tc_abi.h, the QP_TC_C_PASS_* values): a
 * VLAN tag, another ethertype, an IP header cut short or impossible, a fragment or IPv6
 * extension header, not UDP, a UDP header cut or longer than IP says, another port, a BTH
 * (and ICRC) that does not fit. BPF-only: include after <bpf/bpf_helpers.h>. */
#ifndef QPACE_ROCE_PARSE_BPF_H
#define QPACE_ROCE_PARSE_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "tc_abi.h"

#define ROCE_IPV6_HLEN 40
#define ROCE_BTH_LEN 12
#define ROCE_ICRC_LEN 4

struct roce_parsed {
	struct qp_tc_key key;        /* destination address (IPv4-mapped), destination QPN */
	__u8 saddr[16];
	__u16 sport;                 /* UDP source port, host order */
	__u8 opcode;                 /* BTH */
	__u8 ipv6;
	__u8 ecn;                    /* the IP header's ECN field, 0..3 */
	__u8 becn;                   /* BTH byte 4's BECN bit */
	__u8 ackreq;                 /* BTH byte 8's AckReq bit */
	__u32 psn;                   /* BTH, 24 bits */
	__u32 bth_off;               /* where the BTH starts: a RETH or an ACK's AETH follows */
	__u32 l4;                    /* offset of the UDP header */
	__u32 ulen;                  /* UDP length (header, BTH, ..., ICRC) */
};

/* The RTT stamps' map (tc_abi.h, qp_rtt): the egress program's, which the ingress
 * program's loader makes its @name share (the same definition in both objects). */
#define ROCE_RTT_MAP(name)                                          \
	struct {                                                    \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);                \
		__uint(max_entries, QP_TC_MAX_RTT);                 \
		__type(key, struct qp_tc_rtt_key);                  \
		__type(value, struct qp_tc_rtt_stamp);              \
	} name SEC(".maps")

static __always_inline void roce_v4_mapped(__u8 out[16], __u32 addr_be)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(out + 12, &addr_be, 4);
}

static __always_inline __u32 roce_parse(struct __sk_buff *skb, struct roce_parsed *p)
{
	struct ethhdr eth;
	__u8 ip[ROCE_IPV6_HLEN];
	__u8 udp[8];
	__u8 bth[ROCE_BTH_LEN];
	__u32 l4, l4_len;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0)
		return QP_TC_C_PASS_SHORT_ETH;
	switch (eth.h_proto) {
	case bpf_htons(ETH_P_8021Q):
	case bpf_htons(ETH_P_8021AD):
		return QP_TC_C_PASS_VLAN;
	case bpf_htons(ETH_P_IP): {
		__u32 ihl, tot, frag, addr;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, 20) < 0)
			return QP_TC_C_PASS_SHORT_IP;
		ihl = (ip[0] & 0x0f) * 4u;
		tot = (__u32)ip[2] << 8 | ip[3];
		if (ip[0] >> 4 != 4 || ihl < 20 || tot < ihl)
			return QP_TC_C_PASS_BAD_IP;
		if (ETH_HLEN + tot > skb->len)
			return QP_TC_C_PASS_SHORT_IP;
		frag = ((__u32)ip[6] << 8 | ip[7]) & 0x3fff;  /* MF | offset */
		if (frag)
			return QP_TC_C_PASS_FRAGMENT;
		if (ip[9] != IPPROTO_UDP)
			return QP_TC_C_PASS_NOT_UDP;
		__builtin_memcpy(&addr, ip + 16, 4);
		roce_v4_mapped(p->key.daddr, addr);
		__builtin_memcpy(&addr, ip + 12, 4);
		roce_v4_mapped(p->saddr, addr);
		p->ipv6 = 0;
		p->ecn = ip[1] & 3;
		l4 = ETH_HLEN + ihl;
		l4_len = tot - ihl;
		break;
	}
	case bpf_htons(ETH_P_IPV6): {
		__u32 plen;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, ROCE_IPV6_HLEN) < 0)
			return QP_TC_C_PASS_SHORT_IP;
		if (ip[0] >> 4 != 6)
			return QP_TC_C_PASS_BAD_IP;
		plen = (__u32)ip[4] << 8 | ip[5];
		if (ETH_HLEN + ROCE_IPV6_HLEN + plen > skb->len)
			return QP_TC_C_PASS_SHORT_IP;
		switch (ip[6]) {
		case IPPROTO_UDP:
			break;
		case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139:
		case 140: case 253: case 254:  /* extension headers (RFC 8200, IANA) */
			return QP_TC_C_PASS_FRAGMENT;
		default:
			return QP_TC_C_PASS_NOT_UDP;
		}
		__builtin_memcpy(p->saddr, ip + 8, 16);
		__builtin_memcpy(p->key.daddr, ip + 24, 16);
		p->ipv6 = 1;
		p->ecn = (ip[1] >> 4) & 3;   /* traffic class: bits 4-11 of the header */
		l4 = ETH_HLEN + ROCE_IPV6_HLEN;
		l4_len = plen;
		break;
	}
	default:
		return QP_TC_C_PASS_NOT_IP;
	}

	if (l4_len < sizeof(udp) || bpf_skb_load_bytes(skb, l4, udp, sizeof(udp)) < 0)
		return QP_TC_C_PASS_SHORT_UDP;
	{
		__u32 ulen = (__u32)udp[4] << 8 | udp[5];
		__u32 dport = (__u32)udp[2] << 8 | udp[3];

		if (ulen < sizeof(udp) || ulen > l4_len)
			return QP_TC_C_PASS_SHORT_UDP;
		if (dport != QP_TC_ROCE_PORT)
			return QP_TC_C_PASS_NOT_ROCE;
		if (ulen < sizeof(udp) + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
		    bpf_skb_load_bytes(skb, l4 + sizeof(udp), bth, sizeof(bth)) < 0)
			return QP_TC_C_PASS_SHORT_BTH;
	}
	p->l4 = l4;
	p->ulen = (__u32)udp[4] << 8 | udp[5];
	p->ackreq = bth[8] >> 7;
	p->psn = (__u32)bth[9] << 16 | (__u32)bth[10] << 8 | bth[11];
	p->sport = (__u16)((__u32)udp[0] << 8 | udp[1]);
	p->bth_off = l4 + sizeof(udp);
	p->opcode = bth[0];
	p->becn = (bth[4] >> 6) & 1;
	p->key.dqpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	return QP_TC_C_ROCE;
}

#endif
