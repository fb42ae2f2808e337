/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ACC against HPCC in the same closed loops on the real switch, soft hosts and agents
 * (virtual time, tests/support/vt_net.h: N -> 1 star, 10 Gb/s, 10 us links, RTT 41.8 us,
 * finite buffers), both with the bench's HPCC settings for this network (eta 0.95,
 * max_stage 0, rate_ai (1 - eta) * line / N, min_rate one packet per 10 RTTs), ACC's
 * notices from the switch at one BDP (its declared feedback), fair=1.
 *
 * What the source claims (ACC, ../shared/seeds/001_*; reproductions.md): the switch's
 * feedback inside the first RTT gives a shorter queue than HPCC with "the same high
 * throughput"; flows "perceive idle bandwidth in advance" when others finish. Here:
 *   - 16 -> 1, 500 KB each: ACC's peak queue is below 0.75 of HPCC's; on a 1 MB buffer
 *     neither drops, on 600 KB HPCC drops (its first RTT queues ~N windows, 810 KB) and
 *     ACC does not; ACC keeps 90% of the payload rate and Jain >= 0.95.
 *     Disagreement, measured: after the notice's cut to the fair share (0.59 G) the INT
 *     of the next RTTs still shows the queue the notice reported and cuts again: ACC's
 *     flows fall to 0.239 G (40% of the fair share, above min_rate), where HPCC's lowest
 *     is 0.391 G (0.035 against 0.48 with INT straight from the switch). The test asserts that (lower than HPCC's, above the floor).
 *   - Two flows, the 1 MB (3 MB) one ends: the survivor reaches 90% of eta * line in under
 *     2 RTTs with either, and with ACC at least half an RTT sooner than with HPCC: the
 *     finishing flow announces its last window (last_window=1: the flow's size and ACKs,
 *     a WANT with FB_WANT_F_LAST to the switch), the switch's flow count falls at once,
 *     and the survivor's next notice carries it while that window still drains.
 *     Measured ACC / HPCC: 0.03 / 1.31 RTT (1 MB), 0.04 / 1.23 (3 MB). The named variant
 *     last_window=0 (the count falls by silence, 2 base RTTs after the flow's last frame)
 *     is not: 1.46 and 1.28, within half an RTT of HPCC either way (asserted): HPCC at
 *     max_stage 0 has by then seen the idle link in its INT. The switch counts RoCEv2
 *     data flows only: the INT wishes and announcements to the receiver are no flows of
 *     the count (flow.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "vt_net.h"

#define N 16u

/* The bench's HPCC settings (incast_hpcc_params) for @n flows on 10 Gb/s, RTT 41.8 us. */
static const char *params_for(unsigned n, char *buf, size_t len)
{
	snprintf(buf, len, "eta=0.95,max_stage=0,rate_ai=%llu,min_rate=19600000",
		 (unsigned long long)(0.05 * 9.46e9 / n));
	return buf;
}

static void incast(const char *algo, uint64_t buffer, struct vt_net_result *r)
{
	struct vt_net_conf c = vt_net_defaults(algo, N, 500000, buffer);
	char label[64], p[128];

	c.params = params_for(N, p, sizeof(p));
	vt_net_assert_run(&c, r);
	snprintf(label, sizeof(label), "16->1 %s, %llu B buffer", algo, (unsigned long long)buffer);
	vt_net_print(label, r);
}

static void test_incast_shorter_queue(void **state)
{
	struct vt_net_result h, a, hs, as;
	qp_rate_bps a_min = 0, h_min = 0;
	double total = 0;
	(void)state;

	incast("hpcc", 1000000, &h);
	incast("acc", 1000000, &a);
	for (unsigned i = 0; i < N; i++) {
		qp_rate_bps m = vt_min_rate(&a, i), mh = vt_min_rate(&h, i);
		a_min = !a_min || m < a_min ? m : a_min;
		h_min = !h_min || mh < h_min ? mh : h_min;
		total += vt_goodput_bps(&a, i, 0, a.end_ns);
	}
	double jain = vt_jain(&a, 0, N, 0, a.end_ns / 2);
	print_message("acc peak %.2f of hpcc's; acc goodput %.1f%% of payload, Jain %.3f; lowest "
		      "rate acc %.3f G, hpcc %.3f G\n",
		      (double)a.max_queue_bytes / (double)h.max_queue_bytes,
		      100 * total / a.payload_bps, jain, (double)a_min / 1e9, (double)h_min / 1e9);
	assert_int_equal(h.drops, 0);
	assert_int_equal(a.drops, 0);
	assert_true((double)a.max_queue_bytes < 0.75 * (double)h.max_queue_bytes);
	assert_true(total >= 0.9 * a.payload_bps);
	assert_true(jain >= 0.95);
	assert_true(a_min > 19600000);             /* not at the floor */
	assert_true(a_min < h_min);                /* the second cut (see the header) */
	incast("hpcc", 600000, &hs);
	incast("acc", 600000, &as);
	assert_true(hs.drops > 0);
	assert_int_equal(as.drops, 0);
	vt_net_free(&h);
	vt_net_free(&a);
	vt_net_free(&hs);
	vt_net_free(&as);
}

static qp_time_ns freed_share(const char *algo, const char *more, uint64_t bytes,
			      qp_time_ns *rtt)
{
	struct vt_net_conf c = vt_net_defaults(algo, 2, 8000000, 1000000);
	struct vt_net_result r;
	char p[160], label[64];

	params_for(2, p, sizeof(p));
	if (more)
		snprintf(p + strlen(p), sizeof(p) - strlen(p), ",%s", more);
	c.params = p;
	c.bytes[1] = bytes;
	c.sample_ns = 4 * QP_NS_PER_US;
	c.duration_ns = bytes * 16 / 9 + QP_NS_PER_MS;   /* its end (4.5 G: 1.78 ns/B) + 1 ms */
	vt_net_assert_run(&c, &r);
	snprintf(label, sizeof(label), "%s, a %llu B flow ends", algo, (unsigned long long)bytes);
	vt_net_print(label, &r);
	assert_true(r.flow[1].done);
	assert_int_equal(r.drops, 0);
	qp_time_ns t = vt_rate_reached(&r, 0, r.flow[1].fct_ns, 0.9 * 0.95 * r.payload_bps);
	assert_true(t != QP_TIME_NEVER);
	*rtt = r.rtt_ns;
	vt_net_free(&r);
	return t - r.flow[1].fct_ns;
}

static void test_freed_share(void **state)
{
	static const uint64_t sizes[] = { 1000000, 3000000 };
	(void)state;

	for (unsigned k = 0; k < 2; k++) {
		qp_time_ns rtt, h = freed_share("hpcc", NULL, sizes[k], &rtt),
				a = freed_share("acc", NULL, sizes[k], &rtt),
				s = freed_share("acc", "last_window=0", sizes[k], &rtt);
		print_message("survivor at 90%% of eta*line %.2f RTT (hpcc) / %.2f RTT (acc) / "
			      "%.2f RTT (acc last_window=0) after the %llu B flow completed\n",
			      (double)h / (double)rtt, (double)a / (double)rtt,
			      (double)s / (double)rtt, (unsigned long long)sizes[k]);
		assert_true(h <= 2 * rtt && a <= 2 * rtt && s <= 2 * rtt);
		assert_true(a + rtt / 2 <= h);     /* in advance */
		/* the variant: not reliably faster, within half an RTT of HPCC either way */
		assert_true(s <= h + rtt / 2 && h <= s + rtt / 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast_shorter_queue),
		cmocka_unit_test(test_freed_share),
	};
	return cmocka_run_group_tests_name("loop_acc", tests, NULL, NULL);
}
