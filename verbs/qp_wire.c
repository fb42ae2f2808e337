/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The connection message (format in qpace/qp_wire.h): the one encoder and decoder. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/qp_wire.h"

enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 2,
	OFF_LENGTH = 3,
	OFF_MTU = 4,
	OFF_RESERVED = 5,
	OFF_LID = 6,
	OFF_QPN = 8,
	OFF_PSN = 12,
	OFF_GID = 16,
	OFF_RKEY = 32,
	OFF_ADDR = 36,
	OFF_LEN = 44,
	OFF_END = 52,
};
_Static_assert(OFF_END == QP_WIRE_CONN_BYTES, "layout matches the documented size");

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return ((uint32_t)get16(p) << 16) | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

/* log2 of a power-of-two MTU in 256..4096, or -1. */
static int mtu_log2(uint32_t mtu)
{
	for (int l = 8; l <= 12; l++)
		if (mtu == (1u << l))
			return l;
	return -1;
}

int qp_wire_conn_encode(const struct qp_conn_info *in, uint8_t *buf, size_t len)
{
	int l = mtu_log2(in->mtu_bytes);

	if (in->qpn > QP_QPN_MAX || in->psn > QP_PSN_MAX || l < 0)
		return -EINVAL;
	if (len < QP_WIRE_CONN_BYTES)
		return -ENOSPC;
	put16(buf + OFF_MAGIC, QP_WIRE_CONN_MAGIC);
	buf[OFF_VERSION] = QP_WIRE_CONN_VERSION;
	buf[OFF_LENGTH] = QP_WIRE_CONN_BYTES;
	buf[OFF_MTU] = (uint8_t)l;
	buf[OFF_RESERVED] = 0;
	put16(buf + OFF_LID, in->lid);
	put32(buf + OFF_QPN, in->qpn);
	put32(buf + OFF_PSN, in->psn);
	memcpy(buf + OFF_GID, in->gid, sizeof(in->gid));
	put32(buf + OFF_RKEY, in->rkey);
	put64(buf + OFF_ADDR, in->addr);
	put64(buf + OFF_LEN, in->len);
	return QP_WIRE_CONN_BYTES;
}

int qp_wire_conn_peek(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	if (len < QP_WIRE_CONN_HDR_BYTES)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: %zu bytes, shorter than its %u-byte header",
				 len, QP_WIRE_CONN_HDR_BYTES);
	if (get16(buf + OFF_MAGIC) != QP_WIRE_CONN_MAGIC)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: magic 0x%04x, expected 0x%04x (not a qpace peer?)",
				 get16(buf + OFF_MAGIC), QP_WIRE_CONN_MAGIC);
	if (buf[OFF_VERSION] != QP_WIRE_CONN_VERSION)
		return qp_errmsg(-EPROTO, err, errlen,
				 "connection message: version %u, this build speaks version %u",
				 buf[OFF_VERSION], QP_WIRE_CONN_VERSION);
	if (buf[OFF_LENGTH] != QP_WIRE_CONN_BYTES)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: length field %u, version %u messages are %u bytes",
				 buf[OFF_LENGTH], QP_WIRE_CONN_VERSION, QP_WIRE_CONN_BYTES);
	return QP_WIRE_CONN_BYTES;
}

int qp_wire_conn_decode(struct qp_conn_info *out, const uint8_t *buf, size_t len,
			char *err, size_t errlen)
{
	struct qp_conn_info ci;
	int rc = qp_wire_conn_peek(buf, len, err, errlen);

	if (rc < 0)
		return rc;
	if (len < QP_WIRE_CONN_BYTES)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: truncated at %zu of %u bytes",
				 len, QP_WIRE_CONN_BYTES);
	if (buf[OFF_MTU] < 8 || buf[OFF_MTU] > 12)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: mtu_log2 %u, accepted 8..12 (256..4096 bytes)",
				 buf[OFF_MTU]);
	if (buf[OFF_RESERVED] != 0)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: reserved byte 0x%02x, must be 0",
				 buf[OFF_RESERVED]);
	memset(&ci, 0, sizeof(ci));
	ci.mtu_bytes = 1u << buf[OFF_MTU];
	ci.lid = get16(buf + OFF_LID);
	ci.qpn = get32(buf + OFF_QPN);
	ci.psn = get32(buf + OFF_PSN);
	if (ci.qpn > QP_QPN_MAX || ci.psn > QP_PSN_MAX)
		return qp_errmsg(-EBADMSG, err, errlen,
				 "connection message: qpn 0x%x / psn 0x%x, both must fit 24 bits",
				 ci.qpn, ci.psn);
	memcpy(ci.gid, buf + OFF_GID, sizeof(ci.gid));
	ci.rkey = get32(buf + OFF_RKEY);
	ci.addr = get64(buf + OFF_ADDR);
	ci.len = get64(buf + OFF_LEN);
	*out = ci;
	return 0;
}

const char *qp_conn_info_str(const struct qp_conn_info *ci, char *buf, size_t len)
{
	char gid[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, ci->gid, gid, sizeof(gid)))
		snprintf(gid, sizeof(gid), "?");
	snprintf(buf, len,
		 "qpn 0x%06x psn 0x%06x lid %u gid %s mtu %u rkey 0x%08x addr 0x%016llx len %llu",
		 ci->qpn, ci->psn, ci->lid, gid, ci->mtu_bytes, ci->rkey,
		 (unsigned long long)ci->addr, (unsigned long long)ci->len);
	return buf;
}
