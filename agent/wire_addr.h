/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A flow the tc programs report (tc_abi.h: 16-byte addresses, IPv4 as ::ffff:a.b.c.d, and
 * the frame's family), as the agent core identifies it (qpace/ctl.h, struct agent_qp_reg):
 * IPv4 by its 32-bit addresses, IPv6 by its 16-byte ones with AGENT_QP_IPV6. Pure.
 *
 * Why a 16-byte identity and not a made-up handle: an IPv6 flow is a QP like an IPv4 one
 * (measured, paced, shown with its addresses, taken over, CNPs found by their addresses),
 * so the core must be able to name it and look it up; feedback from qpace-switch (INT,
 * notices, levels) carries IPv4 flow keys and never looks up the IPv6 family, so no
 * switch telemetry can reach an IPv6 flow by accident. */
#ifndef QPACE_AGENT_WIRE_ADDR_H
#define QPACE_AGENT_WIRE_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/agent.h"

/* The flow's addresses (this host's @local, the peer's @peer) into @reg: IPv4 from the
 * IPv4-mapped form, else IPv6's own (AGENT_QP_IPV6 set; agent_register refuses :: and
 * IPv4-mapped ones in an IPv6 flow). false, @reg unchanged: an IPv4 flow whose addresses
 * are not IPv4-mapped (no program writes such a report). */
bool wire_flow_addrs(struct agent_qp_reg *reg, bool ipv6, const uint8_t local[16],
		     const uint8_t peer[16]);
/* The QP that sends the flow of @reg (wire_flow_addrs filled it): 0 with *@qpn, or
 * -ENOENT. */
int wire_flow_qp(const struct agent *a, const struct agent_qp_reg *reg, uint32_t *qpn);

#endif
