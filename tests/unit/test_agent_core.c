/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core with injected time: registration rules, every feedback role, the allow-list
 * and tags, malformed and random input, application events, overrides and reaping (IA
 * credits: test_agent_credit.c). Rates are read back from the rate table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "test_rng.h"

#include "qpace/agent.h"
#include "qpace/fb_auth.h"


static struct fb_msg level_msg(uint32_t peer_qpn, uint16_t sport, uint8_t level)
{
	struct fb_msg m = { .type = FB_T_LEVEL };

	m.u.level = (struct fb_level){ .flow = { HOST_A, HOST_B, sport, peer_qpn },
				       .switch_id = 7, .port = 3, .level = level,
				       .queue_bytes = 50000, .seq = 11, .psn = 0x123456 };
	return m;
}

static struct fb_msg int_msg(uint32_t src, uint32_t dst, uint32_t dest_qp, uint32_t psn,
			     uint32_t qlen, uint64_t ts)
{
	struct fb_msg m = { .type = FB_T_INT };
	struct fb_int *r = &m.u.int_report;

	r->flow = (struct fb_flow){ src, dst, 0, dest_qp };
	r->psn = psn;
	r->nhops = 2;
	for (unsigned i = 0; i < 2; i++)
		r->hops[i] = (struct qp_int_hop){ .switch_id = 1 + i, .port = 1, .ts_ns = ts,
						  .tx_bytes = ts / 8 * 10, .qlen_bytes = qlen * i,
						  .link_bps = 10 * QP_GBPS };
	return m;
}

/* ---- registration ---- */

/* The shell's view of a flow on the wire: the QP that sends it is found by (local IP, peer
 * IP, peer QPN) as feedback finds it, and what the shell measured shows in its view. */
static void test_flow_and_wire(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct agent_qp_wire w = { .seen = true, .discovered = true, .bytes = 123456,
				   .pkts = 100, .measured_bps = 7 * QP_MBPS,
				   .set_bps = 11 * QP_MBPS };
	struct agent_qp_view v;
	uint32_t qpn = 0;
	(void)state;

	afx_register(f, &r);
	assert_int_equal(agent_qp_find_flow(f->a, HOST_A, HOST_B, 0x21, &qpn), 0);
	assert_int_equal(qpn, 0x11);
	assert_int_equal(agent_qp_find_flow(f->a, HOST_A, HOST_B, 0x22, &qpn), -ENOENT);
	assert_int_equal(agent_qp_find_flow(f->a, HOST_B, HOST_A, 0x21, &qpn), -ENOENT);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_false(v.wire.seen);
	assert_int_equal(agent_qp_wire(f->a, 0x11, &w), 0);
	assert_int_equal(agent_qp_wire(f->a, 0x12, &w), -ENOENT);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_memory_equal(&v.wire, &w, sizeof(w));
	afx_free(f);
}

static void test_register_rules(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21), bad;
	char err[256];
	(void)state;

	afx_register(f, &r);
	assert_int_equal(afx_slot(f, 0x11).rate_bps, 10 * QP_GBPS);
	/* same QPN, same flow: refused */
	assert_int_equal(agent_register(f->a, &r, 1, 1, T0, err, sizeof(err)), -EEXIST);
	print_message("duplicate: %s\n", err);
	bad = afx_reg(0x12, 0x21);
	assert_int_equal(agent_register(f->a, &bad, 1, 1, T0, err, sizeof(err)), -EEXIST);
	/* each field out of range is named */
	static const struct {
		size_t off;
		uint64_t v;
		const char *name;
	} cases[] = {
		{ offsetof(struct agent_qp_reg, qpn), 0x1000000, "qpn" },
		{ offsetof(struct agent_qp_reg, mtu_bytes), 10, "mtu_bytes" },
		{ offsetof(struct agent_qp_reg, local_ip), 0, "local_ip" },
		{ offsetof(struct agent_qp_reg, flags), 0x80, "flags" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bad = afx_reg(0x30, 0x40);
		if (cases[i].off == offsetof(struct agent_qp_reg, flags)) {
			bad.flags = (uint16_t)cases[i].v;
		} else {
			uint32_t v = (uint32_t)cases[i].v;
			memcpy((char *)&bad + cases[i].off, &v, 4);
		}
		assert_int_equal(agent_register(f->a, &bad, 1, 1, T0, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, cases[i].name));
	}
	print_message("bad field: %s\n", err);
	bad = afx_reg(0x31, 0x41);
	bad.link_bps = 0;
	assert_int_equal(agent_register(f->a, &bad, 1, 1, T0, err, sizeof(err)), -EINVAL);
	bad = afx_reg(0x31, 0x41);
	snprintf(bad.algo, sizeof(bad.algo), "nosuch");
	assert_int_equal(agent_register(f->a, &bad, 1, 1, T0, err, sizeof(err)), -ENOENT);
	print_message("bad algorithm: %s\n", err);
	snprintf(bad.algo, sizeof(bad.algo), "ffd");
	snprintf(bad.params, sizeof(bad.params), "down=3");
	assert_int_equal(agent_register(f->a, &bad, 1, 1, T0, err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_counters(f->a)[AGENT_C_REG_BAD], 5);
	assert_int_equal(agent_counters(f->a)[AGENT_C_REG_DUP], 2);
	assert_int_equal(agent_counters(f->a)[AGENT_C_REG_ALGO], 2);
	/* the limit bounds memory: 16 QPs, the 17th is refused */
	for (uint32_t q = 1; q < 16; q++) {
		r = afx_reg(0x100 + q, 0x200 + q);
		afx_register(f, &r);
	}
	r = afx_reg(0x300, 0x400);
	assert_int_equal(agent_register(f->a, &r, 1, 1, T0, err, sizeof(err)), -ENOSPC);
	print_message("full: %s\n", err);
	assert_int_equal(agent_qp_count(f->a), 16);
	/* reaping owner 1 frees every slot */
	assert_int_equal(agent_unregister_owner(f->a, 1, T0), 16);
	assert_int_equal(agent_qp_count(f->a), 0);
	for (uint32_t i = 0; i < qp_ratetable_nslots(f->rt); i++) {
		struct qp_rate_entry e;
		assert_int_equal(qp_ratetable_read(f->rt, i, &e), 0);
		assert_int_equal(e.qpn, QP_RATE_QPN_FREE);
	}
	afx_register(f, &r);
	assert_int_equal(agent_unregister(f->a, 0x300, T0), 0);
	assert_int_equal(agent_unregister(f->a, 0x300, T0), -ENOENT);
	afx_free(f);
}

/* ---- sender role: levels through datagrams, acknowledged to the switch ---- */

static void test_level_rate_and_ack(void **state)
{
	struct agent_params p = afx_params("ffd");
	struct afx *f;
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m = level_msg(0x21, r.sport, 3), got;
	struct agent_dgram d;
	unsigned res;
	(void)state;

	p.cc_params = "iw=40";            /* ffd's window: 40 packets of 1000 bytes */
	f = afx_new(&p);
	afx_register(f, &r);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 40000);
	res = afx_feed(f, &m, SWITCH, T0 + 1000);
	assert_true(res & AGENT_RX_RATE);
	/* ffd level 3: the window x0.5, exactly */
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 20000);
	print_message("level 3: a window of 40000 -> %llu bytes in the table\n",
		      (unsigned long long)afx_slot(f, 0x11).cap_bytes);
	/* the ack went back to the switch's address, naming the level */
	assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
	assert_int_equal(d.dst_ip, SWITCH);
	assert_int_equal(d.dst_port, 4792);
	assert_int_equal(fb_decode(&got, d.buf, d.len), 0);
	assert_int_equal(got.u.level.level, FB_LEVEL_ACK);
	assert_int_equal(got.u.level.acked, 3);
	assert_int_equal(got.u.level.switch_id, 7);
	assert_int_equal(got.u.level.seq, 11);
	assert_int_equal(got.u.level.psn, 0x123456);
	/* level 2 one RTT later: x0.75 (a level's cut is applied once, not re-applied) */
	agent_feed_datagram(f->a, (const uint8_t *)"garbage!garbage!", 16, SWITCH, 1, T0);
	m = level_msg(0x21, r.sport, 2);
	afx_feed(f, &m, SWITCH, T0 + 1000 + 10 * QP_NS_PER_US);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 15000);
	/* a wrong source port means another flow */
	m = level_msg(0x21, (uint16_t)(r.sport + 1), 3);
	assert_int_equal(afx_feed(f, &m, SWITCH, T0 + 20000) & AGENT_RX_MATCHED, 0);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_UNKNOWN_FLOW], 1);
	afx_free(f);
}

/* A switch packs several messages into one datagram: each is fed, in order; a broken one
 * ends the datagram (its length cannot be trusted) and is counted, the ones before it
 * stand. */
static void test_packed_datagram(void **state)
{
	struct agent_params p = afx_params("ffd");
	struct afx *f = (p.cc_params = "iw=40", afx_new(&p));
	struct agent_qp_reg r1 = afx_reg(0x11, 0x21), r2 = afx_reg(0x12, 0x22);
	struct fb_msg m1 = level_msg(0x21, r1.sport, 3), m2 = level_msg(0x22, r2.sport, 2);
	uint8_t buf[3 * FB_MAX_LEN];
	size_t n1, n2;
	(void)state;

	afx_register(f, &r1);
	afx_register(f, &r2);
	n1 = afx_encode(buf, &m1);
	n2 = afx_encode(buf + n1, &m2);
	assert_true(agent_feed_datagram(f->a, buf, n1 + n2, SWITCH, 4792, T0) & AGENT_RX_RATE);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 20000);    /* level 3: x0.5 */
	assert_int_equal(afx_slot(f, 0x12).cap_bytes, 30000);    /* level 2: x0.75 */
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_ACCEPTED], 2);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_DATAGRAMS], 1);

	/* The second message truncated: the first stands, the second is counted. */
	m1 = level_msg(0x21, r1.sport, 1);
	n1 = afx_encode(buf, &m1);
	n2 = afx_encode(buf + n1, &m2);
	assert_true(agent_feed_datagram(f->a, buf, n1 + n2 - 3, SWITCH, 4792, T0 + 1) &
		    AGENT_RX_ACCEPTED);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_ACCEPTED], 3);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_MAL_TRUNC], 1);
	afx_free(f);
}

/* ---- allow-list and tags ---- */

static void test_allow_and_auth(void **state)
{
	struct agent_params p = afx_params("ffd");
	struct afx *f;
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m = level_msg(0x21, r.sport, 3);
	struct qp_siphash_key good, bad;
	uint8_t buf[FB_MAX_LEN];
	size_t n;
	int sn;
	(void)state;

	p.have_key = true;
	p.cc_params = "iw=40";
	for (unsigned i = 0; i < 16; i++)
		p.key[i] = (uint8_t)i;
	f = afx_new(&p);
	afx_register(f, &r);
	qp_siphash_key_load(&good, p.key);
	p.key[0] ^= 1;
	qp_siphash_key_load(&bad, p.key);
	/* allowed source, no tag: rejected */
	assert_int_equal(afx_feed(f, &m, SWITCH, T0), 0);
	/* wrong key: rejected */
	n = afx_encode(buf, &m);
	sn = fb_auth_sign(buf, sizeof(buf), n, &bad, 7, T0);
	assert_true(sn > 0);
	assert_int_equal(agent_feed_datagram(f->a, buf, (size_t)sn, SWITCH, 4792, T0), 0);
	/* right key, source outside 10.0.0.0/24: rejected */
	n = afx_encode(buf, &m);
	sn = fb_auth_sign(buf, sizeof(buf), n, &good, 7, T0);
	assert_int_equal(agent_feed_datagram(f->a, buf, (size_t)sn, 0x0b000001u, 4792, T0), 0);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 40000);
	/* one flipped bit in a signed message: rejected */
	buf[20] ^= 0x10;
	assert_int_equal(agent_feed_datagram(f->a, buf, (size_t)sn, SWITCH, 4792, T0), 0);
	buf[20] ^= 0x10;
	/* right key, allowed source: accepted, and our ack is signed too */
	assert_true(agent_feed_datagram(f->a, buf, (size_t)sn, SWITCH, 4792, T0) & AGENT_RX_RATE);
	assert_int_equal(afx_slot(f, 0x11).cap_bytes, 20000);
	{
		struct agent_dgram d;
		assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
		assert_int_equal(fb_auth_verify(d.buf, d.len, &good, NULL, NULL), 0);
		assert_int_equal(fb_auth_verify(d.buf, d.len, &bad, NULL, NULL), -EACCES);
	}
	const uint64_t *c = agent_counters(f->a);
	assert_int_equal(c[AGENT_C_FB_REJ_NOTAG], 1);
	assert_int_equal(c[AGENT_C_FB_REJ_TAG], 2);
	assert_int_equal(c[AGENT_C_FB_REJ_SOURCE], 1);
	assert_int_equal(c[AGENT_C_FB_ACCEPTED], 1);
	print_message("rejected: notag %llu, tag %llu, source %llu; accepted %llu; last log: %s\n",
		      (unsigned long long)c[AGENT_C_FB_REJ_NOTAG],
		      (unsigned long long)c[AGENT_C_FB_REJ_TAG],
		      (unsigned long long)c[AGENT_C_FB_REJ_SOURCE],
		      (unsigned long long)c[AGENT_C_FB_ACCEPTED], f->lastlog);
	afx_free(f);
}

/* ---- malformed and random datagrams: counted by kind, logged once, nothing changes --- */

static void test_malformed_and_fuzz(void **state)
{
	struct agent_params p = afx_params("ffd");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m = level_msg(0x21, r.sport, 0);
	uint8_t good[FB_MAX_LEN], buf[FB_MAX_LEN];
	size_t n;
	uint64_t seed = 42, sum = 0;
	const uint64_t *c = agent_counters(f->a);
	unsigned logs_before;
	(void)state;

	afx_register(f, &r);
	n = afx_encode(good, &m);
	memcpy(buf, good, n);
	buf[0] = 0;                      /* magic */
	agent_feed_datagram(f->a, buf, n, SWITCH, 1, T0);
	agent_feed_datagram(f->a, good, 5, SWITCH, 1, T0);  /* truncated */
	memcpy(buf, good, n);
	buf[3] = 99;                     /* type */
	agent_feed_datagram(f->a, buf, n, SWITCH, 1, T0);
	memcpy(buf, good, n);
	buf[8 + 22] = 5;                 /* level 5 */
	agent_feed_datagram(f->a, buf, n, SWITCH, 1, T0);
	assert_int_equal(c[AGENT_C_FB_MAL_PROTO], 1);
	assert_int_equal(c[AGENT_C_FB_MAL_TRUNC], 1);
	assert_int_equal(c[AGENT_C_FB_MAL_TYPE], 1);
	assert_int_equal(c[AGENT_C_FB_MAL_FIELD], 1);
	print_message("last malformed log: %s\n", f->lastlog);
	/* 20000 random and mutated datagrams (fixed seed); each is counted exactly once */
	logs_before = f->logs;
	for (unsigned i = 0; i < 20000; i++) {
		size_t len = test_rng(&seed) % (FB_MAX_LEN + 1);

		if (i % 2) {
			memcpy(buf, good, n);
			for (unsigned k = test_rng(&seed) % 4 + 1; k; k--)
				buf[test_rng(&seed) % n] ^= (uint8_t)(1u << (test_rng(&seed) % 8));
			len = i % 4 == 1 ? n : test_rng(&seed) % (n + 1);
		} else {
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)test_rng(&seed);
		}
		agent_feed_datagram(f->a, buf, len, SWITCH, 1, T0 + i);
	}
	for (int k = AGENT_C_FB_REJ_SOURCE; k <= AGENT_C_FB_MAL_OVERSIZE; k++)
		sum += c[k];
	assert_int_equal(c[AGENT_C_FB_DATAGRAMS], 20004);
	assert_int_equal(sum + c[AGENT_C_FB_ACCEPTED], 20004);
	/* logged once per kind at most, never per datagram */
	assert_true(f->logs - logs_before <= AGENT_C_COUNT);
	print_message("fuzz: accepted %llu, proto %llu, trunc %llu, field %llu, type %llu; "
		      "%u log lines\n", (unsigned long long)c[AGENT_C_FB_ACCEPTED],
		      (unsigned long long)c[AGENT_C_FB_MAL_PROTO],
		      (unsigned long long)c[AGENT_C_FB_MAL_TRUNC],
		      (unsigned long long)c[AGENT_C_FB_MAL_FIELD],
		      (unsigned long long)c[AGENT_C_FB_MAL_TYPE], f->logs - logs_before);
	afx_free(f);
}

/* ---- echo role; INT to the sender with PSN extension ---- */

static void test_echo_and_int(void **state)
{
	struct agent_params p = afx_params("idcc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct fb_msg m, got;
	struct agent_dgram d;
	struct agent_qp_view v;
	qp_rate_bps before;
	(void)state;

	afx_register(f, &r);
	/* data B -> A (dest QP 0x11 is ours) delivered to us: echoed to B's agent */
	m = int_msg(HOST_B, HOST_A, 0x11, 5, 1000, 1000);
	m.flags = FB_F_TO_RECEIVER;
	assert_true(afx_feed(f, &m, SWITCH, T0) & AGENT_RX_TX);
	assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
	assert_int_equal(d.dst_ip, HOST_B);
	assert_int_equal(d.dst_port, FB_PORT);
	assert_int_equal(fb_decode(&got, d.buf, d.len), 0);
	assert_int_equal(got.type, FB_T_ECHO);
	assert_int_equal(got.flags, 0);
	assert_memory_equal(&got.u.int_report, &m.u.int_report, sizeof(m.u.int_report));
	/* a report for a QP we do not have: counted, not echoed */
	m.u.int_report.flow.dest_qp = 0x99;
	assert_int_equal(afx_feed(f, &m, SWITCH, T0) & AGENT_RX_TX, 0);
	/* our data A -> B: reports with a deep queue cut idcc's rate; PSNs wrap */
	before = afx_slot(f, 0x11).rate_bps;
	for (unsigned i = 0; i < 40; i++) {
		uint32_t psn = (0xfffff0u + i * 4) & 0xffffff;
		qp_time_ns t = T0 + (i + 1) * 2 * QP_NS_PER_US;

		m = int_msg(HOST_A, HOST_B, 0x21, psn, 200000, t);
		afx_feed(f, &m, SWITCH, t);
	}
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.psn64, (1ULL << 24) + 0xfffff0u + 39 * 4);
	/* a report from before the wrap does not move the highest PSN back */
	m = int_msg(HOST_A, HOST_B, 0x21, 0xfffff4u, 200000, T0 + 100 * QP_NS_PER_US);
	afx_feed(f, &m, SWITCH, T0 + 100 * QP_NS_PER_US);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.psn64, (1ULL << 24) + 0xfffff0u + 39 * 4);
	assert_true(afx_slot(f, 0x11).rate_bps < before);
	assert_int_equal(v.queue_bytes, 200000);
	/* 200 kB at 10 Gb/s is 160 us of queueing on top of the 10 us base */
	assert_int_equal(v.rtt_ns, 170 * QP_NS_PER_US);
	print_message("idcc under a 200 kB queue: %llu -> %llu b/s; rtt %llu ns; util %.2f; "
		      "psn64 %llu\n", (unsigned long long)before,
		      (unsigned long long)afx_slot(f, 0x11).rate_bps, (unsigned long long)v.rtt_ns,
		      v.utilization, (unsigned long long)v.psn64);
	afx_free(f);
}

/* ---- HPCC's byte sequences from PSNs: a full update once per window of data ---- */

/* The sender's real sequence, as the in-process host reports it: @ahead packets past
 * the PSN of the report being handled (0 = not known: the agent estimates). */
static uint32_t real_psn;
static bool real_known;

static bool fx_snd_psn(void *arg, uint32_t qpn, uint32_t *psn)
{
	(void)arg;
	(void)qpn;
	*psn = real_psn;
	return real_known;
}

/* How the sender's sequence reaches the agent: the in-process callback, or TXSTATE (the
 * posted PSN a program's verbs layer reports over the control socket, agent_qp_txstate). */
enum seq_via { VIA_CALLBACK, VIA_TXSTATE };

/* HPCC over 80 one-MTU reports from PSN @base up, the sender's sequence @ahead packets past
 * each (0 = not known) delivered @via; returns the full updates, checking each where the
 * report's seq passes the previous snd_nxt. */
static unsigned seq_cadence_at(uint32_t base, uint32_t ahead, enum seq_via via)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f;
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	const uint64_t mtu = 1000, t_ns = 10 * QP_NS_PER_US, dt = 2 * QP_NS_PER_US;
	uint64_t last_update = 0, hop_tx[5] = { 0 };
	qp_rate_bps rate;
	unsigned updates = 0;

	p.cc_params = "fast_react=0";  /* the rate moves at full updates only: observable */
	p.snd_psn = via == VIA_CALLBACK ? fx_snd_psn : NULL;
	real_known = ahead != 0;
	f = afx_new(&p);
	afx_register(f, &r);
	rate = afx_slot(f, 0x11).rate_bps;
	assert_int_equal(rate, 10 * QP_GBPS);
	for (uint32_t i = 0; i < 80; i++) {
		/* 5 hops, the third overloaded (120% of 10G) with a standing queue */
		struct fb_msg m = { .type = FB_T_INT };
		uint64_t psn64 = (1ULL << 24) + base + i, seq = psn64 * mtu;
		uint64_t cap = qp_bytes_in(rate, t_ns) + mtu - 1;
		uint64_t snd_nxt = ahead ? (psn64 + ahead) * mtu : (psn64 + 1) * mtu + cap;
		bool predicted = i > 0 && seq > last_update;
		qp_rate_bps now_rate;

		m.u.int_report.flow = (struct fb_flow){ HOST_A, HOST_B, r.sport, 0x21 };
		m.u.int_report.psn = (base + i) & 0xffffffu;
		m.u.int_report.nhops = 5;
		for (unsigned h = 0; h < 5; h++) {
			double util = h == 2 ? 1.2 : 0.5;

			hop_tx[h] += (uint64_t)(util * 10e9 * dt / 8e9);
			m.u.int_report.hops[h] = (struct qp_int_hop){
				.switch_id = 10 + h, .port = 1, .ts_ns = T0 + i * dt,
				.tx_bytes = hop_tx[h], .qlen_bytes = h == 2 ? 1500 : 0,
				.link_bps = 10 * QP_GBPS };
		}
		if (i == 0 || predicted)
			last_update = snd_nxt;  /* baseline, then each full update */
		real_psn = (base + i + ahead) & 0xffffffu;
		if (via == VIA_TXSTATE && ahead)
			assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){
				.qpn = 0x11, .psn = real_psn, .enforce = AGENT_ENF_GATE }), 0);
		afx_feed(f, &m, SWITCH, T0 + i * dt);
		now_rate = afx_slot(f, 0x11).rate_bps;
		if (predicted != (now_rate != rate))
			fail_msg("report %u: full update predicted %d, rate %llu -> %llu", i,
				 predicted, (unsigned long long)rate, (unsigned long long)now_rate);
		updates += predicted;
		rate = now_rate;
	}
	assert_true(rate < 10 * QP_GBPS);
	print_message("hpcc over 80 one-MTU reports from psn 0x%06x (5 hops, one at 120%%), "
		      "snd_nxt %s: %u full updates, each where seq passed the previous snd_nxt; "
		      "rate 10G -> %llu b/s\n", base, !ahead ? "estimated" : via == VIA_CALLBACK
		      ? "the sender's own" : "the posted PSN (TXSTATE)", updates,
		      (unsigned long long)rate);
	/* a figure ahead of every report is never stale */
	assert_int_equal(agent_counters(f->a)[AGENT_C_TXPSN_STALE], 0);
	afx_free(f);
	return updates;
}

static unsigned seq_cadence(uint32_t ahead)
{
	return seq_cadence_at(100, ahead, VIA_CALLBACK);
}

static void test_hpcc_seq_cadence(void **state)
{
	(void)state;
	assert_true(seq_cadence(0) >= 4);
}

/* With the sender's real sequence 20 packets ahead of each report (the host's RC QP),
 * a full update comes every 20 reports, not once per estimated window (9 updates in 80
 * reports): seq passes the snd_nxt the sender really had at the last one. */
static void test_hpcc_seq_from_sender(void **state)
{
	unsigned est, real;
	(void)state;

	est = seq_cadence(0);
	real = seq_cadence(20);
	assert_int_equal(real, 79 / 20);   /* reports 20, 40, 60 after the baseline at 0 */
	assert_true(real != est);
}

/* A registered ibv QP's program reports the PSN it posted (TXSTATE): HPCC's snd_nxt
 * follows it exactly as the in-process sequence (an update every 20 reports), across the
 * 24-bit wrap too, and the view shows who enforces the rate. */
static void test_hpcc_seq_from_txstate(void **state)
{
	(void)state;
	assert_int_equal(seq_cadence_at(100, 20, VIA_TXSTATE), 79 / 20);
	assert_int_equal(seq_cadence_at(0xffffe0u, 20, VIA_TXSTATE), 79 / 20);
	assert_int_equal(seq_cadence_at(0xffffe0u, 20, VIA_CALLBACK), 79 / 20);
	assert_int_equal(seq_cadence_at(100, 0, VIA_TXSTATE), seq_cadence(0));
}

/* A posted PSN at or behind a report's PSN (the report is about a packet posted after
 * the figure was sent) is stale: counted, and that report's snd_nxt is the estimate. A
 * fresh one is used again at once. TXSTATE for no QP or out of range is refused. */
static void test_txstate_stale_and_view(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct agent_qp_view v;
	struct afx *f;
	struct fb_msg m;
	(void)state;

	f = afx_new(&p);
	afx_register(f, &r);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.enforce, AGENT_ENF_GATE);
	assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){
		.qpn = 0x11, .psn = 500, .enforce = AGENT_ENF_NIC }), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.enforce, AGENT_ENF_NIC);
	for (uint32_t psn = 495; psn < 505; psn++) {
		m = int_msg(HOST_A, HOST_B, 0x21, psn, 0, T0 + psn * QP_NS_PER_US);
		afx_feed(f, &m, SWITCH, T0 + psn * QP_NS_PER_US);
	}
	/* 500..504 reached or passed the posted 500: five stale reports */
	assert_int_equal(agent_counters(f->a)[AGENT_C_TXPSN_STALE], 5);
	assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){
		.qpn = 0x11, .psn = 600, .enforce = AGENT_ENF_NIC }), 0);
	m = int_msg(HOST_A, HOST_B, 0x21, 505, 0, T0 + QP_NS_PER_MS);
	afx_feed(f, &m, SWITCH, T0 + QP_NS_PER_MS);
	assert_int_equal(agent_counters(f->a)[AGENT_C_TXPSN_STALE], 5);
	assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){ .qpn = 0x99 }), -ENOENT);
	assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){
		.qpn = 0x11, .psn = 0x1000000 }), -EINVAL);
	assert_int_equal(agent_qp_txstate(f->a, &(struct ctl_txstate){
		.qpn = 0x11, .enforce = AGENT_ENF_COUNT }), -EINVAL);
	assert_string_equal(agent_counter_name(AGENT_C_TXPSN_STALE), "txpsn_stale");
	afx_free(f);
}

/* ---- application events, timers, overrides ---- */

static void test_events_timers_overrides(void **state)
{
	struct agent_params p = afx_params("dcqcn");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct cc_event ev = { .type = CC_EV_CNP };
	struct agent_qp_view v;
	char err[200];
	qp_time_ns t;
	(void)state;

	afx_register(f, &r);
	assert_int_equal(agent_next_ns(f->a), QP_TIME_NEVER);
	assert_int_equal(agent_qp_event(f->a, 0x11, &ev, T0), 0);
	assert_int_equal(afx_slot(f, 0x11).rate_bps, 5 * QP_GBPS);
	assert_int_equal(agent_qp_event(f->a, 0x99, &ev, T0), -ENOENT);
	/* dcqcn's recovery runs from agent_poll at the deadlines the core reports */
	t = agent_next_ns(f->a);
	assert_true(t > T0 && t < T0 + QP_NS_PER_MS);
	for (unsigned i = 0; i < 200 && (t = agent_next_ns(f->a)) < T0 + 2 * QP_NS_PER_MS; i++)
		agent_poll(f->a, t);
	assert_true(afx_slot(f, 0x11).rate_bps > 5 * QP_GBPS);
	print_message("dcqcn after a CNP: 5G, 2 ms later %llu b/s\n",
		      (unsigned long long)afx_slot(f, 0x11).rate_bps);
	/* manual rate: published, algorithm keeps its own target; logged */
	assert_int_equal(agent_set_rate(f->a, 0x11, 123 * QP_MBPS, 77, t, err, sizeof(err)), 0);
	assert_int_equal(afx_slot(f, 0x11).rate_bps, 123 * QP_MBPS);
	assert_non_null(strstr(f->lastlog, "pid 77"));
	print_message("override log: %s\n", f->lastlog);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_true(v.override && v.target_bps != v.rate_bps);
	assert_int_equal(agent_set_rate(f->a, 0x11, 20 * QP_GBPS, 77, t, err, sizeof(err)),
			 -EINVAL);
	print_message("bad override: %s\n", err);
	assert_int_equal(agent_set_rate(f->a, 0x11, 0, 77, t, err, sizeof(err)), 0);
	assert_int_equal(afx_slot(f, 0x11).rate_bps, v.target_bps);
	/* algorithm switch: none sends at line rate */
	assert_int_equal(agent_set_algo(f->a, 0x11, "none", "", 77, t, err, sizeof(err)), 0);
	assert_int_equal(afx_slot(f, 0x11).rate_bps, 10 * QP_GBPS);
	assert_int_equal(agent_set_algo(f->a, 0x11, "nosuch", "", 77, t, err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_string_equal(v.reg.algo, "none");
	/* application counters */
	assert_int_equal(agent_qp_stats(f->a, 0x11, 12345, 6), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	assert_int_equal(v.tx_bytes, 12345);
	assert_int_equal(v.retransmissions, 6);
	afx_free(f);
}

static void test_create_checks(void **state)
{
	struct agent_params p = afx_params("nosuch");
	struct qp_ratetable *rt;
	char err[256];
	(void)state;

	p.max_qps = 8;
	assert_int_equal(qp_ratetable_create_mem(8, &rt, err, sizeof(err)), 0);
	assert_null(agent_create(&p, rt, 0, err, sizeof(err)));
	print_message("%s\n", err);
	p = afx_params("ffd");
	assert_null(agent_create(&p, rt, 0, err, sizeof(err)));  /* 16 QPs, 8 slots */
	assert_non_null(strstr(err, "8 slots"));
	print_message("%s\n", err);
	p.max_qps = 8;
	p.cc_params = "down=2";
	assert_null(agent_create(&p, rt, 0, err, sizeof(err)));
	print_message("%s\n", err);
	qp_ratetable_close(rt);
	struct agent_net n;
	assert_int_equal(agent_net_parse("10.1.2.0/24", &n), 0);
	assert_true(agent_net_match(&n, 0x0a0102ffu));
	assert_false(agent_net_match(&n, 0x0a0103ffu));
	assert_int_equal(agent_net_parse("any", &n), 0);
	assert_true(agent_net_match(&n, 0x01020304u));
	assert_int_equal(agent_net_parse("10.1.2.256", &n), -EINVAL);
	assert_int_equal(agent_net_parse("10.1.2.0/33", &n), -EINVAL);
	assert_int_equal(agent_net_parse("10.1.2", &n), -EINVAL);
	assert_int_equal(agent_net_parse("10.1.2.3x", &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_rules),
		cmocka_unit_test(test_level_rate_and_ack),
		cmocka_unit_test(test_packed_datagram),
		cmocka_unit_test(test_allow_and_auth),
		cmocka_unit_test(test_malformed_and_fuzz),
		cmocka_unit_test(test_echo_and_int),
		cmocka_unit_test(test_hpcc_seq_cadence),
		cmocka_unit_test(test_hpcc_seq_from_sender),
		cmocka_unit_test(test_hpcc_seq_from_txstate),
		cmocka_unit_test(test_txstate_stale_and_view),
		cmocka_unit_test(test_events_timers_overrides),
		cmocka_unit_test(test_create_checks),
		cmocka_unit_test(test_flow_and_wire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
