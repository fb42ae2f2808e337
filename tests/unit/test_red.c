/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RED-style ECN marking: the configured probability with a fixed seed (statistical
 * margin of 4 sigma), the edges, ECT-only marking through the queue. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/frame.h"
#include "../../switchsim/queue.h"

static const struct sw_red_params red = { 10000, 50000, 0.2 };

static void check_rate(uint64_t qbytes, double want)
{
	struct sw_rng rng = { 20240601 };
	const int n = 200000;
	int marks = 0;

	for (int i = 0; i < n; i++)
		marks += sw_red_mark(&red, qbytes, &rng);
	double sigma = sqrt(n * want * (1 - want));
	print_message("q = %6llu B: %6d marks of %d, expected %.0f +- %.0f (4 sigma)\n",
		      (unsigned long long)qbytes, marks, n, n * want, 4 * sigma);
	assert_true(fabs(marks - n * want) <= 4 * sigma + 0.5);
}

static void test_probability(void **state)
{
	(void)state;
	check_rate(10000, 0);          /* at Kmin: never */
	check_rate(20000, 0.05);       /* Pmax * 1/4 */
	check_rate(30000, 0.10);
	check_rate(45000, 0.175);
	check_rate(50000, 1);          /* at Kmax: always */
	check_rate(1 << 20, 1);
}

static void test_repeatable(void **state)
{
	struct sw_rng a = { 7 }, b = { 7 }, c = { 8 };
	int same = 1, differ = 0;
	(void)state;

	for (int i = 0; i < 1000; i++) {
		bool x = sw_red_mark(&red, 30000, &a), y = sw_red_mark(&red, 30000, &b);
		same &= x == y;
		differ += x != sw_red_mark(&red, 30000, &c);
	}
	assert_true(same);
	assert_true(differ > 0);
}

/* Through the queue, at dequeue: a standing queue of ~29 KB behind every departing frame
 * marks ECT frames at ~9.5% and never marks the others (counted apart). */
static void test_queue_marks_ect_only(void **state)
{
	char err[200];
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .buffer_bytes = 128 * 1024,
				     .red = red, .flow_slots = 64, .seed = 99 };
	struct sw_queue *q = sw_queue_create(&p, err, sizeof(err));
	static uint8_t f[1000];
	struct sw_enq in = { .frame = f, .frame_len = 1000, .ip_off = 14 };
	struct sw_enq_out out;
	struct qp_int_hop h;
	qp_time_ns t = 0;
	int marks = 0, n = 0, step = 0;
	(void)state;

	assert_non_null(q);
	f[14] = 0x45;
	for (int i = 0; i < 30; i++) {   /* build 30 KB at t = 0, alternately ECT */
		in.ect = i & 1;
		sw_queue_enqueue(q, 0, &in, &out);
	}
	/* Then one frame out per frame in: the head started one frame time ago, and 29
	 * frames had arrived behind it by then. */
	for (int i = 0; i < 40000; i++) {
		const struct sw_qent *e = sw_queue_peek(q, 0);
		uint8_t *fr = sw_queue_frame(q, e);
		bool ect = e->ecn_off != 0, m;

		t += 8000;
		sw_queue_hop(q, 0, &h);
		assert_int_equal(h.qlen_bytes, 29000);
		m = sw_queue_mark(q, 0);
		assert_int_equal((fr[15] & 3) == FRAME_ECN_CE, m);
		if (ect) {
			n++;
			marks += m;
		} else {
			assert_false(m);
		}
		sw_queue_pop(q, 1);
		in.ect = step++ & 1;
		sw_queue_enqueue(q, t, &in, &out);
	}
	const struct sw_queue_stats *st = sw_queue_stats(q);
	double want = 0.2 * (29000 - 10000) / 40000.0, sigma = sqrt(n * want * (1 - want));
	print_message("29000 B behind each departure: %d of %d ECT frames marked (%.4f, "
		      "expected %.4f), %llu non-ECT frames spared\n", marks, n, (double)marks / n,
		      want, (unsigned long long)st->ecn_not_ect);
	assert_true(fabs(marks - n * want) <= 4 * sigma);
	assert_int_equal(st->ecn_marked, (uint64_t)marks);
	assert_true(st->ecn_not_ect > 0);
	sw_queue_destroy(q);
}

/* Marking is decided on the queue a frame leaves behind, not the one it joins: a burst of
 * 40 frames into an empty queue (Kmin 10 KB, Kmax 20 KB, Pmax 1). The first frames join
 * a short queue and leave a long one: marked; the last join a long one and leave an
 * empty one: never. At enqueue it would be the other way round. */
static void test_marks_at_dequeue(void **state)
{
	char err[200];
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .buffer_bytes = 128 * 1024,
				     .red = { 10000, 20000, 1.0 }, .flow_slots = 64, .seed = 7 };
	struct sw_queue *q = sw_queue_create(&p, err, sizeof(err));
	static uint8_t f[1000];
	struct sw_enq in = { .frame = f, .frame_len = 1000, .ect = true, .ip_off = 14 };
	struct sw_enq_out out;
	bool marked[40];
	(void)state;

	assert_non_null(q);
	f[14] = 0x45;
	for (int i = 0; i < 40; i++)
		assert_int_equal(sw_queue_enqueue(q, 0, &in, &out), 0);
	sw_queue_bytes(q, 40 * 8000);   /* every departure complete */
	for (int i = 0; i < 40; i++) {
		marked[i] = sw_queue_mark(q, 0);
		sw_queue_pop(q, 1);
	}
	for (int i = 0; i <= 19; i++)    /* 39 - i frames behind: >= 20 KB */
		assert_true(marked[i]);
	for (int i = 30; i < 40; i++)    /* <= 9 KB behind: never */
		assert_false(marked[i]);
	print_message("burst of 40: frames 0..19 marked, 30..39 not (queue left behind)\n");
	sw_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_repeatable),
		cmocka_unit_test(test_queue_marks_ect_only),
		cmocka_unit_test(test_marks_at_dequeue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
