/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Swift (agent/cc/swift.c) in closed loops on the real switch, soft hosts and agents
 * (virtual time, tests/support/vt_net.h), its RTT samples from the senders' soft RC.
 *
 *  - Swift holds the delay near its target: 8 flows into one 10 Gb/s port (10 us links:
 *    RTT 41.8 us; a 1 MB buffer), its default parameters (base target = the base RTT, one
 *    hop, flow scaling). Over the second half of the run the flows' smoothed RTT averages
 *    within 25% of their fabric target, the port's own queueing delay (its mean queue
 *    over the link rate) puts the RTT within the same margin of the target, nothing is
 *    dropped and the link stays busy. `none` on the same network holds the RTT several
 *    times the target (its RC windows standing in the port).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "swift.h"
#include "vt_net.h"

#define N 8

struct slog {
	qp_time_ns from_ns;
	double rtt_sum, target_sum;
	unsigned n;
};

static void log_swift(void *arg, unsigned flow, const struct cc *cc, qp_time_ns t)
{
	struct slog *l = arg;
	struct cc_swift_view v;

	(void)flow;
	if (t < l->from_ns || cc_swift_view(cc, &v) || v.srtt_ns <= 0)
		return;
	l->rtt_sum += v.srtt_ns;
	l->target_sum += v.target_ns;
	l->n++;
}

static struct vt_net_conf flows(const char *algo)
{
	struct vt_net_conf c = vt_net_defaults(algo, N, 1000000000, 1000000);

	c.duration_ns = 20 * QP_NS_PER_MS;
	return c;
}

static void test_holds_delay_near_target(void **state)
{
	struct slog l = { 0 };
	struct vt_net_conf c = flows("swift");
	struct vt_net_result r;
	double g = 0;
	(void)state;

	l.from_ns = c.duration_ns / 2;
	c.probe = log_swift;
	c.probe_arg = &l;
	vt_net_assert_run(&c, &r);
	vt_net_print("swift, 8 flows", &r);
	double rtt = l.rtt_sum / l.n, target = l.target_sum / l.n;
	double q = vt_mean_queue(&r, c.duration_ns / 2, c.duration_ns);
	double wire_rtt = (double)r.rtt_ns + q * 8e9 / 10e9;
	for (unsigned f = 0; f < N; f++)
		g += vt_goodput_bps(&r, f, c.duration_ns / 2, c.duration_ns);
	print_message("second half: RTT %.1f us against a target of %.1f us (%u samples); the "
		      "port's mean queue %.0f B: base RTT + its delay %.1f us; goodput %.2f Gb/s\n",
		      rtt / 1e3, target / 1e3, l.n, q, wire_rtt / 1e3, g / 1e9);
	assert_true(fabs(rtt - target) <= 0.25 * target);
	assert_true(fabs(wire_rtt - target) <= 0.25 * target);
	assert_int_equal(r.drops, 0);
	assert_true(g > 0.9 * r.payload_bps);
	vt_net_free(&r);

	struct vt_net_conf n = flows("none");
	n.duration_ns = 4 * QP_NS_PER_MS;
	vt_net_assert_run(&n, &r);
	vt_net_print("none, 8 flows", &r);
	q = vt_mean_queue(&r, n.duration_ns / 2, n.duration_ns);
	print_message("none: base RTT + the port's queueing %.1f us\n",
		      ((double)r.rtt_ns + q * 8e9 / 10e9) / 1e3);
	assert_true((double)r.rtt_ns + q * 8e9 / 10e9 > 3 * target);
	vt_net_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds_delay_near_target),
	};
	return cmocka_run_group_tests_name("loop_swift", tests, NULL, NULL);
}
