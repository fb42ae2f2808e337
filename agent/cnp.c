/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pure translations of DCQCN without a CNP-sending switch (cnp.h). */
#include "cnp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/bytes.h"
#include "qpace/errmsg.h"
#include "qpace/frame.h"

int cnp_peer_qpn(const struct cnp_peers *p, uint32_t lqpn, uint32_t *rqpn)
{
	const struct rdma_nl_qp *q = rdma_nl_find(p->dump, p->ndump, lqpn, 0);

	if (q && (q->has & RDMA_NL_HAS_RQPN)) {
		*rqpn = q->rqpn;
		return 0;
	}
	for (size_t i = 0; i < p->npairs; i++) {
		if (p->pairs[i].lqpn == lqpn) {
			*rqpn = p->pairs[i].rqpn;
			return 0;
		}
	}
	return -ENOENT;
}

/* Neither :: nor IPv4-mapped. */
static bool v6(const uint8_t a[16])
{
	return !qp_ipv6_unspecified(a) && !qp_ipv6_v4mapped(a, NULL);
}

struct cnp_action cnp_translate(const struct qp_tci_report *r, const struct cnp_peers *p)
{
	struct cnp_action a = { .what = CNP_DO_BAD_ADDR, .ipv6 = r->ipv6 != 0 };

	if (a.ipv6) {
		if (!v6(r->saddr) || !v6(r->daddr))
			return a;
		memcpy(a.peer_ip6, r->saddr, 16);
		memcpy(a.local_ip6, r->daddr, 16);
	} else if (!qp_ipv6_v4mapped(r->saddr, &a.peer_ip) ||
		   !qp_ipv6_v4mapped(r->daddr, &a.local_ip)) {
		return a;
	}
	if (cnp_peer_qpn(p, r->dqpn, &a.peer_qpn)) {
		a.what = CNP_DO_UNMAPPED;
		return a;
	}
	a.what = r->kind == QP_TCI_K_CE ? CNP_DO_SEND : CNP_DO_EVENT;
	return a;
}

int cnp_payload(uint8_t *buf, size_t cap, uint32_t src_ip, uint16_t sport, uint32_t dst_ip,
		uint32_t dest_qpn)
{
	uint8_t frame[128];
	struct frame_roce_spec s = {
		.src = { .ip = src_ip, .port = sport },
		.dst = { .ip = dst_ip },
		.bth = { .opcode = FRAME_OP_CNP, .becn = true, .pkey = 0xffff,
			 .dest_qp = dest_qpn & 0xffffffu },
	};
	int n = frame_build_roce(frame, sizeof(frame), &s);
	const size_t off = FRAME_ETH_HLEN + FRAME_IPV4_HLEN + FRAME_UDP_HLEN;

	if (n < 0)
		return n;
	if (cap < CNP_UDP_PAYLOAD)
		return -EMSGSIZE;
	memcpy(buf, frame + off, CNP_UDP_PAYLOAD);
	return CNP_UDP_PAYLOAD;
}

int cnp_payload6(uint8_t *buf, size_t cap, const uint8_t src[16], uint16_t sport,
		 const uint8_t dst[16], uint32_t dest_qpn)
{
	enum { UDP_LEN = FRAME_UDP_HLEN + CNP_UDP_PAYLOAD };
	uint8_t pkt[FRAME_IPV6_HLEN + UDP_LEN] = { 0x60 }, *udp = pkt + FRAME_IPV6_HLEN;
	struct frame_bth bth = { .opcode = FRAME_OP_CNP, .becn = true, .pkey = 0xffff,
				 .dest_qp = dest_qpn & 0xffffffu };
	uint32_t icrc;

	if (cap < CNP_UDP_PAYLOAD)
		return -EMSGSIZE;
	qp_put16(pkt + 4, UDP_LEN);             /* payload length */
	pkt[6] = FRAME_IPPROTO_UDP;             /* hop limit: masked, left 0 */
	memcpy(pkt + 8, src, 16);
	memcpy(pkt + 24, dst, 16);
	qp_put16(udp, sport);
	qp_put16(udp + 2, FRAME_ROCEV2_PORT);
	qp_put16(udp + 4, UDP_LEN);             /* checksum: masked, the kernel's */
	if (frame_bth_encode(udp + FRAME_UDP_HLEN, FRAME_BTH_LEN, &bth) < 0)
		return -EINVAL;
	icrc = frame_icrc_ipv6(pkt, sizeof(pkt));
	for (int i = 0; i < 4; i++)             /* little-endian, as frame.c stores it */
		pkt[sizeof(pkt) - 4 + i] = (uint8_t)(icrc >> (8 * i));
	memcpy(buf, udp + FRAME_UDP_HLEN, CNP_UDP_PAYLOAD);
	return CNP_UDP_PAYLOAD;
}

static int parse_qpn(const char *s, char **end, uint32_t *out)
{
	unsigned long v;

	errno = 0;
	v = strtoul(s, end, 0);
	if (errno || *end == s || v > 0xffffffu)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cnp_pairs_parse(const char *s, struct cnp_pair *out, size_t cap, char *err,
		    size_t errlen)
{
	size_t n = 0;

	if (!strcmp(s, "none"))
		return 0;
	while (*s) {
		const char *start = s;
		char *end;
		struct cnp_pair p;
		size_t plen = strcspn(s, ",");

		if (n == cap)
			return qp_errmsg(-EINVAL, err, errlen, "more than %zu pairs", cap);
		if (parse_qpn(s, &end, &p.lqpn) || *end != '=' ||
		    parse_qpn(end + 1, &end, &p.rqpn) || (*end && *end != ','))
			return qp_errmsg(-EINVAL, err, errlen, "'%.*s': not LQPN=PEER_QPN (QPNs "
					 "0..0xffffff)", (int)plen, start);
		out[n++] = p;
		s = *end ? end + 1 : end;
	}
	return (int)n;
}
