/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IA credit pacing: W and Δ, uniform first grants, the capacity bound per period,
 * recomputation when n changes, bounds, bad parameters.
 *
 * The link: C = 10 Gb/s, RTT = 8 us, MTU = 1000 B, so C·RTT = 10 MTU and one MTU takes
 * 800 ns on the link. */
#include <errno.h>
#include <stdbool.h>
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

static struct credit_pacer *make_mode(uint32_t n_senders, qp_time_ns now, uint64_t seed,
				      bool arrivals)
{
	struct credit_params p = params;
	char err[256] = "";
	struct credit_pacer *cp;

	p.seed = seed;
	p.arrivals = arrivals;
	cp = credit_create(&p, err, sizeof(err));

	if (!cp)
		print_message("credit_create: %s\n", err);
	assert_non_null(cp);
	for (uint32_t i = 0; i < n_senders; i++)
		assert_int_equal(credit_add(cp, 100 + i, now), 0);
	return cp;
}

static struct credit_pacer *make_seeded(uint32_t n_senders, qp_time_ns now, uint64_t seed)
{
	return make_mode(n_senders, now, seed, false);
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

/* ---- closed loop: senders, one bottleneck, the receiver's pacer ----
 *
 * Time steps of 100 ns. A grant reaches its sender GRANT_NS after the poll; a sender with
 * at least one MTU of credit puts one packet per step on the wire; it reaches the
 * bottleneck (C, FIFO, 800 ns per packet) FWD_NS later and the receiver FWD_NS after its
 * departure, where the shell reports the arrival and polls. Unloaded grant-to-data time:
 * 3.2 + 2 + 0.8 + 2 = 8 us = RTT. */
#define LOOP_STEP 100u
#define GRANT_NS 3200u
#define FWD_NS 2000u
#define LOOP_MAX_PKTS 200000u
#define LOOP_SENDERS 8u

struct loop_pkt {
	qp_time_ns t;
	uint32_t sender;
	uint64_t bytes;
};

struct loop_fifo {
	struct loop_pkt *e;
	size_t head, tail;
};

struct loop {
	struct credit_pacer *cp;
	bool feed_arrivals;           /* the shell reports arrivals (else: timer schedule) */
	unsigned n;
	qp_time_ns active_from[LOOP_SENDERS]; /* a sender has data from then on */
	uint64_t credit[LOOP_SENDERS], max_credit[LOOP_SENDERS], sent[LOOP_SENDERS];
	uint64_t max_burst[LOOP_SENDERS];     /* most packets sent back to back */
	uint64_t run[LOOP_SENDERS];
	struct loop_fifo grants, to_q, queue, to_rx;
	qp_time_ns q_free;            /* the bottleneck is busy until then */
	uint64_t q_bytes, q_max, delivered;
};

static struct loop_pkt loop_mem[4][LOOP_MAX_PKTS];

static void fifo_push(struct loop_fifo *f, qp_time_ns t, uint32_t sender, uint64_t bytes)
{
	assert_true(f->tail < LOOP_MAX_PKTS);
	f->e[f->tail++] = (struct loop_pkt){ t, sender, bytes };
}

static bool fifo_due(const struct loop_fifo *f, qp_time_ns t)
{
	return f->head < f->tail && f->e[f->head].t <= t;
}

static void loop_init(struct loop *l, struct credit_pacer *cp, unsigned n, bool feed)
{
	memset(l, 0, sizeof(*l));
	l->cp = cp;
	l->n = n;
	l->feed_arrivals = feed;
	l->grants.e = loop_mem[0];
	l->to_q.e = loop_mem[1];
	l->queue.e = loop_mem[2];
	l->to_rx.e = loop_mem[3];
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(credit_add(cp, i, 0), 0);
}

static void loop_step(struct loop *l, qp_time_ns t)
{
	struct credit_grant g[LOOP_SENDERS];
	unsigned k;

	while (fifo_due(&l->grants, t)) { /* grants reach their senders */
		struct loop_pkt *e = &l->grants.e[l->grants.head++];
		l->credit[e->sender] += e->bytes;
	}
	for (unsigned i = 0; i < l->n; i++) { /* senders with data and credit send */
		if (l->credit[i] > l->max_credit[i])
			l->max_credit[i] = l->credit[i];
		if (t < l->active_from[i] || l->credit[i] < MTU) {
			l->run[i] = 0;
			continue;
		}
		l->credit[i] -= MTU;
		l->sent[i] += MTU;
		if (++l->run[i] > l->max_burst[i])
			l->max_burst[i] = l->run[i];
		fifo_push(&l->to_q, t + FWD_NS, i, MTU);
	}
	while (fifo_due(&l->to_q, t)) { /* enqueue at the bottleneck */
		struct loop_pkt *e = &l->to_q.e[l->to_q.head++];
		l->q_bytes += e->bytes;
		l->q_max = l->q_bytes > l->q_max ? l->q_bytes : l->q_max;
		fifo_push(&l->queue, 0, e->sender, e->bytes);
	}
	while (l->queue.head < l->queue.tail && l->q_free <= t) { /* serve one */
		struct loop_pkt *e = &l->queue.e[l->queue.head++];
		qp_time_ns start = l->q_free > t - LOOP_STEP ? l->q_free : t;

		l->q_free = start + qp_tx_time_ns(e->bytes, C_BPS);
		l->q_bytes -= e->bytes;
		fifo_push(&l->to_rx, l->q_free + FWD_NS, e->sender, e->bytes);
	}
	while (fifo_due(&l->to_rx, t)) { /* the receiver */
		struct loop_pkt *e = &l->to_rx.e[l->to_rx.head++];
		l->delivered += e->bytes;
		if (l->feed_arrivals)
			assert_int_equal(credit_arrived(l->cp, e->sender, e->bytes, t), 0);
	}
	while ((k = credit_poll(l->cp, t, g, LOOP_SENDERS)) > 0)
		for (unsigned i = 0; i < k; i++)
			if (g[i].sender_id < l->n) /* others are registered but never send */
				fifo_push(&l->grants, t + GRANT_NS, g[i].sender_id, g[i].bytes);
}

static void loop_run(struct loop *l, qp_time_ns from, qp_time_ns until)
{
	for (qp_time_ns t = from; t < until; t += LOOP_STEP)
		loop_step(l, t);
}

/* The window bounds credit: 5 senders (W = 2), four busy, one registered but idle for 500
 * RTTs and then busy. With arrival clocking the idle one holds at most W MTUs of credit and
 * bursts at most W packets when it starts; the queue stays within n*W MTUs and the link
 * stays busy. The timer schedule (a shell that reports no arrivals) banks 500 RTTs of
 * grants for the idle sender, which then bursts them: the bound is what the arrivals buy. */
static void test_window_bounds_idle_sender(void **state)
{
	static struct loop l;
	const qp_time_ns idle = 500 * RTT, end = idle + 100 * RTT;
	(void)state;

	for (int feed = 1; feed >= 0; feed--) {
		struct credit_pacer *cp = make_mode(0, 0, params.seed, feed);
		uint64_t busy_before, w_bytes;

		loop_init(&l, cp, 5, feed);
		l.active_from[4] = idle;
		loop_run(&l, 0, idle);
		busy_before = l.delivered;
		w_bytes = (uint64_t)credit_w(cp) * MTU;
		loop_run(&l, idle, end);
		print_message("%s: W=%u; idle sender: most credit %llu B, longest burst %llu "
			      "packets; queue peak %llu B; link %.3f of C while it idled\n",
			      feed ? "arrival clocking" : "timer schedule  ", credit_w(cp),
			      (unsigned long long)l.max_credit[4], (unsigned long long)l.max_burst[4],
			      (unsigned long long)l.q_max,
			      (double)busy_before / (double)qp_bytes_in(C_BPS, idle));
		if (feed) {
			assert_true(l.max_credit[4] <= w_bytes);
			assert_true(l.max_burst[4] <= credit_w(cp));
			assert_true(l.q_max <= 5 * w_bytes);
			assert_true(busy_before > 0.75 * (double)qp_bytes_in(C_BPS, idle));
			for (unsigned i = 0; i < 5; i++) {
				uint64_t out;
				assert_int_equal(credit_sender_outstanding(cp, i, &out), 0);
				assert_true(out <= w_bytes);
			}
			assert_true(credit_arrival_clocked(cp));
		} else {
			assert_true(l.max_credit[4] > 100 * w_bytes);
			assert_true(l.max_burst[4] > 100 * credit_w(cp));
		}
		credit_destroy(cp);
	}
}

/* Grants are clocked by arrivals: after its first grant, every grant of a sender falls
 * exactly Δ after an arrival from it. 20 senders (W = 1, Δ = RTT): the aggregate stays
 * within C and the queue within n MTUs. */
static void test_grants_clocked_by_arrivals(void **state)
{
	static struct loop l;
	struct credit_pacer *cp;
	uint64_t grants_before;
	(void)state;

	(void)grants_before;
	cp = make_mode(0, 0, params.seed, true);
	loop_init(&l, cp, 8, true);
	for (uint32_t i = 8; i < 20; i++) /* 12 more that never send */
		assert_int_equal(credit_add(cp, 100 + i, 0), 0);
	assert_int_equal(credit_w(cp), 1);
	assert_int_equal(credit_delta_ns(cp), RTT);
	loop_run(&l, 0, 300 * RTT);
	print_message("20 senders (8 busy), W=1, delta=%llu ns: delivered %.3f of C, queue peak "
		      "%llu B, grants %llu, arrivals %llu\n", (unsigned long long)credit_delta_ns(cp),
		      (double)l.delivered / (double)qp_bytes_in(C_BPS, 300 * RTT),
		      (unsigned long long)l.q_max,
		      (unsigned long long)credit_get_stats(cp)->grants,
		      (unsigned long long)credit_get_stats(cp)->arrivals);
	/* Each busy sender: one MTU per RTT + delta = 2 RTT: 8 senders fill 8/20 of C... */
	assert_true(l.q_max <= 20 * MTU);
	/* ...and every grant beyond the 20 first ones answers one arrival. */
	assert_true(credit_get_stats(cp)->grants <= 20 + credit_get_stats(cp)->arrivals);
	assert_true(credit_get_stats(cp)->grants >= credit_get_stats(cp)->arrivals);
	{
		/* Exactness: a fresh arrival at t from a sender with nothing pending (one that
		 * had its first grant and sent nothing yet) makes its grant due at t + delta. */
		qp_time_ns next, t = 300 * RTT + 123;
		uint64_t out;

		assert_int_equal(credit_sender_next_ns(cp, 119, &next), 0);
		assert_int_equal(next, QP_TIME_NEVER);
		assert_int_equal(credit_sender_outstanding(cp, 119, &out), 0);
		assert_int_equal(out, MTU);
		assert_int_equal(credit_arrived(cp, 119, MTU, t), 0);
		assert_int_equal(credit_sender_next_ns(cp, 119, &next), 0);
		assert_int_equal(next, t + credit_delta_ns(cp));
	}
	credit_destroy(cp);
}

/* RTT measured: configured 10x too long (80 us: W = 100 for one sender) the pacer finds the
 * 8 us loop from its first grant-to-data sample and shrinks the window to 10; configured
 * too short (2 us: W = 2) it grows to 10. The queue then holds no more than the window. */
static void test_rtt_measured(void **state)
{
	static struct loop l;
	static const qp_time_ns configured[] = { 80000, 2000 };
	(void)state;

	for (unsigned c = 0; c < 2; c++) {
		struct credit_params p = params;
		struct credit_pacer *cp;
		uint32_t w0;

		p.rtt_ns = configured[c];
		p.arrivals = true;
		cp = credit_create(&p, NULL, 0);
		assert_non_null(cp);
		loop_init(&l, cp, 1, true);
		w0 = credit_w(cp);
		loop_run(&l, 0, 50 * RTT);
		l.q_max = 0;
		loop_run(&l, 50 * RTT, 100 * RTT);
		print_message("configured RTT %llu ns (W %u): measured %llu ns, W %u, %llu samples, "
			      "late queue peak %llu B, delivered %.3f of C\n",
			      (unsigned long long)configured[c], w0,
			      (unsigned long long)credit_rtt_ns(cp), credit_w(cp),
			      (unsigned long long)credit_get_stats(cp)->rtt_samples,
			      (unsigned long long)l.q_max,
			      (double)l.delivered / (double)qp_bytes_in(C_BPS, 100 * RTT));
		assert_true(credit_rtt_ns(cp) >= RTT && credit_rtt_ns(cp) <= RTT + 2 * LOOP_STEP);
		assert_int_equal(credit_w(cp), 10);
		assert_true(l.q_max <= 10 * MTU);
		credit_destroy(cp);
	}
}

/* A floor on the RTT (credit_params.rtt_floor_ns: a shell whose real path undercuts the
 * RTT of the network it models): configured 80 us with a 40 us floor, the 8 us loop's
 * samples count as 40 us, so W = 50 (10 Gb/s x 40 us / 1000 B) instead of 10, and the
 * window's excess over the loop's BDP (50 - 10 MTUs) stands in the queue, which never
 * holds more than the window; the link stays full. Without the floor the same loop gets
 * W = 10 (test_rtt_measured). A floor above rtt_ns is refused by name. */
static void test_rtt_floor(void **state)
{
	static struct loop l;
	struct credit_params p = params;
	struct credit_pacer *cp;
	char err[256] = "";
	(void)state;

	p.rtt_ns = 80000;
	p.rtt_floor_ns = 40000;
	p.arrivals = true;
	cp = credit_create(&p, NULL, 0);
	assert_non_null(cp);
	loop_init(&l, cp, 1, true);
	loop_run(&l, 0, 50 * RTT);
	l.q_max = 0;
	l.delivered = 0;
	loop_run(&l, 50 * RTT, 100 * RTT);
	print_message("floor 40000 ns over an 8000 ns loop: RTT in use %llu ns, W %u, %llu samples, "
		      "queue peak %llu B, delivered %.3f of C\n",
		      (unsigned long long)credit_rtt_ns(cp), credit_w(cp),
		      (unsigned long long)credit_get_stats(cp)->rtt_samples,
		      (unsigned long long)l.q_max,
		      (double)l.delivered / (double)qp_bytes_in(C_BPS, 50 * RTT));
	assert_true(credit_get_stats(cp)->rtt_samples > 0);
	assert_int_equal(credit_rtt_ns(cp), 40000);
	assert_int_equal(credit_w(cp), 50);
	assert_true(l.q_max > 30 * MTU && l.q_max <= 50 * MTU);
	assert_true((double)l.delivered > 0.95 * (double)qp_bytes_in(C_BPS, 50 * RTT));
	credit_destroy(cp);
	p.rtt_floor_ns = p.rtt_ns + 1;
	assert_null(credit_create(&p, err, sizeof(err)));
	print_message("%s\n", err);
	assert_non_null(strstr(err, "rtt_floor_ns"));
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
		cmocka_unit_test(test_window_bounds_idle_sender),
		cmocka_unit_test(test_grants_clocked_by_arrivals),
		cmocka_unit_test(test_rtt_measured),
		cmocka_unit_test(test_rtt_floor),
		cmocka_unit_test(test_bad_params_named),
	};
	return cmocka_run_group_tests_name("credit", tests, NULL, NULL);
}
