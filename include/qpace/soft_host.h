/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An emulated host for the soft backend: one MAC, one IPv4 address, its RC QPs.
 *
 * Pure, like the RC core it carries: frames in (soft_host_input), frames out
 * (soft_host_output, pulled one at a time into the caller's buffer), timers
 * (soft_host_deadline / soft_host_tick); time passed in; no I/O, no printing, allocation
 * only in soft_host_create. The I/O shell (verbs/soft.c) moves the frames.
 *
 * In:  PFC frames (IEEE 802.1Qbb, to 01-80-C2-00-00-01): each enabled priority is paused
 *        for its time in quanta of 512 bit times at link_bps, or resumed by time 0 (XON);
 *        other MAC control frames (802.3x PAUSE) are dropped as protocol.
 *      Ethernet to our MAC or broadcast.
 *        ARP: a request for our IP is answered; sender addresses of requests and replies
 *        addressed to us are learned (RFC 826).
 *        IPv4 to our IP (header checksum checked, no fragments), UDP (a checksum that
 *        is not 0 checked, as Linux checks it before rxe sees the datagram):
 *          4791 -> ICRC checked -> the RC QP named by the BTH destination QP, only from
 *                  the QP's peer address (CNPs from anywhere); a CNP the QP takes goes
 *                  on to the cnp hook (DCQCN's reaction point is the hook's owner), and so
 *                  does a CE-marked response to its own READ (rc.h: cnp_self); a
 *                  CE-marked request makes the QP send a CNP (rc.h: the NP); payload
 *                  it accepted goes to the rx_data hook;
 *          telemetry port (4792) -> the telemetry hook with the payload and the sender.
 *        Everything else is dropped and counted by reason (enum soft_drop).
 * Out: ARP replies and requests, UDP datagrams from soft_host_send_udp, then the QPs'
 *      packets, one per QP in turn. A QP whose priority (frame_tos_priority of its TOS:
 *      DSCP >> 3) is paused sends nothing until the pause runs out or an XON comes; its
 *      RC timers keep running, as a NIC's do. ARP and UDP datagrams are not held.
 *      RoCEv2 frames as kernel rxe builds them (checked
 *      against frames captured from Linux 6.1 rxe, tests/vectors/): UDP source port
 *      rdma_get_udp_sport(flow label 0, local QPN, remote QPN), TTL 64, DF, an IP id that
 *      counts frames, TOS = the QP's traffic class, UDP checksum 0, ICRC.
 * ARP: a peer's MAC is resolved on first use; requests repeat every arp_retry_ns, three
 *      times, then the entry fails until something needs it again. While a peer is
 *      unresolved its QPs hold their packets (the RC core keeps them) and UDP datagrams
 *      wait, as Linux's neighbour queues hold them: at most SOFT_HOST_PENDING_PEER a peer
 *      (beyond that the peer's oldest is dropped) and SOFT_HOST_PENDING in all (beyond
 *      that the oldest of all); memory only while they wait. A receiver that answers 96
 *      new senders at once (IA credits' first grants) keeps every answer.
 */
#ifndef QPACE_SOFT_HOST_H
#define QPACE_SOFT_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/pause.h"
#include "qpace/rate.h"
#include "qpace/rc.h"
#include "qpace/time.h"

#define SOFT_FRAME_MAX 4352           /* a 4096-byte RoCE payload with every header */
#define SOFT_UDP_PAYLOAD_MAX 1472     /* soft_host_send_udp: one 1500-byte IP packet */
#define SOFT_HOST_PENDING 1024        /* datagrams waiting for ARP, in all */
#define SOFT_HOST_PENDING_PEER 16     /* ... for one peer */
#define SOFT_HOST_CTRL 32             /* ARP and UDP frames waiting to go out */
#define SOFT_ARP_ENTRIES 256       /* one per peer: a 127-sender incast receiver has 127 */
#define SOFT_ARP_TRIES 3
#define SOFT_HOST_QPS_MAX 65536u
#define SOFT_QPN_BASE 0x11            /* as rxe: QPNs 0 and 1 are special, rxe starts at 17 */

/* Telemetry datagram for this host: the UDP payload and who sent it. */
typedef void (*soft_telemetry_fn)(void *arg, uint32_t src_ip, uint16_t src_port,
				  const uint8_t *payload, size_t len, qp_time_ns now);
/* Payload a local QP accepted from one frame, in order (rc_rx_data_bytes: a request's
 * data, or the response to its READ), at the time the host took the frame in. */
typedef void (*soft_rx_data_fn)(void *arg, uint32_t qpn, uint32_t bytes, qp_time_ns now);

/* A CNP (BTH 0x81) for this host's QP @qpn was received and taken by it. */
typedef void (*soft_cnp_fn)(void *arg, uint32_t qpn, qp_time_ns now);

struct soft_host_params {
	uint8_t mac[FRAME_ETH_ALEN];
	uint32_t ip;                  /* host order */
	uint16_t telemetry_port;      /* 0 = 4792 (FB_PORT) */
	qp_time_ns arp_retry_ns;      /* 0 = 100 ms */
	uint32_t max_qps;             /* 1..SOFT_HOST_QPS_MAX; 0 = 1024 */
	qp_rate_bps link_bps;         /* line rate, for PAUSE times; 0 = 1 Gb/s */
	bool icrc_skip;               /* frames out without an ICRC, frames in unchecked */
	soft_telemetry_fn telemetry;  /* NULL: telemetry frames are dropped and counted */
	void *telemetry_arg;
	soft_cnp_fn cnp;              /* NULL: CNPs are counted by the QP (cnp_rx) only */
	void *cnp_arg;
	soft_rx_data_fn rx_data;      /* NULL: not told (a receiver's credit pacer is) */
	void *rx_data_arg;
};

enum soft_drop {
	SOFT_DROP_MALFORMED = 0,  /* frame_parse refused it */
	SOFT_DROP_NOT_FOR_US,     /* another MAC or IP */
	SOFT_DROP_PROTO,          /* not IPv4/ARP, not UDP */
	SOFT_DROP_IP_CSUM,        /* IPv4 header checksum */
	SOFT_DROP_FRAGMENT,       /* IPv4 fragment */
	SOFT_DROP_UDP_CSUM,       /* a wrong UDP checksum (0 means none) */
	SOFT_DROP_ICRC,           /* RoCEv2 ICRC */
	SOFT_DROP_NO_QP,          /* no QP with that number (or not connected) */
	SOFT_DROP_SOURCE,         /* RoCE from an address that is not the QP's peer */
	SOFT_DROP_NO_HOOK,        /* telemetry with no hook */
	SOFT_DROP_PORT,           /* UDP port nobody listens on */
	SOFT_DROP_RC,             /* handed to the QP, which refused it (its counters say why) */
	/* output side */
	SOFT_DROP_PENDING,        /* a datagram dropped waiting for ARP (queue full, failed) */
	SOFT_DROP_CTRL,           /* ARP/UDP output queue full */
	SOFT_DROP_COUNT
};
const char *soft_drop_str(enum soft_drop d);

struct soft_host_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t arp_rx, arp_requests_tx, arp_replies_tx, arp_learned;
	uint64_t roce_rx, telemetry_rx, udp_tx;
	uint64_t cnp_rx;              /* CNPs taken by a QP and handed to the cnp hook */
	uint64_t pfc_rx;              /* PFC frames obeyed (per priority: soft_host_pause) */
	uint64_t drops[SOFT_DROP_COUNT];
	uint64_t drop_seen;           /* bit d: drops[d] is not 0 */
	enum soft_drop last_drop;
};

struct soft_host;

struct soft_host *soft_host_create(const struct soft_host_params *p, char *err,
				   size_t errlen);
void soft_host_destroy(struct soft_host *h);

/* Reserve a QPN for a QP about to be created; -ENOSPC when all max_qps are in use. */
int soft_host_qpn_reserve(struct soft_host *h);
/* Attach the RC QP created with that QPN (its UDP source port is derived here). */
int soft_host_qp_attach(struct soft_host *h, uint32_t qpn, struct rc_qp *rc);
/* The QP's peer (IPv4 address and QPN) and the TOS of its frames; from then on frames for
 * it are accepted (from that address) and its packets sent. */
int soft_host_qp_connect(struct soft_host *h, uint32_t qpn, uint32_t peer_ip,
			 uint32_t peer_qpn, uint8_t tos);
/* The PSN one past the highest request packet QP @qpn has sent (rc_snd_psn): 0, or
 * -ENOENT when no such QP is attached. */
int soft_host_qp_snd_psn(struct soft_host *h, uint32_t qpn, uint32_t *psn);
/* QP @qpn's congestion window in packets (rc_set_window_cap; 0 = its RC window alone):
 * 0, or -ENOENT when no such QP is attached. */
int soft_host_qp_window(struct soft_host *h, uint32_t qpn, uint32_t pkts);
/* Forget the QPN (the caller destroys the RC QP). */
void soft_host_qpn_release(struct soft_host *h, uint32_t qpn);
/* The caller changed QP @qpn's RC core outside the host (a post, a connect): the host
 * looks at it again for frames to send. */
void soft_host_qp_changed(struct soft_host *h, uint32_t qpn);

/* One received frame. */
void soft_host_input(struct soft_host *h, const uint8_t *frame, size_t len, qp_time_ns now);
/* The next frame to send into buf (cap >= SOFT_FRAME_MAX); its length, or 0 when none.
 * 0 also while every QP with packets is paused: soft_host_deadline then names the end of
 * the pause, when it may send again (an XON, through soft_host_input, ends it sooner). */
int soft_host_output(struct soft_host *h, qp_time_ns now, uint8_t *buf, size_t cap);
/* soft_host_output has a frame now (ignoring QPs whose peer is unresolved or whose
 * priority is paused). */
bool soft_host_tx_pending(struct soft_host *h);
/* Earliest timer: RC timers, ARP retries, the end of a pause. QP_TIME_NEVER when none.
 * The connected QPs' earliest is kept between calls (rc_watch_deadline says when to walk
 * them again). */
qp_time_ns soft_host_deadline(struct soft_host *h);
/* soft_host_deadline with every connected QP asked now, as it was before it kept their
 * earliest (for tests: the two must agree). */
qp_time_ns soft_host_deadline_walk(struct soft_host *h);
void soft_host_tick(struct soft_host *h, qp_time_ns now);

/* Send a UDP datagram from this host (agent messages): 0, -EMSGSIZE (payload above
 * SOFT_UDP_PAYLOAD_MAX), -ENOBUFS (queue full). Waits for ARP when needed. */
int soft_host_send_udp(struct soft_host *h, uint32_t dst_ip, uint16_t sport, uint16_t dport,
		       const uint8_t *payload, size_t len, qp_time_ns now);

const struct soft_host_stats *soft_host_stats(const struct soft_host *h);
/* The PFC pause timers: per priority, pauses and XONs received; time paused up to now
 * with qp_pause_time(). */
const struct qp_pause *soft_host_pause(const struct soft_host *h);
uint32_t soft_host_ip(const struct soft_host *h);
const uint8_t *soft_host_mac(const struct soft_host *h);

/* The UDP source port of a QP's frames, as Linux's rdma_get_udp_sport() with no flow
 * label (rxe since 5.x): v = lqpn * rqpn; v ^= v >> 20; v ^= v >> 40; fl = v & 0xfffff;
 * port = 0xC000 | ((fl & 0x3fff) ^ (fl >> 14)). */
uint16_t soft_roce_sport(uint32_t lqpn, uint32_t rqpn);
/* The MAC derived from an IPv4 address: 02:00:a:b:c:d (locally administered). */
void soft_mac_from_ip(uint32_t ip, uint8_t mac[FRAME_ETH_ALEN]);

#endif
