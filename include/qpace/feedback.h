/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace telemetry wire format: what switches tell senders (and agents tell each other).
 *
 * Carried in UDP, default port 4792. Every message starts with a header, all fields
 * network order; version 1 (unsigned) has the first 8 bytes, version 2 (signed, see
 * qpace/fb_auth.h) 20:
 *
 *   0  magic    u16  0x5146 ("QF")
 *   2  version  u8   1 = unsigned, 2 = signed
 *   3  type     u8   enum fb_type
 *   4  length   u16  whole message: header + body + auth tag
 *   6  flags    u8   FB_F_*
 *   7  auth_len u8   bytes of authentication tag at the end (version 1: skipped, at most
 *                    64; version 2: 1..64, 8 from qpace's signers)
 *   8  sender   u32  version 2: who signed it (a switch process, an agent)
 *  12  seq      u64  version 2: the signer's sequence number, strictly increasing, from
 *                    its clock in ns (so a restarted signer continues above itself)
 *
 * Bodies (offsets from the body start; "flow" is the 16-byte data-flow key:
 * src IPv4 u32, dst IPv4 u32, UDP source port u16, reserved u16, dest QP u32 (24 bits)):
 *
 *   INT / ECHO (44 + 40·n): flow, psn u32, nhops u8, reserved 3, reserved u64 (0),
 *             reserved u32, then n hops: switch_id u32, port u16, reserved u16, ts_ns u64,
 *             tx_bytes u64, qlen_bytes u32, reserved u32, link_bps u64.
 *   NOTICE (48): flow, psn u32, switch_id u32, port u16, flows u16, queue_bytes u32,
 *             link_bps u64, reflected_ts_ns u64.
 *   LEVEL (36): flow, switch_id u32, port u16, level u8 (0..3, or 7 = ack from the
 *             sender), acked u8 (with level 7: the level acknowledged), queue_bytes u32,
 *             seq u32 (switch's count of level changes for the flow), psn u32 (of the
 *             frame that triggered it; an ack echoes the message it acknowledges).
 *   CREDIT (32): flow, seq u32, credit_bytes u32, interval_ns u64.
 *   WANT (32): flow, int_every u32 (0: no more reports), flags u32 (FB_WANT_F_*; a
 *             switch ignores the bits it does not know), int_interval_ns u64. A sender's
 *             agent asks for INT reports on its flow: sent to the data receiver's address
 *             and port 4792, so every switch on the data path takes it on the way; the
 *             receiver's agent ignores it. Repeated while the flow wants reports (a
 *             switch forgets a flow it has not heard from for a while, docs/switch.md).
 *             FB_WANT_F_LAST: the flow's last window is on its way (ACC's ramp-up in
 *             advance): the switches count it no more among the flows of their ports; a
 *             WANT without it counts it again.
 *
 * IPv6 flows (FB_F_IPV6 in the header's flags): the flow key's two IPv4 fields are 0 and
 * the flow's 16-byte source and destination addresses (network order) follow the body's
 * part above (INT / ECHO: after the hops), 32 bytes; a message with the flag and without
 * them is cut short (-EMSGSIZE), one with the flag and an IPv4 address -EINVAL.
 *
 * A datagram carries one or more messages back to back: a switch packs the INT reports
 * it makes in one pass for the same host into one datagram. Read them in turn; each
 * message's length says where the next begins (fb_decode on the rest of the payload).
 *
 * A body may be longer than its fixed part (a later minor revision appends fields): the
 * extra bytes are ignored. Decoders reject a wrong magic or version, a length beyond the
 * datagram or shorter than the body needs, a hop count of 0 or above QP_INT_MAX_HOPS, a
 * level outside 0..3 and 7, and unknown types (-ENOMSG, so the caller can count them
 * apart). They never read past @len and write *out only on success.
 */
#ifndef QPACE_FEEDBACK_H
#define QPACE_FEEDBACK_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/int.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define FB_PORT 4792
#define FB_MAGIC 0x5146
#define FB_VERSION 1
#define FB_VERSION_SIGNED 2
#define FB_HDR_LEN 8
#define FB_HDR_SIGNED_LEN 20
#define FB_FLOW_LEN 16
#define FB_HOP_LEN 40
#define FB_AUTH_MAX 64
#define FB_INT_FIXED (FB_FLOW_LEN + 28)
#define FB_NOTICE_LEN (FB_FLOW_LEN + 32)
#define FB_LEVEL_LEN (FB_FLOW_LEN + 20)
#define FB_CREDIT_LEN (FB_FLOW_LEN + 16)
#define FB_WANT_LEN (FB_FLOW_LEN + 16)
#define FB_FLOW6_LEN 32   /* FB_F_IPV6: the two addresses after the body */
#define FB_MAX_LEN (FB_HDR_SIGNED_LEN + FB_INT_FIXED + QP_INT_MAX_HOPS * FB_HOP_LEN + \
		    FB_FLOW6_LEN + FB_AUTH_MAX)

enum fb_type {
	FB_T_INT = 1,     /* switch -> sender (direct) or receiver (echo, FB_F_TO_RECEIVER) */
	FB_T_NOTICE = 2,  /* early congestion notice, switch -> sender */
	FB_T_LEVEL = 3,   /* congestion level, switch -> sender; level 7: sender -> switch */
	FB_T_CREDIT = 4,  /* credit grant, receiver agent -> sender agent */
	FB_T_ECHO = 5,    /* INT report forwarded by the receiver's agent to the sender */
	FB_T_WANT = 6,    /* sender agent -> switches on the path: INT wanted for a flow */
	FB_T_COUNT
};

enum {
	FB_F_TO_RECEIVER = 1u << 0,  /* INT delivered to the receiver, to be echoed */
	FB_F_IPV6 = 1u << 1,         /* an IPv6 flow: fb_flow's src6 and dst6 */
};

/* The data flow a message is about, from the data sender's side. */
struct fb_flow {
	uint32_t src_ip;    /* data sender, host order */
	uint32_t dst_ip;    /* data receiver */
	uint16_t sport;     /* the data's UDP source port */
	uint32_t dest_qp;   /* the data's BTH destination QP (the receiver's QP), 24 bits */
	uint8_t src6[16];   /* with FB_F_IPV6 (src_ip, dst_ip 0): the IPv6 addresses */
	uint8_t dst6[16];
};

struct fb_int {
	struct fb_flow flow;
	uint32_t psn;
	uint8_t nhops;      /* 1..QP_INT_MAX_HOPS */
	struct qp_int_hop hops[QP_INT_MAX_HOPS];  /* first hop first */
};

struct fb_notice {
	struct fb_flow flow;
	uint32_t psn;
	uint32_t switch_id;
	uint16_t port;
	uint16_t flows;              /* flows with bytes in that egress queue */
	uint32_t queue_bytes;
	qp_rate_bps link_bps;
	qp_time_ns reflected_ts_ns;  /* switch clock at the enqueue that triggered it */
};

#define FB_LEVEL_MAX 3    /* levels 0..3 */
#define FB_LEVEL_ACK 7

struct fb_level {
	struct fb_flow flow;
	uint32_t switch_id;
	uint16_t port;
	uint8_t level;       /* 0..FB_LEVEL_MAX, or FB_LEVEL_ACK */
	uint8_t acked;       /* with FB_LEVEL_ACK: the level acknowledged (0..3) */
	uint32_t queue_bytes;
	uint32_t seq;
	uint32_t psn;
};

struct fb_credit {
	struct fb_flow flow;
	uint32_t seq;
	uint32_t credit_bytes;
	qp_time_ns interval_ns;
};

/* INT wanted for the flow, sampled: at most one report per int_every data frames and per
 * int_interval_ns (0: no time limit); int_every 0 withdraws the wish. */
struct fb_want {
	struct fb_flow flow;
	uint32_t int_every;
	uint32_t flags;      /* FB_WANT_F_* */
	qp_time_ns int_interval_ns;
};
#define FB_WANT_F_LAST 1u    /* the flow's last window is on its way */

struct fb_msg {
	uint8_t type;        /* enum fb_type */
	uint8_t flags;       /* FB_F_* */
	uint8_t auth_len;    /* decode: the tag is the last auth_len bytes of the message */
	uint16_t length;     /* decode: message length */
	uint32_t sender;     /* decode, version 2: the signer's id and sequence (0 in 1) */
	uint64_t seq;
	union {
		struct fb_int int_report;  /* FB_T_INT and FB_T_ECHO */
		struct fb_notice notice;
		struct fb_level level;
		struct fb_credit credit;
		struct fb_want want;
	} u;
};

/* Decode one message (version 1 or 2) from a UDP payload; the tag is not checked here
 * (fb_auth_verify). 0, or -EPROTO (magic or version),
 * -EMSGSIZE (truncated), -EINVAL (a field out of range), -ENOMSG (unknown type). */
int fb_decode(struct fb_msg *out, const uint8_t *buf, size_t len);
/* The type a message claims (its header's type byte), 0 when too short for a header: a
 * reader that takes one type may skip fb_decode for the others, which it would refuse
 * anyway (fb_decode's type is this byte). */
static inline unsigned fb_claimed_type(const uint8_t *buf, size_t len)
{
	return len >= FB_HDR_LEN ? buf[3] : 0;
}

/* Encode @m as a version 1 message (type, flags and body; length is computed, auth_len
 * must be 0; fb_auth_sign makes it a signed one).
 * Returns the message length, or -EMSGSIZE (cap) / -EINVAL (a field out of range). */
int fb_encode(uint8_t *buf, size_t cap, const struct fb_msg *m);

/* An INT (@type FB_T_INT) or ECHO report from its parts: the same bytes fb_encode makes
 * of the equivalent message, without filling a struct fb_msg first (a switch's per-frame
 * path). Returns the message length, or -EMSGSIZE (cap) / -EINVAL (type, hop count). */
int fb_encode_int(uint8_t *buf, size_t cap, uint8_t type, uint8_t flags,
		  const struct fb_flow *flow, uint32_t psn, const struct qp_int_hop *hops,
		  unsigned nhops);

/* Short name of a type ("int", "notice"...), "unknown" outside the table. */
const char *fb_type_name(unsigned type);

#endif
