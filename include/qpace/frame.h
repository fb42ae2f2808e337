/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The one definition of the frames qpace puts on and takes off the wire:
 *
 *   Ethernet / ARP (Ethernet+IPv4 only)
 *   Ethernet / IPv4 / UDP / payload
 *   Ethernet / IPv4 / UDP 4791 / BTH [/ RETH | AETH | ImmDt | IETH | DETH ...] / payload
 *            / pad / ICRC                                            (RoCEv2, IBTA A17)
 *   Ethernet 0x8808 / opcode 0x0101 / class-enable vector / 8 pause times
 *                                                                    (PFC, IEEE 802.1Qbb)
 *
 * Decoders: int frame_X_decode(struct frame_X *out, const uint8_t *buf, size_t len)
 * check len before every read, write *out only on success and return the header length
 * (> 0), or -EMSGSIZE (truncated) / -EBADMSG (a field is impossible). Encoders write into
 * a caller buffer of @cap bytes and return the bytes written or -EMSGSIZE; nothing here
 * allocates. Multi-byte fields in the structs are in host order; IPv4 addresses too.
 *
 * ICRC (references §9, checked against kernel rxe frames): the CRC-32 (zlib's crc32;
 * frame_crc32 below) over 8 bytes of 0xFF, the IPv4 header with TOS = 0xFF, TTL = 0xFF,
 * checksum = 0xFFFF, the UDP header with checksum = 0xFFFF, the BTH with byte 4 (FECN,
 * BECN, reserved) = 0xFF, then every byte up to the ICRC; stored little-endian in the last
 * 4 bytes of the UDP payload.
 */
#ifndef QPACE_FRAME_H
#define QPACE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_ETH_ALEN 6
#define FRAME_ETH_HLEN 14
#define FRAME_ETH_MIN 60           /* without FCS; shorter frames are padded */
#define FRAME_ETHERTYPE_IPV4 0x0800
#define FRAME_ETHERTYPE_ARP 0x0806
#define FRAME_ETHERTYPE_MAC_CONTROL 0x8808   /* IEEE 802.3 Annex 31B: PAUSE, PFC */
#define FRAME_ARP_LEN 28
#define FRAME_IPV4_HLEN 20         /* without options */
#define FRAME_IPV6_HLEN 40         /* without extension headers */
#define FRAME_IPPROTO_UDP 17
#define FRAME_UDP_HLEN 8
#define FRAME_ROCEV2_PORT 4791
#define FRAME_BTH_LEN 12
#define FRAME_RETH_LEN 16
#define FRAME_AETH_LEN 4
#define FRAME_IMMDT_LEN 4
#define FRAME_ICRC_LEN 4
#define FRAME_CNP_PAYLOAD 16       /* CNP: BTH + 16 reserved bytes + ICRC */

/* IPv4 ECN codepoints (low two bits of TOS). */
enum frame_ecn { FRAME_ECN_NOT_ECT = 0, FRAME_ECN_ECT1 = 1, FRAME_ECN_ECT0 = 2, FRAME_ECN_CE = 3 };

struct frame_eth {
	uint8_t dst[FRAME_ETH_ALEN];
	uint8_t src[FRAME_ETH_ALEN];
	uint16_t ethertype;
};

enum { FRAME_ARP_REQUEST = 1, FRAME_ARP_REPLY = 2 };

/* ARP for Ethernet and IPv4 only (htype 1, ptype 0x0800, hlen 6, plen 4). */
struct frame_arp {
	uint16_t op;
	uint8_t sha[FRAME_ETH_ALEN];
	uint32_t spa;
	uint8_t tha[FRAME_ETH_ALEN];
	uint32_t tpa;
};

struct frame_ipv4 {
	uint8_t hlen;       /* header bytes, 20..60 */
	uint8_t tos;        /* DSCP << 2 | ECN */
	uint16_t total_len;
	uint16_t id;
	uint16_t frag;      /* flags (DF 0x4000, MF 0x2000) | fragment offset in 8-byte units */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint32_t src;
	uint32_t dst;
};
#define FRAME_IPV4_DF 0x4000
#define FRAME_IPV4_MF 0x2000
#define FRAME_IPV4_OFFMASK 0x1fff

struct frame_udp {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;       /* header + payload */
	uint16_t csum;
};

struct frame_bth {
	uint8_t opcode;
	bool se;            /* solicited event */
	bool migreq;
	uint8_t pad;        /* pad bytes before the ICRC, 0..3 */
	uint8_t tver;       /* transport header version, 0 */
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint32_t dest_qp;   /* 24 bits */
	bool ackreq;
	uint32_t psn;       /* 24 bits */
};

struct frame_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
};

struct frame_aeth {
	uint8_t syndrome;
	uint32_t msn;       /* 24 bits */
};

/* BTH opcodes qpace names (RC, the UD send, CNP). */
enum frame_opcode {
	FRAME_OP_RC_SEND_FIRST = 0x00,
	FRAME_OP_RC_SEND_MIDDLE = 0x01,
	FRAME_OP_RC_SEND_LAST = 0x02,
	FRAME_OP_RC_SEND_LAST_IMM = 0x03,
	FRAME_OP_RC_SEND_ONLY = 0x04,
	FRAME_OP_RC_SEND_ONLY_IMM = 0x05,
	FRAME_OP_RC_WRITE_FIRST = 0x06,
	FRAME_OP_RC_WRITE_MIDDLE = 0x07,
	FRAME_OP_RC_WRITE_LAST = 0x08,
	FRAME_OP_RC_WRITE_LAST_IMM = 0x09,
	FRAME_OP_RC_WRITE_ONLY = 0x0a,
	FRAME_OP_RC_WRITE_ONLY_IMM = 0x0b,
	FRAME_OP_RC_READ_REQUEST = 0x0c,
	FRAME_OP_RC_READ_RESP_FIRST = 0x0d,
	FRAME_OP_RC_READ_RESP_MIDDLE = 0x0e,
	FRAME_OP_RC_READ_RESP_LAST = 0x0f,
	FRAME_OP_RC_READ_RESP_ONLY = 0x10,
	FRAME_OP_RC_ACK = 0x11,
	FRAME_OP_RC_ATOMIC_ACK = 0x12,
	FRAME_OP_RC_CMP_SWAP = 0x13,
	FRAME_OP_RC_FETCH_ADD = 0x14,
	FRAME_OP_RC_SEND_LAST_INV = 0x16,
	FRAME_OP_RC_SEND_ONLY_INV = 0x17,
	FRAME_OP_UD_SEND_ONLY = 0x64,
	FRAME_OP_UD_SEND_ONLY_IMM = 0x65,
	FRAME_OP_CNP = 0x81,
};

/* What follows the BTH for an opcode: the extension headers in wire order. */
enum {
	FRAME_X_RETH = 1u << 0,    /* 16 B */
	FRAME_X_AETH = 1u << 1,    /* 4 B, after RETH-less headers */
	FRAME_X_IMMDT = 1u << 2,   /* 4 B */
	FRAME_X_IETH = 1u << 3,    /* 4 B */
	FRAME_X_DETH = 1u << 4,    /* 8 B, first after BTH */
	FRAME_X_ATOMIC = 1u << 5,  /* AtomicETH 28 B */
	FRAME_X_ATOMICACK = 1u << 6, /* AtomicAckETH 8 B */
	FRAME_X_DATA = 1u << 7,    /* carries payload: a data frame for INT and queues */
	FRAME_X_KNOWN = 1u << 8,   /* the opcode is in the table */
};

struct frame_opinfo {
	const char *name;  /* "RC_SEND_FIRST"..., NULL for unknown opcodes */
	unsigned ext;      /* FRAME_X_* */
	uint8_t ext_len;   /* bytes of extension headers after the BTH */
};

/* Table lookup; unknown opcodes give { NULL, 0, 0 }. */
const struct frame_opinfo *frame_opinfo(uint8_t opcode);

/* ---- one layer at a time ---- */
int frame_eth_decode(struct frame_eth *out, const uint8_t *buf, size_t len);
int frame_arp_decode(struct frame_arp *out, const uint8_t *buf, size_t len);
int frame_ipv4_decode(struct frame_ipv4 *out, const uint8_t *buf, size_t len);
int frame_udp_decode(struct frame_udp *out, const uint8_t *buf, size_t len);
int frame_bth_decode(struct frame_bth *out, const uint8_t *buf, size_t len);
int frame_reth_decode(struct frame_reth *out, const uint8_t *buf, size_t len);
int frame_aeth_decode(struct frame_aeth *out, const uint8_t *buf, size_t len);

int frame_eth_encode(uint8_t *buf, size_t cap, const struct frame_eth *h);
int frame_arp_encode(uint8_t *buf, size_t cap, const struct frame_arp *h);
/* Writes the header as given (hlen must be 20: no options), checksum computed. */
int frame_ipv4_encode(uint8_t *buf, size_t cap, const struct frame_ipv4 *h);
int frame_udp_encode(uint8_t *buf, size_t cap, const struct frame_udp *h);
int frame_bth_encode(uint8_t *buf, size_t cap, const struct frame_bth *h);
int frame_reth_encode(uint8_t *buf, size_t cap, const struct frame_reth *h);
int frame_aeth_encode(uint8_t *buf, size_t cap, const struct frame_aeth *h);

/* ---- PFC: priority-based flow control (IEEE 802.1Qbb clause 36, 802.3 Annex 31D) ----
 *
 *   0  DA 01-80-C2-00-00-01 (MAC control, never forwarded by a bridge)
 *   6  SA (the sending port's individual MAC)
 *  12  EtherType 0x8808
 *  14  opcode 0x0101
 *  16  class-enable vector: a reserved octet (0), then bit i = priority i
 *  18  time[0..7]: 16 bits each, in quanta of 512 bit times at the link's rate; 0 = XON
 *  34  zeros to the 60-byte minimum
 *
 * A receiver pauses priority i for time[i] quanta when bit i is set (a new frame restarts
 * the timer; 0 ends it) and ignores time[i] of priorities whose bit is clear. */
#define FRAME_PFC_OPCODE 0x0101
#define FRAME_PFC_LEN 34                 /* bytes the fields take, before the padding */
#define FRAME_PFC_PRIOS 8
#define FRAME_PFC_QUANTUM_BITS 512
#define FRAME_PFC_DST_INIT { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 }

struct frame_pfc {
	uint8_t src[FRAME_ETH_ALEN];
	uint8_t enable;                  /* class-enable vector, bit i = priority i */
	uint16_t quanta[FRAME_PFC_PRIOS];
};

/* The whole frame from its first byte: the length taken (FRAME_PFC_LEN), -EMSGSIZE when
 * shorter, -EBADMSG for another EtherType or opcode, a destination other than
 * 01-80-C2-00-00-01, a multicast source, or a non-zero reserved octet. */
int frame_pfc_decode(struct frame_pfc *out, const uint8_t *buf, size_t len);
/* The frame padded to FRAME_ETH_MIN: its length, or -EMSGSIZE when @cap is short, -EINVAL
 * for a multicast source. */
int frame_build_pfc(uint8_t *buf, size_t cap, const struct frame_pfc *p);
/* How long @quanta pause a link of @bps: quanta x 512 bit times, rounded up to the ns
 * (0 for a zero rate, which configurations refuse). */
uint64_t frame_pfc_quanta_ns(uint16_t quanta, uint64_t bps);
/* The 802.1p priority of an untagged IPv4 frame with this TOS byte: DSCP >> 3, the
 * default DSCP-to-priority map of DSCP-trusting RoCE NICs and switches (DSCP 26, RoCE's
 * usual marking, is priority 3). */
static inline unsigned frame_tos_priority(uint8_t tos)
{
	return tos >> 5;
}

/* ---- a whole frame ---- */
enum {
	FRAME_L_ETH = 1u << 0,
	FRAME_L_ARP = 1u << 1,
	FRAME_L_IPV4 = 1u << 2,
	FRAME_L_UDP = 1u << 3,   /* first (or only) fragment of a UDP datagram */
	FRAME_L_ROCE = 1u << 4,  /* UDP dport 4791 with a whole BTH */
	FRAME_L_PFC = 1u << 5,   /* MAC control with the PFC opcode, decoded */
};

struct frame_parsed {
	unsigned layers;          /* FRAME_L_* present */
	struct frame_eth eth;
	struct frame_arp arp;
	struct frame_ipv4 ip;
	struct frame_udp udp;
	struct frame_bth bth;
	const struct frame_opinfo *op;
	struct frame_reth reth;   /* when op->ext has FRAME_X_RETH */
	struct frame_aeth aeth;   /* FRAME_X_AETH */
	uint32_t imm;             /* FRAME_X_IMMDT (or IETH's rkey), host order */
	struct frame_pfc pfc;     /* FRAME_L_PFC */
	uint16_t ip_off;          /* offsets into the frame */
	uint16_t udp_off;
	uint16_t bth_off;
	uint16_t payload_off;     /* UDP payload, or for RoCE the data after the extensions */
	uint16_t payload_len;     /* for RoCE: without pad and ICRC */
	uint32_t icrc;            /* RoCE: as stored (little-endian on the wire) */
	uint16_t len;             /* bytes of the frame that belong to it (no Ethernet pad) */
};

/* Parse everything we know. A frame that is not IPv4 (or not UDP, or not RoCEv2) is fine
 * and simply has fewer layers; a layer that is present but cut short or impossible (IPv4
 * header length < 20, total length beyond the frame, UDP length beyond the IP payload, a
 * known RoCE opcode whose headers, pad and ICRC do not fit, a MAC control frame with the
 * PFC opcode that frame_pfc_decode refuses; other MAC control opcodes are Ethernet
 * only) fails the whole parse:
 * returns 0, or -EMSGSIZE / -EBADMSG. Checksums are not verified here. */
int frame_parse(struct frame_parsed *out, const uint8_t *buf, size_t len);

/* ---- checksums ---- */
/* One's-complement sum of @len bytes added to @sum (not folded). */
uint32_t frame_csum_add(uint32_t sum, const uint8_t *buf, size_t len);
/* Fold and complement. */
uint16_t frame_csum_fold(uint32_t sum);
/* IPv4 header checksum of @hlen bytes at @ip (the checksum field included as stored). 0
 * means the stored checksum is right. */
uint16_t frame_ipv4_csum(const uint8_t *ip, size_t hlen);
/* UDP checksum over the pseudo-header and @udp_len bytes at @udp (0 is returned as 0xffff). */
uint16_t frame_udp_csum(uint32_t src, uint32_t dst, const uint8_t *udp, size_t udp_len);
/* Rewrite the ECN bits of the IPv4 header at @ip in place, updating its checksum
 * incrementally (RFC 1624). The ICRC does not cover TOS, so RoCE frames stay valid. */
void frame_ipv4_set_ecn(uint8_t *ip, enum frame_ecn ecn);

/* A UDP or TCP checksum over IPv4 that a sender left to offload holds only the folded
 * pseudo-header sum (CHECKSUM_PARTIAL: veth, vxlan without outer checksums). When the
 * frame's field is exactly that, write the full checksum and return true; a right or
 * otherwise wrong checksum is left alone. */
bool frame_complete_partial_csum(uint8_t *buf, size_t len);

/* The CRC-32 of the ICRC: zlib's crc32(crc, buf, len) in value and in chaining (start at
 * 0; pass the last result to continue), computed with PCLMULQDQ where the CPU has it. */
uint32_t frame_crc32(uint32_t crc, const void *buf, size_t len);
/* ICRC of the RoCEv2 frame @buf (Ethernet first); @p from frame_parse. */
uint32_t frame_icrc(const uint8_t *buf, const struct frame_parsed *p);
bool frame_icrc_ok(const uint8_t *buf, const struct frame_parsed *p);
/* ICRC of the IPv6 RoCEv2 packet @ip6 (the IPv6 header first, no extension headers; @len
 * bytes up to and with its 4-byte ICRC field, which is not read): the IPv6 header with
 * traffic class, flow label and hop limit masked (all ones), the UDP header with its
 * checksum masked, the BTH with FECN/BECN/reserved masked, then the rest. 0 when @len is
 * shorter than those headers and an ICRC. */
uint32_t frame_icrc_ipv6(const uint8_t *ip6, size_t len);

/* ---- builders ---- */
struct frame_addr {
	uint8_t mac[FRAME_ETH_ALEN];
	uint32_t ip;       /* host order */
	uint16_t port;     /* UDP */
};

/* IPv4 header fields the builders take; zero gives TTL 64, DF, id 0, TOS 0. */
struct frame_ip_opts {
	uint8_t tos;
	uint8_t ttl;       /* 0 = 64 */
	uint16_t id;
	bool no_df;
};

/* Ethernet / IPv4 / UDP / @payload (NULL: zeros) with IPv4 and UDP checksums. Returns the frame length
 * (padded to FRAME_ETH_MIN) or -EMSGSIZE. */
int frame_build_udp(uint8_t *buf, size_t cap, const struct frame_addr *src,
		    const struct frame_addr *dst, const struct frame_ip_opts *ip,
		    const uint8_t *payload, size_t payload_len);

struct frame_roce_spec {
	struct frame_addr src, dst;   /* dst.port is ignored: always 4791 */
	struct frame_ip_opts ip;
	struct frame_bth bth;         /* pad is computed; tver 0; pkey 0 means 0xffff */
	struct frame_reth reth;       /* used when the opcode has RETH */
	struct frame_aeth aeth;       /* AETH */
	uint32_t imm;                 /* ImmDt or IETH, host order */
	const uint8_t *payload;       /* may be NULL: zeros */
	size_t payload_len;
	bool no_icrc;                 /* the ICRC field left 0 (virtual time's --icrc off) */
};

/* A complete RoCEv2 frame as kernel rxe sends it (UDP checksum 0, ICRC set unless
 * no_icrc). Opcodes
 * with DETH or atomic headers are not built (-EINVAL); CNP gets its 16 reserved bytes.
 * Returns the frame length or -EMSGSIZE / -EINVAL. */
int frame_build_roce(uint8_t *buf, size_t cap, const struct frame_roce_spec *s);

/* ARP request or reply. */
int frame_build_arp(uint8_t *buf, size_t cap, uint16_t op, const uint8_t sha[FRAME_ETH_ALEN],
		    uint32_t spa, const uint8_t tha[FRAME_ETH_ALEN], uint32_t tpa);

static inline bool frame_mac_is_multicast(const uint8_t *mac)
{
	return mac[0] & 1;
}

#endif
