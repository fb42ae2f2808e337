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

/* Through the queue: a standing queue of ~30 KB marks ECT frames at ~10% and never
 * marks the others (counted apart). */
static void test_queue_marks_ect_only(void **state)
{
	char err[200];
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .buffer_bytes = 128 * 1024,
				     .red = red, .flow_slots = 64, .seed = 99 };
	struct sw_queue *q = sw_queue_create(&p, err, sizeof(err));
	static uint8_t f[1000];
	struct sw_enq in = { .frame = f, .frame_len = 1000 };
	struct sw_enq_out out;
	qp_time_ns t = 0;
	int marks = 0, n = 0;
	(void)state;

	assert_non_null(q);
	for (int i = 0; i < 30; i++)   /* build 30 KB at t = 0 */
		sw_queue_enqueue(q, 0, &in, &out);
	/* Then one frame in per frame out: Q stays at 30 KB when each one joins. */
	for (int i = 0; i < 40000; i++) {
		t += 8000;
		sw_queue_pop(q, 1);
		in.ect = i & 1;
		sw_queue_enqueue(q, t, &in, &out);
		assert_int_equal(out.qbytes, 30000);
		if (in.ect) {
			n++;
			marks += out.mark;
		} else {
			assert_false(out.mark);
		}
	}
	const struct sw_queue_stats *st = sw_queue_stats(q);
	double sigma = sqrt(n * 0.1 * 0.9);
	print_message("standing queue 30000 B: %d of %d ECT frames marked (%.3f), "
		      "%llu non-ECT frames spared\n", marks, n, (double)marks / n,
		      (unsigned long long)st->ecn_not_ect);
	assert_true(fabs(marks - n * 0.1) <= 4 * sigma);
	assert_int_equal(st->ecn_marked, (uint64_t)marks);
	assert_true(st->ecn_not_ect > 0);
	sw_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_repeatable),
		cmocka_unit_test(test_queue_marks_ect_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
