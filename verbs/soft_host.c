/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend's emulated host: ARP, IPv4/UDP demultiplexing, RoCEv2 framing of its
 * RC QPs' packets, telemetry hand-off (contract in qpace/soft_host.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/feedback.h"
#include "soft_arp.h"

#define CTRL_FRAME_MAX (FRAME_ETH_HLEN + FRAME_IPV4_HLEN + FRAME_UDP_HLEN + SOFT_UDP_PAYLOAD_MAX)

enum qp_slot_state { SLOT_FREE = 0, SLOT_RESERVED, SLOT_ATTACHED, SLOT_CONNECTED };

struct host_qp {
	struct rc_qp *rc;
	uint32_t peer_ip;
	uint16_t sport;
	uint8_t tos;
	uint8_t state;           /* enum qp_slot_state */
};

struct ctrl_frame {
	uint32_t ip;             /* pending: the next hop to resolve */
	uint16_t len;
	uint8_t buf[CTRL_FRAME_MAX];
};

struct soft_host {
	struct soft_host_params p;
	struct soft_host_stats st;
	struct soft_arp arp;
	struct host_qp *qps;     /* max_qps slots; QPN = SOFT_QPN_BASE + index */
	uint64_t *conn;          /* a bit per slot, set while it is SLOT_CONNECTED: the walks
				  * over connected QPs skip the slots that finished flows left */
	uint64_t *txm;           /* a bit per connected slot whose RC core may have a frame to
				  * send: set at every call that can change that (a frame in, a
				  * timer, a post, the connect), cleared when rc_tx_pending says
				  * no, so the walks for frames to send (soft_host_output,
				  * soft_host_tx_pending) skip the QPs known to have none: a
				  * receiver's many ACK-only QPs, in the order a walk of every
				  * connected slot would see the others */
	uint32_t hw;             /* slots in use are below this */
	uint32_t rr;             /* next slot to send from */
	uint32_t cursor;         /* where the next reservation looks first */
	uint16_t ip_id;          /* IPv4 id of the next frame (Linux counts, even with DF) */
	struct ctrl_frame ctrl[SOFT_HOST_CTRL];
	uint32_t ctrl_head, ctrl_tail;
	struct ctrl_frame **pend; /* datagrams waiting for ARP, oldest first; each its own */
	uint32_t npend, pend_cap; /*   allocation, made only when a peer is unresolved */
	struct qp_pause pause;   /* PFC: per priority */
	/* The earliest rc_deadline of the connected QPs, kept between calls (rc.h's
	 * rc_dl_min): walked again only after the earliest one moved later or a slot was
	 * let go. */
	struct rc_dl_min qps_dl;
};

static const uint8_t bcast[FRAME_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static const char *const drop_names[SOFT_DROP_COUNT] = {
	[SOFT_DROP_MALFORMED] = "malformed",
	[SOFT_DROP_NOT_FOR_US] = "not-for-us",
	[SOFT_DROP_PROTO] = "protocol",
	[SOFT_DROP_IP_CSUM] = "ip-checksum",
	[SOFT_DROP_FRAGMENT] = "ip-fragment",
	[SOFT_DROP_UDP_CSUM] = "udp-checksum",
	[SOFT_DROP_ICRC] = "icrc",
	[SOFT_DROP_NO_QP] = "no-such-qp",
	[SOFT_DROP_SOURCE] = "wrong-source",
	[SOFT_DROP_NO_HOOK] = "no-telemetry-hook",
	[SOFT_DROP_PORT] = "udp-port",
	[SOFT_DROP_RC] = "rc-refused",
	[SOFT_DROP_PENDING] = "arp-pending",
	[SOFT_DROP_CTRL] = "output-queue",
};

const char *soft_drop_str(enum soft_drop d)
{
	return (unsigned)d < SOFT_DROP_COUNT ? drop_names[d] : "UNKNOWN";
}

_Static_assert(SOFT_DROP_COUNT <= 64, "drop_seen holds a bit per drop reason");

static void drop(struct soft_host *h, enum soft_drop d)
{
	h->st.drops[d]++;
	h->st.drop_seen |= 1ull << d;
	h->st.last_drop = d;
}

uint16_t soft_roce_sport(uint32_t lqpn, uint32_t rqpn)
{
	/* include/rdma/ib_verbs.h: rdma_calc_flow_label, rdma_flow_label_to_udp_sport */
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = (uint32_t)(v & 0xfffff);
	return (uint16_t)(0xc000u | ((fl & 0x3fffu) ^ ((fl & 0xfc000u) >> 14)));
}

void soft_mac_from_ip(uint32_t ip, uint8_t mac[FRAME_ETH_ALEN])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(ip >> 24);
	mac[3] = (uint8_t)(ip >> 16);
	mac[4] = (uint8_t)(ip >> 8);
	mac[5] = (uint8_t)ip;
}

/* ---- life cycle and QPs ---- */

struct soft_host *soft_host_create(const struct soft_host_params *p, char *err,
				   size_t errlen)
{
	struct soft_host *h;
	uint32_t max = p->max_qps ? p->max_qps : 1024;

	if (max > SOFT_HOST_QPS_MAX) {
		snprintf(err, errlen, "soft host: max_qps = %u is out of range 1..%u", max,
			 SOFT_HOST_QPS_MAX);
		return NULL;
	}
	if (!p->ip || frame_mac_is_multicast(p->mac)) {
		snprintf(err, errlen, "soft host: needs a unicast MAC and a non-zero IPv4 address");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h) {
		h->qps = calloc(max, sizeof(*h->qps));
		h->conn = calloc((max + 63) / 64, sizeof(*h->conn));
		h->txm = calloc((max + 63) / 64, sizeof(*h->txm));
	}
	if (!h || !h->qps || !h->conn || !h->txm) {
		if (h) {
			free(h->qps);
			free(h->conn);
			free(h->txm);
		}
		free(h);
		snprintf(err, errlen, "soft host: out of memory");
		return NULL;
	}
	h->qps_dl = (struct rc_dl_min){ .t = QP_TIME_NEVER };
	h->p = *p;
	h->p.max_qps = max;
	if (!h->p.link_bps)
		h->p.link_bps = QP_GBPS;
	if (!h->p.telemetry_port)
		h->p.telemetry_port = FB_PORT;
	h->arp.retry_ns = p->arp_retry_ns ? p->arp_retry_ns : 100 * QP_NS_PER_MS;
	return h;
}

void soft_host_destroy(struct soft_host *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->npend; i++)
		free(h->pend[i]);
	free(h->pend);
	free(h->qps);
	free(h->conn);
	free(h->txm);
	free(h);
}

static struct host_qp *slot_of(struct soft_host *h, uint32_t qpn)
{
	if (qpn < SOFT_QPN_BASE || qpn - SOFT_QPN_BASE >= h->p.max_qps)
		return NULL;
	return &h->qps[qpn - SOFT_QPN_BASE];
}

/* The first connected slot at or after @i, or UINT32_MAX: the walks below visit the
 * connected slots in index order, as a walk over every slot below hw did, and read the
 * bits afresh at each step (a QP that a tick ends or connects is seen as it was). */
static uint32_t conn_next(const struct soft_host *h, uint32_t i)
{
	uint32_t w = i / 64, nw = (h->hw + 63) / 64;
	uint64_t bits;

	if (i >= h->hw)
		return UINT32_MAX;
	bits = h->conn[w] & (~0ull << (i % 64));
	while (!bits) {
		if (++w >= nw)
			return UINT32_MAX;
		bits = h->conn[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

static void conn_set(struct soft_host *h, uint32_t i, bool on)
{
	h->qps_dl.stale = true;
	if (on) {
		h->conn[i / 64] |= 1ull << (i % 64);
		h->txm[i / 64] |= 1ull << (i % 64);
	} else {
		h->conn[i / 64] &= ~(1ull << (i % 64));
		h->txm[i / 64] &= ~(1ull << (i % 64));
	}
}

/* Slot @i's RC core may have changed: look at it again for frames to send. */
static inline void txm_set(struct soft_host *h, uint32_t i)
{
	h->txm[i / 64] |= (h->conn[i / 64] & (1ull << (i % 64)));
}

/* The first connected slot at or after @i that may have a frame to send, UINT32_MAX when
 * none (conn_next over txm). */
static uint32_t txm_next(const struct soft_host *h, uint32_t i)
{
	uint32_t w = i / 64, nw = (h->hw + 63) / 64;
	uint64_t bits;

	if (w >= nw)
		return UINT32_MAX;
	bits = h->txm[w] & (~0ull << (i % 64));
	while (!bits) {
		if (++w >= nw)
			return UINT32_MAX;
		bits = h->txm[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* Is slot @i's RC core to send? If not, its bit goes until it changes again. */
static bool tx_pending(struct soft_host *h, uint32_t i)
{
	if (rc_tx_pending(h->qps[i].rc))
		return true;
	h->txm[i / 64] &= ~(1ull << (i % 64));
	return false;
}

void soft_host_qp_changed(struct soft_host *h, uint32_t qpn)
{
	const struct host_qp *q = slot_of(h, qpn);

	if (q)
		txm_set(h, (uint32_t)(q - h->qps));
}

int soft_host_qpn_reserve(struct soft_host *h)
{
	for (uint32_t k = 0; k < h->p.max_qps; k++) {
		uint32_t i = (h->cursor + k) % h->p.max_qps;

		if (h->qps[i].state != SLOT_FREE)
			continue;
		h->qps[i] = (struct host_qp){ .state = SLOT_RESERVED };
		h->cursor = i + 1;
		if (i + 1 > h->hw)
			h->hw = i + 1;
		return (int)(SOFT_QPN_BASE + i);
	}
	return -ENOSPC;
}

int soft_host_qp_attach(struct soft_host *h, uint32_t qpn, struct rc_qp *rc)
{
	struct host_qp *q = slot_of(h, qpn);

	if (!q || q->state != SLOT_RESERVED || rc_qpn(rc) != qpn)
		return -EINVAL;
	q->rc = rc;
	q->state = SLOT_ATTACHED;
	return 0;
}

int soft_host_qp_connect(struct soft_host *h, uint32_t qpn, uint32_t peer_ip,
			 uint32_t peer_qpn, uint8_t tos)
{
	struct host_qp *q = slot_of(h, qpn);

	if (!q || q->state != SLOT_ATTACHED || !peer_ip || !peer_qpn || peer_qpn > RC_PSN_MASK)
		return -EINVAL;
	q->peer_ip = peer_ip;
	q->sport = soft_roce_sport(qpn, peer_qpn);
	q->tos = tos;
	q->state = SLOT_CONNECTED;
	conn_set(h, (uint32_t)(q - h->qps), true);
	rc_watch_deadline(q->rc, &h->qps_dl);   /* only connected QPs are in the walk */
	return 0;
}

int soft_host_qp_snd_psn(struct soft_host *h, uint32_t qpn, uint32_t *psn)
{
	const struct host_qp *q = slot_of(h, qpn);

	if (!q || !q->rc || (q->state != SLOT_ATTACHED && q->state != SLOT_CONNECTED))
		return -ENOENT;
	*psn = rc_snd_psn(q->rc);
	return 0;
}

int soft_host_qp_window(struct soft_host *h, uint32_t qpn, uint32_t pkts)
{
	struct host_qp *q = slot_of(h, qpn);

	if (!q || !q->rc || (q->state != SLOT_ATTACHED && q->state != SLOT_CONNECTED))
		return -ENOENT;
	rc_set_window_cap(q->rc, pkts);
	return 0;
}

void soft_host_qpn_release(struct soft_host *h, uint32_t qpn)
{
	struct host_qp *q = slot_of(h, qpn);

	if (q) {
		if (q->rc)
			rc_watch_deadline(q->rc, NULL);
		*q = (struct host_qp){ .state = SLOT_FREE };
		conn_set(h, (uint32_t)(q - h->qps), false);
	}
}

/* ---- control frames: ARP and UDP ---- */

static bool ctrl_push(struct soft_host *h, const uint8_t *f, size_t len)
{
	struct ctrl_frame *c;

	if (h->ctrl_tail - h->ctrl_head == SOFT_HOST_CTRL || len > CTRL_FRAME_MAX) {
		drop(h, SOFT_DROP_CTRL);
		return false;
	}
	c = &h->ctrl[h->ctrl_tail++ % SOFT_HOST_CTRL];
	memcpy(c->buf, f, len);
	c->len = (uint16_t)len;
	return true;
}

static void arp_send(struct soft_host *h, uint16_t op, const uint8_t *tha, uint32_t tpa)
{
	uint8_t f[FRAME_ETH_MIN];
	int len = frame_build_arp(f, sizeof(f), op, h->p.mac, h->p.ip, tha, tpa);

	if (len > 0 && ctrl_push(h, f, (size_t)len)) {
		if (op == FRAME_ARP_REQUEST)
			h->st.arp_requests_tx++;
		else
			h->st.arp_replies_tx++;
	}
}

static void arp_request(struct soft_host *h, uint32_t ip)
{
	static const uint8_t zero[FRAME_ETH_ALEN];

	arp_send(h, FRAME_ARP_REQUEST, zero, ip);
}

/* Datagrams waiting for @ip: send them (mac) or drop them (NULL). */
static void pend_release(struct soft_host *h, uint32_t ip, const uint8_t *mac)
{
	uint32_t keep = 0;

	for (uint32_t i = 0; i < h->npend; i++) {
		struct ctrl_frame *c = h->pend[i];

		if (c->ip != ip) {
			h->pend[keep++] = c;
			continue;
		}
		if (!mac) {
			drop(h, SOFT_DROP_PENDING);
		} else {
			memcpy(c->buf, mac, FRAME_ETH_ALEN);
			ctrl_push(h, c->buf, c->len);
		}
		free(c);
	}
	h->npend = keep;
}

/* Drop the oldest datagram waiting for @ip (any peer: 0). */
static void pend_drop_oldest(struct soft_host *h, uint32_t ip)
{
	uint32_t i = 0;

	while (i < h->npend && ip && h->pend[i]->ip != ip)
		i++;
	if (i == h->npend)
		return;
	free(h->pend[i]);
	memmove(&h->pend[i], &h->pend[i + 1], sizeof(h->pend[0]) * (h->npend - i - 1));
	h->npend--;
	drop(h, SOFT_DROP_PENDING);
}

/* Room for one more datagram to unresolved @ip: per peer, then in all, the oldest goes. */
static struct ctrl_frame *pend_slot(struct soft_host *h, uint32_t ip)
{
	uint32_t mine = 0;

	for (uint32_t i = 0; i < h->npend; i++)
		mine += h->pend[i]->ip == ip;
	if (mine >= SOFT_HOST_PENDING_PEER)
		pend_drop_oldest(h, ip);
	else if (h->npend == SOFT_HOST_PENDING)
		pend_drop_oldest(h, 0);
	if (h->npend == h->pend_cap) {
		uint32_t cap = h->pend_cap ? 2 * h->pend_cap : 8;
		struct ctrl_frame **p = realloc(h->pend, cap * sizeof(*p));

		if (!p)
			return NULL;
		h->pend = p;
		h->pend_cap = cap;
	}
	return h->pend[h->npend] = malloc(sizeof(struct ctrl_frame));
}

static void arp_input(struct soft_host *h, const struct frame_arp *a, qp_time_ns now)
{
	bool for_us = a->tpa == h->p.ip;

	if (a->spa && !frame_mac_is_multicast(a->sha) &&
	    soft_arp_learn(&h->arp, a->spa, a->sha, now, for_us)) {
		h->st.arp_learned++;
		pend_release(h, a->spa, a->sha);
	}
	if (for_us && a->op == FRAME_ARP_REQUEST)
		arp_send(h, FRAME_ARP_REPLY, a->sha, a->spa);
}

int soft_host_send_udp(struct soft_host *h, uint32_t dst_ip, uint16_t sport, uint16_t dport,
		       const uint8_t *payload, size_t len, qp_time_ns now)
{
	struct frame_addr src = { .ip = h->p.ip, .port = sport }, dst = { .ip = dst_ip,
									  .port = dport };
	struct ctrl_frame *c;
	const uint8_t *mac;
	bool ask;
	int n;

	if (len > SOFT_UDP_PAYLOAD_MAX)
		return -EMSGSIZE;
	memcpy(src.mac, h->p.mac, FRAME_ETH_ALEN);
	mac = soft_arp_lookup(&h->arp, dst_ip, now, &ask);
	if (ask)
		arp_request(h, dst_ip);
	if (mac)
		memcpy(dst.mac, mac, FRAME_ETH_ALEN);
	if (mac && h->ctrl_tail - h->ctrl_head == SOFT_HOST_CTRL)
		return -ENOBUFS;
	c = mac ? &h->ctrl[h->ctrl_tail % SOFT_HOST_CTRL] : pend_slot(h, dst_ip);
	if (!c)
		return -ENOMEM;
	n = frame_build_udp(c->buf, sizeof(c->buf), &src, &dst,
			    &(struct frame_ip_opts){ .id = h->ip_id++ }, payload, len);
	if (n < 0) {
		if (!mac)
			free(c);
		return n;
	}
	c->len = (uint16_t)n;
	c->ip = dst_ip;
	if (mac)
		h->ctrl_tail++;
	else
		h->npend++;
	h->st.udp_tx++;
	return 0;
}

/* ---- input ---- */

static void roce_input(struct soft_host *h, const uint8_t *f, const struct frame_parsed *p,
		       qp_time_ns now)
{
	struct host_qp *q;
	uint64_t rx_before, self_before;

	if (!(p->layers & FRAME_L_ROCE)) {
		drop(h, SOFT_DROP_MALFORMED);
		return;
	}
	if (!h->p.icrc_skip && !frame_icrc_ok(f, p)) {
		drop(h, SOFT_DROP_ICRC);
		return;
	}
	q = slot_of(h, p->bth.dest_qp);
	if (!q || q->state != SLOT_CONNECTED) {
		drop(h, SOFT_DROP_NO_QP);
		return;
	}
	if (p->bth.opcode != FRAME_OP_CNP && p->ip.src != q->peer_ip) {
		drop(h, SOFT_DROP_SOURCE);
		return;
	}
	h->st.roce_rx++;
	rx_before = rc_rx_data_bytes(q->rc);
	self_before = rc_stats(q->rc)->cnp_self;
	txm_set(h, (uint32_t)(q - h->qps));
	if (rc_rx(q->rc, f, p, now) < 0) {
		drop(h, SOFT_DROP_RC);
		return;
	}
	if ((p->bth.opcode == FRAME_OP_CNP || rc_stats(q->rc)->cnp_self != self_before) &&
	    h->p.cnp) {   /* a CNP, or a CE-marked response to a READ of its own (rc.h) */
		h->st.cnp_rx++;
		h->p.cnp(h->p.cnp_arg, p->bth.dest_qp, now);
	}
	if (h->p.rx_data && rc_rx_data_bytes(q->rc) != rx_before)
		h->p.rx_data(h->p.rx_data_arg, p->bth.dest_qp,
			     (uint32_t)(rc_rx_data_bytes(q->rc) - rx_before), now);
}

static void telemetry_input(struct soft_host *h, const uint8_t *f, const struct frame_parsed *p,
			    qp_time_ns now)
{
	if (!h->p.telemetry) {
		drop(h, SOFT_DROP_NO_HOOK);
		return;
	}
	h->st.telemetry_rx++;
	h->p.telemetry(h->p.telemetry_arg, p->ip.src, p->udp.sport, f + p->payload_off,
		       p->payload_len, now);
}

/* Where a parsed frame goes: a drop reason, or SOFT_DROP_COUNT when it was consumed. */
static enum soft_drop dispatch(struct soft_host *h, const uint8_t *f,
			       const struct frame_parsed *p, qp_time_ns now)
{
	if (p->layers & FRAME_L_PFC) {   /* its destination is the MAC control address */
		h->st.pfc_rx++;
		qp_pause_rx(&h->pause, &p->pfc, h->p.link_bps, now);
		return SOFT_DROP_COUNT;
	}
	if (p->eth.ethertype == FRAME_ETHERTYPE_MAC_CONTROL)   /* 802.3x PAUSE and the rest */
		return SOFT_DROP_PROTO;
	if (memcmp(p->eth.dst, h->p.mac, FRAME_ETH_ALEN) &&
	    memcmp(p->eth.dst, bcast, FRAME_ETH_ALEN))
		return SOFT_DROP_NOT_FOR_US;
	if (p->layers & FRAME_L_ARP) {
		h->st.arp_rx++;
		arp_input(h, &p->arp, now);
		return SOFT_DROP_COUNT;
	}
	if (!(p->layers & FRAME_L_IPV4))
		return SOFT_DROP_PROTO;
	/* As Linux: the header checksum before the address, and a UDP checksum that is
	 * not 0 before the payload goes anywhere (rxe's too: the ICRC does not cover it). */
	if (frame_ipv4_csum(f + p->ip_off, p->ip.hlen) != 0)
		return SOFT_DROP_IP_CSUM;
	if (p->ip.dst != h->p.ip)
		return SOFT_DROP_NOT_FOR_US;
	if (p->ip.frag & (FRAME_IPV4_MF | FRAME_IPV4_OFFMASK))
		return SOFT_DROP_FRAGMENT;
	if (!(p->layers & FRAME_L_UDP))
		return SOFT_DROP_PROTO;
	if (p->udp.csum &&
	    frame_udp_csum(p->ip.src, p->ip.dst, f + p->udp_off, p->udp.len) != 0xffff)
		return SOFT_DROP_UDP_CSUM;
	if (p->udp.dport == FRAME_ROCEV2_PORT)
		roce_input(h, f, p, now);
	else if (p->udp.dport == h->p.telemetry_port)
		telemetry_input(h, f, p, now);
	else
		return SOFT_DROP_PORT;
	return SOFT_DROP_COUNT;
}

void soft_host_input(struct soft_host *h, const uint8_t *f, size_t len, qp_time_ns now)
{
	struct frame_parsed p;
	enum soft_drop d;

	h->st.rx_frames++;
	h->st.rx_bytes += len;
	d = frame_parse(&p, f, len) < 0 ? SOFT_DROP_MALFORMED : dispatch(h, f, &p, now);
	if (d != SOFT_DROP_COUNT)
		drop(h, d);
}

/* ---- output and timers ---- */

static int ctrl_pop(struct soft_host *h, uint8_t *buf, size_t cap)
{
	const struct ctrl_frame *c = &h->ctrl[h->ctrl_head % SOFT_HOST_CTRL];

	if (cap < c->len)
		return -EMSGSIZE;
	memcpy(buf, c->buf, c->len);
	h->ctrl_head++;
	return c->len;
}

static int qp_output(struct soft_host *h, struct host_qp *q, const uint8_t *mac,
		     qp_time_ns now, uint8_t *buf, size_t cap)
{
	struct frame_roce_spec s;

	if (!rc_tx_next(q->rc, now, &s))
		return 0;
	s.src = (struct frame_addr){ .ip = h->p.ip, .port = q->sport };
	memcpy(s.src.mac, h->p.mac, FRAME_ETH_ALEN);
	s.dst = (struct frame_addr){ .ip = q->peer_ip, .port = FRAME_ROCEV2_PORT };
	memcpy(s.dst.mac, mac, FRAME_ETH_ALEN);
	s.ip = (struct frame_ip_opts){ .tos = q->tos, .id = h->ip_id++ };
	s.no_icrc = h->p.icrc_skip;
	return frame_build_roce(buf, cap, &s);
}

/* Slot @i's next frame when it has one to send and may: its length (rr moves past it). */
static int slot_output(struct soft_host *h, uint32_t i, qp_time_ns now, uint8_t *buf,
		       size_t cap)
{
	struct host_qp *q = &h->qps[i];
	const uint8_t *mac;
	bool ask;
	int len;

	if (!tx_pending(h, i) || qp_pause_active(&h->pause, frame_tos_priority(q->tos), now))
		return 0;
	mac = soft_arp_lookup(&h->arp, q->peer_ip, now, &ask);
	if (ask)
		arp_request(h, q->peer_ip);
	if (!mac)
		return 0;
	len = qp_output(h, q, mac, now, buf, cap);
	h->rr = i + 1;
	return len;
}

int soft_host_output(struct soft_host *h, qp_time_ns now, uint8_t *buf, size_t cap)
{
	int len = 0;
	uint32_t r0;

	if (cap < SOFT_FRAME_MAX)
		return -EMSGSIZE;
	if (h->ctrl_head != h->ctrl_tail) {
		len = ctrl_pop(h, buf, cap);
		goto out;
	}
	qp_pause_expire(&h->pause, now);
	/* Round robin from rr: the connected slots at or after it, then those before it. */
	r0 = h->hw ? h->rr % h->hw : 0;
	for (int pass = 0; pass < 2 && len == 0; pass++) {
		uint32_t hi = pass ? r0 : UINT32_MAX;

		for (uint32_t i = txm_next(h, pass ? 0 : r0); i < hi && len == 0;
		     i = txm_next(h, i + 1))
			len = slot_output(h, i, now, buf, cap);
	}
	if (len == 0 && h->ctrl_head != h->ctrl_tail)
		len = ctrl_pop(h, buf, cap);
out:
	if (len > 0) {
		h->st.tx_frames++;
		h->st.tx_bytes += (uint64_t)len;
	}
	return len;
}

bool soft_host_tx_pending(struct soft_host *h)
{
	if (h->ctrl_head != h->ctrl_tail)
		return true;
	for (uint32_t w = 0, nw = (h->hw + 63) / 64; w < nw; w++) {
		for (uint64_t b = h->txm[w]; b; b &= b - 1) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(b);
			const struct host_qp *q = &h->qps[i];

			if (tx_pending(h, i) &&
			    !qp_pause_until(&h->pause, frame_tos_priority(q->tos)) &&
			    soft_arp_state(&h->arp, q->peer_ip) == SOFT_ARP_REACHABLE)
				return true;
		}
	}
	return false;
}

/* The connected QPs' earliest rc_deadline, walked now, and the first QP that has it (NULL
 * when none has one). */
static qp_time_ns qps_deadline_walk(const struct soft_host *h, const struct rc_qp **who)
{
	qp_time_ns d = QP_TIME_NEVER;

	*who = NULL;
	for (uint32_t w = 0, nw = (h->hw + 63) / 64; w < nw; w++)
		for (uint64_t b = h->conn[w]; b; b &= b - 1) {
			const struct rc_qp *rc = h->qps[w * 64 + (uint32_t)__builtin_ctzll(b)].rc;
			qp_time_ns t = rc_deadline(rc);
			if (t < d) {
				d = t;
				*who = rc;
			}
		}
	return d;
}

qp_time_ns soft_host_deadline(struct soft_host *h)
{
	if (h->qps_dl.stale) {
		h->qps_dl.t = qps_deadline_walk(h, &h->qps_dl.who);
		h->qps_dl.stale = false;
	}
	return qp_time_min(qp_time_min(soft_arp_deadline(&h->arp), qp_pause_next(&h->pause)),
			   h->qps_dl.t);
}

qp_time_ns soft_host_deadline_walk(struct soft_host *h)
{
	const struct rc_qp *who;

	return qp_time_min(qp_time_min(soft_arp_deadline(&h->arp), qp_pause_next(&h->pause)),
			   qps_deadline_walk(h, &who));
}

void soft_host_tick(struct soft_host *h, qp_time_ns now)
{
	uint32_t ip, failed;

	qp_pause_expire(&h->pause, now);
	for (uint32_t i = conn_next(h, 0); i != UINT32_MAX; i = conn_next(h, i + 1)) {
		struct host_qp *q = &h->qps[i];

		if (rc_deadline(q->rc) <= now) {
			rc_tick(q->rc, now);
			txm_set(h, i);
		}
	}
	for (;;) {
		ip = soft_arp_due(&h->arp, now, &failed);
		if (failed)
			pend_release(h, failed, NULL);
		else if (ip)
			arp_request(h, ip);
		else
			break;
	}
}

const struct soft_host_stats *soft_host_stats(const struct soft_host *h)
{
	return &h->st;
}

const struct qp_pause *soft_host_pause(const struct soft_host *h)
{
	return &h->pause;
}

uint32_t soft_host_ip(const struct soft_host *h)
{
	return h->p.ip;
}

const uint8_t *soft_host_mac(const struct soft_host *h)
{
	return h->p.mac;
}
