/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The tc ingress BPF program, loaded and run with BPF_PROG_TEST_RUN over crafted frames:
 * a CE-marked RoCEv2 data frame is reported once with its source address and destination
 * QPN, then at most once per QP per 50 us (the report times are checked over a 20 ms
 * burst), each QP with its own limit; CE on ACKs, ECT and Not-ECT data owe nothing; every
 * arriving CNP is reported; IPv6 like IPv4; every frame comes back byte for byte with
 * TC_ACT_OK, and frames that are not RoCEv2 are counted as passed. Skips, with the
 * kernel's reason, only when BPF itself is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "qpace/frame.h"
#include "tc_run.h"

static struct qp_tci *tci;

static int setup(void **state)
{
	char why[300];

	(void)state;
	return tc_run_opened("test_tc_ingress", qp_tci_open(&tci, why, sizeof(why)), why);
}

static int teardown(void **state)
{
	(void)state;
	qp_tci_close(tci);
	return 0;
}

#define NEED_BPF() do { if (!tci) skip(); } while (0)


/* The peer (sender of what arrives) and this host. */
static const struct frame_addr peer = { { 2, 0, 0, 0, 0, 7 }, 0x0a000007, 50000 };
static const struct frame_addr self = { { 2, 0, 0, 0, 0, 9 }, 0x0a000009, 0 };

static int frame(uint8_t *buf, uint8_t opcode, uint8_t tos, uint32_t qpn)
{
	struct frame_roce_spec s = {
		.src = peer, .dst = self, .ip = { .tos = tos },
		.bth = { .opcode = opcode, .dest_qp = qpn, .psn = 3, .becn = opcode == FRAME_OP_CNP },
		.payload_len = 200,
	};
	int n = frame_build_roce(buf, 2048, &s);

	assert_true(n > 0);
	return n;
}

/* The same UDP/BTH behind an IPv6 header (fd00::7 -> fd00::9, traffic class @tc). */
static size_t frame6(uint8_t *buf, uint8_t tc, uint32_t qpn)
{
	uint8_t v4[2048];
	int n = frame(v4, FRAME_OP_RC_SEND_ONLY, 0, qpn);
	size_t udp_len = (size_t)n - 14 - 20;
	uint8_t ip6[40] = { 0x60 | tc >> 4, (uint8_t)(tc << 4), 0, 0,
			    (uint8_t)(udp_len >> 8), (uint8_t)udp_len, FRAME_IPPROTO_UDP, 64,
			    0xfd, [23] = 7, 0xfd, [39] = 9 };

	memcpy(buf, v4, 12);
	buf[12] = 0x86;
	buf[13] = 0xdd;
	memcpy(buf + 14, ip6, sizeof(ip6));
	memcpy(buf + 54, v4 + 34, udp_len);
	return 54 + udp_len;
}

static void run(const uint8_t *f, size_t len)
{
	tc_run(qp_tci_prog_fd(tci), f, len, 0, NULL, 0);
}

struct reports { int n; struct qp_tci_report r[4096]; };
static struct reports rs;

static void on_report(void *ctx, const struct qp_tci_report *r)
{
	struct reports *s = ctx;

	if (s->n < (int)(sizeof(s->r) / sizeof(s->r[0])))
		s->r[s->n] = *r;
	s->n++;
}

static int take(void)
{
	rs.n = 0;
	qp_tci_reports_take(tci, on_report, &rs);
	return rs.n;
}

static void gap(uint64_t ns)
{
	struct qp_tci_conf c = { .ce_gap_ns = ns };

	qp_tci_set_conf(tci, &c);
}

static void counters(uint64_t c[QP_TCI_C_COUNT])
{
	assert_int_equal(qp_tci_counters(tci, c), 0);
}

static uint32_t v4_of(const uint8_t a[16])
{
	uint32_t ip = 0;

	assert_true(qp_tc_addr_ipv4(a, &ip));
	return ip;
}

/* CE on a data frame: one report naming the peer and the local QP; more CE inside the
 * gap counted, not reported; another QP has its own limit; ECT(0), ECT(1), Not-ECT data
 * and CE on an ACK owe no CNP. */
static void test_ce_report(void **state)
{
	uint8_t f[2048];
	uint64_t b[QP_TCI_C_COUNT], a[QP_TCI_C_COUNT];
	struct qp_tci_qp q;
	int n;

	(void)state;
	NEED_BPF();
	take();
	gap(1000000000000ull);   /* 1000 s: nothing after the first report of a QP */
	counters(b);
	n = frame(f, FRAME_OP_RC_WRITE_ONLY, 0x68 | FRAME_ECN_CE, 0x000101);
	for (int i = 0; i < 20; i++)
		run(f, (size_t)n);
	assert_int_equal(take(), 1);
	assert_int_equal(rs.r[0].kind, QP_TCI_K_CE);
	assert_int_equal(rs.r[0].dqpn, 0x000101);
	assert_int_equal(v4_of(rs.r[0].saddr), peer.ip);
	assert_int_equal(v4_of(rs.r[0].daddr), self.ip);
	assert_int_equal(rs.r[0].sport, peer.port);
	assert_int_equal(rs.r[0].ecn, FRAME_ECN_CE);
	assert_int_equal(rs.r[0].opcode, FRAME_OP_RC_WRITE_ONLY);
	assert_int_equal(rs.r[0].len, (uint32_t)n);
	assert_int_equal(rs.r[0].ipv6, 0);

	n = frame(f, FRAME_OP_RC_SEND_FIRST, FRAME_ECN_CE, 0x000102);   /* another QP */
	run(f, (size_t)n);
	assert_int_equal(take(), 1);
	assert_int_equal(rs.r[0].dqpn, 0x000102);

	for (uint8_t tos = 0; tos < 3; tos++) {
		n = frame(f, FRAME_OP_RC_SEND_ONLY, tos, 0x000103);
		run(f, (size_t)n);
	}
	n = frame(f, FRAME_OP_RC_ACK, FRAME_ECN_CE, 0x000103);
	run(f, (size_t)n);
	assert_int_equal(take(), 0);
	counters(a);
	assert_int_equal(a[QP_TCI_C_ROCE] - b[QP_TCI_C_ROCE], 25);
	assert_int_equal(a[QP_TCI_C_CE] - b[QP_TCI_C_CE], 21);
	assert_int_equal(a[QP_TCI_C_CE_REPORTS] - b[QP_TCI_C_CE_REPORTS], 2);
	assert_int_equal(a[QP_TCI_C_CE_LIMITED] - b[QP_TCI_C_CE_LIMITED], 19);
	assert_int_equal(a[QP_TCI_C_CE_NOT_DATA] - b[QP_TCI_C_CE_NOT_DATA], 1);
	assert_int_equal(a[QP_TCI_C_PASS] - b[QP_TCI_C_PASS], 0);
	assert_int_equal(qp_tci_qp(tci, 0x000101, &q), 0);
	assert_int_equal(q.ce, 20);
	assert_int_equal(q.ce_reported, 1);
	assert_int_equal(qp_tci_qp(tci, 0x000103, &q), -ENOENT);
}

/* The default 50 us: a burst of CE frames to one QP for 20 ms gives reports at least
 * 50 us apart, and as many as the burst allows within one report's slack per gap (the
 * kernel runs each frame a few us apart, so about every 50-60 us one). */
static void test_ce_gap(void **state)
{
	uint8_t f[2048];
	struct qp_tci_conf c = qp_tci_conf_default();
	uint64_t t0, t1, frames = 0, min_d = UINT64_MAX;
	int n;

	(void)state;
	NEED_BPF();
	take();
	assert_int_equal(c.ce_gap_ns, 50000);
	qp_tci_set_conf(tci, &c);
	n = frame(f, FRAME_OP_RC_WRITE_MIDDLE, FRAME_ECN_CE, 0x000201);
	t0 = tc_run_mono_ns();
	do {
		run(f, (size_t)n);
		frames++;
		t1 = tc_run_mono_ns();
	} while (t1 - t0 < 20000000ull);
	take();
	assert_true(rs.n <= (int)(sizeof(rs.r) / sizeof(rs.r[0])));
	for (int i = 1; i < rs.n; i++) {
		uint64_t d = rs.r[i].ts_ns - rs.r[i - 1].ts_ns;
		if (d < min_d)
			min_d = d;
		assert_true(d >= 50000);
	}
	printf("  %llu CE frames in %.1f ms: %d reports, the closest two %.1f us apart"
	       " (at most %llu allowed)\n", (unsigned long long)frames, (double)(t1 - t0) / 1e6,
	       rs.n, (double)min_d / 1e3, (unsigned long long)((t1 - t0) / 50000 + 1));
	assert_true((uint64_t)rs.n <= (t1 - t0) / 50000 + 1);
	/* Not stuck after the first: a report at least every 2 ms of a steady burst. */
	assert_true(rs.n >= 10);
}

/* Every CNP is reported (the sender's DCQCN takes each), with the peer and the local QP,
 * even inside the CE gap; BECN set as the builder sends it. */
static void test_cnp_report(void **state)
{
	uint8_t f[2048];
	uint64_t b[QP_TCI_C_COUNT], a[QP_TCI_C_COUNT];
	struct qp_tci_qp q;
	int n;

	(void)state;
	NEED_BPF();
	take();
	gap(1000000000000ull);
	counters(b);
	n = frame(f, FRAME_OP_CNP, 0, 0x000301);
	for (int i = 0; i < 3; i++)
		run(f, (size_t)n);
	n = frame(f, FRAME_OP_CNP, FRAME_ECN_CE, 0x000301);   /* a CNP marked CE: still a CNP */
	run(f, (size_t)n);
	assert_int_equal(take(), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rs.r[i].kind, QP_TCI_K_CNP);
		assert_int_equal(rs.r[i].dqpn, 0x000301);
		assert_int_equal(rs.r[i].opcode, FRAME_OP_CNP);
		assert_int_equal(v4_of(rs.r[i].saddr), peer.ip);
	}
	counters(a);
	assert_int_equal(a[QP_TCI_C_CNP] - b[QP_TCI_C_CNP], 4);
	assert_int_equal(a[QP_TCI_C_CNP_REPORTS] - b[QP_TCI_C_CNP_REPORTS], 4);
	assert_int_equal(a[QP_TCI_C_CE_NOT_DATA] - b[QP_TCI_C_CE_NOT_DATA], 1);
	assert_int_equal(a[QP_TCI_C_CE] - b[QP_TCI_C_CE], 0);
	assert_int_equal(qp_tci_qp(tci, 0x000301, &q), 0);
	assert_int_equal(q.cnp, 4);
	assert_int_equal(q.ce, 0);
}

/* IPv6: CE in the traffic class reported with the 16-byte source; ECT(0) not. */
static void test_ipv6(void **state)
{
	uint8_t f[2048];
	size_t n;

	(void)state;
	NEED_BPF();
	take();
	gap(1000000000000ull);
	n = frame6(f, 0x68 | FRAME_ECN_ECT0, 0x000401);
	run(f, n);
	assert_int_equal(take(), 0);
	n = frame6(f, 0x68 | FRAME_ECN_CE, 0x000401);
	run(f, n);
	assert_int_equal(take(), 1);
	assert_int_equal(rs.r[0].ipv6, 1);
	assert_int_equal(rs.r[0].dqpn, 0x000401);
	assert_int_equal(rs.r[0].saddr[0], 0xfd);
	assert_int_equal(rs.r[0].saddr[15], 7);
	assert_int_equal(rs.r[0].daddr[15], 9);
}

/* Not RoCEv2 with CE in TOS: passed, counted, never reported. */
static void test_not_roce(void **state)
{
	uint8_t f[2048];
	uint64_t b[QP_TCI_C_COUNT], a[QP_TCI_C_COUNT];
	struct frame_addr dst = self;
	struct frame_ip_opts ce = { .tos = FRAME_ECN_CE };
	uint8_t payload[64] = { 0x81 };
	int n;

	(void)state;
	NEED_BPF();
	take();
	gap(0);
	counters(b);
	dst.port = 4792;
	n = frame_build_udp(f, sizeof(f), &peer, &dst, &ce, payload, sizeof(payload));
	run(f, (size_t)n);
	n = frame_build_arp(f, sizeof(f), FRAME_ARP_REQUEST, peer.mac, peer.ip, self.mac,
			    self.ip);
	run(f, (size_t)n);
	n = frame(f, FRAME_OP_CNP, FRAME_ECN_CE, 0x000501);
	f[23] = 6;                                /* TCP */
	run(f, (size_t)n);
	n = frame(f, FRAME_OP_CNP, 0, 0x000501);
	f[38] = 0;
	f[39] = 8 + 4;                            /* UDP 4791, BTH cut */
	run(f, (size_t)n);
	assert_int_equal(take(), 0);
	counters(a);
	assert_int_equal(a[QP_TCI_C_PASS] - b[QP_TCI_C_PASS], 4);
	assert_int_equal(a[QP_TCI_C_ROCE] - b[QP_TCI_C_ROCE], 0);
	assert_int_equal(a[QP_TCI_C_CNP] - b[QP_TCI_C_CNP], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ce_report),
		cmocka_unit_test(test_ce_gap),
		cmocka_unit_test(test_cnp_report),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_not_roce),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
