/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Telemetry message codec (see qpace/feedback.h for the layout). */
#include <errno.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/feedback.h"

/* ---- flow key and hop: the shared pieces ---- */
static void get_flow(struct fb_flow *f, const uint8_t *p)
{
	f->src_ip = qp_get32(p);
	f->dst_ip = qp_get32(p + 4);
	f->sport = qp_get16(p + 8);
	f->dest_qp = qp_get32(p + 12) & 0xffffff;
}

static void put_flow(uint8_t *p, const struct fb_flow *f)
{
	qp_put32(p, f->src_ip);
	qp_put32(p + 4, f->dst_ip);
	qp_put16(p + 8, f->sport);
	qp_put16(p + 10, 0);
	qp_put32(p + 12, f->dest_qp & 0xffffff);
}

static void get_hop(struct qp_int_hop *h, const uint8_t *p)
{
	h->switch_id = qp_get32(p);
	h->port = qp_get16(p + 4);
	h->ts_ns = qp_get64(p + 8);
	h->tx_bytes = qp_get64(p + 16);
	h->qlen_bytes = qp_get32(p + 24);
	h->link_bps = qp_get64(p + 32);
}

static void put_hop(uint8_t *p, const struct qp_int_hop *h)
{
	qp_put32(p, h->switch_id);
	qp_put16(p + 4, h->port);
	qp_put16(p + 6, 0);
	qp_put64(p + 8, h->ts_ns);
	qp_put64(p + 16, h->tx_bytes);
	qp_put32(p + 24, h->qlen_bytes);
	qp_put32(p + 28, 0);
	qp_put64(p + 32, h->link_bps);
}

/* ---- bodies: decode returns 0/-errno with the body length checked >= the fixed part;
 * encode returns the body length, with cap checked by the caller against body_len ---- */
static int int_decode(struct fb_msg *m, const uint8_t *p, size_t len)
{
	struct fb_int *r = &m->u.int_report;
	unsigned n = p[20];

	if (n == 0 || n > QP_INT_MAX_HOPS)
		return -EINVAL;
	if (len < FB_INT_FIXED + (size_t)n * FB_HOP_LEN)
		return -EMSGSIZE;
	get_flow(&r->flow, p);
	r->psn = qp_get32(p + 16) & 0xffffff;
	r->nhops = (uint8_t)n;
	for (unsigned i = 0; i < n; i++)
		get_hop(&r->hops[i], p + FB_INT_FIXED + i * FB_HOP_LEN);
	return 0;
}

static size_t int_len(const struct fb_msg *m)
{
	return FB_INT_FIXED + (size_t)m->u.int_report.nhops * FB_HOP_LEN;
}

/* The INT body from its parts: shared by fb_encode and fb_encode_int. */
static void int_body(uint8_t *p, const struct fb_flow *flow, uint32_t psn,
		     const struct qp_int_hop *hops, unsigned nhops)
{
	memset(p, 0, FB_INT_FIXED);
	put_flow(p, flow);
	qp_put32(p + 16, psn & 0xffffff);
	p[20] = (uint8_t)nhops;
	for (unsigned i = 0; i < nhops; i++)
		put_hop(p + FB_INT_FIXED + i * FB_HOP_LEN, &hops[i]);
}

static int int_encode(uint8_t *p, const struct fb_msg *m)
{
	const struct fb_int *r = &m->u.int_report;

	if (r->nhops == 0 || r->nhops > QP_INT_MAX_HOPS)
		return -EINVAL;
	int_body(p, &r->flow, r->psn, r->hops, r->nhops);
	return 0;
}

static int notice_decode(struct fb_msg *m, const uint8_t *p, size_t len)
{
	struct fb_notice *n = &m->u.notice;

	(void)len;
	get_flow(&n->flow, p);
	n->psn = qp_get32(p + 16) & 0xffffff;
	n->switch_id = qp_get32(p + 20);
	n->port = qp_get16(p + 24);
	n->flows = qp_get16(p + 26);
	n->queue_bytes = qp_get32(p + 28);
	n->link_bps = qp_get64(p + 32);
	n->reflected_ts_ns = qp_get64(p + 40);
	return 0;
}

static size_t notice_len(const struct fb_msg *m)
{
	(void)m;
	return FB_NOTICE_LEN;
}

static int notice_encode(uint8_t *p, const struct fb_msg *m)
{
	const struct fb_notice *n = &m->u.notice;

	put_flow(p, &n->flow);
	qp_put32(p + 16, n->psn & 0xffffff);
	qp_put32(p + 20, n->switch_id);
	qp_put16(p + 24, n->port);
	qp_put16(p + 26, n->flows);
	qp_put32(p + 28, n->queue_bytes);
	qp_put64(p + 32, n->link_bps);
	qp_put64(p + 40, n->reflected_ts_ns);
	return 0;
}

static int level_ok(uint8_t level, uint8_t acked)
{
	if (level == FB_LEVEL_ACK)
		return acked <= FB_LEVEL_MAX;
	return level <= FB_LEVEL_MAX;
}

static int level_decode(struct fb_msg *m, const uint8_t *p, size_t len)
{
	struct fb_level *l = &m->u.level;

	(void)len;
	if (!level_ok(p[22], p[23]))
		return -EINVAL;
	get_flow(&l->flow, p);
	l->switch_id = qp_get32(p + 16);
	l->port = qp_get16(p + 20);
	l->level = p[22];
	l->acked = p[22] == FB_LEVEL_ACK ? p[23] : 0;   /* reserved otherwise */
	l->queue_bytes = qp_get32(p + 24);
	l->seq = qp_get32(p + 28);
	l->psn = qp_get32(p + 32) & 0xffffff;
	return 0;
}

static size_t level_len(const struct fb_msg *m)
{
	(void)m;
	return FB_LEVEL_LEN;
}

static int level_encode(uint8_t *p, const struct fb_msg *m)
{
	const struct fb_level *l = &m->u.level;

	if (!level_ok(l->level, l->acked))
		return -EINVAL;
	put_flow(p, &l->flow);
	qp_put32(p + 16, l->switch_id);
	qp_put16(p + 20, l->port);
	p[22] = l->level;
	p[23] = l->level == FB_LEVEL_ACK ? l->acked : 0;
	qp_put32(p + 24, l->queue_bytes);
	qp_put32(p + 28, l->seq);
	qp_put32(p + 32, l->psn & 0xffffff);
	return 0;
}

static int credit_decode(struct fb_msg *m, const uint8_t *p, size_t len)
{
	struct fb_credit *c = &m->u.credit;

	(void)len;
	get_flow(&c->flow, p);
	c->seq = qp_get32(p + 16);
	c->credit_bytes = qp_get32(p + 20);
	c->interval_ns = qp_get64(p + 24);
	return 0;
}

static size_t credit_len(const struct fb_msg *m)
{
	(void)m;
	return FB_CREDIT_LEN;
}

static int credit_encode(uint8_t *p, const struct fb_msg *m)
{
	const struct fb_credit *c = &m->u.credit;

	put_flow(p, &c->flow);
	qp_put32(p + 16, c->seq);
	qp_put32(p + 20, c->credit_bytes);
	qp_put64(p + 24, c->interval_ns);
	return 0;
}

static int want_decode(struct fb_msg *m, const uint8_t *p, size_t len)
{
	struct fb_want *w = &m->u.want;

	(void)len;
	get_flow(&w->flow, p);
	w->int_every = qp_get32(p + 16);
	w->flags = qp_get32(p + 20);
	w->int_interval_ns = qp_get64(p + 24);
	return 0;
}

static size_t want_len(const struct fb_msg *m)
{
	(void)m;
	return FB_WANT_LEN;
}

static int want_encode(uint8_t *p, const struct fb_msg *m)
{
	const struct fb_want *w = &m->u.want;

	put_flow(p, &w->flow);
	qp_put32(p + 16, w->int_every);
	qp_put32(p + 20, w->flags);
	qp_put64(p + 24, w->int_interval_ns);
	return 0;
}

struct fb_type_ops {
	const char *name;
	size_t fixed;   /* smallest body */
	int (*decode)(struct fb_msg *m, const uint8_t *body, size_t len);
	size_t (*body_len)(const struct fb_msg *m);
	int (*encode)(uint8_t *body, const struct fb_msg *m);
};

static const struct fb_type_ops type_ops[FB_T_COUNT] = {
	[FB_T_INT] = { "int", FB_INT_FIXED, int_decode, int_len, int_encode },
	[FB_T_NOTICE] = { "notice", FB_NOTICE_LEN, notice_decode, notice_len, notice_encode },
	[FB_T_LEVEL] = { "level", FB_LEVEL_LEN, level_decode, level_len, level_encode },
	[FB_T_CREDIT] = { "credit", FB_CREDIT_LEN, credit_decode, credit_len, credit_encode },
	[FB_T_ECHO] = { "echo", FB_INT_FIXED, int_decode, int_len, int_encode },
	[FB_T_WANT] = { "want", FB_WANT_LEN, want_decode, want_len, want_encode },
};

static const struct fb_type_ops *ops_of(unsigned type)
{
	return type < FB_T_COUNT && type_ops[type].name ? &type_ops[type] : NULL;
}

/* Every body starts with its flow: the union's members share that first field. */
static struct fb_flow *flow_of(struct fb_msg *m)
{
	return &m->u.int_report.flow;
}

/* With FB_F_IPV6: the addresses at @p (the body's end); -EINVAL when the flow also
 * names IPv4 addresses. */
static int put_flow6(uint8_t *p, uint8_t flags, const struct fb_flow *f)
{
	if (!(flags & FB_F_IPV6))
		return 0;
	if (f->src_ip || f->dst_ip)
		return -EINVAL;
	memcpy(p, f->src6, 16);
	memcpy(p + 16, f->dst6, 16);
	return FB_FLOW6_LEN;
}

const char *fb_type_name(unsigned type)
{
	const struct fb_type_ops *o = ops_of(type);
	return o ? o->name : "unknown";
}

int fb_decode(struct fb_msg *out, const uint8_t *buf, size_t len)
{
	const struct fb_type_ops *o;
	struct fb_msg m;
	size_t mlen, body, hlen;
	int rc;

	if (len < FB_HDR_LEN)
		return -EMSGSIZE;
	if (qp_get16(buf) != FB_MAGIC || (buf[2] != FB_VERSION && buf[2] != FB_VERSION_SIGNED))
		return -EPROTO;
	hlen = buf[2] == FB_VERSION ? FB_HDR_LEN : FB_HDR_SIGNED_LEN;
	mlen = qp_get16(buf + 4);
	if (mlen > len || len < hlen)
		return -EMSGSIZE;
	if (buf[7] > FB_AUTH_MAX || (hlen == FB_HDR_SIGNED_LEN && !buf[7]) ||
	    mlen < hlen + buf[7])
		return -EINVAL;
	o = ops_of(buf[3]);
	if (!o)
		return -ENOMSG;
	body = mlen - hlen - buf[7];
	if (body < o->fixed)
		return -EMSGSIZE;
	memset(&m, 0, sizeof(m));
	m.type = buf[3];
	m.flags = buf[6];
	m.auth_len = buf[7];
	m.length = (uint16_t)mlen;
	if (hlen == FB_HDR_SIGNED_LEN) {
		m.sender = qp_get32(buf + FB_HDR_LEN);
		m.seq = qp_get64(buf + FB_HDR_LEN + 4);
	}
	rc = o->decode(&m, buf + hlen, body);
	if (rc < 0)
		return rc;
	if (m.flags & FB_F_IPV6) {
		struct fb_flow *fl = flow_of(&m);
		size_t at = o->body_len(&m);

		if (body < at + FB_FLOW6_LEN)
			return -EMSGSIZE;
		if (fl->src_ip || fl->dst_ip)
			return -EINVAL;
		memcpy(fl->src6, buf + hlen + at, 16);
		memcpy(fl->dst6, buf + hlen + at + 16, 16);
	}
	*out = m;
	return 0;
}

static void put_hdr(uint8_t *buf, uint8_t type, size_t len, uint8_t flags)
{
	qp_put16(buf, FB_MAGIC);
	buf[2] = FB_VERSION;
	buf[3] = type;
	qp_put16(buf + 4, (uint16_t)len);
	buf[6] = flags;
	buf[7] = 0;
}

int fb_encode(uint8_t *buf, size_t cap, const struct fb_msg *m)
{
	const struct fb_type_ops *o = ops_of(m->type);
	size_t len;
	int rc;

	if (!o || m->auth_len)
		return -EINVAL;
	if (m->type == FB_T_INT || m->type == FB_T_ECHO) {
		if (m->u.int_report.nhops == 0 || m->u.int_report.nhops > QP_INT_MAX_HOPS)
			return -EINVAL;
	}
	len = FB_HDR_LEN + o->body_len(m);
	if (cap < len + (m->flags & FB_F_IPV6 ? FB_FLOW6_LEN : 0))
		return -EMSGSIZE;
	rc = o->encode(buf + FB_HDR_LEN, m);
	if (rc < 0)
		return rc;
	rc = put_flow6(buf + len, m->flags, &m->u.int_report.flow);   /* flow_of's rule */
	if (rc < 0)
		return rc;
	len += (size_t)rc;
	put_hdr(buf, m->type, len, m->flags);
	return (int)len;
}

int fb_encode_int(uint8_t *buf, size_t cap, uint8_t type, uint8_t flags,
		  const struct fb_flow *flow, uint32_t psn, const struct qp_int_hop *hops,
		  unsigned nhops)
{
	size_t len = FB_HDR_LEN + FB_INT_FIXED + (size_t)nhops * FB_HOP_LEN;

	int rc;

	if ((type != FB_T_INT && type != FB_T_ECHO) || nhops == 0 || nhops > QP_INT_MAX_HOPS)
		return -EINVAL;
	if (cap < len + (flags & FB_F_IPV6 ? FB_FLOW6_LEN : 0))
		return -EMSGSIZE;
	rc = put_flow6(buf + len, flags, flow);
	if (rc < 0)
		return rc;
	int_body(buf + FB_HDR_LEN, flow, psn, hops, nhops);
	len += (size_t)rc;
	put_hdr(buf, type, len, flags);
	return (int)len;
}
