/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The tc egress program's two guards of rxe's ACK timer (tc_egress.bpf.c), run with
 * BPF_PROG_TEST_RUN over crafted frames: the ICRC table against the CRC of the frames it
 * stands for; AckReq set on a new data frame that comes ack_gap after the last that asked,
 * with a right ICRC, the interval started again by a frame that asks already,
 * never on an ACK or a READ request, not without ack_gap; a go-back-N resend departing on
 * its own schedule from now
 * while the originals keep theirs. Skips, with the kernel's reason, only when BPF itself is
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "bpf/tc_egress.h"
#include "qpace/frame.h"
#include "tc_run.h"

static struct qp_tc *tc;

static int setup(void **state)
{
	char why[256];

	(void)state;
	return tc_run_opened("test_tc_ack", qp_tc_open(&tc, why, sizeof(why)), why);
}

static int teardown(void **state)
{
	(void)state;
	qp_tc_close(tc);
	return 0;
}

#define NEED_BPF() do { if (!tc) skip(); } while (0)

static void enforce(uint64_t ack_gap_ns)
{
	struct qp_tc_conf c = qp_tc_conf_default();

	c.mode = QP_TC_MODE_ENFORCE;
	c.report_gap_ns = 0;
	c.ack_gap_ns = ack_gap_ns;
	qp_tc_set_conf(tc, &c);
}

static void set_rate(const struct qp_tc_key *k, uint64_t bps)
{
	struct qp_tc_rate r = { .rate_bps = bps, .flags = QP_TC_F_PACE };

	assert_int_equal(qp_tc_set_rate(tc, k, &r), 0);
}

static uint64_t counter(unsigned c)
{
	uint64_t v[QP_TC_C_COUNT];

	assert_int_equal(qp_tc_counters(tc, v), 0);
	return v[c];
}

/* The frame @f's PSN set to @psn, its ICRC made right again. */
static void set_psn(uint8_t *f, size_t len, uint32_t psn)
{
	struct frame_parsed p;
	uint32_t icrc;

	assert_int_equal(frame_parse(&p, f, len), 0);
	f[p.bth_off + 9] = (uint8_t)(psn >> 16);
	f[p.bth_off + 10] = (uint8_t)(psn >> 8);
	f[p.bth_off + 11] = (uint8_t)psn;
	icrc = frame_icrc(f, &p);
	memcpy(f + p.udp_off + p.udp.len - FRAME_ICRC_LEN, &icrc, 4);
}

/* The table: entry D is what AckReq changes in the ICRC of a frame with D bytes after the
 * AckReq byte, i.e. crc32(0x80, D zeros) ^ crc32(0x00, D zeros) (zlib's crc32, as ISA-L's
 * frame_crc32 computes it); and for real frames of three lengths, the ICRC of the frame
 * with AckReq set is the one without XOR the table's entry. */
static void test_icrc_table(void **state)
{
	static uint32_t t[QP_TC_ACKREQ_SPAN];
	static uint8_t buf[QP_TC_ACKREQ_SPAN + 1];
	static const size_t payloads[] = { 0, 1000, 4096 };

	(void)state;
	qp_tc_icrc_ackreq(t, QP_TC_ACKREQ_SPAN);
	for (unsigned d = 0; d < QP_TC_ACKREQ_SPAN; d += d < 64 ? 1 : 97) {
		uint32_t zero, bit;

		memset(buf, 0, d + 1);
		zero = frame_crc32(0, buf, d + 1);
		buf[0] = 0x80;
		bit = frame_crc32(0, buf, d + 1);
		if (t[d] != (zero ^ bit))
			fail_msg("D %u: table 0x%08x, crc32 difference 0x%08x", d, t[d], zero ^ bit);
	}
	for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		uint8_t f[4200];
		int len = tc_run_roce(f, sizeof(f), FRAME_OP_RC_WRITE_MIDDLE, 0, 0x0a000002u, 5,
				      payloads[i]);
		struct frame_parsed p;
		uint32_t before, d;

		assert_int_equal(frame_parse(&p, f, (size_t)len), 0);
		before = frame_icrc(f, &p);
		d = (uint32_t)(p.udp_off + p.udp.len - FRAME_ICRC_LEN) - (p.bth_off + 9u);
		f[p.bth_off + 8] |= 0x80;
		assert_int_equal(frame_parse(&p, f, (size_t)len), 0);
		assert_true(d < QP_TC_ACKREQ_SPAN);
		assert_int_equal(frame_icrc(f, &p), before ^ t[d]);
	}
}

/* One data frame of the flow through the program: its AckReq bit, the ICRC checked; the
 * clock just before and just after, into *@t0 and *@t1. */
static int through(uint8_t *f, int len, uint64_t *t0, uint64_t *t1)
{
	uint8_t out[2048];
	struct frame_parsed p;

	tc_run_next_psn(f, (size_t)len);
	*t0 = tc_run_mono_ns();
	tc_run(qp_tc_prog_fd(tc), f, (size_t)len, 0, out, sizeof(out));
	*t1 = tc_run_mono_ns();
	assert_int_equal(frame_parse(&p, out, (size_t)len), 0);
	if (!frame_icrc_ok(out, &p))
		fail_msg("ICRC wrong after the program (opcode 0x%02x)", p.bth.opcode);
	if (!p.bth.ackreq && memcmp(out, f, (size_t)len))
		fail_msg("a frame without AckReq changed");
	return p.bth.ackreq;
}

/* Frames of a flow in bursts of 4, 30 ms apart, ack_gap 20 ms: each frame asks for an
 * ACK exactly when it comes 20 ms or more after the last one that asked (judged only where
 * the clock around the runs leaves no doubt; a loaded machine can stretch a burst), with
 * a right ICRC; a WRITE last with rxe's own AckReq restarts the 20 ms; ACKs and READ
 * requests never get it; ack_gap 0 leaves every frame alone. */
static void test_ackreq(void **state)
{
	uint8_t f[2048], last[2048], ack[2048], rd[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000601u, 21);
	int len = tc_run_roce(f, sizeof(f), FRAME_OP_RC_WRITE_MIDDLE, 0, 0x0a000601u, 21, 1024);
	int llen = tc_run_roce(last, sizeof(last), FRAME_OP_RC_WRITE_LAST, 0, 0x0a000601u, 21, 512);
	int alen = tc_run_roce(ack, sizeof(ack), FRAME_OP_RC_ACK, 0, 0x0a000601u, 21, 0);
	int rlen = tc_run_roce(rd, sizeof(rd), FRAME_OP_RC_READ_REQUEST, 0, 0x0a000601u, 21, 0);
	const uint64_t gap = 20000000;
	struct timespec pause = { 0, 30 * 1000000L };
	uint64_t set0 = counter(QP_TC_C_ACKREQ), a0 = 0, a1 = 0, t0, t1;
	unsigned judged_yes = 0, judged_no = 0, marked = 0;
	struct qp_tc_state st;

	(void)state;
	NEED_BPF();
	enforce(gap);
	set_rate(&k, 100000000000ull);   /* fast: no frame waits */
	for (int burst = 0; burst < 4; burst++) {
		for (int i = 0; i < 4; i++) {
			int a = through(f, len, &t0, &t1);

			if (a0 && t0 >= a1 + gap) {          /* surely 20 ms on: must ask */
				assert_int_equal(a, 1);
				judged_yes++;
			} else if (a0 && t1 < a0 + gap) {    /* surely within: must not */
				assert_int_equal(a, 0);
				judged_no++;
			}
			if (a) {
				a0 = t0;
				a1 = t1;
				marked++;
			}
		}
		nanosleep(&pause, NULL);
	}
	printf("  %u of 16 frames asked; %u judged asking, %u judged not\n", marked,
	       judged_yes, judged_no);
	assert_true(marked >= 1 && judged_yes >= 1 && judged_no >= 1);
	assert_int_equal(counter(QP_TC_C_ACKREQ) - set0, marked);
	/* a last that asks by itself: the middles right after it do not */
	last[42 + 8] |= 0x80;
	set_psn(last, (size_t)llen, ((uint32_t)f[51] << 16 | (uint32_t)f[52] << 8 | f[53]) + 1);
	memcpy(f + 42 + 9, last + 42 + 9, 3);   /* f's next PSN follows last's */
	nanosleep(&pause, NULL);
	t0 = tc_run_mono_ns();
	tc_run(qp_tc_prog_fd(tc), last, (size_t)llen, 0, NULL, 0);
	if (through(f, len, &a0, &t1) && t1 < t0 + gap)
		fail_msg("a middle asked right after a last that asked");
	/* an ACK and a READ request of the flow: untouched, not counted as data */
	nanosleep(&pause, NULL);
	for (int i = 0; i < 5; i++) {
		tc_run(qp_tc_prog_fd(tc), ack, (size_t)alen, 0, NULL, 0);
		tc_run_next_psn(rd, (size_t)rlen);
		tc_run(qp_tc_prog_fd(tc), rd, (size_t)rlen, 0, NULL, 0);
	}
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.ackreq, marked);
	/* ack_gap 0: as rxe sent them */
	enforce(0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(through(f, len, &t0, &t1), 0);
		nanosleep(&pause, NULL);
	}
	assert_int_equal(counter(QP_TC_C_ACKREQ_SKIP), 0);
	qp_tc_del_rate(tc, &k);
}

/* A new QP's window handed over at once (rxe gives 64 frames before any ACK): at 8 Mb/s
 * the 1,082-byte frames depart 1.082 ms apart though they all came together; with
 * ack_gap 4 ms the frames departing at +0, +4.3 and +8.7 ms ask for an ACK. */
static void test_ackreq_burst(void **state)
{
	uint8_t f[2048], out[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000603u, 23);
	int len = tc_run_roce(f, sizeof(f), FRAME_OP_RC_WRITE_MIDDLE, 0, 0x0a000603u, 23, 1024);
	unsigned marked = 0;

	(void)state;
	NEED_BPF();
	enforce(4000000);
	set_rate(&k, 8000000ull);
	for (int i = 0; i < 12; i++) {
		struct frame_parsed p;

		tc_run_next_psn(f, (size_t)len);
		tc_run(qp_tc_prog_fd(tc), f, (size_t)len, 0, out, sizeof(out));
		assert_int_equal(frame_parse(&p, out, (size_t)len), 0);
		assert_true(frame_icrc_ok(out, &p));
		if (i == 0 || i == 4 || i == 8)
			assert_int_equal(p.bth.ackreq, 1);
		marked += p.bth.ackreq;
	}
	assert_true(marked >= 3);   /* more only if this machine took 4 ms between two */
	qp_tc_del_rate(tc, &k);
}

/* At 8 Mb/s (a byte a us), t0 100 s ahead: PSNs 100-103 leave at t0 + 0..3 frames. A
 * timeout's go-back-N resends 101 and 102 (no timestamp of their own): they leave now and
 * one frame later, on the resends' schedule, not behind 103; a resend never gets AckReq;
 * the new PSN 104 goes on the originals' schedule at t0 + 4 frames. */
static void test_resend_own_schedule(void **state)
{
	uint8_t f[2048], out[2048];
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000602u, 22);
	int len = tc_run_roce(f, sizeof(f), FRAME_OP_RC_WRITE_MIDDLE, 0, 0x0a000602u, 22, 1000);
	uint64_t t0 = tc_run_mono_ns() + 100000000000ull, l = (uint64_t)len * 1000u, now, d;
	uint64_t rtx0 = counter(QP_TC_C_RTX);
	struct qp_tc_state st;

	(void)state;
	NEED_BPF();
	enforce(1000000);
	set_rate(&k, 8000000ull);
	for (uint32_t i = 0; i < 4; i++) {
		set_psn(f, (size_t)len, 100 + i);
		assert_int_equal(tc_run(qp_tc_prog_fd(tc), f, (size_t)len, t0, out, sizeof(out)),
				 t0 + i * l);
	}
	for (uint32_t i = 0; i < 2; i++) {
		set_psn(f, (size_t)len, 101 + i);
		now = tc_run_mono_ns();
		d = tc_run(qp_tc_prog_fd(tc), f, (size_t)len, 0, NULL, 0);   /* bytes unchanged */
		if (i == 0)
			assert_true(d == 0);              /* the resends' schedule is idle: now */
		else
			assert_true(d >= now && d <= tc_run_mono_ns() + l);
	}
	set_psn(f, (size_t)len, 104);
	assert_int_equal(tc_run(qp_tc_prog_fd(tc), f, (size_t)len, t0, out, sizeof(out)),
			 t0 + 4 * l);
	assert_int_equal(qp_tc_flow(tc, &k, &st), 0);
	assert_int_equal(st.rtx, 2);
	assert_int_equal(st.psn_max & 0xffffff, 104);
	assert_int_equal(counter(QP_TC_C_RTX) - rtx0, 2);
	qp_tc_del_rate(tc, &k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icrc_table),
		cmocka_unit_test(test_ackreq),
		cmocka_unit_test(test_ackreq_burst),
		cmocka_unit_test(test_resend_own_schedule),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
