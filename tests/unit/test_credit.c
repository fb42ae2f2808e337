/* IA credit pacing: W and Δ, uniform first grants, the capacity bound per period,
 * recomputation when n changes, bounds, bad parameters.
 *
 * The link: C = 10 Gb/s, RTT = 8 us, MTU = 1000 B, so C·RTT = 10 MTU and one MTU takes
 * 800 ns on the link. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/credit.h"

#define C_BPS (10 * QP_GBPS)
#define RTT 8000ULL
#define MTU 1000u

static const struct credit_params params = {
	.link_bps = C_BPS, .rtt_ns = RTT, .mtu_bytes = MTU, .max_senders = 64, .seed = 42,
};

static struct credit_pacer *make_seeded(uint32_t n_senders, qp_time_ns now, uint64_t seed)
{
	struct credit_params p = params;
	char err[256] = "";
	struct credit_pacer *cp;

	p.seed = seed;
	cp = credit_create(&p, err, sizeof(err));

	if (!cp)
		print_message("credit_create: %s\n", err);
	assert_non_null(cp);
	for (uint32_t i = 0; i < n_senders; i++)
		assert_int_equal(credit_add(cp, 100 + i, now), 0);
	return cp;
}

static struct credit_pacer *make(uint32_t n_senders, qp_time_ns now)
{
	return make_seeded(n_senders, now, params.seed);
}

static void test_window_examples(void **state)
{
	static const struct { uint32_t n, w; qp_time_ns delta; } rows[] = {
		{ 1, 10, 0 },
		{ 5, 2, 0 },      /* the first example */
		{ 10, 1, 0 },
		{ 11, 1, 800 },
		{ 20, 1, RTT },   /* the second example: Δ = RTT */
	};
	(void)state;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t w = 0;
		qp_time_ns d = 1;

		assert_int_equal(credit_window(C_BPS, RTT, MTU, rows[i].n, &w, &d, NULL, 0), 0);
		print_message("n=%2u: W=%u delta=%llu ns (want W=%u delta=%llu)\n", rows[i].n, w,
			      (unsigned long long)d, rows[i].w, (unsigned long long)rows[i].delta);
		assert_int_equal(w, rows[i].w);
		assert_int_equal(d, rows[i].delta);
	}
}

/* The first grant of a sender added at t lies in [t, t + RTT + Δ], uniformly: with n = 1
 * (period RTT) and with n = 20 (period 2 RTT), 10,000 additions each. */
static void test_first_grant_uniform(void **state)
{
	enum { DRAWS = 10000, BINS = 10 };
	static const uint32_t others[] = { 0, 19 };
	(void)state;

	for (unsigned c = 0; c < 2; c++) {
		struct credit_pacer *cp = make_seeded(others[c], 0, 1000 + c);
		unsigned hist[BINS] = { 0 };
		double sum = 0, mid;
		qp_time_ns period = 0, lo = QP_TIME_NEVER, hi = 0;

		for (unsigned i = 0; i < DRAWS; i++) {
			qp_time_ns now = 1000000 + (qp_time_ns)i * 777, next, off;

			assert_int_equal(credit_add(cp, 7, now), 0);
			period = credit_period_ns(cp);
			assert_int_equal(credit_sender_next_ns(cp, 7, &next), 0);
			assert_true(next >= now && next <= now + period);
			off = next - now;
			sum += (double)off;
			lo = off < lo ? off : lo;
			hi = off > hi ? off : hi;
			hist[off * BINS / (period + 1)]++;
			assert_int_equal(credit_remove(cp, 7, now), 0);
		}
		mid = period / 2.0;
		print_message("n=%u: period %llu ns, mean %.1f (mid %.1f, %.2f%% off), range %llu..%llu, "
			      "bins", others[c] + 1, (unsigned long long)period, sum / DRAWS, mid,
			      100 * (sum / DRAWS - mid) / mid, (unsigned long long)lo,
			      (unsigned long long)hi);
		for (unsigned b = 0; b < BINS; b++)
			print_message(" %u", hist[b]);
		print_message("\n");
		assert_int_equal(period, others[c] ? 2 * RTT : RTT);
		assert_true(sum / DRAWS > mid * 0.98 && sum / DRAWS < mid * 1.02);
		for (unsigned b = 0; b < BINS; b++) /* expected 1000, sd ~30 */
			assert_in_range(hist[b], 850, 1150);
		assert_true(lo < period / 100 && hi > period - period / 100);
		credit_destroy(cp);
	}
}

static int by_due(const void *a, const void *b)
{
	const struct credit_grant *x = a, *y = b;
	return (x->due_ns > y->due_ns) - (x->due_ns < y->due_ns);
}

/* Poll at irregular times (some a period or more late) for @periods periods; return the
 * grants in due order. */
static size_t simulate(struct credit_pacer *cp, unsigned periods, int late,
		       struct credit_grant *log, size_t cap)
{
	qp_time_ns period = credit_period_ns(cp), end = periods * period, now = 0;
	uint64_t lcg = 7;
	size_t n = 0;

	while (now < end) {
		struct credit_grant out[64];
		unsigned k = credit_poll(cp, now, out, 64);

		assert_true(n + k <= cap);
		for (unsigned i = 0; i < k; i++) {
			assert_true(out[i].due_ns <= now);
			log[n++] = out[i];
		}
		lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		now += 1 + (lcg >> 33) % (period / 3);
		if (late && (lcg >> 20) % 50 == 0)
			now += 3 * period + period / 2; /* the shell stalls */
	}
	qsort(log, n, sizeof(log[0]), by_due);
	return n;
}

/* Granted bytes in any window [t, t + RTT + Δ) never exceed what C carries in it; in
 * steady polling the link is fully granted. 5 senders (W = 2, Δ = 0) and 20 (W = 1,
 * Δ = RTT), polled on time and with stalls. */
static void test_grants_within_capacity(void **state)
{
	enum { PERIODS = 2000 };
	static const uint32_t ns[] = { 5, 20 };
	static struct credit_grant log[20 * (PERIODS + 2)];
	(void)state;

	for (unsigned c = 0; c < 4; c++) {
		uint32_t n = ns[c / 2];
		int late = c % 2;
		struct credit_pacer *cp = make(n, 0);
		qp_time_ns period = credit_period_ns(cp);
		uint64_t cap = qp_bytes_in(C_BPS, period), worst = 0, total = 0;
		size_t count = simulate(cp, PERIODS, late, log, sizeof(log) / sizeof(log[0]));
		size_t j = 0;
		uint64_t in_window = 0;
		double util;

		for (size_t i = 0; i < count; i++) { /* window [log[i].due, +period) */
			while (j < count && log[j].due_ns < log[i].due_ns + period)
				in_window += log[j++].bytes;
			worst = in_window > worst ? in_window : worst;
			in_window -= log[i].bytes;
			total += log[i].bytes;
		}
		util = (double)total / (double)qp_bytes_in(C_BPS, PERIODS * period);
		print_message("n=%2u %s: W=%u period %llu ns, %zu grants, worst window %llu B of "
			      "%llu B, granted %.3f of C, skipped %llu\n", n, late ? "stalls " : "on time",
			      credit_w(cp), (unsigned long long)period, count,
			      (unsigned long long)worst, (unsigned long long)cap, util,
			      (unsigned long long)credit_get_stats(cp)->skipped);
		assert_true(worst <= cap);
		assert_int_equal(worst, (uint64_t)n * credit_w(cp) * MTU); /* the bound is tight */
		if (late) {
			assert_true(credit_get_stats(cp)->skipped > 0);
		} else {
			assert_int_equal(credit_get_stats(cp)->skipped, 0);
			assert_true(util > 0.99 && util <= 1.0);
		}
		credit_destroy(cp);
	}
}

/* Adding and removing senders recomputes W, Δ and the period; a sender already there keeps
 * its next grant time, which then carries the new W and is followed one new period later. */
static void test_n_changes_recompute(void **state)
{
	struct credit_pacer *cp = make(5, 0);
	struct credit_grant out[64];
	qp_time_ns next, again;
	unsigned k = 0;
	(void)state;

	assert_int_equal(credit_w(cp), 2);
	assert_int_equal(credit_delta_ns(cp), 0);
	assert_int_equal(credit_period_ns(cp), RTT);
	assert_int_equal(credit_grant_bytes(cp), 2 * MTU);
	assert_int_equal(credit_sender_next_ns(cp, 100, &next), 0);

	for (uint32_t i = 5; i < 20; i++)
		assert_int_equal(credit_add(cp, 100 + i, 10), 0);
	assert_int_equal(credit_senders(cp), 20);
	assert_int_equal(credit_w(cp), 1);
	assert_int_equal(credit_delta_ns(cp), RTT);
	assert_int_equal(credit_period_ns(cp), 2 * RTT);
	assert_int_equal(credit_sender_next_ns(cp, 100, &again), 0);
	assert_int_equal(again, next); /* phase kept */

	/* Poll exactly at sender 100's grant: one MTU now, next one 2 RTT later. */
	k = credit_poll(cp, next, out, 64);
	for (unsigned i = 0; i < k; i++)
		if (out[i].sender_id == 100) {
			assert_int_equal(out[i].bytes, MTU);
			assert_int_equal(out[i].due_ns, next);
		}
	assert_int_equal(credit_sender_next_ns(cp, 100, &again), 0);
	assert_int_equal(again, next + 2 * RTT);

	for (uint32_t i = 5; i < 20; i++)
		assert_int_equal(credit_remove(cp, 100 + i, 20), 0);
	assert_int_equal(credit_w(cp), 2);
	assert_int_equal(credit_delta_ns(cp), 0);
	assert_int_equal(credit_period_ns(cp), RTT);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(credit_remove(cp, 100 + i, 30), 0);
	assert_int_equal(credit_w(cp), 0);
	assert_int_equal(credit_period_ns(cp), 0);
	assert_int_equal(credit_next_ns(cp), QP_TIME_NEVER);
	assert_int_equal(credit_poll(cp, 1000000, out, 64), 0);
	print_message("recomputes: %llu (5 + 15 adds, 20 removes)\n",
		      (unsigned long long)credit_get_stats(cp)->recomputes);
	assert_int_equal(credit_get_stats(cp)->recomputes, 40);
	credit_destroy(cp);
}

/* Capacity, duplicates, unknown senders; a poll cut short by @max loses nothing. */
static void test_bounds(void **state)
{
	struct credit_params p = params;
	struct credit_pacer *cp;
	struct credit_grant out[8];
	qp_time_ns next;
	unsigned seen[3] = { 0 };
	(void)state;

	p.max_senders = 3;
	cp = credit_create(&p, NULL, 0);
	assert_non_null(cp);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(credit_add(cp, i, 0), 0);
	assert_int_equal(credit_add(cp, 9, 0), -ENOSPC);
	assert_int_equal(credit_add(cp, 1, 0), -EEXIST);
	assert_int_equal(credit_remove(cp, 9, 0), -ENOENT);
	assert_int_equal(credit_sender_next_ns(cp, 9, &next), -ENOENT);
	assert_int_equal(credit_get_stats(cp)->rejected_full, 1);
	assert_int_equal(credit_get_stats(cp)->rejected_dup, 1);
	assert_int_equal(credit_get_stats(cp)->rejected_unknown, 1);
	assert_int_equal(credit_senders(cp), 3);

	/* All three due; polls of at most 2 serve each exactly once. */
	assert_int_equal(credit_poll(cp, RTT, out, 2), 2);
	seen[out[0].sender_id]++;
	seen[out[1].sender_id]++;
	assert_int_equal(credit_poll(cp, RTT, out, 2), 1);
	seen[out[0].sender_id]++;
	assert_int_equal(credit_poll(cp, RTT, out, 2), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(seen[i], 1);
	assert_true(credit_next_ns(cp) > RTT);
	credit_destroy(cp);
}

static void test_bad_params_named(void **state)
{
	static const struct {
		qp_rate_bps c;
		qp_time_ns rtt;
		uint32_t mtu, n;
		const char *name;
	} bad_window[] = {
		{ 0, RTT, MTU, 5, "link_bps" },
		{ C_BPS, 0, MTU, 5, "rtt_ns" },
		{ C_BPS, RTT, 0, 5, "mtu_bytes" },
		{ C_BPS, RTT, MTU, 0, "n=0" },
	};
	struct credit_params bad_create[5];
	static const char *const create_names[] = {
		"link_bps", "rtt_ns", "mtu_bytes", "max_senders", "max_senders",
	};
	char err[256];
	uint32_t w;
	qp_time_ns d;
	(void)state;

	for (unsigned i = 0; i < sizeof(bad_window) / sizeof(bad_window[0]); i++) {
		err[0] = '\0';
		assert_int_equal(credit_window(bad_window[i].c, bad_window[i].rtt, bad_window[i].mtu,
					       bad_window[i].n, &w, &d, err, sizeof(err)), -EINVAL);
		print_message("%s\n", err);
		assert_non_null(strstr(err, bad_window[i].name));
	}
	for (unsigned i = 0; i < 5; i++)
		bad_create[i] = params;
	bad_create[0].link_bps = 0;
	bad_create[1].rtt_ns = 0;
	bad_create[2].mtu_bytes = 0;
	bad_create[3].max_senders = 0;
	bad_create[4].max_senders = CREDIT_MAX_SENDERS + 1;
	for (unsigned i = 0; i < 5; i++) {
		err[0] = '\0';
		assert_null(credit_create(&bad_create[i], err, sizeof(err)));
		assert_non_null(strstr(err, create_names[i]));
	}
	/* A window that does not fit in 32 bits: 10 Tb/s x 1 s of 1-byte messages. */
	assert_int_equal(credit_window(10000 * QP_GBPS, QP_NS_PER_S, 1, 1, &w, &d, err,
				       sizeof(err)), -ERANGE);
	print_message("%s\n", err);
	assert_null(credit_create(NULL, err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_examples),
		cmocka_unit_test(test_first_grant_uniform),
		cmocka_unit_test(test_grants_within_capacity),
		cmocka_unit_test(test_n_changes_recompute),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_bad_params_named),
	};
	return cmocka_run_group_tests_name("credit", tests, NULL, NULL);
}
