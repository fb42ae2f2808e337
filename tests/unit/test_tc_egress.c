/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The tc egress BPF program, loaded and run with BPF_PROG_TEST_RUN over crafted frames:
 * departure times from rates (the exact EDT sequence, and the rate they imply within 1%),
 * exact per-flow and per-reason counters, the report of an unknown flow once and within
 * the global limit, observe mode touching nothing, and every frame that is not RoCEv2
 * (VLAN, ARP, truncated or impossible IPv4/IPv6, fragments, extension headers, TCP, other
 * UDP ports, a cut BTH) passed with its bytes and timestamp unchanged and counted under
 * its reason. Skips, with the kernel's reason, only when BPF itself is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "bpf/tc_egress.h"
#include "qpace/frame.h"
#include "tc_run.h"

static struct qp_tc *tc;
static int setup(void **state)
{
	char why[256];

	(void)state;
	return tc_run_opened("test_tc_egress", qp_tc_open(&tc, why, sizeof(why)), why);
}

static int teardown(void **state)
{
	(void)state;
	qp_tc_close(tc);
	return 0;
}

#define NEED_BPF() do { if (!tc) skip(); } while (0)


#define host_a tc_host_a
#define host_b tc_host_b

static int roce4(uint8_t *buf, size_t cap, uint32_t dst_ip, uint32_t qpn, size_t payload)
{
	return tc_run_roce(buf, cap, FRAME_OP_RC_SEND_ONLY, 0, dst_ip, qpn, payload);
}

/* Ethernet / IPv6 / UDP sport->dport / @l4 bytes (a BTH when dport is 4791). */
static size_t ipv6_frame(uint8_t *buf, uint8_t nexthdr, uint16_t dport, uint32_t qpn,
			 size_t l4_payload)
{
	size_t udp_len = 8 + l4_payload, n = 14 + 40 + udp_len;

	memset(buf, 0, n);
	memcpy(buf, host_b.mac, 6);
	memcpy(buf + 6, host_a.mac, 6);
	buf[12] = 0x86;
	buf[13] = 0xdd;
	buf[14] = 0x60;
	buf[18] = (uint8_t)(udp_len >> 8);
	buf[19] = (uint8_t)udp_len;
	buf[20] = nexthdr;
	buf[21] = 64;
	buf[22] = 0xfd;          /* src fd00::1 */
	buf[37] = 1;
	buf[38] = 0xfd;          /* dst fd00::2 */
	buf[53] = 2;
	buf[54] = 0xc0;          /* UDP sport 49152 */
	buf[56] = (uint8_t)(dport >> 8);
	buf[57] = (uint8_t)dport;
	buf[58] = (uint8_t)(udp_len >> 8);
	buf[59] = (uint8_t)udp_len;
	buf[62] = FRAME_OP_RC_SEND_ONLY;
	buf[63] = 0;
	buf[64] = 0xff;
	buf[65] = 0xff;
	buf[67] = (uint8_t)(qpn >> 16);
	buf[68] = (uint8_t)(qpn >> 8);
	buf[69] = (uint8_t)qpn;
	return n;
}

static const uint8_t v6_dst[16] = { 0xfd, [15] = 2 };

/* Run the program over one frame with skb->tstamp = @ts: TC_ACT_OK, the bytes unchanged;
 * the departure time it leaves with. A RoCEv2 @frame is made the flow's next first (its
 * PSN one up: tc_run_next_psn), as a sender's frames are. */
static uint64_t run(uint8_t *frame, size_t len, uint64_t ts)
{
	tc_run_next_psn(frame, len);
	return tc_run(qp_tc_prog_fd(tc), frame, len, ts, NULL, 0);
}

static void counters(uint64_t c[QP_TC_C_COUNT])
{
	assert_int_equal(qp_tc_counters(tc, c), 0);
}

static void set_mode(unsigned mode, uint64_t gap, uint64_t retry, uint64_t horizon)
{
	struct qp_tc_conf c = qp_tc_conf_default();

	c.mode = mode;
	c.report_gap_ns = gap;
	c.report_retry_ns = retry;
	c.horizon_ns = horizon;
	qp_tc_set_conf(tc, &c);
}

static void set_rate(const struct qp_tc_key *k, uint64_t bps)
{
	struct qp_tc_rate r = { .rate_bps = bps, .flags = QP_TC_F_PACE };

	assert_int_equal(qp_tc_set_rate(tc, k, &r), 0);
}

/* A backlogged flow at each rate: frame k leaves at T0 + floor(bits before it x 1e9 /
 * rate) exactly, so the rate over the run is the set one within 1%; counters exact. */
static void test_departures(void **state)
{
	static const uint64_t rates[] = { 1000000ull, 5000000ull, 20000000ull, 1000000000ull,
					  25000000000ull, 100000000000ull };
	uint8_t f[2048];
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		struct qp_tc_key k = qp_tc_key_ipv4(0x0a000100u + (uint32_t)r, 0x1000 + (uint32_t)r);
		uint64_t t0 = tc_run_mono_ns() + 100000000000ull;  /* 100 s ahead: "now" never passes */
		uint64_t bits = 0, bytes = 0, first = 0, last = 0;
		const int n = 200;
		struct qp_tc_state st;

		set_rate(&k, rates[r]);
		counters(before);
		for (int i = 0; i < n; i++) {
			int len = roce4(f, sizeof(f), 0x0a000100u + (uint32_t)r, 0x1000 + (uint32_t)r,
					(size_t)(64 + (i * 37) % 1024));
			uint64_t want = t0 + (uint64_t)((unsigned __int128)bits * 1000000000u /
							rates[r]);
			uint64_t got = run(f, (size_t)len, t0);

			assert_int_equal(got, want);
			if (i == 0)
				first = got;
			if (i < n - 1)
				bits += (uint64_t)len * 8;
			last = got;
			bytes += (uint64_t)len;
		}
		{
			double measured = (double)bits * 1e9 / (double)(last - first);
			double err = measured / (double)rates[r] - 1;

			printf("  rate %llu bit/s: departures give %.0f bit/s (%+.4f%%)\n",
			       (unsigned long long)rates[r], measured, err * 100);
			assert_true(err < 0.01 && err > -0.01);
		}
		counters(after);
		assert_int_equal(after[QP_TC_C_ROCE] - before[QP_TC_C_ROCE], n);
		assert_int_equal(after[QP_TC_C_PACED] - before[QP_TC_C_PACED], n - 1);
		assert_int_equal(after[QP_TC_C_UNKNOWN] - before[QP_TC_C_UNKNOWN], 0);
		assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
		assert_int_equal(st.pkts, n);
		assert_int_equal(st.bytes, bytes);
		assert_int_equal(st.paced, n - 1);
		assert_int_equal(st.sport, host_a.port);
		assert_int_equal(qp_tc_del_rate(tc, &k), 0);
	}
}

/* A READ request costs its flow the length its RETH asks for (the data converging on this
 * host), not its 74 bytes: at 100 Mb/s a 64 KiB READ holds the next request back 5.2 ms,
 * exactly; a READ asking for less than its own bytes, and any other frame, costs its own. */
static void test_read_charged(void **state)
{
	static const uint32_t asks[] = { 65536, 1024, 0, 1 << 20 };
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000131u, 0x1313);
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull, prev, before[QP_TC_C_COUNT],
		 after[QP_TC_C_COUNT];
	uint8_t f[256];

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	set_rate(&k, 100000000ull);
	counters(before);
	prev = run(f, (size_t)roce4(f, sizeof(f), 0x0a000131u, 0x1313, 0), t0);
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		struct frame_roce_spec sp = {
			.src = tc_host_a, .dst = tc_host_b,
			/* PSNs ahead of each other: one not ahead is a resend, paced apart */
			.bth = { .opcode = FRAME_OP_RC_READ_REQUEST, .dest_qp = 0x1313,
				 .psn = 0x400000 + 300 * (uint32_t)i },
			.reth = { .va = 0x1000, .rkey = 7, .dma_len = asks[i] },
		};
		int n, len0 = i ? 0 : roce4(f, sizeof(f), 0x0a000131u, 0x1313, 0);
		uint64_t got, prev_cost;

		sp.dst.ip = 0x0a000131u;
		n = frame_build_roce(f, sizeof(f), &sp);
		assert_true(n > 0);
		got = run(f, (size_t)n, t0);
		/* this request leaves when the one before has been paid for */
		prev_cost = i == 0 ? (uint64_t)len0
			   : asks[i - 1] > (uint64_t)n ? asks[i - 1] : (uint64_t)n;
		assert_int_equal(got - prev, prev_cost * 8 * 1000000000ull / 100000000ull);
		prev = got;
	}
	counters(after);
	assert_int_equal(after[QP_TC_C_READ_CHARGED] - before[QP_TC_C_READ_CHARGED], 4);
	assert_int_equal(qp_tc_del_rate(tc, &k), 0);
}

/* Two flows interleaved keep their own schedules; a frame that already has a later
 * departure time than the flow needs keeps it; an idle flow starts afresh. */
static void test_flows_independent(void **state)
{
	uint8_t f[2048];
	struct qp_tc_key a = qp_tc_key_ipv4(0x0a000201u, 7), b = qp_tc_key_ipv4(0x0a000202u, 7);
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;
	int la, lb;

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	set_rate(&a, 8000000000ull);     /* 1 byte per ns */
	set_rate(&b, 800000000ull);      /* 0.1 byte per ns */
	la = roce4(f, sizeof(f), 0x0a000201u, 7, 1000);
	lb = la;
	assert_int_equal(run(f, (size_t)la, t0), t0);
	assert_int_equal(run(f, (size_t)la, t0), t0 + (uint64_t)la);
	roce4(f, sizeof(f), 0x0a000202u, 7, 1000);
	assert_int_equal(run(f, (size_t)lb, t0), t0);
	assert_int_equal(run(f, (size_t)lb, t0), t0 + (uint64_t)lb * 10);
	roce4(f, sizeof(f), 0x0a000201u, 7, 1000);
	assert_int_equal(run(f, (size_t)la, t0), t0 + 2 * (uint64_t)la);
	/* The frame's own time is later than the flow's next: it keeps it (idle restart). */
	assert_int_equal(run(f, (size_t)la, t0 + 1000000), t0 + 1000000);
	assert_int_equal(run(f, (size_t)la, t0 + 1000000), t0 + 1000000 + (uint64_t)la);
	qp_tc_del_rate(tc, &a);
	qp_tc_del_rate(tc, &b);
}

/* No past credit: when the clock passed a flow's next departure (the host held a TCG guest
 * up, docs/enforce.md), the next frame leaves now and the one after it one interval later,
 * not both now (as sch_fq's time_next_packet). No timestamps: "now" is bpf_ktime_get_ns(). */
static void test_no_past_credit(void **state)
{
	uint8_t f[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000203u, 9);
	struct timespec stall = { 0, 50 * 1000000L };
	int len = roce4(f, sizeof(f), 0x0a000203u, 9, 1024);
	uint64_t iv = (uint64_t)len * 8u * 1000u, t, d1, d4;   /* at 1 Mb/s: 8.656 ms */

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	set_rate(&k, 1000000ull);
	t = tc_run_mono_ns();
	assert_int_equal(run(f, (size_t)len, 0), 0);            /* idle: leaves at once */
	d1 = run(f, (size_t)len, 0);
	assert_true(d1 >= t + iv && d1 <= tc_run_mono_ns() + iv);
	nanosleep(&stall, NULL);
	t = tc_run_mono_ns();
	assert_true(t > d1 + 4 * iv);                           /* 4 intervals overdue */
	assert_int_equal(run(f, (size_t)len, 0), 0);            /* now, unstamped */
	d4 = run(f, (size_t)len, 0);
	printf("  %.1f ms after its next departure: the next frames at +0, +%.3f ms\n",
	       (double)(t - d1) / 1e6, (double)(d4 - t) / 1e6);
	assert_true(d4 >= t + iv && d4 <= tc_run_mono_ns() + iv);
	assert_int_equal(run(f, (size_t)len, 0), d4 + iv);
	qp_tc_del_rate(tc, &k);
}

/* IPv6 RoCEv2 is a flow like IPv4's, keyed by the 16-byte destination. */
static void test_ipv6_roce(void **state)
{
	uint8_t f[2048];
	struct qp_tc_key k = qp_tc_key_ipv6(v6_dst, 0x77);
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;
	size_t n = ipv6_frame(f, 17, 4791, 0x77, 12 + 500 + 4);
	struct qp_tc_state st;

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	set_rate(&k, 8000000000ull);
	assert_int_equal(run(f, n, t0), t0);
	assert_int_equal(run(f, n, t0), t0 + n);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.pkts, 2);
	assert_int_equal(st.ipv6, 1);
	assert_int_equal(st.saddr[0], 0xfd);
	qp_tc_del_rate(tc, &k);
}

struct reports { int n; struct qp_tc_report last; };

static void on_report(void *ctx, const struct qp_tc_report *r)
{
	struct reports *rs = ctx;

	rs->n++;
	rs->last = *r;
}

/* An unknown flow: passed untouched, counted, reported once (not per frame); the next new
 * flow inside the global gap is held back and counted. */
static void test_unknown_reported_once(void **state)
{
	uint8_t f[2048];
	struct reports rs = { 0 };
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;
	uint32_t ip;
	int len;

	(void)state;
	NEED_BPF();
	qp_tc_reports_take(tc, on_report, &rs);   /* drain what earlier tests left */
	rs.n = 0;
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000000ull, 0);
	counters(before);
	len = roce4(f, sizeof(f), 0x0a000301u, 0xabcdef, 256);
	for (int i = 0; i < 50; i++)
		assert_int_equal(run(f, (size_t)len, t0), t0);
	assert_int_equal(qp_tc_reports_take(tc, on_report, &rs), 1);
	assert_int_equal(rs.n, 1);
	assert_int_equal(rs.last.key.dqpn, 0xabcdef);
	assert_true(qp_tc_addr_ipv4(rs.last.key.daddr, &ip));
	assert_int_equal(ip, 0x0a000301u);
	assert_true(qp_tc_addr_ipv4(rs.last.saddr, &ip));
	assert_int_equal(ip, host_a.ip);
	assert_int_equal(rs.last.sport, host_a.port);
	assert_int_equal(rs.last.opcode, FRAME_OP_RC_SEND_ONLY);
	assert_int_equal(rs.last.len, (uint32_t)len);
	counters(after);
	assert_int_equal(after[QP_TC_C_UNKNOWN] - before[QP_TC_C_UNKNOWN], 50);
	assert_int_equal(after[QP_TC_C_REPORTS] - before[QP_TC_C_REPORTS], 1);

	/* A 1000 s gap between any two reports: the next new flow waits, and is counted. */
	set_mode(QP_TC_MODE_ENFORCE, 1000000000000ull, 1000000000000ull, 0);
	len = roce4(f, sizeof(f), 0x0a000302u, 0x42, 256);
	assert_int_equal(run(f, (size_t)len, t0), t0);
	assert_int_equal(run(f, (size_t)len, t0), t0);
	assert_int_equal(qp_tc_reports_take(tc, on_report, &rs), 0);
	counters(before);
	assert_int_equal(before[QP_TC_C_REPORT_LIMITED] - after[QP_TC_C_REPORT_LIMITED], 2);
	assert_int_equal(before[QP_TC_C_REPORTS], after[QP_TC_C_REPORTS]);
}

/* An IPv6 flow as qpaced finds it: unknown, it is reported once with its family and
 * 16-byte addresses (not IPv4-mapped: qpaced makes it an IPv6 QP); given the rate entry
 * qpaced then writes, its frames are paced at that rate; counted throughout. */
static void test_ipv6_discovered(void **state)
{
	uint8_t f[2048];
	struct reports rs = { 0 };
	struct qp_tc_key k = qp_tc_key_ipv6(v6_dst, 0x79);
	struct qp_tc_state st;
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;
	size_t n = ipv6_frame(f, 17, 4791, 0x79, 12 + 1000 + 4);
	uint32_t ip;

	(void)state;
	NEED_BPF();
	qp_tc_reports_take(tc, on_report, &rs);   /* drain what earlier tests left */
	rs.n = 0;
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000000ull, 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(run(f, n, t0), t0);   /* no entry, start 0: unpaced */
	assert_int_equal(qp_tc_reports_take(tc, on_report, &rs), 1);
	assert_int_equal(rs.last.ipv6, 1);
	assert_memory_equal(rs.last.key.daddr, v6_dst, 16);
	assert_int_equal(rs.last.key.dqpn, 0x79);
	assert_int_equal(rs.last.saddr[0], 0xfd);
	assert_int_equal(rs.last.saddr[15], 1);
	assert_false(qp_tc_addr_ipv4(rs.last.key.daddr, &ip));
	set_rate(&k, 800000000ull);                /* 10 ns per byte */
	assert_int_equal(run(f, n, t0), t0);
	assert_int_equal(run(f, n, t0), t0 + n * 10);
	assert_int_equal(run(f, n, t0), t0 + 2 * n * 10);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.pkts, 13);
	assert_int_equal(st.bytes, 13 * n);
	assert_int_equal(st.ipv6, 1);
	qp_tc_del_rate(tc, &k);
}

/* observe: rates are set but no frame gets a departure time; the flow is still counted. */
static void test_observe(void **state)
{
	uint8_t f[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000401u, 9);
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;
	struct qp_tc_state st;
	int len = roce4(f, sizeof(f), 0x0a000401u, 9, 1000);

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_OBSERVE, 0, 1000000000ull, 0);
	set_rate(&k, 1000000ull);
	for (int i = 0; i < 10; i++)
		assert_int_equal(run(f, (size_t)len, t0), t0);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.pkts, 10);
	assert_int_equal(st.bytes, 10 * (uint64_t)len);
	assert_int_equal(st.paced, 0);
	qp_tc_del_rate(tc, &k);
}

/* A departure further than the horizon from now is counted (fq caps it; nothing drops). */
static void test_horizon(void **state)
{
	uint8_t f[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000501u, 11);
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	int len = roce4(f, sizeof(f), 0x0a000501u, 11, 1000);

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 1000000ull);   /* 1 ms */
	set_rate(&k, 1000000ull);   /* ~8.3 ms per frame */
	counters(before);
	run(f, (size_t)len, 0);     /* leaves now */
	assert_true(run(f, (size_t)len, 0) > tc_run_mono_ns() + 1000000ull);
	counters(after);
	assert_int_equal(after[QP_TC_C_HORIZON] - before[QP_TC_C_HORIZON], 1);
	qp_tc_del_rate(tc, &k);
}

/* Run the program over one frame (timestamp 0) and return the bytes it leaves with in
 * @out (the length must not change). */
static void run_out(const uint8_t *frame, size_t len, uint8_t *out, size_t cap)
{
	tc_run(qp_tc_prog_fd(tc), frame, len, 0, out, cap);
}

static void set_ecn_mark(unsigned on)
{
	struct qp_tc_conf c = qp_tc_conf_default();

	c.mode = QP_TC_MODE_OBSERVE;   /* marking is independent of pacing */
	c.report_gap_ns = 0;
	c.ecn_mark = on;
	qp_tc_set_conf(tc, &c);
}

static uint64_t marked_count(void)
{
	uint64_t c[QP_TC_C_COUNT];

	counters(c);
	return c[QP_TC_C_ECT_MARKED];
}

/* conf.ecn_mark: IPv4 RoCEv2 frames with ECN 00 leave as ECT(0) with the DSCP kept, a right
 * header checksum and (the ICRC masks TOS) the same, still right ICRC, every other byte as
 * sent; ECT(0), ECT(1) and CE frames and non-RoCE UDP are not touched; IPv6's traffic class
 * gets ECT(0) the same way, the rest of the frame unchanged. */
static void test_ecn_mark(void **state)
{
	static const uint8_t tos_marked[] = { 0x00, 0x68, 0xb8, 0xfc };  /* DSCP 0, 26, 46, 63 */
	static const uint8_t tos_kept[] = { 0x01, 0x02, 0x03, 0x6b, 0xfe };
	uint8_t f[2048], out[2048];
	struct frame_parsed p;

	(void)state;
	NEED_BPF();
	set_ecn_mark(1);
	for (size_t i = 0; i < sizeof(tos_marked); i++) {
		struct frame_roce_spec s = {
			.src = host_a, .dst = host_b, .ip = { .tos = tos_marked[i], .id = (uint16_t)(0x1234 * i) },
			.bth = { .opcode = FRAME_OP_RC_WRITE_ONLY, .dest_qp = 0x4242, .psn = 7 },
			.reth = { .va = 0x1000, .rkey = 5, .dma_len = 333 }, .payload_len = 333,
		};
		int n = frame_build_roce(f, sizeof(f), &s);
		uint64_t m0 = marked_count();

		assert_true(n > 0);
		run_out(f, (size_t)n, out, sizeof(out));
		assert_int_equal(marked_count() - m0, 1);
		assert_int_equal(out[15], tos_marked[i] | FRAME_ECN_ECT0);
		assert_int_equal(frame_ipv4_csum(out + 14, 20), 0);       /* checksum right */
		assert_int_equal(frame_parse(&p, out, (size_t)n), 0);
		assert_int_equal(p.ip.tos & 3, FRAME_ECN_ECT0);
		assert_true(frame_icrc_ok(out, &p));                      /* the ICRC still holds */
		assert_memory_equal(out, f, 15);
		assert_memory_equal(out + 16, f + 16, 8);                  /* up to the checksum */
		assert_memory_equal(out + 26, f + 26, (size_t)n - 26);     /* after it */
		printf("  TOS 0x%02x -> 0x%02x, IPv4 checksum 0x%02x%02x -> 0x%02x%02x, ICRC 0x%08x"
		       " right\n", f[15], out[15], f[24], f[25], out[24], out[25], p.icrc);
	}
	for (size_t i = 0; i < sizeof(tos_kept); i++) {
		struct frame_roce_spec s = {
			.src = host_a, .dst = host_b, .ip = { .tos = tos_kept[i] },
			.bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .dest_qp = 0x4242, .psn = 8 },
			.payload_len = 100,
		};
		int n = frame_build_roce(f, sizeof(f), &s);
		uint64_t m0 = marked_count();

		run_out(f, (size_t)n, out, sizeof(out));
		assert_memory_equal(out, f, (size_t)n);
		assert_int_equal(marked_count(), m0);
	}
	{	/* UDP to another port with ECN 00: not RoCE, not marked */
		struct frame_addr dst = host_b;
		uint8_t payload[40] = { 1 };
		int n;
		uint64_t m0 = marked_count();

		dst.port = 4790;
		n = frame_build_udp(f, sizeof(f), &host_a, &dst, NULL, payload, sizeof(payload));
		run_out(f, (size_t)n, out, sizeof(out));
		assert_memory_equal(out, f, (size_t)n);
		assert_int_equal(marked_count(), m0);
	}
	{	/* IPv6: traffic class 0x68 (DSCP 26) -> 0x6a; CE (0x6b) stays */
		size_t n = ipv6_frame(f, 17, 4791, 0x77, 12 + 200 + 4);
		uint64_t m0 = marked_count();

		f[14] = 0x66;   /* version 6, TC high nibble 6 */
		f[15] = 0x80;   /* TC low nibble 8, flow label 0 */
		run_out(f, n, out, sizeof(out));
		assert_int_equal(marked_count() - m0, 1);
		assert_int_equal(out[14], 0x66);
		assert_int_equal(out[15], 0xa0);
		assert_memory_equal(out + 16, f + 16, n - 16);
		f[15] = 0xb0;
		run_out(f, n, out, sizeof(out));
		assert_memory_equal(out, f, n);
		assert_int_equal(marked_count() - m0, 1);
	}
	/* ecn_mark off: the same Not-ECT frame leaves as it came. */
	set_ecn_mark(0);
	{
		int n = roce4(f, sizeof(f), host_b.ip, 0x4242, 100);
		uint64_t m0 = marked_count();

		run_out(f, (size_t)n, out, sizeof(out));
		assert_memory_equal(out, f, (size_t)n);
		assert_int_equal(marked_count(), m0);
	}
}

static void set_alive(uint64_t beat, uint64_t hold, uint64_t safe)
{
	struct qp_tc_alive a = { .beat_ns = beat, .hold_ns = hold, .safe_bps = safe };
	struct qp_tc_alive got;

	assert_int_equal(qp_tc_alive_set(tc, &a), 0);
	assert_int_equal(qp_tc_alive_get(tc, &got), 0);
	assert_int_equal(got.beat_ns, beat);
}

/* Two frames of the flow to @dst QPN @qpn at t0: the second leaves @gap_bytes_ns after the
 * first, in ns per byte (8e9 b/s = 1, 8e8 = 10, 0 = not paced). */
static void two_frames(uint32_t dst, uint32_t qpn, uint64_t t0, uint64_t ns_per_byte,
		       const char *what)
{
	uint8_t f[2048];
	int len = roce4(f, sizeof(f), dst, qpn, 1000);
	uint64_t a = run(f, (size_t)len, t0), b = run(f, (size_t)len, t0);

	if (a != t0 || b != t0 + (uint64_t)len * ns_per_byte)
		fail_msg("%s: departures %+lld and %+lld ns from t0, want 0 and %llu", what,
			 (long long)(a - t0), (long long)(b - t0),
			 (unsigned long long)((uint64_t)len * ns_per_byte));
}

/* Safe failure: qpaced's heartbeat fresh -> each flow at its rate; older than the hold ->
 * min(its rate, the safe rate), and a flow with no entry at the safe rate; flows that are
 * only counted, observe mode and a heartbeat never written stay as they were. */
static void test_heartbeat(void **state)
{
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull, now = tc_run_mono_ns();
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	struct qp_tc_key fast = qp_tc_key_ipv4(0x0a000601u, 1), fast2 = qp_tc_key_ipv4(0x0a000602u, 1);
	struct qp_tc_key slow = qp_tc_key_ipv4(0x0a000603u, 1), counted = qp_tc_key_ipv4(0x0a000605u, 1);
	struct qp_tc_rate count_only = { 0 };

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	set_rate(&fast, 8000000000ull);                    /* 1 ns per byte */
	set_rate(&fast2, 8000000000ull);
	set_rate(&slow, 800000000ull);                     /* 10 ns per byte */
	assert_int_equal(qp_tc_set_rate(tc, &counted, &count_only), 0);

	counters(before);
	set_alive(now, 1000000000ull, 800000000ull);       /* beat just now, hold 1 s */
	two_frames(0x0a000601u, 1, t0, 1, "fresh heartbeat, flow at 8G");
	counters(after);
	assert_int_equal(after[QP_TC_C_STALE], before[QP_TC_C_STALE]);

	set_alive(now - 2000000000ull, 1000000000ull, 800000000ull);  /* 2 s old: stale */
	two_frames(0x0a000602u, 1, t0, 10, "stale, flow at 8G, safe 800M: the safe rate");
	two_frames(0x0a000604u, 1, t0, 10, "stale, a flow with no entry: the safe rate");
	two_frames(0x0a000605u, 1, t0, 0, "stale, a count-only entry: untouched");
	counters(before);
	assert_int_equal(before[QP_TC_C_STALE] - after[QP_TC_C_STALE], 4);

	set_alive(now - 2000000000ull, 1000000000ull, 80000000000ull);   /* safe 80G */
	two_frames(0x0a000603u, 1, t0 + 1000000, 10, "stale, flow at 800M, safe 80G: its own");
	set_alive(0, 1000000000ull, 800000000ull);                      /* never beat */
	two_frames(0x0a000601u, 1, t0 + 2000000, 1, "no heartbeat ever: its rate");
	set_mode(QP_TC_MODE_OBSERVE, 0, 1000000000ull, 0);
	set_alive(now - 2000000000ull, 1000000000ull, 800000000ull);
	two_frames(0x0a000606u, 1, t0, 0, "observe, stale: untouched");

	set_alive(0, 0, 0);
	qp_tc_del_rate(tc, &fast);
	qp_tc_del_rate(tc, &fast2);
	qp_tc_del_rate(tc, &slow);
	qp_tc_del_rate(tc, &counted);
}

/* conf.start_bps: in enforce mode a flow with no entry, IPv4 or IPv6, is paced at it from
 * its first frame; its ACKs, observe mode, a count-only entry and start 0 stay as they
 * were, and each frame paced so counts once. */
static void test_start_rate(void **state)
{
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull, before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	struct qp_tc_key counted = qp_tc_key_ipv4(0x0a000703u, 1);
	struct qp_tc_rate count_only = { 0 };
	struct qp_tc_conf c = qp_tc_conf_default();
	uint8_t f[2048];
	size_t n;

	(void)state;
	NEED_BPF();
	c.mode = QP_TC_MODE_ENFORCE;
	c.start_bps = 800000000ull;                        /* 10 ns per byte */
	qp_tc_set_conf(tc, &c);
	assert_int_equal(qp_tc_set_rate(tc, &counted, &count_only), 0);
	counters(before);
	two_frames(0x0a000701u, 1, t0, 10, "no entry yet: the start rate");
	two_frames(0x0a000703u, 1, t0, 0, "a count-only entry: untouched");
	n = (size_t)roce4(f, sizeof(f), 0x0a000702u, 1, 0);
	f[42] = FRAME_OP_RC_ACK;                           /* the BTH opcode */
	assert_int_equal(run(f, n, t0), t0);
	assert_int_equal(run(f, n, t0), t0);
	n = ipv6_frame(f, 17, 4791, 0x78, 12 + 500 + 4);   /* IPv6: paced as IPv4 is */
	assert_int_equal(run(f, n, t0), t0);
	assert_int_equal(run(f, n, t0), t0 + n * 10);
	counters(after);
	assert_int_equal(after[QP_TC_C_START] - before[QP_TC_C_START], 4);
	/* The flow paced at the start rate, then qpaced's first (count-only) entry: its next
	 * frames leave no earlier than the last start-paced one's successor slot, in order,
	 * not at once ahead of the frames fq still holds. */
	{
		struct qp_tc_key k = qp_tc_key_ipv4(0x0a000701u, 1);
		int len = roce4(f, sizeof(f), 0x0a000701u, 1, 1000);
		uint64_t next = t0 + 2 * (uint64_t)len * 10;   /* after two_frames' two */

		assert_int_equal(qp_tc_set_rate(tc, &k, &count_only), 0);
		assert_int_equal(run(f, (size_t)len, t0), next);
		assert_int_equal(run(f, (size_t)len, t0), next);
		assert_int_equal(run(f, (size_t)len, next + 5), next + 5);
		qp_tc_del_rate(tc, &k);
	}
	c.mode = QP_TC_MODE_OBSERVE;
	qp_tc_set_conf(tc, &c);
	two_frames(0x0a000704u, 1, t0, 0, "observe: untouched");
	c.mode = QP_TC_MODE_ENFORCE;
	c.start_bps = 0;
	qp_tc_set_conf(tc, &c);
	two_frames(0x0a000705u, 1, t0, 0, "start 0: unpaced");
	counters(before);
	assert_int_equal(before[QP_TC_C_START], after[QP_TC_C_START]);
	qp_tc_del_rate(tc, &counted);
}

/* Every frame that is not RoCEv2: bytes and timestamp unchanged, one count of its reason.
 * BPF_PROG_TEST_RUN itself refuses (EINVAL) a frame shorter than an Ethernet header, or an
 * IPv4/IPv6 ethertype with less than a fixed IP header behind it, so those cut-short
 * cases are made one layer further in (an IPv4 header with options cut, a cut UDP header
 * behind IPv6); the program's checks for them run all the same on a real device. */
static void test_not_roce_passes(void **state)
{
	struct { const char *what; unsigned reason; } cases[] = {
		{ "802.1Q tagged RoCE", QP_TC_C_PASS_VLAN },
		{ "802.1ad tagged", QP_TC_C_PASS_VLAN },
		{ "ARP", QP_TC_C_PASS_NOT_IP },
		{ "IPv4 header with options cut", QP_TC_C_PASS_SHORT_IP },
		{ "IPv4 total length past the frame", QP_TC_C_PASS_SHORT_IP },
		{ "IPv4 version 5", QP_TC_C_PASS_BAD_IP },
		{ "IPv4 IHL 4", QP_TC_C_PASS_BAD_IP },
		{ "IPv4 first fragment (MF)", QP_TC_C_PASS_FRAGMENT },
		{ "IPv4 later fragment", QP_TC_C_PASS_FRAGMENT },
		{ "IPv4 TCP", QP_TC_C_PASS_NOT_UDP },
		{ "UDP header cut", QP_TC_C_PASS_SHORT_UDP },
		{ "UDP length past IP", QP_TC_C_PASS_SHORT_UDP },
		{ "UDP to 4792", QP_TC_C_PASS_NOT_ROCE },
		{ "UDP 4791 with a cut BTH", QP_TC_C_PASS_SHORT_BTH },
		{ "IPv6 UDP header cut", QP_TC_C_PASS_SHORT_UDP },
		{ "IPv6 UDP to 53", QP_TC_C_PASS_NOT_ROCE },
		{ "IPv6 hop-by-hop header", QP_TC_C_PASS_FRAGMENT },
		{ "IPv6 fragment header", QP_TC_C_PASS_FRAGMENT },
		{ "IPv6 TCP", QP_TC_C_PASS_NOT_UDP },
		{ "IPv6 version 4", QP_TC_C_PASS_BAD_IP },
		{ "IPv6 payload length past the frame", QP_TC_C_PASS_SHORT_IP },
		{ "IPv6 UDP 4791 with a cut BTH", QP_TC_C_PASS_SHORT_BTH },
	};
	uint8_t f[2048];
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull;

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE, 0, 1000000000ull, 0);
	/* A rate for the flow the mangled frames name: nothing may be paced all the same. */
	struct qp_tc_key k = qp_tc_key_ipv4(host_b.ip, 0x1234);
	set_rate(&k, 1000000ull);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
		size_t n = (size_t)roce4(f, sizeof(f), host_b.ip, 0x1234, 100);
		struct frame_addr src = host_a, dst = host_b;
		uint8_t udp_payload[8] = { 0 };

		switch (i) {
		case 0: case 1:
			memmove(f + 16, f + 12, n - 12);
			f[12] = i == 0 ? 0x81 : 0x88;
			f[13] = i == 0 ? 0x00 : 0xa8;
			f[14] = 0;
			f[15] = 100;
			n += 4;
			break;
		case 2:
			n = (size_t)frame_build_arp(f, sizeof(f), FRAME_ARP_REQUEST, host_a.mac,
						    host_a.ip, host_b.mac, host_b.ip);
			break;
		case 3: f[14] = 0x4f; f[16] = 0; f[17] = 60; n = 14 + 26; break;
		case 4: f[16] = 0x0f; f[17] = 0xff; break;
		case 5: f[14] = 0x55; break;
		case 6: f[14] = 0x44; break;
		case 7: f[20] |= 0x20; break;
		case 8: f[20] = 0; f[21] = 0x10; break;
		case 9: f[23] = 6; break;
		case 10: f[16] = 0; f[17] = 24; n = 14 + 24; break;
		case 11: f[38] = 0x0f; f[39] = 0xff; break;
		case 12:
			dst.port = 4792;
			n = (size_t)frame_build_udp(f, sizeof(f), &src, &dst, NULL, udp_payload, 8);
			break;
		case 13:
			dst.port = 4791;
			n = (size_t)frame_build_udp(f, sizeof(f), &src, &dst, NULL, udp_payload, 8);
			break;
		case 14: ipv6_frame(f, 17, 4791, 0x1234, 100); f[18] = 0; f[19] = 4; n = 14 + 44; break;
		case 15: n = ipv6_frame(f, 17, 53, 0x1234, 100); break;
		case 16: n = ipv6_frame(f, 0, 4791, 0x1234, 100); break;
		case 17: n = ipv6_frame(f, 44, 4791, 0x1234, 100); break;
		case 18: n = ipv6_frame(f, 6, 4791, 0x1234, 100); break;
		case 19: n = ipv6_frame(f, 17, 4791, 0x1234, 100); f[14] = 0x40; break;
		case 20: n = ipv6_frame(f, 17, 4791, 0x1234, 100); f[18] = 0x10; break;
		case 21: n = ipv6_frame(f, 17, 4791, 0x1234, 12); f[58] = 0; f[59] = 8 + 8; break;
		}
		counters(before);
		if (run(f, n, t0) != t0)
			fail_msg("%s: departure time changed", cases[i].what);
		counters(after);
		for (unsigned c = 0; c < QP_TC_C_COUNT; c++) {
			uint64_t want = c == cases[i].reason;
			if (after[c] - before[c] != want)
				fail_msg("%s: counter %s moved by %llu, want %llu", cases[i].what,
					 qp_tc_counter_name(c),
					 (unsigned long long)(after[c] - before[c]),
					 (unsigned long long)want);
		}
	}
	qp_tc_del_rate(tc, &k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_departures),
		cmocka_unit_test(test_read_charged),
		cmocka_unit_test(test_flows_independent),
		cmocka_unit_test(test_no_past_credit),
		cmocka_unit_test(test_ipv6_roce),
		cmocka_unit_test(test_unknown_reported_once),
		cmocka_unit_test(test_ipv6_discovered),
		cmocka_unit_test(test_observe),
		cmocka_unit_test(test_horizon),
		cmocka_unit_test(test_ecn_mark),
		cmocka_unit_test(test_not_roce_passes),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_start_rate),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
