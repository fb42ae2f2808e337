/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's core in injected time, for the gate's unit tests (gate_sim.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "gate_sim.h"

void sim_init_params(struct sim *s, qp_rate_bps rate_bps, struct qp_gate_params p)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(qp_gate_params_resolve(&p, NULL, 0), 0);
	s->now = 1000 * QP_NS_PER_MS;
	qp_gate_init(&s->g, &p, s->now);
	s->in.have_table = true;
	s->in.have_slot = true;
	s->in.heartbeat_ns = s->now;
	s->in.slot.qpn = 0x11;
	s->in.slot.gen = 1;
	s->in.slot.rate_bps = rate_bps;
}

void sim_init(struct sim *s, qp_rate_bps rate_bps, uint64_t burst, uint64_t chunk)
{
	sim_init_params(s, rate_bps, (struct qp_gate_params){ .burst_bytes = burst,
							       .chunk_bytes = chunk });
}

int sim_take(struct sim *s, uint64_t want, unsigned flags, struct qp_gate_verdict *v)
{
	int rc = qp_gate_take(&s->g, &s->in, want, flags, s->now, v);

	s->events |= v->events;
	s->fallback_ev += !!(v->events & QP_GATE_EV_FALLBACK);
	s->recovered_ev += !!(v->events & QP_GATE_EV_RECOVERED);
	s->safe_ev += !!(v->events & QP_GATE_EV_SAFE);
	if (rc == 0)
		assert_true(v->bytes <= want);
	else
		assert_true(v->retry_ns > s->now); /* closed always means "later", never now */
	return rc;
}

void window_add(struct window_check *w, qp_time_ns t, uint64_t bytes)
{
	double budget = (double)w->rate * (double)t / 8e9;
	double base = (double)w->cum - budget;

	if (!w->started || base < w->min_base)
		w->min_base = base;
	w->started = true;
	w->cum += bytes;
	if ((double)w->cum - budget - w->min_base > w->worst)
		w->worst = (double)w->cum - budget - w->min_base;
}

uint64_t run_greedy(struct sim *s, qp_time_ns until, uint64_t msg, unsigned flags,
		    struct window_check *w, uint64_t *max_piece)
{
	uint64_t sent = 0, left = msg;
	struct qp_gate_verdict v;

	while (s->now < until) {
		s->in.heartbeat_ns = s->now;
		if (sim_take(s, left, flags, &v) < 0) {
			s->now = v.retry_ns;
			continue;
		}
		if (w)
			window_add(w, s->now, v.bytes);
		if (max_piece && v.bytes > *max_piece)
			*max_piece = v.bytes;
		sent += v.bytes;
		left -= v.bytes;
		if (!left)
			left = msg;
	}
	return sent;
}
