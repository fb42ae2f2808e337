/* Closed-loop scenarios on the network model for rate-based controllers: N senders, each
 * with its own uplink (a switch egress), all into one bottleneck link to the receiver.
 *
 *   sender i --uplink i (uplink_bps)--> bottleneck (bottleneck_bps, buffer, notices) --> rx
 *
 * The run is sampled every sample_ns; the result holds what the HPCC/ACC tests compare:
 * per-flow goodput over the last measure_rtts, the peak queue, when the standing queue
 * (the mean over one base RTT) was last at or above 0.1 BDP, and how fast a flow's pacing
 * rate reached a target after the first flow finished.
 */
#ifndef QPACE_TEST_CC_LOOP_H
#define QPACE_TEST_CC_LOOP_H

#include <stdint.h>
#include "qpace/cc.h"
#include "netmodel.h"

struct cc_loop_cfg {
	const struct cc_ops *ops;
	const char *params;             /* NULL = defaults */
	unsigned nflows;                /* 1..NM_MAX_FLOWS - 1 */
	qp_rate_bps line_bps;           /* every sender's line rate */
	qp_rate_bps uplink_bps;
	qp_rate_bps bottleneck_bps;
	qp_time_ns prop_ns;             /* per link */
	qp_time_ns prop_spread_ns;      /* uplink i gets prop_ns + (i * 0.618.. mod 1) * this, so
					 * flows' packet trains do not stay in lock-step */
	uint32_t mtu_bytes;
	uint64_t buffer_bytes;          /* bottleneck; 0 = unlimited */
	uint64_t early_threshold_bytes; /* bottleneck notices; 0 = none */
	uint64_t flow_bytes[NM_MAX_FLOWS]; /* 0 = never ends */
	qp_time_ns start_ns[NM_MAX_FLOWS];
	unsigned duration_rtts;
	unsigned measure_rtts;          /* goodput window at the end */
	qp_time_ns sample_ns;           /* 0 = RTT / 50 */
	unsigned reach_flow;            /* whose pacing rate is watched after the first finish */
	double reach_bps;               /* 0 = not watched */
};

struct cc_loop_result {
	qp_time_ns rtt_ns;              /* base RTT of the longest path (each flow's T is its own) */
	double bdp_bytes;               /* bottleneck rate * RTT */
	double rate_bps[NM_MAX_FLOWS];  /* goodput over the last measure_rtts */
	qp_rate_bps min_rate_bps[NM_MAX_FLOWS]; /* lowest pacing rate at any sample */
	qp_rate_bps end_rate_bps[NM_MAX_FLOWS]; /* pacing rate at the end */
	uint64_t max_queue_bytes;       /* bottleneck peak, whole run */
	uint64_t late_max_queue_bytes;  /* bottleneck peak over the last measure_rtts */
	double late_mean_queue_bytes;   /* largest one-RTT mean queue in the last measure_rtts */
	qp_time_ns drained_ns;          /* end of the last base RTT whose mean queue was >= 0.1
					 * BDP (0 = never) */
	uint64_t drops;
	uint64_t notices;
	qp_time_ns first_finish_ns;     /* QP_TIME_NEVER when no flow finished */
	qp_time_ns reach_ns;            /* first sample after first_finish_ns with the watched
					 * rate >= reach_bps, as time since first_finish_ns;
					 * QP_TIME_NEVER when never */
};

/* 100G line and bottleneck, 400G uplinks, 2.5 us per link (T ~ 10 us), MTU 1000,
 * unlimited buffer, no notices, infinite flows all starting at 0, 60 RTTs, goodput over
 * the last 20. */
struct cc_loop_cfg cc_loop_defaults(unsigned nflows);

/* Build, run and measure. 0, or -1 with a message in @err (bad config, bad params). */
int cc_loop_run(const struct cc_loop_cfg *c, struct cc_loop_result *r, char *err, size_t errlen);

#endif
