/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's feedback intake: allow-list, tag, decode, then one handler per message
 * type (table at the end). Roles and rules are described in qpace/agent.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/fb_auth.h"
#include "qpace/units.h"
#include "core_priv.h"

/* ---- after a controller ran: publish, acknowledge, reschedule ---- */

static bool send_level_ack(struct agent *a, struct agent_qp *q, qp_time_ns now)
{
	const struct agent_level_src *s = &q->level_src;
	struct fb_msg m = { .type = FB_T_LEVEL, .flags = agent_fb_flags(q) };

	if (!s->known)
		return false;
	m.u.level = (struct fb_level){
		.flow = agent_data_flow(q),
		.switch_id = s->switch_id, .port = s->port, .level = FB_LEVEL_ACK,
		.acked = q->cc->level_to_ack, .seq = s->seq, .psn = s->psn,
	};
	if (!agent_send(a, &m, s->ip, s->udp_port, now))
		return false;
	a->counters[AGENT_C_LEVEL_ACKS]++;
	return true;
}

unsigned agent_after_cc(struct agent *a, uint32_t idx, unsigned act, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	unsigned res = AGENT_RX_MATCHED;

	if (agent_publish(a, q, now))
		res |= AGENT_RX_RATE;
	if ((act & CC_ACT_ACK_LEVEL) && send_level_ack(a, q, now))
		res |= AGENT_RX_TX;
	if (act & CC_ACT_LAST_WINDOW) {
		agent_want_last(a, idx, true, now);
		res |= AGENT_RX_TX;
	}
	agent_reschedule(a, idx);
	return res;
}

static unsigned feed_cc(struct agent *a, uint32_t idx, const struct cc_event *ev,
			qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	uint64_t rejected = q->cc->stats.rejected[ev->type];
	unsigned act = cc_event(q->cc, ev, now);

	if (q->cc->stats.rejected[ev->type] != rejected)
		agent_note(a, AGENT_C_FB_CC_REJECTED, "qp 0x%06x: %s rejected a feedback event "
			   "(type %d; e.g. a zero link rate)", q->reg.qpn, q->cc->ops->name,
			   ev->type);
	q->feedback++;
	return agent_after_cc(a, idx, act, now);
}

/* ---- flows ---- */

static void note_unknown(struct agent *a, const struct fb_msg *m, const char *what,
			 const struct fb_flow *f)
{
	char s[QP_IPV6_STRLEN], d[QP_IPV6_STRLEN];
	bool v6 = m->flags & FB_F_IPV6;

	agent_note(a, AGENT_C_FB_UNKNOWN_FLOW, "%s for flow %s:%u -> %s qp 0x%06x: no such local "
		   "QP registered", what,
		   v6 ? qp_ipv6_fmt(f->src6, s, sizeof(s)) : qp_ipv4_fmt(f->src_ip, s, sizeof(s)),
		   f->sport,
		   v6 ? qp_ipv6_fmt(f->dst6, d, sizeof(d)) : qp_ipv4_fmt(f->dst_ip, d, sizeof(d)),
		   f->dest_qp);
}

/* The local QP that sends the data of flow @f: (src IP, dst IP, dest QP), and the source
 * port when both sides know it; an IPv6 flow (FB_F_IPV6) by its addresses. */
static uint32_t sender_qp(struct agent *a, const struct fb_msg *m, const struct fb_flow *f)
{
	uint32_t idx = (m->flags & FB_F_IPV6)
			       ? agent_map_find_flow6(a, f->src6, f->dst6, f->dest_qp)
			       : agent_map_find_flow(a, f->src_ip, f->dst_ip, f->dest_qp);

	if (idx != AGENT_NO_IDX && a->qps[idx].reg.sport && f->sport &&
	    f->sport != a->qps[idx].reg.sport)
		idx = AGENT_NO_IDX;
	if (idx == AGENT_NO_IDX)
		note_unknown(a, m, fb_type_name(m->type), f);
	return idx;
}

/* Is @r the QP at the receiving end of flow @f (the family @m's flags name)? */
static bool receives(const struct agent_qp_reg *r, const struct fb_msg *m,
		     const struct fb_flow *f)
{
	if (((r->flags & AGENT_QP_IPV6) != 0) != ((m->flags & FB_F_IPV6) != 0))
		return false;
	if (m->flags & FB_F_IPV6)
		return !memcmp(r->local_ip6, f->dst6, 16) && !memcmp(r->peer_ip6, f->src6, 16);
	return r->local_ip == f->dst_ip && r->peer_ip == f->src_ip;
}

/* The local QP that receives the data of flow @f: its QPN is the dest QP. */
static uint32_t receiver_qp(struct agent *a, const struct fb_msg *m, const struct fb_flow *f)
{
	uint32_t idx = agent_map_find_qpn(a, f->dest_qp);

	if (idx != AGENT_NO_IDX && !receives(&a->qps[idx].reg, m, f))
		idx = AGENT_NO_IDX;
	if (idx == AGENT_NO_IDX)
		note_unknown(a, m, "int to the receiver", f);
	return idx;
}

/* The local QP whose controller a message is for: the data's sender, or the data's
 * receiver when that is a reader (the switch addresses what it says about READ responses
 * to their receiver, FB_F_TO_RECEIVER: the requester paces them). */
static uint32_t controlled_qp(struct agent *a, const struct fb_msg *m, const struct fb_flow *f)
{
	uint32_t idx;

	if (!(m->flags & FB_F_TO_RECEIVER))
		return sender_qp(a, m, f);
	idx = receiver_qp(a, m, f);
	if (idx != AGENT_NO_IDX && !(a->qps[idx].reg.flags & AGENT_QP_READER)) {
		note_unknown(a, m, fb_type_name(m->type), f);
		idx = AGENT_NO_IDX;
	}
	return idx;
}

/* ---- monitoring from INT: the most congested hop, HPCC's way, and the queueing delay --- */

static void monitor_int(struct agent_qp *q, const struct qp_int_hop *hops, unsigned nhops)
{
	double u_max = -1, qdelay_ns = 0, t_ns = (double)q->reg.base_rtt_ns;
	bool same = q->prev_nhops == nhops;
	qp_time_ns qd;
	uint32_t qmax = 0;

	for (unsigned i = 0; i < nhops && same; i++)
		same = q->prev_hops[i].switch_id == hops[i].switch_id &&
		       q->prev_hops[i].port == hops[i].port;
	for (unsigned i = 0; i < nhops; i++) {
		const struct qp_int_hop *h = &hops[i], *p = &q->prev_hops[i];
		double b = (double)h->link_bps;

		if (h->qlen_bytes > qmax)
			qmax = h->qlen_bytes;
		if (!h->link_bps)
			continue;
		qdelay_ns += h->qlen_bytes * 8e9 / b;
		if (same && h->ts_ns > p->ts_ns && h->tx_bytes >= p->tx_bytes) {
			double tx_bps = (double)(h->tx_bytes - p->tx_bytes) * 8e9 /
					(double)(h->ts_ns - p->ts_ns);
			uint32_t qlen = h->qlen_bytes < p->qlen_bytes ? h->qlen_bytes : p->qlen_bytes;
			double u = tx_bps / b + qlen * 8e9 / (b * t_ns);

			if (u > u_max)
				u_max = u;
		}
	}
	if (u_max >= 0)
		q->utilization = u_max;
	q->queue_bytes = qmax;
	/* A hop can claim any queue and link (4e9 bytes at 1 b/s: 3.2e19 ns): saturate. */
	qd = qp_u64_round_sat(qdelay_ns);
	q->rtt_ns = qd < UINT64_MAX - q->reg.base_rtt_ns ? q->reg.base_rtt_ns + qd : UINT64_MAX;
	memcpy(q->prev_hops, hops, nhops * sizeof(*hops));
	q->prev_nhops = nhops;
}

/* The slowest egress link the QP's data crossed, as its INT reports say, and the slowest of
 * any QP's (agent_path_link_bps). */
static void path_link(struct agent *a, struct agent_qp *q, const struct qp_int_hop *hops,
		      unsigned nhops)
{
	for (unsigned i = 0; i < nhops; i++) {
		qp_rate_bps b = hops[i].link_bps;

		if (!b)
			continue;
		if (!q->path_link_bps || b < q->path_link_bps)
			q->path_link_bps = b;
		if (!a->path_link_bps || b < a->path_link_bps)
			a->path_link_bps = b;
	}
}

qp_rate_bps agent_path_link_bps(const struct agent *a, uint32_t peer_ip)
{
	qp_rate_bps m = 0;

	if (!peer_ip)
		return a->path_link_bps;
	for (uint32_t i = 0; i < a->p.max_qps; i++) {
		const struct agent_qp *q = &a->qps[i];

		if (q->used && !(q->reg.flags & AGENT_QP_IPV6) && q->reg.peer_ip == peer_ip &&
		    q->path_link_bps && (!m || q->path_link_bps < m))
			m = q->path_link_bps;
	}
	return m;
}

/* 24-bit PSN -> 64 bits: the value nearest to the highest seen (within 2^23). */
uint64_t agent_psn_extend(bool *valid, uint64_t *max, uint32_t psn)
{
	int64_t d;

	if (!*valid) {
		*valid = true;
		*max = (1ULL << 24) + psn; /* room below for reordering */
		return *max;
	}
	d = (int64_t)((psn - (uint32_t)*max) & 0xffffffu);
	if (d >= 1 << 23)
		d -= 1 << 24;
	if (d > 0)
		*max += (uint64_t)d;
	return *max + (uint64_t)(d > 0 ? 0 : d);
}

/* ---- feedback -> cc events ---- */

int fb_to_cc_event(const struct fb_msg *m, struct cc_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	switch (m->type) {
	case FB_T_INT:
	case FB_T_ECHO:
		ev->type = CC_EV_INT;
		ev->u.int_report.seq = m->u.int_report.psn;
		ev->u.int_report.snd_nxt = m->u.int_report.psn;
		ev->u.int_report.hops = m->u.int_report.hops;
		ev->u.int_report.nhops = m->u.int_report.nhops;
		return 0;
	case FB_T_NOTICE:
		ev->type = CC_EV_NOTICE;
		ev->u.notice = (struct cc_notice){
			.switch_id = m->u.notice.switch_id,
			.queue_bytes = m->u.notice.queue_bytes,
			.link_bps = m->u.notice.link_bps,
			.flows = m->u.notice.flows,
			.reflected_ts_ns = m->u.notice.reflected_ts_ns,
		};
		return 0;
	case FB_T_LEVEL:
		if (m->u.level.level > CC_LEVEL_SEVERE)
			return -ENOENT;
		ev->type = CC_EV_LEVEL;
		ev->u.level = m->u.level.level;
		return 0;
	default:
		return -ENOENT;
	}
}

/* ---- handlers ---- */

/* How many packets past the report's PSN @psn the sender's next PSN @nxt is (24-bit
 * signed distance). */
static int64_t psn_ahead(uint32_t nxt, uint32_t psn)
{
	uint32_t d = (nxt - psn) & 0xffffffu;

	return d & 0x800000u ? (int64_t)d - 0x1000000 : (int64_t)d;
}

/* HPCC's snd_nxt in the report's byte space, from the best figure there is:
 *   1. the sender's real next PSN when its owner tells it (agent_params.snd_psn: the
 *      in-process host's RC QP): at least one packet past the report (it was sent);
 *   2. the next PSN the QP's program last reported it posted (TXSTATE, registered ibv
 *      QPs), when it is past the report's PSN; one that is not (the report was sent
 *      after it: stale) is counted and the estimate used;
 *   3. the estimate: the highest PSN seen plus a window. */
static uint64_t snd_nxt(struct agent *a, const struct agent_qp *q, uint32_t psn,
			uint64_t psn64, uint64_t window)
{
	uint32_t nxt;
	int64_t ahead;

	if (a->p.snd_psn && a->p.snd_psn(a->p.snd_psn_arg, q->reg.qpn, &nxt)) {
		ahead = psn_ahead(nxt, psn);
		return (psn64 + (uint64_t)(ahead < 1 ? 1 : ahead)) * q->reg.mtu_bytes;
	}
	if (q->tx_psn_valid) {
		ahead = psn_ahead(q->tx_psn, psn);
		if (ahead >= 1)
			return (psn64 + (uint64_t)ahead) * q->reg.mtu_bytes;
		a->counters[AGENT_C_TXPSN_STALE]++;
	}
	return (q->psn64_max + 1) * q->reg.mtu_bytes + window;
}

/* INT about the data QP @idx controls (its sender's, or a reader's about its responses). */
static unsigned int_to_cc(struct agent *a, const struct fb_msg *m, uint32_t idx, qp_time_ns now)
{
	const struct fb_int *r = &m->u.int_report;
	struct agent_qp *q = &a->qps[idx];
	struct cc_event ev;
	uint64_t psn64, window;

	psn64 = agent_psn_extend(&q->psn_valid, &q->psn64_max, r->psn);
	window = q->cc->cap_bytes != CC_CAP_NONE ? q->cc->cap_bytes
						 : qp_bytes_in(q->cc->rate_bps, q->reg.base_rtt_ns);
	fb_to_cc_event(m, &ev);
	ev.u.int_report.seq = psn64 * q->reg.mtu_bytes;
	ev.u.int_report.snd_nxt = snd_nxt(a, q, r->psn, psn64, window);
	monitor_int(q, r->hops, r->nhops);
	path_link(a, q, r->hops, r->nhops);
	return feed_cc(a, idx, &ev, now);
}

static unsigned int_as_receiver(struct agent *a, const struct fb_msg *m, qp_time_ns now)
{
	const struct fb_int *r = &m->u.int_report;
	uint32_t idx = receiver_qp(a, m, &r->flow);
	struct fb_msg echo;
	struct agent_qp *q;

	if (idx == AGENT_NO_IDX)
		return 0;
	q = &a->qps[idx];
	q->peer_sport = r->flow.sport;
	q->feedback++;
	monitor_int(q, r->hops, r->nhops);
	agent_link_arrival(a, idx, r->psn, now);
	if (m->flags & FB_F_IPV6)   /* echoes go over IPv4 (an IPv6 receiver registers not) */
		return AGENT_RX_MATCHED;
	echo = *m;
	echo.type = FB_T_ECHO;
	echo.flags = 0;
	echo.auth_len = 0;
	if (!agent_send(a, &echo, r->flow.src_ip, a->p.peer_port, now))
		return AGENT_RX_MATCHED;
	a->counters[AGENT_C_ECHOES]++;
	return AGENT_RX_MATCHED | AGENT_RX_TX;
}

static unsigned on_int(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
		       uint16_t src_port, qp_time_ns now)
{
	const struct fb_flow *f = &m->u.int_report.flow;
	uint32_t idx;

	(void)src_ip;
	(void)src_port;
	if (m->type == FB_T_INT && (m->flags & FB_F_TO_RECEIVER)) {
		idx = agent_map_find_qpn(a, f->dest_qp);
		if (idx == AGENT_NO_IDX || !(a->qps[idx].reg.flags & AGENT_QP_READER))
			return int_as_receiver(a, m, now);
		if ((idx = receiver_qp(a, m, f)) == AGENT_NO_IDX)
			return 0;
		/* a reader's data: its own controller, and its credit pacer's arrivals */
		agent_link_arrival(a, idx, m->u.int_report.psn, now);
		return int_to_cc(a, m, idx, now);
	}
	idx = sender_qp(a, m, f);
	return idx == AGENT_NO_IDX ? 0 : int_to_cc(a, m, idx, now);
}

static unsigned on_notice(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			  uint16_t src_port, qp_time_ns now)
{
	uint32_t idx = controlled_qp(a, m, &m->u.notice.flow);
	struct cc_event ev;

	(void)src_ip;
	(void)src_port;
	if (idx == AGENT_NO_IDX)
		return 0;
	a->qps[idx].queue_bytes = m->u.notice.queue_bytes;
	fb_to_cc_event(m, &ev);
	return feed_cc(a, idx, &ev, now);
}

static unsigned on_level(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			 uint16_t src_port, qp_time_ns now)
{
	const struct fb_level *l = &m->u.level;
	struct cc_event ev;
	uint32_t idx;

	if (l->level == FB_LEVEL_ACK) {
		agent_note(a, AGENT_C_FB_IGNORED, "level acknowledgement received: agents send "
			   "those, switches take them");
		return 0;
	}
	idx = controlled_qp(a, m, &l->flow);
	if (idx == AGENT_NO_IDX)
		return 0;
	a->qps[idx].level_src = (struct agent_level_src){
		.ip = src_ip, .udp_port = src_port, .switch_id = l->switch_id, .port = l->port,
		.seq = l->seq, .psn = l->psn, .known = true,
	};
	a->qps[idx].queue_bytes = l->queue_bytes;
	fb_to_cc_event(m, &ev);
	return feed_cc(a, idx, &ev, now);
}

static unsigned on_credit(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			  uint16_t src_port, qp_time_ns now)
{
	uint32_t idx = sender_qp(a, m, &m->u.credit.flow);

	(void)src_ip;
	(void)src_port;
	if (idx == AGENT_NO_IDX)
		return 0;
	a->qps[idx].feedback++;
	return agent_credit_rx(a, idx, &m->u.credit, now);
}

/* A peer's INT wish on its way through the switches reached its data receiver: for the
 * switches, not for this agent. */
static unsigned on_want(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			uint16_t src_port, qp_time_ns now)
{
	(void)m, (void)src_ip, (void)src_port, (void)now;
	a->counters[AGENT_C_FB_WANT_SEEN]++;
	return 0;
}

typedef unsigned (*fb_handler)(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			       uint16_t src_port, qp_time_ns now);

static const fb_handler handlers[FB_T_COUNT] = {
	[FB_T_INT] = on_int,
	[FB_T_ECHO] = on_int,
	[FB_T_NOTICE] = on_notice,
	[FB_T_LEVEL] = on_level,
	[FB_T_CREDIT] = on_credit,
	[FB_T_WANT] = on_want,
};

unsigned agent_feed_msg(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			uint16_t src_port, qp_time_ns now)
{
	if (m->type >= FB_T_COUNT || !handlers[m->type]) {
		agent_note(a, AGENT_C_FB_IGNORED, "feedback type %u: no handler", m->type);
		return 0;
	}
	return handlers[m->type](a, m, src_ip, src_port, now);
}

/* ---- datagrams ---- */

static bool allowed(const struct agent *a, uint32_t ip)
{
	for (unsigned i = 0; i < a->p.nallow; i++)
		if (agent_net_match(&a->p.allow[i], ip))
			return true;
	return false;
}

/* What a failing check's errno means: the counter it goes to and the words for the log. */
struct rc_outcome {
	int rc;
	enum agent_counter counter;
	const char *what;
};

#define OUTCOME_OF(table, rc) outcome_of(table, sizeof(table) / sizeof(table[0]), rc)

static const struct rc_outcome *outcome_of(const struct rc_outcome *t, size_t n, int rc)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].rc == rc)
			return &t[i];
	return NULL;
}

static const struct rc_outcome decode_errors[] = {
	{ -EPROTO, AGENT_C_FB_MAL_PROTO, "wrong magic or version" },
	{ -EMSGSIZE, AGENT_C_FB_MAL_TRUNC, "truncated" },
	{ -EINVAL, AGENT_C_FB_MAL_FIELD, "a field out of range" },
	{ -ENOMSG, AGENT_C_FB_MAL_TYPE, "unknown message type" },
};

static void note_decode_error(struct agent *a, int rc, size_t len, const uint8_t *buf,
			      const char *src)
{
	const struct rc_outcome *o = OUTCOME_OF(decode_errors, rc);

	if (o)
		agent_note(a, o->counter, "feedback from %s: %s (%zu bytes, type %d)", src,
			   o->what, len, len > 3 ? buf[3] : -1);
	else
		agent_note(a, AGENT_C_FB_MAL_FIELD, "feedback from %s: undecodable (%d)", src, rc);
}

/* Why a signed message is refused: fb_auth_verify's and fb_replay_check's results. */
static const struct rc_outcome auth_errors[] = {
	{ -ENOKEY, AGENT_C_FB_REJ_NOTAG, "not signed (--key is set)" },
	{ -EACCES, AGENT_C_FB_REJ_TAG, "authentication tag does not match the key" },
	{ -EBADMSG, AGENT_C_FB_REJ_TAG, "malformed signed header or tag" },
	{ -EALREADY, AGENT_C_FB_REJ_REPLAY, "a replay: accepted before" },
	{ -ESTALE, AGENT_C_FB_REJ_REPLAY, "a replay or too old: signed before this agent "
					  "started, or below the sender's window" },
	{ -ERANGE, AGENT_C_FB_REJ_FUTURE, "its sequence is ahead of this agent's clock by more "
					  "than 10 s (clocks not in sync?)" },
};

/* With a key: the tag, then the sender's replay window. 0 when the message may be read. */
static int check_auth(struct agent *a, const uint8_t *buf, size_t len, uint32_t src_ip,
		      uint16_t src_port, qp_time_ns now)
{
	uint64_t seq = 0, evicted = a->replay.evictions;
	char src[QP_HOSTPORT_STRLEN];
	const struct rc_outcome *o;
	uint32_t sender = 0;
	int rc = fb_auth_verify(buf, len, &a->signer.key, &sender, &seq);

	if (!rc)
		rc = fb_replay_check(&a->replay, sender, seq, now + a->p.clock_offset_ns);
	if (a->replay.evictions != evicted)
		agent_note(a, AGENT_C_FB_SENDERS_EVICTED, "sender 0x%08x: replay window table "
			   "full (%u senders): the least recently heard sender of its set was "
			   "forgotten", sender, a->p.max_senders);
	if (rc && (o = OUTCOME_OF(auth_errors, rc))) {
		char who[48] = "";

		if (o->counter == AGENT_C_FB_REJ_REPLAY || o->counter == AGENT_C_FB_REJ_FUTURE)
			snprintf(who, sizeof(who), " (sender 0x%08x, seq %llu)", sender,
				 (unsigned long long)seq);
		agent_note(a, o->counter, "feedback from %s%s dropped: %s",
			   qp_hostport_fmt(src_ip, src_port, src, sizeof(src)), who, o->what);
	}
	return rc;
}

/* One message at the start of @buf (@len bytes left in the datagram): checked, decoded and
 * fed. Returns its AGENT_RX_* bits; *used is its length, 0 when the rest of the datagram
 * cannot be trusted (then nothing after it is read). */
static unsigned feed_one(struct agent *a, const uint8_t *buf, size_t len, uint32_t src_ip,
			 uint16_t src_port, qp_time_ns now, size_t *used)
{
	char src[QP_HOSTPORT_STRLEN];
	struct fb_msg m;
	int rc;

	*used = 0;
	if (a->p.have_key && check_auth(a, buf, len, src_ip, src_port, now))
		return 0;
	rc = fb_decode(&m, buf, len);
	if (rc) {
		qp_hostport_fmt(src_ip, src_port, src, sizeof(src));
		note_decode_error(a, rc, len, buf, src);
		return 0;
	}
	*used = m.length;
	a->counters[AGENT_C_FB_ACCEPTED]++;
	return AGENT_RX_ACCEPTED | agent_feed_msg(a, &m, src_ip, src_port, now);
}

/* A datagram holds one or more messages back to back (a switch packs the INT reports of
 * one pass per host); each is checked on its own. A bad one ends the datagram: its length
 * field cannot be trusted to find the next. */
unsigned agent_feed_datagram(struct agent *a, const uint8_t *buf, size_t len,
			     uint32_t src_ip, uint16_t src_port, qp_time_ns now)
{
	char ips[QP_IPV4_STRLEN];
	unsigned res = 0;
	size_t off = 0, used;

	a->counters[AGENT_C_FB_DATAGRAMS]++;
	/* A peer agent's INT wish reaches the data receiver by design (the switches on the
	 * way take it): seen, never acted on, so not a rejection when the allow-list (which
	 * names the switches) leaves its sender out. */
	if (len >= FB_HDR_LEN && qp_get16(buf) == FB_MAGIC && buf[3] == FB_T_WANT &&
	    !allowed(a, src_ip)) {
		a->counters[AGENT_C_FB_WANT_SEEN]++;
		return 0;
	}
	if (!allowed(a, src_ip)) {
		agent_note(a, AGENT_C_FB_REJ_SOURCE, "feedback from %s:%u dropped: source not on "
			   "the allow-list (--allow)", qp_ipv4_fmt(src_ip, ips, sizeof(ips)),
			   src_port);
		return 0;
	}
	do {
		res |= feed_one(a, buf + off, len - off, src_ip, src_port, now, &used);
		off += used;
	} while (used && off < len);
	return res;
}
