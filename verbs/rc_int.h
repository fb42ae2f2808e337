/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Private state of the RC state machine (qpace/rc.h), shared by rc.c (queues, dispatch),
 * rc_req.c (requester), rc_rdresp.c (the requester's READ responses and atomic ACKs),
 * rc_resp.c (responder) and rc_rdatomic.c (the responder's READs and atomics). */
#ifndef QPACE_RC_INT_H
#define QPACE_RC_INT_H

#include "qpace/rc.h"

/* A posted send WR. PSNs are assigned at post: [first_psn, first_psn + npkts). */
struct rc_swqe {
	uint64_t wr_id;
	uint8_t *buf;            /* the data (SEND, WRITE); where the answer goes (READ, atomic) */
	uint64_t remote_addr;
	uint32_t len;
	uint32_t rkey;
	uint32_t imm;            /* atomics: their operands' slot in rc_qp.aargs */
	uint32_t first_psn;
	uint32_t npkts;
	uint8_t op;              /* enum qp_opcode */
	bool signaled;
	bool rd_sent;            /* READ/atomic: sent once, counted in req.rd_out */
};

/* An atomic's operands, beside its WR (the SQ slots stay their size for every other WR). */
struct rc_atomic_args {
	uint64_t compare_add;
	uint64_t swap;
};

struct rc_rwqe {
	uint64_t wr_id;
	uint8_t *buf;
	uint32_t len;
};

struct rc_req {
	uint32_t next_psn;       /* first PSN of the next posted WR */
	uint32_t una;            /* oldest unacknowledged PSN */
	uint32_t max;            /* one past the highest PSN ever sent */
	uint32_t tx_psn;         /* next PSN to put on the wire */
	uint32_t tx_idx;         /* SQ index (sq_head..sq_tail) of the WR holding tx_psn */
	uint32_t since_ackreq;   /* packets sent since the last AckReq */
	uint32_t nak_psn;        /* last go-back point taken from a NAK */
	bool nak_fresh;          /* no progress since that go-back */
	uint8_t retries_left;
	uint8_t rnr_left;
	uint8_t backoff;         /* current doublings of rto_ns */
	qp_time_ns rto_at;       /* QP_TIME_NEVER when nothing is outstanding */
	qp_time_ns rnr_at;       /* QP_TIME_NEVER unless waiting out an RNR NAK */
	uint32_t rnr_psn;
	uint32_t timeouts_run;   /* local ACK timeouts in a row without progress */
	uint32_t rd_out;         /* READs/atomics sent and not completed (<= max_rd_atomic) */
};

enum rc_kind { RC_K_NONE = 0, RC_K_SEND, RC_K_WRITE, RC_K_READ, RC_K_ATOMIC };

/* A READ or atomic the responder accepted (rc_rdatomic.c): answered, then kept to answer
 * its duplicates. */
struct rc_rdres {
	uint32_t first_psn, last_psn;   /* its response's PSNs (an atomic: one) */
	uint32_t cur_psn;        /* active: the next response packet's PSN */
	uint32_t msn;            /* the MSN its responses carry */
	uint32_t rkey;
	uint32_t len0;           /* READ: the request's length, from va0 (at src0 here) */
	uint32_t resid;          /* READ, active: bytes from va still to send */
	uint64_t va0;
	const uint8_t *src0;
	union {
		uint64_t va;     /* READ, active: the address of cur_psn's data */
		uint64_t orig;   /* atomic: the value before it */
	} u;
	uint8_t kind;            /* RC_K_READ, RC_K_ATOMIC, or RC_K_NONE (never used) */
	bool active;             /* responses left to send */
	bool answered;           /* its last response was sent once: the requester may have
				  * completed it, and a replay of it may be stale */
};

struct rc_resp {
	uint32_t epsn;           /* expected PSN */
	uint32_t msn;            /* messages completed, 24 bits */
	uint32_t since_ack;      /* accepted packets since the last ACK/NAK sent */
	bool ack_pending;
	bool nak_sent;           /* this gap has had its NAK (or an RNR NAK) */
	bool nak_pending;
	bool fail_pending;       /* a class C NAK waits for the answers before it (rc_resp.c) */
	uint8_t nak_syndrome;
	uint32_t nak_psn;
	/* the message in progress */
	uint8_t kind;            /* enum rc_kind */
	uint32_t off;            /* SEND: bytes placed in the head receive */
	uint8_t *dst;            /* WRITE: where the next byte goes */
	uint64_t resid;          /* WRITE: bytes the RETH announced and not yet received */
	uint32_t total;          /* WRITE: the RETH length */
	/* ECN echo (rc_params.ecn_echo; rc_ev.c) */
	bool ce_run;             /* CE state of the packets accepted since the last ACK */
	bool split_pending;      /* an ACK for the packets before a CE state change is due */
	bool split_ce;           /* its echo */
	uint32_t split_psn;      /* the last PSN it acknowledges */
	/* READ and atomics: max_dest_rd_atomic saved requests, res_next the next to take */
	struct rc_rdres *res;
	uint32_t res_next;
	uint32_t rd_active;      /* of them, with responses left to send */
};

struct rc_qp {
	struct rc_params p;
	struct rc_conn conn;
	/* What rc_tx_pending reads on every host turn, with the rings and req/resp below:
	 * the counters (264 bytes) are last, after them */
	enum rc_state state;
	bool cnp_pending;
	/* The send and receive rings are a power of two in size, at least their depth (the
	 * depths stay the limits): a slot is a counter masked, not divided (a division on
	 * every packet). The completion ring is its bound plus one, its indices wrapping
	 * (rc.c: completions come once a message). */
	struct rc_swqe *sq;      /* ring of sq_mask + 1, [sq_head, sq_tail) outstanding */
	uint32_t sq_mask, rq_mask;
	uint32_t sq_head, sq_tail;
	uint64_t sq_bytes;       /* the lengths of [sq_head, sq_tail) summed */
	uint32_t sq_unpolled;    /* send completions in the CQ */
	uint8_t *inl;            /* (sq_mask + 1) * max_inline bytes */
	struct rc_atomic_args *aargs; /* max_rd_atomic: posted atomics' operands, a FIFO */
	uint32_t aargs_next, aargs_used;   /* the next slot taken; slots in use */
	struct rc_rwqe *rq;      /* ring of rq_mask + 1 */
	uint32_t rq_head, rq_tail;
	uint32_t rq_unpolled;
	struct qp_wc *cq;        /* ring of cq_cap + 1 = sq_depth + rq_depth + 1 (rc.c) */
	uint32_t cq_head, cq_tail, cq_cap;   /* head, tail: indices in [0, cq_cap] */
	struct rc_req req;
	struct rc_resp resp;
	qp_time_ns cnp_last_ns;  /* NP: the last CNP sent, QP_TIME_NEVER before the first */
	qp_time_ns cnp_self_ns;  /* the last CE-marked READ response counted in cnp_self */
	struct rc_dl_min *dl_min; /* rc_watch_deadline's, or NULL */
	/* Transport events (rc_params.on_event; rc_ev.c): the low 32 bits of each PSN's last
	 * send time, bit 0 set when it was sent more than once; a ring of stamp_mask + 1 >=
	 * window_pkts slots, indexed by PSN (the window holds no two PSNs of one slot). */
	uint32_t *stamp;
	uint32_t stamp_mask;
	uint32_t window;          /* min(window_pkts, rc_set_window_cap's), packets */
	struct rc_stats st;
};

/* After every write of state, req.rto_at or req.rnr_at: rc_deadline may have moved. */
static inline void rc_dl_changed(struct rc_qp *qp)
{
	struct rc_dl_min *m = qp->dl_min;
	qp_time_ns d;

	if (!m || m->stale)
		return;
	d = rc_deadline(qp);
	if (d <= m->t) {
		m->t = d;
		m->who = qp;
	} else if (m->who == qp) {
		m->stale = true;   /* the earliest moved later: the owner walks again */
	}
}

static inline struct rc_swqe *rc_sq_at(const struct rc_qp *qp, uint32_t i)
{
	return &qp->sq[i & qp->sq_mask];
}

static inline struct rc_rwqe *rc_rq_at(struct rc_qp *qp, uint32_t i)
{
	return &qp->rq[i & qp->rq_mask];
}

/* Unacknowledged packets allowed: window_pkts, or the owner's smaller window. */
static inline uint32_t rc_window(const struct rc_qp *qp)
{
	return qp->window ? qp->window : qp->p.window_pkts;
}

/* Count a drop and return the rc_rx code for it. */
static inline int rc_drop(struct rc_qp *qp, enum rc_drop d)
{
	qp->st.drops[d]++;
	qp->st.last_drop = d;
	return -(1 + (int)d);
}

/* rc.c */
void rc_cq_push(struct rc_qp *qp, const struct qp_wc *wc);
void rc_complete_send(struct rc_qp *qp, const struct rc_swqe *w, enum qp_wc_status status);
/* Enter error; the head send WR (if any) completes with @head_status first. */
void rc_fail(struct rc_qp *qp, enum qp_wc_status head_status);

/* rc_req.c */
void rc_req_init(struct rc_qp *qp);
int rc_req_rx(struct rc_qp *qp, const struct frame_parsed *p, qp_time_ns now);
bool rc_req_tx_pending(const struct rc_qp *qp);
bool rc_req_tx(struct rc_qp *qp, qp_time_ns now, struct frame_roce_spec *s);
void rc_req_tick(struct rc_qp *qp, qp_time_ns now);

/* rc_ev.c: transport events and the ECN echo (only with rc_params.on_event / ecn_echo) */
int rc_ev_alloc(struct rc_qp *qp);
void rc_ev_free(struct rc_qp *qp);
/* Request packet @psn leaves now (@retrans: it was sent before). */
void rc_ev_sent(struct rc_qp *qp, uint32_t psn, bool retrans, qp_time_ns now);
/* An ACK or NAK for @psn acknowledged PSNs up to (not including) @una_now, where the
 * unacknowledged bytes were @unacked_before: the ACK event (with @ack_psn's RTT for an
 * ACK: the PSN the ACK names; @becn its echo). */
void rc_ev_acked(struct rc_qp *qp, bool is_ack, uint32_t ack_psn, bool becn,
		 uint64_t unacked_before, qp_time_ns now);
void rc_ev_nak(struct rc_qp *qp, uint32_t psn, qp_time_ns now);
void rc_ev_timeout(struct rc_qp *qp, qp_time_ns now);
/* Responder: an accepted request packet, @ce its ECN state, @psn its PSN. */
void rc_ev_accepted(struct rc_qp *qp, uint32_t psn, bool ce);
/* Responder: the split ACK, if one is due (filled into @s as rc_resp_tx does). */
bool rc_ev_split_ack(struct rc_qp *qp, struct frame_roce_spec *s);

/* After a response, ACK or NAK for PSN @end (every PSN before it was taken): SEND/WRITE
 * WRs that end before @end complete. RC_ACKED_NEWS when una moved; RC_ACKED_IMPLICIT when
 * a READ/atomic without its whole response ends before @end (an implicit NAK: una is at
 * its first PSN not answered). */
enum { RC_ACKED_NEWS = 1u << 0, RC_ACKED_IMPLICIT = 1u << 1 };
/* una moves on to @to (later than it): the timers and retry counts start afresh. */
void rc_req_progress(struct rc_qp *qp, uint32_t to, qp_time_ns now);
unsigned rc_req_acked(struct rc_qp *qp, uint32_t end, qp_time_ns now);
/* Send again from @psn (go back N): a NAK, an implicit NAK, a gap in a READ's response;
 * ignored when it repeats the last go-back with no progress since (@progress false). */
void rc_req_go_back(struct rc_qp *qp, uint32_t psn, bool progress, qp_time_ns now);

/* rc_rdresp.c */
bool rc_is_response(uint8_t opcode);
int rc_rdresp_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p,
		 qp_time_ns now);

/* rc_resp.c */
bool rc_is_request(uint8_t opcode);
int rc_resp_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p);
bool rc_resp_tx(struct rc_qp *qp, struct frame_roce_spec *s);
/* Class C error: NAK @code for @psn, and the QP enters error (the NAK still goes out). */
int rc_resp_fail(struct rc_qp *qp, uint32_t psn, enum rc_nak_code code);

/* rc_rdatomic.c */
/* A new READ or atomic at the expected PSN (checked by rc_resp_rx): 0, or a drop code. */
int rc_rd_new(struct rc_qp *qp, const struct frame_parsed *p, uint8_t kind);
/* A READ or atomic with a PSN already accepted. */
int rc_rd_dup(struct rc_qp *qp, const struct frame_parsed *p, uint8_t kind);
/* The next READ response or atomic ACK, oldest active request first. */
bool rc_rd_tx(struct rc_qp *qp, struct frame_roce_spec *s);
/* Forget every saved request (error). */
void rc_rd_flush(struct rc_qp *qp);

#endif
