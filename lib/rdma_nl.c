/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rdma netlink QP resource dump: request and parser (qpace/rdma_nl.h), no I/O. */
#include "qpace/rdma_nl.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "qpace/errmsg.h"

#define NL_HDR 16u
#define NLA_HDR 4u
#define ALIGN4(x) (((x) + 3u) & ~(size_t)3u)

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);    /* netlink is host order */
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

int rdma_nl_request(uint8_t *buf, size_t cap, unsigned cmd, uint32_t seq, int64_t dev_index)
{
	size_t len = NL_HDR + (dev_index >= 0 ? NLA_HDR + 4 : 0);

	if (cap < len)
		return -EMSGSIZE;
	memset(buf, 0, len);
	put32(buf, (uint32_t)len);
	put16(buf + 4, (uint16_t)RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
	put16(buf + 6, NLM_F_REQUEST | NLM_F_DUMP);
	put32(buf + 8, seq);
	if (dev_index >= 0) {
		put16(buf + NL_HDR, NLA_HDR + 4);
		put16(buf + NL_HDR + 2, RDMA_NLDEV_ATTR_DEV_INDEX);
		put32(buf + NL_HDR + NLA_HDR, (uint32_t)dev_index);
	}
	return (int)len;
}

/* One attribute: its type (nested flag off) and payload; walking stops at the end. */
struct attr {
	uint16_t type;
	const uint8_t *p;
	size_t len;
};

/* The next attribute at *off of [buf, buf+len): 1, 0 at the end, or -EMSGSIZE. */
static int next_attr(const uint8_t *buf, size_t len, size_t *off, struct attr *a)
{
	uint16_t alen;

	if (*off >= len)
		return 0;
	if (len - *off < NLA_HDR)
		return -EMSGSIZE;
	alen = get16(buf + *off);
	if (alen < NLA_HDR || alen > len - *off)
		return -EMSGSIZE;
	a->type = get16(buf + *off + 2) & NLA_TYPE_MASK;
	a->p = buf + *off + NLA_HDR;
	a->len = alen - NLA_HDR;
	*off += ALIGN4(alen) < len - *off ? ALIGN4(alen) : len - *off;
	return 1;
}

static int attr_u32(const struct attr *a, uint32_t *v)
{
	if (a->len < 4)
		return -EBADMSG;
	*v = get32(a->p);
	return 0;
}

static int attr_u8(const struct attr *a, uint8_t *v)
{
	if (a->len < 1)
		return -EBADMSG;
	*v = a->p[0];
	return 0;
}

/* A string attribute, NUL-terminated within its length (as the kernel sends them). */
static int attr_str(const struct attr *a, char *out, size_t cap)
{
	const uint8_t *nul = memchr(a->p, 0, a->len);
	size_t n;

	if (!nul)
		return -EBADMSG;
	n = (size_t)(nul - a->p);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, a->p, n);
	out[n] = '\0';
	return 0;
}

/* The attributes of a RES_QP_ENTRY qpace reads: where each goes and what it sets in
 * .has; the others (PSNs, path migration state, ...) are skipped. */
enum { A_U32, A_U8, A_STR };
#define RDMA_NL_HAS_LQPN (1u << 31)   /* parse_entry's own: the entry had its QPN */
static const struct {
	uint16_t type;
	uint8_t kind;
	size_t off, size;
	unsigned has;
} entry_attrs[] = {
#define E(t, k, f, h) { t, k, offsetof(struct rdma_nl_qp, f), \
			sizeof(((struct rdma_nl_qp *)0)->f), h }
	E(RDMA_NLDEV_ATTR_PORT_INDEX, A_U32, port, RDMA_NL_HAS_PORT),
	E(RDMA_NLDEV_ATTR_RES_LQPN, A_U32, lqpn, RDMA_NL_HAS_LQPN),
	E(RDMA_NLDEV_ATTR_RES_RQPN, A_U32, rqpn, RDMA_NL_HAS_RQPN),
	E(RDMA_NLDEV_ATTR_RES_TYPE, A_U8, type, RDMA_NL_HAS_TYPE),
	E(RDMA_NLDEV_ATTR_RES_STATE, A_U8, state, RDMA_NL_HAS_STATE),
	E(RDMA_NLDEV_ATTR_RES_PID, A_U32, pid, RDMA_NL_HAS_PID),
	E(RDMA_NLDEV_ATTR_RES_KERN_NAME, A_STR, comm, RDMA_NL_HAS_COMM),
#undef E
};

/* One RES_QP_ENTRY nest into *q (device fields already there). */
static int parse_entry(const uint8_t *p, size_t len, struct rdma_nl_qp *q)
{
	size_t off = 0;
	struct attr a;
	int rc;

	while ((rc = next_attr(p, len, &off, &a)) > 0) {
		for (size_t i = 0; i < sizeof(entry_attrs) / sizeof(entry_attrs[0]); i++) {
			uint8_t *field = (uint8_t *)q + entry_attrs[i].off;
			uint32_t v32 = 0;

			if (entry_attrs[i].type != a.type)
				continue;
			if (entry_attrs[i].kind == A_U32) {
				rc = attr_u32(&a, &v32);
				memcpy(field, &v32, sizeof(v32));
			} else if (entry_attrs[i].kind == A_U8) {
				rc = attr_u8(&a, field);
			} else {
				rc = attr_str(&a, (char *)field, entry_attrs[i].size);
			}
			if (rc)
				return rc;
			q->has |= entry_attrs[i].has;
			break;
		}
	}
	if (rc)
		return rc;
	if (!(q->has & RDMA_NL_HAS_LQPN))
		return -EBADMSG;
	q->has &= ~RDMA_NL_HAS_LQPN;
	return 0;
}

/* The attributes of one NLDEV message: a device record (CMD_GET) or its QPs. */
static int parse_msg(const uint8_t *p, size_t len, unsigned cmd, const struct rdma_nl_sink *s,
		     char *err, size_t errlen, size_t where)
{
	struct rdma_nl_qp base;
	struct attr a, t;
	size_t off = 0, n = 0;
	const uint8_t *table = NULL;
	size_t table_len = 0;
	int rc;

	memset(&base, 0, sizeof(base));
	while ((rc = next_attr(p, len, &off, &a)) > 0) {
		if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX)
			rc = attr_u32(&a, &base.dev_index);
		else if (a.type == RDMA_NLDEV_ATTR_DEV_NAME)
			rc = attr_str(&a, base.dev, sizeof(base.dev));
		else if (a.type == RDMA_NLDEV_ATTR_RES_QP) {
			table = a.p;
			table_len = a.len;
		}
		if (rc < 0)
			return qp_errmsg(rc, err, errlen, "rdma netlink: message at byte %zu: "
					 "attribute %u (%u bytes): too short for its type, or a "
					 "string without its NUL", where, a.type,
					 (unsigned)a.len);
	}
	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "rdma netlink: message at byte %zu: an attribute "
				 "runs past the message", where);
	if (cmd == RDMA_NLDEV_CMD_GET) {
		struct rdma_nl_dev d = { .index = base.dev_index };

		memcpy(d.name, base.dev, sizeof(d.name));
		if (s->dev)
			s->dev(s->ctx, &d);
		return 1;
	}
	off = 0;
	while (table && (rc = next_attr(table, table_len, &off, &t)) > 0) {
		struct rdma_nl_qp q = base;

		if (t.type != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
			continue;
		rc = parse_entry(t.p, t.len, &q);
		if (rc)
			return qp_errmsg(rc, err, errlen, "rdma netlink: message at byte %zu: QP "
					 "entry %zu: %s", where, n + 1, rc == -EMSGSIZE ?
					 "an attribute runs past the entry" :
					 "no local QPN, or an attribute too short for its type");
		if (s->qp)
			s->qp(s->ctx, &q);
		n++;
	}
	if (table && rc < 0)
		return qp_errmsg(rc, err, errlen, "rdma netlink: message at byte %zu: the QP table "
				 "runs past the message", where);
	return (int)n;
}

int rdma_nl_parse(const uint8_t *buf, size_t len, const struct rdma_nl_sink *s, bool *done,
		  char *err, size_t errlen)
{
	size_t off = 0;
	int total = 0;

	while (off < len) {
		uint32_t mlen;
		uint16_t type;
		int rc;

		if (len - off < NL_HDR)
			return qp_errmsg(-EMSGSIZE, err, errlen, "rdma netlink: %zu bytes at byte "
					 "%zu: shorter than a netlink header (16)", len - off, off);
		mlen = get32(buf + off);
		type = get16(buf + off + 4);
		if (mlen < NL_HDR || mlen > len - off)
			return qp_errmsg(-EMSGSIZE, err, errlen, "rdma netlink: message at byte %zu: "
					 "length %u, accepted 16..%zu", off, mlen, len - off);
		if (type == NLMSG_DONE) {
			*done = true;
			return total;
		}
		if (type == NLMSG_ERROR) {
			int32_t e;

			if (mlen < NL_HDR + 4)
				return qp_errmsg(-EMSGSIZE, err, errlen, "rdma netlink: error message "
						 "at byte %zu without its code", off);
			memcpy(&e, buf + off + NL_HDR, 4);
			if (e < -4095 || e > 0)   /* errno values are 1..4095 */
				return qp_errmsg(-EBADMSG, err, errlen, "rdma netlink: error message "
						 "at byte %zu: code %d, accepted -4095..0", off, (int)e);
			if (e < 0)
				return qp_errmsg(e, err, errlen, "rdma netlink: the kernel refused the "
						 "dump: %s", strerror(-e));
		} else if (RDMA_NL_GET_CLIENT(type) == RDMA_NL_NLDEV &&
			   (RDMA_NL_GET_OP(type) == RDMA_NLDEV_CMD_GET ||
			    RDMA_NL_GET_OP(type) == RDMA_NLDEV_CMD_RES_QP_GET)) {
			rc = parse_msg(buf + off + NL_HDR, mlen - NL_HDR, RDMA_NL_GET_OP(type), s,
				       err, errlen, off);
			if (rc < 0)
				return rc;
			total += rc;
		}
		off += ALIGN4(mlen) < len - off ? ALIGN4(mlen) : len - off;
	}
	return total;
}

static const char *const qp_types[] = {
	[0] = "SMI", [1] = "GSI", [2] = "RC", [3] = "UC", [4] = "UD", [5] = "RAW_IPV6",
	[6] = "RAW_ETHERTYPE", [8] = "RAW_PACKET", [9] = "XRC_INI", [10] = "XRC_TGT",
};
static const char *const qp_states[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

const char *rdma_nl_qp_type_name(uint8_t type)
{
	return type < sizeof(qp_types) / sizeof(qp_types[0]) && qp_types[type] ? qp_types[type]
										  : "?";
}

const char *rdma_nl_qp_state_name(uint8_t state)
{
	return state < sizeof(qp_states) / sizeof(qp_states[0]) ? qp_states[state] : "?";
}

const struct rdma_nl_qp *rdma_nl_find(const struct rdma_nl_qp *list, size_t n, uint32_t lqpn,
				      uint32_t rqpn)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].lqpn == lqpn)
			return &list[i];
	for (size_t i = 0; rqpn && i < n; i++)
		if ((list[i].has & RDMA_NL_HAS_RQPN) && list[i].rqpn == rqpn)
			return &list[i];
	return NULL;
}
