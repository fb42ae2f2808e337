/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Synthetic INT reports for unit tests of INT-driven controllers (HPCC, ACC).
 *
 * A feed keeps, per hop, the switch's clock and cumulative byte counter and the sender's
 * sequence numbers; each step advances time, lets every hop send what the step's
 * utilization says, and delivers one CC_EV_INT to the controller. The arithmetic is the
 * inverse of HPCC's: a hop at utilization x for dt_ns sends x * B * dt / 8 bytes.
 */
#ifndef QPACE_TEST_INT_FEED_H
#define QPACE_TEST_INT_FEED_H

#include <stdint.h>
#include "qpace/cc.h"

struct int_feed {
	struct cc *cc;
	unsigned nhops;
	struct qp_int_hop hops[QP_INT_MAX_HOPS];
	uint64_t seq;          /* seq of the last report */
	uint64_t window_bytes; /* snd_nxt - seq in each report */
	qp_time_ns now;
};

/* Hops get switch ids 1..nhops, ports 1..nhops, the given link rates. */
void int_feed_init(struct int_feed *f, struct cc *cc, unsigned nhops,
		   const qp_rate_bps *link_bps, uint64_t window_bytes);

/* One report @dt_ns after the previous: hop i sent util[i] of its link (txRate / B) and
 * holds qlen[i] bytes; the report's seq is @seq_step bytes beyond the last. Returns what
 * cc_event returned. */
unsigned int_feed_step(struct int_feed *f, qp_time_ns dt_ns, const double *util,
		       const uint32_t *qlen, uint64_t seq_step);

/* The same utilization and queue on every hop. */
unsigned int_feed_step_all(struct int_feed *f, qp_time_ns dt_ns, double util, uint32_t qlen,
			   uint64_t seq_step);

#endif
