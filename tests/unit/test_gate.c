/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's core in injected time: rate x time within one burst over every window,
 * the burst bound, chunking, credits, the in-flight cap, a rate change taking effect at the
 * next chunk, parameter checks. What it does without an agent: test_gate_fallback.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gate_sim.h"
#include "qpace/gate.h"

static void test_rate_times_time_within_one_burst(void **state)
{
	static const struct { qp_rate_bps rate; uint64_t chunk, burst, msg; } cases[] = {
		{ 10 * QP_MBPS, 4096, 8192, 65536 },
		{ 100 * QP_MBPS, 4096, 2048, 1 << 20 },
		{ 1 * QP_GBPS, 4096, 8192, 65536 },
		{ 5 * QP_GBPS, 1024, 8192, 4000 },
		{ 25 * QP_GBPS, 65536, 8192, 1 << 20 },
		{ 1234567, 1000, 3000, 777 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim s;
		struct window_check w = { .rate = cases[i].rate };
		qp_time_ns t0, span = 2 * QP_NS_PER_S;
		uint64_t sent, expect, cap, max_piece = 0;

		sim_init(&s, cases[i].rate, cases[i].burst, cases[i].chunk);
		cap = qp_gate_cap_bytes(&s.g);
		t0 = s.now;
		sent = run_greedy(&s, t0 + span, cases[i].msg, 0, &w, &max_piece);
		expect = qp_bytes_in(cases[i].rate, s.now - t0);
		print_message("rate %llu b/s chunk %llu cap %llu: %llu bytes in %.3f s, rate x time "
			      "%llu, worst window excess %.1f bytes\n",
			      (unsigned long long)cases[i].rate,
			      (unsigned long long)cases[i].chunk, (unsigned long long)cap,
			      (unsigned long long)sent, (double)(s.now - t0) / 1e9,
			      (unsigned long long)expect, w.worst);
		/* Total: rate x time, plus at most the initial full bucket, minus at most one piece. */
		assert_true(sent <= expect + cap);
		assert_true(sent + cases[i].chunk >= expect);
		/* Every window: never more than rate x window + one bucket (+1 byte rounding). */
		assert_true(w.worst <= (double)cap + 1.0);
		assert_true(max_piece <= cases[i].chunk);
	}
}

static void test_burst_bound(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t at_once = 0;
	(void)state;

	sim_init(&s, QP_GBPS, 16384, 4096);
	s.now += QP_NS_PER_S; /* idle a long time: the bucket is full, not more */
	s.in.heartbeat_ns = s.now;
	while (sim_take(&s, 1 << 20, 0, &v) == 0)
		at_once += v.bytes;
	print_message("after 1 s idle: %llu bytes at one instant (burst 16384 + chunk 4096)\n",
		      (unsigned long long)at_once);
	assert_int_equal(at_once, 16384 + 4096);
	/* The next piece waits exactly one chunk's serialisation: 4096 B at 1 Gb/s. */
	assert_int_equal(v.wait, QP_GATE_WAIT_TOKENS);
	assert_int_equal(v.retry_ns - s.now, qp_tx_time_ns(4096, QP_GBPS));
}

static void test_chunking(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t left = 1 << 20, pieces = 0;
	qp_time_ns t0, debt_until;
	(void)state;

	sim_init(&s, 10 * QP_GBPS, 8192, 4096);
	while (left) {
		if (sim_take(&s, left, 0, &v) < 0) {
			s.now = v.retry_ns;
			continue;
		}
		assert_true(v.bytes == 4096);
		left -= v.bytes;
		pieces++;
	}
	assert_int_equal(pieces, 256);

	/* A SEND is one piece: it waits for a full bucket, then overdraws it. */
	sim_init(&s, QP_GBPS, 8192, 4096);
	t0 = s.now;
	assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_WHOLE, &v), 0);
	assert_int_equal(v.bytes, 1 << 20);
	assert_int_equal(s.g.stats.debt_pieces, 1);
	assert_int_equal(sim_take(&s, 4096, 0, &v), -EAGAIN);
	/* Debt of 1 MiB - 12 KiB (the full bucket), then 4 KiB for the next piece. */
	debt_until = t0 + qp_tx_time_ns((1 << 20) - 12288 + 4096, QP_GBPS);
	print_message("1 MiB SEND at 1 Gb/s: next 4 KiB piece at +%.1f us (expected +%.1f us)\n",
		      (double)(v.retry_ns - t0) / 1e3, (double)(debt_until - t0) / 1e3);
	assert_true(v.retry_ns >= debt_until - 1 && v.retry_ns <= debt_until + 1);
	s.now = v.retry_ns;
	assert_int_equal(sim_take(&s, 4096, 0, &v), 0);
}

static void test_credits_gate_posts(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	(void)state;

	sim_init(&s, QP_GBPS, 8192, 4096);
	s.in.slot.flags = QP_RATE_F_CREDITS;
	/* No credits: wait, even with a full bucket; ask again after credit_poll_ns. */
	assert_int_equal(sim_take(&s, 65536, 0, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_CREDITS);
	assert_int_equal(v.retry_ns - s.now, QP_GATE_DEF_CREDIT_POLL_NS);
	s.now += 10 * QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	assert_int_equal(sim_take(&s, 65536, 0, &v), -EAGAIN);
	/* A grant of 5000 bytes: one full chunk, then the 904 left, then wait again. */
	s.in.slot.credit_bytes += 5000;
	assert_int_equal(sim_take(&s, 65536, 0, &v), 0);
	assert_int_equal(v.bytes, 4096);
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	assert_int_equal(sim_take(&s, 65536, 0, &v), 0);
	assert_int_equal(v.bytes, 904);
	assert_int_equal(sim_take(&s, 65536, 0, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_CREDITS);
	/* Credits and tokens both bind: a large grant still goes at the rate. */
	s.in.slot.credit_bytes += 1 << 20;
	{
		qp_time_ns t0 = s.now;
		uint64_t sent = run_greedy(&s, t0 + 4 * QP_NS_PER_MS, 1 << 30, 0, NULL, NULL);

		assert_true(sent <= qp_bytes_in(QP_GBPS, 4 * QP_NS_PER_MS) + 8192);
		assert_true(sent + 4096 >= qp_bytes_in(QP_GBPS, 4 * QP_NS_PER_MS));
	}
	/* A new slot generation (the agent re-registered the QP) restarts the count. */
	s.in.slot.gen = 2;
	s.in.slot.credit_bytes = 4096;
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	assert_int_equal(sim_take(&s, 65536, 0, &v), 0);
	assert_int_equal(v.bytes, 4096);
	assert_int_equal(s.g.stats.credit_resets, 1);
	/* A dead agent: its credits still bind while the gate holds its rate (none left: wait),
	 * and a QP waiting for credits is released at the safe rate when the hold ends. */
	s.now += 200 * QP_NS_PER_MS;
	assert_int_equal(sim_take(&s, 65536, 0, &v), -EAGAIN);
	assert_int_equal(v.fallback, QP_GATE_FB_STALE);
	assert_int_equal(v.mode, QP_GATE_HOLD);
	assert_int_equal(v.wait, QP_GATE_WAIT_CREDITS);
	s.now += QP_GATE_DEF_HOLD_NS;
	assert_int_equal(sim_take(&s, 65536, 0, &v), 0);
	assert_int_equal(v.mode, QP_GATE_SAFE);
	assert_int_equal(v.bytes, 4096);
	print_message("credit waits %llu, pieces %llu\n",
		      (unsigned long long)s.g.stats.credit_waits,
		      (unsigned long long)s.g.stats.pieces);
}

/* The in-flight cap (a window algorithm's W): a closed loop where each piece is
 * acknowledged one RTT after it goes. Bytes in flight never pass the cap, pieces are cut to
 * whole packets, and the flow runs at cap per RTT although the rate would allow far more. */
static void test_window_caps_inflight(void **state)
{
	enum { MTU = 1024, RTT_NS = 100 * 1000, NSENT = 4096 };
	const uint64_t cap = 4 * MTU + MTU - 1;      /* HPCC's W + MTU - 1 with W = 4 MTU */
	static qp_time_ns ack_at[NSENT];
	static uint64_t ack_bytes[NSENT];
	unsigned head = 0, tail = 0;
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t inflight = 0, peak = 0, sent = 0;
	qp_time_ns t0, end;
	(void)state;

	sim_init(&s, 100 * QP_GBPS, 8192, 4096);
	s.in.slot.cap_bytes = cap;
	s.in.have_inflight = true;
	s.in.unit_bytes = MTU;
	t0 = s.now;
	end = t0 + 200 * (qp_time_ns)RTT_NS;
	while (s.now < end && tail < NSENT) {
		while (head < tail && ack_at[head] <= s.now)
			inflight -= ack_bytes[head++];
		s.in.inflight_bytes = inflight;
		s.in.heartbeat_ns = s.now;
		if (sim_take(&s, 1 << 20, 0, &v) == 0) {
			assert_true(v.bytes % MTU == 0);
			assert_true(inflight + v.bytes <= cap);
			inflight += v.bytes;
			sent += v.bytes;
			peak = inflight > peak ? inflight : peak;
			ack_at[tail] = s.now + RTT_NS;
			ack_bytes[tail++] = v.bytes;
			continue;
		}
		/* Closed: the window waits for the next ACK, the bucket for its refill. */
		s.now = v.wait == QP_GATE_WAIT_WINDOW && head < tail && ack_at[head] < v.retry_ns
				? ack_at[head] : v.retry_ns;
	}
	print_message("cap %llu B, RTT 100 us: peak in flight %llu B, %.1f packets per RTT "
		      "(expected 4), %llu window waits\n", (unsigned long long)cap,
		      (unsigned long long)peak, (double)sent / MTU / 200.0,
		      (unsigned long long)s.g.stats.window_waits);
	assert_int_equal(peak, 4 * MTU);
	assert_true(sent >= 4ull * MTU * 199 && sent <= 4ull * MTU * 201);
	assert_true(s.g.stats.window_waits > 0);

	/* Nothing in flight and a cap below one packet: one packet still goes. */
	s.in.slot.cap_bytes = 100;
	s.in.inflight_bytes = 0;
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), 0);
	assert_int_equal(v.bytes, MTU);
	/* ...and no second one until it is acknowledged. */
	s.in.inflight_bytes = MTU;
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_WINDOW);
	/* A SEND waits until it fits whole (or nothing is in flight). */
	s.in.slot.cap_bytes = 3 * MTU;
	s.in.inflight_bytes = 2 * MTU;
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	assert_int_equal(sim_take(&s, 2 * MTU, QP_GATE_WHOLE, &v), -EAGAIN);
	s.in.inflight_bytes = 0;
	assert_int_equal(sim_take(&s, 2 * MTU, QP_GATE_WHOLE, &v), 0);
	assert_int_equal(v.bytes, 2 * MTU);
	/* A dead agent: its cap still binds while the gate holds its rate, and is off once the
	 * hold is over (the safe rate never waits on a window). */
	s.in.inflight_bytes = 1 << 20;
	s.now += 200 * QP_NS_PER_MS;
	assert_int_equal(sim_take(&s, 4096, 0, &v), -EAGAIN);
	assert_int_equal(v.fallback, QP_GATE_FB_STALE);
	assert_int_equal(v.wait, QP_GATE_WAIT_WINDOW);
	s.now += QP_GATE_DEF_HOLD_NS;
	assert_int_equal(sim_take(&s, 4096, 0, &v), 0);
	assert_int_equal(v.mode, QP_GATE_SAFE);
}

static void test_rate_change_at_next_chunk(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	qp_time_ns t_change, t_first = 0, t0;
	uint64_t sent;
	(void)state;

	sim_init(&s, QP_GBPS, 4096, 4096);
	run_greedy(&s, s.now + 10 * QP_NS_PER_MS, 1 << 30, 0, NULL, NULL);
	/* The bucket is empty-ish now; the agent drops the rate to 100 Mb/s. */
	t_change = s.now;
	s.in.slot.rate_bps = 100 * QP_MBPS;
	/* The next piece may still use tokens earned at 1 Gb/s before the change... */
	while (s.in.heartbeat_ns = s.now, sim_take(&s, 4096, 0, &v) < 0)
		s.now = v.retry_ns;
	assert_true(v.events & QP_GATE_EV_RATE);
	assert_true(s.now - t_change <= qp_tx_time_ns(4096, QP_GBPS));
	/* ...but the one after it is paid at 100 Mb/s: 4 KiB takes 327.68 us, not 32.8 us. */
	t_first = s.now;
	while (s.in.heartbeat_ns = s.now, sim_take(&s, 4096, 0, &v) < 0)
		s.now = v.retry_ns;
	print_message("next piece after the change: +%.2f us (4 KiB at 100 Mb/s = %.2f us, "
		      "at 1 Gb/s = %.2f us)\n", (double)(s.now - t_first) / 1e3,
		      (double)qp_tx_time_ns(4096, 100 * QP_MBPS) / 1e3,
		      (double)qp_tx_time_ns(4096, QP_GBPS) / 1e3);
	assert_true(s.now - t_first + 1 >= qp_tx_time_ns(4096, 100 * QP_MBPS));
	assert_true(s.now - t_first <= qp_tx_time_ns(4096, 100 * QP_MBPS) + 1);
	t0 = s.now;
	sent = run_greedy(&s, t0 + 100 * QP_NS_PER_MS, 1 << 30, 0, NULL, NULL);
	assert_true(sent <= qp_bytes_in(100 * QP_MBPS, s.now - t0) + 4096);
	assert_true(sent + 4096 >= qp_bytes_in(100 * QP_MBPS, s.now - t0));
	/* Raised again: faster from the next piece on; max_bps caps table rates. */
	s.g.p.max_bps = 2 * QP_GBPS;
	s.in.slot.rate_bps = 40 * QP_GBPS;
	s.in.heartbeat_ns = s.now;
	sim_take(&s, 4096, 0, &v);
	assert_int_equal(v.rate_bps, 2 * QP_GBPS);
	assert_int_equal(s.g.stats.rate_changes, 2);
}

static void test_params(void **state)
{
	struct qp_gate_params p = { 0 };
	char err[160];
	(void)state;

	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), 0);
	assert_int_equal(p.burst_bytes, QP_GATE_DEF_BURST_BYTES);
	assert_int_equal(p.chunk_bytes, QP_GATE_DEF_CHUNK_BYTES);
	assert_int_equal(p.line_bps, QP_GATE_DEF_LINE_BPS);
	assert_int_equal(p.stale_ns, QP_GATE_DEF_STALE_NS);
	assert_int_equal(p.max_bps, 0);
	assert_int_equal(p.hold_ns, 0);       /* 0 stays: the agent's policy, else the default */
	assert_int_equal(p.safe_permille, 0);
	p = (struct qp_gate_params){ .chunk_bytes = 10 };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "chunk_bytes 10 bytes: accepted 64.."));
	assert_int_equal(p.chunk_bytes, 10); /* untouched on error */
	p = (struct qp_gate_params){ .stale_ns = 100 };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "stale_ns"));
	p = (struct qp_gate_params){ .max_bps = 5 };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "or 0 = none"));
	p = (struct qp_gate_params){ .safe_permille = 1001 };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "safe_permille 1001 /1000 of line_bps: accepted 1..1000 "
				    "(or 0 = the agent's policy)"));
	p = (struct qp_gate_params){ .hold_ns = 61 * QP_NS_PER_S };
	assert_int_equal(qp_gate_params_resolve(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "hold_ns"));
}

/* QP_GATE_NO_TOKENS (the NIC paces, verbs/qp_enforce.c): no token waits and no charge,
 * however fast the pieces come; the rate in force is still reported (what the NIC gets);
 * credits and the in-flight cap bind as ever. */
static void test_no_tokens_nic_paces(void **state)
{
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t sent = 0;
	int64_t tokens;
	(void)state;

	sim_init(&s, 100 * QP_MBPS, 8192, 4096);
	tokens = s.g.tokens_bytes;
	for (int i = 0; i < 1000; i++) {        /* 4 MB at one instant */
		assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_NO_TOKENS, &v), 0);
		sent += v.bytes;
	}
	assert_int_equal(sent, 1000 * 4096);
	assert_int_equal(v.rate_bps, 100 * QP_MBPS);
	assert_int_equal(s.g.tokens_bytes, tokens);
	assert_int_equal(s.g.stats.token_waits, 0);
	assert_int_equal(s.g.stats.nic_pieces, 1000);
	/* without the flag the same gate waits for its tokens at once */
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), 0);
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), 0);
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), 0);
	assert_int_equal(sim_take(&s, 1 << 20, 0, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_TOKENS);
	/* credits still bind */
	s.in.slot.flags = QP_RATE_F_CREDITS;
	s.in.slot.credit_bytes = 5000;
	assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_NO_TOKENS, &v), 0);
	assert_int_equal(v.bytes, 4096);
	assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_NO_TOKENS, &v), 0);
	assert_int_equal(v.bytes, 904);
	assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_NO_TOKENS, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_CREDITS);
	/* and the window: 2 packets of 1024 in flight at most */
	s.in.slot.flags = 0;
	s.in.slot.cap_bytes = 2048;
	s.in.have_inflight = true;
	s.in.unit_bytes = 1024;
	s.in.inflight_bytes = 2048;
	assert_int_equal(sim_take(&s, 1 << 20, QP_GATE_NO_TOKENS, &v), -EAGAIN);
	assert_int_equal(v.wait, QP_GATE_WAIT_WINDOW);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_times_time_within_one_burst),
		cmocka_unit_test(test_burst_bound),
		cmocka_unit_test(test_chunking),
		cmocka_unit_test(test_credits_gate_posts),
		cmocka_unit_test(test_window_caps_inflight),
		cmocka_unit_test(test_rate_change_at_next_chunk),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_no_tokens_nic_paces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
