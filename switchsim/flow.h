/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-flow state of one egress queue: bytes it has queued (for the notice's `flows`
 * count: RoCEv2 data flows with bytes queued; or, with an idle time, with bytes queued or
 * a frame within the last idle_ns, so that a paced flow between two of its frames still
 * counts and a count that falls means flows that stopped sending; a flow whose sender
 * announced its last window counts no more), and the telemetry state that limits
 * notices, levels and INT reports per flow. Other UDP flows (telemetry, credits, INT
 * wishes) are tracked but not counted.
 *
 * A bounded table: capacity a power of two, each key probes a window of SW_FLOW_PROBE
 * slots. A flow with bytes in the queue is never evicted; when a new flow finds its
 * window full of such flows it is not tracked (the caller counts it), so the table costs
 * a fixed amount of memory whatever the traffic. A slot once used stays used (a new flow
 * takes the first never-used slot of its window, else an idle one's), so a key lies
 * before the first never-used slot of its window and a lookup stops there.
 */
#ifndef SW_FLOW_H
#define SW_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

#define SW_FLOW_PROBE 8
#define SW_FLOW_NONE UINT32_MAX

/* RoCEv2: (src, dst, UDP source port, dest QP); other UDP: dest port in qp with the top
 * bit set, so the two kinds never collide. */
struct sw_flow_key {
	uint32_t src_ip;
	uint32_t dst_ip;
	uint16_t sport;
	uint16_t zero;
	uint32_t qp;
};
#define SW_FLOW_KEY_UDP 0x80000000u

/* An IPv6 address folded into a key's 32-bit address field (the flow table and the
 * wishes key IPv6 flows by these; what the switch says about a flow carries the full
 * addresses, from the frame). */
static inline uint32_t sw_flow_fold6(const uint8_t a[16])
{
	uint64_t hi = 0, lo = 0;

	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | a[i];
		lo = lo << 8 | a[8 + i];
	}
	return (uint32_t)((hi * 0x9e3779b97f4a7c15ULL ^ lo * 0xc2b2ae3d27d4eb4fULL) >> 32);
}

struct sw_flow {
	struct sw_flow_key key;
	bool used;
	uint8_t level_sent;     /* last level told to the sender (0 at first) */
	bool level_acked;       /* the sender acknowledged level_sent */
	uint64_t bytes;         /* bytes of this flow in the queue (model) */
	qp_time_ns last_ns;     /* last enqueue */
	qp_time_ns notice_ns;   /* last early notice, QP_TIME_NEVER = none yet */
	qp_time_ns level_ns;    /* last level message */
	uint32_t level_seq;     /* level changes told */
	qp_time_ns int_ns;      /* last INT report, QP_TIME_NEVER = none yet */
	uint32_t int_skipped;   /* data frames since the last report */
	uint16_t notice_flows;  /* the flow count in the last notice to it, 0 = none yet */
	bool live;              /* counted in sw_flowtab.live */
	bool ending;            /* its sender said its last window is on its way
				 * (FB_WANT_F_LAST): counted neither in live nor in active */
};

struct sw_flowtab {
	struct sw_flow *slots;
	uint32_t mask;
	uint32_t active;        /* flows with bytes > 0 */
	uint32_t live;          /* flows with bytes > 0 or a frame within idle_ns */
	qp_time_ns idle_ns;     /* 0: live is not kept (sw_flowtab_count gives active) */
	qp_time_ns sweep_ns;    /* the next expiry sweep */
};

/* @slots a power of two >= SW_FLOW_PROBE (allocated at the first flow). 0 or -EINVAL. */
int sw_flowtab_init(struct sw_flowtab *t, uint32_t slots);
void sw_flowtab_free(struct sw_flowtab *t);
/* The flow's slot index, or SW_FLOW_NONE. */
uint32_t sw_flowtab_find(const struct sw_flowtab *t, const struct sw_flow_key *k);
/* Find or add; SW_FLOW_NONE when the window holds only flows with queued bytes. */
uint32_t sw_flowtab_get(struct sw_flowtab *t, const struct sw_flow_key *k, qp_time_ns now);
/* Account bytes entering (+) or leaving (-) the queue for slot @i. */
void sw_flowtab_add(struct sw_flowtab *t, uint32_t i, uint64_t bytes);
void sw_flowtab_sub(struct sw_flowtab *t, uint32_t i, uint64_t bytes);
/* Flow @i's last window is on its way (@on) or no longer (a new message): it leaves, or
 * joins again, the counts at once. */
void sw_flowtab_ending(struct sw_flowtab *t, uint32_t i, bool on);
/* The notices' flow count at @now: with idle_ns, flows seen within it or with bytes
 * queued (expired by a sweep of the table every idle_ns / 4, so a flow leaves the count
 * between idle_ns and 1.25 idle_ns after its last frame); else flows with bytes queued. */
uint32_t sw_flowtab_count(struct sw_flowtab *t, qp_time_ns now);

static inline bool sw_flow_key_eq(const struct sw_flow_key *a, const struct sw_flow_key *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->qp == b->qp;
}

#endif
