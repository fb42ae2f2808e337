/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IDCC's INT loop in closed loops on the real switch, soft hosts and agents (virtual
 * time, tests/support/vt_net.h: N -> 1 star, 10 Gb/s, 10 us links, RTT 41.8 us, finite
 * buffers), its default parameters (dc_rtt 12 us), INT straight from the switch. The loops
 * here feed the cc no RTT samples, so this is the INT loop alone.
 *
 * What the source claims (IDCC, ../shared/seeds/003_*; reproductions.md): the INT loop
 * holds "the strict queue requirements of the DC's shallow buffers"; flows converge
 * (MIMD plus an additive term). Here:
 *   - two flows, the second joins at 2 ms: Jain >= 0.9 within 5 RTTs of the join, >= 0.9
 *     over 20..100 RTTs after it, no drops, and the queue then averages under 0.25 BDP
 *     where `none` stands at > 3 BDP;
 *   - 16 -> 1, 1 MB each, 1 MB buffer (HPCC drops nothing there, test_loop_hpcc): IDCC
 *     drops (measured 495). Disagreement, asserted as measured: IDCC has no in-flight cap
 *     (HPCC's and FFD's W = R * T), so until its first control step the 16 senders run at
 *     line rate and the first RTTs overflow a buffer that bounds a windowed sender.
 *   - a WAN flow and DC flows on one DC queue (below): the WAN flow does not yield. */
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

	vt_net_assert_join("idcc", NULL, &j);
	assert_true(j.fair_rtts >= 0 && j.fair_rtts <= 5);
	assert_true(j.jain >= 0.9);    /* 0.924 with INT echoed (0.96 with INT direct) */
	assert_int_equal(j.drops, 0);
	assert_true(j.none_queue_bdp > 3);
	assert_true(j.queue_bdp < 0.25);
}

static void test_incast_overflows(void **state)
{
	struct vt_net_conf c = vt_net_defaults("idcc", 16, 1000000, 1000000);
	struct vt_net_result r;
	(void)state;

	vt_net_assert_run(&c, &r);
	vt_net_print("16->1 idcc", &r);
	assert_int_equal(r.flows_done, 16);
	assert_true(r.drops > 0);   /* the disagreement (see the header) */
	vt_net_free(&r);
}

/* The source's point: when a DC queue builds, the inter-DC flow yields to the intra-DC
 * ones. A WAN sender (host 5: a 1 ms link into the switch, so T ~1 ms, a link INT never
 * sees queued; RC window 4096 packets for its 1.25 MB BDP) runs alone at the 10 Gb/s DC
 * line rate into a 1 MB port; at 10 WAN RTTs four DC flows (1 us links, T ~6 us) join.
 * The source (and this test on the netmodel before) expects the WAN flow at half its rate
 * within 3 WAN RTTs and the DC flows carrying more than twice its bytes. Measured on the
 * real switch and agents: the queue stays within 20 KB of the default target
 * (0.15 x 10G x dc_rtt 12 us = 2.25 KB; peak 6.6 KB) and nothing is dropped, but the
 * WAN flow halves within 3 WAN RTTs and, over the last 10 of 30, carries 2.35 Gb/s to
 * the four DC flows' 6.97: the DC flows carry more than twice its bytes, as the source
 * says (both asserted). Figures with INT echoed through the receiver (the bench's
 * feedback), INT only to the flows that ask for it, and a send queue that holds the WAN
 * flow's whole window (sim/flow.c). On the way there the test measured the disagreement
 * the issue reported: 6.5 Gb/s WAN to 2.8 DC with INT straight from the switch and the
 * window cut to 1024 packets (under its 1200-packet BDP), halving only after 5-14 RTTs;
 * 3.53 to 5.78 with the whole window before INT went only to flows that ask. The yield
 * is real but sensitive to the feedback path's details. */
static void test_wan_yields_to_dc(void **state)
{
	enum { NDC = 4, WAN = NDC, JOIN = 10, END = 30, LAST = 10 };
	struct vt_net_conf c = vt_net_defaults("idcc", NDC + 1, 200000000, 1000000);
	struct vt_net_result r;
	const double qt = 0.15 * 10e9 * 12e-6 / 8;
	(void)state;

	c.delay_ns = QP_NS_PER_US;
	c.window_pkts = 4096;            /* the WAN BDP is 1.25 MB: 1200 packets */
	c.host_delay_ns[WAN + 1] = QP_NS_PER_MS;
	c.src[0] = WAN + 1;              /* flow 0 is the WAN flow, from time 0 */
	for (unsigned i = 1; i <= NDC; i++)
		c.src[i] = i;
	/* T_wan = the modelled RTT + 1 ms - 1 us: 1.0058 ms */
	const qp_time_ns t_wan = 4 * QP_NS_PER_US + 2 * 866 + 2 * 52 + QP_NS_PER_MS - QP_NS_PER_US;
	for (unsigned i = 1; i <= NDC; i++)
		c.start_ns[i] = JOIN * t_wan;
	c.sample_ns = t_wan / 4;
	c.duration_ns = END * t_wan;
	vt_net_assert_run(&c, &r);
	vt_net_print("idcc, a WAN flow and 4 DC flows", &r);
	assert_true(r.flow[0].rtt_ns > 1000 * QP_NS_PER_US && r.flow[0].rtt_ns < 1010 * QP_NS_PER_US);
	double r_join = (double)r.s[vt_sample_at(&r, JOIN * t_wan)].rate_bps[0];
	unsigned halved = 0;
	double worst = 0;
	for (unsigned k = JOIN + 1; k <= END; k++) {
		double rk = (double)r.s[vt_sample_at(&r, k * t_wan)].rate_bps[0];
		if (!halved && rk <= r_join / 2)
			halved = k - JOIN;
		if (k >= JOIN + 3 && rk > worst)
			worst = rk;
	}
	double wan = vt_goodput_bps(&r, 0, (END - LAST) * t_wan, END * t_wan), dc = 0;
	for (unsigned i = 1; i <= NDC; i++)
		dc += vt_goodput_bps(&r, i, (END - LAST) * t_wan, END * t_wan);
	uint64_t qmax = vt_max_queue(&r, (END - LAST) * t_wan, END * t_wan);
	print_message("WAN flow T %.3f ms: %.2f Gb/s before the DC flows, halved %u WAN RTTs after, "
		      "at most %.2f Gb/s from 3 after; last %u: DC %.2f Gb/s, WAN %.2f Gb/s, queue "
		      "peak %llu B (target %.0f)\n", (double)r.flow[0].rtt_ns / 1e6, r_join / 1e9,
		      halved, worst / 1e9, LAST, dc / 1e9, wan / 1e9, (unsigned long long)qmax, qt);
	assert_true(r_join > 0.95 * r.payload_bps);
	assert_true(halved > 0 && halved <= 3);       /* as the source says */
	assert_true(dc > 2 * wan);                    /* as the source says */
	assert_true(wan + dc > 0.9 * r.payload_bps);
	assert_true((double)qmax < qt + 20000);
	assert_int_equal(r.drops, 0);
	vt_net_free(&r);
}

/* 4 flows share a 100 Gb/s port (1 us links: T 4.2 us, BDP 52 KB); after 300 T two more
 * join at line rate (+200% offered load). Every base RTT: the queue, and the port's
 * goodput over the last 10 T. Settled = queue within [0, q_t + 0.25 BDP] and goodput
 * >= 95% of payload: within 80 T (62 measured). No sustained oscillation: the last 20 T
 * swing less than 0.15 BDP (0.105; on the netmodel this was < 0.1) and a tenth of the
 * first 20 T, and sit near the target (22.5 KB, 0.43 BDP: mean 0.49); Jain > 0.95 (0.963)
 * once the additive increase has evened the newcomers out. */
static void test_join_step(void **state)
{
	enum { OLD = 4, N = 6, STEP = 300, END = 600, LAST = 20 };
	struct vt_net_conf c = vt_net_defaults("idcc", N, 200000000, 1000000);
	struct vt_net_result r;
	const double qt = 0.15 * 100e9 * 12e-6 / 8;
	(void)state;

	c.link_bps = 100 * QP_GBPS;
	c.delay_ns = QP_NS_PER_US;
	const qp_time_ns t = 4 * QP_NS_PER_US + 2 * 87 + 2 * 6;
	for (unsigned i = OLD; i < N; i++)
		c.start_ns[i] = STEP * t;
	c.sample_ns = t;
	c.duration_ns = END * t;
	vt_net_assert_run(&c, &r);
	vt_net_print("idcc, 4 flows, 2 join", &r);
	unsigned settled = STEP;
	double lo[2] = { 1e30, 1e30 }, hi[2] = { 0, 0 }, sum = 0;
	for (unsigned k = STEP + 1; k <= END; k++) {
		unsigned i = vt_sample_at(&r, k * t);
		double q = (double)r.s[i].queue_bytes / r.bdp_bytes, g = 0;
		for (unsigned f = 0; f < N; f++)      /* on 10 T: 1 T is ~40 packets */
			g += vt_goodput_bps(&r, f, (k - 10) * t, k * t);
		if (q * r.bdp_bytes > qt + 0.25 * r.bdp_bytes || g < 0.95 * r.payload_bps)
			settled = k;
		int w = k <= STEP + LAST ? 0 : k > END - LAST ? 1 : -1;
		if (w >= 0) {
			lo[w] = q < lo[w] ? q : lo[w];
			hi[w] = q > hi[w] ? q : hi[w];
		}
		if (w == 1)
			sum += q;
	}
	double jain = vt_jain(&r, 0, N, (END - LAST) * t, END * t);
	print_message("settled %u T after the step; queue first %u T %.3f..%.3f BDP, last %u T "
		      "%.3f..%.3f (mean %.3f; target %.3f); Jain %.3f\n", settled - STEP, LAST, lo[0],
		      hi[0], LAST, lo[1], hi[1], sum / LAST, qt / r.bdp_bytes, jain);
	assert_true(settled - STEP <= 80);                  /* 62 measured */
	assert_true(hi[1] - lo[1] < 0.15);                  /* 0.105 */
	assert_true(hi[1] - lo[1] < (hi[0] - lo[0]) / 10);
	assert_true(sum / LAST > 0.5 * qt / r.bdp_bytes && sum / LAST < qt / r.bdp_bytes + 0.15);
	assert_true(jain > 0.95);                           /* 0.963 */
	assert_int_equal(r.drops, 0);
	vt_net_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_fair_short_queue),
		cmocka_unit_test(test_incast_overflows),
		cmocka_unit_test(test_wan_yields_to_dc),
		cmocka_unit_test(test_join_step),
	};
	return cmocka_run_group_tests_name("loop_idcc", tests, NULL, NULL);
}
