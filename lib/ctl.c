/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control protocol codec (layout and rules in qpace/ctl.h). One table row per type:
 * the smallest body, a decoder and an encoder; strings and QPNs are checked in one place. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/bytes.h"
#include "qpace/ctl.h"
#include "qpace/errmsg.h"
#include "qpace/ratetable.h"   /* QP_RATE_QPN_MAX */

#define NAME_LEN 16
#define QP_FIXED 153

_Static_assert(AGENT_ALGO_MAX == NAME_LEN, "algorithm names travel as 16 bytes");

/* A cursor over a body: every get checks the bytes left first. */
struct rd {
	const uint8_t *p;
	size_t left;
	const char *bad;     /* the first field that failed, for the message */
};

static bool need(struct rd *r, size_t n, const char *field)
{
	if (r->left >= n)
		return true;
	if (!r->bad)
		r->bad = field;
	r->left = 0;
	return false;
}

static uint64_t get_n(struct rd *r, size_t n, const char *field)
{
	uint64_t v = 0;

	if (!need(r, n, field))
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[i];
	r->p += n;
	r->left -= n;
	return v;
}

#define GET8(r, f) ((uint8_t)get_n((r), 1, (f)))
#define GET16(r, f) ((uint16_t)get_n((r), 2, (f)))
#define GET32(r, f) ((uint32_t)get_n((r), 4, (f)))
#define GET64(r, f) (get_n((r), 8, (f)))

static bool name_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return i < n;
}

static bool params_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

static bool text_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < ' ' || s[i] > '~')
			return false;
	return true;
}

static void get_name(struct rd *r, char out[NAME_LEN], const char *field)
{
	if (!need(r, NAME_LEN, field))
		return;
	memcpy(out, r->p, NAME_LEN);
	r->p += NAME_LEN;
	r->left -= NAME_LEN;
	if (!name_ok(out, NAME_LEN) && !r->bad)
		r->bad = field;
	/* bytes after the NUL carry nothing: one name, one representation */
	for (size_t i = strnlen(out, NAME_LEN); i < NAME_LEN; i++)
		out[i] = 0;
}

/* A u8 length then bytes, into out[cap] NUL-terminated; @ok checks the characters. */
static void get_str(struct rd *r, char *out, size_t cap, bool (*ok)(const char *, size_t),
		    const char *field)
{
	size_t n = GET8(r, field);

	if (n >= cap || !need(r, n, field)) {
		if (!r->bad)
			r->bad = field;
		return;
	}
	memcpy(out, r->p, n);
	out[n] = 0;
	r->p += n;
	r->left -= n;
	if (!ok(out, n) && !r->bad)
		r->bad = field;
}

static uint32_t get_qpn(struct rd *r, const char *field)
{
	uint32_t q = GET32(r, field);

	if (q > QP_RATE_QPN_MAX && !r->bad)
		r->bad = field;
	return q;
}

/* A writer: the caller sized the buffer from the body's maximum. */
struct wr {
	uint8_t *p;
};

static void put_n(struct wr *w, uint64_t v, size_t n)
{
	for (size_t i = n; i--;) {
		w->p[i] = (uint8_t)v;
		v >>= 8;
	}
	w->p += n;
}

static void put_name(struct wr *w, const char *s)
{
	size_t n = strnlen(s, NAME_LEN - 1);

	memset(w->p, 0, NAME_LEN);
	memcpy(w->p, s, n);
	w->p += NAME_LEN;
}

static void put_str(struct wr *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	put_n(w, n, 1);
	memcpy(w->p, s, n);
	w->p += n;
}

/* The IPv6 addresses of an AGENT_QP_IPV6 flow: a tail after the fixed fields, read when
 * the flag is set and the bytes are there (absent: all 0). */
#define ADDR6_TAIL 32

static void get_addr6(struct rd *r, struct agent_qp_reg *g)
{
	if (!(g->flags & AGENT_QP_IPV6) || r->left < ADDR6_TAIL)
		return;
	memcpy(g->local_ip6, r->p, 16);
	memcpy(g->peer_ip6, r->p + 16, 16);
	r->p += ADDR6_TAIL;
	r->left -= ADDR6_TAIL;
}

static void put_addr6(struct wr *w, const struct agent_qp_reg *g)
{
	if (!(g->flags & AGENT_QP_IPV6))
		return;
	memcpy(w->p, g->local_ip6, 16);
	memcpy(w->p + 16, g->peer_ip6, 16);
	w->p += ADDR6_TAIL;
}

/* ---- bodies ---- */

static void reg_decode(struct ctl_msg *m, struct rd *r)
{
	struct agent_qp_reg *g = &m->u.reg;

	g->qpn = get_qpn(r, "qpn");
	g->peer_qpn = get_qpn(r, "peer_qpn");
	g->local_ip = GET32(r, "local_ip");
	g->peer_ip = GET32(r, "peer_ip");
	g->sport = GET16(r, "sport");
	g->flags = GET16(r, "flags");
	g->mtu_bytes = GET32(r, "mtu");
	g->link_bps = GET64(r, "link_bps");
	g->base_rtt_ns = GET64(r, "base_rtt_ns");
	get_name(r, g->algo, "algo");
	get_str(r, g->params, sizeof(g->params), params_ok, "params");
	get_addr6(r, g);
}

static void reg_encode(struct wr *w, const struct ctl_msg *m)
{
	const struct agent_qp_reg *g = &m->u.reg;

	put_n(w, g->qpn, 4);
	put_n(w, g->peer_qpn, 4);
	put_n(w, g->local_ip, 4);
	put_n(w, g->peer_ip, 4);
	put_n(w, g->sport, 2);
	put_n(w, g->flags, 2);
	put_n(w, g->mtu_bytes, 4);
	put_n(w, g->link_bps, 8);
	put_n(w, g->base_rtt_ns, 8);
	put_name(w, g->algo);
	put_str(w, g->params, AGENT_PARAMS_MAX - 1);
	put_addr6(w, g);
}

static void qpn_decode(struct ctl_msg *m, struct rd *r)
{
	m->u.qpn = get_qpn(r, "qpn");
}

static void qpn_encode(struct wr *w, const struct ctl_msg *m)
{
	put_n(w, m->u.qpn, 4);
}

static void event_decode(struct ctl_msg *m, struct rd *r)
{
	m->u.event.qpn = get_qpn(r, "qpn");
	m->u.event.type = GET8(r, "event type");
	get_n(r, 3, "reserved");
	m->u.event.value = GET64(r, "value");
	switch (m->u.event.type) {
	case CTL_EV_CNP:
	case CTL_EV_RTT:
	case CTL_EV_ACKED:
	case CTL_EV_FLOW_START:
	case CTL_EV_FLOW_FINISH:
		break;
	default:
		if (!r->bad)
			r->bad = "event type";
	}
}

static void event_encode(struct wr *w, const struct ctl_msg *m)
{
	put_n(w, m->u.event.qpn, 4);
	put_n(w, m->u.event.type, 1);
	put_n(w, 0, 3);
	put_n(w, m->u.event.value, 8);
}

static void stats_decode(struct ctl_msg *m, struct rd *r)
{
	m->u.stats.qpn = get_qpn(r, "qpn");
	get_n(r, 4, "reserved");
	m->u.stats.tx_bytes = GET64(r, "tx_bytes");
	m->u.stats.retransmissions = GET64(r, "retransmissions");
}

static void stats_encode(struct wr *w, const struct ctl_msg *m)
{
	put_n(w, m->u.stats.qpn, 4);
	put_n(w, 0, 4);
	put_n(w, m->u.stats.tx_bytes, 8);
	put_n(w, m->u.stats.retransmissions, 8);
}

static void empty_decode(struct ctl_msg *m, struct rd *r)
{
	(void)m;
	(void)r;
}

static void empty_encode(struct wr *w, const struct ctl_msg *m)
{
	(void)w;
	(void)m;
}

static void set_decode(struct ctl_msg *m, struct rd *r)
{
	struct ctl_set *s = &m->u.set;

	s->qpn = get_qpn(r, "qpn");
	s->what = GET8(r, "what");
	get_n(r, 3, "reserved");
	s->rate_bps = GET64(r, "rate_bps");
	get_name(r, s->algo, "algo");
	get_str(r, s->params, sizeof(s->params), params_ok, "params");
	if (s->what != CTL_SET_RATE && s->what != CTL_SET_ALGO && !r->bad)
		r->bad = "what";
}

static void set_encode(struct wr *w, const struct ctl_msg *m)
{
	const struct ctl_set *s = &m->u.set;

	put_n(w, s->qpn, 4);
	put_n(w, s->what, 1);
	put_n(w, 0, 3);
	put_n(w, s->rate_bps, 8);
	put_name(w, s->algo);
	put_str(w, s->params, AGENT_PARAMS_MAX - 1);
}

static void reply_decode(struct ctl_msg *m, struct rd *r)
{
	m->u.reply.status = (int32_t)GET32(r, "status");
	m->u.reply.count = GET32(r, "count");
	get_str(r, m->u.reply.text, sizeof(m->u.reply.text), text_ok, "text");
}

static void reply_encode(struct wr *w, const struct ctl_msg *m)
{
	put_n(w, (uint32_t)m->u.reply.status, 4);
	put_n(w, m->u.reply.count, 4);
	put_str(w, m->u.reply.text, CTL_TEXT_MAX);
}

/* TXSTATE: the record's own version, then who enforces, then the posted PSN. */
static void txstate_decode(struct ctl_msg *m, struct rd *r)
{
	struct ctl_txstate *t = &m->u.txstate;
	uint8_t version;

	t->qpn = get_qpn(r, "qpn");
	version = GET8(r, "version");
	t->enforce = GET8(r, "enforce");
	get_n(r, 2, "reserved");
	t->psn = GET32(r, "psn");
	if (version != CTL_TXSTATE_VERSION && !r->bad)
		r->bad = "version";
	if (t->enforce != AGENT_ENF_GATE && t->enforce != AGENT_ENF_NIC && !r->bad)
		r->bad = "enforce";
	if (t->psn > QP_RATE_QPN_MAX && !r->bad)   /* PSNs are 24 bits, as QPNs */
		r->bad = "psn";
}

static void txstate_encode(struct wr *w, const struct ctl_msg *m)
{
	const struct ctl_txstate *t = &m->u.txstate;

	put_n(w, t->qpn, 4);
	put_n(w, CTL_TXSTATE_VERSION, 1);
	put_n(w, t->enforce, 1);
	put_n(w, 0, 2);
	put_n(w, t->psn, 4);
}

enum { VIEW_OVERRIDE = 1, VIEW_CREDIT_GATED = 2 };
enum { WIRE_SEEN = 1, WIRE_DISCOVERED = 2, WIRE_FLOORED = 4, WIRE_TAIL = 2 + 4 * 8,
       ENF_TAIL = 2, GUARD_TAIL = 2 * 8 };
/* Utilization travels in parts per million, below 2^53 so a double holds it exactly. */
#define UTIL_PPM_MAX 1000000000000000ULL

static void qp_decode(struct ctl_msg *m, struct rd *r)
{
	struct agent_qp_view *v = &m->u.qp;
	uint16_t vflags;
	uint64_t ppm;

	v->reg.qpn = get_qpn(r, "qpn");
	v->reg.peer_qpn = get_qpn(r, "peer_qpn");
	v->reg.local_ip = GET32(r, "local_ip");
	v->reg.peer_ip = GET32(r, "peer_ip");
	v->reg.sport = GET16(r, "sport");
	v->reg.flags = GET16(r, "flags");
	vflags = GET16(r, "view flags");
	v->override = vflags & VIEW_OVERRIDE;
	v->credit_gated = vflags & VIEW_CREDIT_GATED;
	get_n(r, 2, "reserved");
	v->pid = GET32(r, "pid");
	v->slot = (int32_t)GET32(r, "slot");
	get_name(r, v->reg.algo, "algo");
	v->reg.mtu_bytes = GET32(r, "mtu");
	v->queue_bytes = GET32(r, "queue");
	v->reg.link_bps = GET64(r, "link_bps");
	v->reg.base_rtt_ns = GET64(r, "base_rtt_ns");
	v->rate_bps = GET64(r, "rate_bps");
	v->target_bps = GET64(r, "target_bps");
	v->credits_rx_bytes = GET64(r, "credits_rx");
	v->credits_tx_bytes = GET64(r, "credits_tx");
	ppm = GET64(r, "utilization");
	if (ppm > UTIL_PPM_MAX && !r->bad)
		r->bad = "utilization";
	v->utilization = (double)ppm / 1e6;
	v->rtt_ns = GET64(r, "rtt_ns");
	v->tx_bytes = GET64(r, "tx_bytes");
	v->retransmissions = GET64(r, "retransmissions");
	v->feedback = GET64(r, "feedback");
	v->psn64 = GET64(r, "psn64");
	get_str(r, v->reg.params, sizeof(v->reg.params), params_ok, "params");
	/* Appended in a minor revision: a body without it (an older agent) reads as 0. */
	v->cap_bytes = r->left >= 8 ? GET64(r, "cap_bytes") : 0;
	/* And after it, the wire's figures (qpaced --enforce). */
	if (r->left >= WIRE_TAIL) {
		uint16_t wf = GET16(r, "wire flags");

		v->wire.seen = wf & WIRE_SEEN;
		v->wire.discovered = wf & WIRE_DISCOVERED;
		v->wire.floored = wf & WIRE_FLOORED;
		v->wire.bytes = GET64(r, "wire bytes");
		v->wire.pkts = GET64(r, "wire pkts");
		v->wire.measured_bps = GET64(r, "wire measured_bps");
		v->wire.set_bps = GET64(r, "wire set_bps");
	}
	/* And who enforces its rate (absent: the gate, as before it was sent). */
	if (r->left >= ENF_TAIL) {
		v->enforce = GET8(r, "enforce");
		get_n(r, 1, "reserved");
		if (v->enforce >= AGENT_ENF_COUNT && !r->bad)
			r->bad = "enforce";
	}
	get_addr6(r, &v->reg);   /* and an IPv6 flow's addresses */
	/* And what guards its ACK timer (absent: none known). */
	if (r->left >= GUARD_TAIL) {
		v->wire.resent = GET64(r, "wire resent");
		v->wire.ackreqs = GET64(r, "wire ackreqs");
	}
}

static void qp_encode(struct wr *w, const struct ctl_msg *m)
{
	const struct agent_qp_view *v = &m->u.qp;
	double u = v->utilization * 1e6 + 0.5;  /* parts per million, rounded */

	put_n(w, v->reg.qpn, 4);
	put_n(w, v->reg.peer_qpn, 4);
	put_n(w, v->reg.local_ip, 4);
	put_n(w, v->reg.peer_ip, 4);
	put_n(w, v->reg.sport, 2);
	put_n(w, v->reg.flags, 2);
	put_n(w, (v->override ? VIEW_OVERRIDE : 0) | (v->credit_gated ? VIEW_CREDIT_GATED : 0), 2);
	put_n(w, 0, 2);
	put_n(w, v->pid, 4);
	put_n(w, (uint32_t)v->slot, 4);
	put_name(w, v->reg.algo);
	put_n(w, v->reg.mtu_bytes, 4);
	put_n(w, v->queue_bytes, 4);
	put_n(w, v->reg.link_bps, 8);
	put_n(w, v->reg.base_rtt_ns, 8);
	put_n(w, v->rate_bps, 8);
	put_n(w, v->target_bps, 8);
	put_n(w, v->credits_rx_bytes, 8);
	put_n(w, v->credits_tx_bytes, 8);
	put_n(w, !(u > 0) ? 0 : u >= (double)UTIL_PPM_MAX ? UTIL_PPM_MAX : (uint64_t)u, 8);
	put_n(w, v->rtt_ns, 8);
	put_n(w, v->tx_bytes, 8);
	put_n(w, v->retransmissions, 8);
	put_n(w, v->feedback, 8);
	put_n(w, v->psn64, 8);
	put_str(w, v->reg.params, AGENT_PARAMS_MAX - 1);
	put_n(w, v->cap_bytes, 8);
	put_n(w, (v->wire.seen ? WIRE_SEEN : 0) | (v->wire.discovered ? WIRE_DISCOVERED : 0) |
		 (v->wire.floored ? WIRE_FLOORED : 0), 2);
	put_n(w, v->wire.bytes, 8);
	put_n(w, v->wire.pkts, 8);
	put_n(w, v->wire.measured_bps, 8);
	put_n(w, v->wire.set_bps, 8);
	put_n(w, v->enforce, 1);
	put_n(w, 0, 1);
	put_addr6(w, &v->reg);
	put_n(w, v->wire.resent, 8);
	put_n(w, v->wire.ackreqs, 8);
}

static void agent_decode(struct ctl_msg *m, struct rd *r)
{
	struct ctl_agent *g = &m->u.agent;
	unsigned n;

	g->pid = GET32(r, "pid");
	g->qps = GET32(r, "qps");
	g->max_qps = GET32(r, "max_qps");
	n = GET16(r, "counters");
	get_n(r, 2, "reserved");
	g->uptime_ns = GET64(r, "uptime_ns");
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = GET64(r, "counters");

		if (i < AGENT_C_COUNT)
			g->counters[i] = v;
	}
	if (r->left >= 32) {
		g->delay_samples = GET64(r, "delay");
		g->delay_p50_ns = GET64(r, "delay");
		g->delay_p99_ns = GET64(r, "delay");
		g->delay_max_ns = GET64(r, "delay");
	}
}

static void agent_encode(struct wr *w, const struct ctl_msg *m)
{
	const struct ctl_agent *g = &m->u.agent;

	put_n(w, g->pid, 4);
	put_n(w, g->qps, 4);
	put_n(w, g->max_qps, 4);
	put_n(w, AGENT_C_COUNT, 2);
	put_n(w, 0, 2);
	put_n(w, g->uptime_ns, 8);
	for (unsigned i = 0; i < AGENT_C_COUNT; i++)
		put_n(w, g->counters[i], 8);
	put_n(w, g->delay_samples, 8);
	put_n(w, g->delay_p50_ns, 8);
	put_n(w, g->delay_p99_ns, 8);
	put_n(w, g->delay_max_ns, 8);
}

struct ctl_type_ops {
	const char *name;
	size_t fixed;    /* smallest body */
	void (*decode)(struct ctl_msg *m, struct rd *r);
	void (*encode)(struct wr *w, const struct ctl_msg *m);
};

static const struct ctl_type_ops type_ops[CTL_T_COUNT] = {
	[CTL_T_REGISTER] = { "register", 57, reg_decode, reg_encode },
	[CTL_T_UNREGISTER] = { "unregister", 4, qpn_decode, qpn_encode },
	[CTL_T_EVENT] = { "event", 16, event_decode, event_encode },
	[CTL_T_STATS] = { "stats", 24, stats_decode, stats_encode },
	[CTL_T_LIST] = { "list", 0, empty_decode, empty_encode },
	[CTL_T_SHOW] = { "show", 4, qpn_decode, qpn_encode },
	[CTL_T_SET] = { "set", 33, set_decode, set_encode },
	[CTL_T_STATUS] = { "status", 0, empty_decode, empty_encode },
	[CTL_T_REPLY] = { "reply", 9, reply_decode, reply_encode },
	[CTL_T_QP] = { "qp", QP_FIXED, qp_decode, qp_encode },
	[CTL_T_AGENT] = { "agent", 24, agent_decode, agent_encode },
	[CTL_T_TXSTATE] = { "txstate", 12, txstate_decode, txstate_encode },
};

/* The largest bodies this build writes fit one message. */
_Static_assert(CTL_HDR_LEN + QP_FIXED + AGENT_PARAMS_MAX + 8 + WIRE_TAIL + ENF_TAIL +
		       ADDR6_TAIL <= CTL_MAX_LEN,
	       "QP fits");
_Static_assert(CTL_HDR_LEN + 24 + 8 * AGENT_C_COUNT + 32 <= CTL_MAX_LEN, "AGENT fits");

const char *agent_qp_addr_fmt(const struct agent_qp_reg *r, bool peer, char *buf, size_t len)
{
	if (r->flags & AGENT_QP_IPV6)
		return qp_ipv6_fmt(peer ? r->peer_ip6 : r->local_ip6, buf, len);
	return qp_ipv4_fmt(peer ? r->peer_ip : r->local_ip, buf, len);
}

static const struct ctl_type_ops *ops_of(unsigned type)
{
	return type < CTL_T_COUNT && type_ops[type].name ? &type_ops[type] : NULL;
}

const char *ctl_type_name(unsigned type)
{
	const struct ctl_type_ops *o = ops_of(type);

	return o ? o->name : "unknown";
}

const char *ctl_enforce_name(unsigned enforce)
{
	static const char *const names[AGENT_ENF_COUNT] = {
		[AGENT_ENF_GATE] = "gate", [AGENT_ENF_NIC] = "nic", [AGENT_ENF_TC] = "tc",
		[AGENT_ENF_NONE] = "none",
	};

	return enforce < AGENT_ENF_COUNT ? names[enforce] : "unknown";
}

int ctl_decode(struct ctl_msg *out, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	const struct ctl_type_ops *o;
	struct ctl_msg m;
	struct rd r;
	size_t mlen;

	if (len < CTL_HDR_LEN)
		return qp_errmsg(-EMSGSIZE, err, errlen, "control message of %zu bytes, shorter "
				 "than its %d-byte header", len, CTL_HDR_LEN);
	if (qp_get16(buf) != CTL_MAGIC)
		return qp_errmsg(-EPROTO, err, errlen, "control message magic 0x%04x, expected "
				 "0x%04x", qp_get16(buf), CTL_MAGIC);
	if (buf[2] != CTL_VERSION)
		return qp_errmsg(-EPROTO, err, errlen, "control protocol version %u, this build "
				 "speaks %u", buf[2], CTL_VERSION);
	mlen = qp_get16(buf + 4);
	if (mlen > len || mlen < CTL_HDR_LEN)
		return qp_errmsg(-EMSGSIZE, err, errlen, "control message length %zu, %zu bytes "
				 "received", mlen, len);
	o = ops_of(buf[3]);
	if (!o)
		return qp_errmsg(-ENOMSG, err, errlen, "control message type %u unknown", buf[3]);
	if (mlen - CTL_HDR_LEN < o->fixed)
		return qp_errmsg(-EMSGSIZE, err, errlen, "%s message body of %zu bytes, needs %zu",
				 o->name, mlen - CTL_HDR_LEN, o->fixed);
	memset(&m, 0, sizeof(m));
	m.type = buf[3];
	m.id = qp_get16(buf + 6);
	r = (struct rd){ buf + CTL_HDR_LEN, mlen - CTL_HDR_LEN, NULL };
	o->decode(&m, &r);
	if (r.bad)
		return qp_errmsg(-EINVAL, err, errlen, "%s message: field %s truncated or out of "
				 "range", o->name, r.bad);
	*out = m;
	return 0;
}

int ctl_encode(uint8_t *buf, size_t cap, const struct ctl_msg *m)
{
	const struct ctl_type_ops *o = ops_of(m->type);
	uint8_t tmp[CTL_MAX_LEN];
	struct wr w = { tmp + CTL_HDR_LEN };
	struct ctl_msg check;
	size_t len;

	if (!o)
		return -EINVAL;
	o->encode(&w, m);
	len = (size_t)(w.p - tmp);
	if (len > cap)
		return -EMSGSIZE;
	qp_put16(tmp, CTL_MAGIC);
	tmp[2] = CTL_VERSION;
	tmp[3] = m->type;
	qp_put16(tmp + 4, (uint16_t)len);
	qp_put16(tmp + 6, m->id);
	/* never send what a peer would refuse */
	if (ctl_decode(&check, tmp, len, NULL, 0))
		return -EINVAL;
	memcpy(buf, tmp, len);
	return (int)len;
}
