/* The closed-loop model itself: the figures the algorithm tests rely on. Flows here run
 * the "none" controller, so every number has a closed form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "netmodel.h"

#define B (100 * QP_GBPS)
#define MTU 1000u
#define PROP (2 * QP_NS_PER_US)

static struct cc *mk_none(qp_time_ns rtt)
{
	struct cc_path path = { .line_bps = B, .base_rtt_ns = rtt, .mtu_bytes = MTU };
	char err[128];
	struct cc *cc = cc_create_ops(&cc_none_ops, &path, NULL, 0, err, sizeof(err));
	assert_non_null(cc);
	return cc;
}

/* Star: hosts 0..n-1 each have an uplink (link i), all into bottleneck link n. */
static struct nm *star(unsigned n, uint64_t buffer, uint64_t early, uint64_t kmax)
{
	struct nm_link links[NM_MAX_LINKS] = { 0 };

	for (unsigned i = 0; i <= n; i++) {
		links[i].rate_bps = B;
		links[i].prop_ns = PROP;
		links[i].switch_id = i == n ? 1 : 100 + i;
		links[i].port = (uint16_t)i;
	}
	links[n].buffer_bytes = buffer;
	links[n].early_threshold_bytes = early;
	links[n].notice_interval_ns = 10 * QP_NS_PER_US;
	links[n].ecn_kmin_bytes = kmax / 4;
	links[n].ecn_kmax_bytes = kmax;
	links[n].ecn_pmax = 0.2;
	return nm_create(links, n + 1, MTU, 42);
}

static void test_idle_path(void **state)
{
	struct nm *nm = star(1, 0, 0, 0);
	unsigned path[] = { 0, 1 };
	qp_time_ns rtt = nm_path_rtt(nm, path, 2);
	struct cc *cc = mk_none(rtt);
	(void)state;

	/* 2 hops: 2 x (80 ns serialisation + 2 x 2 us propagation). */
	assert_int_equal(rtt, 2 * (80 + 2 * PROP));
	assert_int_equal(nm_add_flow(nm, cc, path, 2, 0, 0), 0);
	nm_run_until(nm, 100 * QP_NS_PER_US);
	/* At line rate the bottleneck never holds more than the packet in service. */
	assert_true(nm_max_queue_bytes(nm, 1) <= MTU);
	/* Delivered = B * (t - one-way delay), within a packet. */
	uint64_t expect = qp_bytes_in(B, 100 * QP_NS_PER_US - (2 * 80 + 2 * PROP));
	uint64_t got = nm_flow_delivered(nm, 0);
	assert_true(got + 2 * MTU >= expect && got <= expect + 2 * MTU);
	assert_int_equal(cc->stats.events[CC_EV_INT], cc->stats.events[CC_EV_ACKED]);
	nm_destroy(nm);
	cc_destroy(cc);
}

static void test_two_to_one_queue_grows_and_drops(void **state)
{
	struct nm *nm = star(2, 64 * 1024, 0, 0);
	unsigned p0[] = { 0, 2 }, p1[] = { 1, 2 };
	qp_time_ns rtt = nm_path_rtt(nm, p0, 2);
	struct cc *a = mk_none(rtt), *b = mk_none(rtt);
	(void)state;

	nm_add_flow(nm, a, p0, 2, 0, 0);
	nm_add_flow(nm, b, p1, 2, 0, 0);
	/* 2B in, B out: after 4 us of arrivals the queue holds about B x 4us = 50 KB. */
	nm_run_until(nm, 80 + 4 * QP_NS_PER_US + PROP);
	uint64_t q = nm_queue_bytes(nm, 2);
	assert_true(q >= 48000 && q <= 52000);
	nm_run_until(nm, 200 * QP_NS_PER_US);
	assert_true(nm_link_drops(nm, 2) > 0);
	assert_true(nm_max_queue_bytes(nm, 2) <= 64 * 1024);
	/* The bottleneck stays busy: delivered total tracks B. */
	uint64_t total = nm_flow_delivered(nm, 0) + nm_flow_delivered(nm, 1);
	assert_true(total >= qp_bytes_in(B, 190 * QP_NS_PER_US));
	assert_true(nm_flow_retransmits(nm, 0) + nm_flow_retransmits(nm, 1) > 0);
	nm_destroy(nm);
	cc_destroy(a);
	cc_destroy(b);
}

static void test_finite_flow_completes(void **state)
{
	struct nm *nm = star(1, 0, 0, 0);
	unsigned path[] = { 0, 1 };
	qp_time_ns rtt = nm_path_rtt(nm, path, 2);
	struct cc *cc = mk_none(rtt);
	(void)state;

	nm_add_flow(nm, cc, path, 2, 100000, 5 * QP_NS_PER_US);
	nm_run_until(nm, QP_NS_PER_MS);
	/* 100 packets paced at line rate: the last leaves at 99 x 80 ns, then one RTT. */
	assert_int_equal(nm_flow_fct(nm, 0), 99 * 80 + rtt);
	assert_int_equal(nm_flow_delivered(nm, 0), 100000);
	assert_int_equal(cc->stats.events[CC_EV_FLOW_FINISH], 1);
	nm_destroy(nm);
	cc_destroy(cc);
}

static void test_notices_and_marks_above_threshold_only(void **state)
{
	struct nm *nm = star(2, 0, 20000, 40000);
	unsigned p0[] = { 0, 2 }, p1[] = { 1, 2 };
	qp_time_ns rtt = nm_path_rtt(nm, p0, 2);
	struct cc *a = mk_none(rtt), *b = mk_none(rtt);
	(void)state;

	nm_add_flow(nm, a, p0, 2, 0, 0);
	nm_add_flow(nm, b, p1, 2, 0, 0);
	/* Arrivals start at 80 + PROP; the queue gains one packet per 80 ns and reaches
	 * 20 KB at 80 + PROP + 18 x 80 ns: nothing before. */
	nm_run_until(nm, 80 + PROP + 7 * 80);
	assert_int_equal(nm_link_marks(nm, 2), 0); /* queue <= Kmin = 10 KB: no marks */
	nm_run_until(nm, 80 + PROP + 17 * 80);
	assert_int_equal(nm_link_notices(nm, 2), 0);
	nm_run_until(nm, 80 + PROP + 18 * 80);
	assert_true(nm_link_notices(nm, 2) >= 1);
	nm_run_until(nm, 30 * QP_NS_PER_US);
	/* Each flow gets one notice per 10 us interval. */
	assert_true(a->stats.events[CC_EV_NOTICE] >= 2 && a->stats.events[CC_EV_NOTICE] <= 3);
	assert_true(nm_link_marks(nm, 2) > 0);
	assert_true(a->stats.events[CC_EV_CNP] + b->stats.events[CC_EV_CNP] > 0);
	nm_destroy(nm);
	cc_destroy(a);
	cc_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_path),
		cmocka_unit_test(test_two_to_one_queue_grows_and_drops),
		cmocka_unit_test(test_finite_flow_completes),
		cmocka_unit_test(test_notices_and_marks_above_threshold_only),
	};
	return cmocka_run_group_tests_name("netmodel", tests, NULL, NULL);
}
