/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft host: ARP (answering, resolving, retrying, the bounded pending queue), rxe's
 * frame format on the wire, demultiplexing with a counter per drop reason, the telemetry
 * hook, the rx_data hook, many QPs sharing two hosts over a lossy in-memory link in injected time, the
 * walks over connected QPs past slots released again, and PFC
 * (a paused priority holds its QPs until the pause ends or an XON comes). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "frame6.h"

#include "icrc_ref.h"
#include "qpace/bytes.h"
#include "qpace/soft_host.h"

#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define IP_NOBODY 0x0a0000feu

struct tmem {
	uint8_t *buf;
	size_t len;
	uint32_t rkey;
};

static bool tmem_find(void *arg, uint32_t rkey, struct rc_region *out)
{
	const struct tmem *m = arg;

	if (!m || rkey != m->rkey)
		return false;
	*out = (struct rc_region){ .base = m->buf, .va = (uintptr_t)m->buf, .len = m->len,
				   .remote_write = true };
	return true;
}

struct telem_seen {
	int n;
	uint32_t src_ip;
	uint16_t src_port;
	uint8_t payload[64];
	size_t len;
};

static void telem_hook(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *payload,
		       size_t len, qp_time_ns now)
{
	struct telem_seen *t = arg;

	(void)now;
	t->n++;
	t->src_ip = src_ip;
	t->src_port = src_port;
	t->len = len < sizeof(t->payload) ? len : sizeof(t->payload);
	memcpy(t->payload, payload, t->len);
}

static struct soft_host *host(uint32_t ip, struct telem_seen *t)
{
	struct soft_host_params p = { .ip = ip, .telemetry = t ? telem_hook : NULL,
				      .telemetry_arg = t };
	char err[128];
	struct soft_host *h;

	soft_mac_from_ip(ip, p.mac);
	h = soft_host_create(&p, err, sizeof(err));
	assert_non_null(h);
	return h;
}

/* A QP on @h connected to @peer_ip with @peer_qpn (known in advance: QPNs are allocated
 * from SOFT_QPN_BASE in order). */
static struct rc_qp *qp_on(struct soft_host *h, struct tmem *m, uint32_t peer_ip,
			   uint32_t peer_qpn, uint8_t tos, uint32_t mtu)
{
	struct rc_params p;
	struct rc_qp *rc;
	char err[128];
	int qpn = soft_host_qpn_reserve(h);

	assert_true(qpn >= (int)SOFT_QPN_BASE);
	rc_params_init(&p);
	p.qpn = (uint32_t)qpn;
	p.sq_psn = 1000u * (uint32_t)qpn;
	p.rto_ns = 2 * QP_NS_PER_MS;
	p.mr_find = tmem_find;
	p.mr_arg = m;
	rc = rc_create(&p, err, sizeof(err));
	assert_non_null(rc);
	assert_int_equal(soft_host_qp_attach(h, (uint32_t)qpn, rc), 0);
	assert_int_equal(rc_connect(rc, &(struct rc_conn){ .dest_qpn = peer_qpn,
							   .rq_psn = 1000u * peer_qpn,
							   .mtu_bytes = mtu }), 0);
	assert_int_equal(soft_host_qp_connect(h, (uint32_t)qpn, peer_ip, peer_qpn, tos), 0);
	return rc;
}

static int out1(struct soft_host *h, qp_time_ns now, uint8_t *buf)
{
	int n = soft_host_output(h, now, buf, SOFT_FRAME_MAX);

	assert_true(n >= 0);
	return n;
}

/* Move every pending frame both ways until quiet; returns frames moved. */
static int exchange(struct soft_host *a, struct soft_host *b, qp_time_ns now)
{
	uint8_t buf[SOFT_FRAME_MAX];
	int moved = 0, n;
	bool any = true;

	while (any) {
		any = false;
		while ((n = out1(a, now, buf)) > 0) {
			soft_host_input(b, buf, (size_t)n, now);
			moved++;
			any = true;
		}
		while ((n = out1(b, now, buf)) > 0) {
			soft_host_input(a, buf, (size_t)n, now);
			moved++;
			any = true;
		}
	}
	return moved;
}

static void test_arp_and_rxe_format(void **state)
{
	struct soft_host *a = host(IP_A, NULL), *b = host(IP_B, NULL);
	struct tmem mb = { .buf = calloc(1, 4096), .len = 4096, .rkey = 0x77 };
	struct rc_qp *qa = qp_on(a, NULL, IP_B, SOFT_QPN_BASE, 0x02, 1024);
	struct rc_qp *qb = qp_on(b, &mb, IP_A, SOFT_QPN_BASE, 0, 1024);
	uint8_t buf[SOFT_FRAME_MAX], data[1500];
	struct qp_wr wr = { .opcode = QP_OP_WRITE, .addr = data, .length = sizeof(data),
			    .remote_addr = (uintptr_t)mb.buf, .rkey = 0x77,
			    .flags = QP_WR_SIGNALED };
	struct frame_parsed p;
	struct qp_wc wc;
	int n;

	(void)state;
	memset(data, 0x3c, sizeof(data));
	assert_int_equal(rc_post_send(qa, &wr, 0), 0);
	soft_host_qp_changed(a, rc_qpn(qa));
	/* First an ARP request for B, broadcast; nothing else until B answers. */
	n = out1(a, 0, buf);
	assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
	assert_true(p.layers & FRAME_L_ARP);
	assert_int_equal(p.arp.op, FRAME_ARP_REQUEST);
	assert_int_equal(p.arp.tpa, IP_B);
	assert_int_equal(p.arp.spa, IP_A);
	assert_memory_equal(p.eth.dst, "\xff\xff\xff\xff\xff\xff", 6);
	assert_int_equal(out1(a, 0, buf), 0);
	assert_false(soft_host_tx_pending(a));
	soft_host_input(b, buf, 0, 0);   /* an empty frame: counted, ignored */
	n = frame_build_arp(buf, sizeof(buf), FRAME_ARP_REQUEST, soft_host_mac(a), IP_A,
			    (const uint8_t[6]){ 0 }, IP_B);
	soft_host_input(b, buf, (size_t)n, 0);
	n = out1(b, 0, buf);
	assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
	assert_int_equal(p.arp.op, FRAME_ARP_REPLY);
	assert_memory_equal(p.arp.sha, soft_host_mac(b), 6);
	assert_memory_equal(p.eth.dst, soft_host_mac(a), 6);
	soft_host_input(a, buf, (size_t)n, 0);
	/* Now the WRITE: two packets as rxe frames them. */
	for (int k = 0; k < 2; k++) {
		n = out1(a, 0, buf);
		assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
		assert_true(p.layers & FRAME_L_ROCE);
		assert_int_equal(p.ip.ttl, 64);
		assert_int_equal(p.ip.frag, FRAME_IPV4_DF);
		assert_int_equal(p.ip.id, k);   /* counts frames (the ARP request had none) */
		assert_int_equal(p.ip.tos, 0x02);
		assert_int_equal(p.udp.csum, 0);
		assert_int_equal(p.udp.sport, 0xc121);   /* rxe: 0xc000 | 0x11 * 0x11 */
		assert_int_equal(p.udp.dport, 4791);
		assert_int_equal(p.bth.pkey, 0xffff);
		assert_int_equal(p.bth.opcode, k ? FRAME_OP_RC_WRITE_LAST : FRAME_OP_RC_WRITE_FIRST);
		assert_int_equal(p.bth.ackreq, k == 1);
		assert_memory_equal(p.eth.dst, soft_host_mac(b), 6);
		assert_true(icrc_ref_ok(buf, (size_t)n));
		assert_int_equal(n, k ? 14 + 20 + 8 + 12 + 476 + 4 : 14 + 20 + 8 + 12 + 16 + 1024 + 4);
		soft_host_input(b, buf, (size_t)n, 0);
	}
	exchange(a, b, 0);
	assert_int_equal(rc_poll_cq(qa, &wc, 1), 1);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_memory_equal(mb.buf, data, sizeof(data));
	assert_int_equal(soft_host_stats(a)->arp_requests_tx, 1);
	assert_int_equal(soft_host_stats(b)->arp_replies_tx, 1);
	assert_int_equal(soft_host_stats(b)->drops[SOFT_DROP_MALFORMED], 1);
	/* rdma_get_udp_sport(0, l, r) worked by hand: 0x11 * 0x22 = 0x242. 0xffffff^2 =
	 * 0xfffffe000001; ^= >> 20: 0xfffff1ffffe1; ^= >> 40: 0xfffff1ffff1e; fl = 0xfff1e;
	 * 0x3f1e ^ (0xfc000 >> 14 = 0x3f) = 0x3f21. */
	assert_int_equal(soft_roce_sport(0x11, 0x22), 0xc242);
	assert_int_equal(soft_roce_sport(0x22, 0x11), 0xc242);
	assert_int_equal(soft_roce_sport(0xffffff, 0xffffff), 0xc000 | 0x3f21);
	rc_destroy(qa);
	rc_destroy(qb);
	soft_host_destroy(a);
	soft_host_destroy(b);
	free(mb.buf);
}

static void test_arp_retry_and_pending(void **state)
{
	struct soft_host *a = host(IP_A, NULL);
	uint8_t buf[SOFT_FRAME_MAX], pay[8] = "qpace";
	qp_time_ns t = 5 * QP_NS_PER_S;
	int reqs = 0, n;

	(void)state;
	for (int i = 0; i < SOFT_HOST_PENDING_PEER + 4; i++)
		assert_int_equal(soft_host_send_udp(a, IP_NOBODY, 5000, 4792, pay, sizeof(pay), t),
				 0);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PENDING], 4);
	assert_int_equal(soft_host_send_udp(a, IP_NOBODY, 1, 2, pay, SOFT_UDP_PAYLOAD_MAX + 1, t),
			 -EMSGSIZE);
	/* Requests at t, t + 100 ms, t + 200 ms, then the entry fails and the queue drains. */
	for (int step = 0; step < 5; step++) {
		while ((n = out1(a, t, buf)) > 0)
			reqs++;
		assert_true(soft_host_deadline(a) == QP_TIME_NEVER ||
			    soft_host_deadline(a) == t + 100 * QP_NS_PER_MS);
		t += 100 * QP_NS_PER_MS;
		soft_host_tick(a, t);
	}
	print_message("ARP: %d requests for an address nobody has, then failed; %llu datagrams "
		      "dropped\n", reqs,
		      (unsigned long long)soft_host_stats(a)->drops[SOFT_DROP_PENDING]);
	assert_int_equal(reqs, SOFT_ARP_TRIES);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PENDING], 4 + SOFT_HOST_PENDING_PEER);
	assert_int_equal(soft_host_deadline(a), QP_TIME_NEVER);
	/* Wanted again later: a new round of requests; the answer releases the datagram. */
	assert_int_equal(soft_host_send_udp(a, IP_NOBODY, 5000, 4792, pay, sizeof(pay), t), 0);
	n = out1(a, t, buf);
	assert_true(n > 0);
	n = frame_build_arp(buf, sizeof(buf), FRAME_ARP_REPLY,
			    (const uint8_t[6]){ 2, 0, 0, 0, 0, 0xfe }, IP_NOBODY, soft_host_mac(a),
			    IP_A);
	soft_host_input(a, buf, (size_t)n, t);
	n = out1(a, t, buf);
	{
		struct frame_parsed p;

		assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
		assert_int_equal(p.udp.dport, 4792);
		assert_int_equal(p.eth.dst[5], 0xfe);
		assert_int_equal(frame_udp_csum(p.ip.src, p.ip.dst, buf + p.udp_off, p.udp.len),
				 0xffff);
	}
	soft_host_destroy(a);
}

/* A datagram each to 40 unresolved peers (an IA receiver's first grants to 40 new
 * senders): every one waits for its own answer and leaves with its peer's MAC. With one
 * queue of 16 for all peers (before), the 24 oldest were dropped and those senders never
 * got a first grant (IA-TCP B and C stalled from ~20 senders). */
static void test_arp_pending_per_peer(void **state)
{
	enum { PEERS = 40 };
	struct soft_host *a = host(IP_A, NULL);
	uint8_t buf[SOFT_FRAME_MAX], pay[8] = "grant";
	qp_time_ns t = 5 * QP_NS_PER_S;
	int reqs = 0, sent = 0, n;

	(void)state;
	for (uint32_t i = 0; i < PEERS; i++) {
		assert_int_equal(soft_host_send_udp(a, 0x0a000100u + i, 5000, 4792, pay,
						    sizeof(pay), t), 0);
		while ((n = out1(a, t, buf)) > 0)
			reqs++;
	}
	assert_int_equal(reqs, PEERS);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PENDING], 0);
	for (uint32_t i = 0; i < PEERS; i++) {
		struct frame_parsed p;

		n = frame_build_arp(buf, sizeof(buf), FRAME_ARP_REPLY,
				    (const uint8_t[6]){ 2, 0, 0, 0, 1, (uint8_t)i }, 0x0a000100u + i,
				    soft_host_mac(a), IP_A);
		soft_host_input(a, buf, (size_t)n, t);
		while ((n = out1(a, t, buf)) > 0) {
			assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
			assert_int_equal(p.ip.dst, 0x0a000100u + i);
			assert_int_equal(p.eth.dst[5], i);
			sent++;
		}
	}
	assert_int_equal(sent, PEERS);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PENDING], 0);
	/* One peer still holds at most SOFT_HOST_PENDING_PEER: its oldest go. */
	for (int i = 0; i < SOFT_HOST_PENDING_PEER + 3; i++)
		assert_int_equal(soft_host_send_udp(a, IP_NOBODY, 5000, 4792, pay, sizeof(pay), t),
				 0);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PENDING], 3);
	soft_host_destroy(a);   /* frees what still waits (ASan: no leak) */
}

struct rx_seen {
	int calls;
	uint32_t qpn;
	uint64_t bytes;
};

static void rx_hook(void *arg, uint32_t qpn, uint32_t bytes, qp_time_ns now)
{
	struct rx_seen *r = arg;

	(void)now;
	r->calls++;
	r->qpn = qpn;
	r->bytes += bytes;
}

/* The rx_data hook (what clocks a receiver's IA credits in qpace-bench): called once per
 * frame whose payload the QP accepted, with that payload's bytes (1024 + 476 for a
 * 1500-byte WRITE at MTU 1024), and not for a duplicate the RC acknowledges again; the
 * bytes it reports are the RC's rx_bytes. */
static void test_rx_data_hook(void **state)
{
	struct rx_seen seen = { 0 };
	struct soft_host_params hp = { .ip = IP_B, .rx_data = rx_hook, .rx_data_arg = &seen };
	struct soft_host *a = host(IP_A, NULL), *b;
	struct tmem mb = { .buf = calloc(1, 4096), .len = 4096, .rkey = 0x77 };
	uint8_t buf[SOFT_FRAME_MAX], data[1500] = { 0 };
	struct qp_wr wr = { .opcode = QP_OP_WRITE, .addr = data, .length = sizeof(data),
			    .remote_addr = (uintptr_t)mb.buf, .rkey = 0x77 };
	struct rc_qp *qa, *qb;
	char err[128];
	int n;

	(void)state;
	soft_mac_from_ip(IP_B, hp.mac);
	b = soft_host_create(&hp, err, sizeof(err));
	assert_non_null(b);
	qa = qp_on(a, NULL, IP_B, SOFT_QPN_BASE, 0, 1024);
	qb = qp_on(b, &mb, IP_A, SOFT_QPN_BASE, 0, 1024);
	assert_int_equal(rc_post_send(qa, &wr, 0), 0);
	soft_host_qp_changed(a, rc_qpn(qa));
	exchange(a, b, 0);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.qpn, SOFT_QPN_BASE);
	assert_int_equal(seen.bytes, 1500);
	wr.length = 1024;
	assert_int_equal(rc_post_send(qa, &wr, 0), 0);
	soft_host_qp_changed(a, rc_qpn(qa));
	n = out1(a, 0, buf);
	assert_true(n > 1024);
	soft_host_input(b, buf, (size_t)n, 0);
	soft_host_input(b, buf, (size_t)n, 0);   /* the same frame again: a duplicate */
	exchange(a, b, 0);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(seen.bytes, 2524);
	assert_int_equal(rc_stats(qb)->rx_bytes, seen.bytes);
	rc_destroy(qa);
	rc_destroy(qb);
	soft_host_destroy(a);
	soft_host_destroy(b);
	free(mb.buf);
}

/* A UDP (telemetry payload) or RoCE frame to @dst_ip from @src_ip. */
static int frame_to(uint8_t *buf, uint32_t dst_ip, uint16_t dport, uint32_t src_ip,
		    uint32_t dst_qp, uint8_t opcode)
{
	struct frame_addr src = { .ip = src_ip, .port = 0xc123 }, dst = { .ip = dst_ip,
									  .port = dport };

	soft_mac_from_ip(src_ip, src.mac);
	soft_mac_from_ip(dst_ip, dst.mac);
	if (dport != 4791)
		return frame_build_udp(buf, SOFT_FRAME_MAX, &src, &dst, NULL,
				       (const uint8_t *)"telemetry!", 10);
	struct frame_roce_spec s = { .src = src, .dst = dst,
				     .bth = { .opcode = opcode, .dest_qp = dst_qp, .psn = 5 },
				     .aeth = { .syndrome = 0x1f } };
	return frame_build_roce(buf, SOFT_FRAME_MAX, &s);
}

static void test_demux_drops_and_telemetry(void **state)
{
	struct telem_seen seen = { 0 };
	struct soft_host *a = host(IP_A, &seen), *bare = host(IP_B, NULL);
	struct rc_qp *qa = qp_on(a, NULL, IP_B, SOFT_QPN_BASE, 0, 1024);
	uint8_t buf[SOFT_FRAME_MAX];
	const struct soft_host_stats *st = soft_host_stats(a);
	int n;

	(void)state;
	n = frame_to(buf, IP_A, 4792, IP_B, 0, 0);
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.src_ip, IP_B);
	assert_int_equal(seen.src_port, 0xc123);
	assert_int_equal(seen.len, 10);
	assert_memory_equal(seen.payload, "telemetry!", 10);
	buf[45] ^= 1;                            /* a payload byte: UDP checksum fails */
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_UDP_CSUM], 1);
	n = frame_to(buf, IP_B, 4792, IP_A, 0, 0);   /* to the host without a hook */
	soft_host_input(bare, buf, (size_t)n, 0);
	assert_int_equal(soft_host_stats(bare)->drops[SOFT_DROP_NO_HOOK], 1);
	n = frame_to(buf, IP_A, 9999, IP_B, 0, 0);
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_PORT], 1);
	n = frame_to(buf, IP_A, 4791, IP_B, SOFT_QPN_BASE + 5, FRAME_OP_RC_ACK);
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_NO_QP], 1);
	n = frame_to(buf, IP_A, 4791, 0x0a000009, SOFT_QPN_BASE, FRAME_OP_RC_ACK);
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_SOURCE], 1);
	n = frame_to(buf, IP_A, 4791, 0x0a000009, SOFT_QPN_BASE, FRAME_OP_CNP);   /* CNP: any source */
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(rc_stats(qa)->cnp_rx, 1);
	n = frame_to(buf, IP_A, 4791, IP_B, SOFT_QPN_BASE, FRAME_OP_RC_ACK);
	buf[n - 1] ^= 0x80;
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_ICRC], 1);
	buf[n - 1] ^= 0x80;
	soft_host_input(a, buf, (size_t)n, 0);   /* an ACK for nothing sent: the RC refuses */
	assert_int_equal(st->drops[SOFT_DROP_RC], 1);
	buf[24] ^= 1;                            /* IPv4 header checksum */
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_IP_CSUM], 1);
	buf[24] ^= 1;
	qp_put16(buf + 20, FRAME_IPV4_MF);       /* a fragment (checksum fixed up) */
	qp_put16(buf + 24, 0);
	qp_put16(buf + 24, frame_ipv4_csum(buf + 14, 20));
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_FRAGMENT], 1);
	buf[0] ^= 0x10;                          /* another MAC */
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_NOT_FOR_US], 1);
	buf[0] ^= 0x10;
	buf[12] = 0x86;                          /* IPv6 ethertype, an IPv4 header */
	buf[13] = 0xdd;
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_MALFORMED], 1);
	n = frame6_build(buf, sizeof(buf), &(struct frame6_spec){   /* RoCEv2 over IPv6 */
		.src = { 0xfe, 0x80, [15] = 2 }, .dst = { 0xfe, 0x80, [15] = 1 }, .sport = 0xc123,
		.bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .dest_qp = SOFT_QPN_BASE },
		.payload_len = 8 });
	soft_mac_from_ip(IP_A, buf);             /* to A's MAC */
	soft_host_input(a, buf, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_PROTO], 1);   /* the soft host is IPv4's */
	for (int d = 0; d < SOFT_DROP_COUNT; d++)
		assert_string_not_equal(soft_drop_str((enum soft_drop)d), "UNKNOWN");
	rc_destroy(qa);
	soft_host_destroy(a);
	soft_host_destroy(bare);
}

static void test_garbage_never_crashes(void **state)
{
	struct telem_seen seen = { 0 };
	struct soft_host *a = host(IP_A, &seen);
	struct rc_qp *qa = qp_on(a, NULL, IP_B, SOFT_QPN_BASE, 0, 1024);
	uint8_t good[SOFT_FRAME_MAX];
	uint64_t rng = 99, frames = 0, dropped = 0;
	const struct soft_host_stats *st = soft_host_stats(a);
	int n = frame_to(good, IP_A, 4791, IP_B, SOFT_QPN_BASE, FRAME_OP_RC_WRITE_ONLY);

	(void)state;
	for (int it = 0; it < 30000; it++) {
		size_t len;
		uint8_t *f;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		len = it % 3 == 0 ? (size_t)(rng >> 33) % (size_t)(n + 1) : (size_t)n;
		f = malloc(len ? len : 1);
		memcpy(f, good, len);
		if (it % 3 == 1)
			for (size_t i = 0; i < len; i++)
				f[i] = (uint8_t)(rng >> (i % 56));
		else if (it % 3 == 2 && len)
			f[(rng >> 20) % len] ^= (uint8_t)(1 + (rng >> 50) % 255);
		soft_host_input(a, f, len, 0);
		frames++;
		free(f);
	}
	for (int d = 0; d < SOFT_DROP_PENDING; d++)   /* input-side reasons */
		dropped += d == SOFT_DROP_RC ? 0 : st->drops[d];
	print_message("garbage: %llu frames in, %llu dropped and counted, %llu reached the QP "
		      "(%llu refused by it)\n", (unsigned long long)frames,
		      (unsigned long long)dropped, (unsigned long long)st->roce_rx,
		      (unsigned long long)st->drops[SOFT_DROP_RC]);
	assert_int_equal(st->rx_frames, frames);
	/* Every frame ends in exactly one place: a drop reason, ARP, telemetry, or the QP. */
	assert_int_equal(dropped + st->roce_rx + st->telemetry_rx + st->arp_rx, frames);
	assert_true(dropped > frames / 2);
	rc_destroy(qa);
	soft_host_destroy(a);
}

/* ---- many QPs, two hosts, a lossy link ---- */

/* The deadline the host keeps between calls (the earliest of its QPs', updated as their
 * timers are written) against its QPs asked now; 1 when that is an RC timer. */
static int deadline_kept(struct soft_host *h)
{
	qp_time_ns d = soft_host_deadline(h);

	assert_int_equal(d, soft_host_deadline_walk(h));
	return d != QP_TIME_NEVER;
}

#define NQP 8
#define MSG (256 * 1024)

static void test_many_qps_lossy(void **state)
{
	struct soft_host *a = host(IP_A, NULL), *b = host(IP_B, NULL);
	struct tmem mem[NQP];
	struct rc_qp *qa[NQP], *qb[NQP];
	uint8_t *src = malloc(MSG), buf[SOFT_FRAME_MAX];
	uint64_t rng = 7, lost = 0;
	qp_time_ns now = 0;
	int done = 0, n, steps = 0, same = 0;

	(void)state;
	for (int i = 0; i < MSG; i++)
		src[i] = (uint8_t)(i * 31 + 7);
	for (int i = 0; i < NQP; i++) {
		mem[i] = (struct tmem){ .buf = calloc(1, MSG), .len = MSG, .rkey = 0x100u + (uint32_t)i };
		qa[i] = qp_on(a, NULL, IP_B, SOFT_QPN_BASE + (uint32_t)i, 0, i % 2 ? 4096 : 1024);
	}
	for (int i = 0; i < NQP; i++)
		qb[i] = qp_on(b, &mem[i], IP_A, SOFT_QPN_BASE + (uint32_t)i, 0, i % 2 ? 4096 : 1024);
	for (int i = 0; i < NQP; i++) {
		struct qp_wr wr = { .opcode = QP_OP_WRITE, .wr_id = (uint64_t)i, .addr = src,
				    .length = MSG, .remote_addr = (uintptr_t)mem[i].buf,
				    .rkey = mem[i].rkey, .flags = QP_WR_SIGNALED };
		assert_int_equal(rc_post_send(qa[i], &wr, now), 0);
		soft_host_qp_changed(a, rc_qpn(qa[i]));
	}
	/* 1 us per frame each way, 1% of frames lost; time jumps to timers when idle. */
	while (done < NQP && now < 10 * QP_NS_PER_S) {
		struct soft_host *from[2] = { a, b }, *to[2] = { b, a };
		struct qp_wc wc;
		bool moved = false;

		for (int d = 0; d < 2; d++) {
			n = out1(from[d], now, buf);
			if (!n)
				continue;
			moved = true;
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if ((rng >> 33) % 100 == 0)
				lost++;
			else
				soft_host_input(to[d], buf, (size_t)n, now);
		}
		now += QP_NS_PER_US;
		if (!moved) {
			qp_time_ns t = qp_time_min(soft_host_deadline(a), soft_host_deadline(b));
			if (t == QP_TIME_NEVER)
				break;
			if (t > now)
				now = t;
		}
		soft_host_tick(a, now);
		soft_host_tick(b, now);
		for (int i = 0; i < NQP; i++) {
			if (rc_poll_cq(qa[i], &wc, 1) == 1) {
				assert_int_equal(wc.status, QP_WC_SUCCESS);
				done++;
			}
		}
		same += deadline_kept(a);   /* the sender: its RTOs */
		deadline_kept(b);
		steps++;
	}
	/* the sender has an RTO pending at nearly every step: compared with one */
	assert_true(same > steps - steps / 10);
	print_message("%d QPs x %d KB over one lossy link: %d done, %llu frames lost, "
		      "%.1f ms simulated\n", NQP, MSG / 1024, done, (unsigned long long)lost,
		      (double)now / 1e6);
	assert_int_equal(done, NQP);
	assert_true(lost > 0);
	for (int i = 0; i < NQP; i++) {
		assert_memory_equal(mem[i].buf, src, MSG);
		/* Round robin: every QP sent its share, none starved. */
		assert_true(rc_stats(qa[i])->tx_bytes >= MSG);
		rc_destroy(qa[i]);
		rc_destroy(qb[i]);
		free(mem[i].buf);
	}
	free(src);
	soft_host_destroy(a);
	soft_host_destroy(b);
}

/* ---- the walks over connected QPs skip the slots finished flows left ---- */

/* 130 QPs (three words of the connected bits), all but five released again: the host
 * sends from those five only, in slot order round robin from the last one that sent, and
 * its deadline and tick see them only. A released slot's RC still has data queued, so a
 * walk that visited it would send it. */
static void test_released_slots_skipped(void **state)
{
	enum { N = 130, PIECES = 3 };
	static const uint32_t keep[] = { 3, 64, 65, 127, 129 };
	const size_t nkeep = sizeof(keep) / sizeof(keep[0]);
	struct soft_host *a = host(IP_A, NULL), *b = host(IP_B, NULL);
	struct rc_qp *q[N];
	uint8_t src[PIECES * 1024], buf[SOFT_FRAME_MAX];
	struct frame_parsed p;
	qp_time_ns d;
	int n;

	(void)state;
	memset(src, 0x33, sizeof(src));
	for (int i = 0; i < N; i++) {
		struct qp_wr wr = { .opcode = QP_OP_WRITE, .wr_id = (uint64_t)i, .addr = src,
				    .length = sizeof(src), .remote_addr = 0x1000, .rkey = 1 };
		q[i] = qp_on(a, NULL, IP_B, 5000u + (uint32_t)i, 0, 1024);
		assert_int_equal(rc_post_send(q[i], &wr, 0), 0);
		soft_host_qp_changed(a, rc_qpn(q[i]));
	}
	for (int i = 0, k = 0; i < N; i++) {
		if (k < (int)nkeep && (uint32_t)i == keep[k]) {
			k++;
			continue;
		}
		soft_host_qpn_release(a, SOFT_QPN_BASE + (uint32_t)i);
	}
	/* the first output asks for B's MAC; B answers; then data flows */
	while ((n = out1(a, 0, buf)) > 0)
		soft_host_input(b, buf, (size_t)n, 0);
	while ((n = out1(b, 0, buf)) > 0)
		soft_host_input(a, buf, (size_t)n, 0);
	assert_true(soft_host_tx_pending(a));
	for (int round = 0; round < PIECES; round++) {
		for (size_t k = 0; k < nkeep; k++) {
			n = out1(a, 0, buf);
			assert_true(n > 0);
			assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
			assert_true(p.layers & FRAME_L_ROCE);
			assert_int_equal(p.bth.dest_qp, 5000u + keep[k]);
		}
	}
	assert_int_equal(out1(a, 0, buf), 0);     /* nothing from the released slots */
	assert_false(soft_host_tx_pending(a));
	/* the five wait for their ACKs: the deadline is their RTO, and a tick at it
	 * retransmits from them only */
	d = soft_host_deadline(a);
	assert_true(d != QP_TIME_NEVER && d > 0);
	assert_int_equal(deadline_kept(a), 1);
	soft_host_tick(a, d);
	for (size_t k = 0; k < nkeep; k++) {
		n = out1(a, d, buf);
		assert_true(n > 0);
		assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
		assert_int_equal(p.bth.dest_qp, 5000u + keep[k]);
	}
	for (int i = 0; i < N; i++)
		rc_destroy(q[i]);
	soft_host_destroy(a);
	soft_host_destroy(b);
}

/* ---- PFC: a paused priority sends nothing until the pause ends or an XON comes ---- */

static void pfc_to(struct soft_host *h, uint8_t enable, uint16_t quanta, qp_time_ns now)
{
	struct frame_pfc f = { .src = { 0x02, 0x51, 0x46, 0, 0, 1 }, .enable = enable };
	uint8_t buf[FRAME_ETH_MIN];

	for (int i = 0; i < FRAME_PFC_PRIOS; i++)
		f.quanta[i] = quanta;
	assert_int_equal(frame_build_pfc(buf, sizeof(buf), &f), FRAME_ETH_MIN);
	soft_host_input(h, buf, sizeof(buf), now);
}

/* Frames @a sends at @now, delivered to @b (and b's answers back); how many of them were
 * RoCE data of priority @prio. */
static int send_count(struct soft_host *a, struct soft_host *b, qp_time_ns now, unsigned prio,
		      int *other)
{
	uint8_t buf[SOFT_FRAME_MAX];
	struct frame_parsed p;
	int n, mine = 0;

	while ((n = out1(a, now, buf)) > 0) {
		assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);
		if ((p.layers & FRAME_L_ROCE) && frame_tos_priority(p.ip.tos) == prio)
			mine++;
		else if (other)
			(*other)++;
		soft_host_input(b, buf, (size_t)n, now);
		while ((n = out1(b, now, buf)) > 0)
			soft_host_input(a, buf, (size_t)n, now);
	}
	return mine;
}

static void test_pfc_pause_and_resume(void **state)
{
	struct soft_host *a = host(IP_A, NULL), *b = host(IP_B, NULL);
	struct tmem m3 = { .buf = calloc(1, 65536), .len = 65536, .rkey = 3 };
	struct tmem m0 = { .buf = calloc(1, 65536), .len = 65536, .rkey = 4 };
	/* QP 0x11 in priority 3 (DSCP 26, ECT0), QP 0x12 in priority 0. */
	struct rc_qp *q3 = qp_on(a, NULL, IP_B, SOFT_QPN_BASE, (26 << 2) | 2, 1024);
	struct rc_qp *q0 = qp_on(a, NULL, IP_B, SOFT_QPN_BASE + 1, 0, 1024);
	struct rc_qp *r3 = qp_on(b, &m3, IP_A, SOFT_QPN_BASE, 0, 1024);
	struct rc_qp *r0 = qp_on(b, &m0, IP_A, SOFT_QPN_BASE + 1, 0, 1024);
	static uint8_t data[16384];
	const qp_time_ns q100 = 100 * 512;   /* 100 quanta at the default 1 Gb/s */
	qp_time_ns t = 1000, t2, t3;
	const struct qp_pause *ps = soft_host_pause(a);
	int other = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	/* A PAUSE for priority 3 at 1000; then both QPs get a 16 KB WRITE. */
	pfc_to(a, 1u << 3, 100, t);
	for (int k = 0; k < 2; k++) {
		struct qp_wr wr = { .opcode = QP_OP_WRITE, .addr = data, .length = sizeof(data),
				    .remote_addr = (uintptr_t)(k ? m0.buf : m3.buf),
				    .rkey = k ? 4 : 3, .flags = QP_WR_SIGNALED };
		assert_int_equal(rc_post_send(k ? q0 : q3, &wr, t), 0);
		soft_host_qp_changed(a, rc_qpn(k ? q0 : q3));
	}
	/* Priority 0 goes (with ARP first); priority 3 holds. */
	assert_int_equal(send_count(a, b, t, 3, &other), 0);
	assert_true(other >= 16);
	assert_memory_equal(m0.buf, data, sizeof(data));
	assert_false(soft_host_tx_pending(a));
	assert_int_equal(soft_host_deadline(a), t + q100);   /* when it may send again */
	assert_int_equal(send_count(a, b, t + q100 - 1, 3, NULL), 0);
	soft_host_tick(a, t + q100);
	assert_true(soft_host_tx_pending(a));
	/* The pause ran out: a window of priority-3 packets, then the rest on ACKs. */
	assert_int_equal(send_count(a, b, t + q100, 3, NULL), 16);
	assert_memory_equal(m3.buf, data, sizeof(data));

	/* The longest pause (33.5 ms) ended by XON 200 us later. */
	t2 = t + 1000000;
	pfc_to(a, 1u << 3, 65535, t2);
	assert_int_equal(rc_post_send(q3, &(struct qp_wr){ .opcode = QP_OP_WRITE, .addr = data,
							  .length = 4096, .remote_addr =
							  (uintptr_t)m3.buf, .rkey = 3 }, t2), 0);
	soft_host_qp_changed(a, rc_qpn(q3));
	assert_int_equal(soft_host_deadline(a), t2 + 65535ull * 512);
	assert_int_equal(send_count(a, b, t2 + 1000, 3, NULL), 0);
	/* PFC for other priorities and 802.3x PAUSE change nothing. */
	pfc_to(a, 0xf7, 0, t2 + 2000);          /* XON for every priority but 3 */
	assert_int_equal(send_count(a, b, t2 + 2000, 3, NULL), 0);
	t3 = t2 + 200000;
	pfc_to(a, 1u << 3, 0, t3);
	assert_int_equal(send_count(a, b, t3, 3, NULL), 4);
	assert_int_equal(soft_host_stats(a)->pfc_rx, 4);
	assert_int_equal(ps->pauses[3], 2);
	assert_int_equal(ps->xons[3], 1);
	assert_int_equal(ps->xons[0], 1);
	assert_int_equal(qp_pause_time(ps, 3, t3 + QP_NS_PER_S), q100 + (t3 - t2));
	assert_int_equal(qp_pause_time(ps, 0, t3), 0);

	/* 802.3x PAUSE: a protocol drop; a PFC frame with the reserved octet set: malformed. */
	uint8_t buf[FRAME_ETH_MIN];
	struct frame_pfc f = { .src = { 0x02, 0, 0, 0, 0, 9 }, .enable = 0xff,
			       .quanta = { 9, 9, 9, 9, 9, 9, 9, 9 } };
	uint64_t malformed = soft_host_stats(a)->drops[SOFT_DROP_MALFORMED];
	frame_build_pfc(buf, sizeof(buf), &f);
	buf[14] = 0;
	buf[15] = 1;
	soft_host_input(a, buf, sizeof(buf), t3);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_PROTO], 1);
	frame_build_pfc(buf, sizeof(buf), &f);
	buf[16] = 0x80;
	soft_host_input(a, buf, sizeof(buf), t3);
	assert_int_equal(soft_host_stats(a)->drops[SOFT_DROP_MALFORMED], malformed + 1);
	assert_int_equal(soft_host_stats(a)->pfc_rx, 4);
	assert_false(qp_pause_active(ps, 3, t3 + 1));

	rc_destroy(q3);
	rc_destroy(q0);
	rc_destroy(r3);
	rc_destroy(r0);
	free(m3.buf);
	free(m0.buf);
	soft_host_destroy(a);
	soft_host_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_and_rxe_format),
		cmocka_unit_test(test_arp_retry_and_pending),
		cmocka_unit_test(test_arp_pending_per_peer),
		cmocka_unit_test(test_demux_drops_and_telemetry),
		cmocka_unit_test(test_rx_data_hook),
		cmocka_unit_test(test_garbage_never_crashes),
		cmocka_unit_test(test_many_qps_lossy),
		cmocka_unit_test(test_released_slots_skipped),
		cmocka_unit_test(test_pfc_pause_and_resume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
