/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TIMELY (agent/cc/timely.c) in closed loops on the real switch, soft hosts and agents
 * (virtual time, tests/support/vt_net.h), its RTT samples from the senders' soft RC.
 *
 *  - The rate falls while the RTT gradient is positive: 4 flows start at the line rate
 *    into one 10 Gb/s port (1 us links: RTT 6 us; a 1 MB buffer). Sampled every 2 us:
 *    whenever a flow updated once since the last sample with a positive gradient (its
 *    EWMA of RTT differences over its base RTT) and an RTT between t_low and t_high, its
 *    rate fell (never rose); it happened many times; the queue of the second half of the
 *    run averages under a tenth of `none`'s on the same network, whose rates never move
 *    from the line rate (its RC windows hold ~0.5 MB standing in the port).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "timely.h"
#include "vt_net.h"

#define N 4
#define SAMPLES 12000

struct tlog {
	struct cc_timely_view v[N][SAMPLES];
	unsigned n[N];
};

static void log_timely(void *arg, unsigned flow, const struct cc *cc, qp_time_ns t)
{
	struct tlog *l = arg;

	(void)t;
	if (flow < N && l->n[flow] < SAMPLES && !cc_timely_view(cc, &l->v[flow][l->n[flow]]))
		l->n[flow]++;
}

static struct vt_net_conf flows(const char *algo)
{
	struct vt_net_conf c = vt_net_defaults(algo, N, 1000000000, 1000000);

	c.delay_ns = QP_NS_PER_US;
	c.sample_ns = 2 * QP_NS_PER_US;
	c.duration_ns = 20 * QP_NS_PER_MS;
	return c;
}

static void test_rate_falls_while_gradient_positive(void **state)
{
	static struct tlog l;
	struct vt_net_conf c = flows("timely");
	struct vt_net_result r;
	unsigned falls = 0, rises = 0;
	(void)state;

	c.probe = log_timely;
	c.probe_arg = &l;
	vt_net_assert_run(&c, &r);
	vt_net_print("timely, 4 flows", &r);
	for (unsigned f = 0; f < N; f++) {
		for (unsigned k = 0; k + 1 < l.n[f]; k++) {
			const struct cc_timely_view *a = &l.v[f][k], *b = &l.v[f][k + 1];
			/* one update between the samples, whose RTT and gradient b shows */
			if (b->updates != a->updates + 1 || b->gradient <= 0 || b->rtt_ns < 50000 ||
			    b->rtt_ns > 500000)
				continue;
			falls += b->rate_bps < a->rate_bps;
			rises += b->rate_bps > a->rate_bps;
		}
	}
	double q = vt_mean_queue(&r, c.duration_ns / 2, c.duration_ns);
	print_message("with a positive gradient: %u falls, %u rises; second half's mean queue "
		      "%.0f B\n", falls, rises, q);
	assert_true(falls >= 20);
	assert_int_equal(rises, 0);
	vt_net_free(&r);

	struct vt_net_conf n = flows("none");
	n.duration_ns = 4 * QP_NS_PER_MS;
	vt_net_assert_run(&n, &r);
	vt_net_print("none, 4 flows", &r);
	double qn = vt_mean_queue(&r, n.duration_ns / 2, n.duration_ns);
	assert_true(q < 0.1 * qn);
	for (unsigned k = 0; k < r.nsamples; k++)
		for (unsigned f = 0; f < N; f++)
			assert_true(!r.s[k].rate_bps[f] ||
				    r.s[k].rate_bps[f] == (qp_rate_bps)r.payload_bps);
	vt_net_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_falls_while_gradient_positive),
	};
	return cmocka_run_group_tests_name("loop_timely", tests, NULL, NULL);
}
