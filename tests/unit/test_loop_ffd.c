/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* FFD in closed loops on the real switch, soft hosts and agents (virtual time,
 * tests/support/vt_net.h: N -> 1 star, 10 Gb/s, 10 us links, RTT 41.8 us, finite
 * buffers), with the levels FFD declares (--levels 8K,28K,48K, from RED's average queue)
 * and the ACKs of its soft RC (FFD is a TCP window the levels steer: ffd.c).
 *
 * What the source claims (FFDTCP, ../shared/seeds/004_*; reproductions.md): multi-level
 * feedback keeps the queue between the thresholds without loss, at high throughput.
 * Here:
 *   - two flows, the second joins at 2 ms (slow start from 2 packets): Jain >= 0.9 within
 *     10 RTTs of the join (7 measured), no drops, and the queue 20..100 RTTs after the
 *     join averages below the middle level (measured 11.4 KB, between 8 and 28 KiB) where
 *     `none` stands at > 3 BDP. Over those RTTs Jain is 0.78: one cut per level change
 *     and one MSS per RTT of growth even the two windows out slowly;
 *   - 16 -> 1, 1 MB each, on a 1 MB buffer that `none` overflows: no drops, >= 90% of the
 *     payload rate (94.1%: the slow starts cost the first RTTs), Jain >= 0.95 (0.978),
 *     and the queue of the middle half of the run below the top level (measured 15.6 KB,
 *     0.3 x 48 KiB): the levels, cutting windows, bound it. (The rate-based FFD held a
 *     standing queue of 7.9 x the top level: one cut per level change left its rates
 *     where they were, and only the W = R * T cap bounded the queue.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vt_net.h"

#define LEVEL_MID (28 * 1024)
#define LEVEL_MAX (48 * 1024)
#define N 16u

static void test_join_between_levels(void **state)
{
	struct vt_join j;
	(void)state;

	vt_net_assert_join("ffd", NULL, &j);
	assert_true(j.fair_rtts >= 0 && j.fair_rtts <= 10);
	assert_int_equal(j.drops, 0);
	assert_true(j.none_queue_bdp > 3);
	assert_true(j.queue_bytes < LEVEL_MID);
}

static void test_incast_levels_bound_queue(void **state)
{
	struct vt_net_conf c = vt_net_defaults("ffd", N, 1000000, 1000000);
	struct vt_net_result r;
	uint64_t none_drops;
	double total = 0;
	(void)state;

	vt_net_assert_control_overflows(&c, &none_drops);
	vt_net_assert_run(&c, &r);
	vt_net_print("16->1 ffd", &r);
	for (unsigned i = 0; i < N; i++)
		total += vt_goodput_bps(&r, i, 0, r.end_ns);
	double late_q = vt_mean_queue(&r, r.end_ns / 4, 3 * r.end_ns / 4);
	double jain = vt_jain(&r, 0, N, 0, r.end_ns / 2);
	print_message("ffd: %.1f%% of payload, Jain %.4f, queue over the middle half %.0f B "
		      "(%.1f x the top level)\n", 100 * total / r.payload_bps, jain, late_q,
		      late_q / LEVEL_MAX);
	assert_int_equal(r.drops, 0);
	assert_int_equal(r.flows_done, N);
	assert_true(total >= 0.90 * r.payload_bps);
	assert_true(jain >= 0.95);
	assert_true(late_q < LEVEL_MAX);                     /* the levels bound it */
	vt_net_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_between_levels),
		cmocka_unit_test(test_incast_levels_bound_queue),
	};
	return cmocka_run_group_tests_name("loop_ffd", tests, NULL, NULL);
}
