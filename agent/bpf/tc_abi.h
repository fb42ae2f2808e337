/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the tc egress program (tc_egress.bpf.c) and its loader (tc_egress.c) share: the maps'
 * keys and values, the counters and the ring-buffer record. Included by both the BPF
 * object (clang -target bpf) and user space, so only fixed-width kernel types.
 *
 *   qp_rates    hash, qpaced writes: (destination address, destination QPN) -> rate,
 *               in-flight cap, flags. A flow with no entry, or rate 0, is only counted.
 *   qp_state    LRU hash, the program writes: the same key -> next departure time, the
 *               division remainder that keeps the long-run rate exact, bytes, packets,
 *               first/last seen, when the flow was last reported.
 *   qp_counters per-CPU array, one u64 per enum qp_tc_counter.
 *   qp_reports  ring buffer of struct qp_tc_report: a RoCEv2 flow that has no rate entry,
 *               at most once per conf.report_retry_ns per flow and once per
 *               conf.report_gap_ns over all flows.
 *   qp_alive    array of one struct qp_tc_alive, qpaced writes: its heartbeat, and the safe
 *               rate every paced flow falls to when the heartbeat is older than the hold
 *               (qpaced died), and what qpaced installed (for a later --enforce off).
 *
 *   qp_rtt      LRU hash, the program writes (conf.rtt) and the tc ingress program reads
 *               and deletes (the loader shares it, qp_tc_rtt_fd): (peer address, PSN) ->
 *               when a data frame that asks for an ACK (BTH AckReq) left, and its flow's
 *               destination QPN; one sent twice (go-back-N, a timeout) is marked so, and
 *               gives no RTT sample (Karn). Not pinned: stamps outlive no program.
 *
 * These five are pinned under bpffs (QP_TC_PIN_ROOT/IFACE/NAME), so a restarted qpaced
 * takes them over, and the program (held by its filter) keeps working when qpaced dies.
 *
 * Addresses are 16 bytes as on the wire (network order): IPv6 as is, IPv4 as the
 * IPv4-mapped address ::ffff:a.b.c.d (the form of a RoCEv2 GID).
 */
#ifndef QPACE_TC_ABI_H
#define QPACE_TC_ABI_H

#include <linux/types.h>

#define QP_TC_MAX_FLOWS 65536
#define QP_TC_MAX_RTT 16384          /* data frames awaiting their ACK, over all flows */
#define QP_TC_RTT_STALE_NS 1000000000ull  /* a stamp older than this is a new frame's */
#define QP_TC_RING_BYTES (256 * 1024)
#define QP_TC_ROCE_PORT 4791

struct qp_tc_key {
	__u8 daddr[16];
	__u32 dqpn;                  /* 24 bits */
};

enum qp_tc_rate_flags {
	QP_TC_F_PACE = 1u << 0,      /* give frames departure times (else count only) */
	QP_TC_F_DISCOVERED = 1u << 1,/* a QP qpaced made from the wire (a restarted qpaced
				      * makes it one again); the program ignores it */
	QP_TC_F_CREDIT = 1u << 2,    /* IA credits gate the flow (the credit_* fields) */
};

struct qp_tc_rate {
	__u64 rate_bps;              /* Ethernet frame bits (skb->len) per second; 0 = none */
	__u64 cap_bytes;             /* the algorithm's in-flight cap, 0 = none (folded into
				      * rate_bps by the loader: egress sees no ACKs) */
	__u32 flags;                 /* enum qp_tc_rate_flags */
	__u32 qpn;                   /* qpaced's QPN of a discovered flow (for a restart) */
	/* IA credits (QP_TC_F_CREDIT on a paced entry, enforce mode; docs/enforce.md "IA
	 * credits for unmodified receivers"), in data frames (not ACKs, atomic ACKs, CNPs):
	 * the receiver's agent granted credit_frames frames since gating began (generation
	 * credit_gen). A data frame within them goes at the rate; the j-th one beyond them
	 * (j = 0, 1, ...) leaves no earlier than credit_next_ns + (j / credit_win) x
	 * credit_interval_ns: the next grant expected, then credit_win frames per interval
	 * (the grant rate). From credit_until_ns on (no grant for the expiry interval, or
	 * qpaced died) the credits are ignored and the rate alone paces. */
	__u64 credit_frames;
	__u64 credit_next_ns;        /* bpf_ktime_get_ns() clock (CLOCK_MONOTONIC) */
	__u64 credit_interval_ns;
	__u64 credit_until_ns;
	__u32 credit_win;            /* frames per interval beyond the budget, >= 1 */
	__u32 credit_gen;            /* a new one restarts the flow's credit_used at 0 */
};

struct qp_tc_state {
	__u64 next_ns;               /* earliest departure of the flow's next frame */
	__u64 rem;                   /* remainder of bytes x 8e9 / rate carried to the next */
	__u64 bytes;                 /* Ethernet frame bytes seen (skb->len) */
	__u64 pkts;
	__u64 paced;                 /* frames given a departure time later than their own */
	__u64 first_ns, last_ns;     /* bpf_ktime_get_ns() of the first and last frame */
	__u64 reported_ns;           /* last report of this flow (0 = never) */
	__u8 saddr[16];              /* of the first frame */
	__u16 sport;                 /* UDP source port, host order */
	__u8 ipv6;
	__u8 pad[5];
	__u64 credit_used;           /* data frames counted against credit_gen's credits */
	__u64 credit_held;           /* of which beyond the budget: held to the schedule */
	__u32 credit_gen;
	__u32 pad2;
	/* Go-back-N resends: an RC request frame whose PSN is not beyond the highest the flow
	 * sent is a resend; it departs on a schedule of its own at the flow's rate from now
	 * (rtx_next_ns), not behind the originals still queued (the responder drops those
	 * after a gap, and takes them as duplicates after a timeout) */
	__u64 rtx_next_ns;
	__u64 rtx_rem;
	__u64 rtx;                   /* resent request frames */
	__u64 ackreq;                /* data frames the program set AckReq on */
	__u64 ack_ns;                /* when the flow's last data frame with AckReq came */
	__u64 ack_dep_ns;            /* and when it departs */
	__u32 psn_max;               /* the highest request PSN sent (24 bits); bit 31: seen */
	__u32 pad3;
};

/* RTT stamps (qp_rtt): a data frame with AckReq, by its peer and PSN (RC ACKs carry the
 * PSN they acknowledge: rxe sends one for each AckReq frame). */
struct qp_tc_rtt_key {
	__u8 peer[16];               /* the frame's destination */
	__u32 psn;
};

struct qp_tc_rtt_stamp {
	__u64 depart_ns;             /* bpf_ktime_get_ns() of its departure (its EDT time when
				      * paced later than now) */
	__u32 dqpn;                  /* its destination QPN: the flow's qp_tc_key with peer */
	__u32 resent;                /* 1: sent again before its ACK: no sample (Karn) */
};

/* Counters: every frame the program sees lands in exactly one of the QP_TC_C_PASS_* or in
 * QP_TC_C_ROCE; the others count events on RoCE frames. */
enum qp_tc_counter {
	QP_TC_C_ROCE,                /* RoCEv2 frame, counted in its flow */
	QP_TC_C_PASS_SHORT_ETH,      /* shorter than an Ethernet header */
	QP_TC_C_PASS_VLAN,           /* 802.1Q / 802.1ad tag in the frame: passed as is */
	QP_TC_C_PASS_NOT_IP,         /* another ethertype (ARP, ...) */
	QP_TC_C_PASS_SHORT_IP,       /* IPv4/IPv6 header cut short */
	QP_TC_C_PASS_BAD_IP,         /* IPv4 IHL < 5 or version wrong */
	QP_TC_C_PASS_FRAGMENT,       /* IPv4 fragment, IPv6 extension headers */
	QP_TC_C_PASS_NOT_UDP,
	QP_TC_C_PASS_SHORT_UDP,
	QP_TC_C_PASS_NOT_ROCE,       /* UDP to a port other than 4791 */
	QP_TC_C_PASS_SHORT_BTH,      /* UDP 4791 without a whole BTH */
	QP_TC_C_UNKNOWN,             /* RoCE frame of a flow with no rate entry */
	QP_TC_C_PACED,               /* given a later departure time */
	QP_TC_C_HORIZON,             /* departure beyond conf.horizon_ns (fq caps it) */
	QP_TC_C_REPORTS,             /* flow reports written */
	QP_TC_C_REPORT_LIMITED,      /* held back by the global report rate */
	QP_TC_C_REPORT_FULL,         /* ring buffer full */
	QP_TC_C_STATE_FULL,          /* could not create the flow's state */
	QP_TC_C_ECT_MARKED,          /* conf.ecn_mark: a Not-ECT RoCEv2 frame made ECT(0) */
	QP_TC_C_STALE,               /* paced or unknown flow's frame while qpaced's heartbeat
				      * was older than the hold: at most the safe rate */
	QP_TC_C_CREDIT_IN,           /* data frame within its flow's credits */
	QP_TC_C_CREDIT_HELD,         /* data frame beyond them: held to the credit schedule */
	QP_TC_C_CREDIT_EXPIRED,      /* credits past credit_until_ns: ignored, rate only */
	QP_TC_C_START,               /* enforce: a frame of a flow with no entry yet (not
				      * an ACK or CNP) paced at conf.start_bps */
	QP_TC_C_RTT_STAMPED,         /* conf.rtt: an AckReq data frame's departure stamped */
	QP_TC_C_RTT_RESENT,          /* ... one stamped already: sent again, no sample */
	QP_TC_C_RTT_FULL,            /* ... could not stamp it */
	QP_TC_C_READ_CHARGED,        /* a paced READ request charged its RETH's length */
	QP_TC_C_ACKREQ,              /* data frame given AckReq (conf.ack_gap_ns) */
	QP_TC_C_ACKREQ_SKIP,         /* AckReq was due but the frame could not take it (its
				      * length beyond the ICRC table, UDP length not a
				      * multiple of 4, a store failed) */
	QP_TC_C_RTX,                 /* paced request frame that is a resend (own schedule) */
	QP_TC_C_COUNT
};

/* The program's settings, a global (.bss) the loader writes through the skeleton. */
enum qp_tc_mode { QP_TC_MODE_OBSERVE = 0, QP_TC_MODE_ENFORCE = 1 };
struct qp_tc_conf {
	__u32 mode;                  /* enum qp_tc_mode; observe never changes a departure */
	__u32 ecn_mark;              /* 1: RoCEv2 frames with ECN 00 leave as ECT(0) (any mode) */
	__u64 horizon_ns;            /* 0 = no horizon count */
	__u64 report_gap_ns;         /* at least this long between any two reports */
	__u64 report_retry_ns;       /* report a still-unknown flow again after this */
	/* enforce: a flow with no rate entry (qpaced has not answered its report yet)
	 * is paced at this, but for ACKs and CNPs, which qpaced never makes QPs; 0 = it goes
	 * unpaced. rxe commits up to 64 frames of a new QP at once, before any rate or
	 * feedback can be back: at the line rate they would land in the switch together. */
	__u64 start_bps;
	__u32 rtt;                   /* 1: stamp AckReq data frames in qp_rtt (any mode) */
	__u32 pad;
	/* enforce: a paced flow's new RC SEND/WRITE data frame without AckReq gets it (its
	 * ICRC patched: qp_icrc_ackreq) when it comes, or departs, this long after the flow's
	 * last one with it, so the responder ACKs about that often, not once a message: the
	 * sender's ACK timer runs from one ACK to the next. 0: frames as rxe sends them. */
	__u64 ack_gap_ns;
};

/* qp_icrc_ackreq[D] (the program's global table, written by the loader): what setting the
 * BTH's AckReq bit changes in the frame's ICRC, as stored (the CRC-32 of the masked headers
 * and payload, little-endian), when D bytes follow the AckReq byte up to the ICRC: CRC-32
 * is linear, so the new ICRC is the old one XOR this, for every frame of that length. */
#define QP_TC_ACKREQ_SPAN 4224u      /* D < this: an MTU of 4096 with RETH and pad */

/* RC request opcodes (BTH opcode 0x00-0x1f is RC): SEND first/middle/last/only (with
 * immediate or invalidate), RDMA WRITE first/middle/last/only (with immediate), RDMA READ
 * request, compare&swap, fetch&add. Their PSNs grow by one a frame (a READ request by
 * its responses). */
static inline int qp_tc_rc_request(__u8 op)
{
	return op <= 0x0c || op == 0x13 || op == 0x14 || op == 0x16 || op == 0x17;
}

/* Of them, the ones that carry data the responder ACKs (not a READ or atomic request,
 * whose responses are their answer): where AckReq may be asked. */
static inline int qp_tc_rc_data(__u8 op)
{
	return op <= 0x0b || op == 0x16 || op == 0x17;
}

/* RoCEv2 opcodes whose flows are acknowledgements, not data: RC ACK, atomic ACK, CNP.
 * qpaced counts such flows but makes no QP of them, and the program does not pace them
 * at conf.start_bps. */
static inline int qp_tc_ack_only(__u8 opcode)
{
	return opcode == 0x11 || opcode == 0x12 || opcode == 0x81;
}

/* qpaced's heartbeat. When beat_ns is older than hold_ns (qpaced is dead or stuck), every
 * flow the program paces goes at min(its rate, safe_bps), and in enforce mode a flow with
 * no rate entry (one that started since) at safe_bps: never at line rate. Flows the
 * program only counts (rate 0: observe, or a QP whose own gate paces it) stay untouched.
 * beat_ns 0 (never written), hold_ns 0 or safe_bps 0: no fallback. */
#define QP_TC_PIN_ROOT "/sys/fs/bpf/qpace"
enum qp_tc_alive_flags {
	QP_TC_A_CLSACT = 1u << 0,    /* qpaced created the clsact qdisc */
	QP_TC_A_FQ = 1u << 1,        /* qpaced installed fq as the root qdisc */
};
struct qp_tc_alive {
	__u64 beat_ns;               /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) of the last beat */
	__u64 hold_ns;
	__u64 safe_bps;
	__u32 flags;                 /* enum qp_tc_alive_flags */
	__u32 pid;                   /* the qpaced that beats */
};

struct qp_tc_report {
	struct qp_tc_key key;
	__u8 saddr[16];
	__u16 sport;                 /* host order */
	__u8 opcode;                 /* BTH opcode of the frame */
	__u8 ipv6;
	__u32 len;                   /* skb->len */
	__u64 ts_ns;
};

#endif
