/* Telemetry decisions: early notices above the threshold and once per interval, levels
 * through 0..3 with repeats until acknowledged, INT sampling. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/telem.h"

#define US QP_NS_PER_US

static struct sw_flow fresh(void)
{
	struct sw_flow f = { .used = true, .level_acked = true, .notice_ns = QP_TIME_NEVER,
			     .int_ns = QP_TIME_NEVER };
	return f;
}

static const struct sw_telem_params tp = {
	.early_bytes = 10000, .notice_interval_ns = 10 * US,
	.level_bytes = { 10000, 20000, 30000 }, .level_repeat_ns = 20 * US,
	.int_mode = SW_INT_DIRECT, .int_every = 1,
};

static void test_notice(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	(void)state;

	p.level_bytes[2] = 0;
	assert_int_equal(sw_telem_enqueue(&p, &f, 9999, 0), 0);
	assert_int_equal(sw_telem_enqueue(&p, &f, 10000, 1 * US), SW_T_NOTICE);
	assert_int_equal(sw_telem_enqueue(&p, &f, 50000, 5 * US), 0);   /* within interval */
	assert_int_equal(sw_telem_enqueue(&p, &f, 50000, 11 * US), SW_T_NOTICE);
	assert_int_equal(sw_telem_enqueue(&p, &f, 5000, 30 * US), 0);   /* below */
	p.early_bytes = 0;
	assert_int_equal(sw_telem_enqueue(&p, &f, 1 << 20, 100 * US), 0);
}

static void test_levels_and_ack(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	qp_time_ns t = 0;
	(void)state;

	p.early_bytes = 0;
	assert_int_equal(sw_level_of(&p, 9999), 0);
	assert_int_equal(sw_level_of(&p, 10000), 1);
	assert_int_equal(sw_level_of(&p, 29999), 2);
	assert_int_equal(sw_level_of(&p, 30000), 3);

	assert_int_equal(sw_telem_enqueue(&p, &f, 5000, t), 0);          /* still 0 */
	assert_int_equal(sw_telem_enqueue(&p, &f, 12000, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 1);
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, t += US), 0);   /* repeat not due */
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, t += 20 * US), SW_T_LEVEL);
	assert_true(sw_telem_level_ack(&f, 1));
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, t += 50 * US), 0);  /* acked: quiet */
	assert_int_equal(sw_telem_enqueue(&p, &f, 25000, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 2);
	assert_false(sw_telem_level_ack(&f, 1));                          /* stale ack */
	assert_int_equal(sw_telem_enqueue(&p, &f, 25000, t += 30 * US), SW_T_LEVEL);
	assert_true(sw_telem_level_ack(&f, 2));
	assert_int_equal(sw_telem_enqueue(&p, &f, 35000, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 3);
	assert_int_equal(sw_telem_enqueue(&p, &f, 0, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 0);
	assert_int_equal(f.level_seq, 4);
}

static void test_int_sampling(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	int reports = 0;
	(void)state;

	for (int i = 0; i < 100; i++)
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 100);
	p.int_every = 4;
	reports = 0;
	for (int i = 0; i < 100; i++)
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 25);
	p.int_every = 1;
	p.int_interval_ns = 10 * US;
	f = fresh();
	reports = 0;
	for (int i = 0; i < 100; i++)   /* a frame every microsecond for 100 us */
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 10);
	assert_false(sw_telem_int_due(&p, NULL, 0));   /* sampled: untracked flows skipped */
	p.int_interval_ns = 0;
	assert_true(sw_telem_int_due(&p, NULL, 0));
	p.int_mode = SW_INT_OFF;
	assert_false(sw_telem_int_due(&p, &f, 1000 * US));
}

static void test_check(void **state)
{
	char err[200];
	struct sw_telem_params p = tp;
	(void)state;

	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), 0);
	p.level_bytes[0] = 40000;
	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "MIN <= MID <= MAX"));
	p = tp;
	p.int_every = 0;
	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice),
		cmocka_unit_test(test_levels_and_ack),
		cmocka_unit_test(test_int_sampling),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
