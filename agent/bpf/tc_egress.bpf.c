/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace's tc egress program: earliest departure times for RoCEv2 flows (clsact egress,
 * direct action; built with clang -target bpf, loaded through the bpftool skeleton by
 * tc_egress.c).
 *
 * Each frame: Ethernet / IPv4 or IPv6 / UDP 4791 / BTH is parsed with bpf_skb_load_bytes
 * (roce_parse.bpf.h, shared with the ingress program; a non-linear skb parses too);
 * anything else passes as it is and is counted under the
 * reason it is not RoCEv2 (tc_abi.h, enum qp_tc_counter). A RoCEv2 frame is counted in its
 * flow, keyed by (destination address, destination QPN). When qpaced has written a rate
 * for the flow and the mode is "enforce", the frame gets its earliest departure time the
 * way Linux's EDT model has it (fq releases it at skb->tstamp):
 *
 *   t      = max(now, skb->tstamp)
 *   depart = max(t, flow.next)            skb->tstamp = depart when later than t
 *   flow.next = depart + (len x 8e9 + flow.rem) / rate, flow.rem = the remainder
 *
 * so the k-th frame of a backlogged flow leaves at the first one's time plus the bits of
 * the k-1 before it over the rate, with no rounding drift. An idle flow (next <= t) starts
 * afresh. An RDMA READ request (BTH 0x0c) is charged the length its RETH asks for, not its
 * own bytes (when that is more): the data it asks for converges on this host, and its
 * requests are what a requester can pace (qpace/agent.h, "reader"). The verdict is always
 * TC_ACT_OK: the program never drops (a drop is a send_err to rxe, which re-sends in a
 * busy loop) and changes no byte of the frame, but for the ECN field when conf.ecn_mark
 * asks for ECT(0) (ect_mark).
 *
 * A RoCEv2 frame of a flow with no rate entry is reported through the ring buffer, at most
 * once per conf.report_retry_ns per flow and once per conf.report_gap_ns in all.
 *
 * In enforce mode a flow with no entry yet (IPv4 or IPv6: qpaced makes both QPs) is paced
 * at conf.start_bps (its ACK and CNP flows are not): the frames rxe commits before qpaced
 * has answered the report.
 *
 * Safe failure: when qpaced's heartbeat (qp_alive) is older than its hold, the rate is
 * min(rate, safe), and a flow with no entry is paced at the safe rate (tc_abi.h).
 *
 * RTT stamps (conf.rtt, any mode): a data frame that asks for an ACK (BTH AckReq) is
 * stamped in qp_rtt by (peer, PSN) with its departure, max(now, skb->tstamp) after the
 * steps above; the tc ingress program matches the ACK and reports the RTT. A PSN stamped
 * less than QP_TC_RTT_STALE_NS ago is a retransmission: marked, it gives no sample.
 *
 * IA credits (QP_TC_F_CREDIT on a paced entry, enforce mode): a data frame beyond the
 * flow's cumulative credits departs no earlier than the credit schedule allows
 * (credit_hold, tc_abi.h), and the EDT step then runs from that time; credits past their
 * expiry are ignored.
 *
 * Two things keep pacing from making rxe's ACK timer run out (docs/enforce.md, "No program
 * fails because of qpaced"). rxe asks for an ACK once a message (or every 64 frames), and
 * its timer runs from one ACK to the next: paced at R, a 64-frame message takes
 * 64 x frame / R, and at perftest's timeout 14 (67 ms) three flows sharing 20 Mb/s time out
 * every message although nothing is lost. So, with conf.ack_gap_ns, the program sets
 * AckReq on a data frame that comes, or departs, that long after the flow's last one with
 * it (ack_request: the bit, and the ICRC patched by XOR with qp_icrc_ackreq[D], CRC-32
 * being linear). Both clocks, since neither alone is when frames leave: rxe hands over a
 * new QP's first 64 frames at once, which only their departure times spread (by arrival
 * alone, a start at 4.7 Mb/s asked for one ACK in 115 ms); once its window is full it
 * hands over a frame when one has left, so arrivals follow the real departures, which
 * lag the stamped ones where the sender cannot keep up (TCG guests: frames stamped at
 * 4.7 Mb/s left at ~1 Mb/s, and by departure times alone ACKs were asked 60-90 ms
 * apart). And a go-back-N resend (an RC request
 * frame whose PSN is not beyond the highest sent) departs on a schedule of its own from
 * now, at the flow's rate (rtx_next_ns): queued behind the originals it would wait out a
 * whole backlog, and rxe 6.1 resending a message whose ACK comes meanwhile emits frames
 * its peer refuses (IBV_WC_REM_INV_REQ_ERR, measured in the guests).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "roce_parse.bpf.h"
#include "tc_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, QP_TC_MAX_FLOWS);
	__type(key, struct qp_tc_key);
	__type(value, struct qp_tc_rate);
} qp_rates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, QP_TC_MAX_FLOWS);
	__type(key, struct qp_tc_key);
	__type(value, struct qp_tc_state);
} qp_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QP_TC_C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} qp_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, QP_TC_RING_BYTES);
} qp_reports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qp_tc_alive);
} qp_alive SEC(".maps");

ROCE_RTT_MAP(qp_rtt);

struct qp_tc_conf qp_conf;
__u64 qp_last_report_ns;
__u32 qp_icrc_ackreq[QP_TC_ACKREQ_SPAN];  /* tc_abi.h; written by the loader */

#define NSEC_BITS 8000000000ull  /* bits per byte x ns per second */

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&qp_counters, &c);

	if (v)
		*v += 1;
}

static __always_inline struct qp_tc_state *flow_state(const struct roce_parsed *p, __u64 now)
{
	struct qp_tc_state *st = bpf_map_lookup_elem(&qp_state, &p->key);
	struct qp_tc_state fresh = {};

	if (st)
		return st;
	fresh.first_ns = now;
	__builtin_memcpy(fresh.saddr, p->saddr, 16);
	fresh.sport = p->sport;
	fresh.ipv6 = p->ipv6;
	/* Another CPU may create it first (-EEXIST): then use that one. */
	bpf_map_update_elem(&qp_state, &p->key, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&qp_state, &p->key);
}

/* Report a flow with no rate entry, within the per-flow and global limits. */
static __always_inline void report(struct qp_tc_state *st, const struct roce_parsed *p,
				   __u32 len, __u64 now)
{
	struct qp_tc_report *r;
	__u64 last;

	if (st->reported_ns && now - st->reported_ns < qp_conf.report_retry_ns)
		return;
	last = qp_last_report_ns;
	if (last && now - last < qp_conf.report_gap_ns) {
		count(QP_TC_C_REPORT_LIMITED);
		return;
	}
	if (__sync_val_compare_and_swap(&qp_last_report_ns, last, now) != last) {
		count(QP_TC_C_REPORT_LIMITED);  /* another CPU reported just now */
		return;
	}
	r = bpf_ringbuf_reserve(&qp_reports, sizeof(*r), 0);
	if (!r) {
		count(QP_TC_C_REPORT_FULL);
		return;
	}
	__builtin_memcpy(&r->key, &p->key, sizeof(r->key));
	__builtin_memcpy(r->saddr, p->saddr, 16);
	r->sport = p->sport;
	r->opcode = p->opcode;
	r->ipv6 = p->ipv6;
	r->len = len;
	r->ts_ns = now;
	bpf_ringbuf_submit(r, 0);
	st->reported_ns = now;
	count(QP_TC_C_REPORTS);
}

/* conf.ecn_mark: a RoCEv2 frame whose ECN field is 00 (Not-ECT) leaves as ECT(0), so an
 * ECN-marking switch may mark it CE instead of dropping it; ECT(1), ECT(0) and CE are left
 * as they are. IPv4: the TOS byte, with the header checksum updated incrementally over the
 * 16-bit word that holds it (bpf_l3_csum_replace, RFC 1624). IPv6: the traffic class (its
 * ECN bits are bits 4-5 of the header's second byte), which no checksum covers. The UDP
 * checksum's pseudo-header has neither, and the ICRC masks both (TOS / traffic class read
 * as all ones), so the frame stays valid for the receiving RoCE stack. */
static __always_inline void ect_mark(struct __sk_buff *skb, const struct roce_parsed *p)
{
	__u8 w[2], nw[2];

	if (bpf_skb_load_bytes(skb, ETH_HLEN, w, 2) < 0)
		return;
	nw[0] = w[0];
	nw[1] = w[1];
	if (p->ipv6) {
		if (w[1] & 0x30)
			return;
		nw[1] |= 0x20;
	} else {
		__u16 o, n;

		if (w[1] & 0x03)
			return;
		nw[1] |= 0x02;
		__builtin_memcpy(&o, w, 2);
		__builtin_memcpy(&n, nw, 2);
		if (bpf_l3_csum_replace(skb, ETH_HLEN + 10, o, n, 2) < 0)
			return;
	}
	if (bpf_skb_store_bytes(skb, ETH_HLEN + 1, &nw[1], 1, 0) < 0)
		return;
	count(QP_TC_C_ECT_MARKED);
}

/* The safe rate when qpaced's heartbeat is older than its hold, else 0. */
static __always_inline __u64 stale_safe_bps(__u64 now)
{
	__u32 zero = 0;
	struct qp_tc_alive *a = bpf_map_lookup_elem(&qp_alive, &zero);

	if (!a || !a->beat_ns || !a->hold_ns || !a->safe_bps || now <= a->beat_ns ||
	    now - a->beat_ns <= a->hold_ns)
		return 0;
	return a->safe_bps;
}

/* The EDT step (see the top of the file) for a frame charged @len bytes, on the schedule
 * @next / @rem (the flow's, or its resends'), no earlier than @not_before (0: none, else
 * the credit schedule's time: a flow idle until then starts afresh there). Returns the
 * frame's departure. */
static __always_inline __u64 pace(struct __sk_buff *skb, struct qp_tc_state *st, __u64 *next,
				 __u64 *rem_p, __u64 rate, __u64 now, __u64 not_before,
				 __u64 len)
{
	__u64 t0 = skb->tstamp > now ? skb->tstamp : now;
	__u64 t = not_before > t0 ? not_before : t0;
	__u64 depart = t, rem = 0, num, delay;

	if (*next > t) {
		depart = *next;
		rem = *rem_p;
	}
	if (depart > t0) {
		skb->tstamp = depart;
		__sync_fetch_and_add(&st->paced, 1);
		count(QP_TC_C_PACED);
	}
	if (qp_conf.horizon_ns && depart - now > qp_conf.horizon_ns)
		count(QP_TC_C_HORIZON);
	num = len * NSEC_BITS + rem;
	delay = num / rate;
	*rem_p = num - delay * rate;
	*next = depart + delay;
	return depart;
}

#define PSN_SEEN 0x80000000u
#define PSN_MASK 0xffffffu
#define PSN_IDLE_NS 1000000000ull    /* a flow quiet this long: its PSNs start afresh (a new
				      * QP may have the old one's number) */

/* An RC request frame whose PSN is not beyond the highest the flow sent: a resend. Tracks
 * the highest. Read responses, ACKs and CNPs are no requests (a flow key may carry the
 * responses of the peer's READs, in the peer's PSN space, beside our requests). */
static __always_inline int resend(struct qp_tc_state *st, const struct roce_parsed *p,
				  __u64 idle_ns)
{
	__u32 max = st->psn_max, d;

	if (!qp_tc_rc_request(p->opcode))
		return 0;
	if (!(max & PSN_SEEN) || idle_ns > PSN_IDLE_NS) {
		st->psn_max = p->psn | PSN_SEEN;
		return 0;
	}
	d = (p->psn - max) & PSN_MASK;
	if (d && d < 0x800000u) {   /* ahead, in 24-bit serial order */
		st->psn_max = p->psn | PSN_SEEN;
		return 0;
	}
	return 1;
}

/* Set AckReq on this data frame: the BTH bit, the ICRC XOR its table entry, and the UDP
 * checksum where there is one (IPv6; rxe's IPv4 frames carry 0, which stays 0). 0, or -1
 * when it cannot (the frame then goes as it came). */
static __always_inline int ack_request(struct __sk_buff *skb, const struct roce_parsed *p)
{
	__u32 bth = p->l4 + 8, icrc_off = p->l4 + p->ulen - 4;
	__u32 d = icrc_off - (bth + 9), delta, icrc, nicrc;
	__u16 w, nw;
	__u8 *b = (__u8 *)&nw;

	if (p->ulen & 3 || d >= QP_TC_ACKREQ_SPAN)
		return -1;
	delta = qp_icrc_ackreq[d];
	if (bpf_skb_load_bytes(skb, bth + 8, &w, 2) < 0 ||
	    bpf_skb_load_bytes(skb, icrc_off, &icrc, 4) < 0)
		return -1;
	nw = w;
	b[0] |= 0x80;
	nicrc = icrc ^ delta;    /* both as stored: little-endian on the wire and here */
	if (bpf_l4_csum_replace(skb, p->l4 + 6, w, nw, BPF_F_MARK_MANGLED_0 | 2) < 0 ||
	    bpf_l4_csum_replace(skb, p->l4 + 6, icrc, nicrc, BPF_F_MARK_MANGLED_0 | 4) < 0 ||
	    bpf_skb_store_bytes(skb, bth + 8, &nw, 2, 0) < 0 ||
	    bpf_skb_store_bytes(skb, icrc_off, &nicrc, 4, 0) < 0)
		return -1;
	return 0;
}

/* A new data frame that comes at @now and departs at @depart asks for an ACK when the
 * flow's last one that did came, or departs, conf.ack_gap_ns before it or more (tc_abi.h);
 * one that asks already (a message's last) restarts both intervals. 1 when it set AckReq
 * on this frame (the RTT stamp then takes it too), else 0. */
static __always_inline int ack_gap(struct __sk_buff *skb, struct qp_tc_state *st,
				    const struct roce_parsed *p, __u64 now, __u64 depart)
{
	__u64 gap = qp_conf.ack_gap_ns;

	if (!qp_tc_rc_data(p->opcode))
		return 0;
	if (!p->ackreq && (!gap || (now < st->ack_ns + gap && depart < st->ack_dep_ns + gap)))
		return 0;
	st->ack_ns = now;
	st->ack_dep_ns = depart;
	if (p->ackreq)
		return 0;
	if (ack_request(skb, p)) {
		count(QP_TC_C_ACKREQ_SKIP);
		return 0;
	}
	__sync_fetch_and_add(&st->ackreq, 1);
	count(QP_TC_C_ACKREQ);
	return 1;
}

#define OP_READ_REQUEST 0x0c
#define OP_ACK 0x11
#define OP_ATOMIC_ACK 0x12
#define OP_CNP 0x81
#define RETH_DMA_LEN_OFF (ROCE_BTH_LEN + 12)   /* RETH: va 8, rkey 4, DMA length 4 */

/* The bytes a frame costs the flow's rate: its own, or a READ request's DMA length. */
static __always_inline __u64 charged_len(struct __sk_buff *skb, const struct roce_parsed *p)
{
	__u8 l[4];
	__u64 n;

	if (p->opcode != OP_READ_REQUEST || p->ulen < 8 + RETH_DMA_LEN_OFF + 4 + 4 ||
	    bpf_skb_load_bytes(skb, p->bth_off + RETH_DMA_LEN_OFF, l, 4) < 0)
		return skb->len;
	n = (__u64)l[0] << 24 | (__u64)l[1] << 16 | (__u64)l[2] << 8 | l[3];
	count(QP_TC_C_READ_CHARGED);
	return n > skb->len ? n : skb->len;
}

/* IA credits (tc_abi.h, struct qp_tc_rate): the earliest departure the credit schedule
 * allows this frame, 0 when it is within the flow's credits or credits do not apply. */
static __always_inline __u64 credit_hold(struct qp_tc_state *st, const struct qp_tc_rate *rt,
					 const struct roce_parsed *p, __u64 now)
{
	__u64 used, over, win;

	if (p->opcode == OP_ACK || p->opcode == OP_ATOMIC_ACK || p->opcode == OP_CNP)
		return 0;            /* ACKs are not data: they spend no credit */
	if (now >= rt->credit_until_ns) {
		count(QP_TC_C_CREDIT_EXPIRED);
		return 0;
	}
	if (st->credit_gen != rt->credit_gen) {
		st->credit_gen = rt->credit_gen;   /* gating began again: a fresh budget */
		st->credit_used = 0;
	}
	used = __sync_fetch_and_add(&st->credit_used, 1);
	if (used < rt->credit_frames) {
		count(QP_TC_C_CREDIT_IN);
		return 0;
	}
	over = used - rt->credit_frames;
	win = rt->credit_win ? rt->credit_win : 1;
	__sync_fetch_and_add(&st->credit_held, 1);
	count(QP_TC_C_CREDIT_HELD);
	return rt->credit_next_ns + over / win * rt->credit_interval_ns;
}

/* conf.rtt: an AckReq data frame's departure, by (peer, PSN); a retransmission marked. */
static __always_inline void rtt_stamp(struct __sk_buff *skb, const struct roce_parsed *p)
{
	struct qp_tc_rtt_key k = {};
	struct qp_tc_rtt_stamp *old, fresh = {};
	__u64 now = bpf_ktime_get_ns();

	__builtin_memcpy(k.peer, p->key.daddr, 16);
	k.psn = p->psn;
	old = bpf_map_lookup_elem(&qp_rtt, &k);
	if (old && now - old->depart_ns < QP_TC_RTT_STALE_NS) {
		old->resent = 1;
		count(QP_TC_C_RTT_RESENT);
		return;
	}
	fresh.depart_ns = skb->tstamp > now ? skb->tstamp : now;
	fresh.dqpn = p->key.dqpn;
	if (bpf_map_update_elem(&qp_rtt, &k, &fresh, BPF_ANY)) {
		count(QP_TC_C_RTT_FULL);
		return;
	}
	count(QP_TC_C_RTT_STAMPED);
}

static __always_inline int egress(struct __sk_buff *skb, struct roce_parsed *pp);

SEC("tc")
int qp_tc_egress(struct __sk_buff *skb)
{
	struct roce_parsed p = {};
	int verdict = egress(skb, &p);

	if (qp_conf.rtt && p.ackreq && !qp_tc_ack_only(p.opcode))
		rtt_stamp(skb, &p);
	return verdict;
}

/* Everything but the RTT stamp; @pp is filled when the frame is RoCEv2 (else zero). */
static __always_inline int egress(struct __sk_buff *skb, struct roce_parsed *pp)
{
	struct roce_parsed p = {};
	struct qp_tc_state *st;
	struct qp_tc_rate *rt;
	__u32 c = roce_parse(skb, &p);
	__u64 now, rate = 0, safe, hold = 0, last, depart;
	int rtx;

	count(c);
	if (c != QP_TC_C_ROCE)
		return TC_ACT_OK;
	*pp = p;
	if (qp_conf.ecn_mark)
		ect_mark(skb, &p);
	now = bpf_ktime_get_ns();
	st = flow_state(&p, now);
	if (!st) {
		count(QP_TC_C_STATE_FULL);
		return TC_ACT_OK;
	}
	__sync_fetch_and_add(&st->bytes, skb->len);
	__sync_fetch_and_add(&st->pkts, 1);
	last = st->last_ns;
	st->last_ns = now;
	rtx = resend(st, &p, last && now > last ? now - last : 0);
	rt = bpf_map_lookup_elem(&qp_rates, &p.key);
	if (!rt) {
		count(QP_TC_C_UNKNOWN);
		report(st, &p, skb->len, now);
		if (qp_conf.mode == QP_TC_MODE_ENFORCE && qp_conf.start_bps &&
		    !qp_tc_ack_only(p.opcode)) {
			rate = qp_conf.start_bps;
			count(QP_TC_C_START);
		}
	} else if (rt->rate_bps && (rt->flags & QP_TC_F_PACE)) {
		rate = rt->rate_bps;
	}
	if (qp_conf.mode != QP_TC_MODE_ENFORCE)
		return TC_ACT_OK;
	if (rt && !rate) {
		/* Count only, but never ahead of a frame of the flow that already has a later
		 * departure (paced at the start rate before qpaced's first entry, which is
		 * count-only until its first rate; or a rate since cleared): fq sends a frame
		 * with an earlier time first, and RC takes its frames in PSN order only: one
		 * overtaking the start-paced ones was a PSN-gap NAK and a retry on rxe. */
		if (st->next_ns > now && skb->tstamp < st->next_ns)
			skb->tstamp = st->next_ns;
		return TC_ACT_OK;
	}
	safe = stale_safe_bps(now);
	if (safe) {
		count(QP_TC_C_STALE);
		if (!rate || safe < rate)
			rate = safe;
	}
	if (!rate)
		return TC_ACT_OK;
	if (rtx) {   /* a resend: its own schedule, no credits (its frame was counted) */
		__sync_fetch_and_add(&st->rtx, 1);
		count(QP_TC_C_RTX);
		pace(skb, st, &st->rtx_next_ns, &st->rtx_rem, rate, now, 0, charged_len(skb, &p));
		return TC_ACT_OK;
	}
	if (rt && (rt->flags & QP_TC_F_CREDIT))
		hold = credit_hold(st, rt, &p, now);
	depart = pace(skb, st, &st->next_ns, &st->rem, rate, now, hold, charged_len(skb, &p));
	if (ack_gap(skb, st, &p, now, depart))
		pp->ackreq = 1;
	return TC_ACT_OK;
}
