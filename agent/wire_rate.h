/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rate qpaced has the tc egress program enforce for a QP it found on the wire. Pure.
 *
 *   fold    the algorithm's rate, no higher than its in-flight cap allows over the base
 *           RTT (cap x 8 / RTT): egress sees no ACKs, so a window can only act as a rate
 *   acks    rxe asks its peer for an ACK once a message (or every 64 frames), and its ACK
 *           timer runs from one ACK to the next, so paced at R a 64-frame message takes
 *           64 x frame x 8 / R between ACKs: at perftest's timeout 14 (67 ms) three flows
 *           sharing 20 Mb/s ran out of it every message although nothing was lost, and a
 *           timeout's resends of messages the peer had acknowledged meanwhile ended QPs
 *           (IBV_WC_REM_INV_REQ_ERR; docs/enforce.md). The tc program asks for an ACK on a
 *           data frame that departs WIRE_ACK_SHARE of the timeout after the flow's last
 *           one that asked (tc_abi.h, conf.ack_gap_ns): by time, since a flow may send
 *           below its rate.
 *   floor   no lower than the rate at which even one frame takes WIRE_ACK_SHARE of the
 *           timeout: below it, an ACK asked of every frame no longer comes in time (the
 *           old floor, rxe's 64 queued skbs within 75% of the timeout, 11.0 Mb/s at 14,
 *           was the rate a message needs when rxe alone asks for ACKs).
 *   used    no more than PCT% (qpaced --wire-used, default WIRE_USED_DEF_PCT) of what the
 *           flow sent over the last sample (and at least the start rate): an algorithm fed
 *           by the switch's link figures (hpcc) raises the rate of a flow that does not use
 *           it (a stalled guest: U stays low), up to the line, and one driven by timers
 *           (dcqcn: it climbs every period without a CNP) does so whenever the port stays
 *           below its marking threshold; when the sender catches up, its backlog leaves at
 *           that rate. As TCP's congestion window validation (RFC 7661) grows no window a
 *           flow does not fill, a flow's rate here grows only with what it sends: x2 per
 *           sample by default.
 *   catchup fq's per-flow maxrate under qpaced --wire-catchup PCT: fq holds a frame to its
 *           departure time but sends an overdue one at once, so after the host held a
 *           TCG guest up for 40-50 ms every frame stamped for that time left together
 *           (docs/enforce-qemu.md). fq's maxrate counts from dequeue and carries at most half a
 *           frame of lateness (its drift allowance), as a gate's catch-up bound does: at
 *           PCT% of the highest rate set on the device, a flow that fell behind catches
 *           up at most that much faster than its rate; above it, frames on schedule are
 *           never held by it. One maxrate per qdisc: it follows the highest rate.
 *   start   the first rate of a QP found on the wire (qpaced --wire-start), where its
 *           algorithm takes one (a parameter init_rate): not the line rate hpcc's
 *           reference starts at, because the tc path cannot take back the frames it has
 *           stamped before the first feedback is back (docs/enforce.md)
 */
#ifndef QPACE_AGENT_WIRE_RATE_H
#define QPACE_AGENT_WIRE_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "qpace/cc.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define WIRE_RXE_INFLIGHT_SKBS 64u     /* RXE_INFLIGHT_SKBS_PER_QP_HIGH, Linux 6.1 */
#define WIRE_ROCE_OVERHEAD 58u         /* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 */
#define WIRE_ACK_SHARE 25u             /* percent of the ACK timeout between two ACK requests:
					* the rest is for the switch's queue, the way back and
					* a sender or receiver the host held up */

/* The rate with the cap folded in (cap 0 or RTT 0: the rate as it is). */
qp_rate_bps wire_rate_fold(qp_rate_bps rate, uint64_t cap_bytes, qp_time_ns base_rtt_ns);

/* IB's local ACK timeout: 4.096 us x 2^exp; exp 0 means "infinite" (returns 0), and exp is
 * 0..31 (larger: 0). */
qp_time_ns wire_ack_timeout_ns(unsigned exp);

/* The lowest rate at which @skbs frames of @mtu payload bytes (plus RoCEv2 headers) queued
 * locally leave within @share_pct percent of @timeout_ns. 0 when there is no timeout. */
qp_rate_bps wire_rate_floor(unsigned skbs, uint32_t mtu, qp_time_ns timeout_ns,
			    unsigned share_pct);

/* The ACK request interval (acks, above): @share_pct percent of @timeout_ns (0: none). */
qp_time_ns wire_ack_gap(qp_time_ns timeout_ns, unsigned share_pct);

/* --wire-rtt auto: the base RTT (hpcc's T) of a QP found on the wire, the time rxe's
 * WIRE_RXE_INFLIGHT_SKBS frames of @mtu payload take at @line, at least WIRE_RTT_MIN_NS:
 * the tc path's actuation delay, since a rate written reaches only the frames rxe hands
 * over after it (at 20 Mb/s 28 ms, where T = 1 ms swung hpcc between its floor and the
 * line and 30 ms held it; at 10 Gb/s 55 us). */
#define WIRE_RTT_MIN_NS (100 * QP_NS_PER_US)
qp_time_ns wire_rtt_auto(qp_rate_bps line, uint32_t mtu);

/* What qpaced writes: fold, then at least @floor, and never above @line. */
qp_rate_bps wire_rate(qp_rate_bps rate, uint64_t cap_bytes, qp_time_ns base_rtt_ns,
		      qp_rate_bps floor, qp_rate_bps line);

#define WIRE_USED_DEF_PCT 200u        /* --wire-used: x2 per sample */
#define WIRE_USED_MIN_PCT 110u        /* below, a flow paced at its rate could hardly grow */

/* @want, but at most @pct percent of @used_bps (the flow's measured rate; 0 = none yet)
 * and never below @start; @pct 0: @want. */
qp_rate_bps wire_rate_used(qp_rate_bps want, qp_rate_bps used_bps, unsigned pct,
			   qp_rate_bps start);

/* fq's maxrate under --wire-catchup @pct (percent, 0 = off: returns @cap): @pct% of @top,
 * the highest rate of the device's paced flows (and the start rate a new flow gets), at
 * most @cap (--wire-fq-maxrate, else the line); never 0 with @top and @pct set. */
qp_rate_bps wire_fq_maxrate(qp_rate_bps top, unsigned pct, qp_rate_bps cap);

#define WIRE_CATCHUP_MIN 120u         /* --wire-catchup: 0 or at least this, percent */

/* Whether fq's maxrate @cur (0: none yet) is rewritten as @want: when it rises by more
 * than an eighth or falls by more than a quarter (each rewrite is a `tc` run). Within an
 * eighth, the maxrate stays above the highest rate for any PCT >= WIRE_CATCHUP_MIN. */
bool wire_fq_maxrate_moved(qp_rate_bps cur, qp_rate_bps want);

/* The parameters a QP found on the wire gets: @params ("k=v,..." or ""), with
 * init_rate=@start added when @ops has a parameter init_rate, @params does not set it and
 * @start is not 0. 0, or -ENOSPC when @len is too short (@out is then ""). */
int wire_start_params(const struct cc_ops *ops, const char *params, qp_rate_bps start,
		      char *out, size_t len);

#endif
