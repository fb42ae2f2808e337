/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCEv2 over IPv6 through the real switch code (sw_ingress, sw_fabric_emit) in injected
 * time: two senders on IPv6 link-local addresses write at the line rate into one receiver
 * through a 10 Gb/s port with INT (direct, every flow), ECN (RED), early notices and
 * congestion levels on.
 *   - every data frame reaches the receiver with its ICRC intact; those RED marked carry
 *     CE in their traffic class (and nothing else of the header changed)
 *   - INT reports, notices and levels go to each sender's IPv4 address (the one the switch
 *     learned for its MAC: its agent listens on IPv4), flagged FB_F_IPV6, naming the
 *     flow by its IPv6 addresses
 *   - an agent core with the sender's IPv6 QP takes them (its hpcc sees the INT; an IPv4
 *     QP whose addresses are the IPv6 ones' last bytes takes none), and under ffd the ack
 *     of the level in force (flagged too) is taken by the switch
 *   - the notices count two flows in the port (their folded keys apart) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "frame6.h"
#include "qpace/addr.h"
#include "qpace/bytes.h"
#include "qpace/frame.h"
#include "io.h"
#include "sw.h"

#define PAYLOAD 1024
#define FRAMES 200                 /* per sender */
#define DEST_QP 0x11

struct host {
	int port;
	uint8_t mac[6];
	uint32_t ip;                   /* its IPv4 address (telemetry's) */
	uint8_t ip6[16];               /* fe80::<mac as EUI-64> */
	/* what reached it */
	unsigned data, ce, icrc_bad, hdr_changed;
	unsigned ints, notices, levels, v6_flagged, wrong_addr, not_to_ip, max_flows;
	uint8_t dgrams[512][1500];
	size_t dgram_len[512];
	unsigned ndgrams;
};

static struct {
	struct sw_conf conf;
	struct sw_fabric *f;
	struct host h[3];              /* A and B send, C receives */
	uint8_t sent_hdr[FRAMES * 2][FRAME_IPV6_HLEN];
} W;

static struct host *host_of_io(struct sw_io *io)
{
	for (int i = 0; i < 3; i++)
		if (W.f->sw[0]->ports[W.h[i].port].io == io)
			return &W.h[i];
	fail_msg("a frame for a port with no host");
	return NULL;
}

static void take_telemetry(struct host *h, const uint8_t *b, const struct frame_parsed *p)
{
	struct fb_msg m;

	h->not_to_ip += p->ip.dst != h->ip;
	if (h->ndgrams < 512) {
		memcpy(h->dgrams[h->ndgrams], b + p->payload_off, p->payload_len);
		h->dgram_len[h->ndgrams++] = p->payload_len;
	}
	for (size_t off = 0; off < p->payload_len; off += m.length) {
		assert_int_equal(fb_decode(&m, b + p->payload_off + off, p->payload_len - off), 0);
		h->ints += m.type == FB_T_INT;
		h->notices += m.type == FB_T_NOTICE;
		h->levels += m.type == FB_T_LEVEL;
		if (m.type == FB_T_NOTICE && m.u.notice.flows > h->max_flows)
			h->max_flows = m.u.notice.flows;
		if (!(m.flags & FB_F_IPV6))
			continue;
		h->v6_flagged++;
		/* every body starts with the flow */
		h->wrong_addr += memcmp(m.u.int_report.flow.src6, h->ip6, 16) ||
				 memcmp(m.u.int_report.flow.dst6, W.h[2].ip6, 16) ||
				 m.u.int_report.flow.dest_qp != DEST_QP;
	}
}

static int to_host(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	struct host *h = host_of_io(io);

	for (unsigned i = 0; i < n; i++) {
		const uint8_t *b = frames[i].iov_base;
		struct frame_parsed p;

		assert_int_equal(frame_parse(&p, b, frames[i].iov_len), 0);
		if (p.layers & FRAME_L_ROCE) {
			assert_true(p.layers & FRAME_L_IPV6);
			h->data++;
			h->ce += frame_ecn_of(&p) == FRAME_ECN_CE;
			h->icrc_bad += !frame_icrc_ok(b, &p);
			/* the frame's PSN says which one it was; only the ECN bits may differ */
			uint8_t want[FRAME_IPV6_HLEN];
			memcpy(want, W.sent_hdr[p.bth.psn], sizeof(want));
			want[1] = (uint8_t)((want[1] & ~0x30u) | (b[FRAME_ETH_HLEN + 1] & 0x30u));
			h->hdr_changed += memcmp(want, b + FRAME_ETH_HLEN, sizeof(want)) != 0;
		} else if ((p.layers & FRAME_L_UDP) && p.udp.dport == FB_PORT) {
			take_telemetry(h, b, &p);
		}
	}
	return (int)n;
}

static const struct sw_io_ops host_ops = { .name = "test-host", .send = to_host };

static void setting(const char *k, const char *v)
{
	char err[300];

	if (sw_conf_setting(&W.conf.def, k, v, err, sizeof(err)))
		fail_msg("%s=%s: %s", k, v, err);
}

static void world_build(void)
{
	struct sw_switch_conf *s;
	char err[300];

	memset(&W, 0, sizeof(W));
	sw_conf_defaults(&W.conf);
	setting("rate", "10G");
	setting("buffer", "1M");
	setting("delay", "1us");
	setting("int", "direct");
	setting("int-flows", "all");
	setting("ecn", "8K,32K,1");
	setting("early", "16K");
	setting("levels", "8K,32K,64K");
	W.conf.tx_early_ns = 0;
	s = sw_conf_add_switch(&W.conf);
	assert_non_null(s);
	snprintf(s->name, sizeof(s->name), "s1");
	s->id = 1;
	s->def = W.conf.def;
	for (int i = 0; i < 3; i++) {
		struct sw_port_conf *p = sw_conf_add_port(s);
		struct host *h = &W.h[i];

		snprintf(p->name, sizeof(p->name), "p%d", i);
		p->kind = SW_PORT_UDP;
		p->local = qp_sockaddr_in(INADDR_LOOPBACK, 0);   /* never used: ops replaced */
		p->remote = qp_sockaddr_in(INADDR_LOOPBACK, 9);
		p->q = s->def.q;
		p->telem = s->def.telem;
		p->pfc = s->def.pfc;
		assert_non_null(p);
		h->port = s->nports - 1;
		h->mac[0] = 0x02;
		h->mac[5] = (uint8_t)(0x0a + i);
		h->ip = 0x0a000001u + (uint32_t)i;
		h->ip6[0] = 0xfe;
		h->ip6[1] = 0x80;
		h->ip6[8] = 0x00;   /* 02 with the U/L bit flipped */
		memcpy(h->ip6 + 9, h->mac + 1, 2);
		h->ip6[11] = 0xff;
		h->ip6[12] = 0xfe;
		memcpy(h->ip6 + 13, h->mac + 3, 3);
	}
	sw_conf_finish(&W.conf);
	W.f = sw_fabric_create(&W.conf, err, sizeof(err));
	if (!W.f)
		fail_msg("fabric: %s", err);
	for (int i = 0; i < W.f->nio; i++)
		W.f->io_ports[i]->io->ops = &host_ops;
}

/* An IPv4 datagram from @h (what teaches the switch its IPv4 address and port). */
static void hello(struct host *h, const struct host *to, qp_time_ns now)
{
	struct frame_addr src = { .ip = h->ip, .port = 9 }, dst = { .ip = to->ip, .port = 9 };
	uint8_t f[128], one = 1;
	int n;

	memcpy(src.mac, h->mac, 6);
	memcpy(dst.mac, to->mac, 6);
	n = frame_build_udp(f, sizeof(f), &src, &dst, NULL, &one, 1);
	assert_true(n > 0);
	sw_ingress(&W.f->sw[0]->ports[h->port], f, (size_t)n, NULL, now);
}

/* A WRITE middle from @h to @to over IPv6, ECT(0), PSN @psn: its length. */
static int roce6(uint8_t *f, const struct host *h, const struct host *to, uint32_t psn)
{
	struct frame6_spec s = {
		.tclass = 26 << 2 | FRAME_ECN_ECT0, .flow_label = 0x12345,
		.sport = (uint16_t)(0xc000 | h->mac[5]),
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = DEST_QP, .psn = psn },
		.payload_len = PAYLOAD,
	};
	int n;

	memcpy(s.src_mac, h->mac, 6);
	memcpy(s.dst_mac, to->mac, 6);
	memcpy(s.src, h->ip6, 16);
	memcpy(s.dst, to->ip6, 16);
	n = frame6_build(f, 2048, &s);
	assert_true(n > 0);
	return n;
}

static void test_ipv6_telemetry(void **state)
{
	struct host *a, *b, *c;
	struct agent_qp_reg r6, r4;
	struct agent_qp_view v6, v4;
	struct agent_dgram out[8];
	qp_time_ns now = T0, ser;
	uint8_t f[2048];
	struct afx *fx;
	unsigned acks;
	(void)state;

	world_build();
	a = &W.h[0];
	b = &W.h[1];
	c = &W.h[2];
	hello(a, c, now);
	hello(b, c, now);
	hello(c, a, now);
	sw_fabric_emit(W.f, now + QP_NS_PER_MS);
	ser = qp_tx_time_ns(FRAME_ETH_HLEN + FRAME_IPV6_HLEN + FRAME_UDP_HLEN + FRAME_BTH_LEN +
			    PAYLOAD + FRAME_ICRC_LEN, 10 * QP_GBPS);
	now += QP_NS_PER_MS;
	for (uint32_t i = 0; i < FRAMES; i++, now += ser) {   /* both at the line: 2x */
		for (int k = 0; k < 2; k++) {
			uint32_t psn = 2 * i + (uint32_t)k;
			int n = roce6(f, &W.h[k], c, psn);

			memcpy(W.sent_hdr[psn], f + FRAME_ETH_HLEN, FRAME_IPV6_HLEN);
			sw_ingress(&W.f->sw[0]->ports[W.h[k].port], f, (size_t)n, NULL, now);
			sw_fabric_emit(W.f, now);
		}
	}
	sw_fabric_emit(W.f, now + QP_NS_PER_S);

	assert_int_equal(c->data, 2 * FRAMES);
	assert_int_equal(c->icrc_bad, 0);
	assert_int_equal(c->hdr_changed, 0);
	assert_true(c->ce > 0);
	for (int k = 0; k < 2; k++) {
		struct host *h = &W.h[k];

		assert_true(h->ints > 0);
		assert_true(h->notices > 0);
		assert_true(h->levels > 0);
		assert_int_equal(h->v6_flagged, h->ints + h->notices + h->levels);
		assert_int_equal(h->wrong_addr, 0);
		assert_int_equal(h->not_to_ip, 0);
		assert_true(h->ndgrams < 512);   /* every one kept for the agent below */
	}
	assert_int_equal(a->max_flows, 2);
	print_message("IPv6: %u frames, ICRC intact, %u CE-marked in the traffic class; sender "
		      "A got %u INT, %u notices, %u levels at its IPv4 address, all FB_F_IPV6 "
		      "with its addresses\n", c->data, c->ce, a->ints, a->notices, a->levels);

	/* A's agent: its IPv6 QP takes them, an IPv4 QP with the same last bytes none (hpcc);
	 * under ffd, which answers levels, its level acks go back to the switch */
	for (int round = 0; round < 2; round++) {
		struct agent_params ap = afx_params(round ? "ffd" : "hpcc");

		fx = afx_new(&ap);
		r6 = afx_reg(0x21, DEST_QP);
		r6.local_ip = r6.peer_ip = 0;
		r6.flags = AGENT_QP_IPV6;
		memcpy(r6.local_ip6, a->ip6, 16);
		memcpy(r6.peer_ip6, c->ip6, 16);
		r6.sport = (uint16_t)(0xc000 | a->mac[5]);
		r4 = afx_reg(0x22, DEST_QP);
		r4.local_ip = qp_get32(a->ip6 + 12);
		r4.peer_ip = qp_get32(c->ip6 + 12);
		afx_register(fx, &r6);
		afx_register(fx, &r4);
		while (agent_tx_take(fx->a, out, 8))
			;
		for (unsigned i = 0; i < a->ndgrams; i++)
			assert_true(agent_feed_datagram(fx->a, a->dgrams[i], a->dgram_len[i], SWITCH,
							FB_PORT, T0 + i) & AGENT_RX_MATCHED);
		assert_int_equal(agent_qp_view(fx->a, 0x21, &v6), 0);
		assert_int_equal(agent_qp_view(fx->a, 0x22, &v4), 0);
		assert_int_equal(v4.feedback, 0);
		if (!round) {
			assert_true(v6.feedback >= a->ints + a->notices + a->levels);
			assert_true(v6.queue_bytes > 0);
			print_message("A's hpcc agent: its IPv6 QP took %llu messages (queue %u B), "
				      "the IPv4 QP with the same last bytes none\n",
				      (unsigned long long)v6.feedback, v6.queue_bytes);
			afx_free(fx);
			continue;
		}
		acks = 0;
		for (unsigned n; (n = agent_tx_take(fx->a, out, 8)) > 0;) {
			for (unsigned i = 0; i < n; i++) {
				struct frame_addr src = { .ip = a->ip, .port = FB_PORT };
				struct frame_addr dst = { .ip = W.conf.sw[0].ip, .port = FB_PORT };
				struct fb_msg m;
				int len;

				if (fb_decode(&m, out[i].buf, out[i].len) || m.type != FB_T_LEVEL)
					continue;
				assert_true(m.flags & FB_F_IPV6);
				memcpy(src.mac, a->mac, 6);
				memcpy(dst.mac, W.conf.sw[0].mac, 6);
				len = frame_build_udp(f, sizeof(f), &src, &dst, NULL, out[i].buf,
						      out[i].len);
				assert_true(len > 0);
				sw_ingress(&W.f->sw[0]->ports[a->port], f, (size_t)len, NULL, now);
				acks++;
			}
		}
		/* the switch takes the ack of the level it holds (the last): keyed as the
		 * frames were, it finds the flow */
		assert_true(acks > 0);
		assert_int_equal(W.f->sw[0]->ports[c->port].st.level_acks, 1);
		print_message("A's ffd agent: %u level acks, flagged FB_F_IPV6; the switch took "
			      "the one of the level in force\n", acks);
		afx_free(fx);
	}
	sw_fabric_destroy(W.f);
	sw_conf_free(&W.conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv6_telemetry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
