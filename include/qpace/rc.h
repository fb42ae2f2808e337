/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend's reliable-connected (RC) transport: a pure state machine per QP.
 *
 *     (state, event, now_ns) -> frames out, completions, next deadline
 *
 * Events: a post (rc_post_send / rc_post_recv), a frame for this QP (rc_rx, already parsed
 * and ICRC-checked by the host), a timer (rc_tick at rc_deadline). Outputs are pulled:
 * rc_tx_next hands out the next BTH-level packet to put on the wire (the host adds
 * Ethernet, IPv4 and UDP and builds it with frame_build_roce), rc_poll_cq the completions.
 * Nothing here reads a clock, does I/O, prints or allocates outside rc_create.
 *
 * Semantics: IBTA vol. 1 ch. 9 as Linux rxe implements it (references §6, §9).
 * Requester
 *   - A message of L bytes is ceil(L/MTU) packets (one for L = 0) with consecutive PSNs,
 *     assigned at post: FIRST/MIDDLE/LAST or ONLY; WRITE carries a RETH on its first
 *     packet, *_IMM the immediate on its last.
 *   - At most window_pkts unacknowledged packets in flight (rxe: 128).
 *   - AckReq on a message's last packet, on every ackreq_every-th packet, and on the packet
 *     that fills the window (so a long message can never stall waiting for an ACK).
 *   - An ACK for PSN a acknowledges every PSN <= a; WRs whose last PSN is acknowledged
 *     complete in order. A NAK (any kind) for PSN p acknowledges every PSN < p.
 *   - NAK sequence error for p: go back N: send again from p (a repeated NAK for the same
 *     p with no progress since is a duplicate and ignored).
 *   - Local ACK timeout (rto_ns, doubled after each expiry up to << rto_backoff_max, reset
 *     on progress): send again from the oldest unacknowledged PSN. retry_cnt expiries
 *     without progress -> the head WR completes RETRY_EXC_ERR and the QP enters error.
 *   - RNR NAK for p: pause, wait the timer the NAK encodes (IB table, 10 us .. 655 ms),
 *     then send again from p. rnr_retry NAKs without progress (7 = unlimited) ->
 *     RNR_RETRY_EXC_ERR, error.
 *   - NAK invalid request / remote access / remote operational error for p: the WR holding
 *     p completes REM_INV_REQ_ERR / REM_ACCESS_ERR / REM_OP_ERR and the QP enters error.
 *   - READ of L bytes: one request (RETH: va, rkey, L; AckReq) that takes ceil(L/MTU) PSNs
 *     (one for L = 0), the PSNs of its response packets; an atomic (AtomicETH: va, rkey,
 *     swap or add, compare; AckReq) takes one. At most max_rd_atomic READs and atomics are
 *     outstanding (sent, not completed); the send queue waits behind the next one.
 *     The soft SQ holds at most max_rd_atomic atomics posted and not completed (their
 *     operands' ring): a post beyond is -ENOMEM, like a full send queue.
 *   - Responses: READ RESPONSE FIRST/MIDDLE/LAST or ONLY (by the packet's place in the
 *     READ: FIRST/MIDDLE exactly one MTU, LAST the rest), ATOMIC ACKNOWLEDGE (AETH and
 *     the 64-bit original value). A response is for the oldest WR not completed, at its
 *     next PSN; it acknowledges every PSN before it (an implicit ACK: SEND/WRITE WRs
 *     ending before it complete). A response, ACK or NAK for a PSN past a READ or atomic
 *     still waiting for its response means that response was lost (an implicit NAK): send
 *     again from the oldest unacknowledged PSN. A READ response past the next PSN (a gap
 *     in the data) does the same, once per gap. The READ data lands at its packet's place
 *     in the local buffer; the atomic's original value is written there in host order; the
 *     WR completes READ / COMP_SWAP / FETCH_ADD. A response that fits no such place (an
 *     opcode or a length other than its place's) is dropped and counted.
 *   - Sending again from a PSN inside a READ: the request again with that PSN, its RETH
 *     moved on by the data already received (va + k MTU, L - k MTU), as rxe does.
 * Responder
 *   - Accepts only the expected PSN. A later PSN is a gap: one NAK sequence error per gap
 *     (the next accepted packet re-arms it), the packet is dropped. An earlier PSN is a
 *     duplicate: dropped, and answered with an ACK of the last accepted PSN (C9-105).
 *   - ACKs are coalesced: one for a packet with AckReq, or after ack_every accepted packets
 *     without one; several due at once leave as one ACK (the latest PSN and MSN).
 *   - SEND (FIRST/ONLY) and WRITE with immediate (LAST/ONLY) need a posted receive; with
 *     none, an RNR NAK (min_rnr_timer) and the packet is dropped. The requester retries.
 *   - WRITE: the RETH's rkey must name a region with remote write access that holds
 *     [va, va + dma_len); otherwise NAK remote access error. Opcode out of sequence, a
 *     payload of the wrong size, a message longer than its receive buffer or its RETH
 *     length: NAK invalid request. Both are class C errors (rxe): the NAK goes out and the
 *     responder's QP enters error. (The requester then completes its WR in error too.)
 *   - READ (RETH: the region needs remote read access and holds [va, va + L); a
 *     zero-length READ reads nothing) and atomics (remote atomic access, 8 bytes at va,
 *     8-byte aligned, else NAK invalid request) take the PSNs the requester gave them and
 *     one of max_dest_rd_atomic saved requests (a ring, the oldest reused): a request that
 *     finds the oldest still answering exceeds the requester's share and is NAKed invalid
 *     request. An atomic is executed once, at once (COMPARE_SWAP: the value becomes swap
 *     when it equals compare; FETCH_ADD: value + add; 64 bits in the host's order), its
 *     original value saved. Responses go out before ACKs and NAKs, in PSN order, one
 *     packet per call, with the MSN of their request (AETH on FIRST, LAST, ONLY, ATOMIC
 *     ACK).
 *   - A duplicate READ (a PSN already accepted) is executed again from its saved request:
 *     its RETH must lie within the saved one's range with the same rkey, and the response
 *     starts at the duplicate's PSN (MIDDLE/LAST when it is not the first). A duplicate
 *     atomic is answered from the saved original value and never executed again. A
 *     duplicate whose saved request is gone (or differs) is dropped without an answer
 *     (IBTA class D), and counted; the requester's timer resends.
 * Notification point (DCQCN's NP, Zhu et al. SIGCOMM 2015 §3.2): a request packet from the
 * peer whose IPv4 ECN field is CE makes the responder send a CNP (BTH opcode 0x81, BECN set,
 * to the peer's QP, 16 reserved bytes), at most one per cnp_interval_ns (the paper's and
 * the NICs' 50 us); the CNP goes before ACKs and data. A CNP received is counted (cnp_rx)
 * and consumed; what reacts to it is the owner's (the soft host hands it to its hook).
 * A READ's requester is the reaction point of its responses: a CE-marked READ response or
 * atomic ACK counts as a CNP for the requester itself (cnp_self, at most one per
 * cnp_interval_ns; the soft host hands it to its cnp hook as the QP's own CNP), since its
 * requests, not the responder, decide how much data comes (qpace's choice: a NIC's NP
 * would send the responder a CNP, whose rate limit does not pace READ responses).
 * Deviation from HPCC's ns-3 DCQCN (references §2): ns-3 sets a CNP flag on the per-packet
 * ACK of every CE-marked packet instead; real RoCEv2 NICs (and the paper) send a separate,
 * paced CNP, which is what this does.
 * Error state: every outstanding send and receive WR completes WR_FLUSH_ERR; posts after
 * that complete WR_FLUSH_ERR at once; frames are dropped and counted.
 * Transport events (rc_params.on_event, for the owner's congestion control; rc_ev.c): an
 * ACK (or a NAK) that acknowledges something new reports the bytes it acknowledged, the
 * first PSN still unacknowledged, the highest PSN sent, the ECN echo (BECN) and an RTT
 * sample: the time from the last transmission of the acknowledged PSN (its send time,
 * kept per PSN of the window) to the ACK, none when that PSN was sent more than once
 * (Karn); a NAK sequence error that takes a go-back reports the PSN it names; each local
 * ACK timeout reports the oldest unacknowledged PSN. The owner is called inside rc_rx and
 * rc_tick and must not call back into the QP, but for rc_set_window_cap: a window
 * algorithm's window bounds what the requester has unacknowledged, retransmissions
 * included (a go-back-N resends at most the window from the lost PSN, as TCP's window
 * bounds its retransmissions).
 * ECN echo (rc_params.ecn_echo, DCTCP's receiver, RFC 8257 3.2): the responder sets BECN
 * on an ACK when the packets it acknowledges arrived marked CE, and an accepted packet
 * whose CE state differs from that of the packets not yet acknowledged first draws an ACK
 * for those (with their state), so each ACK's echo holds for all its packets. Two state
 * changes between two sends of the QP share one such ACK, which then echoes CE if either
 * part was marked.
 *
 * Bounded queues: send WRs posted plus their completions not yet polled <= sq_depth, and
 * the same for receives and rq_depth (a post beyond returns -ENOMEM); the completion queue
 * holds sq_depth + rq_depth entries and so never overflows.
 */
#ifndef QPACE_RC_H
#define QPACE_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/qp.h"
#include "qpace/time.h"

#define RC_PSN_MASK 0xffffffu
#define RC_MTU_MIN 256u
#define RC_MTU_MAX 4096u
#define RC_DEPTH_MAX 16384u
#define RC_INLINE_MAX 1024u
#define RC_WINDOW_MAX 4096u             /* far below 2^23: PSN order stays unambiguous */
#define RC_MSG_MAX_BYTES (1u << 31)     /* IBTA: 2^31 */
#define RC_PSN_SPAN_MAX (1u << 22)      /* PSNs posted and not yet acknowledged, at most */
#define RC_RD_ATOMIC_MAX 128u           /* max_rd_atomic, max_dest_rd_atomic: rxe's limit */

/* AETH syndromes (IBTA 9.7.5.2). */
#define RC_AETH_ACK 0x00                /* | credit count; 0x1f = no credit information */
#define RC_AETH_ACK_UNLIMITED 0x1f
#define RC_AETH_RNR 0x20                /* | RNR timer, IB encoding */
#define RC_AETH_NAK 0x60                /* | rc_nak_code */
enum rc_nak_code {
	RC_NAK_PSN_SEQ = 0,
	RC_NAK_INV_REQ = 1,
	RC_NAK_REM_ACCESS = 2,
	RC_NAK_REM_OP = 3,
};

/* The RNR wait the 5-bit IB encoding means (IBTA table 45): 0 -> 655.36 ms,
 * 1 -> 10 us, ..., 31 -> 491.52 ms. */
qp_time_ns rc_rnr_timer_ns(uint8_t code);

enum rc_state { RC_INIT = 0, RC_RTS, RC_ERROR };

/* A region a remote WRITE, READ or atomic may target, as the host's memory lookup reports
 * it. */
struct rc_region {
	uint8_t *base;       /* local address of va */
	uint64_t va;         /* the address peers use (the connection data's addr) */
	uint64_t len;        /* bytes */
	bool remote_write;
	bool remote_read;
	bool remote_atomic;
};
/* Look up a region by rkey; false when none. Must be side-effect free. */
typedef bool (*rc_mr_find_fn)(void *arg, uint32_t rkey, struct rc_region *out);

/* A transport event for the QP's owner (see the top of this file). */
enum rc_ev_type { RC_EV_ACK = 1, RC_EV_NAK, RC_EV_TIMEOUT };
struct rc_event {
	uint8_t type;               /* enum rc_ev_type */
	bool ce;                    /* ACK: BECN set (the responder echoed CE marks) */
	uint32_t psn;               /* ACK: every PSN before it is acknowledged; NAK: the PSN
				     * the responder expected; timeout: the oldest unacked */
	uint32_t snd_psn;           /* one past the highest PSN sent */
	uint64_t bytes;             /* ACK: payload bytes newly acknowledged */
	qp_time_ns rtt_ns;          /* ACK: the RTT sample, 0 = none */
	uint32_t count;             /* timeout: expiries in a row without progress */
};
typedef void (*rc_event_fn)(void *arg, uint32_t qpn, const struct rc_event *ev,
			    qp_time_ns now);

/* Fill with rc_params_init, then override. Units and ranges in the comments. */
struct rc_params {
	uint32_t qpn;               /* this QP's number, 1..2^24-1 */
	uint32_t sq_psn;            /* first PSN this QP sends, 24 bits */
	uint32_t sq_depth;          /* send WRs, 1..RC_DEPTH_MAX; default 128 */
	uint32_t rq_depth;          /* receive WRs, 1..RC_DEPTH_MAX; default 512 */
	uint32_t max_inline;        /* bytes copied at post, 0..RC_INLINE_MAX; default 0 */
	uint32_t window_pkts;       /* unacknowledged packets, 1..RC_WINDOW_MAX; default 128 */
	uint32_t ackreq_every;      /* packets, 1..window; default 64 (rxe) */
	uint32_t ack_every;         /* responder: packets per ACK without AckReq, 0 = only
				     * on AckReq; default 16 (fewer than a small switch
				     * buffer holds, so a window whose tail it drops still
				     * draws an ACK and the go-back starts with a NAK) */
	qp_time_ns rto_ns;          /* local ACK timeout, ns; 0 = none; default 4.096 us<<14 */
	uint8_t rto_backoff_max;    /* doublings of rto_ns, 0..10; default 3 */
	uint8_t retry_cnt;          /* timeouts without progress tolerated, 0..7; default 7 */
	uint8_t rnr_retry;          /* RNR NAKs without progress, 0..7, 7 = unlimited; def. 7 */
	uint8_t min_rnr_timer;      /* what our RNR NAKs ask for, 0..31; default 12 (0.64 ms) */
	qp_time_ns cnp_interval_ns; /* NP: at most one CNP per this, 0..1 s; 0 = no CNPs (NP
				     * off); default 50 us */
	uint8_t max_rd_atomic;      /* READs/atomics outstanding, 1..RC_RD_ATOMIC_MAX; def. 16 */
	uint8_t max_dest_rd_atomic; /* the peer's READs/atomics saved, 1..RC_RD_ATOMIC_MAX;
				     * default 16 */
	rc_mr_find_fn mr_find;      /* required */
	void *mr_arg;
	rc_event_fn on_event;       /* transport events; NULL = none (no send times kept) */
	void *event_arg;
	bool ecn_echo;              /* responder: ACKs echo CE (BECN); default off */
};

/* The peer, known at connect. */
struct rc_conn {
	uint32_t dest_qpn;          /* 24 bits */
	uint32_t rq_psn;            /* the first PSN the peer sends, 24 bits */
	uint32_t mtu_bytes;         /* path MTU: 256, 512, 1024, 2048 or 4096 */
	uint32_t max_rd_atomic;     /* 0, or lower than created: READs and atomics outstanding
				     * at once from here on (the peer's max_dest_rd_atomic, as
				     * verbs set it at RTS) */
};

/* Why a frame was dropped; one counter each. */
enum rc_drop {
	RC_DROP_STATE = 0,    /* QP not connected, or in error */
	RC_DROP_NOT_ROCE,     /* no RoCE layer in the parse */
	RC_DROP_QPN,          /* BTH destination QP is not this QP */
	RC_DROP_HEADER,       /* BTH version not 0, P_Key not default, ACK with payload */
	RC_DROP_OPCODE,       /* opcode not handled by an RC QP (READ, atomics, UD...) */
	RC_DROP_DUPLICATE,    /* request PSN already accepted (re-ACKed) */
	RC_DROP_OUT_OF_SEQ,   /* request PSN beyond the expected one (gap) */
	RC_DROP_RNR,          /* request refused for want of a receive (RNR NAK sent) */
	RC_DROP_INVALID,      /* request refused: sequence, length, access (NAK sent) */
	RC_DROP_ACK_STALE,    /* ACK/NAK for a PSN already acknowledged */
	RC_DROP_ACK_RANGE,    /* ACK/NAK for a PSN never sent */
	RC_DROP_SYNDROME,     /* reserved AETH syndrome or NAK code */
	RC_DROP_RESPONSE,     /* READ response / atomic ACK that fits no outstanding READ or
			       * atomic at its PSN (opcode or length not its place's) */
	RC_DROP_RESPONSE_GAP, /* READ response past the next PSN expected (a go-back) */
	RC_DROP_NO_SAVED,     /* duplicate READ/atomic without its saved request (class D) */
	RC_DROP_COUNT
};
const char *rc_drop_str(enum rc_drop d);

struct rc_stats {
	/* requester */
	uint64_t tx_pkts;           /* request packets sent, retransmissions included */
	uint64_t tx_bytes;          /* their payload bytes */
	uint64_t tx_msgs;           /* send WRs completed successfully */
	uint64_t tx_msg_bytes;      /* their bytes */
	uint64_t retrans_pkts;      /* request packets sent again */
	uint64_t timeouts;          /* local ACK timer expiries */
	uint64_t naks_rx;           /* NAK sequence error received */
	uint64_t rnr_rx;            /* RNR NAK received */
	uint64_t acks_rx;           /* ACKs that acknowledged something new */
	uint64_t reads_tx;          /* READ requests sent, again included */
	uint64_t atomics_tx;        /* atomic requests sent, again included */
	uint64_t read_rx_bytes;     /* READ response payload placed (this QP's READ data in) */
	uint64_t implicit_naks;     /* go-backs for a READ/atomic whose response was passed */
	/* responder */
	uint64_t rx_pkts;           /* request packets accepted */
	uint64_t rx_bytes;          /* their payload bytes */
	uint64_t rx_msgs;           /* messages completed */
	uint64_t acks_tx;
	uint64_t naks_tx;           /* NAK sequence error sent */
	uint64_t rnr_tx;            /* RNR NAK sent */
	uint64_t errs_tx;           /* NAK invalid request / remote access sent */
	uint64_t reads_rx;          /* READ requests executed (new ones) */
	uint64_t atomics_rx;        /* atomics executed */
	uint64_t reads_replayed;    /* duplicate READs executed again */
	uint64_t atomics_replayed;  /* duplicate atomics answered from the saved result */
	uint64_t read_tx_bytes;     /* READ response payload sent, again included */
	uint64_t cnp_rx;            /* CNPs addressed to this QP (handed to the owner) */
	uint64_t ce_rx;             /* request packets from the peer marked CE */
	uint64_t cnp_tx;            /* CNPs sent for them (NP) */
	uint64_t cnp_self;          /* CE-marked READ responses taken as this requester's own
				     * CNP, at most one per cnp_interval_ns (its owner's) */
	uint64_t err_wcs;           /* completions with an error status */
	uint64_t drops[RC_DROP_COUNT];
	enum rc_drop last_drop;     /* the most recent reason, for one-line logs */
};

struct rc_qp;

/* Defaults (listed in struct rc_params). */
void rc_params_init(struct rc_params *p);
/* Check every field; 0, or -EINVAL with one line naming the field, value and range. */
int rc_params_check(const struct rc_params *p, char *err, size_t errlen);
/* Allocate a QP in RC_INIT (receives may be posted). NULL with err set on bad params or
 * no memory. */
struct rc_qp *rc_create(const struct rc_params *p, char *err, size_t errlen);
void rc_destroy(struct rc_qp *qp);
/* RC_INIT -> RC_RTS towards the peer. -EINVAL (bad field) or -EALREADY (not in INIT). */
int rc_connect(struct rc_qp *qp, const struct rc_conn *c);
/* Move to error now: outstanding WRs complete WR_FLUSH_ERR. */
void rc_set_error(struct rc_qp *qp);

/* Post one send WR (wr->mr is not looked at: the caller checked the local buffer; with
 * QP_WR_INLINE the bytes are copied now). 0; -ENOTCONN before connect; -EINVAL (opcode,
 * length, inline size, more than RC_PSN_SPAN_MAX packets); -ENOMEM (send queue full, or
 * RC_PSN_SPAN_MAX PSNs outstanding: retry after progress). In error: 0, and it completes
 * flushed. */
int rc_post_send(struct rc_qp *qp, const struct qp_wr *wr, qp_time_ns now);
/* Post one receive buffer. 0, -EINVAL, -ENOMEM (receive queue full). */
int rc_post_recv(struct rc_qp *qp, const struct qp_recv_wr *wr);
/* Up to n completions, oldest first; returns how many. */
int rc_poll_cq(struct rc_qp *qp, struct qp_wc *wc, int n);

/* A frame addressed to this QP: @p from frame_parse of @frame, ICRC already verified.
 * Returns 0 when used, or -(1 + enum rc_drop) when dropped (and counted). */
int rc_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p,
	  qp_time_ns now);
/* The next packet to send, if any: fills @s's bth, reth, aeth, imm, payload and
 * payload_len (addresses and IP options are the caller's). @s->payload points into a
 * posted buffer: build the frame before the next call into this QP. ACKs/NAKs go first. */
bool rc_tx_next(struct rc_qp *qp, qp_time_ns now, struct frame_roce_spec *s);
/* rc_tx_next would return a packet now. */
bool rc_tx_pending(const struct rc_qp *qp);
/* Earliest timer (retransmission, RNR wait); QP_TIME_NEVER when none. */
qp_time_ns rc_deadline(const struct rc_qp *qp);
/* The earliest rc_deadline of a set of QPs, kept by their owner between calls instead of
 * asked of each QP: @t, and @who has it. Each QP watched (rc_watch_deadline) updates it as
 * its timers or state are written: a deadline at or before @t becomes @t (and the QP
 * @who); @who's moved later makes it @stale, and the owner walks its QPs again. */
struct rc_dl_min {
	qp_time_ns t;
	const struct rc_qp *who;
	bool stale;
};
/* @qp joins @m's set (NULL: leaves the set it was in; the owner marks @m stale if @qp
 * was its @who). */
void rc_watch_deadline(struct rc_qp *qp, struct rc_dl_min *m);
/* Run the timers due at now. */
void rc_tick(struct rc_qp *qp, qp_time_ns now);
/* The owner's congestion window in packets: at most min(window_pkts, @pkts) unacknowledged
 * PSNs, retransmissions included; 0 = window_pkts alone (the default). */
void rc_set_window_cap(struct rc_qp *qp, uint32_t pkts);

enum rc_state rc_state(const struct rc_qp *qp);
const struct rc_stats *rc_stats(const struct rc_qp *qp);
uint32_t rc_qpn(const struct rc_qp *qp);
/* Send and receive WRs posted and not yet completed. */
uint32_t rc_sq_outstanding(const struct rc_qp *qp);
uint32_t rc_rq_outstanding(const struct rc_qp *qp);
/* rc_post_send would refuse a WR for a full send queue (-ENOMEM) until an ACK completes
 * one or a completion is polled: false when nothing is outstanding (then it is full of
 * completions the caller has not polled). */
bool rc_sq_full(const struct rc_qp *qp);

/* Payload bytes this QP took in, in order: its requests' data (rx_bytes) and its READs'
 * responses' (read_rx_bytes). */
static inline uint64_t rc_rx_data_bytes(const struct rc_qp *qp)
{
	return rc_stats(qp)->rx_bytes + rc_stats(qp)->read_rx_bytes;
}
/* The PSN one past the highest request packet this QP has sent (HPCC's snd_nxt). */
uint32_t rc_snd_psn(const struct rc_qp *qp);
/* Payload bytes of posted send WRs not yet acknowledged (sent or still queued): what a
 * window algorithm counts as in flight. O(WRs with a PSN acknowledged): the others are
 * counted whole from a running sum. */
uint64_t rc_sq_unacked_bytes(const struct rc_qp *qp);

/* 24-bit PSN arithmetic: a - b in -2^23 .. 2^23-1. */
static inline int32_t rc_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & RC_PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

static inline uint32_t rc_psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & RC_PSN_MASK;
}

#endif
