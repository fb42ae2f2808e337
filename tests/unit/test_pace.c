/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The gate's shell: waits never return early and wake on a readable fd; the rate source
 * picks up a restarted agent's table; fallback is logged once; and a real-time paced loop
 * at 1 Gb/s for ~200 ms achieves the rate within 5% (this machine is shared and noisy, so
 * up to three attempts are made; each is printed). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"

#include "qpace/gate.h"

static char dir[64];

static int setup_dir(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "pace");
}

static int remove_dir(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

struct log_capture {
	unsigned lines;
	unsigned fallback_lines;
	unsigned mapped_lines;
	char last[256];
};

static void capture(void *arg, const char *line)
{
	struct log_capture *c = arg;

	c->lines++;
	c->fallback_lines += strstr(line, "safe rate") != NULL;
	c->mapped_lines += strstr(line, "mapped") != NULL;
	snprintf(c->last, sizeof(c->last), "%s", line);
	print_message("  log: %s\n", line);
}

static void test_wait_never_early(void **state)
{
	(void)state;
	for (unsigned m = 0; m < QP_WAIT_MODE_COUNT; m++) {
		struct qp_wait w = { .mode = (enum qp_wait_mode)m, .spin_ns = 50 * QP_NS_PER_US };
		struct qp_gate_stats st = { 0 };
		qp_time_ns worst = 0;

		for (unsigned i = 0; i < 40; i++) {
			qp_time_ns deadline = qp_now_ns() + (i % 8) * 40 * QP_NS_PER_US;
			qp_time_ns got = qp_wait_until(&w, deadline, -1, &st);

			assert_true(got >= deadline);
			assert_true(qp_now_ns() >= deadline);
			if (got - deadline > worst)
				worst = got - deadline;
		}
		print_message("%-6s: 40 waits of 0..280 us, none early, worst lateness %.1f us, "
			      "sleeps %llu, spun %.1f ms\n", qp_wait_mode_str(w.mode),
			      (double)worst / 1e3, (unsigned long long)st.sleeps,
			      (double)st.spin_ns / 1e6);
		if (w.mode == QP_WAIT_SPIN)
			assert_int_equal(st.sleeps, 0);
		if (w.mode == QP_WAIT_SLEEP)
			assert_int_equal(st.spin_ns, 0);
	}
}

static void test_wait_wakes_on_fd(void **state)
{
	int pfd[2];
	(void)state;

	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(write(pfd[1], "x", 1), 1);
	for (unsigned m = 0; m < QP_WAIT_MODE_COUNT; m++) {
		struct qp_wait w = { .mode = (enum qp_wait_mode)m };
		qp_time_ns t0 = qp_now_ns();
		qp_time_ns got = qp_wait_until(&w, t0 + QP_NS_PER_S, pfd[0], NULL);

		print_message("%-6s: readable fd ended a 1 s wait after %.1f us\n",
			      qp_wait_mode_str(w.mode), (double)(got - t0) / 1e3);
		assert_true(got - t0 < 200 * QP_NS_PER_MS);
	}
	close(pfd[0]);
	close(pfd[1]);
}

static void test_wait_mode_names(void **state)
{
	enum qp_wait_mode m;
	(void)state;

	assert_int_equal(qp_wait_mode_parse("hybrid", &m), 0);
	assert_int_equal(m, QP_WAIT_HYBRID);
	assert_int_equal(qp_wait_mode_parse("spin", &m), 0);
	assert_int_equal(m, QP_WAIT_SPIN);
	assert_int_equal(qp_wait_mode_parse("nap", &m), -EINVAL);
	assert_string_equal(qp_wait_mode_str((enum qp_wait_mode)9), "UNKNOWN");
}

/* Injected time: the rate source follows the agent to its new segment after a restart. */
static void test_rate_src_follows_restarted_agent(void **state)
{
	const qp_time_ns T = 10 * QP_NS_PER_S;
	struct log_capture cap = { 0 };
	struct qp_gate_params gp = { 0 };
	struct qp_ratetable *a, *b;
	struct qp_rate_src src;
	struct qp_pacer p;
	struct qp_gate_verdict v;
	char where[128], err[200];
	int slot;
	(void)state;

	snprintf(where, sizeof(where), "%s/rates", dir);
	assert_int_equal(qp_gate_params_resolve(&gp, NULL, 0), 0);
	qp_rate_src_init(&src, where, 0, capture, &cap);
	qp_pacer_init(&p, &gp, NULL, &src, 0x77, T);

	/* No agent yet: fallback, one line for the open error, one for the fallback. */
	for (qp_time_ns t = T; t < T + 500 * QP_NS_PER_MS; t += 10 * QP_NS_PER_MS)
		qp_pacer_try(&p, 4096, 0, t, &v);
	assert_int_equal(v.fallback, QP_GATE_FB_NO_TABLE);
	assert_int_equal(cap.fallback_lines, 1);
	assert_int_equal(cap.lines, 2);

	/* The agent starts: table, slot at 2 Gb/s, heartbeat. */
	assert_int_equal(qp_ratetable_create(where, 8, &a, err, sizeof(err)), 0);
	slot = qp_ratetable_assign(a, 0x77);
	qp_ratetable_set(a, (uint32_t)slot, 2 * QP_GBPS, 0, 0, T + QP_NS_PER_S);
	qp_ratetable_heartbeat(a, T + QP_NS_PER_S);
	qp_pacer_try(&p, 4096, 0, T + QP_NS_PER_S, &v);
	assert_int_equal(v.fallback, QP_GATE_FB_NONE);
	assert_int_equal(v.rate_bps, 2 * QP_GBPS);
	assert_true(v.events & QP_GATE_EV_RECOVERED);

	/* The agent dies (heartbeat stops) and a new one replaces the segment at 3 Gb/s. */
	assert_int_equal(qp_ratetable_create(where, 8, &b, err, sizeof(err)), 0);
	slot = qp_ratetable_assign(b, 0x77);
	qp_ratetable_set(b, (uint32_t)slot, 3 * QP_GBPS, 0, 0, T + 2 * QP_NS_PER_S);
	qp_ratetable_heartbeat(b, T + 2 * QP_NS_PER_S);
	/* Still fresh (50 ms after the old heartbeat): the old mapping's rate. */
	qp_pacer_try(&p, 4096, 0, T + QP_NS_PER_S + 50 * QP_NS_PER_MS, &v);
	assert_int_equal(v.rate_bps, 2 * QP_GBPS);
	/* Stale: the source reopens the name and finds the new agent. */
	qp_pacer_try(&p, 4096, 0, T + 2 * QP_NS_PER_S, &v);
	assert_int_equal(v.fallback, QP_GATE_FB_NONE);
	assert_int_equal(v.rate_bps, 3 * QP_GBPS);
	assert_int_equal(cap.mapped_lines, 2);
	assert_int_equal(cap.fallback_lines, 1); /* the switch-over never fell back */
	qp_ratetable_close(a);
	qp_ratetable_close(b);
	qp_rate_src_fini(&src);
}

/* Injected time: the fallback policy the agent publishes in its table reaches the gate
 * through the pacer, and outlives the agent: the heartbeat stops, the gate holds the last
 * rate for the agent's 300 ms, then runs at its 50/1000 of the line; the lines say so. */
static void test_pacer_follows_agent_policy(void **state)
{
	const qp_time_ns T = 10 * QP_NS_PER_S;
	struct log_capture cap = { 0 };
	struct qp_gate_params gp = { .line_bps = QP_GBPS };
	struct qp_ratetable *t;
	struct qp_rate_src src;
	struct qp_pacer p;
	struct qp_gate_verdict v;
	qp_time_ns hold_from = 0, safe_from = 0;
	char err[200];
	int slot;
	(void)state;

	assert_int_equal(qp_gate_params_resolve(&gp, NULL, 0), 0);
	assert_int_equal(qp_ratetable_create_mem(4, &t, err, sizeof(err)), 0);
	assert_int_equal(qp_ratetable_set_fallback(t, 300 * QP_NS_PER_MS, 50), 0);
	assert_int_equal(qp_ratetable_set_fallback(t, 1500 * QP_NS_PER_US, 50), -EINVAL);
	assert_int_equal(qp_ratetable_set_fallback(t, QP_NS_PER_S, 1001), -EINVAL);
	slot = qp_ratetable_assign(t, 9);
	qp_ratetable_set(t, (uint32_t)slot, 600 * QP_MBPS, 0, 0, T);
	qp_ratetable_heartbeat(t, T);
	qp_rate_src_init_table(&src, t, 0, capture, &cap);
	qp_pacer_init(&p, &gp, NULL, &src, 9, T);
	qp_pacer_try(&p, 4096, 0, T, &v);
	assert_int_equal(v.mode, QP_GATE_AGENT);
	assert_int_equal(v.rate_bps, 600 * QP_MBPS);
	for (qp_time_ns now = T; now < T + QP_NS_PER_S; now += QP_NS_PER_MS) {
		qp_pacer_try(&p, 4096, 0, now, &v);
		assert_true(v.rate_bps <= 600 * QP_MBPS);
		if (v.mode == QP_GATE_HOLD && !hold_from)
			hold_from = now;
		if (v.mode == QP_GATE_SAFE && !safe_from)
			safe_from = now;
	}
	print_message("heartbeat stopped at +0: hold from +%llu ms, safe (%llu b/s) from +%llu ms\n",
		      (unsigned long long)((hold_from - T) / QP_NS_PER_MS),
		      (unsigned long long)v.rate_bps,
		      (unsigned long long)((safe_from - T) / QP_NS_PER_MS));
	assert_int_equal(hold_from - T, QP_GATE_DEF_STALE_NS + QP_NS_PER_MS);
	assert_int_equal(safe_from - hold_from, 300 * QP_NS_PER_MS);
	assert_int_equal(v.rate_bps, 50 * QP_MBPS);
	assert_int_equal(cap.fallback_lines, 2);   /* holding ..., then: no agent for 300 ms */
	assert_non_null(strstr(cap.last, "no agent for 300 ms: pacing at the safe rate 50Mb/s"));
	qp_rate_src_fini(&src);
	qp_ratetable_close(t);
}

/* Real time: 1 Gb/s for 200 ms through a pacer and a live in-memory table.
 *
 * Honest margins on a shared machine: a gap between pieces longer than 1 ms (30 times the
 * ideal 32.8 us) is the scheduler taking the CPU away, not the pacer; the gate rightly does
 * not turn such a stall into a burst, so the rate it loses is the machine's. The check is on
 * the rate over the time the pacer had the CPU (elapsed minus stalls), within 5%; the raw
 * figure is printed beside it. Token arithmetic that lets too much through fails the upper
 * bound whatever the machine does; a pacer that loses time on every piece (a wait that
 * returns later than the bucket's slack absorbs) fails the lower one. An attempt that lost
 * more than three quarters of its time to stalls (less than 50 ms, ~1500 pieces, left to
 * judge) is repeated, up to three times. */
struct paced_run {
	uint64_t pieces;
	qp_time_ns elapsed_ns, stall_ns, longest_gap_ns;
	double raw_bps, adj_bps;
};

static void paced_run_1g(qp_time_ns span, struct paced_run *r)
{
	const qp_time_ns stall_gap = QP_NS_PER_MS, ideal = qp_tx_time_ns(4096, QP_GBPS);
	struct qp_gate_params gp = { 0 };
	struct qp_ratetable *t;
	struct qp_rate_src src;
	struct qp_pacer p;
	struct qp_gate_verdict v;
	qp_time_ns t0, now;
	char err[200];
	int slot;

	memset(r, 0, sizeof(*r));
	assert_int_equal(qp_gate_params_resolve(&gp, NULL, 0), 0);
	assert_int_equal(qp_ratetable_create_mem(4, &t, err, sizeof(err)), 0);
	slot = qp_ratetable_assign(t, 5);
	now = qp_now_ns();
	qp_ratetable_set(t, (uint32_t)slot, QP_GBPS, 0, 0, now);
	qp_ratetable_heartbeat(t, now);
	qp_rate_src_init_table(&src, t, 10 * QP_NS_PER_S, NULL, NULL);
	gp.stale_ns = 10 * QP_NS_PER_S;
	qp_pacer_init(&p, &gp, NULL, &src, 5, now);
	/* Spend the initial bucket so the figure is the steady rate. */
	while (qp_pacer_try(&p, 4096, 0, qp_now_ns(), &v) == 0)
		;
	qp_pacer_take(&p, 4096, 0, -1, NULL, NULL, &v);
	t0 = now = qp_now_ns();
	while (now - t0 < span) {
		qp_time_ns prev = now;

		qp_ratetable_heartbeat(t, now);
		qp_pacer_take(&p, 4096, 0, -1, NULL, NULL, &v);
		r->pieces++;
		now = qp_now_ns();
		if (now - prev > r->longest_gap_ns)
			r->longest_gap_ns = now - prev;
		if (now - prev > stall_gap)
			r->stall_ns += now - prev - ideal;
	}
	r->elapsed_ns = now - t0;
	r->raw_bps = (double)r->pieces * 4096 * 8 / ((double)r->elapsed_ns / 1e9);
	r->adj_bps = (double)r->pieces * 4096 * 8 /
		     ((double)(r->elapsed_ns - r->stall_ns) / 1e9);
	qp_ratetable_close(t);
}

#if defined(__SANITIZE_ADDRESS__)
#define QP_TEST_SANITIZED 1
#else
#define QP_TEST_SANITIZED 0
#endif

static void test_realtime_1g_within_5pct(void **state)
{
	struct paced_run r;
	int attempt;
	(void)state;

	for (attempt = 1; attempt <= 3; attempt++) {
		paced_run_1g(200 * QP_NS_PER_MS, &r);
		print_message("attempt %d: 1 Gb/s, %llu pieces of 4 KiB in %.1f ms: %.1f Mb/s "
			      "(%+.2f%%); stalls > 1 ms took %.1f ms (longest gap %.2f ms); "
			      "over the rest %.1f Mb/s (%+.2f%%)\n", attempt,
			      (unsigned long long)r.pieces, (double)r.elapsed_ns / 1e6,
			      r.raw_bps / 1e6, (r.raw_bps - 1e9) / 1e7,
			      (double)r.stall_ns / 1e6, (double)r.longest_gap_ns / 1e6,
			      r.adj_bps / 1e6, (r.adj_bps - 1e9) / 1e7);
		/* Never faster than the rate, stalls or not (one bucket is 0.05% here). */
		assert_true(r.raw_bps < 1.05e9);
		if (r.stall_ns * 4 < r.elapsed_ns * 3)
			break;
	}
	assert_true(attempt <= 3); /* else: the machine never gave the pacer 50 ms of CPU */
	assert_true(r.adj_bps < 1.05e9);
	/* The lower bound is the pacer's precision, asserted in the plain build. Under ASan
	 * every instrumented loop is several times slower and the pacer can be CPU-bound, so
	 * there only a pacer that lost most of its rate fails. */
	assert_true(r.adj_bps > (QP_TEST_SANITIZED ? 0.5e9 : 0.95e9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_never_early),
		cmocka_unit_test(test_wait_wakes_on_fd),
		cmocka_unit_test(test_wait_mode_names),
		cmocka_unit_test(test_rate_src_follows_restarted_agent),
		cmocka_unit_test(test_pacer_follows_agent_policy),
		cmocka_unit_test(test_realtime_1g_within_5pct),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
