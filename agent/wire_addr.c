/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A reported flow's identity in the agent core (wire_addr.h). */
#include "wire_addr.h"

#include <string.h>

#include "bpf/tc_egress.h"

bool wire_flow_addrs(struct agent_qp_reg *reg, bool ipv6, const uint8_t local[16],
		     const uint8_t peer[16])
{
	uint32_t l, p;

	if (!ipv6) {
		if (!qp_tc_addr_ipv4(local, &l) || !qp_tc_addr_ipv4(peer, &p))
			return false;
		reg->local_ip = l;
		reg->peer_ip = p;
		return true;
	}
	reg->flags |= AGENT_QP_IPV6;
	memcpy(reg->local_ip6, local, 16);
	memcpy(reg->peer_ip6, peer, 16);
	return true;
}

int wire_flow_qp(const struct agent *a, const struct agent_qp_reg *reg, uint32_t *qpn)
{
	return reg->flags & AGENT_QP_IPV6
		       ? agent_qp_find_flow6(a, reg->local_ip6, reg->peer_ip6, reg->peer_qpn, qpn)
		       : agent_qp_find_flow(a, reg->local_ip, reg->peer_ip, reg->peer_qpn, qpn);
}
