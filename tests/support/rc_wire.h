/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two RC state machines (qpace/rc.h) wired back to back in memory, in injected time.
 *
 * Each direction is a link of rate_bps with delay_ns of propagation. Every packet a QP
 * hands out is built into a real frame (frame_build_roce), may be dropped, duplicated or
 * delayed past later ones (reordered) with fixed-seed probabilities or by a filter, and
 * on arrival is parsed (frame_parse), ICRC-checked (zlib, and on a sample of frames the
 * independent tests/support/icrc_ref.c) and handed to the other QP's rc_rx. Time jumps
 * from event to event: frame arrivals, link free, QP timers.
 */
#ifndef QPACE_TEST_RC_WIRE_H
#define QPACE_TEST_RC_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/rate.h"
#include "qpace/rc.h"

struct rc_wire_params {
	qp_time_ns delay_ns;        /* one way; default 2 us */
	qp_rate_bps rate_bps;       /* each direction; default 10 Gb/s */
	double loss;                /* drop probability per frame, both directions */
	double reorder;             /* probability a frame is held back ... */
	qp_time_ns reorder_ns;      /* ... by a uniform 0..reorder_ns extra */
	double dup;                 /* probability a frame arrives twice */
	uint64_t seed;
	/* A switch in the A->B direction (0 = none): egress at bottleneck_bps with a drop-tail
	 * buffer of buffer_bytes, as qpace-switch models a port. */
	qp_rate_bps bottleneck_bps;
	uint64_t buffer_bytes;
};

/* Return true to drop the frame (sent by side @from). */
typedef bool (*rc_wire_filter_fn)(void *arg, int from, const struct frame_parsed *p);

struct rc_wire_frame;

struct rc_wire_stats {
	uint64_t sent, lost, filtered, duplicated, reordered, delivered, icrc_checked;
	uint64_t tail_drops;        /* dropped by the A->B switch buffer */
};

struct rc_wire {
	struct rc_wire_params p;
	struct rc_qp *qp[2];
	struct frame_addr addr[2];
	qp_time_ns link_free[2];
	qp_time_ns sw_free;         /* when the switch's egress queue is empty */
	qp_time_ns now;
	uint64_t rng, seq;
	rc_wire_filter_fn filter;
	void *filter_arg;
	uint8_t tos[2];             /* the IPv4 TOS of each side's frames (ECN: its low bits) */
	struct rc_wire_frame **heap;
	uint32_t heap_len, heap_cap;
	struct rc_wire_stats st;
	uint64_t bad;               /* frames that failed parse or ICRC: must stay 0 */
};

void rc_wire_init(struct rc_wire *w, const struct rc_wire_params *p, struct rc_qp *a,
		  struct rc_qp *b, qp_time_ns start);
void rc_wire_fini(struct rc_wire *w);
/* One event. Returns false when nothing will ever happen again (no frames in flight, no
 * timers, nothing to send). */
bool rc_wire_step(struct rc_wire *w);
/* Steps until done(arg) or the time passes @until; done is checked before every step.
 * Returns true when done. */
bool rc_wire_run(struct rc_wire *w, bool (*done)(void *arg), void *arg, qp_time_ns until);
/* A fixed-seed uniform double in [0, 1), and an integer in [0, n). */
double rc_wire_rand(struct rc_wire *w);
uint64_t rc_wire_randn(struct rc_wire *w, uint64_t n);

#endif
