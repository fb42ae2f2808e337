/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core with a key: signed feedback accepted once, replays and messages signed
 * before the agent started rejected (the attack: captured datagrams replayed to a
 * fresh agent), clocks too far ahead rejected, every message the agent sends signed with
 * its id and an increasing sequence, agent <-> agent echoes and credit grants through two
 * keyed cores, a full sender table counted, and the Prometheus reasons. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "agent_metrics.h"
#include "qpace/fb_auth.h"

#define SW_SENDER 0x5e5e0001u
#define OFFSET (1700000000ULL * QP_NS_PER_S)   /* the agents' wall clock: 2023 */
#define WALL(t) ((t) + OFFSET)

static const uint8_t key_bytes[QP_SIPHASH_KEY_BYTES] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };

static struct agent_params keyed(const char *cc, uint32_t sender)
{
	struct agent_params p = afx_params(cc);

	p.have_key = true;
	memcpy(p.key, key_bytes, sizeof(p.key));
	p.sender_id = sender;
	p.clock_offset_ns = OFFSET;
	return p;
}

static size_t sign(uint8_t *buf, const struct fb_msg *m, uint32_t sender, uint64_t seq)
{
	struct qp_siphash_key k;
	size_t n = afx_encode(buf, m);
	int s;

	qp_siphash_key_load(&k, key_bytes);
	s = fb_auth_sign(buf, FB_MAX_LEN, n, &k, sender, seq);
	assert_true(s > 0);
	return (size_t)s;
}

static struct fb_msg level(uint8_t lvl, uint32_t seq)
{
	struct fb_msg m = { .type = FB_T_LEVEL };

	m.u.level = (struct fb_level){ .flow = { HOST_A, HOST_B, 0xc011, 0x21 }, .switch_id = 7,
				       .port = 3, .level = lvl, .queue_bytes = 50000, .seq = seq };
	return m;
}

static uint64_t ctr(struct afx *f, enum agent_counter c)
{
	return agent_counters(f->a)[c];
}

/* 50 signed level-3 messages cut the window (FFD halves it at level 3); the same
 * 50 captured datagrams, replayed to the same agent and then to a fresh one, change
 * nothing and are counted as replays. */
static void test_captured_replayed(void **state)
{
	static uint8_t cap[50][FB_MAX_LEN];
	size_t len[50];
	struct agent_params p = keyed("ffd", 0xa1);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct afx *f = afx_new(&p);
	uint64_t cut, first;
	(void)state;

	afx_register(f, &r);
	first = afx_slot(f, 0x11).cap_bytes;
	for (unsigned i = 0; i < 50; i++) {
		struct fb_msg m = level(3, i);

		len[i] = sign(cap[i], &m, SW_SENDER, WALL(T0) + 1000 * i);
		assert_true(agent_feed_datagram(f->a, cap[i], len[i], SWITCH, 4792, T0 + 1000 * i) &
			    AGENT_RX_ACCEPTED);
	}
	cut = afx_slot(f, 0x11).cap_bytes;
	assert_true(cut > 0 && cut <= first / 2);
	agent_tx_take(f->a, (struct agent_dgram[64]){ 0 }, 64);
	for (unsigned i = 0; i < 50; i++)
		assert_int_equal(agent_feed_datagram(f->a, cap[i], len[i], SWITCH, 4792,
						     T0 + QP_NS_PER_MS + i), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_REPLAY), 50);
	assert_int_equal(ctr(f, AGENT_C_FB_ACCEPTED), 50);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, cut);
	print_message("same agent: 50 signed accepted (window %llu -> %llu bytes), 50 replays "
		      "rejected; log: %s\n", (unsigned long long)first, (unsigned long long)cut,
		      f->lastlog);
	afx_free(f);

	/* a fresh agent (started a second later), the same QP: every replay refused */
	f = afx_new(&p);
	{
		struct agent *fresh;
		char err[256];

		agent_destroy(f->a);
		fresh = agent_create(&p, f->rt, T0 + QP_NS_PER_S, err, sizeof(err));
		assert_non_null(fresh);
		f->a = fresh;
	}
	assert_int_equal(agent_register(f->a, &r, 1, 1, T0 + QP_NS_PER_S, NULL, 0), 0);
	for (unsigned i = 0; i < 50; i++)
		assert_int_equal(agent_feed_datagram(f->a, cap[i], len[i], SWITCH, 4792,
						     T0 + QP_NS_PER_S + i), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_REPLAY), 50);
	assert_int_equal(ctr(f, AGENT_C_FB_ACCEPTED), 0);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, first);
	print_message("fresh agent: 50 replays rejected, the window stays %llu bytes; log: %s\n",
		      (unsigned long long)first, f->lastlog);
	/* while a message the switch signs now is taken */
	{
		uint8_t buf[FB_MAX_LEN];
		struct fb_msg m = level(3, 99);
		size_t n = sign(buf, &m, SW_SENDER, WALL(T0 + QP_NS_PER_S) + 5);

		assert_true(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + QP_NS_PER_S + 9) &
			    AGENT_RX_ACCEPTED);
		assert_int_equal(afx_slot(f, 0x11).cap_bytes, cut);
	}
	afx_free(f);
}

/* Unsigned, forged (wrong key), altered sequence, a clock 11 s ahead: each refused and
 * counted under its reason; a message reordered within the window is taken. */
static void test_reasons(void **state)
{
	struct agent_params p = keyed("ffd", 0xa1);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct afx *f = afx_new(&p);
	uint8_t buf[FB_MAX_LEN], late[FB_MAX_LEN];
	struct qp_siphash_key wrong;
	struct fb_msg m = level(1, 1);
	size_t n, nl;
	(void)state;

	afx_register(f, &r);
	assert_int_equal(afx_feed(f, &m, SWITCH, T0), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_NOTAG), 1);
	qp_siphash_key_load(&wrong, (const uint8_t[16]){ 1 });
	n = afx_encode(buf, &m);
	n = (size_t)fb_auth_sign(buf, sizeof(buf), n, &wrong, SW_SENDER, WALL(T0) + 10);
	assert_int_equal(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0), 0);
	n = sign(buf, &m, SW_SENDER, WALL(T0) + 20);
	buf[FB_HDR_LEN + 11] ^= 1;        /* the sequence, under the tag */
	assert_int_equal(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_TAG), 2);
	n = sign(buf, &m, SW_SENDER, WALL(T0) + 11 * QP_NS_PER_S);
	assert_int_equal(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_FUTURE), 1);
	assert_int_equal(ctr(f, AGENT_C_FB_ACCEPTED), 0);
	/* reordered: the later one first, then the earlier; both taken; then both refused */
	nl = sign(late, &m, SW_SENDER, WALL(T0) + 400);
	n = sign(buf, &m, SW_SENDER, WALL(T0) + 300);
	assert_true(agent_feed_datagram(f->a, late, nl, SWITCH, 4792, T0 + 500) &
		    AGENT_RX_ACCEPTED);
	assert_true(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 501) &
		    AGENT_RX_ACCEPTED);
	assert_int_equal(agent_feed_datagram(f->a, late, nl, SWITCH, 4792, T0 + 502), 0);
	assert_int_equal(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 503), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_ACCEPTED), 2);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_REPLAY), 2);
	afx_free(f);
}

/* What the agent sends carries its id and a sequence from its clock, strictly
 * increasing even within one instant; receivers read it back. */
static void test_agent_signs(void **state)
{
	struct agent_params p = keyed("ffd", 0xabcdef01u);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct afx *f = afx_new(&p);
	struct qp_siphash_key k;
	uint64_t last = 0;
	(void)state;

	qp_siphash_key_load(&k, key_bytes);
	afx_register(f, &r);
	for (unsigned i = 0; i < 6; i++) {
		uint8_t buf[FB_MAX_LEN];
		struct fb_msg m = level((uint8_t)(i % 2 ? 3 : 1), i);
		size_t n = sign(buf, &m, SW_SENDER, WALL(T0) + 10 + i);
		struct agent_dgram d;
		uint64_t seq;
		uint32_t sender;

		assert_true(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 7) &
			    AGENT_RX_TX);
		assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
		assert_int_equal(fb_auth_verify(d.buf, d.len, &k, &sender, &seq), 0);
		assert_int_equal(sender, 0xabcdef01u);
		assert_true(seq >= WALL(T0 + 7) && seq > last);
		last = seq;
	}
	afx_free(f);
}

/* Two keyed agents: B receives an INT report for A's data and echoes it, signed as B; A
 * takes it; B's credit grants reach A the same way; replays of either are refused by A. */
static void test_agent_to_agent(void **state)
{
	struct agent_params pa = keyed("hpcc", 0xaaaa), pb = keyed("hpcc", 0xbbbb);
	struct agent_qp_reg ra = afx_reg(0x11, 0x21), rb = afx_reg(0x21, 0x11);
	struct afx *f = afx_new(&pa);
	struct qp_ratetable *tb;
	struct agent *b;
	struct agent_dgram d[8];
	struct agent_qp_view v;
	struct fb_msg m = { .type = FB_T_INT, .flags = FB_F_TO_RECEIVER };
	uint8_t buf[FB_MAX_LEN];
	char err[256];
	size_t n;
	(void)state;

	afx_register(f, &ra);
	pb.credits = true;
	assert_int_equal(qp_ratetable_create_mem(64, &tb, err, sizeof(err)), 0);
	b = agent_create(&pb, tb, T0, err, sizeof(err));
	assert_non_null(b);
	rb.local_ip = HOST_B;
	rb.peer_ip = HOST_A;
	rb.flags = AGENT_QP_RECEIVER;
	assert_int_equal(agent_register(b, &rb, 1, 1, T0, err, sizeof(err)), 0);
	assert_int_equal(agent_tx_take(b, d, 8), 1);   /* its INT wish (hpcc), signed */
	assert_int_equal(agent_feed_datagram(f->a, d[0].buf, d[0].len, HOST_B, 4792, T0 + 1),
			 AGENT_RX_ACCEPTED);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_WANT_SEEN], 1);
	m.u.int_report = (struct fb_int){ .flow = { HOST_A, HOST_B, 0xc011, 0x21 }, .psn = 5,
					  .nhops = 1 };
	m.u.int_report.hops[0] = (struct qp_int_hop){ .switch_id = 1, .ts_ns = T0,
						      .qlen_bytes = 30000,
						      .link_bps = 10 * QP_GBPS };
	n = sign(buf, &m, SW_SENDER, WALL(T0) + 1);
	assert_true(agent_feed_datagram(b, buf, n, SWITCH, 4792, T0 + 1) & AGENT_RX_TX);
	assert_int_equal(agent_tx_take(b, d, 8), 1);
	assert_int_equal(d[0].dst_ip, HOST_A);
	assert_true(agent_feed_datagram(f->a, d[0].buf, d[0].len, HOST_B, 4792, T0 + 2) &
		    AGENT_RX_MATCHED);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.feedback, 1);
	assert_int_equal(agent_feed_datagram(f->a, d[0].buf, d[0].len, HOST_B, 4792, T0 + 3), 0);
	/* the receiver's first grant (at a random time within its first period) */
	agent_poll(b, T0 + 10 * QP_NS_PER_MS);
	assert_int_equal(agent_tx_take(b, d, 8), 1);
	assert_true(agent_feed_datagram(f->a, d[0].buf, d[0].len, HOST_B, 4792,
					T0 + 10 * QP_NS_PER_MS) & AGENT_RX_MATCHED);
	assert_true(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS);
	assert_int_equal(agent_feed_datagram(f->a, d[0].buf, d[0].len, HOST_B, 4792,
					     T0 + 11 * QP_NS_PER_MS), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_REPLAY), 2);
	assert_int_equal(ctr(f, AGENT_C_FB_DUP_CREDIT), 0);   /* stopped before the credit code */
	assert_int_equal(ctr(f, AGENT_C_FB_ACCEPTED), 3);   /* the wish, the echo, the grant */
	agent_destroy(b);
	qp_ratetable_close(tb);
	afx_free(f);
}

/* A table of 2 senders, 3 signers: the third evicts the least recently heard, counted
 * and logged; the evicted one's old message stays refused. */
static void test_sender_evictions(void **state)
{
	struct agent_params p = keyed("ffd", 1);
	struct afx *f;
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	uint8_t old[FB_MAX_LEN], buf[FB_MAX_LEN];
	struct fb_msg m = level(0, 0);
	size_t nold, n;
	(void)state;

	p.max_senders = 2;
	f = afx_new(&p);
	afx_register(f, &r);
	nold = sign(old, &m, 100, WALL(T0) + 1);
	assert_true(agent_feed_datagram(f->a, old, nold, SWITCH, 4792, T0 + 1) & AGENT_RX_ACCEPTED);
	n = sign(buf, &m, 200, WALL(T0) + 2);
	assert_true(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 2) & AGENT_RX_ACCEPTED);
	n = sign(buf, &m, 300, WALL(T0) + 3);
	assert_true(agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 3) & AGENT_RX_ACCEPTED);
	assert_int_equal(ctr(f, AGENT_C_FB_SENDERS_EVICTED), 1);
	assert_non_null(strstr(f->lastlog, "replay window table full"));
	assert_int_equal(agent_feed_datagram(f->a, old, nold, SWITCH, 4792, T0 + 4), 0);
	assert_int_equal(ctr(f, AGENT_C_FB_REJ_REPLAY), 1);
	/* a bad table size is refused at create */
	p.max_senders = 0;
	assert_null(agent_create(&p, f->rt, T0, NULL, 0));
	afx_free(f);
}

/* Prometheus: the reasons in one family, written once. */
static void test_metrics_reasons(void **state)
{
	struct agent_params p = keyed("ffd", 1);
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	uint8_t buf[FB_MAX_LEN];
	struct fb_msg m = level(0, 0);
	struct qp_strbuf b;
	const char *fam = "# TYPE qpace_agent_feedback_rejected_total counter";
	size_t n;
	(void)state;

	afx_register(f, &r);
	n = sign(buf, &m, 5, WALL(T0) + 1);
	agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 1);
	agent_feed_datagram(f->a, buf, n, SWITCH, 4792, T0 + 2);
	b = (struct qp_strbuf){ 0 };
	agent_metrics_render(f->a, NULL, &b);
	assert_non_null(strstr(b.p, "qpace_agent_feedback_rejected_total{reason=\"replay\"} 1\n"));
	assert_non_null(strstr(b.p, "qpace_agent_feedback_rejected_total{reason=\"future\"} 0\n"));
	assert_non_null(strstr(b.p, "qpace_agent_feedback_senders_evicted_total 0\n"));
	assert_non_null(strstr(b.p, fam));
	assert_null(strstr(strstr(b.p, fam) + 1, fam));
	qp_strbuf_free(&b);
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured_replayed),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_agent_signs),
		cmocka_unit_test(test_agent_to_agent),
		cmocka_unit_test(test_sender_evictions),
		cmocka_unit_test(test_metrics_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
