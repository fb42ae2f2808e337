/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PFC through the real switch code (sw_ingress, sw_fabric_emit, sw_fabric_next_ns) in
 * injected time, with finite buffers. The hosts here are line-rate senders that obey PAUSE
 * with the receiver's timers of qpace/pause.h; the switch's I/O ports hand their frames
 * to them instead of to sockets.
 *   - 2 -> 1 at 10 Gb/s, lossless with enough headroom: nothing dropped, PAUSEs and XONs
 *     sent, every one received, the hosts' paused time equal to the switch's XOFF time,
 *     the receiver's link busy to the end;
 *   - the same overload without PFC drops, and with PFC but without lossless too (buffer
 *     below what the two ingresses may hold);
 *   - headroom too small for the link's round trip: headroom drops, counted exactly;
 *   - two switches: the far switch pauses the near one's link egress, which resumes
 *     after XON; nothing dropped;
 *   - an egress obeys PAUSE (held to the pause's end, or to an XON), ignores other classes
 *     and 802.3x PAUSE, and never forwards MAC control frames. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/addr.h"
#include "qpace/pause.h"
#include "io.h"
#include "sw.h"

#define PRIO 3
#define TOS_PRIO3 (26 << 2)        /* DSCP 26: priority 3 */
#define PAYLOAD 1024
#define FRAME_LEN 1082             /* Ethernet/IPv4/UDP/BTH/1024/ICRC */
#define MAX_HOSTS 4
#define FLY 256

struct host {
	int sw, port;
	uint8_t mac[6];
	uint32_t ip;
	uint8_t tos;
	uint32_t to_send, sent;
	qp_time_ns free_ns;               /* its wire is free from */
	qp_time_ns fly[FLY];              /* arrivals at the switch of frames on the wire */
	uint32_t fly_head, fly_tail;
	struct qp_pause pause;
	uint64_t rx_data, rx_pfc, rx_other;
	qp_time_ns first_rx, last_rx;
};

struct world {
	struct sw_conf conf;
	struct sw_fabric *f;
	struct host h[MAX_HOSTS];
	int nh;
	qp_rate_bps rate;
	qp_time_ns delay;
	qp_time_ns now;
	uint8_t frame[FRAME_LEN + 64];
	int frame_len;
};

static struct world W;

static struct host *host_of_io(struct sw_io *io)
{
	for (int i = 0; i < W.nh; i++)
		if (W.f->sw[W.h[i].sw]->ports[W.h[i].port].io == io)
			return &W.h[i];
	fail_msg("a frame for a port with no host");
	return NULL;
}

/* The switch hands frames to the host behind the port at the leave time, which is now
 * (tx-early is 0 and the loop below emits at every leave time). */
static int to_host(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	struct host *h = host_of_io(io);

	for (unsigned i = 0; i < n; i++) {
		struct frame_parsed p;
		assert_int_equal(frame_parse(&p, frames[i].iov_base, frames[i].iov_len), 0);
		if (p.layers & FRAME_L_PFC) {
			h->rx_pfc++;
			qp_pause_rx(&h->pause, &p.pfc, W.rate, W.now);
		} else if (p.layers & FRAME_L_ROCE) {
			if (!h->rx_data)
				h->first_rx = W.now;
			h->rx_data++;
			h->last_rx = W.now;
		} else {
			h->rx_other++;
		}
	}
	return (int)n;
}

static const struct sw_io_ops host_ops = { .name = "test-host", .send = to_host };

static void setting(struct sw_port_defaults *d, const char *k, const char *v)
{
	char err[300];

	if (sw_conf_setting(d, k, v, err, sizeof(err)))
		fail_msg("%s=%s: %s", k, v, err);
}

/* A fresh configuration: rate, delay, buffer and PFC spec ("off" or a spec) for every
 * port; no INT and no notices, so the hosts see only data and PFC frames. */
static void world_init(qp_rate_bps rate, qp_time_ns delay, const char *buffer,
		       const char *pfc)
{
	char r[32], d[32];

	if (W.f)
		sw_fabric_destroy(W.f);
	sw_conf_free(&W.conf);
	memset(&W, 0, sizeof(W));
	sw_conf_defaults(&W.conf);
	W.rate = rate;
	W.delay = delay;
	snprintf(r, sizeof(r), "%llu", (unsigned long long)rate);
	snprintf(d, sizeof(d), "%lluns", (unsigned long long)delay);
	setting(&W.conf.def, "rate", r);
	setting(&W.conf.def, "delay", d);
	setting(&W.conf.def, "buffer", buffer);
	setting(&W.conf.def, "int", "off");
	setting(&W.conf.def, "early", "off");
	setting(&W.conf.def, "pfc", pfc);
	W.conf.tx_early_ns = 0;
}

static int add_switch(void)
{
	struct sw_switch_conf *s = sw_conf_add_switch(&W.conf);

	assert_non_null(s);
	snprintf(s->name, sizeof(s->name), "s%d", W.conf.nswitches);
	s->id = (uint32_t)W.conf.nswitches;
	s->def = W.conf.def;
	return W.conf.nswitches - 1;
}

static int add_port(int sw, enum sw_port_kind kind)
{
	struct sw_switch_conf *s = &W.conf.sw[sw];
	struct sw_port_conf *p = sw_conf_add_port(s);

	assert_non_null(p);
	snprintf(p->name, sizeof(p->name), "p%d", s->nports - 1);
	p->kind = kind;
	p->local = qp_sockaddr_in(INADDR_LOOPBACK, 0);    /* never used: see world_build */
	p->remote = qp_sockaddr_in(INADDR_LOOPBACK, 9);
	p->q = s->def.q;
	p->telem = s->def.telem;
	p->pfc = s->def.pfc;
	return s->nports - 1;
}

static void add_link(int a, int b)
{
	int pa = add_port(a, SW_PORT_LINK), pb = add_port(b, SW_PORT_LINK);

	W.conf.sw[a].ports[pa].peer_switch = b;
	W.conf.sw[a].ports[pa].peer_port = pb;
	W.conf.sw[b].ports[pb].peer_switch = a;
	W.conf.sw[b].ports[pb].peer_port = pa;
}

/* A host on a new I/O port of @sw sending @frames frames. */
static struct host *add_host(int sw, uint32_t frames)
{
	struct host *h = &W.h[W.nh++];

	h->sw = sw;
	h->port = add_port(sw, SW_PORT_UDP);
	h->ip = 0x0a000001u + (uint32_t)W.nh - 1;
	h->mac[0] = 0x02;
	h->mac[5] = (uint8_t)W.nh;
	h->tos = TOS_PRIO3;
	h->to_send = frames;
	return h;
}

/* The receiver @dst is reached through @port of @sw. */
static void route(int sw, const struct host *dst, int port)
{
	struct sw_switch_conf *s = &W.conf.sw[sw];

	assert_int_equal(sw_conf_static_room(s), 0);
	memcpy(s->statics[s->nstatic].mac, dst->mac, 6);
	s->statics[s->nstatic++].port = port;
}

static void world_build(void)
{
	char err[300];

	sw_conf_finish(&W.conf);
	W.f = sw_fabric_create(&W.conf, err, sizeof(err));
	if (!W.f)
		fail_msg("fabric: %s", err);
	for (int i = 0; i < W.f->nio; i++)
		W.f->io_ports[i]->io->ops = &host_ops;   /* frames go to the hosts here */
}

static struct sw_port *port_of(int sw, int port)
{
	return &W.f->sw[sw]->ports[port];
}

static qp_time_ns ser_ns(void)
{
	return qp_tx_time_ns(FRAME_LEN, W.rate);
}

static qp_time_ns host_next_tx(const struct host *h, qp_time_ns now)
{
	qp_time_ns c;

	if (h->sent == h->to_send || h->fly_tail - h->fly_head == FLY)
		return QP_TIME_NEVER;
	c = h->free_ns > now ? h->free_ns : now;
	if (qp_pause_active(&h->pause, frame_tos_priority(h->tos), c))
		c = qp_pause_until(&h->pause, frame_tos_priority(h->tos));
	return c;
}

/* @h starts a frame at @now: it reaches the switch one serialisation and one delay on. */
static void host_send(struct host *h, qp_time_ns now)
{
	h->fly[h->fly_tail++ % FLY] = now + ser_ns() + W.delay;
	h->free_ns = now + ser_ns();
	h->sent++;
}

/* The frame of @h that arrives at the switch (all alike: a RoCEv2 WRITE middle). */
static int frame_of(const struct host *h, const struct host *dst)
{
	struct frame_roce_spec s = {
		.src = { .ip = h->ip, .port = 0xc000 }, .dst = { .ip = dst->ip },
		.ip = { .tos = h->tos },
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = 0x11 },
		.payload_len = PAYLOAD,
	};
	int n;

	memcpy(s.src.mac, h->mac, 6);
	memcpy(s.dst.mac, dst->mac, 6);
	n = frame_build_roce(W.frame, sizeof(W.frame), &s);
	assert_int_equal(n, FRAME_LEN);
	return n;
}

/* Every sender sends to @dst, up to time @limit or until nothing is left; the event order
 * at one instant: arrivals at the switch, sends, the switch's departures. */
static void run_until(const struct host *dst, qp_time_ns limit)
{
	for (uint64_t steps = 0;; steps++) {
		qp_time_ns t = sw_fabric_next_ns(W.f);

		assert_true(steps < 10000000);
		for (int i = 0; i < W.nh; i++) {
			struct host *h = &W.h[i];
			if (h->fly_head != h->fly_tail)
				t = qp_time_min(t, h->fly[h->fly_head % FLY]);
			t = qp_time_min(t, host_next_tx(h, W.now));
		}
		if (t == QP_TIME_NEVER || t > limit)
			return;
		assert_true(t >= W.now);
		W.now = t;
		for (int i = 0; i < W.nh; i++) {
			struct host *h = &W.h[i];
			while (h->fly_head != h->fly_tail && h->fly[h->fly_head % FLY] <= t) {
				int n = frame_of(h, dst);
				sw_ingress(port_of(h->sw, h->port), W.frame, (size_t)n, NULL,
					   h->fly[h->fly_head++ % FLY]);
			}
		}
		for (int i = 0; i < W.nh; i++)
			if (&W.h[i] != dst && host_next_tx(&W.h[i], t) == t)
				host_send(&W.h[i], t);
		sw_fabric_emit(W.f, t);
	}
}

static void run(const struct host *dst)
{
	run_until(dst, QP_TIME_NEVER - 1);
}

static const struct sw_queue_stats *qstats(int sw, int port)
{
	return sw_queue_stats(port_of(sw, port)->q);
}

static uint64_t drops(int sw, int port)
{
	return qstats(sw, port)->drop_tail + qstats(sw, port)->drop_store;
}

static void print_port(const char *what, int sw, int port)
{
	const struct sw_port *p = port_of(sw, port);
	const struct sw_pfc_stats *s = &p->pfc.st;

	print_message("%-22s s%d:p%d pause_tx %llu xon_tx %llu pause_rx %llu xon_rx %llu "
		      "headroom_drops %llu ingress_max %llu xoff %llu ns paused %llu ns | "
		      "max_q %llu drop_tail %llu\n", what, sw + 1, port,
		      (unsigned long long)s->pause_tx, (unsigned long long)s->xon_tx,
		      (unsigned long long)s->pause_rx, (unsigned long long)s->xon_rx,
		      (unsigned long long)s->headroom_drops,
		      (unsigned long long)s->ingress_max_bytes,
		      (unsigned long long)sw_pfc_xoff_ns(p, W.now),
		      (unsigned long long)sw_pfc_paused_ns(p, W.now),
		      (unsigned long long)qstats(sw, port)->max_qbytes,
		      (unsigned long long)qstats(sw, port)->drop_tail);
}

#define N_FRAMES 2000

/* Two senders, one receiver, one switch. Returns the receiver. */
static struct host *incast(qp_rate_bps rate, qp_time_ns delay, const char *buffer,
			   const char *pfc)
{
	struct host *dst;
	int s;

	world_init(rate, delay, buffer, pfc);
	s = add_switch();
	add_host(s, N_FRAMES);
	add_host(s, N_FRAMES);
	dst = add_host(s, 0);
	route(s, dst, dst->port);
	world_build();
	run(dst);
	return dst;
}

static void test_lossless_incast(void **state)
{
	struct host *dst = incast(10 * QP_GBPS, QP_NS_PER_US, "16K",
				  "xoff=20K,xon=10K,headroom=auto,lossless");
	const struct sw_pfc_params *c = &port_of(0, 0)->conf->pfc;
	/* The receiver's link busy from its first frame: 2N frames back to back (the queue
	 * carries sub-ns remainders, so the exact figure, floored, within 1 ns). */
	qp_time_ns busy = dst->last_rx - dst->first_rx;
	qp_time_ns ideal = (2 * N_FRAMES - 1) * FRAME_LEN * 8 * QP_NS_PER_S / W.rate;
	(void)state;

	assert_int_equal(c->headroom_bytes, 2500 + 2 * SW_FRAME_MAX);   /* auto at 10G, 1us */
	for (int i = 0; i < 2; i++) {
		const struct sw_pfc_stats *s = &port_of(0, i)->pfc.st;
		print_port("lossless, headroom ok", 0, i);
		assert_true(s->pause_tx > 0);
		assert_true(s->xon_tx > 0);
		/* Every PFC frame reached its host, and it obeyed each. */
		assert_int_equal(W.h[i].rx_pfc, s->pause_tx + s->xon_tx);
		assert_int_equal(W.h[i].pause.pauses[PRIO], s->pause_tx);
		assert_int_equal(W.h[i].pause.xons[PRIO], s->xon_tx);
		/* Paused from each PAUSE's arrival to its XON's: the switch's XOFF time. */
		assert_int_equal(qp_pause_time(&W.h[i].pause, PRIO, W.now),
				 sw_pfc_xoff_ns(port_of(0, i), W.now));
		assert_true(s->ingress_max_bytes >= c->xoff_bytes);
		assert_true(s->ingress_max_bytes <= c->xoff_bytes + c->headroom_bytes);
		assert_int_equal(s->headroom_drops, 0);
		assert_int_equal(port_of(0, i)->pfc.in_bytes, 0);   /* all released */
		assert_false(port_of(0, i)->pfc.xoff);
	}
	print_port("lossless, receiver", 0, 2);
	assert_int_equal(drops(0, 2), 0);
	assert_int_equal(dst->rx_data, 2 * N_FRAMES);
	assert_true(qstats(0, 2)->max_qbytes > 16 * 1024);   /* past the 16K buffer */
	print_message("receiver busy %llu ns for %d frames (back to back: %llu ns)\n",
		      (unsigned long long)busy, 2 * N_FRAMES, (unsigned long long)ideal);
	assert_true(busy >= ideal && busy <= ideal + 1);
}

static void test_overload_drops_without_pfc(void **state)
{
	struct host *dst = incast(10 * QP_GBPS, QP_NS_PER_US, "16K", "off");
	(void)state;

	print_port("no PFC, receiver", 0, 2);
	assert_true(drops(0, 2) > 0);
	assert_int_equal(dst->rx_data + drops(0, 2), 2 * N_FRAMES);
	for (int i = 0; i < 3; i++)
		assert_int_equal(port_of(0, i)->pfc.st.pause_tx + W.h[i].rx_pfc, 0);

	/* PFC without lossless keeps drop-tail: two ingresses that may each hold xoff = 8K
	 * plus what is in flight overflow a 16K buffer. */
	dst = incast(10 * QP_GBPS, QP_NS_PER_US, "16K", "xoff=8K,xon=4K");
	print_port("PFC not lossless", 0, 0);
	print_port("PFC not lossless", 0, 2);
	assert_true(port_of(0, 0)->pfc.st.pause_tx + port_of(0, 1)->pfc.st.pause_tx > 0);
	assert_true(drops(0, 2) > 0);
	assert_int_equal(dst->rx_data + drops(0, 2), 2 * N_FRAMES);
}

static void test_headroom_too_small(void **state)
{
	/* 10 us each way: 25 KB in flight over the round trip, 4 KB of headroom. */
	struct host *dst = incast(10 * QP_GBPS, 10 * QP_NS_PER_US, "16K",
				  "xoff=20K,xon=10K,headroom=4K,lossless");
	uint64_t hd = 0;
	(void)state;

	for (int i = 0; i < 2; i++) {
		const struct sw_pfc_stats *s = &port_of(0, i)->pfc.st;
		print_port("headroom 4K, 10us", 0, i);
		assert_true(s->headroom_drops > 0);
		assert_int_equal(s->headroom_drop_bytes, s->headroom_drops * FRAME_LEN);
		assert_true(s->ingress_max_bytes <= 20 * 1024 + 4 * 1024);
		hd += s->headroom_drops;
	}
	assert_int_equal(drops(0, 2), 0);   /* lossless: the egress itself drops nothing */
	assert_int_equal(dst->rx_data + hd, 2 * N_FRAMES);

	/* The same link with auto headroom (2 x 25 KB + 2 max frames) drops nothing. */
	dst = incast(10 * QP_GBPS, 10 * QP_NS_PER_US, "16K", "xoff=20K,xon=10K,lossless");
	print_port("headroom auto, 10us", 0, 0);
	assert_int_equal(port_of(0, 0)->pfc.st.headroom_drops +
			 port_of(0, 1)->pfc.st.headroom_drops, 0);
	assert_int_equal(dst->rx_data, 2 * N_FRAMES);
}

/* Hosts 0 and 1 on switch 1, the receiver on switch 2 behind a 2.5 Gb/s port: the
 * overload is at switch 2's egress (10 Gb/s in, 2.5 out), whose link ingress pauses switch
 * 1's link egress, whose host ingresses then pause the hosts (20 Gb/s into 10). */
static void test_two_switches(void **state)
{
	struct host *dst;
	int a, b, la, lb;
	(void)state;

	world_init(10 * QP_GBPS, QP_NS_PER_US, "16K", "xoff=20K,xon=10K,lossless");
	a = add_switch();
	b = add_switch();
	add_host(a, N_FRAMES);
	add_host(a, N_FRAMES);
	add_link(a, b);
	la = W.conf.sw[a].nports - 1;
	lb = W.conf.sw[b].nports - 1;
	dst = add_host(b, 0);
	W.conf.sw[b].ports[dst->port].q.rate_bps = 2500 * QP_MBPS;
	route(a, dst, la);
	route(b, dst, dst->port);
	world_build();
	run(dst);

	print_port("s1 host ingress", a, 0);
	print_port("s1 host ingress", a, 1);
	print_port("s1 link egress", a, la);
	print_port("s2 link ingress", b, lb);
	print_port("s2 receiver egress", b, dst->port);
	const struct sw_pfc_stats *sa = &port_of(a, la)->pfc.st, *sb = &port_of(b, lb)->pfc.st;
	assert_true(sb->pause_tx > 0 && sb->xon_tx > 0);
	assert_int_equal(sa->pause_rx, sb->pause_tx);
	assert_int_equal(sa->xon_rx, sb->xon_tx);
	/* Each pause of the link egress starts and ends one delay after the far end's XOFF
	 * and XON: the same total. */
	assert_true(sw_pfc_paused_ns(port_of(a, la), W.now) > 0);
	assert_int_equal(sw_pfc_paused_ns(port_of(a, la), W.now),
			 sw_pfc_xoff_ns(port_of(b, lb), W.now));
	/* The pressure reached the hosts. */
	assert_true(port_of(a, 0)->pfc.st.pause_tx + port_of(a, 1)->pfc.st.pause_tx > 0);
	for (int s = 0; s < 2; s++)
		for (int p = 0; p < W.conf.sw[s].nports; p++) {
			assert_int_equal(drops(s, p), 0);
			assert_int_equal(port_of(s, p)->pfc.st.headroom_drops, 0);
		}
	assert_int_equal(dst->rx_data, 2 * N_FRAMES);
	assert_int_equal(port_of(a, la)->pfc.st.ignored_rx, 0);
}

/* A PFC frame from the host behind @port at @now. */
static void inject_pfc(int port, uint8_t enable, uint16_t quanta, uint16_t opcode)
{
	struct frame_pfc f = { .enable = enable };
	uint8_t buf[FRAME_ETH_MIN];

	memcpy(f.src, W.h[port].mac, 6);
	for (int i = 0; i < FRAME_PFC_PRIOS; i++)
		f.quanta[i] = quanta;
	assert_int_equal(frame_build_pfc(buf, sizeof(buf), &f), FRAME_ETH_MIN);
	buf[15] = (uint8_t)opcode;
	buf[14] = (uint8_t)(opcode >> 8);
	sw_ingress(port_of(0, port), buf, sizeof(buf), NULL, W.now);
}

/* Frames from host 0 at @t, one per serialisation time. */
static void inject_data(int n, qp_time_ns t)
{
	for (int i = 0; i < n; i++) {
		W.h[0].fly[W.h[0].fly_tail++ % FLY] = t + (qp_time_ns)i * ser_ns();
		W.h[0].sent++;
	}
	W.h[0].to_send = W.h[0].sent;
}

/* Host 0 -> host 1 through one 1 Gb/s switch with 128K buffers: the receiver. */
static struct host *one_to_one(const char *pfc)
{
	struct host *dst;

	world_init(QP_GBPS, QP_NS_PER_US, "128K", pfc);
	add_switch();
	add_host(0, 0);
	dst = add_host(0, 0);
	route(0, dst, dst->port);
	world_build();
	return dst;
}

static void test_egress_obeys_pause(void **state)
{
	struct host *dst;
	qp_time_ns ser, q100;
	(void)state;

	dst = one_to_one("xoff=100K,lossless");
	ser = ser_ns();               /* 8656 ns at 1 Gb/s */
	q100 = 100 * 512;             /* 100 quanta at 1 Gb/s */

	/* PAUSE 100 quanta from the receiver at 0; 4 frames reach the switch from 1000. */
	W.now = 0;
	inject_pfc(1, 1u << PRIO, 100, FRAME_PFC_OPCODE);
	inject_data(4, 1000);
	run(dst);
	assert_int_equal(dst->rx_data, 4);
	/* Held until 51200, then back to back; each leaves one delay after its departure. */
	assert_int_equal(dst->first_rx, q100 + ser + W.delay);
	assert_int_equal(dst->last_rx, q100 + 4 * ser + W.delay);
	assert_int_equal(sw_pfc_paused_ns(port_of(0, 1), W.now), q100);

	/* A long pause ended early by XON: the frames go at the XON. */
	qp_time_ns t0 = W.now + 100000;
	W.now = t0;
	inject_pfc(1, 1u << PRIO, 65535, FRAME_PFC_OPCODE);
	inject_data(3, t0 + 1000);
	run_until(dst, t0 + 500000);   /* nothing reaches the receiver: paused for 33.5 ms */
	assert_int_equal(dst->rx_data, 4);
	W.now = t0 + 500000;
	inject_pfc(1, 1u << PRIO, 0, FRAME_PFC_OPCODE);   /* XON */
	run(dst);
	assert_int_equal(dst->rx_data, 7);
	assert_int_equal(dst->last_rx, t0 + 500000 + 3 * ser + W.delay);
	assert_int_equal(sw_pfc_paused_ns(port_of(0, 1), W.now), q100 + 500000);

	/* Another class, 802.3x PAUSE, and a port without PFC change nothing; none of these
	 * MAC control frames is forwarded. */
	const struct sw_port_stats *st0 = &port_of(0, 0)->st;
	uint64_t tx0 = st0->tx_frames;
	t0 = W.now + 100000;
	W.now = t0;
	inject_pfc(1, 1u << 4, 65535, FRAME_PFC_OPCODE);
	inject_pfc(1, 0xff, 65535, 0x0001);
	inject_data(1, t0 + 1000);
	run(dst);
	assert_int_equal(dst->last_rx, t0 + 1000 + ser + W.delay);
	assert_int_equal(port_of(0, 1)->pfc.st.ignored_rx, 2);
	assert_int_equal(port_of(0, 1)->pfc.st.pause_rx, 2);
	assert_int_equal(port_of(0, 1)->pfc.st.xon_rx, 1);
	assert_int_equal(st0->tx_frames, tx0);
	assert_int_equal(W.h[0].rx_pfc + W.h[0].rx_other, 0);

	dst = one_to_one("off");
	inject_pfc(1, 1u << PRIO, 65535, FRAME_PFC_OPCODE);
	inject_data(1, 1000);
	run(dst);
	assert_int_equal(dst->first_rx, 1000 + ser + W.delay);   /* not held */
	assert_int_equal(port_of(0, 1)->pfc.st.ignored_rx, 1);
	sw_fabric_destroy(W.f);
	W.f = NULL;
}

/* Malformed PFC frames are counted as malformed and change nothing. */
static void test_malformed_pfc_counted(void **state)
{
	uint8_t buf[FRAME_ETH_MIN];
	struct frame_pfc f = { .enable = 1u << PRIO, .quanta = { [PRIO] = 100 } };
	(void)state;

	one_to_one("xoff=100K");
	memcpy(f.src, W.h[1].mac, 6);
	frame_build_pfc(buf, sizeof(buf), &f);
	buf[16] = 1;   /* reserved octet */
	sw_ingress(port_of(0, 1), buf, sizeof(buf), NULL, 0);
	sw_ingress(port_of(0, 1), buf, 20, NULL, 0);   /* truncated */
	assert_int_equal(port_of(0, 1)->st.malformed, 2);
	assert_int_equal(port_of(0, 1)->pfc.st.pause_rx + port_of(0, 1)->pfc.st.ignored_rx, 0);
	assert_int_equal(sw_pfc_paused_ns(port_of(0, 1), 1000000), 0);
	sw_fabric_destroy(W.f);
	W.f = NULL;
}

static int teardown(void **state)
{
	(void)state;
	sw_fabric_destroy(W.f);
	W.f = NULL;
	sw_conf_free(&W.conf);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lossless_incast, teardown),
		cmocka_unit_test_teardown(test_overload_drops_without_pfc, teardown),
		cmocka_unit_test_teardown(test_headroom_too_small, teardown),
		cmocka_unit_test_teardown(test_two_switches, teardown),
		cmocka_unit_test_teardown(test_egress_obeys_pause, teardown),
		cmocka_unit_test_teardown(test_malformed_pfc_counted, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
