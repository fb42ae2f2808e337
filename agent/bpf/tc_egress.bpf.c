/* qpace's tc egress program: earliest departure times for RoCEv2 flows (clsact egress,
 * direct action; built with clang -target bpf, loaded through the bpftool skeleton by
 * tc_egress.c).
 *
 * Each frame: Ethernet / IPv4 or IPv6 / UDP 4791 / BTH is parsed with bpf_skb_load_bytes
 * (so a non-linear skb parses too); anything else passes as it is and is counted under the
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
 * afresh. The verdict is always TC_ACT_OK: the program never drops (a drop is a send_err to
 * rxe, which re-sends in a busy loop) and never changes a byte of the frame.
 *
 * A RoCEv2 frame of a flow with no rate entry is reported through the ring buffer, at most
 * once per conf.report_retry_ns per flow and once per conf.report_gap_ns in all.
 *
 * Safe failure: when qpaced's heartbeat (qp_alive) is older than its hold, the rate is
 * min(rate, safe), and a flow with no entry is paced at the safe rate (tc_abi.h).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "tc_abi.h"

char LICENSE[] SEC("license") = "GPL";

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

struct qp_tc_conf qp_conf;
__u64 qp_last_report_ns;

#define IPV6_HLEN 40
#define BTH_LEN 12
#define ICRC_LEN 4
#define NSEC_BITS 8000000000ull  /* bits per byte x ns per second */

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&qp_counters, &c);

	if (v)
		*v += 1;
}

struct parsed {
	struct qp_tc_key key;
	__u8 saddr[16];
	__u16 sport;
	__u8 opcode;
	__u8 ipv6;
};

static __always_inline void v4_mapped(__u8 out[16], __u32 addr_be)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(out + 12, &addr_be, 4);
}

/* QP_TC_C_ROCE with *p filled, or the reason the frame is not RoCEv2. */
static __always_inline __u32 parse(struct __sk_buff *skb, struct parsed *p)
{
	struct ethhdr eth;
	__u8 ip[IPV6_HLEN];
	__u8 udp[8];
	__u8 bth[BTH_LEN];
	__u32 l4, l4_len;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0)
		return QP_TC_C_PASS_SHORT_ETH;
	switch (eth.h_proto) {
	case bpf_htons(ETH_P_8021Q):
	case bpf_htons(ETH_P_8021AD):
		return QP_TC_C_PASS_VLAN;
	case bpf_htons(ETH_P_IP): {
		__u32 ihl, tot, frag, addr;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, 20) < 0)
			return QP_TC_C_PASS_SHORT_IP;
		ihl = (ip[0] & 0x0f) * 4u;
		tot = (__u32)ip[2] << 8 | ip[3];
		if (ip[0] >> 4 != 4 || ihl < 20 || tot < ihl)
			return QP_TC_C_PASS_BAD_IP;
		if (ETH_HLEN + tot > skb->len)
			return QP_TC_C_PASS_SHORT_IP;
		frag = ((__u32)ip[6] << 8 | ip[7]) & 0x3fff;  /* MF | offset */
		if (frag)
			return QP_TC_C_PASS_FRAGMENT;
		if (ip[9] != IPPROTO_UDP)
			return QP_TC_C_PASS_NOT_UDP;
		__builtin_memcpy(&addr, ip + 16, 4);
		v4_mapped(p->key.daddr, addr);
		__builtin_memcpy(&addr, ip + 12, 4);
		v4_mapped(p->saddr, addr);
		p->ipv6 = 0;
		l4 = ETH_HLEN + ihl;
		l4_len = tot - ihl;
		break;
	}
	case bpf_htons(ETH_P_IPV6): {
		__u32 plen;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, IPV6_HLEN) < 0)
			return QP_TC_C_PASS_SHORT_IP;
		if (ip[0] >> 4 != 6)
			return QP_TC_C_PASS_BAD_IP;
		plen = (__u32)ip[4] << 8 | ip[5];
		if (ETH_HLEN + IPV6_HLEN + plen > skb->len)
			return QP_TC_C_PASS_SHORT_IP;
		switch (ip[6]) {
		case IPPROTO_UDP:
			break;
		case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139:
		case 140: case 253: case 254:  /* extension headers (RFC 8200, IANA) */
			return QP_TC_C_PASS_FRAGMENT;
		default:
			return QP_TC_C_PASS_NOT_UDP;
		}
		__builtin_memcpy(p->saddr, ip + 8, 16);
		__builtin_memcpy(p->key.daddr, ip + 24, 16);
		p->ipv6 = 1;
		l4 = ETH_HLEN + IPV6_HLEN;
		l4_len = plen;
		break;
	}
	default:
		return QP_TC_C_PASS_NOT_IP;
	}

	if (l4_len < sizeof(udp) || bpf_skb_load_bytes(skb, l4, udp, sizeof(udp)) < 0)
		return QP_TC_C_PASS_SHORT_UDP;
	{
		__u32 ulen = (__u32)udp[4] << 8 | udp[5];
		__u32 dport = (__u32)udp[2] << 8 | udp[3];

		if (ulen < sizeof(udp) || ulen > l4_len)
			return QP_TC_C_PASS_SHORT_UDP;
		if (dport != QP_TC_ROCE_PORT)
			return QP_TC_C_PASS_NOT_ROCE;
		if (ulen < sizeof(udp) + BTH_LEN + ICRC_LEN ||
		    bpf_skb_load_bytes(skb, l4 + sizeof(udp), bth, sizeof(bth)) < 0)
			return QP_TC_C_PASS_SHORT_BTH;
	}
	p->sport = (__u16)((__u32)udp[0] << 8 | udp[1]);
	p->opcode = bth[0];
	p->key.dqpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	return QP_TC_C_ROCE;
}

static __always_inline struct qp_tc_state *flow_state(const struct parsed *p, __u64 now)
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
static __always_inline void report(struct qp_tc_state *st, const struct parsed *p,
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

/* The EDT step (see the top of the file). */
static __always_inline void pace(struct __sk_buff *skb, struct qp_tc_state *st,
				 __u64 rate, __u64 now)
{
	__u64 t = skb->tstamp > now ? skb->tstamp : now;
	__u64 depart = t, rem = 0, num, delay;

	if (st->next_ns > t) {
		depart = st->next_ns;
		rem = st->rem;
		skb->tstamp = depart;
		__sync_fetch_and_add(&st->paced, 1);
		count(QP_TC_C_PACED);
	}
	if (qp_conf.horizon_ns && depart - now > qp_conf.horizon_ns)
		count(QP_TC_C_HORIZON);
	num = (__u64)skb->len * NSEC_BITS + rem;
	delay = num / rate;
	st->rem = num - delay * rate;
	st->next_ns = depart + delay;
}

SEC("tc")
int qp_tc_egress(struct __sk_buff *skb)
{
	struct parsed p = {};
	struct qp_tc_state *st;
	struct qp_tc_rate *rt;
	__u32 c = parse(skb, &p);
	__u64 now, rate = 0, safe;

	count(c);
	if (c != QP_TC_C_ROCE)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	st = flow_state(&p, now);
	if (!st) {
		count(QP_TC_C_STATE_FULL);
		return TC_ACT_OK;
	}
	__sync_fetch_and_add(&st->bytes, skb->len);
	__sync_fetch_and_add(&st->pkts, 1);
	st->last_ns = now;
	rt = bpf_map_lookup_elem(&qp_rates, &p.key);
	if (!rt) {
		count(QP_TC_C_UNKNOWN);
		report(st, &p, skb->len, now);
	} else if (rt->rate_bps && (rt->flags & QP_TC_F_PACE)) {
		rate = rt->rate_bps;
	}
	if (qp_conf.mode != QP_TC_MODE_ENFORCE || (rt && !rate))
		return TC_ACT_OK;
	safe = stale_safe_bps(now);
	if (safe) {
		count(QP_TC_C_STALE);
		if (!rate || safe < rate)
			rate = safe;
	}
	if (rate)
		pace(skb, st, rate, now);
	return TC_ACT_OK;
}
