/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-swtest int: RoCEv2 data through a `--star 2` switch, and what comes back.
 *
 * The switch must run with:
 *   --rate 10M --buffer 256K --int direct --early 5000 --notice-interval 1ms
 *   --levels 3000,8000,12000 --level-repeat 200us --cnp on
 * Host b first sends an RC ACK to a's QP 0x99, from which the switch learns where CNPs
 * go; every notice must then come with a CNP to that QP.
 * Host a (port 0) sends RC WRITE_MIDDLE frames of 1082 B (865.6 us each at 10M) to host
 * b (port 1). The switch stamps arrivals with the kernel's receive time, so the loopback
 * delivery of a 16-frame sendmmsg (~80 us) stays well inside one frame time:
 *   A  a burst of 16 at once: INT figures are checked against the model exactly (qlen
 *      counts down 14..0 frames behind, tx bytes climb by 1082, dequeue times 865600 ns
 *      apart); one notice at the first queue >= 5000; levels 1, 2, 3.
 *   B  after the queue drained: 14 at once, then one per 865.6 us, so the queue stands
 *      at ~14 frames (level 3); once level 3 was repeated, an ack goes to the switch
 *      and repeats of that level must stop (checked by PSN and seq, not by time).
 *   C  after it drained: one frame; the level falls back to 0.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "swtest.h"

#define FRAME_BYTES 1082
#define GAP_NS 865600
#define EARLY 5000
#define MAX_EVENTS 4096
#define A_QP 0x99   /* host a's QP, which the switch learns from b's ACK */

static const struct frame_addr host_a = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ip = 0x0a000001, .port = 0xc001 };
static const struct frame_addr host_b = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0b }, .ip = 0x0a000002, .port = 9000 };

struct event {
	qp_time_ns t;
	struct fb_msg m;
	uint8_t sw_mac[6];
	uint32_t sw_ip;
};

struct ctx {
	struct swt_pair p;
	uint32_t psn;
	uint64_t sent, rx_data, rx_icrc_ok;
	struct event ev[MAX_EVENTS];
	int nev;
	int cnps, cnps_ok;
	int failures;
};

static void check(struct ctx *c, int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		c->failures++;
}

/* @n frames in one sendmmsg, so a burst reaches the switch within microseconds. */
static void send_data(struct ctx *c, int n)
{
	static uint8_t f[16][2048];
	struct mmsghdr msg[16];
	struct iovec iov[16];
	struct frame_roce_spec s = {
		.src = host_a, .dst = host_b, .ip = { .tos = FRAME_ECN_ECT0 },
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = 0x11 },
		.payload_len = 1024,
	};
	int sent;

	for (int i = 0; i < n && i < 16; i++) {
		s.bth.psn = c->psn++;
		iov[i] = (struct iovec){ f[i], (size_t)frame_build_roce(f[i], sizeof(f[i]), &s) };
		msg[i].msg_hdr = (struct msghdr){ .msg_name = &c->p.to_a,
						  .msg_namelen = sizeof(c->p.to_a),
						  .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	sent = sendmmsg(c->p.a, msg, (unsigned)(n < 16 ? n : 16), 0);
	c->sent += sent > 0 ? (uint64_t)sent : 0;
}

static void poll_once(struct ctx *c)
{
	uint8_t buf[SW_TEST_FRAME];
	struct frame_parsed p;
	ssize_t n;

	while ((n = recv(c->p.a, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		struct event *e = &c->ev[c->nev];
		if (!frame_parse(&p, buf, (size_t)n) && (p.layers & FRAME_L_ROCE) &&
		    p.bth.opcode == FRAME_OP_CNP) {
			c->cnps++;
			c->cnps_ok += p.bth.dest_qp == A_QP && p.bth.becn && frame_icrc_ok(buf, &p) &&
				      p.ip.src == host_b.ip;
			continue;
		}
		if (frame_parse(&p, buf, (size_t)n) || !(p.layers & FRAME_L_UDP) ||
		    p.udp.dport != FB_PORT)
			continue;
		/* one or more messages back to back */
		for (size_t off = 0; off < p.payload_len && c->nev < MAX_EVENTS;
		     off += e->m.length) {
			e = &c->ev[c->nev];
			if (fb_decode(&e->m, buf + p.payload_off + off, p.payload_len - off))
				break;
			e->t = qp_now_ns();
			memcpy(e->sw_mac, p.eth.src, 6);
			e->sw_ip = p.ip.src;
			c->nev++;
		}
	}
	while ((n = recv(c->p.b, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (frame_parse(&p, buf, (size_t)n) || !(p.layers & FRAME_L_ROCE))
			continue;
		c->rx_data++;
		c->rx_icrc_ok += frame_icrc_ok(buf, &p);
	}
}

static void pump_until(struct ctx *c, qp_time_ns t)
{
	while (qp_now_ns() < t)
		poll_once(c);
}

static int count_type(const struct ctx *c, int type)
{
	int n = 0;
	for (int i = 0; i < c->nev; i++)
		n += c->ev[i].m.type == type;
	return n;
}

/* Until every data frame sent so far is delivered and reported (at most 2 s: the machine
 * may be busy), then @quiet_ns more for stragglers. */
static void settle(struct ctx *c, qp_time_ns quiet_ns)
{
	qp_time_ns end = qp_now_ns() + 2 * QP_NS_PER_S;

	while (qp_now_ns() < end &&
	       (c->rx_data < c->sent || (uint64_t)count_type(c, FB_T_INT) < c->sent))
		poll_once(c);
	pump_until(c, qp_now_ns() + quiet_ns);
}

/* b acknowledges a's QP once (RC ACK, dest QP A_QP): the switch learns it for CNPs. */
static void send_rc_ack(struct ctx *c)
{
	uint8_t f[128];
	struct frame_roce_spec s = {
		.src = host_b, .dst = host_a,
		.bth = { .opcode = FRAME_OP_RC_ACK, .dest_qp = A_QP }, .aeth = { .msn = 1 },
	};
	int len = frame_build_roce(f, sizeof(f), &s);

	sendto(c->p.b, f, (size_t)len, 0, (struct sockaddr *)&c->p.to_b, sizeof(c->p.to_b));
}

/* Acknowledge level @lv as a sender's agent would: to the switch that sent it. */
static void send_ack(struct ctx *c, const struct event *lvl)
{
	struct fb_msg m = { .type = FB_T_LEVEL };
	struct frame_addr sw = { .ip = lvl->sw_ip, .port = FB_PORT };
	struct frame_addr me = host_a;
	uint8_t payload[FB_MAX_LEN], f[256];
	int plen, flen;

	m.u.level = lvl->m.u.level;
	m.u.level.acked = lvl->m.u.level.level;
	m.u.level.level = FB_LEVEL_ACK;
	memcpy(sw.mac, lvl->sw_mac, 6);
	me.port = FB_PORT;
	plen = fb_encode(payload, sizeof(payload), &m);
	flen = frame_build_udp(f, sizeof(f), &me, &sw, NULL, payload, (size_t)plen);
	sendto(c->p.a, f, (size_t)flen, 0, (struct sockaddr *)&c->p.to_a, sizeof(c->p.to_a));
}

/* The burst's INT figures against the model. Every frame of the burst is at the switch
 * once sendmmsg has returned (loopback delivers inside the call), and the switch's clock
 * is this machine's CLOCK_MONOTONIC: so each frame that started its dequeue after
 * @sent_ns must show exactly the queue behind it, (15 - k) x 1082 B, and start exactly
 * one frame time after the previous one. A busy machine can stretch the call; at least
 * 8 frames must qualify. */
static void check_burst_int(struct ctx *c, uint32_t psn0, qp_time_ns sent_ns)
{
	const struct fb_int *r[16] = { 0 };
	int bad_qlen = 0, bad_ts = 0, bad_tx = 0, exact = 0;

	for (int i = 0; i < c->nev; i++)
		if (c->ev[i].m.type == FB_T_INT && c->ev[i].m.u.int_report.psn - psn0 < 16)
			r[c->ev[i].m.u.int_report.psn - psn0] = &c->ev[i].m.u.int_report;
	for (int k = 0; k < 16; k++) {
		if (!r[k] || r[k]->nhops != 1) {
			check(c, 0, "an INT report with one hop for every burst frame");
			return;
		}
	}
	printf("burst INT (psn: dequeue ns from first, tx_bytes, qlen):");
	for (int k = 0; k < 16; k++) {
		const struct qp_int_hop *h = &r[k]->hops[0];
		printf("%s %d: %" PRIu64 " %" PRIu64 " %" PRIu32, k % 4 ? "," : "\n ", k,
		       h->ts_ns - r[0]->hops[0].ts_ns, h->tx_bytes - r[0]->hops[0].tx_bytes,
		       h->qlen_bytes);
		bad_tx += h->tx_bytes - r[0]->hops[0].tx_bytes != (uint64_t)k * FRAME_BYTES;
		if (k && h->ts_ns > sent_ns + 50 * QP_NS_PER_US) {
			exact++;
			bad_ts += h->ts_ns - r[k - 1]->hops[0].ts_ns != GAP_NS;
			bad_qlen += h->qlen_bytes != (uint32_t)(15 - k) * FRAME_BYTES;
		}
	}
	printf("\n%d frames dequeued after the whole burst was at the switch\n", exact);
	check(c, exact >= 8, "at least 8 burst frames dequeued after the burst was in");
	check(c, !bad_ts, "their dequeue times exactly 865600 ns apart (1082 B at 10 Mb/s)");
	check(c, !bad_tx, "tx bytes climb by exactly 1082 per frame");
	check(c, !bad_qlen, "queue behind frame k = (15 - k) x 1082 B, as the model says");
	check(c, r[0]->hops[0].link_bps == 10000000ULL && r[0]->hops[0].switch_id == 1 &&
		 r[0]->hops[0].port == 1, "hop names switch 1, port 1, 10 Mb/s");
}

int swt_cmd_int(int argc, char **argv)
{
	static struct ctx c;
	struct swt_args a;
	qp_time_ns t0, tb, ack_t = 0;
	uint32_t ack_psn = 0, ack_seq = 0;
	int burst_notice = 0;
	uint32_t last_seq_a = 0;
	int first_level = -1, n_int = 0, monotone = 1, repeats_before = 0, after_ack = 0;
	int levels_a[3] = { -1, -1, -1 }, nla = 0, notices_ok = 1, n_notice = 0;
	uint64_t last_tx = 0;

	if (swt_parse(&a, argc, argv) || !a.base_port || swt_pair_open(&c.p, a.base_port)) {
		fprintf(stderr, "qpace-swtest int: --base-port P (switch: --star 2 --base-port P)\n");
		return 2;
	}
	swt_learn(&c.p, &host_a, &host_b);
	send_rc_ack(&c);
	pump_until(&c, qp_now_ns() + 20 * QP_NS_PER_MS);

	/* A: one burst of 16, checked against the model (check_burst_int). */
	int burst_ev0 = c.nev;
	uint32_t burst_psn0 = c.psn;
	t0 = qp_now_ns();
	send_data(&c, 16);
	qp_time_ns burst_sent = qp_now_ns();
	printf("burst sent in %" PRIu64 " us\n", (burst_sent - t0) / 1000);
	settle(&c, 2 * QP_NS_PER_MS);
	int phase_a_events = c.nev;

	/* B: 14 at once, then one per frame time; ack the standing level once it has been
	 * repeated twice, go on for 10 ms more. The ack takes the data frames' path, so the
	 * switch sees it after frame ack_psn and before the next: repeats (same seq) of a
	 * later frame would be a failure, whatever the scheduling noise. */
	tb = qp_now_ns();
	send_data(&c, 14);
	for (int k = 1; k < 2000; k++) {
		pump_until(&c, tb + (qp_time_ns)k * GAP_NS);
		if (ack_t && qp_now_ns() > ack_t + 10 * QP_NS_PER_MS)
			break;
		send_data(&c, 1);
		if (ack_t)
			continue;
		const struct event *last = NULL;
		int seen = 0;
		for (int i = phase_a_events; i < c.nev; i++)
			if (c.ev[i].m.type == FB_T_LEVEL) {
				seen = last && c.ev[i].m.u.level.seq == last->m.u.level.seq &&
				       c.ev[i].m.u.level.level == 3 ? seen + 1 : 0;
				last = &c.ev[i];
			}
		if (seen >= 2) {
			send_ack(&c, last);
			ack_t = qp_now_ns();
			ack_psn = c.psn - 1;
			ack_seq = last->m.u.level.seq;
		}
	}
	settle(&c, 2 * QP_NS_PER_MS);
	int phase_b_events = c.nev;


	/* C: one frame on an empty queue */
	send_data(&c, 1);
	settle(&c, 5 * QP_NS_PER_MS);

	for (int i = 0; i < c.nev; i++) {
		const struct event *e = &c.ev[i];
		switch (e->m.type) {
		case FB_T_INT:
			n_int++;
			monotone &= n_int == 1 || e->m.u.int_report.hops[0].tx_bytes > last_tx;
			last_tx = e->m.u.int_report.hops[0].tx_bytes;
			break;
		case FB_T_NOTICE:
			n_notice++;
			notices_ok &= e->m.u.notice.queue_bytes >= EARLY && e->m.u.notice.flows == 1 &&
				      e->m.u.notice.link_bps == 10000000ULL;
			if (n_notice == 1)
				printf("first notice: queue %u B, flows %u, link %" PRIu64 " b/s\n",
				       e->m.u.notice.queue_bytes, e->m.u.notice.flows,
				       e->m.u.notice.link_bps);
			if (i >= burst_ev0 && i < phase_a_events && !burst_notice++)
				check(&c, e->m.u.notice.queue_bytes < EARLY + FRAME_BYTES,
				      "burst notice at the first queue >= 5000 B (5410)");
			if (i >= phase_b_events)
				check(&c, 0, "no notice for a lone frame on an empty queue");
			break;
		case FB_T_LEVEL:
			/* changes only: a burst the machine stretched lets repeats in between */
			if (i >= burst_ev0 && i < phase_a_events && nla < 3 &&
			    e->m.u.level.seq != last_seq_a)
				levels_a[nla++] = e->m.u.level.level;
			if (i < phase_a_events)
				last_seq_a = e->m.u.level.seq;
			if (i >= phase_a_events && i < phase_b_events && ack_t &&
			    e->m.u.level.seq == ack_seq) {
				if (e->m.u.level.psn <= ack_psn)
					repeats_before++;
				else
					after_ack++;
			}
			if (i >= phase_b_events)
				first_level = e->m.u.level.level;
			break;
		}
	}
	printf("sent %" PRIu64 " data frames, received %" PRIu64 " (%" PRIu64 " with a good "
	       "ICRC); %d INT reports, %d notices\n", c.sent, c.rx_data, c.rx_icrc_ok, n_int,
	       n_notice);
	printf("level changes in the burst: %d %d %d; messages of the acked level (seq %u) up to the "
	       "ack's psn %u: %d, after it: %d; level after draining: %d\n", levels_a[0], levels_a[1],
	       levels_a[2], ack_seq, ack_psn, repeats_before, after_ack, first_level);
	check(&c, c.rx_data == c.sent && c.rx_icrc_ok == c.sent, "every data frame delivered intact");
	check(&c, (uint64_t)n_int == c.sent, "one INT report per data frame");
	check(&c, monotone, "tx bytes monotone over all reports");
	check_burst_int(&c, burst_psn0, burst_sent);
	check(&c, n_notice >= 2 && notices_ok, "notices only at queue >= 5000 B, flows 1");
	printf("%d RoCEv2 CNPs, %d to QP 0x%x with BECN and a good ICRC\n", c.cnps, c.cnps_ok, A_QP);
	check(&c, c.cnps == n_notice && c.cnps_ok == c.cnps,
	      "a CNP (0x81) to the sender's learned QP with every notice");
	check(&c, levels_a[0] == 1 && levels_a[1] == 2 && levels_a[2] == 3,
	      "level changes 1, 2, 3 as the burst builds the queue");
	check(&c, ack_t && repeats_before >= 3, "level 3 repeated until acknowledged");
	check(&c, c.psn - 1 >= ack_psn + 5, "at least 5 frames at level 3 after the ack");
	check(&c, after_ack == 0, "no level repeats after the ack");
	check(&c, first_level == 0, "level back to 0 on an empty queue");
	return c.failures ? 1 : 0;
}
