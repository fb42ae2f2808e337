/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* When a switch speaks to a sender: pure decisions over one flow's state (flow.h).
 *
 * Early congestion notice (Bolt's SRC, ACC's first-RTT feedback): at enqueue, when the
 * queue the frame joins is at or above early_bytes, at most one per flow per
 * notice_interval_ns. Each notice carries the port's active-flow count; a flow that has
 * had a notice gets another, whatever the queue, when the count has fallen below the
 * one its last notice carried (flows finished: ACC's ramp-up in advance), within the same
 * interval limit. Default threshold: one BDP of the port, rate x (2 x delay).
 * Optionally (cnp) each notice is doubled by a real RoCEv2 CNP (BTH opcode 0x81) to the
 * sender's QP, once the switch has learned that QP from the receiver's ACKs.
 *
 * Congestion levels (FFD): thresholds min <= mid <= max on the port's RED average queue
 * (red.h, weight level_weight; 1 = the instantaneous queue) give
 *     avg < min: 0    min <= avg < mid: 1    mid <= avg < max: 2    avg >= max: 3
 * A level message goes to the sender when the flow's level changes; it is repeated every
 * level_repeat_ns (on the flow's frames) until the sender acknowledges that level with a
 * level-7 message, and starts again at the next change.
 *
 * INT reports (HPCC): for RoCEv2 data frames, at dequeue; every frame, or sampled: every
 * int_every-th frame of a flow, and/or at most one per flow per int_interval_ns.
 */
#ifndef SW_TELEM_H
#define SW_TELEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"
#include "flow.h"

enum sw_int_mode { SW_INT_OFF = 0, SW_INT_DIRECT, SW_INT_ECHO };
/* Whose data gets INT reports: the flows whose senders asked (int_want.h), or all. */
enum sw_int_flows { SW_INT_FLOWS_WANTED = 0, SW_INT_FLOWS_ALL };

struct sw_telem_params {
	uint64_t early_bytes;          /* 0: no notices */
	qp_time_ns notice_interval_ns;
	uint64_t level_bytes[3];       /* min, mid, max; max 0: no levels */
	qp_time_ns level_repeat_ns;
	double level_weight;           /* RED average weight w of the levels' queue, (0, 1] */
	enum sw_int_mode int_mode;
	bool cnp;                      /* with each notice, a RoCEv2 CNP to the sender's QP */
	uint32_t int_every;            /* >= 1 */
	qp_time_ns int_interval_ns;    /* 0: no time limit */
	enum sw_int_flows int_flows;
};

enum { SW_T_NOTICE = 1u << 0, SW_T_LEVEL = 1u << 1 };

int sw_telem_check(const struct sw_telem_params *p, char *err, size_t len);
uint8_t sw_level_of(const struct sw_telem_params *p, uint64_t qbytes);
/* A frame of flow @f joined a queue of @qbytes at @now, the levels' (average) queue being
 * @level_q and the port's active flows @flows (0: no count, no falling-count notice):
 * which messages to send (SW_T_* bits).
 * Updates @f's notice and level state. */
unsigned sw_telem_enqueue(const struct sw_telem_params *p, struct sw_flow *f,
			  uint64_t qbytes, uint64_t level_q, uint16_t flows, qp_time_ns now);
/* A RoCEv2 data frame of flow @f (NULL: untracked) is dequeued: report INT? */
bool sw_telem_int_due(const struct sw_telem_params *p, struct sw_flow *f, qp_time_ns now);
/* The sampling rule of sw_telem_int_due with @every (>= 1) and @interval_ns for flow @f. */
bool sw_telem_int_sample(struct sw_flow *f, uint32_t every, qp_time_ns interval_ns,
			 qp_time_ns now);
/* The sender acknowledged @level. True when that stops repeats. */
bool sw_telem_level_ack(struct sw_flow *f, uint8_t level);

#endif
