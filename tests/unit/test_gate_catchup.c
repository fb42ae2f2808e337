/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's catch-up (qpace/gate.h "Catch-up"), in injected time: a sender that
 * comes back late for tokens catches up in one burst of at most cap + A, its long-run rate
 * stays the set rate, an idle sender earns no more than the bucket, and a sender on time
 * sees no difference. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gate_sim.h"
#include "qpace/gate.h"

#define RATE QP_GBPS
#define CHUNK 4096u
#define BURST 2048u    /* the QP layer's 2 x MTU at MTU 1024 */

static uint32_t lcg(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	return *x >> 8;
}

struct late_run {
	uint64_t sent;
	qp_time_ns span;
	uint64_t max_at_once;   /* bytes handed on at one instant */
	double worst;           /* worst window excess over rate x window */
};

/* Greedy sender for @span whose every return after a wait for tokens is late by a
 * pseudo-random 0..@late_max ns. */
static void run_late(qp_time_ns catchup_ns, qp_time_ns late_max, qp_time_ns span,
		     struct late_run *r)
{
	struct sim s;
	struct window_check w = { .rate = RATE };
	struct qp_gate_verdict v;
	qp_time_ns t0, at = 0;
	uint64_t at_once = 0;
	uint32_t seed = 12345;

	sim_init_params(&s, RATE, (struct qp_gate_params){ .burst_bytes = BURST,
							   .chunk_bytes = CHUNK,
							   .catchup_ns = catchup_ns });
	memset(r, 0, sizeof(*r));
	t0 = s.now;
	while (s.now < t0 + span) {
		s.in.heartbeat_ns = s.now;
		if (sim_take(&s, 1 << 20, 0, &v) < 0) {
			s.now = v.retry_ns + (late_max ? lcg(&seed) % late_max : 0);
			continue;
		}
		if (s.now != at)
			at_once = 0;
		at = s.now;
		at_once += v.bytes;
		if (at_once > r->max_at_once)
			r->max_at_once = at_once;
		window_add(&w, s.now, v.bytes);
		r->sent += v.bytes;
	}
	r->span = s.now - t0;
	r->worst = w.worst;
}

/* Late by up to 100 us at every turn: the default allowance (100 us at the rate, 12,500 B)
 * keeps the rate; an allowance of one chunk (catchup_ns at its floor) does not. */
static void test_late_sender_keeps_the_rate(void **state)
{
	const qp_time_ns span = 2 * QP_NS_PER_S, late = 100 * QP_NS_PER_US;
	struct late_run def, small, ontime;
	uint64_t cap = CHUNK + BURST, a = qp_bytes_in(RATE, QP_GATE_DEF_CATCHUP_NS);
	double due;
	(void)state;

	run_late(0, late, span, &def);
	run_late(QP_GATE_MIN_CATCHUP_NS, late, span, &small);
	run_late(0, 0, span, &ontime);
	due = (double)qp_bytes_in(RATE, def.span);
	print_message("late 0..100 us: %.4f of the rate (allowance %llu B), %.4f with one chunk; "
		      "on time %.4f; largest burst %llu B, worst window excess %.0f B (cap %llu + "
		      "A %llu)\n", (double)def.sent / due, (unsigned long long)a,
		      (double)small.sent / (double)qp_bytes_in(RATE, small.span),
		      (double)ontime.sent / (double)qp_bytes_in(RATE, ontime.span),
		      (unsigned long long)def.max_at_once, def.worst, (unsigned long long)cap,
		      (unsigned long long)a);
	/* The long-run rate: the set rate within 1%, never above rate x time + cap + A. */
	assert_true((double)def.sent >= 0.99 * due);
	assert_true(def.sent <= qp_bytes_in(RATE, def.span) + cap + a);
	/* Every window: at most cap + A above the rate (+1 byte rounding). */
	assert_true(def.worst <= (double)(cap + a) + 1.0);
	assert_true(def.max_at_once <= cap + a);
	/* Without the allowance the same lateness is rate lost for good. */
	assert_true((double)small.sent < 0.95 * (double)qp_bytes_in(RATE, small.span));
	/* On time, the bucket alone: never more than cap above the rate. */
	assert_true(ontime.worst <= (double)cap + 1.0);
	assert_true(ontime.max_at_once <= CHUNK);
}

/* One return 10 ms late: one burst of at most cap + A, then the rate again. */
static void test_late_burst_is_bounded(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t cap, a, at_once = 0;
	(void)state;

	sim_init(&s, RATE, BURST, CHUNK);
	cap = qp_gate_cap_bytes(&s.g);
	a = qp_gate_catchup_bytes(&s.g);
	assert_int_equal(a, qp_bytes_in(RATE, QP_GATE_DEF_CATCHUP_NS));   /* 12,500 B */
	while (sim_take(&s, 1 << 20, 0, &v) == 0)   /* the full bucket goes at once */
		;
	assert_int_equal(v.wait, QP_GATE_WAIT_TOKENS);
	s.now = v.retry_ns + 10 * QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	while (sim_take(&s, 1 << 20, 0, &v) == 0)
		at_once += v.bytes;
	print_message("10 ms late: %llu bytes at once (cap %llu + A %llu), %llu late takes, "
		      "%llu catch-up bytes\n", (unsigned long long)at_once,
		      (unsigned long long)cap, (unsigned long long)a,
		      (unsigned long long)s.g.stats.late_takes,
		      (unsigned long long)s.g.stats.catchup_bytes);
	assert_true(at_once <= cap + a);
	assert_true(at_once + CHUNK > cap + a);      /* whole chunks up to the limit */
	assert_int_equal(s.g.stats.late_takes, 1);
	assert_int_equal(s.g.stats.catchup_bytes, a);
	/* Then the rate: the next chunk when its tokens are earned. */
	assert_int_equal(v.wait, QP_GATE_WAIT_TOKENS);
	assert_true(v.retry_ns - s.now <= qp_tx_time_ns(CHUNK, RATE));
}

/* An idle sender earns the bucket, not the allowance: after its last piece went through,
 * 1 s of nothing gives cap at once, as without catch-up. A sender back early or exactly on
 * time gets no extra either. */
static void test_idle_earns_no_catchup(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t at_once = 0;
	(void)state;

	sim_init(&s, RATE, BURST, CHUNK);
	while (sim_take(&s, 1 << 20, 0, &v) == 0)
		;
	s.now = v.retry_ns - 1;                       /* early: still closed */
	assert_int_equal(sim_take(&s, CHUNK, 0, &v), -EAGAIN);
	s.now = v.retry_ns;                           /* on time: one chunk */
	assert_int_equal(sim_take(&s, CHUNK, 0, &v), 0);
	assert_int_equal(s.g.stats.late_takes, 0);
	s.now += QP_NS_PER_S;                         /* done, idle */
	s.in.heartbeat_ns = s.now;
	while (sim_take(&s, 1 << 20, 0, &v) == 0)
		at_once += v.bytes;
	print_message("idle 1 s after its last piece: %llu bytes at once, %lld tokens left "
		      "(cap %llu)\n", (unsigned long long)at_once, (long long)s.g.tokens_bytes,
		      (unsigned long long)qp_gate_cap_bytes(&s.g));
	/* A full bucket of cap = 6144: one chunk goes, 2048 tokens stay (with the allowance
	 * it would be 4 chunks). */
	assert_int_equal(at_once, CHUNK);
	assert_int_equal(s.g.tokens_bytes, BURST);
	assert_int_equal(s.g.stats.catchup_bytes, 0);
}

static void test_catchup_param(void **state)
{
	struct qp_gate_params p = { .catchup_ns = 2 * QP_NS_PER_S };
	char err[160];
	(void)state;

	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "catchup_ns 2000000000 ns: accepted 1000..1000000000"));
	p = (struct qp_gate_params){ 0 };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), 0);
	assert_int_equal(p.catchup_ns, QP_GATE_DEF_CATCHUP_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_sender_keeps_the_rate),
		cmocka_unit_test(test_late_burst_is_bounded),
		cmocka_unit_test(test_idle_earns_no_catchup),
		cmocka_unit_test(test_catchup_param),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
