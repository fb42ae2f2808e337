/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN between two hosts' qpaced, without a switch that sends CNPs (docs/enforce.md,
 * "DCQCN without qpace-switch"): the pure translations of the tc ingress program's reports.
 *
 *   receiver  a CE report (from peer X, to local QP L): a CNP to X:4791 whose BTH names
 *             L's peer QPN P, as the UDP payload of a datagram from the local address the
 *             frame came to (BTH opcode 0x81, BECN, P-key 0xffff, 16 reserved bytes, ICRC)
 *   sender    a CNP report (from X, to local QP L): the flow (X, P), which the agent core
 *             knows by (local address, X, P)
 *
 * IPv4 or IPv6 (the report's family): an IPv6 CNP's ICRC is over the IPv6 header the kernel
 * writes for a UDP socket (traffic class, flow label and hop limit masked, so whatever it
 * writes there), and its UDP checksum is the kernel's (IPv6 requires one; rxe's receiver
 * takes the UDP datagram from the kernel's UDPv6, which checks it).
 *
 * L's peer QPN comes from the kernel's rdma netlink QP dump (qpace/rdma_nl.h), else from
 * qpaced's static --cnp-peer pairs. */
#ifndef QPACE_AGENT_CNP_H
#define QPACE_AGENT_CNP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/tc_ingress_abi.h"
#include "qpace/rdma_nl.h"

#define CNP_MAX_PAIRS 256
#define CNP_UDP_PAYLOAD 32     /* BTH 12 + 16 reserved + ICRC 4 */

struct cnp_pair {
	uint32_t lqpn, rqpn;
};

/* Where peer QPNs come from: the dump (may be empty), then the static pairs. */
struct cnp_peers {
	const struct rdma_nl_qp *dump;
	size_t ndump;
	const struct cnp_pair *pairs;
	size_t npairs;
};

/* L's peer QPN: 0 with *@rqpn, or -ENOENT. */
int cnp_peer_qpn(const struct cnp_peers *p, uint32_t lqpn, uint32_t *rqpn);

/* What a report of the tc ingress program asks for. */
enum cnp_do {
	CNP_DO_SEND,        /* CE: send a CNP from local_ip to peer_ip:4791 for QP peer_qpn */
	CNP_DO_EVENT,       /* CNP: CC_EV_CNP for the flow (local_ip, peer_ip, peer_qpn) */
	CNP_DO_UNMAPPED,    /* the local QP's peer QPN is not known */
	CNP_DO_BAD_ADDR,    /* addresses not of the report's family: IPv4 ones not IPv4-mapped,
			     * IPv6 ones unspecified or IPv4-mapped (a report no program writes) */
};

struct cnp_action {
	enum cnp_do what;
	bool ipv6;
	uint32_t local_ip, peer_ip;   /* IPv4: host order */
	uint8_t local_ip6[16], peer_ip6[16];   /* IPv6: network order */
	uint32_t peer_qpn;
};

/* The report's action (both directions, see the top of the file). */
struct cnp_action cnp_translate(const struct qp_tci_report *r, const struct cnp_peers *p);

/* The UDP payload (CNP_UDP_PAYLOAD bytes) of a CNP from @src_ip:@sport to @dst_ip:4791 for
 * QP @dest_qpn, its ICRC over the IPv4 header the kernel writes for an unconnected UDP
 * socket with DF (id 0) and the UDP header. Returns its length or -EMSGSIZE. */
int cnp_payload(uint8_t *buf, size_t cap, uint32_t src_ip, uint16_t sport, uint32_t dst_ip,
		uint32_t dest_qpn);
/* The same over IPv6, from [@src]:@sport to [@dst]:4791 (network order, 16 bytes each): its
 * ICRC over the IPv6 header (payload length 40, next header UDP) and the UDP header. */
int cnp_payload6(uint8_t *buf, size_t cap, const uint8_t src[16], uint16_t sport,
		 const uint8_t dst[16], uint32_t dest_qpn);

/* "L=P[,L=P...]" (QPNs decimal or 0x hex, 24 bits) into @out: the count, or -EINVAL with
 * the pair and why in @err. */
int cnp_pairs_parse(const char *s, struct cnp_pair *out, size_t cap, char *err,
		    size_t errlen);

#endif
