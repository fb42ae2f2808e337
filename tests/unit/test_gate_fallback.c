/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate without an agent, in injected time: when the agent's heartbeat goes stale
 * the gate holds the last rate the agent published (capped at the QP's line rate) with its
 * window and credits for the hold time, then falls to the safe rate (a share of the line
 * rate, never above the last agent rate); the rate never rises while no agent is in force;
 * each change is reported once; a restarted agent takes over; the policy comes from the
 * QP, else the agent's table, else the defaults; a QP that never had an agent runs at the
 * safe rate and never stalls. */
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

/* What a greedy sender passed through the gate over a span with no heartbeat. */
struct span {
	uint64_t bytes[QP_GATE_MODE_COUNT];      /* per mode */
	qp_time_ns first[QP_GATE_MODE_COUNT];    /* first verdict in each mode (0 = none) */
	qp_rate_bps max_rate;                    /* highest rate in force seen */
	qp_rate_bps rate[QP_GATE_MODE_COUNT];    /* the rate in force in each mode (last) */
};

/* Greedy sender until @until, the heartbeat left as it is (the agent is dead). */
static void run_dead(struct sim *s, qp_time_ns until, struct span *sp)
{
	struct qp_gate_verdict v;

	while (s->now < until) {
		int rc = sim_take(s, 1 << 20, 0, &v);

		if (!sp->first[v.mode])
			sp->first[v.mode] = s->now;
		sp->rate[v.mode] = v.rate_bps;
		if (v.rate_bps > sp->max_rate)
			sp->max_rate = v.rate_bps;
		if (rc < 0) {
			s->now = v.retry_ns;
			continue;
		}
		sp->bytes[v.mode] += v.bytes;
	}
}

/* bytes within rate x time, minus one piece, plus one bucket */
static void assert_rate_time(uint64_t bytes, qp_rate_bps rate, qp_time_ns t, uint64_t cap)
{
	uint64_t expect = qp_bytes_in(rate, t);

	print_message("  %llu bytes in %.3f s at %llu b/s (rate x time %llu)\n",
		      (unsigned long long)bytes, (double)t / 1e9, (unsigned long long)rate,
		      (unsigned long long)expect);
	assert_true(bytes <= expect + cap);
	assert_true(bytes + 4096 >= expect);
}

static void test_stale_hold_then_safe(void **state)
{
	const qp_rate_bps line = 400 * QP_MBPS, agent = 300 * QP_MBPS;
	struct sim s;
	struct span sp = { 0 };
	struct qp_gate_verdict v;
	qp_time_ns hb, hold_at, safe_at, end;
	uint64_t cap;
	(void)state;

	sim_init_params(&s, agent, (struct qp_gate_params){ .line_bps = line });
	cap = qp_gate_cap_bytes(&s.g);
	run_greedy(&s, s.now + 50 * QP_NS_PER_MS, 1 << 20, 0, NULL, NULL);
	assert_int_equal(s.g.mode, QP_GATE_AGENT);
	/* The agent dies: its last heartbeat is hb. The gate keeps the agent's rate for
	 * stale_ns, holds it for hold_ns, then runs at the safe rate: 1/10 of 400M. */
	hb = s.in.heartbeat_ns = s.now;
	end = hb + 3 * QP_NS_PER_S;
	run_dead(&s, end, &sp);
	hold_at = sp.first[QP_GATE_HOLD];
	safe_at = sp.first[QP_GATE_SAFE];
	print_message("agent dead at +0: hold from +%.1f ms, safe from +%.1f ms; rates: hold "
		      "%llu, safe %llu b/s; fallback said %u, hold end %u time(s)\n",
		      (double)(hold_at - hb) / 1e6, (double)(safe_at - hb) / 1e6,
		      (unsigned long long)sp.rate[QP_GATE_HOLD],
		      (unsigned long long)sp.rate[QP_GATE_SAFE], s.fallback_ev, s.safe_ev);
	assert_true(hold_at > hb + QP_GATE_DEF_STALE_NS);
	assert_true(hold_at <= hb + QP_GATE_DEF_STALE_NS + qp_tx_time_ns(4096, agent) + 1);
	assert_true(safe_at >= hold_at + QP_GATE_DEF_HOLD_NS);
	assert_true(safe_at <= hold_at + QP_GATE_DEF_HOLD_NS + qp_tx_time_ns(4096, agent) + 1);
	assert_int_equal(sp.rate[QP_GATE_HOLD], agent);
	assert_int_equal(sp.rate[QP_GATE_SAFE], line / 10);
	assert_int_equal(sp.max_rate, agent);  /* never above what the agent last set */
	assert_int_equal(s.fallback_ev, 1);
	assert_int_equal(s.safe_ev, 1);
	assert_int_equal(s.g.stats.safe_entries, 1);
	/* What passed: the agent's rate while held, the safe rate after. */
	assert_rate_time(sp.bytes[QP_GATE_HOLD], agent, safe_at - hold_at, cap);
	assert_rate_time(sp.bytes[QP_GATE_SAFE], line / 10, s.now - safe_at, cap);
	assert_int_equal(s.g.stats.safe_bytes, sp.bytes[QP_GATE_SAFE]);
	assert_int_equal(s.g.stats.fallback_bytes,
			 sp.bytes[QP_GATE_HOLD] + sp.bytes[QP_GATE_SAFE]);

	/* A restarted agent: a fresh table without the QP (reason changes: said again, still
	 * the safe rate), then its slot with no rate yet, then its rate: in force again. */
	s.in.heartbeat_ns = s.now;
	s.in.have_slot = false;
	sim_take(&s, 4096, 0, &v);
	assert_int_equal(v.fallback, QP_GATE_FB_NO_SLOT);
	assert_int_equal(v.mode, QP_GATE_SAFE);
	assert_int_equal(v.rate_bps, line / 10);
	assert_int_equal(s.fallback_ev, 2);
	s.in.have_slot = true;
	s.in.slot.gen = 7;
	s.in.slot.rate_bps = 0;
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	sim_take(&s, 4096, 0, &v);
	assert_int_equal(v.fallback, QP_GATE_FB_NO_RATE);
	assert_int_equal(v.rate_bps, line / 10);
	s.in.slot.rate_bps = line;
	s.now += QP_NS_PER_MS;
	s.in.heartbeat_ns = s.now;
	sim_take(&s, 4096, 0, &v);
	assert_true(v.events & QP_GATE_EV_RECOVERED);
	assert_int_equal(v.mode, QP_GATE_AGENT);
	assert_int_equal(v.rate_bps, line);
	assert_int_equal(s.recovered_ev, 1);
}

/* The case: an HPCC QP cut to 400 kb/s on a 400 Mb/s line. A 1 Gb/s fallback sent it
 * at 2.5x its line; now it stays at 400 kb/s, held and after the hold. */
static void test_low_rate_stays_low(void **state)
{
	const qp_rate_bps line = 400 * QP_MBPS, agent = 400 * QP_KBPS;
	struct sim s;
	struct span sp = { 0 };
	qp_time_ns t0;
	uint64_t cap;
	(void)state;

	sim_init_params(&s, agent, (struct qp_gate_params){ .line_bps = line });
	cap = qp_gate_cap_bytes(&s.g);
	run_greedy(&s, s.now + 100 * QP_NS_PER_MS, 1 << 20, 0, NULL, NULL);
	t0 = s.now;
	run_dead(&s, t0 + 5 * QP_NS_PER_S, &sp);
	print_message("cut to 400 kb/s, agent dead for 5 s: highest rate in force %llu b/s, "
		      "%llu bytes\n", (unsigned long long)sp.max_rate,
		      (unsigned long long)(sp.bytes[0] + sp.bytes[1] + sp.bytes[2]));
	assert_int_equal(sp.max_rate, agent);
	assert_int_equal(sp.rate[QP_GATE_SAFE], agent);
	assert_int_equal(s.g.mode, QP_GATE_SAFE);
	assert_rate_time(sp.bytes[0] + sp.bytes[1] + sp.bytes[2], agent, s.now - t0, cap);
}

/* A manual rate above the line (qpacectl set 2G on a 400M QP) is in force while the agent
 * is; once it is gone the gate never holds more than the line rate. */
static void test_hold_capped_at_line_rate(void **state)
{
	struct sim s;
	struct span sp = { 0 };
	(void)state;

	sim_init_params(&s, 2 * QP_GBPS, (struct qp_gate_params){ .line_bps = 400 * QP_MBPS });
	run_greedy(&s, s.now + 10 * QP_NS_PER_MS, 1 << 20, 0, NULL, NULL);
	assert_int_equal(s.g.rate_bps, 2 * QP_GBPS);
	run_dead(&s, s.now + 2 * QP_NS_PER_S, &sp);
	assert_int_equal(sp.rate[QP_GATE_HOLD], 400 * QP_MBPS);
	assert_int_equal(sp.rate[QP_GATE_SAFE], 40 * QP_MBPS);
}

/* Credits and the window of a dead agent keep binding in the hold: a closed loop where each
 * piece is acknowledged one RTT later (the peer is alive; only the agent died). */
static void test_hold_keeps_window_and_credits(void **state)
{
	enum { MTU = 1024, RTT_NS = 100 * 1000, NSENT = 32768 };
	const uint64_t wcap = 8 * MTU;
	static qp_time_ns ack_at[NSENT];
	static uint64_t ack_bytes[NSENT];
	unsigned head = 0, tail = 0;
	struct sim s;
	struct qp_gate_verdict v;
	uint64_t inflight = 0, peak_hold = 0, sent_hold = 0, sent_safe = 0, peak_safe = 0;
	uint64_t hold_credit_waits = 0, hold_window_waits = 0;
	qp_time_ns end;
	(void)state;

	/* Stale after 1 ms, then a 50 ms hold: 1 MiB of credits at 8 KiB per RTT lasts
	 * ~13 ms, so the hold spends the rest of its time waiting for credits. */
	sim_init_params(&s, 10 * QP_GBPS, (struct qp_gate_params){
		.line_bps = 10 * QP_GBPS, .stale_ns = QP_NS_PER_MS, .hold_ns = 50 * QP_NS_PER_MS });
	s.in.slot.cap_bytes = wcap;
	s.in.slot.flags = QP_RATE_F_CREDITS;
	s.in.slot.credit_bytes = 1 << 20;       /* 1 MiB granted, then the agent dies */
	s.in.have_inflight = true;
	s.in.unit_bytes = MTU;
	end = s.now + 200 * QP_NS_PER_MS;
	while (s.now < end && tail < NSENT) {
		while (head < tail && ack_at[head] <= s.now)
			inflight -= ack_bytes[head++];
		s.in.inflight_bytes = inflight;
		if (sim_take(&s, 1 << 20, 0, &v) == 0) {
			if (v.mode == QP_GATE_SAFE) {
				sent_safe += v.bytes;
			} else {
				sent_hold += v.bytes;
				assert_true(inflight + v.bytes <= wcap);
			}
			inflight += v.bytes;
			if (v.mode == QP_GATE_SAFE && inflight > peak_safe)
				peak_safe = inflight;
			if (v.mode != QP_GATE_SAFE && inflight > peak_hold)
				peak_hold = inflight;
			ack_at[tail] = s.now + RTT_NS;
			ack_bytes[tail++] = v.bytes;
			continue;
		}
		hold_credit_waits += v.mode == QP_GATE_HOLD && v.wait == QP_GATE_WAIT_CREDITS;
		hold_window_waits += v.mode == QP_GATE_HOLD && v.wait == QP_GATE_WAIT_WINDOW;
		s.now = v.wait == QP_GATE_WAIT_WINDOW && head < tail && ack_at[head] < v.retry_ns
				? ack_at[head] : v.retry_ns;
	}
	print_message("agent + hold: %llu bytes (credits granted %u), peak in flight %llu "
		      "(cap %llu); in the hold %llu credit and %llu window waits; safe: %llu "
		      "bytes, peak in flight %llu\n", (unsigned long long)sent_hold, 1 << 20,
		      (unsigned long long)peak_hold, (unsigned long long)wcap,
		      (unsigned long long)hold_credit_waits, (unsigned long long)hold_window_waits,
		      (unsigned long long)sent_safe, (unsigned long long)peak_safe);
	/* Before the hold ended: never past the credits nor the window, and the hold did
	 * wait on both. */
	assert_int_equal(sent_hold, 1 << 20);
	assert_true(peak_hold <= wcap);
	assert_true(hold_credit_waits > 0);
	assert_true(hold_window_waits > 0);
	/* After it: the safe rate (1 Gb/s) alone; neither credits nor the window bind. */
	assert_true(peak_safe > wcap);
	assert_true(sent_safe > (uint64_t)qp_bytes_in(QP_GBPS, 100 * QP_NS_PER_MS));
	assert_int_equal(s.g.rate_bps, QP_GBPS);
}

/* The hold and the safe share: the QP's own, else the agent's (published in the table and
 * remembered from when it was in force), else 1 s and 1/10. */
static void test_policy_precedence(void **state)
{
	static const struct {
		qp_time_ns qp_hold, table_hold, want_hold;
		uint32_t qp_pm, table_pm, want_pm;
	} cases[] = {
		{ 0, 0, QP_GATE_DEF_HOLD_NS, 0, 0, QP_GATE_DEF_SAFE_PERMILLE },
		{ 0, 300 * QP_NS_PER_MS, 300 * QP_NS_PER_MS, 0, 50, 50 },
		{ 2 * QP_NS_PER_S, 300 * QP_NS_PER_MS, 2 * QP_NS_PER_S, 200, 50, 200 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim s;
		struct span sp = { 0 };
		qp_time_ns hb;

		sim_init_params(&s, QP_GBPS, (struct qp_gate_params){
			.line_bps = QP_GBPS, .hold_ns = cases[i].qp_hold,
			.safe_permille = cases[i].qp_pm });
		s.in.policy_hold_ns = cases[i].table_hold;
		s.in.policy_safe_permille = cases[i].table_pm;
		run_greedy(&s, s.now + QP_NS_PER_MS, 1 << 20, 0, NULL, NULL);
		/* The table goes away with the agent: the policy seen while it lived stays. */
		hb = s.in.heartbeat_ns;
		s.in.have_table = s.in.have_slot = false;
		run_dead(&s, s.now + 3 * QP_NS_PER_S, &sp);
		print_message("policy qp %llu ms/%u, table %llu ms/%u: hold %.1f ms, safe %llu "
			      "b/s\n", (unsigned long long)(cases[i].qp_hold / QP_NS_PER_MS),
			      cases[i].qp_pm,
			      (unsigned long long)(cases[i].table_hold / QP_NS_PER_MS),
			      cases[i].table_pm,
			      (double)(sp.first[QP_GATE_SAFE] - sp.first[QP_GATE_HOLD]) / 1e6,
			      (unsigned long long)sp.rate[QP_GATE_SAFE]);
		assert_true(sp.first[QP_GATE_HOLD] >= hb);
		assert_true(sp.first[QP_GATE_SAFE] - sp.first[QP_GATE_HOLD] >= cases[i].want_hold);
		assert_true(sp.first[QP_GATE_SAFE] - sp.first[QP_GATE_HOLD] <=
			    cases[i].want_hold + qp_tx_time_ns(4096, QP_GBPS) + 1);
		assert_int_equal(qp_gate_hold_ns(&s.g), cases[i].want_hold);
		assert_int_equal(sp.rate[QP_GATE_SAFE], QP_GBPS / 1000 * cases[i].want_pm);
	}
}

/* Never an agent (no table, no slot, a stale or unstamped heartbeat, no rate): the safe
 * rate from the first piece, no hold, credits ignored, never a stall, said once. */
static void test_no_agent_never_stalls(void **state)
{
	static const struct { bool table, slot; qp_time_ns hb; qp_rate_bps rate;
			      enum qp_gate_fallback want; } cases[] = {
		{ false, false, 0, 0, QP_GATE_FB_NO_TABLE },
		{ true, false, 1, 0, QP_GATE_FB_NO_SLOT },
		{ true, true, 0, QP_GBPS, QP_GATE_FB_STALE },  /* heartbeat never stamped */
		{ true, true, 1, 0, QP_GATE_FB_NO_RATE },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim s;
		struct qp_gate_verdict v;
		uint64_t sent = 0;

		sim_init(&s, cases[i].rate, 8192, 4096);
		assert_int_equal(s.g.rate_bps, QP_GATE_DEF_LINE_BPS / 10);  /* before any verdict */
		s.in.have_table = cases[i].table;
		s.in.have_slot = cases[i].slot;
		s.in.slot.flags = QP_RATE_F_CREDITS; /* never in force: ignored */
		for (int k = 0; k < 1000; k++) {
			s.in.heartbeat_ns = cases[i].hb ? s.now : 0;
			if (sim_take(&s, 1 << 20, 0, &v) < 0)
				s.now = v.retry_ns;
			else
				sent += v.bytes;
		}
		print_message("%s: %llu bytes passed at %llu b/s, said %u time(s)\n",
			      qp_gate_fallback_str(cases[i].want), (unsigned long long)sent,
			      (unsigned long long)v.rate_bps, s.fallback_ev);
		assert_int_equal(v.fallback, cases[i].want);
		assert_int_equal(v.mode, QP_GATE_SAFE);
		assert_int_equal(v.rate_bps, QP_GATE_DEF_LINE_BPS / 10);
		assert_int_equal(s.fallback_ev, 1);
		assert_int_equal(s.safe_ev, 0);       /* no hold to end */
		assert_int_equal(s.g.stats.credit_waits, 0);
		assert_true(sent > 400 * 4096);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_hold_then_safe),
		cmocka_unit_test(test_low_rate_stays_low),
		cmocka_unit_test(test_hold_capped_at_line_rate),
		cmocka_unit_test(test_hold_keeps_window_and_credits),
		cmocka_unit_test(test_policy_precedence),
		cmocka_unit_test(test_no_agent_never_stalls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
