/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's IA credits with injected time: the receiver's grants on the exact W/Δ
 * schedule as senders come and go, grant sequence numbers across registrations, grants
 * clocked by arrivals (echo INT, or the shell's own count) and bounded to the window, and
 * the sender's side:
 * cumulative grants, duplicates, expiry; qpaced's own arrival counts as the one source,
 * and the credit record a shell that enforces credits reads (agent_qp_credit). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"

/* ---- receiver role: IA grants for 5 senders on the exact W/Δ schedule ---- */

struct grant_log {
	qp_time_ns at[8][64];
	unsigned n[8];
	uint32_t last_seq;           /* one counter for all the agent's grants */
	bool any;
	uint32_t bytes, interval;
};

/* Poll at every deadline until @end; file each CREDIT datagram under its dest QP. */
static void run_grants(struct afx *f, qp_time_ns start, qp_time_ns end, struct grant_log *g)
{
	qp_time_ns now = start;

	for (;;) {
		struct agent_dgram d[16];
		unsigned n;

		now = agent_next_ns(f->a);
		if (now > end)
			break;
		agent_poll(f->a, now);
		while ((n = agent_tx_take(f->a, d, 16))) {
			for (unsigned i = 0; i < n; i++) {
				struct fb_msg m;
				uint32_t q;

				assert_int_equal(fb_decode(&m, d[i].buf, d[i].len), 0);
				assert_int_equal(m.type, FB_T_CREDIT);
				assert_int_equal(d[i].dst_ip, HOST_B);
				q = m.u.credit.flow.dest_qp - 0x11;
				assert_true(q < 8);
				/* One counter for every grant the agent sends: each is past the last. */
				assert_true(!g->any || (int32_t)(m.u.credit.seq - g->last_seq) == 1);
				g->last_seq = m.u.credit.seq;
				g->any = true;
				if (g->n[q] < 64)
					g->at[q][g->n[q]++] = now;
				g->bytes = m.u.credit.credit_bytes;
				g->interval = (uint32_t)m.u.credit.interval_ns;
			}
		}
	}
}

static void check_schedule(struct afx *f, qp_rate_bps link, uint32_t want_w,
			   qp_time_ns want_delta)
{
	const qp_time_ns rtt = 100 * QP_NS_PER_US, period = rtt + want_delta;
	static struct grant_log g;
	uint32_t n, w;
	qp_time_ns delta, per;

	memset(&g, 0, sizeof(g));
	for (uint32_t i = 0; i < 5; i++) {
		struct agent_qp_reg r = afx_reg(0x11 + i, 0x21 + i);

		r.link_bps = link;
		r.base_rtt_ns = rtt;
		r.flags = AGENT_QP_RECEIVER;
		afx_register(f, &r);
	}
	assert_int_equal(agent_link_view(f->a, HOST_A, &n, &w, &delta, &per), 0);
	assert_int_equal(n, 5);
	assert_int_equal(w, want_w);
	assert_int_equal(delta, want_delta);
	assert_int_equal(per, period);
	run_grants(f, T0, T0 + 10 * period, &g);
	assert_int_equal(g.bytes, want_w * 1000);
	assert_int_equal(g.interval, period);
	for (unsigned q = 0; q < 5; q++) {
		/* first grant at a random time in [T0, T0 + period], then exactly every period */
		assert_true(g.at[q][0] >= T0 && g.at[q][0] <= T0 + period);
		assert_true(g.n[q] >= 9);
		for (unsigned k = 1; k < g.n[q]; k++)
			assert_int_equal(g.at[q][k] - g.at[q][k - 1], period);
	}
	print_message("link %llu b/s, rtt 100us, mtu 1000, n=5: W=%u, delta=%llu ns, period %llu "
		      "ns; first grants at +%llu +%llu +%llu +%llu +%llu ns\n",
		      (unsigned long long)link, w, (unsigned long long)delta,
		      (unsigned long long)per, (unsigned long long)(g.at[0][0] - T0),
		      (unsigned long long)(g.at[1][0] - T0), (unsigned long long)(g.at[2][0] - T0),
		      (unsigned long long)(g.at[3][0] - T0), (unsigned long long)(g.at[4][0] - T0));
}

static void test_ia_five_senders(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f;
	uint32_t n, w;
	qp_time_ns delta, per;
	(void)state;

	p.credits = true;
	/* 1 Gb/s: C*RTT = 12500 B -> W = floor(12500 / 5000) = 2, delta 0 */
	f = afx_new(&p);
	check_schedule(f, QP_GBPS, 2, 0);
	/* n changes as QPs go: 4 left -> W = floor(12500 / 4000) = 3 */
	assert_int_equal(agent_unregister(f->a, 0x15, T0), 0);
	assert_int_equal(agent_link_view(f->a, HOST_A, &n, &w, &delta, &per), 0);
	assert_int_equal(n, 4);
	assert_int_equal(w, 3);
	agent_unregister_owner(f->a, 1, T0);
	assert_int_equal(agent_link_view(f->a, HOST_A, &n, &w, &delta, &per), -ENOENT);
	afx_free(f);
	/* 100 Mb/s: C*RTT = 1250 B < 5 MTU -> W = 1, delta = 5*1000*8/1e8 - 100us = 300us */
	f = afx_new(&p);
	check_schedule(f, 100 * QP_MBPS, 1, 300 * QP_NS_PER_US);
	afx_free(f);
}

/* A receiver QP registered again (the next query's flow) keeps counting its grants up:
 * the sender's agent, which took the old flow's last grant (it may arrive late, after the
 * sender registered anew), must not drop the new flow's grants as duplicates. Before the
 * counter was per agent, a new flow's grants restarted at 1 and a sender that had taken
 * seq 263 starved until gating expired (qpace-bench's none+ia: one query in three had a
 * straggler 20-40 ms late). */
static void test_grant_seq_across_registrations(void **state)
{
	struct agent_params p = afx_params("none");
	struct agent_qp_reg r = afx_reg(0x11, 0x21), s = afx_reg(0x11, 0x21);
	struct afx *rx, *tx;
	static struct grant_log g;
	struct fb_msg m = { .type = FB_T_CREDIT };
	uint32_t first_seq, old_last;
	qp_time_ns t;
	(void)state;

	p.credits = true;
	rx = afx_new(&p);
	r.link_bps = QP_GBPS;
	r.base_rtt_ns = 100 * QP_NS_PER_US;
	r.flags = AGENT_QP_RECEIVER;
	afx_register(rx, &r);
	memset(&g, 0, sizeof(g));
	run_grants(rx, T0, T0 + QP_NS_PER_MS, &g);
	assert_true(g.n[0] >= 5);
	old_last = g.last_seq;
	t = T0 + 2 * QP_NS_PER_MS;
	assert_int_equal(agent_unregister(rx->a, 0x11, t), 0);
	afx_register(rx, &r);
	g.any = false;
	run_grants(rx, t, t + QP_NS_PER_MS, &g);
	assert_true(g.n[0] >= 10);
	first_seq = old_last + 1;  /* the next one the agent sent */
	print_message("grants: old flow's last seq %u, new flow's up to %u\n", old_last,
		      g.last_seq);
	assert_true((int32_t)(g.last_seq - old_last) > 0);
	afx_free(rx);                /* one fixture at a time */

	/* The sender's side: a new registration takes the old flow's late grant, then the
	 * new flow's grants (higher seqs) add up instead of being dropped. */
	tx = afx_new(&p);
	s.local_ip = HOST_B;
	s.peer_ip = HOST_A;
	s.qpn = 0x21;
	s.peer_qpn = 0x11;
	afx_register(tx, &s);
	m.u.credit = (struct fb_credit){ { HOST_B, HOST_A, 0, 0x11 }, old_last, 1000, 100000 };
	afx_feed(tx, &m, HOST_A, t);
	m.u.credit.seq = first_seq;
	afx_feed(tx, &m, HOST_A, t + 100000);
	m.u.credit.seq = first_seq + 1;
	afx_feed(tx, &m, HOST_A, t + 200000);
	assert_int_equal(afx_slot(tx, 0x21).credit_bytes, 3000);
	assert_int_equal(agent_counters(tx->a)[AGENT_C_FB_DUP_CREDIT], 0);
	afx_free(tx);
}

/* ---- receiver role: grants clocked by arrivals (echo INT), bounded to the window ---- */

/* Echo INT about data HOST_B's QP sent to our receiving QP @qpn, PSN @psn. */
static unsigned feed_arrival(struct afx *f, uint32_t qpn, uint32_t psn, qp_time_ns now)
{
	struct fb_msg m = { .type = FB_T_INT, .flags = FB_F_TO_RECEIVER };

	m.u.int_report.flow = (struct fb_flow){ HOST_B, HOST_A, 4791, qpn };
	m.u.int_report.psn = psn;
	m.u.int_report.nhops = 1;
	m.u.int_report.hops[0] = (struct qp_int_hop){ .switch_id = 1, .port = 1, .ts_ns = now,
						      .link_bps = QP_GBPS };
	return afx_feed(f, &m, 0x0a0000feu, now);
}

/* CREDIT bytes in the datagrams queued now, per receiving QP (0x11 + i); echoes skipped. */
static void take_grants(struct afx *f, uint64_t *bytes, unsigned *count)
{
	struct agent_dgram d[16];
	unsigned n;

	while ((n = agent_tx_take(f->a, d, 16)))
		for (unsigned i = 0; i < n; i++) {
			struct fb_msg m;

			assert_int_equal(fb_decode(&m, d[i].buf, d[i].len), 0);
			if (m.type != FB_T_CREDIT)
				continue;
			bytes[m.u.credit.flow.dest_qp - 0x11] += m.u.credit.credit_bytes;
			count[m.u.credit.flow.dest_qp - 0x11]++;
		}
}

/* Two receiving QPs on a 1 Gb/s link (RTT 100 us, MTU 1000: W = 6 for n = 2). Both get
 * their first window; then only QP 0x11's data arrives (echo INT, PSN 100..129), about one
 * RTT after its first grant and W per RTT after that (as its window allows, so the pacer's
 * RTT samples are the 100 us it was registered with): each arrival is answered at once
 * (Δ = 0) by a grant of the bytes it freed, and 0x12, idle, gets nothing more in 50 RTTs:
 * it cannot bank credit and burst. A reordered (older) PSN grants nothing. */
static void test_arrivals_clock_grants(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f;
	uint64_t bytes[2] = { 0, 0 };
	unsigned count[2] = { 0, 0 };
	qp_time_ns t = T0, first = 0, gap = 100 * QP_NS_PER_US / 6 + 1;
	(void)state;

	p.credits = true;
	f = afx_new(&p);
	for (uint32_t i = 0; i < 2; i++) {
		struct agent_qp_reg r = afx_reg(0x11 + i, 0x21 + i);

		r.link_bps = QP_GBPS;
		r.base_rtt_ns = 100 * QP_NS_PER_US;
		r.flags = AGENT_QP_RECEIVER;
		afx_register(f, &r);
	}
	for (; t <= T0 + 100 * QP_NS_PER_US; t += QP_NS_PER_US) { /* the first windows */
		agent_poll(f->a, t);
		take_grants(f, bytes, count);
		if (!first && bytes[0])
			first = t;
	}
	assert_int_equal(bytes[0], 6000);
	assert_int_equal(bytes[1], 6000);
	t = first + 99 * QP_NS_PER_US; /* before the timer schedule's second grant */
	for (uint32_t k = 0; k < 30; k++, t += gap) {
		uint64_t before = bytes[0];

		agent_poll(f->a, t);
		take_grants(f, bytes, count);
		feed_arrival(f, 0x11, 100 + k, t);
		take_grants(f, bytes, count);
		assert_int_equal(bytes[0] - before, 1000); /* at once, one MTU freed */
	}
	feed_arrival(f, 0x11, 110, t); /* older PSN: no new data */
	take_grants(f, bytes, count);
	assert_int_equal(bytes[0], 6000 + 30 * 1000);
	for (qp_time_ns end = t + 50 * 100 * QP_NS_PER_US; t <= end; t += 10 * QP_NS_PER_US) {
		agent_poll(f->a, t);
		take_grants(f, bytes, count);
	}
	print_message("arrivals: busy QP granted %llu B in %u grants for 30 arrivals; idle QP "
		      "%llu B in %u grant(s) over 50 RTTs\n", (unsigned long long)bytes[0],
		      count[0], (unsigned long long)bytes[1], count[1]);
	assert_int_equal(bytes[0], 6000 + 30 * 1000);
	assert_int_equal(bytes[1], 6000);
	assert_int_equal(count[1], 1);
	{
		uint32_t n, w;
		qp_time_ns delta, per;

		assert_int_equal(agent_link_view(f->a, HOST_A, &n, &w, &delta, &per), 0);
		assert_int_equal(w, 6); /* the measured RTT is the registered one here */
	}
	afx_free(f);
}

/* One receiving QP 0x11 of a 1 Gb/s link, RTT 100 us, MTU 1000 (W = 12, delta = 0),
 * polled each ns until its first grant: the time of that grant. */
static qp_time_ns first_window(struct afx *f, uint64_t *bytes, unsigned *count)
{
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	qp_time_ns t = T0;

	r.link_bps = QP_GBPS;
	r.base_rtt_ns = 100 * QP_NS_PER_US;
	r.flags = AGENT_QP_RECEIVER;
	afx_register(f, &r);
	for (; !bytes[0] && t <= T0 + 100 * QP_NS_PER_US; t++) {
		agent_poll(f->a, t);
		take_grants(f, bytes, count);
	}
	assert_int_equal(bytes[0], 12000);
	return t - 1;
}

/* The shell reports arrivals (agent_params.arrivals, as qpace-bench's emulated hosts do
 * from their soft RC): one receiving QP, 1 Gb/s, RTT 100 us registered, MTU 1000 (W = 12,
 * Δ = 0). Echo INT about new data 10 us after the first window is still echoed to the
 * sender but grants nothing and measures nothing (one source of arrivals); the shell's
 * arrival of 1000 B 20 us after the grant is an RTT sample 5x shorter than registered:
 * with rtt_floor the registered 100 us stays in use (W = 12) and the freed MTU is granted
 * at once; without it W falls to 2 and the 11000 B outstanding leave no room. Arrival
 * clocking from the start: no timer grant follows in 20 periods. Data on a QP that is not
 * registered is -ENOENT and counted as no error. */
static void test_shell_arrivals(void **state)
{
	(void)state;

	for (int floor = 1; floor >= 0; floor--) {
		struct agent_params p = afx_params("none");
		struct afx *f;
		uint64_t bytes[1] = { 0 };
		unsigned count[1] = { 0 }, echoes;
		qp_time_ns t;
		uint32_t n, w;
		qp_time_ns delta, per;

		p.credits = true;
		p.arrivals = true;
		p.rtt_floor = floor;
		f = afx_new(&p);
		t = first_window(f, bytes, count);
		echoes = agent_counters(f->a)[AGENT_C_ECHOES];
		feed_arrival(f, 0x11, 500, t + 10 * QP_NS_PER_US);
		take_grants(f, bytes, count);
		assert_int_equal(bytes[0], 12000);
		assert_int_equal(agent_counters(f->a)[AGENT_C_ECHOES], echoes + 1);
		assert_int_equal(agent_qp_arrived(f->a, 0x11, 1000, t + 20 * QP_NS_PER_US), 0);
		take_grants(f, bytes, count);
		assert_int_equal(agent_link_view(f->a, HOST_A, &n, &w, &delta, &per), 0);
		print_message("shell arrivals, rtt_floor %d: W %u after a 20 us sample, %llu B "
			      "granted\n", floor, w, (unsigned long long)bytes[0]);
		assert_int_equal(w, floor ? 12 : 2);
		assert_int_equal(bytes[0], floor ? 13000 : 12000);
		for (qp_time_ns end = t + 20 * 100 * QP_NS_PER_US; t <= end; t += QP_NS_PER_US) {
			agent_poll(f->a, t);
			take_grants(f, bytes, count);
		}
		assert_int_equal(bytes[0], floor ? 13000 : 12000);
		assert_int_equal(agent_qp_arrived(f->a, 0x99, 1000, t), -ENOENT);
		assert_int_equal(agent_counters(f->a)[AGENT_C_CTL_REJECTED], 0);
		afx_free(f);
	}
}

/* ---- sender side of credits: cumulative grants, duplicates, expiry ---- */

static void test_credit_rx_and_expiry(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m = { .type = FB_T_CREDIT };
	struct qp_rate_entry e;
	(void)state;

	afx_register(f, &r);
	assert_int_equal(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS, 0);
	m.u.credit = (struct fb_credit){ { HOST_A, HOST_B, 0, 0x21 }, 1, 3000, 500000 };
	assert_true(afx_feed(f, &m, HOST_B, T0) & AGENT_RX_RATE);
	afx_feed(f, &m, HOST_B, T0 + 10);         /* same seq: duplicate */
	m.u.credit.seq = 2;
	afx_feed(f, &m, HOST_B, T0 + 100000);
	e = afx_slot(f, 0x11);
	assert_int_equal(e.credit_bytes, 6000);
	assert_true(e.flags & QP_RATE_F_CREDITS);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_DUP_CREDIT], 1);
	/* silent for 4 intervals after the last grant, and at least 100 ms (4 x 0.5 ms is
	 * less): gating off, the rate alone paces */
	assert_int_equal(agent_next_ns(f->a), T0 + 100000 + AGENT_CREDIT_EXPIRY_MIN_NS);
	agent_poll(f->a, T0 + 100000 + 4 * 500000);
	assert_true(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS);
	agent_poll(f->a, T0 + 100000 + AGENT_CREDIT_EXPIRY_MIN_NS - 1);
	assert_true(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS);
	agent_poll(f->a, T0 + 100000 + AGENT_CREDIT_EXPIRY_MIN_NS);
	assert_int_equal(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS, 0);
	assert_int_equal(agent_counters(f->a)[AGENT_C_CREDIT_EXPIRED], 1);
	print_message("credits: 2 grants = %llu B; expiry log: %s\n",
		      (unsigned long long)e.credit_bytes, f->lastlog);
	afx_free(f);
}

/* qpaced's tc ingress counts (agent_params.arrivals false, as in qpaced): a receiving QP
 * (1 Gb/s, RTT 100 us, MTU 1000: W = 12) gets its first window on the timer schedule;
 * agent_qp_arrived one RTT after it is answered at once by the MTU it freed, and from
 * then on echo INT about the QP's data is echoed but grants nothing (one source of
 * arrivals), while the next agent_qp_arrived grants again. */
static void test_shell_arrivals_in_qpaced(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f;
	uint64_t bytes[1] = { 0 };
	unsigned count[1] = { 0 }, echoes;
	qp_time_ns t;
	(void)state;

	p.credits = true;
	f = afx_new(&p);
	t = first_window(f, bytes, count);
	assert_int_equal(agent_qp_arrived(f->a, 0x11, 1000, t + 100 * QP_NS_PER_US), 0);
	take_grants(f, bytes, count);
	assert_int_equal(bytes[0], 13000);
	echoes = agent_counters(f->a)[AGENT_C_ECHOES];
	feed_arrival(f, 0x11, 500, t + 110 * QP_NS_PER_US);
	take_grants(f, bytes, count);
	assert_int_equal(bytes[0], 13000);
	assert_int_equal(agent_counters(f->a)[AGENT_C_ECHOES], echoes + 1);
	assert_int_equal(agent_qp_arrived(f->a, 0x11, 2000, t + 120 * QP_NS_PER_US), 0);
	take_grants(f, bytes, count);
	assert_int_equal(bytes[0], 15000);
	afx_free(f);
}

/* What a shell that enforces credits itself reads (agent_qp_credit): nothing before a
 * grant; each grant's bytes in the generation, its time and interval, the expiry; gating
 * off at the expiry keeps the generation, and the next grant starts the next one with its
 * bytes alone. */
static void test_credit_view(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m = { .type = FB_T_CREDIT };
	struct agent_qp_credit c;
	qp_time_ns t2 = T0 + 1000, off = t2 + AGENT_CREDIT_EXPIRY_MIN_NS;
	(void)state;

	afx_register(f, &r);
	assert_int_equal(agent_qp_credit(f->a, 0x99, &c), -ENOENT);
	assert_int_equal(agent_qp_credit(f->a, 0x11, &c), 0);
	assert_false(c.gated);
	assert_int_equal(c.gen, 0);
	assert_int_equal(c.expiry_ns, QP_TIME_NEVER);
	m.u.credit = (struct fb_credit){ { HOST_A, HOST_B, 0, 0x21 }, 1, 3000, 500000 };
	afx_feed(f, &m, HOST_B, T0);
	assert_int_equal(agent_qp_credit(f->a, 0x11, &c), 0);
	assert_true(c.gated);
	assert_int_equal(c.gen, 1);
	assert_int_equal(c.gen_bytes, 3000);
	assert_int_equal(c.last_ns, T0);
	assert_int_equal(c.interval_ns, 500000);
	assert_int_equal(c.expiry_ns, T0 + AGENT_CREDIT_EXPIRY_MIN_NS);
	m.u.credit.seq = 2;
	m.u.credit.interval_ns = 400000;
	afx_feed(f, &m, HOST_B, t2);
	assert_int_equal(agent_qp_credit(f->a, 0x11, &c), 0);
	assert_int_equal(c.gen_bytes, 6000);
	assert_int_equal(c.last_ns, t2);
	assert_int_equal(c.interval_ns, 400000);
	assert_int_equal(c.expiry_ns, off);
	agent_poll(f->a, off);
	assert_int_equal(agent_qp_credit(f->a, 0x11, &c), 0);
	assert_false(c.gated);
	assert_int_equal(c.gen, 1);
	assert_int_equal(c.expiry_ns, QP_TIME_NEVER);
	m.u.credit.seq = 3;
	m.u.credit.credit_bytes = 2000;
	afx_feed(f, &m, HOST_B, off + 10);
	assert_int_equal(agent_qp_credit(f->a, 0x11, &c), 0);
	assert_true(c.gated);
	assert_int_equal(c.gen, 2);
	assert_int_equal(c.gen_bytes, 2000);
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ia_five_senders),
		cmocka_unit_test(test_grant_seq_across_registrations),
		cmocka_unit_test(test_arrivals_clock_grants),
		cmocka_unit_test(test_shell_arrivals),
		cmocka_unit_test(test_credit_rx_and_expiry),
		cmocka_unit_test(test_shell_arrivals_in_qpaced),
		cmocka_unit_test(test_credit_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
