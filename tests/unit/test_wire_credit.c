/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IA credit schedule qpaced writes for a QP found on the wire (agent/wire_credit.h),
 * time injected: the budget in whole frames of the MTU, the next grant expected one
 * interval after the last, the grant rate (frames granted over the last interval: one
 * timer grant, or arrival-clocked grants that add up), a new generation afresh, gating
 * off clearing the flag (the last grant's fields left), the rate fields untouched, and
 * "changed" only when it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wire_credit.h"

#define T 5000000000ull
#define MS 1000000ull

static struct qp_tc_rate base(void)
{
	return (struct qp_tc_rate){ .rate_bps = 20000000, .cap_bytes = 7,
				    .flags = QP_TC_F_PACE | QP_TC_F_DISCOVERED, .qpn = 0xf00001 };
}

static void check(const struct qp_tc_rate *r, uint64_t frames, uint64_t next, uint32_t win,
		  uint32_t gen)
{
	assert_true(r->flags & QP_TC_F_CREDIT);
	assert_int_equal(r->credit_frames, frames);
	assert_int_equal(r->credit_next_ns, next);
	assert_int_equal(r->credit_win, win);
	assert_int_equal(r->credit_gen, gen);
	/* the rate entry's own fields stay */
	assert_int_equal(r->rate_bps, 20000000);
	assert_int_equal(r->cap_bytes, 7);
	assert_int_equal(r->qpn, 0xf00001);
	assert_true(r->flags & QP_TC_F_PACE);
	assert_true(r->flags & QP_TC_F_DISCOVERED);
}

static void test_schedule(void **state)
{
	struct wire_credit w = { 0 };
	struct agent_qp_credit c = { 0 };
	struct qp_tc_rate r = base();
	(void)state;

	/* no credits: nothing to write beyond the rate */
	assert_false(wire_credit_fill(&w, &c, 1000, 0, &r));
	assert_int_equal(r.flags & QP_TC_F_CREDIT, 0);
	/* a first (timer) grant of 4 MTU, interval 1 ms */
	c = (struct agent_qp_credit){ .gated = true, .gen = 1, .gen_bytes = 4000, .last_ns = T,
				      .interval_ns = MS, .expiry_ns = T + 100 * MS };
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 4, T + MS, 4, 1);
	assert_int_equal(r.credit_interval_ns, MS);
	assert_int_equal(r.credit_until_ns, T + 100 * MS);
	r = base();
	assert_false(wire_credit_fill(&w, &c, 1000, 0, &r));   /* nothing new */
	check(&r, 4, T + MS, 4, 1);
	/* arrival-clocked grants of one MTU each within the interval add up */
	c.gen_bytes = 5000;
	c.last_ns = T + MS * 3 / 10;
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 5, T + MS * 13 / 10, 5, 1);
	c.gen_bytes = 6000;
	c.last_ns = T + MS * 6 / 10;
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 6, T + MS * 16 / 10, 6, 1);
	/* 1.5 ms: the grants at T and T + 0.3 ms are more than an interval old */
	c.gen_bytes = 7500;   /* half an MTU more: whole frames only */
	c.last_ns = T + MS * 15 / 10;
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 7, T + MS * 25 / 10, 2, 1);
	/* gating began again: a new generation counts from its own bytes */
	c = (struct agent_qp_credit){ .gated = true, .gen = 2, .gen_bytes = 1000,
				      .last_ns = T + 400 * MS, .interval_ns = 2 * MS,
				      .expiry_ns = T + 500 * MS };
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 1, T + 402 * MS, 1, 2);
	/* gating off: the flag goes, the last grant's fields stay (read only under it) */
	c.gated = false;
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	assert_int_equal(r.flags, QP_TC_F_PACE | QP_TC_F_DISCOVERED);
	assert_int_equal(r.credit_frames, 1);
	assert_int_equal(r.credit_next_ns, T + 402 * MS);
	assert_int_equal(r.credit_until_ns, T + 500 * MS);
	assert_int_equal(r.credit_gen, 2);
	assert_false(wire_credit_fill(&w, &c, 1000, 0, &r));
	/* and a new generation replaces them, with the flag */
	c = (struct agent_qp_credit){ .gated = true, .gen = 3, .gen_bytes = 3000,
				      .last_ns = T + 900 * MS, .interval_ns = MS,
				      .expiry_ns = T + 1000 * MS };
	r = base();
	assert_true(wire_credit_fill(&w, &c, 1000, 0, &r));
	check(&r, 3, T + 901 * MS, 3, 3);
}

/* More grants in one interval than the history holds: the rate counts the newest
 * WIRE_CREDIT_HIST (an underestimate, so the projection is never faster than the grants). */
static void test_history_bound(void **state)
{
	struct wire_credit w = { 0 };
	struct agent_qp_credit c = { .gated = true, .gen = 1, .interval_ns = MS,
				     .expiry_ns = T + MS * 100 };
	struct qp_tc_rate r;
	(void)state;

	for (unsigned i = 1; i <= 2 * WIRE_CREDIT_HIST; i++) {
		c.gen_bytes = i * 1000ull;
		c.last_ns = T + i * 1000;
		r = base();
		wire_credit_fill(&w, &c, 1000, 0, &r);
		assert_int_equal(r.credit_win, i < WIRE_CREDIT_HIST ? i : WIRE_CREDIT_HIST);
	}
	assert_int_equal(r.credit_frames, 2 * WIRE_CREDIT_HIST);
}

/* The floor: 10 Mb/s over a 1 ms interval is 10,000 bits, frames of 1000 + 58 B (8,464
 * bits): 2 frames per interval at least, though one grant of 1 frame came; 0 = none. */
static void test_floor(void **state)
{
	struct wire_credit w = { 0 }, w0 = { 0 };
	struct agent_qp_credit c = { .gated = true, .gen = 1, .gen_bytes = 1000, .last_ns = T,
				     .interval_ns = MS, .expiry_ns = T + 100 * MS };
	struct qp_tc_rate r = base();
	(void)state;

	assert_true(wire_credit_fill(&w, &c, 1000, 10000000, &r));
	assert_int_equal(r.credit_win, 2);
	assert_int_equal(r.credit_frames, 1);
	r = base();
	assert_true(wire_credit_fill(&w0, &c, 1000, 0, &r));
	assert_int_equal(r.credit_win, 1);
	r = base();
	c.interval_ns = 100 * MS;   /* 1,000,000 bits: 118.1 frames -> 119 */
	assert_true(wire_credit_fill(&w0, &c, 1000, 10000000, &r));
	assert_int_equal(r.credit_win, 119);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_history_bound),
		cmocka_unit_test(test_floor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
