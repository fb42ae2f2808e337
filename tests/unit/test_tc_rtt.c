/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RTT samples and NAKs from the tc programs, loaded and run with BPF_PROG_TEST_RUN over
 * crafted frames, the ingress program sharing the egress program's stamps (qp_tci_open_rtt):
 * a data frame with AckReq leaving A for B is stamped by (B, PSN) with its destination
 * QPN; the ACK of that PSN arriving from B is reported once as an RTT sample (B, the local
 * QPN, the egress key's QPN, arrival minus departure) and takes the stamp; a frame sent
 * twice before its ACK gives no sample (Karn); frames without AckReq and ACKs are not
 * stamped; a NAK (PSN sequence error) is reported; each kind at most once per rtt_gap_ns;
 * with conf.rtt off nothing is stamped or matched. Skips, with the kernel's reason, only
 * when BPF itself is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "qpace/frame.h"
#include "tc_run.h"

#define LOCAL_QPN 0x000111u     /* A's QP: what B's ACKs are sent to */
#define PEER_QPN 0x000222u      /* B's QP: what A's data frames are sent to */

static struct qp_tc *tc;
static struct qp_tci *tci;

static int setup(void **state)
{
	char why[300];
	int rc;

	(void)state;
	rc = tc_run_opened("test_tc_rtt", qp_tc_open(&tc, why, sizeof(why)), why);
	if (rc || !tc)
		return rc;
	return tc_run_opened("test_tc_rtt", qp_tci_open_rtt(&tci, qp_tc_rtt_fd(tc), why,
							       sizeof(why)), why);
}

static int teardown(void **state)
{
	(void)state;
	qp_tci_close(tci);
	qp_tc_close(tc);
	return 0;
}

#define NEED_BPF() do { if (!tc || !tci) skip(); } while (0)

static void confs(bool rtt, uint64_t gap_ns)
{
	struct qp_tc_conf c = qp_tc_conf_default();
	struct qp_tci_conf ic = qp_tci_conf_default();

	c.rtt = rtt;
	ic.rtt = rtt;
	ic.rtt_gap_ns = gap_ns;
	qp_tc_set_conf(tc, &c);
	qp_tci_set_conf(tci, &ic);
}

/* A -> B: a WRITE_LAST of 1024 bytes to PEER_QPN with @psn, AckReq @ackreq. */
static int data(uint8_t *buf, uint32_t psn, bool ackreq)
{
	struct frame_roce_spec s = {
		.src = tc_host_a, .dst = tc_host_b,
		.bth = { .opcode = FRAME_OP_RC_WRITE_LAST, .dest_qp = PEER_QPN, .psn = psn,
			 .ackreq = ackreq },
		.payload_len = 1024,
	};
	int n = frame_build_roce(buf, 2048, &s);

	assert_true(n > 0);
	return n;
}

/* B -> A: an ACK (or NAK: @syndrome) for @psn to LOCAL_QPN. */
static int ack(uint8_t *buf, uint32_t psn, uint8_t syndrome)
{
	struct frame_roce_spec s = {
		.src = tc_host_b, .dst = tc_host_a,
		.bth = { .opcode = FRAME_OP_RC_ACK, .dest_qp = LOCAL_QPN, .psn = psn },
		.aeth = { .syndrome = syndrome, .msn = 1 },
	};
	int n = frame_build_roce(buf, 2048, &s);

	assert_true(n > 0);
	return n;
}

static void out(const uint8_t *f, size_t n)
{
	tc_run(qp_tc_prog_fd(tc), f, n, 0, NULL, 0);
}

static void in(const uint8_t *f, size_t n)
{
	tc_run(qp_tci_prog_fd(tci), f, n, 0, NULL, 0);
}

struct reports { int n; struct qp_tci_report r[64]; };
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

static uint64_t ic(unsigned c)
{
	uint64_t v[QP_TCI_C_COUNT];

	assert_int_equal(qp_tci_counters(tci, v), 0);
	return v[c];
}

static uint64_t ec(unsigned c)
{
	uint64_t v[QP_TC_C_COUNT];

	assert_int_equal(qp_tc_counters(tc, v), 0);
	return v[c];
}

static const uint8_t *peer_b(void)
{
	static uint8_t a[16];
	struct qp_tc_key k = qp_tc_key_ipv4(tc_host_b.ip, 0);

	memcpy(a, k.daddr, 16);
	return a;
}

/* Stamped on the way out, matched on the way in: one report, the stamp gone. */
static void test_rtt_sample(void **state)
{
	uint8_t f[2048];
	struct qp_tc_rtt_stamp st;
	uint64_t t0, t1, samples = 0;
	int n;

	(void)state;
	NEED_BPF();
	confs(true, 0);
	take();
	samples = ic(QP_TCI_C_RTT_SAMPLE);
	t0 = tc_run_mono_ns();
	n = data(f, 100, true);
	out(f, (size_t)n);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 100, &st), 0);
	assert_int_equal(st.dqpn, PEER_QPN);
	assert_int_equal(st.resent, 0);
	assert_true(st.depart_ns >= t0);
	n = ack(f, 100, 0x1f);
	in(f, (size_t)n);
	t1 = tc_run_mono_ns();
	assert_int_equal(take(), 1);
	assert_int_equal(rs.r[0].kind, QP_TCI_K_RTT);
	assert_int_equal(rs.r[0].dqpn, LOCAL_QPN);
	assert_int_equal(rs.r[0].peer_qpn, PEER_QPN);
	assert_int_equal(rs.r[0].psn, 100);
	assert_memory_equal(rs.r[0].saddr, peer_b(), 16);
	assert_true(rs.r[0].rtt_ns > 0 && rs.r[0].rtt_ns <= t1 - t0);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 100, &st), -ENOENT);
	assert_int_equal(ic(QP_TCI_C_RTT_SAMPLE), samples + 1);
	print_message("ACK of PSN 100 after its AckReq frame: RTT sample %llu ns (the two "
		      "test runs apart), egress key QPN 0x%06x, local QPN 0x%06x\n",
		      (unsigned long long)rs.r[0].rtt_ns, rs.r[0].peer_qpn, rs.r[0].dqpn);
	/* the same ACK again: no stamp left, no sample */
	in(f, (size_t)n);
	assert_int_equal(take(), 0);
}

/* Sent twice before its ACK: marked, no sample (Karn); without AckReq: not stamped; an
 * ACK going out is not stamped. */
static void test_karn_and_unstamped(void **state)
{
	uint8_t f[2048];
	struct qp_tc_rtt_stamp st;
	uint64_t karn, resent;
	int n;

	(void)state;
	NEED_BPF();
	confs(true, 0);
	take();
	karn = ic(QP_TCI_C_RTT_KARN);
	resent = ec(QP_TC_C_RTT_RESENT);
	n = data(f, 200, true);
	out(f, (size_t)n);
	out(f, (size_t)n);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 200, &st), 0);
	assert_int_equal(st.resent, 1);
	assert_int_equal(ec(QP_TC_C_RTT_RESENT), resent + 1);
	n = ack(f, 200, 0x1f);
	in(f, (size_t)n);
	assert_int_equal(take(), 0);
	assert_int_equal(ic(QP_TCI_C_RTT_KARN), karn + 1);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 200, &st), -ENOENT);

	n = data(f, 300, false);
	out(f, (size_t)n);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 300, &st), -ENOENT);
	{
		struct frame_roce_spec s = {
			.src = tc_host_a, .dst = tc_host_b,
			.bth = { .opcode = FRAME_OP_RC_ACK, .dest_qp = PEER_QPN, .psn = 301,
				 .ackreq = true },
			.aeth = { .syndrome = 0x1f },
		};
		n = frame_build_roce(f, sizeof(f), &s);
		assert_true(n > 0);
		out(f, (size_t)n);
		assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 301, &st), -ENOENT);
	}
}

/* A NAK (PSN sequence error) is reported; each kind at most once per rtt_gap_ns; an RNR
 * NAK is neither. */
static void test_nak_and_gap(void **state)
{
	uint8_t f[2048];
	uint64_t lim, nlim;
	int n;

	(void)state;
	NEED_BPF();
	confs(true, 1000000000000ull);   /* 1000 s: only the first of each kind */
	take();
	lim = ic(QP_TCI_C_RTT_LIMITED);
	nlim = ic(QP_TCI_C_NAK_LIMITED);
	n = ack(f, 400, 0x60);
	in(f, (size_t)n);
	in(f, (size_t)n);
	n = ack(f, 401, 0x21);   /* RNR NAK */
	in(f, (size_t)n);
	for (uint32_t psn = 500; psn < 503; psn++) {
		n = data(f, psn, true);
		out(f, (size_t)n);
		n = ack(f, psn, 0x1f);
		in(f, (size_t)n);
	}
	/* the NAK, and the first sample unless an earlier test reported one within the gap */
	n = take();
	assert_true(n == 1 || n == 2);
	assert_int_equal(rs.r[0].kind, QP_TCI_K_NAK);
	assert_int_equal(rs.r[0].psn, 400);
	assert_int_equal(rs.r[0].dqpn, LOCAL_QPN);
	if (n == 2) {
		assert_int_equal(rs.r[1].kind, QP_TCI_K_RTT);
		assert_int_equal(rs.r[1].psn, 500);
	}
	assert_int_equal(ic(QP_TCI_C_NAK_LIMITED), nlim + 1);
	assert_int_equal(ic(QP_TCI_C_RTT_LIMITED), lim + (uint64_t)(4 - n));
}

/* conf.rtt off (the default): nothing stamped, ACKs not looked at. */
static void test_off(void **state)
{
	uint8_t f[2048];
	struct qp_tc_rtt_stamp st;
	uint64_t acks;
	int n;

	(void)state;
	NEED_BPF();
	qp_tc_set_conf(tc, &(struct qp_tc_conf){ 0 });
	qp_tci_set_conf(tci, &(struct qp_tci_conf){ .ce_gap_ns = 50000 });
	take();
	acks = ic(QP_TCI_C_ACK);
	n = data(f, 600, true);
	out(f, (size_t)n);
	assert_int_equal(qp_tc_rtt_stamp(tc, peer_b(), 600, &st), -ENOENT);
	n = ack(f, 600, 0x1f);
	in(f, (size_t)n);
	assert_int_equal(ic(QP_TCI_C_ACK), acks);
	assert_int_equal(take(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtt_sample),
		cmocka_unit_test(test_karn_and_unstamped),
		cmocka_unit_test(test_nak_and_gap),
		cmocka_unit_test(test_off),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
