/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IPv6 flows in the agent core (AGENT_QP_IPV6, qpace/ctl.h) and as qpaced makes them from
 * the tc programs' reports (agent/wire_addr.h):
 *   - an IPv6 flow whose addresses end in an IPv4 flow's bytes, with the same peer QPN, is
 *     a second QP: each lookup finds its own family's, neither the other's, also after
 *     the other goes (the shared index's deletion)
 *   - registration refuses an IPv6 flow with :: or an IPv4-mapped address, one with IPv4
 *     addresses too, IPv6 addresses without the flag, an IPv6 receiver: counted, named
 *   - an IPv6 QP running hpcc asks no switch for INT (a WANT goes to the receiver's IPv4
 *     address); an INT report about its flow (FB_F_IPV6, the addresses in the message)
 *     reaches it, not the IPv4 QP whose addresses are the IPv6 ones' last bytes, and an
 *     IPv4 report about that IPv4 flow the IPv4 QP
 *   - the view shows its addresses (qpacectl, /metrics) and the control protocol carries
 *     them (REGISTER and QP round trips)
 *   - a report of an IPv6 frame becomes such a QP, an IPv4 one an IPv4 QP, an IPv4 report
 *     with addresses that are not IPv4-mapped none */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "qpace/addr.h"
#include "qpace/agent.h"
#include "wire_addr.h"

/* fd00::a00:1 and fd00::a00:2: their last four bytes are HOST_A's and HOST_B's */
static const uint8_t l6[16] = { 0xfd, [12] = 0x0a, [15] = 0x01 };
static const uint8_t p6[16] = { 0xfd, [12] = 0x0a, [15] = 0x02 };
static const uint8_t mapped_b[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };

static struct agent_qp_reg reg6(uint32_t qpn, uint32_t peer_qpn)
{
	struct agent_qp_reg r = afx_reg(qpn, peer_qpn);

	r.local_ip = r.peer_ip = 0;
	r.flags = AGENT_QP_IPV6;
	memcpy(r.local_ip6, l6, 16);
	memcpy(r.peer_ip6, p6, 16);
	return r;
}

static void test_identity(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r4 = afx_reg(0x11, 0x21), r6 = reg6(0x12, 0x21);
	struct agent_qp_view v;
	char buf[QP_IPV6_STRLEN];
	uint32_t qpn = 0;
	uint64_t wants;
	(void)state;

	afx_register(f, &r4);
	wants = agent_counters(f->a)[AGENT_C_WANTS_SENT];
	assert_int_equal(wants, 1);                 /* the IPv4 hpcc QP asks for INT */
	afx_register(f, &r6);                       /* same peer QPN, same last bytes */
	assert_int_equal(agent_counters(f->a)[AGENT_C_WANTS_SENT], wants);   /* not IPv6 */
	assert_int_equal(agent_qp_find_flow(f->a, HOST_A, HOST_B, 0x21, &qpn), 0);
	assert_int_equal(qpn, 0x11);
	assert_int_equal(agent_qp_find_flow6(f->a, l6, p6, 0x21, &qpn), 0);
	assert_int_equal(qpn, 0x12);
	assert_int_equal(agent_qp_find_flow6(f->a, p6, l6, 0x21, &qpn), -ENOENT);
	assert_int_equal(agent_qp_find_flow6(f->a, l6, p6, 0x22, &qpn), -ENOENT);
	assert_int_equal(agent_qp_view(f->a, 0x12, &v), 0);
	assert_true(v.reg.flags & AGENT_QP_IPV6);
	assert_string_equal(agent_qp_addr_fmt(&v.reg, true, buf, sizeof(buf)), "fd00::a00:2");
	assert_string_equal(agent_qp_addr_fmt(&v.reg, false, buf, sizeof(buf)), "fd00::a00:1");
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_string_equal(agent_qp_addr_fmt(&v.reg, true, buf, sizeof(buf)), "10.0.0.2");
	/* one goes, the other stays findable */
	assert_int_equal(agent_unregister(f->a, 0x11, T0), 0);
	assert_int_equal(agent_qp_find_flow6(f->a, l6, p6, 0x21, &qpn), 0);
	assert_int_equal(agent_qp_find_flow(f->a, HOST_A, HOST_B, 0x21, &qpn), -ENOENT);
	{
		struct agent_dgram d;

		assert_int_equal(agent_tx_take(f->a, &d, 1), 1);   /* its INT withdrawn */
	}
	afx_register(f, &r4);
	assert_int_equal(agent_unregister(f->a, 0x12, T0), 0);
	assert_int_equal(agent_qp_find_flow(f->a, HOST_A, HOST_B, 0x21, &qpn), 0);
	assert_int_equal(agent_qp_find_flow6(f->a, l6, p6, 0x21, &qpn), -ENOENT);
	afx_free(f);
}

static void test_register_rules6(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r;
	char err[256];
	static const struct { const char *what, *says; } cases[] = {
		{ "peer IPv4-mapped", "IPv4-mapped" }, { "local ::", "local_ip6 ::" },
		{ "IPv4 addresses too", "with IPv4 addresses" },
		{ "IPv6 addresses without the flag", "without the ipv6 flag" },
		{ "receiver", "IPv6 receiver" }, { "IPv4 flow, local 0", "local_ip=0" },
	};
	(void)state;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t bad = agent_counters(f->a)[AGENT_C_REG_BAD];

		r = reg6(0x20 + i, 0x30);
		switch (i) {
		case 0: memcpy(r.peer_ip6, mapped_b, 16); break;
		case 1: memset(r.local_ip6, 0, 16); break;
		case 2: r.local_ip = HOST_A; break;
		case 3: r.flags = 0; r.local_ip = HOST_A; r.peer_ip = HOST_B; break;
		case 4: r.flags |= AGENT_QP_RECEIVER; break;
		default: r = afx_reg(0x20 + i, 0x30); r.local_ip = 0; break;
		}
		err[0] = 0;
		if (agent_register(f->a, &r, 1, 1, T0, err, sizeof(err)) != -EINVAL)
			fail_msg("%s: accepted", cases[i].what);
		print_message("%s: %s\n", cases[i].what, err);
		assert_non_null(strstr(err, cases[i].says));
		assert_int_equal(agent_counters(f->a)[AGENT_C_REG_BAD], bad + 1);
	}
	assert_int_equal(agent_qp_count(f->a), 0);
	r = reg6(0x40, 0x30);
	afx_register(f, &r);
	r.qpn = 0x41;     /* the same IPv6 flow again */
	assert_int_equal(agent_register(f->a, &r, 1, 1, T0, err, sizeof(err)), -EEXIST);
	print_message("again: %s\n", err);
	assert_non_null(strstr(err, "fd00::a00:2"));
	afx_free(f);
}

static void test_ctl_carries6(void **state)
{
	struct ctl_msg m = { .type = CTL_T_REGISTER, .id = 1 }, got;
	uint8_t buf[CTL_MAX_LEN];
	char err[160];
	int n;
	(void)state;

	m.u.reg = reg6(0x12, 0x21);
	snprintf(m.u.reg.algo, sizeof(m.u.reg.algo), "dcqcn");
	n = ctl_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), 0);
	assert_memory_equal(&got.u.reg, &m.u.reg, sizeof(m.u.reg));
	m = (struct ctl_msg){ .type = CTL_T_QP, .id = 2 };
	m.u.qp.reg = reg6(0x12, 0x21);
	m.u.qp.enforce = AGENT_ENF_TC;
	m.u.qp.wire.seen = true;
	n = ctl_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), 0);
	assert_memory_equal(got.u.qp.reg.local_ip6, l6, 16);
	assert_memory_equal(got.u.qp.reg.peer_ip6, p6, 16);
	/* a QP body cut before the addresses (an older agent): the flag, no addresses */
	buf[4] = (uint8_t)((n - 32) >> 8);
	buf[5] = (uint8_t)(n - 32);
	assert_int_equal(ctl_decode(&got, buf, (size_t)n - 32, err, sizeof(err)), 0);
	assert_true(got.u.qp.reg.flags & AGENT_QP_IPV6);
	assert_int_equal(got.u.qp.reg.peer_ip6[0], 0);
}

/* What qpaced's tc egress does with a report (daemon_tc.c's on_report: wire_addr.h, then
 * agent_register, as for IPv4). */
static void test_discovery6(void **state)
{
	struct agent_params p = afx_params("dcqcn");
	struct afx *f = afx_new(&p);
	static const uint8_t mapped_a[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	struct agent_qp_reg r = afx_reg(0xf00000, 0x77);
	struct agent_qp_reg r4 = afx_reg(0xf00001, 0x77), bad = afx_reg(0xf00002, 0x77);
	char err[256];
	uint32_t qpn = 0;
	(void)state;

	r.local_ip = r.peer_ip = 0;
	assert_true(wire_flow_addrs(&r, true, l6, p6));
	assert_int_equal(wire_flow_qp(f->a, &r, &qpn), -ENOENT);   /* not known: a new QP */
	afx_register(f, &r);
	assert_int_equal(wire_flow_qp(f->a, &r, &qpn), 0);
	assert_int_equal(qpn, 0xf00000);
	/* the IPv4 flow of the same peer QPN is another */
	r4.local_ip = r4.peer_ip = 0;
	assert_true(wire_flow_addrs(&r4, false, mapped_a, mapped_b));
	assert_int_equal(r4.local_ip, HOST_A);
	assert_int_equal(r4.peer_ip, HOST_B);
	assert_false(r4.flags & AGENT_QP_IPV6);
	assert_int_equal(wire_flow_qp(f->a, &r4, &qpn), -ENOENT);
	afx_register(f, &r4);
	/* an IPv4 report whose addresses are not IPv4-mapped: no QP */
	bad.local_ip = bad.peer_ip = 0;
	assert_false(wire_flow_addrs(&bad, false, l6, p6));
	assert_int_equal(bad.local_ip, 0);
	/* an IPv6 report with an IPv4-mapped address: refused at registration, counted */
	bad = afx_reg(0xf00003, 0x78);
	bad.local_ip = bad.peer_ip = 0;
	assert_true(wire_flow_addrs(&bad, true, mapped_a, p6));
	assert_int_equal(agent_register(f->a, &bad, 1, 0, T0, err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_qp_count(f->a), 2);
	afx_free(f);
}

static void test_int6(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r4 = afx_reg(0x11, 0x21), r6 = reg6(0x12, 0x21);
	struct fb_msg m = { .type = FB_T_INT, .flags = FB_F_IPV6 };
	struct agent_qp_view v4, v6;
	(void)state;

	afx_register(f, &r4);
	afx_register(f, &r6);
	m.u.int_report = (struct fb_int){ .flow = { .dest_qp = 0x21 }, .psn = 1, .nhops = 1,
		.hops = { { .switch_id = 1, .port = 1, .ts_ns = T0, .tx_bytes = 1000,
			    .qlen_bytes = 5000, .link_bps = 10 * QP_GBPS } } };
	memcpy(m.u.int_report.flow.src6, l6, 16);
	memcpy(m.u.int_report.flow.dst6, p6, 16);
	assert_true(afx_feed(f, &m, SWITCH, T0) & AGENT_RX_MATCHED);
	assert_int_equal(agent_qp_view(f->a, 0x12, &v6), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v4), 0);
	assert_int_equal(v6.feedback, 1);
	assert_int_equal(v6.queue_bytes, 5000);
	assert_int_equal(v4.feedback, 0);
	/* the same report as IPv4 (the addresses' last bytes): the IPv4 QP's */
	m.flags = 0;
	memset(m.u.int_report.flow.src6, 0, 16);
	memset(m.u.int_report.flow.dst6, 0, 16);
	m.u.int_report.flow.src_ip = HOST_A;
	m.u.int_report.flow.dst_ip = HOST_B;
	assert_true(afx_feed(f, &m, SWITCH, T0 + 1) & AGENT_RX_MATCHED);
	assert_int_equal(agent_qp_view(f->a, 0x12, &v6), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v4), 0);
	assert_int_equal(v6.feedback, 1);
	assert_int_equal(v4.feedback, 1);
	/* an IPv6 report no QP has: counted as an unknown flow */
	m.flags = FB_F_IPV6;
	m.u.int_report.flow.src_ip = m.u.int_report.flow.dst_ip = 0;
	memcpy(m.u.int_report.flow.src6, p6, 16);
	memcpy(m.u.int_report.flow.dst6, l6, 16);
	assert_false(afx_feed(f, &m, SWITCH, T0 + 2) & AGENT_RX_MATCHED);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_UNKNOWN_FLOW], 1);
	assert_non_null(strstr(f->lastlog, "fd00::a00:2"));
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_register_rules6),
		cmocka_unit_test(test_ctl_carries6),
		cmocka_unit_test(test_discovery6),
		cmocka_unit_test(test_int6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
