/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacer's answer without reading again (qp_gate_closed_again, the pacer's memo): an
 * offer that nothing has changed since a closed verdict gets that verdict again without the
 * slot read or the gate's arithmetic. It must be the answer a full read and qp_gate_take
 * would give, to the counter. Two pacers on one live in-memory table and the same bytes in
 * flight take the same random schedule of offers, rate and window changes, grants, policy
 * changes, a heartbeat that stops and restarts, and a backend that sometimes cannot say
 * what is in flight; one of them is made to read every time. Every verdict, the gate's
 * state after every full read, and the counters at the end must be the same; and the
 * short path must have been taken often, or the test proves nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/gate.h"
#include "qpace/ratetable.h"
#include "qpace/rng.h"

#define T0 (5 * QP_NS_PER_S)
#define QPN 9u
#define MTU 1024u

struct backend {
	uint64_t inflight;
	bool unknown;   /* -ENOTCONN: not connected (yet) */
};

static int inflight_of(void *arg, uint64_t *bytes, uint32_t *unit)
{
	const struct backend *b = arg;

	if (b->unknown)
		return -ENOTCONN;
	*bytes = b->inflight;
	*unit = MTU;
	return 0;
}

static void silent(void *arg, const char *line)
{
	(void)arg;
	(void)line;
}

/* What a full read leaves in the gate, the fields the next verdict depends on. */
static void assert_same_gate(const struct qp_gate *a, const struct qp_gate *b)
{
	assert_int_equal(a->tokens_bytes, b->tokens_bytes);
	assert_int_equal(a->tokens_frac, b->tokens_frac);
	assert_int_equal(a->last_ns, b->last_ns);
	assert_int_equal(a->rate_bps, b->rate_bps);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->fallback, b->fallback);
	assert_int_equal(a->behind, b->behind);
	assert_int_equal(a->due_ns, b->due_ns);
	assert_int_equal(a->credit_spent_bytes, b->credit_spent_bytes);
	assert_int_equal(a->credit_gen, b->credit_gen);
	assert_int_equal(a->lost_ns, b->lost_ns);
	assert_int_equal(a->policy_hold_ns, b->policy_hold_ns);
	assert_int_equal(a->policy_safe_permille, b->policy_safe_permille);
}

static void run_schedule(uint64_t seed, unsigned steps, unsigned *short_paths)
{
	static const qp_rate_bps rates[] = { 1 * QP_GBPS, 10 * QP_GBPS, 40 * QP_GBPS,
					     100 * QP_GBPS, 300 * QP_MBPS };
	static const uint64_t caps[] = { 0, 4 * MTU, 8 * MTU + MTU - 1, 2 * MTU };
	static const uint64_t wants[] = { MTU, 4 * MTU, 100, 64 * MTU };
	struct qp_gate_params gp = { .chunk_bytes = MTU, .burst_bytes = MTU,
				     .line_bps = 100 * QP_GBPS };
	struct backend ba = { 0 }, bb = { 0 };
	struct qp_ratetable *t;
	struct qp_rate_src src;
	struct qp_pacer a, b;
	struct qp_gate_verdict va, vb;
	qp_time_ns now = T0;
	uint64_t want = MTU;
	unsigned flags = 0, hb_off = 0;
	struct qp_rng rng;
	char err[200];
	int slot;

	qp_rng_seed(&rng, seed);
	assert_int_equal(qp_gate_params_resolve(&gp, NULL, 0), 0);
	assert_int_equal(qp_ratetable_create_mem(4, &t, err, sizeof(err)), 0);
	slot = qp_ratetable_assign(t, QPN);
	assert_true(slot >= 0);
	qp_ratetable_set(t, (uint32_t)slot, 10 * QP_GBPS, 4 * MTU, 0, now);
	qp_ratetable_heartbeat(t, now);
	qp_rate_src_init_table(&src, t, 0, silent, NULL);
	qp_pacer_init(&a, &gp, NULL, &src, QPN, now);
	qp_pacer_init(&b, &gp, NULL, &src, QPN, now);
	a.inflight = b.inflight = inflight_of;
	a.inflight_arg = &ba;
	b.inflight_arg = &bb;
	for (unsigned i = 0; i < steps; i++) {
		uint64_t r = qp_rng_next(&rng);
		unsigned what = (unsigned)(r % 1000);
		int ra, rb;

		now += (r >> 10) % 3 ? (r >> 12) % 900 : 0;   /* a third at the same ns */
		if (what < 20)
			qp_ratetable_set(t, (uint32_t)slot, rates[(r >> 20) % 5], caps[(r >> 24) % 4],
					 (r >> 28) % 4 == 0 ? QP_RATE_F_CREDITS : 0, now);
		else if (what < 40)
			qp_ratetable_grant(t, (uint32_t)slot, ((r >> 20) % 8) * MTU, now);
		else if (what < 42)
			qp_ratetable_set_fallback(t, ((r >> 20) % 3 + 1) * 100 * QP_NS_PER_MS,
						  (uint32_t)((r >> 24) % 500) + 1);
		else if (what < 44)
			hb_off = 200;                     /* the agent stops beating a while */
		else if (what < 150 && ba.inflight >= MTU)
			ba.inflight = bb.inflight = ba.inflight - MTU;   /* an ACK */
		else if (what < 160)
			want = wants[(r >> 20) % 4];
		else if (what < 165)
			flags ^= QP_GATE_WHOLE;
		else if (what < 170)
			ba.unknown = bb.unknown = !ba.unknown;
		else if (what < 171)
			now += 2 * QP_NS_PER_MS;          /* longer than the memo is trusted */
		if (hb_off)
			now += 1000 * QP_NS_PER_US, hb_off--;
		else
			qp_ratetable_heartbeat(t, now);

		a.memo.valid = false;                     /* a reads the slot every time */
		ra = qp_pacer_try(&a, want, flags, now, &va);
		rb = qp_pacer_try(&b, want, flags, now, &vb);
		assert_int_equal(ra, rb);
		assert_memory_equal(&va, &vb, sizeof(va));
		if (b.gate.last_ns == a.gate.last_ns)
			assert_same_gate(&a.gate, &b.gate);
		else
			(*short_paths)++;
		if (ra == 0) {
			ba.inflight += va.bytes;
			bb.inflight += vb.bytes;
		}
	}
	assert_memory_equal(&a.gate.stats, &b.gate.stats, sizeof(a.gate.stats));
	qp_rate_src_fini(&src);
	qp_ratetable_close(t);
}

static void test_same_answers(void **state)
{
	static const uint64_t seeds[] = { 1, 0x9e3779b97f4a7c15ull, 12345, 777 };
	const unsigned steps = 100000;
	(void)state;

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		unsigned short_paths = 0;

		run_schedule(seeds[i], steps, &short_paths);
		print_message("seed %llu: %u offers, %u answered without a read\n",
			      (unsigned long long)seeds[i], steps, short_paths);
		assert_true(short_paths > steps / 10);
	}
}

/* A slot written while the memo stands is read again: the sequence moved. */
static void test_write_is_seen(void **state)
{
	struct qp_gate_params gp = { .chunk_bytes = MTU, .burst_bytes = MTU };
	struct backend be = { .inflight = 4 * MTU };
	struct qp_ratetable *t;
	struct qp_rate_src src;
	struct qp_pacer p;
	struct qp_gate_verdict v;
	char err[200];
	int slot;
	(void)state;

	assert_int_equal(qp_gate_params_resolve(&gp, NULL, 0), 0);
	assert_int_equal(qp_ratetable_create_mem(4, &t, err, sizeof(err)), 0);
	slot = qp_ratetable_assign(t, QPN);
	qp_ratetable_set(t, (uint32_t)slot, 10 * QP_GBPS, 4 * MTU, 0, T0);
	qp_ratetable_heartbeat(t, T0);
	qp_rate_src_init_table(&src, t, 0, silent, NULL);
	qp_pacer_init(&p, &gp, NULL, &src, QPN, T0);
	p.inflight = inflight_of;
	p.inflight_arg = &be;
	assert_int_equal(qp_pacer_try(&p, MTU, 0, T0, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_WINDOW);
	assert_true(p.memo.valid);
	assert_int_equal(qp_pacer_try(&p, MTU, 0, T0 + 10, &v), -EAGAIN);
	assert_int_equal(p.gate.stats.window_waits, 2);
	/* The agent opens the window: the next offer goes, though nothing else changed. */
	qp_ratetable_set(t, (uint32_t)slot, 10 * QP_GBPS, 8 * MTU, 0, T0 + 20);
	assert_int_equal(qp_pacer_try(&p, MTU, 0, T0 + 30, &v), 0);
	assert_int_equal(v.bytes, MTU);
	qp_rate_src_fini(&src);
	qp_ratetable_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_answers),
		cmocka_unit_test(test_write_is_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
