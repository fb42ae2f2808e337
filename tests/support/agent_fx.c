/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent-core fixture: see agent_fx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc.h"
#include "agent_fx.h"

static void afx_log(void *arg, enum agent_log_kind kind, const char *line)
{
	struct afx *f = arg;

	(void)kind;
	snprintf(f->lastlog, sizeof(f->lastlog), "%s", line);
	f->logs++;
}

struct afx *afx_new(struct agent_params *p)
{
	static struct afx f;
	char err[256] = "";

	memset(&f, 0, sizeof(f));
	assert_int_equal(qp_ratetable_create_mem(64, &f.rt, err, sizeof(err)), 0);
	p->log = afx_log;
	p->log_arg = &f;
	f.a = agent_create(p, f.rt, T0, err, sizeof(err));
	if (!f.a)
		fail_msg("agent_create: %s", err);
	return &f;
}

void afx_free(struct afx *f)
{
	agent_destroy(f->a);
	qp_ratetable_close(f->rt);
}

struct agent_params afx_params(const char *cc)
{
	struct agent_params p;

	agent_params_default(&p);
	p.max_qps = 16;
	p.cc = cc;
	p.allow[0] = (struct agent_net){ 0x0a000000u, 24 }; /* 10.0.0.0/24 */
	return p;
}

struct agent_qp_reg afx_reg(uint32_t qpn, uint32_t peer_qpn)
{
	struct agent_qp_reg r = {
		.qpn = qpn, .peer_qpn = peer_qpn, .local_ip = HOST_A, .peer_ip = HOST_B,
		.sport = 0xc000 + (uint16_t)qpn, .mtu_bytes = 1000, .link_bps = 10 * QP_GBPS,
		.base_rtt_ns = 10 * QP_NS_PER_US,
	};
	return r;
}

void afx_register(struct afx *f, const struct agent_qp_reg *r)
{
	char err[256] = "";

	struct agent_qp_view v;
	struct agent_dgram d;
	struct fb_msg m;

	if (agent_register(f->a, r, 1, 4242, T0, err, sizeof(err)))
		fail_msg("register: %s", err);
	/* A QP whose algorithm takes INT asks the switches on its path for it, at once (the
	 * datagram is taken here, so the tests see only what their own events cause); an
	 * IPv6 flow asks none (qpace-switch's telemetry is IPv4). */
	assert_int_equal(agent_qp_view(f->a, r->qpn, &v), 0);
	if (!(cc_needs(cc_find(v.reg.algo)) & CC_NEED_INT) || (v.reg.flags & AGENT_QP_IPV6)) {
		assert_int_equal(agent_tx_pending(f->a), 0);
		return;
	}
	assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
	assert_int_equal(d.dst_ip, r->peer_ip);
	assert_int_equal(d.dst_port, FB_PORT);
	assert_int_equal(fb_decode(&m, d.buf, d.len), 0);
	assert_int_equal(m.type, FB_T_WANT);
	/* its data flow: a reader's comes from the peer to its own QP */
	assert_int_equal(m.u.want.flow.src_ip,
			 r->flags & AGENT_QP_READER ? r->peer_ip : r->local_ip);
	assert_int_equal(m.u.want.flow.dest_qp,
			 r->flags & AGENT_QP_READER ? r->qpn : r->peer_qpn);
	assert_true(m.u.want.int_every >= 1);
	f->wants++;
}

struct qp_rate_entry afx_slot(struct afx *f, uint32_t qpn)
{
	struct qp_rate_entry e;
	uint32_t hint = 0;

	assert_int_equal(qp_ratetable_lookup(f->rt, qpn, &hint, &e), 0);
	return e;
}

size_t afx_encode(uint8_t *buf, const struct fb_msg *m)
{
	int n = fb_encode(buf, FB_MAX_LEN, m);

	assert_true(n > 0);
	return (size_t)n;
}

unsigned afx_feed(struct afx *f, const struct fb_msg *m, uint32_t src, qp_time_ns now)
{
	uint8_t buf[FB_MAX_LEN];
	size_t n = afx_encode(buf, m);

	return agent_feed_datagram(f->a, buf, n, src, 4792, now);
}
