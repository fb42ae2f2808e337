/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Connection data exchanged out of band before two RC QPs can talk: the message both sides
 * send over TCP (the way perftest does without -R) and in the librdmacm private data.
 *
 * Wire format, version 1, 52 bytes, all fields big-endian:
 *
 *   off size field
 *     0    2 magic        0x5143 ("QC")
 *     2    1 version      1
 *     3    1 length       52: the whole message, this header included
 *     4    1 mtu_log2     8..12 (path MTU 256..4096 bytes)
 *     5    1 reserved     0
 *     6    2 lid          IB LID; 0 on RoCE
 *     8    4 qpn          24 bits (top byte 0)
 *    12    4 psn          24 bits (top byte 0): the sender's initial send PSN
 *    16   16 gid          RoCEv2: the IPv4-mapped IPv6 address (::ffff:a.b.c.d)
 *    32    4 rkey         the region the peer may access (0 with len 0)
 *    36    8 addr         its virtual address
 *    44    8 len          its length in bytes
 *
 * 52 bytes fit the 56 bytes of private data an RC rdma_connect carries over IP. The decoder
 * checks the length before every read, rejects any other version, a length field other than
 * 52, a non-zero reserved byte and out-of-range QPN, PSN or MTU, and writes *out only on
 * success. Nothing else in qpace parses these bytes.
 */
#ifndef QPACE_QP_WIRE_H
#define QPACE_QP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define QP_WIRE_CONN_MAGIC 0x5143u
#define QP_WIRE_CONN_VERSION 1u
#define QP_WIRE_CONN_BYTES 52u
#define QP_WIRE_CONN_HDR_BYTES 4u   /* magic, version, length: enough to size the rest */
#define QP_QPN_MAX 0xffffffu
#define QP_PSN_MAX 0xffffffu
#define QP_MTU_MIN 256u
#define QP_MTU_MAX 4096u

struct qp_conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint16_t lid;
	uint32_t mtu_bytes;   /* 256, 512, 1024, 2048 or 4096 */
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
};

/* Encode into buf (>= QP_WIRE_CONN_BYTES). Returns the bytes written, or -EINVAL when a
 * field is out of range (QPN/PSN above 24 bits, MTU not a power of two in 256..4096) or
 * -ENOSPC when buf is too small. */
int qp_wire_conn_encode(const struct qp_conn_info *in, uint8_t *buf, size_t len);

/* Check the 4-byte header: returns the full message length to read (52), or -EBADMSG /
 * -EPROTO (wrong version) with a message in err. For stream readers. */
int qp_wire_conn_peek(const uint8_t *buf, size_t len, char *err, size_t errlen);

/* Decode a whole message. Returns 0, or -EBADMSG (truncated, bad magic or length, bad
 * field) / -EPROTO (unsupported version) with one line in err; *out is written only on
 * success. Bytes after the message are ignored. */
int qp_wire_conn_decode(struct qp_conn_info *out, const uint8_t *buf, size_t len,
			char *err, size_t errlen);

/* Format "qpn 0x000123 psn 0x00abcd gid ::ffff:10.0.0.1 mtu 1024 rkey 0x... addr 0x... len N"
 * into buf, perftest-style, for logs. Returns buf. */
const char *qp_conn_info_str(const struct qp_conn_info *ci, char *buf, size_t len);

#endif
