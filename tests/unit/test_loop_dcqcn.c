/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN in closed loops on the real switch, soft hosts and agents (virtual time,
 * tests/support/vt_net.h: N -> 1 star, 10 Gb/s, 10 us links, RTT 41.8 us, finite
 * buffers), with the feedback DCQCN declares (bench/incast_feedback.c): RED marking at
 * dequeue at the reference's thresholds scaled to the link (40K/160K/0.2 at 10G), ECT(0)
 * senders, and the receivers' soft RC turning CE-marked data into CNPs, at most one per
 * QP per 50 us (the notification point).
 *
 * What the source claims (DCQCN, references.md): CNP-driven cuts with the alpha estimate
 * keep the queue short and converge competing flows to a fair share. Here:
 *   - two flows, the second joins at 2 ms: Jain >= 0.9 within 5 RTTs of the join, nothing
 *     dropped. Disagreement, asserted as measured: the queue over the next 20..100 RTTs
 *     averages 4.1 BDP (215 KB, above kmax), hardly below `none`'s 4.4 BDP on the same
 *     network (asserted: below 0.98 of it). With the switch's 16 KiB notice standing in
 *     for CNPs it was 0.38 BDP. Why the marks hold the queue this high is not yet
 *     established (at 25 Gb/s in the bench's incast the same feedback does cut the mean
 *     queue: 928 KiB against none's 1498 KiB, docs/algorithms.md);
 *   - 16 -> 1, 1 MB each, 1 MB buffer: DCQCN drops, as `none` does (measured: 2940 drops,
 *     13 of 16 flows unfinished after 20 ms). The disagreement is asserted as measured:
 *     one CNP per flow per 50 us, each cutting by alpha/2, does not stop 16 line-rate
 *     senders inside the ~19 BDP the buffer holds;
 *   - init_rate (a deviation: qpaced's tc path starts flows found on the wire there, as
 *     it cannot take back what rxe commits before the first CNP; agent/cc/dcqcn.c): the
 *     same 16 -> 1 started at the fair share keeps the first 4 RTTs' queue under one BDP
 *     and a tenth of the line start's (measured 32,940 against 999,180 B, the buffer
 *     full). Later its increase timers raise the rates and it overflows as well (the
 *     disagreement above, not init_rate's to mend). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vt_net.h"

static void test_join_fair_short_queue(void **state)
{
	struct vt_join j;
	(void)state;

	vt_net_assert_join("dcqcn", NULL, &j);
	assert_true(j.fair_rtts >= 0 && j.fair_rtts <= 5);
	assert_int_equal(j.drops, 0);
	assert_true(j.none_queue_bdp > 3);
	/* disagreement, measured: 4.1 BDP (none 4.4): see the header */
	assert_true(j.queue_bdp < 0.98 * j.none_queue_bdp);
}

static void test_incast_overflows(void **state)
{
	struct vt_net_conf c = vt_net_defaults("dcqcn", 16, 1000000, 1000000);
	struct vt_net_result r;
	uint64_t none_drops;
	(void)state;

	c.duration_ns = 20 * QP_NS_PER_MS;
	vt_net_assert_control_overflows(&c, &none_drops);
	vt_net_assert_run(&c, &r);
	vt_net_print("16->1 dcqcn", &r);
	assert_true(r.drops > 0);   /* the disagreement (see the header) */
	vt_net_free(&r);
}

static void test_init_rate_first_rtts(void **state)
{
	struct vt_net_conf c = vt_net_defaults("dcqcn", 16, 1000000, 1000000);
	struct vt_net_result line, low;
	(void)state;

	c.duration_ns = 5 * QP_NS_PER_MS;
	vt_net_assert_run(&c, &line);
	c.params = "init_rate=625M";   /* 10G / 16 */
	vt_net_assert_run(&c, &low);
	qp_time_ns w = 4 * low.rtt_ns;
	uint64_t pl = vt_max_queue(&line, 0, w), pf = vt_max_queue(&low, 0, w);
	print_message("first 4 RTTs: peak %llu B from the fair share, %llu B from the line; "
		      "over the run %llu / %llu B\n", (unsigned long long)pf,
		      (unsigned long long)pl, (unsigned long long)low.max_queue_bytes,
		      (unsigned long long)line.max_queue_bytes);
	/* measured: 32,940 B (0.63 BDP) against 999,180 B, the buffer full */
	assert_true(10 * pf < pl);
	assert_true((double)pf < low.bdp_bytes);
	vt_net_free(&line);
	vt_net_free(&low);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_fair_short_queue),
		cmocka_unit_test(test_incast_overflows),
		cmocka_unit_test(test_init_rate_first_rtts),
	};
	return cmocka_run_group_tests_name("loop_dcqcn", tests, NULL, NULL);
}
