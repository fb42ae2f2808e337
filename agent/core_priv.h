/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's private state, shared by agent/core*.c (nothing else includes this). */
#ifndef QPACE_AGENT_CORE_PRIV_H
#define QPACE_AGENT_CORE_PRIV_H

#include <string.h>

#include "qpace/addr.h"
#include "qpace/agent.h"
#include "qpace/credit.h"
#include "qpace/fb_auth.h"
#include "qpace/fb_replay.h"

#define AGENT_NO_IDX UINT32_MAX

/* Where the last LEVEL for a QP came from: the switch a level ack goes back to. */
struct agent_level_src {
	uint32_t ip;
	uint16_t udp_port;
	uint32_t switch_id;
	uint16_t port;
	uint32_t seq;
	uint32_t psn;                /* an ack echoes the seq and PSN of the level it answers */
	bool known;
};

struct agent_qp {
	bool used;
	struct agent_qp_reg reg;     /* algo/params: the ones in force */
	uint32_t owner, pid;
	struct cc *cc;
	int32_t slot;
	/* rate table */
	qp_rate_bps override_bps;    /* 0 = none */
	qp_rate_bps published_bps;
	uint64_t published_cap;         /* in-flight cap in the table, bytes; 0 = none */
	uint32_t published_flags;
	/* timers: heap position and key */
	uint32_t heap_pos;           /* AGENT_NO_IDX when not in the heap */
	qp_time_ns deadline_ns;
	/* sequence extension */
	bool psn_valid;
	uint64_t psn64_max;
	bool tp_psn_valid;           /* of the transport's PSNs (core_transport.c) */
	uint64_t tp_psn64_max;
	/* the sender's posted PSN as its program last reported it (TXSTATE) */
	bool tx_psn_valid;
	uint32_t tx_psn;
	uint8_t enforce;             /* enum agent_qp_enforce, as reported */
	/* sender side of credits */
	bool credit_gated;
	uint32_t credit_seq;
	qp_time_ns credit_expiry_ns; /* QP_TIME_NEVER when not gated */
	uint64_t credits_rx_bytes;
	uint32_t credit_gen;         /* +1 each time gating turns on (agent_qp_credit) */
	uint64_t credit_gen_bytes;   /* credits granted since */
	qp_time_ns credit_last_ns, credit_interval_ns; /* the last grant: when, its interval */
	/* receiver side */
	bool rx_shell;               /* the shell reports its arrivals (agent_qp_arrived): echo
				      * INT is not counted as well (one source) */
	int link;                    /* index in links[], -1 when not a paced receiver */
	bool rx_psn_valid;           /* the peer's data PSNs seen in echo INT (arrivals) */
	uint64_t rx_psn64_max;
	uint16_t peer_sport;         /* learned from INT sent to us; 0 = not known */
	uint64_t credits_tx_bytes;
	struct agent_level_src level_src;
	/* INT wished from the switches on the path: next repeat, QP_TIME_NEVER = none */
	qp_time_ns want_ns;
	bool last_sent;              /* the flow's last window announced (FB_WANT_F_LAST) */
	/* monitoring */
	struct qp_int_hop prev_hops[QP_INT_MAX_HOPS];
	unsigned prev_nhops;
	double utilization;
	uint32_t queue_bytes;
	qp_time_ns rtt_ns;
	qp_rate_bps path_link_bps;   /* slowest hop link its INT reports showed (0: none) */
	uint64_t tx_bytes, retransmissions, feedback;
	struct agent_qp_wire wire;   /* what the shell measured on the wire */
};

struct agent_link {
	uint32_t local_ip;           /* 0 = unused */
	uint32_t nqps;
	struct credit_pacer *pacer;
};

/* Open addressing with linear probing; an entry is a QP index + 1 (0 = empty). */
struct agent_map {
	uint32_t *slots;
	uint32_t mask;
};

struct agent {
	struct agent_params p;
	/* Sequence of the credit grants this agent sends, one counter for all its QPs,
	 * started from the clock (us): a sender's agent drops a grant whose seq is not past
	 * the last it took, so a QP registered again (a new query's flow) or an agent
	 * restarted must continue above every seq sent before, or the new grants are taken
	 * for old ones. */
	uint32_t grant_seq;
	char cc_default[AGENT_ALGO_MAX];
	char cc_default_params[AGENT_PARAMS_MAX];
	struct fb_signer signer;     /* with a key: what this agent sends */
	struct fb_replay replay;     /* with a key: the senders it heard from */
	struct qp_ratetable *table;
	struct agent_qp *qps;        /* max_qps */
	uint32_t nqps;
	uint32_t *free_idx;          /* stack of unused QP indices */
	uint32_t nfree;
	struct agent_map by_qpn;     /* local QPN */
	struct agent_map by_flow;    /* (local IP, peer IP, peer QPN): our data's flow key; an
				      * IPv6 QP's by its 16-byte addresses */
	uint32_t *heap;              /* QP indices ordered by deadline_ns */
	uint32_t heap_len;
	struct agent_link links[AGENT_MAX_LINKS];
	uint32_t npaced;             /* links with a pacer: none (no credits), no walk */
	struct agent_dgram *txq;     /* ring of tx_queue */
	uint32_t tx_head, tx_len;
	uint64_t counters[AGENT_C_COUNT];
	uint64_t logged;             /* counters whose first event was logged */
	struct credit_grant grants[64];
	qp_rate_bps path_link_bps;   /* slowest hop link any INT report showed (0: none) */
};

/* core_map.c: indexes and the timer heap */
int agent_map_init(struct agent_map *m, uint32_t max_entries);
void agent_map_fini(struct agent_map *m);
uint32_t agent_map_find_qpn(const struct agent *a, uint32_t qpn);
/* IPv4 (local IP, peer IP, peer QPN): never an AGENT_QP_IPV6 QP */
uint32_t agent_map_find_flow(const struct agent *a, uint32_t local_ip, uint32_t peer_ip,
			     uint32_t peer_qpn);
/* IPv6 (local address, peer address, peer QPN): only an AGENT_QP_IPV6 QP */
uint32_t agent_map_find_flow6(const struct agent *a, const uint8_t local[16],
			      const uint8_t peer[16], uint32_t peer_qpn);
/* The flow's addresses are those of its family (AGENT_QP_IPV6 or not: qpace/ctl.h): 0, or
 * -EINVAL with why in @why. */
int agent_flow_check(const struct agent_qp_reg *r, char *why, size_t len);
void agent_map_add(struct agent *a, struct agent_map *m, uint32_t idx);
void agent_map_del(struct agent *a, struct agent_map *m, uint32_t idx);
/* Put QP @idx at its deadline_ns (removing it when QP_TIME_NEVER). */
void agent_heap_update(struct agent *a, uint32_t idx);
void agent_heap_remove(struct agent *a, uint32_t idx);

/* core.c: shared by the other files */
void agent_log(struct agent *a, enum agent_log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Queue an encoded (and, with a key, signed at @now) message to ip:port; true when
 * queued. */
bool agent_send(struct agent *a, const struct fb_msg *m, uint32_t ip, uint16_t port,
		qp_time_ns now);
/* Publish a QP's rate and flags when they changed; true when the table was written. */
bool agent_publish(struct agent *a, struct agent_qp *q, qp_time_ns now);
/* Recompute a QP's deadline (controller timer, credit expiry) and its heap place. */
void agent_reschedule(struct agent *a, uint32_t idx);

/* core_want.c: INT wished for a QP's flow (FB_T_WANT). _update after registration and
 * after an algorithm change, and when want_ns is due: asks (or withdraws, when the
 * algorithm takes no INT); _withdraw before the QP goes. */
void agent_want_update(struct agent *a, uint32_t idx, qp_time_ns now);
void agent_want_withdraw(struct agent *a, uint32_t idx, qp_time_ns now);
/* The flow's last window is on its way (@last), or a new message began: tell the switches
 * on the path once (FB_WANT_F_LAST, or a WANT without it). */
void agent_want_last(struct agent *a, uint32_t idx, bool last, qp_time_ns now);

/* core_feedback.c: after a controller ran (publish, level ack, reschedule); AGENT_RX_* */
unsigned agent_after_cc(struct agent *a, uint32_t idx, unsigned act, qp_time_ns now);
/* The data flow QP @q controls, as feedback names it (from its sender's side): its own
 * (local -> peer, the peer's QP) or a reader's (peer -> local, its own QP). */
static inline struct fb_flow agent_data_flow(const struct agent_qp *q)
{
	bool rd = q->reg.flags & AGENT_QP_READER;
	struct fb_flow f = { .src_ip = rd ? q->reg.peer_ip : q->reg.local_ip,
			     .dst_ip = rd ? q->reg.local_ip : q->reg.peer_ip, .sport = q->reg.sport,
			     .dest_qp = rd ? q->reg.qpn : q->reg.peer_qpn };

	if (q->reg.flags & AGENT_QP_IPV6) {   /* sent with FB_F_IPV6 (agent_fb_flags) */
		memcpy(f.src6, rd ? q->reg.peer_ip6 : q->reg.local_ip6, 16);
		memcpy(f.dst6, rd ? q->reg.local_ip6 : q->reg.peer_ip6, 16);
	}
	return f;
}

/* The flags a message about QP @q's flow carries: FB_F_IPV6 for an IPv6 one. */
static inline uint8_t agent_fb_flags(const struct agent_qp *q)
{
	return (q->reg.flags & AGENT_QP_IPV6) ? FB_F_IPV6 : 0;
}

/* core_credit.c: both sides of IA credits */
int agent_link_join(struct agent *a, uint32_t idx, qp_time_ns now, char *err, size_t errlen);
void agent_link_leave(struct agent *a, uint32_t idx, qp_time_ns now);
void agent_links_poll(struct agent *a, qp_time_ns now);
/* Echo INT about data the peer sent to local receiving QP @idx, PSN @psn: the data arrived;
 * its link's pacer is told how many bytes (from the PSN's progress) and due grants go out. */
void agent_link_arrival(struct agent *a, uint32_t idx, uint32_t psn, qp_time_ns now);
/* @bytes of data arrived on receiving QP @idx: to its pacer, and the grants now due sent. */
void agent_link_arrived(struct agent *a, uint32_t idx, uint64_t bytes, qp_time_ns now);
/* The 24-bit @psn extended against *@max (the nearest value to the highest seen). */
uint64_t agent_psn_extend(bool *valid, uint64_t *max, uint32_t psn);
qp_time_ns agent_links_next_ns(const struct agent *a);
unsigned agent_credit_rx(struct agent *a, uint32_t idx, const struct fb_credit *c,
			 qp_time_ns now);
unsigned agent_credit_expire(struct agent *a, uint32_t idx, qp_time_ns now);

#endif
