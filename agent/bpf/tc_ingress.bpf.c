/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace's tc ingress program: ECN and CNPs for DCQCN without a switch that sends CNPs
 * (clsact ingress, direct action; clang -target bpf, loaded through its bpftool skeleton
 * by tc_ingress.c). Each arriving frame:
 *
 *   - not RoCEv2 (roce_parse.bpf.h's rules): counted (pass), nothing else;
 *   - a CNP (BTH opcode 0x81): counted in its QP (the BTH destination QPN, a local QP)
 *     and reported (kind CNP, source address, destination QPN): this host's sender has
 *     been told to slow down the flow to that source;
 *   - a data frame with ECN = CE: counted in its QP and reported (kind CE) at most once
 *     per conf.ce_gap_ns per QP, the limit kept in the QP's map entry, so qpaced sends
 *     the sender at most one CNP per QP per interval as DCQCN's notification point does;
 *     CE on an ACK or atomic ACK is counted only.
 *
 *   - conf.flows (qpaced --credits ia): every data frame (not an ACK, atomic ACK or CNP)
 *     is counted in its receiving flow (source address, destination QPN) in qpi_flows,
 *     which qpaced's IA credit pacer reads on its timer;
 *   - conf.no_reports: CE and CNPs are counted, not reported (IA without --cnp).
 *
 *   - conf.rtt: an ACK (opcode 0x11, AETH syndrome ACK) takes the egress program's
 *     stamp of (its source, its PSN) from qpi_rtt (the same map: the loader shares it) and
 *     is reported as an RTT sample (kind RTT), a NAK with a PSN sequence error as kind
 *     NAK; each kind at most once per conf.rtt_gap_ns (tc_ingress_abi.h).
 *
 * The verdict is always TC_ACT_OK and no byte of a frame is changed. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "roce_parse.bpf.h"
#include "tc_ingress_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, QP_TCI_MAX_QPS);
	__type(key, __u32);
	__type(value, struct qp_tci_qp);
} qpi_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, QP_TCI_MAX_FLOWS);
	__type(key, struct qp_tci_flow_key);
	__type(value, struct qp_tci_flow);
} qpi_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QP_TCI_C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} qpi_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, QP_TCI_RING_BYTES);
} qpi_reports SEC(".maps");

/* The egress program's qp_rtt (tc_abi.h), shared by the loader; this program's own,
 * empty, when there is no egress program. */
ROCE_RTT_MAP(qpi_rtt);

struct qp_tci_conf qpi_conf;
__u64 qpi_rtt_reported_ns, qpi_nak_reported_ns;

#define OP_ACK 0x11
#define OP_ATOMIC_ACK 0x12
#define OP_CNP 0x81

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&qpi_counters, &c);

	if (v)
		*v += 1;
}

static __always_inline struct qp_tci_qp *qp_entry(__u32 qpn)
{
	struct qp_tci_qp *q = bpf_map_lookup_elem(&qpi_qps, &qpn);
	struct qp_tci_qp fresh = {};

	if (q)
		return q;
	bpf_map_update_elem(&qpi_qps, &qpn, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&qpi_qps, &qpn);
}

/* conf.flows: a data frame from p->saddr to local QP p->key.dqpn, counted in its flow. */
static __always_inline void flow_count(const struct roce_parsed *p, __u32 len, __u64 now)
{
	struct qp_tci_flow_key k = {};
	struct qp_tci_flow *f, fresh = {};

	__builtin_memcpy(k.saddr, p->saddr, 16);
	k.dqpn = p->key.dqpn;
	f = bpf_map_lookup_elem(&qpi_flows, &k);
	if (!f) {
		fresh.first_ns = now;
		__builtin_memcpy(fresh.daddr, p->key.daddr, 16);
		fresh.sport = p->sport;
		fresh.ipv6 = p->ipv6;
		bpf_map_update_elem(&qpi_flows, &k, &fresh, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&qpi_flows, &k);
		if (!f) {
			count(QP_TCI_C_FLOW_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&f->frames, 1);
	__sync_fetch_and_add(&f->bytes, len);
	f->last_ns = now;
	count(QP_TCI_C_FLOW_DATA);
}

static __always_inline int put_report(const struct roce_parsed *p, __u8 kind, __u32 len,
				      __u64 now)
{
	struct qp_tci_report *r = bpf_ringbuf_reserve(&qpi_reports, sizeof(*r), 0);

	if (!r) {
		count(QP_TCI_C_RING_FULL);
		return -1;
	}
	__builtin_memcpy(r->saddr, p->saddr, 16);
	__builtin_memcpy(r->daddr, p->key.daddr, 16);
	r->dqpn = p->key.dqpn;
	r->kind = kind;
	r->opcode = p->opcode;
	r->ipv6 = p->ipv6;
	r->ecn = p->ecn;
	r->sport = p->sport;
	r->pad = 0;
	r->len = len;
	r->ts_ns = now;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* A CE data frame: report it unless the QP was reported less than ce_gap_ns ago (the CAS
 * keeps two CPUs from both reporting inside one interval). */
static __always_inline void on_ce(struct qp_tci_qp *q, const struct roce_parsed *p,
				  __u32 len, __u64 now)
{
	__u64 last = q->ce_reported_ns;

	__sync_fetch_and_add(&q->ce, 1);
	if (last && now - last < qpi_conf.ce_gap_ns) {
		count(QP_TCI_C_CE_LIMITED);
		return;
	}
	if (__sync_val_compare_and_swap(&q->ce_reported_ns, last, now) != last) {
		count(QP_TCI_C_CE_LIMITED);
		return;
	}
	if (qpi_conf.no_reports)
		return;
	if (put_report(p, QP_TCI_K_CE, len, now) == 0) {
		__sync_fetch_and_add(&q->ce_reported, 1);
		count(QP_TCI_C_CE_REPORTS);
	}
}

#define AETH_NAK_PSN_SEQ 0x60   /* syndrome 011 00000: NAK, PSN sequence error */

/* At most one report per conf.rtt_gap_ns through *@last (the CAS: one CPU of two). */
static __always_inline int rtt_gap_ok(__u64 *last, __u64 now)
{
	__u64 l = *last;

	if (l && now - l < qpi_conf.rtt_gap_ns)
		return 0;
	return __sync_val_compare_and_swap(last, l, now) == l;
}

static __always_inline void rtt_report(const struct roce_parsed *p, __u8 kind, __u32 len,
				       __u64 now, __u32 peer_qpn, __u64 rtt)
{
	struct qp_tci_report *r = bpf_ringbuf_reserve(&qpi_reports, sizeof(*r), 0);

	if (!r) {
		count(QP_TCI_C_RING_FULL);
		return;
	}
	__builtin_memcpy(r->saddr, p->saddr, 16);
	__builtin_memcpy(r->daddr, p->key.daddr, 16);
	r->dqpn = p->key.dqpn;
	r->kind = kind;
	r->opcode = p->opcode;
	r->ipv6 = p->ipv6;
	r->ecn = p->ecn;
	r->sport = p->sport;
	r->pad = 0;
	r->len = len;
	r->ts_ns = now;
	r->psn = p->psn;
	r->peer_qpn = peer_qpn;
	r->rtt_ns = rtt;
	bpf_ringbuf_submit(r, 0);
	count(kind == QP_TCI_K_RTT ? QP_TCI_C_RTT_REPORTS : QP_TCI_C_NAK_REPORTS);
}

/* conf.rtt: an ACK or NAK from p->saddr (the AETH after the BTH). */
static __always_inline void on_ack(struct __sk_buff *skb, const struct roce_parsed *p,
				   __u64 now)
{
	struct qp_tc_rtt_key k = {};
	struct qp_tc_rtt_stamp *st;
	__u8 syn;
	__u32 dqpn;
	__u64 depart;
	int resent;

	if (bpf_skb_load_bytes(skb, p->bth_off + ROCE_BTH_LEN, &syn, 1) < 0)
		return;
	if (syn == AETH_NAK_PSN_SEQ) {
		count(QP_TCI_C_NAK);
		if (rtt_gap_ok(&qpi_nak_reported_ns, now))
			rtt_report(p, QP_TCI_K_NAK, skb->len, now, 0, 0);
		else
			count(QP_TCI_C_NAK_LIMITED);
		return;
	}
	if (syn >> 5)            /* RNR NAK, other NAKs */
		return;
	count(QP_TCI_C_ACK);
	__builtin_memcpy(k.peer, p->saddr, 16);
	k.psn = p->psn;
	st = bpf_map_lookup_elem(&qpi_rtt, &k);
	if (!st) {
		count(QP_TCI_C_RTT_NO_STAMP);
		return;
	}
	depart = st->depart_ns;
	dqpn = st->dqpn;
	resent = st->resent;
	bpf_map_delete_elem(&qpi_rtt, &k);
	if (resent) {
		count(QP_TCI_C_RTT_KARN);
		return;
	}
	if (now <= depart)
		return;
	count(QP_TCI_C_RTT_SAMPLE);
	if (rtt_gap_ok(&qpi_rtt_reported_ns, now))
		rtt_report(p, QP_TCI_K_RTT, skb->len, now, dqpn, now - depart);
	else
		count(QP_TCI_C_RTT_LIMITED);
}

SEC("tc")
int qp_tc_ingress(struct __sk_buff *skb)
{
	struct roce_parsed p = {};
	struct qp_tci_qp *q;
	__u64 now;
	int is_cnp, is_ce;

	if (roce_parse(skb, &p) != QP_TC_C_ROCE) {
		count(QP_TCI_C_PASS);
		return TC_ACT_OK;
	}
	count(QP_TCI_C_ROCE);
	is_cnp = p.opcode == OP_CNP;
	is_ce = p.ecn == 3;
	if (is_ce && (is_cnp || p.opcode == OP_ACK || p.opcode == OP_ATOMIC_ACK)) {
		count(QP_TCI_C_CE_NOT_DATA);
		is_ce = 0;
	}
	now = bpf_ktime_get_ns();
	if (qpi_conf.rtt && p.opcode == OP_ACK)
		on_ack(skb, &p, now);
	if (qpi_conf.flows && !is_cnp && p.opcode != OP_ACK && p.opcode != OP_ATOMIC_ACK)
		flow_count(&p, skb->len, now);
	if (!is_cnp && !is_ce)
		return TC_ACT_OK;
	q = qp_entry(p.key.dqpn);
	if (!q) {
		count(QP_TCI_C_STATE_FULL);
		return TC_ACT_OK;
	}
	if (is_cnp) {
		count(QP_TCI_C_CNP);
		__sync_fetch_and_add(&q->cnp, 1);
		if (!qpi_conf.no_reports && put_report(&p, QP_TCI_K_CNP, skb->len, now) == 0)
			count(QP_TCI_C_CNP_REPORTS);
		return TC_ACT_OK;
	}
	count(QP_TCI_C_CE);
	on_ce(q, &p, skb->len, now);
	return TC_ACT_OK;
}
