/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's core driven in injected time, for the gate's unit tests: a gate, the
 * input its shell would read (a live agent by default), the clock, and the events seen. */
#ifndef QPACE_TEST_GATE_SIM_H
#define QPACE_TEST_GATE_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/gate.h"

struct sim {
	struct qp_gate g;
	struct qp_gate_input in;
	qp_time_ns now;
	unsigned events;       /* all events seen */
	unsigned fallback_ev;  /* verdicts carrying QP_GATE_EV_FALLBACK */
	unsigned recovered_ev;
	unsigned safe_ev;
};

/* A live agent giving @rate_bps for QPN 0x11 (generation 1); the heartbeat is stamped at
 * now (run_greedy keeps it fresh). */
void sim_init(struct sim *s, qp_rate_bps rate_bps, uint64_t burst, uint64_t chunk);
/* The same with the gate's parameters @p (resolved here). */
void sim_init_params(struct sim *s, qp_rate_bps rate_bps, struct qp_gate_params p);
/* One qp_gate_take at s->now; checks the verdict's shape and counts events. */
int sim_take(struct sim *s, uint64_t want, unsigned flags, struct qp_gate_verdict *v);

/* Worst window excess: max over i >= j of bytes(j..i) - R*(t_i - t_j)/8, in bytes. */
struct window_check {
	qp_rate_bps rate;
	uint64_t cum;          /* bytes through the previous piece */
	double min_base;       /* min over j of (cum_{j-1} - R*t_j/8) */
	double worst;
	bool started;
};

void window_add(struct window_check *w, qp_time_ns t, uint64_t bytes);

/* Greedy sender: messages of @msg bytes back to back until @until, the heartbeat kept
 * fresh. Returns bytes passed; @w and @max_piece may be NULL. */
uint64_t run_greedy(struct sim *s, qp_time_ns until, uint64_t msg, unsigned flags,
		    struct window_check *w, uint64_t *max_piece);

#endif
