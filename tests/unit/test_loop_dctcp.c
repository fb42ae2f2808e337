/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCTCP (agent/cc/dctcp.c) in closed loops on the real switch, soft hosts and agents
 * (virtual time, tests/support/vt_net.h): the switch marks CE above K (its declared 30,000
 * bytes at 1 Gb/s, a step), the receivers' soft RC echoes the marks in their ACKs, the
 * senders' windows follow alpha.
 *
 *  - alpha settles at the marked fraction: 4 long flows, 1 Gb/s, 25 us links (RTT ~104 us,
 *    as the sources' incast studies), a 256 KiB buffer. Over the second half of the run,
 *    the flows' alpha (sampled every RTT) averages within 0.05 (absolute) or 30% of the
 *    fraction of frames the port marked in the same time, the queue stays around K (its
 *    mean within K +- 1 BDP, never near the buffer), nothing is dropped, and the link stays
 *    busy. An alpha that did not follow the marks would stay at its first value, 1.
 *  - Without the receivers' echo (the transport carries none: CC_ECN_NONE), DCTCP is TCP:
 *    alpha only decays, and the queue is the buffer's (drops).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dctcp.h"
#include "vt_net.h"

#define K_BYTES 30000.0

struct alpha_log {
	qp_time_ns from_ns;
	double sum;
	unsigned n;
	double min, max;
};

static void log_alpha(void *arg, unsigned flow, const struct cc *cc, qp_time_ns t)
{
	struct alpha_log *l = arg;
	struct cc_dctcp_view v;

	(void)flow;
	if (t < l->from_ns || cc_dctcp_view(cc, &v))
		return;
	l->sum += v.alpha;
	l->min = l->n ? fmin(l->min, v.alpha) : v.alpha;
	l->max = l->n ? fmax(l->max, v.alpha) : v.alpha;
	l->n++;
}

static struct vt_net_conf four_flows(struct alpha_log *l, qp_time_ns duration)
{
	struct vt_net_conf c = vt_net_defaults("dctcp", 4, 1000000000, 256 * 1024);

	c.link_bps = QP_GBPS;
	c.delay_ns = 25 * QP_NS_PER_US;
	c.duration_ns = duration;
	c.probe = log_alpha;
	c.probe_arg = l;
	l->from_ns = duration / 2;
	return c;
}

static void test_alpha_settles_at_marked_fraction(void **state)
{
	struct alpha_log l = { 0 };
	struct vt_net_conf c = four_flows(&l, 200 * QP_NS_PER_MS);
	struct vt_net_result r;
	(void)state;

	vt_net_assert_run(&c, &r);
	vt_net_print("dctcp, 4 flows at 1G", &r);
	unsigned a = vt_sample_at(&r, c.duration_ns / 2), b = r.nsamples - 1;
	double marked = (double)(r.s[b].ecn_marks - r.s[a].ecn_marks) /
			(double)(r.s[b].tx_frames - r.s[a].tx_frames);
	double alpha = l.sum / l.n, q = vt_mean_queue(&r, c.duration_ns / 2, c.duration_ns);
	double g = 0;
	for (unsigned f = 0; f < 4; f++)
		g += vt_goodput_bps(&r, f, c.duration_ns / 2, c.duration_ns);
	print_message("second half: alpha %.3f (%.3f..%.3f over %u samples), marked fraction "
		      "%.3f; mean queue %.0f B (K %.0f, BDP %.0f), goodput %.3f of %.3f Gb/s\n",
		      alpha, l.min, l.max, l.n, marked, q, K_BYTES, r.bdp_bytes, g / 1e9,
		      r.payload_bps / 1e9);
	assert_true(marked > 0.01);
	assert_true(fabs(alpha - marked) <= fmax(0.05, 0.3 * marked));
	assert_true(l.max < 1);
	assert_true(q > K_BYTES - r.bdp_bytes && q < K_BYTES + r.bdp_bytes);
	assert_true((double)r.max_queue_bytes < 0.75 * 256 * 1024);
	assert_int_equal(r.drops, 0);
	assert_true(g > 0.9 * r.payload_bps);
	vt_net_free(&r);
}

/* The same network, the marks not echoed: alpha only decays from its first value (F is 0
 * every window) whatever the port marks, the window is TCP's, and the queue grows to the
 * buffer: the first test's criterion fails (measured: alpha 0.53, marked 0.98, drops). */
static void test_without_echo(void **state)
{
	struct alpha_log l = { 0 };
	struct vt_net_conf c = four_flows(&l, 100 * QP_NS_PER_MS);
	struct vt_net_result r;
	(void)state;

	c.no_ecn_echo = true;
	vt_net_assert_run(&c, &r);
	vt_net_print("dctcp, no echo", &r);
	unsigned a = vt_sample_at(&r, c.duration_ns / 2), b = r.nsamples - 1;
	double marked = (double)(r.s[b].ecn_marks - r.s[a].ecn_marks) /
			(double)(r.s[b].tx_frames - r.s[a].tx_frames);
	print_message("second half: alpha %.3f, marked fraction %.3f, peak queue %llu B\n",
		      l.sum / l.n, marked, (unsigned long long)r.max_queue_bytes);
	assert_true(marked > 0.3);
	assert_true(fabs(l.sum / l.n - marked) > fmax(0.05, 0.3 * marked));
	assert_true(l.max < 1);
	assert_true(r.drops > 0);
	vt_net_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alpha_settles_at_marked_fraction),
		cmocka_unit_test(test_without_echo),
	};
	return cmocka_run_group_tests_name("loop_dctcp", tests, NULL, NULL);
}
