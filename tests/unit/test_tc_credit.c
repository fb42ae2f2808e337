/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IA credits in the tc programs, loaded and run with BPF_PROG_TEST_RUN over crafted frames
 * (docs/enforce.md "IA credits for unmodified receivers"):
 *   egress   a flow's data frames within its credits leave at the rate; the j-th beyond
 *            them no earlier than credit_next_ns + (j / credit_win) x credit_interval_ns,
 *            exactly, and the EDT step runs on from there; a grant (more credit_frames)
 *            lets the next ones go at the rate again; a new generation counts afresh;
 *            past credit_until_ns the credits are ignored (rate only); ACKs spend none;
 *            observe mode and a cut BTH are untouched; per-flow and global counters exact
 *   ingress  conf.flows: data frames (not ACKs, atomic ACKs or CNPs) counted per (source,
 *            local QPN) with bytes, the destination and sport; nothing without conf.flows;
 *            conf.no_reports: CE and CNPs counted, not reported
 * Every frame comes back byte for byte with TC_ACT_OK. Skips, with the kernel's reason,
 * only when BPF itself is refused. */
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

static struct qp_tc *tc;
static struct qp_tci *tci;

static int setup(void **state)
{
	char why[300];
	int rc = tc_run_opened("test_tc_credit", qp_tc_open(&tc, why, sizeof(why)), why);

	(void)state;
	if (rc == 0 && tc)
		rc = tc_run_opened("test_tc_credit", qp_tci_open(&tci, why, sizeof(why)), why);
	if (rc == 0 && !tci) {      /* both, or neither: the tests check tc */
		qp_tc_close(tc);
		tc = NULL;
	}
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	qp_tci_close(tci);
	qp_tc_close(tc);
	return 0;
}

#define NEED_BPF() do { if (!tc) skip(); } while (0)


#define host_a tc_host_a
#define host_b tc_host_b

static int roce(uint8_t *buf, uint8_t opcode, uint8_t tos, uint32_t dst_ip, uint32_t qpn)
{
	return tc_run_roce(buf, 2048, opcode, tos, dst_ip, qpn,
			   opcode == FRAME_OP_RC_ACK || opcode == FRAME_OP_CNP ? 0 : 1000);
}

/* The flow's next frame (tc_run_next_psn: its PSN one up) through the egress program. */
static uint64_t egress(uint8_t *f, int len, uint64_t ts)
{
	tc_run_next_psn(f, (size_t)len);
	return tc_run(qp_tc_prog_fd(tc), f, (size_t)len, ts, NULL, 0);
}

static void set_mode(unsigned mode)
{
	struct qp_tc_conf c = qp_tc_conf_default();

	c.mode = mode;
	qp_tc_set_conf(tc, &c);
}

/* 8 Gb/s: one ns per byte of frame, so departures are easy to write down. */
#define RATE_1NS 8000000000ull

static void set_credit(const struct qp_tc_key *k, uint64_t frames, uint64_t next,
		       uint64_t interval, uint64_t until, uint32_t win, uint32_t gen)
{
	struct qp_tc_rate r = { .rate_bps = RATE_1NS, .flags = QP_TC_F_PACE | QP_TC_F_CREDIT,
				.credit_frames = frames, .credit_next_ns = next,
				.credit_interval_ns = interval, .credit_until_ns = until,
				.credit_win = win, .credit_gen = gen };

	assert_int_equal(qp_tc_set_rate(tc, k, &r), 0);
}

static void counters(uint64_t c[QP_TC_C_COUNT])
{
	assert_int_equal(qp_tc_counters(tc, c), 0);
}

/* 5 credits, the next grant expected 1 ms after t0, then 2 frames per 1 ms: frames 0..4
 * at the rate from t0, 5-6 from t0 + 1 ms, 7-8 from t0 + 2 ms, 9 at t0 + 3 ms (each pair
 * spaced by the rate); a grant of 10 more: the next 10 at the rate after the last; then
 * held again. */
static void test_budget(void **state)
{
	const uint32_t dst = 0x0a000101, qpn = 0x123;
	const struct qp_tc_key k = qp_tc_key_ipv4(dst, qpn);
	const uint64_t ms = 1000000, t0 = tc_run_mono_ns() + 100000000000ull;
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT], want, d, last;
	struct qp_tc_state st;
	uint8_t f[2048];
	int len = roce(f, FRAME_OP_RC_WRITE_ONLY, 0, dst, qpn);

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE);
	set_credit(&k, 5, t0 + ms, ms, UINT64_MAX, 2, 1);
	counters(before);
	for (unsigned i = 0; i < 10; i++) {
		d = egress(f, len, t0);
		want = i < 5 ? t0 + i * (uint64_t)len
			     : t0 + ms + (i - 5) / 2 * ms + (i - 5) % 2 * (uint64_t)len;
		if (d != want)
			fail_msg("frame %u: departs t0%+lld ns, want t0%+lld", i,
				 (long long)(d - t0), (long long)(want - t0));
	}
	counters(after);
	assert_int_equal(after[QP_TC_C_CREDIT_IN] - before[QP_TC_C_CREDIT_IN], 5);
	assert_int_equal(after[QP_TC_C_CREDIT_HELD] - before[QP_TC_C_CREDIT_HELD], 5);
	assert_int_equal(after[QP_TC_C_PACED] - before[QP_TC_C_PACED], 9);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.credit_used, 10);
	assert_int_equal(st.credit_held, 5);
	assert_int_equal(st.credit_gen, 1);
	assert_int_equal(st.pkts, 10);

	/* a grant: 10 more frames, the next expected 4 ms after t0 */
	last = t0 + 3 * ms + (uint64_t)len;
	set_credit(&k, 20, t0 + 4 * ms, ms, UINT64_MAX, 10, 1);
	for (unsigned i = 0; i < 10; i++) {
		d = egress(f, len, t0);
		if (d != last + i * (uint64_t)len)
			fail_msg("after the grant, frame %u: t0%+lld, want t0%+lld", i,
				 (long long)(d - t0), (long long)(last + i * (uint64_t)len - t0));
	}
	d = egress(f, len, t0);
	assert_int_equal(d, t0 + 4 * ms);
	counters(after);
	assert_int_equal(after[QP_TC_C_CREDIT_IN] - before[QP_TC_C_CREDIT_IN], 15);
	assert_int_equal(after[QP_TC_C_CREDIT_HELD] - before[QP_TC_C_CREDIT_HELD], 6);
	assert_int_equal(qp_tc_del_rate(tc, &k), 0);
}

/* ACKs of a gated flow spend no credit and are not held; a cut BTH to the same flow
 * passes untouched and is no RoCEv2 frame; a new generation counts from 0 again. */
static void test_acks_cut_generation(void **state)
{
	const uint32_t dst = 0x0a000102, qpn = 0x124;
	const struct qp_tc_key k = qp_tc_key_ipv4(dst, qpn);
	const uint64_t ms = 1000000, t0 = tc_run_mono_ns() + 100000000000ull;
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT], d;
	struct qp_tc_state st;
	uint8_t f[2048], a[2048], cut[48];
	int len = roce(f, FRAME_OP_RC_WRITE_ONLY, 0, dst, qpn);
	int alen = roce(a, FRAME_OP_RC_ACK, 0, dst, qpn);

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE);
	set_credit(&k, 1, t0 + 5 * ms, ms, UINT64_MAX, 1, 7);
	counters(before);
	assert_int_equal(egress(f, len, t0), t0);
	for (unsigned i = 0; i < 3; i++)   /* behind the data frame at the rate, not held */
		assert_int_equal(egress(a, alen, t0), t0 + (uint64_t)len + i * (uint64_t)alen);
	/* the UDP payload cut inside the BTH (lengths to match): not RoCEv2, passed as it was */
	memcpy(cut, f, 48);
	cut[16] = 0;
	cut[17] = 34;
	cut[38] = 0;
	cut[39] = 14;
	assert_int_equal(tc_run(qp_tc_prog_fd(tc), cut, 48, t0, NULL, 0), t0);
	d = egress(f, len, t0);
	assert_int_equal(d, t0 + 5 * ms);
	counters(after);
	assert_int_equal(after[QP_TC_C_CREDIT_IN] - before[QP_TC_C_CREDIT_IN], 1);
	assert_int_equal(after[QP_TC_C_CREDIT_HELD] - before[QP_TC_C_CREDIT_HELD], 1);
	assert_int_equal(after[QP_TC_C_PASS_SHORT_BTH] - before[QP_TC_C_PASS_SHORT_BTH], 1);
	assert_int_equal(after[QP_TC_C_ROCE] - before[QP_TC_C_ROCE], 5);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.credit_used, 2);

	/* gating began again (generation 8): 2 credits counted from 0 */
	set_credit(&k, 2, t0 + 9 * ms, ms, UINT64_MAX, 1, 8);
	d = egress(f, len, t0);
	assert_int_equal(d, t0 + 5 * ms + (uint64_t)len);
	assert_int_equal(egress(f, len, t0), d + (uint64_t)len);
	assert_int_equal(egress(f, len, t0), t0 + 9 * ms);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.credit_used, 3);
	assert_int_equal(st.credit_gen, 8);
	assert_int_equal(qp_tc_del_rate(tc, &k), 0);
}

/* Credits past credit_until_ns (no grant for the expiry interval, or qpaced gone): the
 * rate alone paces, counted; observe mode holds nothing. */
static void test_expired_and_observe(void **state)
{
	const uint32_t dst = 0x0a000103, qpn = 0x125;
	const struct qp_tc_key k = qp_tc_key_ipv4(dst, qpn);
	const uint64_t ms = 1000000, t0 = tc_run_mono_ns() + 100000000000ull;
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	uint8_t f[2048];
	int len = roce(f, FRAME_OP_RC_WRITE_ONLY, 0, dst, qpn);

	(void)state;
	NEED_BPF();
	set_mode(QP_TC_MODE_ENFORCE);
	set_credit(&k, 0, t0 + ms, ms, tc_run_mono_ns() - 1, 1, 1);
	counters(before);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(egress(f, len, t0), t0 + i * (uint64_t)len);
	counters(after);
	assert_int_equal(after[QP_TC_C_CREDIT_EXPIRED] - before[QP_TC_C_CREDIT_EXPIRED], 4);
	assert_int_equal(after[QP_TC_C_CREDIT_HELD] - before[QP_TC_C_CREDIT_HELD], 0);

	set_credit(&k, 0, t0 + 50 * ms, ms, UINT64_MAX, 1, 2);
	set_mode(QP_TC_MODE_OBSERVE);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(egress(f, len, t0), t0);
	counters(before);
	assert_int_equal(before[QP_TC_C_CREDIT_HELD] - after[QP_TC_C_CREDIT_HELD], 0);
	set_mode(QP_TC_MODE_ENFORCE);
	assert_true(egress(f, len, t0) >= t0 + 50 * ms);
	assert_int_equal(qp_tc_del_rate(tc, &k), 0);
}

/* ---- ingress ---- */

static void tci_conf(unsigned flows, unsigned no_reports)
{
	struct qp_tci_conf c = qp_tci_conf_default();

	c.flows = flows;
	c.no_reports = no_reports;
	qp_tci_set_conf(tci, &c);
	c = qp_tci_get_conf(tci);
	assert_int_equal(c.flows, flows);
}

static struct qp_tci_flow_key flow_key(uint32_t src, uint32_t qpn)
{
	struct qp_tc_key k = qp_tc_key_ipv4(src, qpn);
	struct qp_tci_flow_key fk = { .dqpn = qpn };

	memcpy(fk.saddr, k.daddr, 16);
	return fk;
}

static uint64_t ingress(const uint8_t *f, int len)
{
	return tc_run(qp_tci_prog_fd(tci), f, (size_t)len, 0, NULL, 0);
}

static int nreports;
static void on_report(void *ctx, const struct qp_tci_report *r)
{
	(void)ctx;
	(void)r;
	nreports++;
}

/* conf.flows: 7 data frames (two opcodes), 2 ACKs, an atomic ACK and a CNP from host_a to
 * local QP 0x44: the flow counts the 7 with their bytes, host_b as its destination and
 * host_a's sport; a frame that is not RoCEv2 and a VLAN frame count nowhere. */
static void test_ingress_flows(void **state)
{
	const struct qp_tci_flow_key fk = flow_key(host_a.ip, 0x44);
	const struct qp_tc_key self = qp_tc_key_ipv4(host_b.ip, 0);
	uint64_t c0[QP_TCI_C_COUNT], c1[QP_TCI_C_COUNT];
	struct qp_tci_flow fl;
	uint8_t d[2048], s[2048], a[2048], x[2048], cnp[2048], v[2048];
	int dl = roce(d, FRAME_OP_RC_WRITE_ONLY, 0, host_b.ip, 0x44);
	int sl = roce(s, FRAME_OP_RC_SEND_ONLY, 0, host_b.ip, 0x44);
	int al = roce(a, FRAME_OP_RC_ACK, 0, host_b.ip, 0x44);
	int xl, cl = roce(cnp, FRAME_OP_CNP, 0, host_b.ip, 0x44);
	struct frame_roce_spec aa = { .src = host_a, .dst = host_b,
				      .bth = { .opcode = FRAME_OP_RC_ATOMIC_ACK, .dest_qp = 0x44 } };

	(void)state;
	NEED_BPF();
	xl = frame_build_roce(x, sizeof(x), &aa);
	if (xl < 0) {   /* the builder may refuse atomic ACKs: an ACK with its opcode */
		memcpy(x, a, (size_t)al);
		x[14 + 20 + 8] = FRAME_OP_RC_ATOMIC_ACK;
		xl = al;
	}
	memcpy(v, d, (size_t)dl);            /* an 802.1Q ethertype: passed, not counted */
	v[12] = 0x81;
	v[13] = 0x00;
	tci_conf(1, 1);
	assert_int_equal(qp_tci_flow(tci, &fk, &fl), -ENOENT);
	assert_int_equal(qp_tci_counters(tci, c0), 0);
	for (unsigned i = 0; i < 7; i++)
		ingress(i % 2 ? s : d, i % 2 ? sl : dl);
	ingress(a, al);
	ingress(a, al);
	ingress(x, xl);
	ingress(cnp, cl);
	ingress(v, dl);
	assert_int_equal(qp_tci_flow(tci, &fk, &fl), 0);
	assert_int_equal(fl.frames, 7);
	assert_int_equal(fl.bytes, 4 * (uint64_t)dl + 3 * (uint64_t)sl);
	assert_memory_equal(fl.daddr, self.daddr, 16);
	assert_int_equal(fl.sport, host_a.port);
	assert_int_equal(fl.ipv6, 0);
	assert_true(fl.first_ns && fl.last_ns >= fl.first_ns);
	assert_int_equal(qp_tci_counters(tci, c1), 0);
	assert_int_equal(c1[QP_TCI_C_FLOW_DATA] - c0[QP_TCI_C_FLOW_DATA], 7);
	assert_int_equal(c1[QP_TCI_C_ROCE] - c0[QP_TCI_C_ROCE], 11);
	assert_int_equal(c1[QP_TCI_C_PASS] - c0[QP_TCI_C_PASS], 1);

	/* without conf.flows: no entry for another QP */
	tci_conf(0, 0);
	{
		const struct qp_tci_flow_key fk2 = flow_key(host_a.ip, 0x45);
		int l2 = roce(d, FRAME_OP_RC_WRITE_ONLY, 0, host_b.ip, 0x45);

		ingress(d, l2);
		assert_int_equal(qp_tci_flow(tci, &fk2, &fl), -ENOENT);
	}
}

/* conf.no_reports: a CE data frame and a CNP are counted (per QP and in all), not
 * reported; with reports on, both are. */
static void test_ingress_no_reports(void **state)
{
	uint64_t c0[QP_TCI_C_COUNT], c1[QP_TCI_C_COUNT];
	uint8_t ce[2048], cnp[2048];
	int l1 = roce(ce, FRAME_OP_RC_WRITE_ONLY, 3, host_b.ip, 0x46);
	int l2 = roce(cnp, FRAME_OP_CNP, 0, host_b.ip, 0x46);
	struct qp_tci_qp q;

	(void)state;
	NEED_BPF();
	tci_conf(1, 1);
	nreports = 0;
	qp_tci_reports_take(tci, on_report, NULL);   /* earlier tests' */
	nreports = 0;
	assert_int_equal(qp_tci_counters(tci, c0), 0);
	ingress(ce, l1);
	ingress(cnp, l2);
	qp_tci_reports_take(tci, on_report, NULL);
	assert_int_equal(nreports, 0);
	assert_int_equal(qp_tci_counters(tci, c1), 0);
	assert_int_equal(c1[QP_TCI_C_CE] - c0[QP_TCI_C_CE], 1);
	assert_int_equal(c1[QP_TCI_C_CNP] - c0[QP_TCI_C_CNP], 1);
	assert_int_equal(c1[QP_TCI_C_CE_REPORTS] - c0[QP_TCI_C_CE_REPORTS], 0);
	assert_int_equal(c1[QP_TCI_C_CNP_REPORTS] - c0[QP_TCI_C_CNP_REPORTS], 0);
	assert_int_equal(qp_tci_qp(tci, 0x46, &q), 0);
	assert_int_equal(q.ce, 1);
	assert_int_equal(q.cnp, 1);

	tci_conf(1, 0);
	ingress(cnp, l2);
	qp_tci_reports_take(tci, on_report, NULL);
	assert_int_equal(nreports, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_acks_cut_generation),
		cmocka_unit_test(test_expired_and_observe),
		cmocka_unit_test(test_ingress_flows),
		cmocka_unit_test(test_ingress_no_reports),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
