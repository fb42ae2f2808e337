/* The agent's translation of feedback messages into cc events (fb_to_cc_event): INT, NOTICE
 * and LEVEL map onto their events with every field carried; level acks and credits are no
 * cc event. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fb_samples.h"
#include "qpace/agent.h"

static void test_cc_mapping(void **state)
{
	struct fb_msg msgs[FB_SAMPLES_MAX];
	struct cc_event ev;
	size_t n;
	(void)state;

	fb_samples(msgs, &n);
	assert_int_equal(fb_to_cc_event(&msgs[4], &ev), 0);
	assert_int_equal(ev.type, CC_EV_INT);
	assert_int_equal(ev.u.int_report.nhops, 5);
	assert_ptr_equal(ev.u.int_report.hops, msgs[4].u.int_report.hops);
	assert_int_equal(ev.u.int_report.hops[4].tx_bytes, (1ULL << 40) + 4);
	assert_int_equal(fb_to_cc_event(&msgs[6], &ev), 0);
	assert_int_equal(ev.type, CC_EV_NOTICE);
	assert_int_equal(ev.u.notice.switch_id, 9);
	assert_int_equal(ev.u.notice.queue_bytes, 150000);
	assert_int_equal(ev.u.notice.link_bps, 25 * QP_GBPS);
	assert_int_equal(ev.u.notice.flows, 12);
	assert_int_equal(ev.u.notice.reflected_ts_ns, 1ULL << 50);
	assert_int_equal(fb_to_cc_event(&msgs[9], &ev), 0);
	assert_int_equal(ev.type, CC_EV_LEVEL);
	assert_int_equal(ev.u.level, 2);
	assert_int_equal(fb_to_cc_event(&msgs[11], &ev), -ENOENT);  /* ack */
	assert_int_equal(fb_to_cc_event(&msgs[12], &ev), -ENOENT);  /* credit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cc_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
