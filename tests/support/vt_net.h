/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Closed loops on the real switch, hosts and agents: an N -> 1 star in the virtual-time
 * engine (qpace/sim.h) with a finite buffer, for the congestion-control tests.
 *
 *   host i (1..N) --link (rate, delay)--> switch port i ... port 0 --link--> host 0
 *
 * One qpace-switch star of N + 1 ports, built by qpace-switch's own parser from its own
 * words (--star N+1 --rate --buffer --delay), with the feedback the algorithm declares
 * (the bench's incast_feedback: --int direct, --early one BDP, --levels ...) and any
 * extra words of the test (--pfc, --ecn, --notice-interval). Each flow is a WRITE from
 * its sender to host 0 through the engine's flow runner, its sender's agent running the
 * algorithm (with IA credits when asked), its NIC at the link rate. Two senders is the
 * two-flow (dumbbell) case: both share the receiver's port.
 *
 * The run is sampled every sample_ns: per flow the bytes its receiver took in order and
 * the rate its agent publishes; the receiver port's queue. At the end: the port's drops,
 * ECN marks and exact peak (the queue model's), PAUSEs sent by every port, each flow's
 * FCT, retransmissions and timeouts, and the engine's figures.
 */
#ifndef QPACE_TEST_VT_NET_H
#define QPACE_TEST_VT_NET_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/cc.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define VT_MAX_FLOWS 64
#define VT_MAX_EXTRA 8

struct vt_net_conf {
	const char *algo;             /* the senders' algorithm: none, hpcc, acc, dcqcn, ... */
	const char *params;           /* its "k=v,..."; NULL = its defaults */
	bool credits;                 /* IA credits (the receiver's agent grants them) */
	unsigned nflows;              /* 1..VT_MAX_FLOWS; flow i is sent by host src[i] */
	unsigned src[VT_MAX_FLOWS];   /* 0 = host i + 1 (one sender per flow) */
	uint64_t bytes[VT_MAX_FLOWS]; /* each at least 1 */
	qp_time_ns start_ns[VT_MAX_FLOWS]; /* since the start, non-decreasing */
	qp_rate_bps link_bps;         /* every port and NIC; 0 = 10 Gb/s */
	qp_time_ns delay_ns;          /* every link, each way; 0 = 10 us */
	qp_time_ns host_delay_ns[VT_MAX_FLOWS + 1]; /* host i -> switch only; 0 = delay_ns
						      * (a long one: a WAN host; its flows
						      * register their longer base RTT) */
	uint64_t buffer_bytes;        /* every port's egress buffer: finite, required */
	uint32_t mtu_bytes;           /* 0 = 1024 */
	uint64_t window_pkts;         /* RC: unacknowledged packets per QP; 0 = 128 */
	const char *extra[VT_MAX_EXTRA + 1]; /* more qpace-switch words, NULL-terminated */
	qp_time_ns sample_ns;         /* 0 = one base RTT */
	qp_time_ns duration_ns;       /* stop here at the latest (0 = 100 ms); the run also
				       * ends when every flow has finished */
	uint64_t seed;                /* 0 = 1 */
	bool no_ecn_echo;             /* the hosts' ACKs echo no CE marks even where the
				       * algorithm asks for the echo (a transport without one) */
	/* Called at every sample for each running flow with its sender's controller (to read
	 * an algorithm's state: DCTCP's alpha, a window); NULL = none. */
	void (*probe)(void *arg, unsigned flow, const struct cc *cc, qp_time_ns t_ns);
	void *probe_arg;
};

struct vt_sample {
	qp_time_ns t_ns;              /* since the start */
	uint64_t queue_bytes;         /* the receiver's port */
	uint64_t ecn_marks, tx_frames;/* ... its counts so far */
	uint64_t delivered[VT_MAX_FLOWS];
	qp_rate_bps rate_bps[VT_MAX_FLOWS];   /* 0 while a flow is not running */
};

struct vt_net_flow {
	qp_time_ns rtt_ns;            /* the base RTT it registered */
	bool done;
	qp_time_ns fct_ns;
	uint64_t retransmits, timeouts;
};

struct vt_net_result {
	qp_time_ns rtt_ns;            /* the modelled base RTT the flows register */
	double bdp_bytes;             /* link * rtt */
	double payload_bps;           /* the link's payload rate at this MTU */
	struct vt_sample *s;          /* nsamples, every sample_ns from 0 */
	unsigned nsamples;
	unsigned nflows;
	struct vt_net_flow flow[VT_MAX_FLOWS];
	unsigned flows_done;
	uint64_t drops, ecn_marks, max_queue_bytes;   /* the receiver's port */
	uint64_t all_drops;           /* every port */
	uint64_t pauses;              /* PAUSEs sent, every port */
	qp_time_ns end_ns;            /* since the start */
	uint64_t packet_hops;
};

/* Defaults above, @n flows of @bytes each, all from time 0, algorithm @algo. */
struct vt_net_conf vt_net_defaults(const char *algo, unsigned n, uint64_t bytes,
				   uint64_t buffer_bytes);
/* Two flows: flow 0 (6 MB) from 0, flow 1 (3 MB) joins at VT_JOIN_NS; 1 MB buffer,
 * samples every 4 us. */
#define VT_JOIN_NS (2 * QP_NS_PER_MS)
struct vt_net_conf vt_net_join(const char *algo);
/* The join run with @algo (@params) and with `none` on the same network: when Jain's
 * index on 2-RTT windows first reached 0.9 after the join (RTTs; -1 never), and over
 * 20..100 RTTs after it Jain's index and the mean queue (and none's). Printed. */
struct vt_join {
	double fair_rtts, jain, queue_bdp, none_queue_bdp, queue_bytes;
	uint64_t drops;
};
void vt_net_assert_join(const char *algo, const char *params, struct vt_join *j);
/* Run @c's network with `none` (no credits, at most 5 ms) and fail unless it drops:
 * proof that the buffer is finite enough to matter. Its drops in @drops. */
void vt_net_assert_control_overflows(const struct vt_net_conf *c, uint64_t *drops);
/* Build, run, measure. 0, or a negative errno with a message in @err. */
int vt_net_run(const struct vt_net_conf *c, struct vt_net_result *r, char *err, size_t errlen);
void vt_net_free(struct vt_net_result *r);
/* The same, failing the test on error (cmocka). */
void vt_net_assert_run(const struct vt_net_conf *c, struct vt_net_result *r);

/* Measures over the samples in [t0, t1] (since the start; the nearest samples inside). */
double vt_goodput_bps(const struct vt_net_result *r, unsigned flow, qp_time_ns t0,
		      qp_time_ns t1);
/* Jain's index over flows [first, first + n) of their goodput in [t0, t1]. */
double vt_jain(const struct vt_net_result *r, unsigned first, unsigned n, qp_time_ns t0,
	       qp_time_ns t1);
double vt_mean_queue(const struct vt_net_result *r, qp_time_ns t0, qp_time_ns t1);
uint64_t vt_max_queue(const struct vt_net_result *r, qp_time_ns t0, qp_time_ns t1);
/* The first sample at or after @t0 whose Jain's index over flows [first, first + n), on
 * windows of @win ending at it, is at least @j; QP_TIME_NEVER when none. */
qp_time_ns vt_jain_reached(const struct vt_net_result *r, unsigned first, unsigned n,
			   qp_time_ns t0, qp_time_ns win, double j);
/* The first sample at or after @t0 at which @flow's agent publishes at least @bps;
 * QP_TIME_NEVER when none. */
qp_time_ns vt_rate_reached(const struct vt_net_result *r, unsigned flow, qp_time_ns t0,
			   double bps);
/* The last sample at or before @t (0 when none). */
unsigned vt_sample_at(const struct vt_net_result *r, qp_time_ns t);
/* The lowest rate @flow's agent published while it ran (0: never ran). */
qp_rate_bps vt_min_rate(const struct vt_net_result *r, unsigned flow);
/* One line of the run's figures (cmocka's print_message), headed by @label. */
void vt_net_print(const char *label, const struct vt_net_result *r);

#endif
