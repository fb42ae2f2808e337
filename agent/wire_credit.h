/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IA credit schedule of a QP qpaced found on the wire, as its tc egress program
 * enforces it (tc_abi.h, struct qp_tc_rate's credit_* fields). Pure, time passed in.
 *
 * The core keeps the grants the receiver's agent sent (agent_qp_credit: generation,
 * bytes granted in it, the last grant's time and interval, the expiry). Here:
 *   budget   credit_frames = bytes granted in the generation / MTU: the data frames the
 *            flow may send (both agents count credits in frames of --wire-mtu; the
 *            receiver's pacer gets frames x MTU as arrivals)
 *   beyond   a frame past the budget leaves no earlier than the next grant is expected
 *            (the last grant + its interval), then credit_win frames per interval, where
 *            credit_win is the frames granted over the last interval (the grant rate: one
 *            grant of W frames per RTT + delta on the receiver's timer schedule, or the
 *            arrival-clocked grants that add up to W per interval); at least 1, and at
 *            least the floor's frames per interval
 *   expiry   credit_until_ns = the core's expiry: past it the program ignores the credits
 *            even if qpaced is gone; gating off in the core clears QP_TC_F_CREDIT
 *            and leaves the last grant's fields (the program ignores them without it)
 * Exact to the grants within what EDT allows: a departure time, once given, stays, so a
 * frame stamped for the expected grant leaves then even if that grant comes late (or
 * sooner). */
#ifndef QPACE_AGENT_WIRE_CREDIT_H
#define QPACE_AGENT_WIRE_CREDIT_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/tc_abi.h"
#include "qpace/agent.h"

#define WIRE_CREDIT_HIST 32u           /* grants remembered for the grant rate */

struct wire_credit {
	uint32_t gen;
	uint64_t seen_bytes;             /* the generation's bytes at the last update */
	struct { qp_time_ns t; uint64_t frames; } hist[WIRE_CREDIT_HIST];
	unsigned head, n;
	struct qp_tc_rate last;          /* the credit fields last written */
};

/* Fill @r's credit fields and flag from @c (the QP's credits now, MTU @mtu > 0), keeping
 * the grant history in @w. @floor_bps (0: none): the schedule beyond the budget is never
 * slower than this (credit_win raised to it, frames of @mtu + WIRE_ROCE_OVERHEAD bytes),
 * so the flow keeps the pace its ACK timer needs (wire_rate.h's floor). True
 * when the fields differ from the last ones written. */
bool wire_credit_fill(struct wire_credit *w, const struct agent_qp_credit *c, uint32_t mtu,
		      qp_rate_bps floor_bps, struct qp_tc_rate *r);

#endif
