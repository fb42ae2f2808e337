/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The egress queue model: one per switch port, in nanosecond time.
 *
 *   arrival  a_i = max(now, a_{i-1})                (arrivals kept in order)
 *   start    s_i = max(a_i, d_{i-1})
 *   depart   d_i = s_i + L_i * 8 / R                 (exact: the sub-ns remainder carries
 *                                                     over within a busy period)
 *   leave    d_i + D                                 (frame handed to the next hop)
 *
 * Q(t), the queue at time t, is the bytes of admitted frames with a_i <= t < d_i (the
 * frame on the wire included). Drop-tail: a frame is admitted when Q(a_i) + L_i <= B.
 * L_i is the frame length without FCS, at least 60 bytes (the Ethernet minimum). The
 * model is the truth that telemetry reports, however late the process runs.
 *
 * INT at dequeue (HPCC's PushHop): ts = s_i, tx_bytes = bytes sent before frame i,
 * qlen = bytes that arrived by s_i behind frame i (the queue left after its dequeue).
 *
 * PFC (pfc.h drives it):
 *   hold     a PAUSE from downstream: sw_queue_hold(q, now, until) makes every frame that
 *            has not started by now start no earlier than until (s_i = max(a_i, d_{i-1},
 *            until), the frame on the wire finishes); until <= now (XON) lets them go at
 *            once. The queue is one FIFO, so a hold stops every frame of the port.
 *   lossless a frame enqueued with lossless set is admitted whatever Q is (its ingress
 *            port's headroom bounds it); the store is sized for lossless_bytes more.
 *   tag      each frame carries a caller's tag; when a tagged frame leaves Q (at d_i,
 *            seen when the model advances past it) the departure hook is called.
 *
 * Parameters (sch_red style: check, create, change swaps them in):
 *   rate_bps      R, 1 kb/s .. 10 Tb/s
 *   delay_ns      D, propagation, 0 .. 10 s
 *   buffer_bytes  B, 1514 .. 1 GiB
 *   red           ECN marking (red.h), decided at dequeue (sw_queue_mark)
 *   flow_slots    per-flow table size, power of two 8 .. 1M (default 1024)
 *   seed          RED's generator
 *   lossless_bytes  bytes that lossless frames may add above B (store sizing), 0 .. 1 GiB
 *   flow_idle_ns  the flow count's idle time (flow.h), 0 .. 1 s
 * The queue also keeps each frame's bytes (and a small metadata record) from enqueue to
 * leave; that store is sized at create for B plus the bytes in flight over D.
 */
#ifndef SW_QUEUE_H
#define SW_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/int.h"
#include "qpace/rate.h"
#include "qpace/time.h"
#include "flow.h"
#include "red.h"

#define SW_FRAME_MIN 60

struct sw_queue_params {
	qp_rate_bps rate_bps;
	qp_time_ns delay_ns;
	uint64_t buffer_bytes;
	struct sw_red_params red;
	uint32_t flow_slots;
	uint64_t seed;
	uint64_t lossless_bytes;
	qp_time_ns flow_idle_ns;   /* the notices' flow count (flow.h): 0 = flows with bytes
				    * queued, else also flows seen within this, 0..1 s */
};

/* One counter per outcome. */
struct sw_queue_stats {
	uint64_t enq_frames, enq_bytes;
	uint64_t deq_frames, deq_bytes;     /* handed to the next hop */
	uint64_t drop_tail, drop_tail_bytes;
	uint64_t drop_store;                /* frame store full: the process fell behind */
	uint64_t ecn_marked;                /* CE set */
	uint64_t ecn_not_ect;               /* would have marked, frame not ECN-capable */
	uint64_t flow_untracked;            /* per-flow table window full */
	uint64_t max_qbytes;                /* largest Q seen */
};

struct sw_qent {
	qp_time_ns arrival_ns, start_ns, depart_ns;
	uint64_t cum_bytes;     /* bytes admitted up to and including this frame */
	uint32_t len;           /* modelled bytes */
	uint32_t flow;          /* flow slot or SW_FLOW_NONE */
	uint64_t store_lin;     /* where its bytes begin, as a linear position (queue.c) */
	uint32_t store_span;    /* bytes of store released with it */
	uint16_t frame_len;
	uint16_t meta_len;
	uint16_t tag;           /* the caller's, 0 = none */
	uint16_t ecn_off;       /* ECT frame: its IP header's offset + 1; 0 = not ECN-capable */
};

enum sw_verdict { SW_ENQ_OK = 0, SW_ENQ_DROP_TAIL, SW_ENQ_DROP_STORE };

struct sw_enq {
	const uint8_t *frame;
	uint16_t frame_len;
	const void *meta;       /* stored with the frame, 8-byte aligned */
	uint16_t meta_len;
	const struct sw_flow_key *key;   /* NULL: not tracked */
	bool ect;               /* ECN-capable: RED may mark it (at dequeue) */
	uint16_t ip_off;        /* with ect: where its IPv4 or IPv6 header starts in frame */
	bool lossless;          /* not dropped for Q + L > B (only when the store is full) */
	uint16_t tag;           /* 0 = none; else the departure hook sees the frame leave Q */
};

struct sw_enq_out {
	enum sw_verdict verdict;
	uint64_t qbytes;        /* Q after admission (at a drop: Q as it stands) */
	uint32_t len;           /* bytes the model charges: the frame, at least 60 */
	uint16_t flows;         /* active flows (sw_flowtab_count) */
	uint32_t flow;          /* slot, SW_FLOW_NONE when untracked */
	qp_time_ns arrival_ns;
	qp_time_ns depart_ns;
	uint8_t *frame;         /* the stored copy */
};

struct sw_queue;

int sw_queue_check(const struct sw_queue_params *p, char *err, size_t len);
struct sw_queue *sw_queue_create(const struct sw_queue_params *p, char *err, size_t len);
/* Swap in new parameters when the store built at create still fits them. */
int sw_queue_change(struct sw_queue *q, const struct sw_queue_params *p, char *err, size_t len);
void sw_queue_destroy(struct sw_queue *q);

const struct sw_queue_params *sw_queue_params(const struct sw_queue *q);
const struct sw_queue_stats *sw_queue_stats(const struct sw_queue *q);
struct sw_flowtab *sw_queue_flows(struct sw_queue *q);

int sw_queue_enqueue(struct sw_queue *q, qp_time_ns now, const struct sw_enq *in,
		     struct sw_enq_out *out);
/* Called for each tagged frame as it leaves Q (its departure time in e->depart_ns). The
 * hook must not call back into this queue. */
typedef void (*sw_queue_depart_fn)(void *arg, const struct sw_qent *e);
void sw_queue_on_depart(struct sw_queue *q, sw_queue_depart_fn fn, void *arg);
/* PFC hold (above): frames not started by @now, except the @committed oldest ones not
 * yet handed on (already given to an I/O port's batch), start no earlier than @until. */
void sw_queue_hold(struct sw_queue *q, qp_time_ns now, qp_time_ns until, uint32_t committed);
/* The departure time of the next frame to leave Q, QP_TIME_NEVER when Q is empty. */
qp_time_ns sw_queue_next_depart_ns(const struct sw_queue *q);
/* Q(now): advances the model to @now (never backwards). */
uint64_t sw_queue_bytes(struct sw_queue *q, qp_time_ns now);
/* Q(t) for an observer (stats): the model is not advanced, so a frame that arrived before
 * @t but is read later still enters the queue at its own arrival time. */
uint64_t sw_queue_bytes_at(const struct sw_queue *q, qp_time_ns t);
/* When the oldest frame not yet handed on leaves (d + D), QP_TIME_NEVER when none. */
qp_time_ns sw_queue_next_ns(const struct sw_queue *q);
/* The i-th frame not yet handed on (0 = oldest), NULL past the end. */
const struct sw_qent *sw_queue_peek(const struct sw_queue *q, uint32_t i);
uint8_t *sw_queue_frame(const struct sw_queue *q, const struct sw_qent *e);
const void *sw_queue_meta(const struct sw_queue *q, const struct sw_qent *e);
/* INT record of the i-th frame at its dequeue (switch_id and port left to the caller).
 * Exact once every arrival up to its start is enqueued, i.e. at or after its leave time. */
void sw_queue_hop(const struct sw_queue *q, uint32_t i, struct qp_int_hop *h);
/* RED at dequeue (red.h): the i-th frame not yet handed on, whose dequeue is complete
 * (as for sw_queue_hop), is marked with the probability of the queue it leaves behind
 * (its hop's qlen), as the reference marks at dequeue; an ECT frame gets CE in the stored
 * copy (checksum updated), a frame that is not ECN-capable is counted (ecn_not_ect). Call
 * it once per frame. True when CE was set. */
bool sw_queue_mark(struct sw_queue *q, uint32_t i);
/* The @n oldest frames have been handed on at @now: release them. */
void sw_queue_pop(struct sw_queue *q, uint32_t n);
/* Frames stored (waiting or in flight). */
uint32_t sw_queue_count(const struct sw_queue *q);

#endif
