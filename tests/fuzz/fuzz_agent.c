/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the agent core's feedback handling with time advancing (qpace/agent.h),
 * everything a network peer reaches: the allow-list, the tag (with a key, the script can
 * sign what it sends), decoding, the controllers of every algorithm, credit grants,
 * echoes, level acks, registrations (IPv4 and IPv6 flows: each family's lookup finds only
 * its own), manual rates and application events, and the timers
 * as the clock the input drives moves on (from microseconds to hours per step).
 *
 * The input is a script (fuzz_input.h): a first byte choosing the key, credits and the
 * default algorithm, then operations, each after a clock step. Properties: no crash, no
 * undefined behaviour (float->integer conversions included under clang); every registered
 * QP's published rate is above 0 and never above its link rate; the agent never holds more
 * QPs than its limit; every datagram it queues decodes (and carries a good tag with a key).
 * `make fuzz` builds and runs it; tests/fuzz/corpus/agent/ holds its seeds. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "qpace/agent.h"
#include "qpace/fb_auth.h"
#include "qpace/feedback.h"
#include "qpace/ratetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LOCAL 0x0a000001u    /* 10.0.0.1: this host */
#define PEER 0x0a000002u     /* 10.0.0.2 */
#define SWITCH 0x0a0000feu   /* 10.0.0.254 */
#define STRANGER 0xc0a80001u /* 192.168.0.1: not on the allow-list */
#define MAX_QPS 8u

static const char *const algos[] = { "", "hpcc", "acc", "dcqcn", "ffd", "idcc", "none",
				     "nosuch" };
static const char *const params[] = { "", "eta=0.5", "max_stage=0", "min_rate=1",
				      "rate=1", "bogus=1", "eta=", "t_inc=1ns" };
static const uint32_t ips[] = { LOCAL, PEER, SWITCH, STRANGER, 0 };
/* IPv6 flows' addresses (AGENT_QP_IPV6): two good ones, ::, an IPv4-mapped one */
static const uint8_t ips6[][16] = {
	{ 0xfe, 0x80, [15] = 1 }, { 0xfe, 0x80, [15] = 2 }, { 0 },
	{ [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
};
static const qp_rate_bps links[] = { QP_KBPS, QP_MBPS, 400 * QP_MBPS, 10 * QP_GBPS,
				     10000 * QP_GBPS, 7 };

struct run {
	struct agent *a;
	struct qp_siphash_key key;
	bool have_key;
	qp_time_ns now;
	uint64_t seq;                /* the last sequence signed as the peer */
	uint8_t buf[FB_MAX_LEN + 64];
};

static void feed(struct run *r, const uint8_t *buf, size_t len, uint32_t src)
{
	agent_feed_datagram(r->a, buf, len, src, FB_PORT, r->now);
}

/* Encode @m, sign it when a key is set (and the script asks), feed it. */
static void feed_msg(struct run *r, const struct fb_msg *m, uint32_t src, bool sign)
{
	int len = fb_encode(r->buf, sizeof(r->buf), m);

	if (len <= 0)
		return;
	if (r->have_key && sign) {
		/* As a signer does: the next sequence, max(last + 1, its clock); the agent's
		 * clock_offset_ns is 0 here, so the peer's clock is the agent's. */
		r->seq = r->seq + 1 > r->now ? r->seq + 1 : r->now;
		len = fb_auth_sign(r->buf, sizeof(r->buf), (size_t)len, &r->key, src, r->seq);
	}
	if (len > 0)
		feed(r, r->buf, (size_t)len, src);
}

/* A flow the agent knows (towards a registered QP), or one from the input. */
static struct fb_flow flow(struct fz *f)
{
	switch (fz_pick(f, 4)) {
	case 0:   /* QP 0x11 sends */
		return (struct fb_flow){ .src_ip = LOCAL, .dst_ip = PEER, .dest_qp = 0x21 };
	case 1:   /* QP 0x12 receives */
		return (struct fb_flow){ .src_ip = PEER, .dst_ip = LOCAL, .dest_qp = 0x12 };
	case 2:
		return (struct fb_flow){ .src_ip = LOCAL, .dst_ip = PEER, .dest_qp = 0x22 };
	default:
		return (struct fb_flow){ .src_ip = ips[fz_pick(f, 5)], .dst_ip = ips[fz_pick(f, 5)],
					 .sport = fz_u16(f), .dest_qp = fz_u32(f) & 0xffffff };
	}
}

static void op_int(struct run *r, struct fz *f)
{
	struct fb_msg m = { .type = fz_pick(f, 2) ? FB_T_INT : FB_T_ECHO };
	struct fb_int *t = &m.u.int_report;

	m.flags = fz_u8(f) & FB_F_TO_RECEIVER;
	t->flow = flow(f);
	t->psn = fz_u32(f) & 0xffffff;
	t->nhops = (uint8_t)(1 + fz_pick(f, QP_INT_MAX_HOPS));
	for (unsigned i = 0; i < t->nhops; i++) {
		/* the same hops as the last report unless the script says otherwise, times near
		 * now: what makes the utilization computed (and the overflow it had) reachable */
		t->hops[i] = (struct qp_int_hop){
			.switch_id = fz_u8(f) & 3, .port = fz_u8(f) & 1,
			.ts_ns = r->now - (fz_u16(f) & 0x7fff) * 1000ull + fz_u8(f),
			.tx_bytes = fz_u64(f), .qlen_bytes = fz_u32(f), .link_bps = fz_u64(f),
		};
	}
	feed_msg(r, &m, fz_pick(f, 2) ? SWITCH : PEER, fz_u8(f) & 1);
}

/* Any other message: its body from the input, its flow one the agent may know. */
static void op_msg(struct run *r, struct fz *f)
{
	struct fb_msg m = { .type = (uint8_t)(1 + fz_pick(f, FB_T_COUNT - 1)) };
	size_t got;
	const uint8_t *body = fz_bytes(f, sizeof(m.u), &got);
	struct fb_flow fl = flow(f);

	memcpy(&m.u, body, got);
	if (m.type == FB_T_NOTICE)
		m.u.notice.flow = fl;
	else if (m.type == FB_T_LEVEL)
		m.u.level.flow = fl;
	else if (m.type == FB_T_CREDIT)
		m.u.credit.flow = fl;
	else
		m.u.int_report.flow = fl;
	feed_msg(r, &m, ips[fz_pick(f, 4)], fz_u8(f) & 1);
}

static void op_raw(struct run *r, struct fz *f)
{
	uint32_t src = ips[fz_pick(f, 4)];
	size_t got;
	const uint8_t *p = fz_bytes(f, fz_u16(f) % (FB_MAX_LEN * 2), &got);

	feed(r, p, got, src);
}

static void op_register(struct run *r, struct fz *f)
{
	struct agent_qp_reg g = {
		.qpn = fz_u8(f) % 2 ? 0x13 + fz_pick(f, 8) : fz_u32(f),
		.peer_qpn = 0x23 + fz_pick(f, 8), .local_ip = ips[fz_pick(f, 5)],
		.peer_ip = ips[fz_pick(f, 5)], .sport = fz_u16(f), .flags = fz_u16(f),
		.mtu_bytes = fz_u8(f) % 2 ? 1024 : fz_u32(f),
		.link_bps = links[fz_pick(f, 6)],
		.base_rtt_ns = fz_u8(f) % 2 ? 10000 : fz_u64(f),
	};
	char err[256];

	snprintf(g.algo, sizeof(g.algo), "%s", algos[fz_pick(f, 8)]);
	if (g.algo[0])
		snprintf(g.params, sizeof(g.params), "%s", params[fz_pick(f, 8)]);
	if (g.flags & AGENT_QP_IPV6) {    /* an IPv6 flow: its addresses, good or not */
		memcpy(g.local_ip6, ips6[fz_pick(f, 4)], 16);
		memcpy(g.peer_ip6, ips6[fz_pick(f, 4)], 16);
		if (fz_u8(f) % 2)
			g.local_ip = g.peer_ip = 0;
	}
	agent_register(r->a, &g, 1 + fz_pick(f, 2), 4242, r->now, err, sizeof(err));
	{	/* each family's lookup finds only its own */
		uint32_t qpn;
		struct agent_qp_view v;

		if (agent_qp_find_flow6(r->a, ips6[0], ips6[1], g.peer_qpn, &qpn) == 0 &&
		    (agent_qp_view(r->a, qpn, &v) || !(v.reg.flags & AGENT_QP_IPV6)))
			abort();
		if (agent_qp_find_flow(r->a, g.local_ip, g.peer_ip, g.peer_qpn, &qpn) == 0 &&
		    (agent_qp_view(r->a, qpn, &v) || (v.reg.flags & AGENT_QP_IPV6)))
			abort();
	}
}

static uint32_t some_qpn(struct fz *f)
{
	return fz_u8(f) % 4 ? 0x11 + fz_pick(f, 10) : fz_u32(f);
}

static void op_control(struct run *r, struct fz *f)
{
	struct cc_event ev = { 0 };
	char err[256];
	uint32_t qpn = some_qpn(f);

	switch (fz_pick(f, 5)) {
	case 0:
		agent_unregister(r->a, qpn, r->now);
		break;
	case 1:
		agent_set_rate(r->a, qpn, fz_u64(f) >> fz_pick(f, 64), 1, r->now, err,
			       sizeof(err));
		break;
	case 2:
		agent_set_algo(r->a, qpn, algos[fz_pick(f, 8)], params[fz_pick(f, 8)], 1,
			       r->now, err, sizeof(err));
		break;
	case 3:
		ev.type = (enum cc_event_type)fz_pick(f, CC_EV_COUNT + 1);
		ev.u.rtt.rtt_ns = fz_u64(f);   /* one word serves every payload of an app event */
		agent_qp_event(r->a, qpn, &ev, r->now);
		break;
	default:
		agent_unregister_owner(r->a, 1 + fz_pick(f, 2), r->now);
	}
}

/* What the agent queued must decode; signed, with a key. */
static void drain(struct run *r)
{
	struct agent_dgram out[16];
	unsigned n;

	while ((n = agent_tx_take(r->a, out, 16)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct fb_msg m;

			if (fb_decode(&m, out[i].buf, out[i].len) ||
			    (r->have_key && fb_auth_verify(out[i].buf, out[i].len, &r->key, NULL, NULL)))
				abort();
		}
	}
}

static void check(struct run *r)
{
	if (agent_qp_count(r->a) > MAX_QPS)
		abort();
	for (uint32_t i = 0; i < agent_max_qps(r->a); i++) {
		struct agent_qp_view v;

		if (agent_qp_view_at(r->a, i, &v))
			continue;
		if (!v.rate_bps || v.rate_bps > v.reg.link_bps)
			abort();
	}
}

/* A clock step: mostly short, sometimes long enough for every timer and expiry. */
static void step(struct run *r, struct fz *f)
{
	uint8_t s = fz_u8(f);

	r->now += (uint64_t)(s & 0x3f) << ((s >> 6) * 10);   /* ns, us, ms or s scale */
	if (s == 0xff)
		r->now += (uint64_t)fz_u16(f) * QP_NS_PER_S;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t raw_key[QP_SIPHASH_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8,
							      9, 10, 11, 12, 13, 14, 15, 16 };
	struct fz f = { data, size };
	struct agent_params p;
	struct qp_ratetable *t;
	struct run r = { .now = 1000 * QP_NS_PER_S };
	char err[256];
	uint8_t cfg = fz_u8(&f);

	agent_params_default(&p);
	p.max_qps = MAX_QPS;
	p.cc = algos[1 + cfg % 6];
	p.credits = cfg & 0x40;
	p.tx_queue = 64;
	p.seed = 7;
	p.allow[0] = (struct agent_net){ 0x0a000000u, 24 };
	p.nallow = 1;
	r.have_key = p.have_key = cfg & 0x80;
	memcpy(p.key, raw_key, sizeof(raw_key));
	qp_siphash_key_load(&r.key, raw_key);
	if (qp_ratetable_create_mem(MAX_QPS, &t, err, sizeof(err)))
		abort();
	r.a = agent_create(&p, t, r.now, err, sizeof(err));
	if (!r.a)
		abort();
	/* Two QPs to begin with: 0x11 sends to the peer's 0x21, 0x12 receives from its 0x22. */
	for (uint32_t i = 0; i < 2; i++) {
		struct agent_qp_reg g = { .qpn = 0x11 + i, .peer_qpn = 0x21 + i,
					  .local_ip = LOCAL, .peer_ip = PEER, .mtu_bytes = 1024,
					  .link_bps = links[(cfg >> 3) % 5],
					  .base_rtt_ns = 10 * QP_NS_PER_US,
					  .flags = i ? AGENT_QP_RECEIVER : 0 };

		if (agent_register(r.a, &g, 1, 4242, r.now, err, sizeof(err)))
			abort();
	}
	while (f.n) {
		step(&r, &f);
		switch (fz_pick(&f, 8)) {
		case 0:
		case 1:
		case 2:
			op_int(&r, &f);
			break;
		case 3:
			op_msg(&r, &f);
			break;
		case 4:
			op_raw(&r, &f);
			break;
		case 5:
			op_register(&r, &f);
			break;
		case 6:
			op_control(&r, &f);
			break;
		default:
			agent_poll(r.a, r.now);
		}
		if (r.now >= agent_next_ns(r.a))
			agent_poll(r.a, r.now);
		drain(&r);
		check(&r);
	}
	agent_destroy(r.a);
	qp_ratetable_close(t);
	return 0;
}
