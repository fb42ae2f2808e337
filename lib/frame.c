/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frame codecs: Ethernet, ARP, IPv4, UDP, RoCEv2 (see qpace/frame.h); PFC's own codec is
 * lib/frame_pfc.c. */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "qpace/bytes.h"
#include "qpace/frame.h"

/* ---- the BTH opcode table (IBTA vol. 1, 9.2 and A17 for CNP) ---- */
#define X_(f) FRAME_X_##f
#define OP(code, nm, x, l) [code] = { nm, (x) | FRAME_X_KNOWN, l }
static const struct frame_opinfo op_table[256] = {
	OP(0x00, "RC_SEND_FIRST", X_(DATA), 0),
	OP(0x01, "RC_SEND_MIDDLE", X_(DATA), 0),
	OP(0x02, "RC_SEND_LAST", X_(DATA), 0),
	OP(0x03, "RC_SEND_LAST_IMM", X_(DATA) | X_(IMMDT), 4),
	OP(0x04, "RC_SEND_ONLY", X_(DATA), 0),
	OP(0x05, "RC_SEND_ONLY_IMM", X_(DATA) | X_(IMMDT), 4),
	OP(0x06, "RC_WRITE_FIRST", X_(DATA) | X_(RETH), 16),
	OP(0x07, "RC_WRITE_MIDDLE", X_(DATA), 0),
	OP(0x08, "RC_WRITE_LAST", X_(DATA), 0),
	OP(0x09, "RC_WRITE_LAST_IMM", X_(DATA) | X_(IMMDT), 4),
	OP(0x0a, "RC_WRITE_ONLY", X_(DATA) | X_(RETH), 16),
	OP(0x0b, "RC_WRITE_ONLY_IMM", X_(DATA) | X_(RETH) | X_(IMMDT), 20),
	OP(0x0c, "RC_READ_REQUEST", X_(RETH), 16),
	OP(0x0d, "RC_READ_RESPONSE_FIRST", X_(DATA) | X_(AETH), 4),
	OP(0x0e, "RC_READ_RESPONSE_MIDDLE", X_(DATA), 0),
	OP(0x0f, "RC_READ_RESPONSE_LAST", X_(DATA) | X_(AETH), 4),
	OP(0x10, "RC_READ_RESPONSE_ONLY", X_(DATA) | X_(AETH), 4),
	OP(0x11, "RC_ACKNOWLEDGE", X_(AETH), 4),
	OP(0x12, "RC_ATOMIC_ACKNOWLEDGE", X_(AETH) | X_(ATOMICACK), 12),
	OP(0x13, "RC_COMPARE_SWAP", X_(ATOMIC), 28),
	OP(0x14, "RC_FETCH_ADD", X_(ATOMIC), 28),
	OP(0x16, "RC_SEND_LAST_INV", X_(DATA) | X_(IETH), 4),
	OP(0x17, "RC_SEND_ONLY_INV", X_(DATA) | X_(IETH), 4),
	OP(0x64, "UD_SEND_ONLY", X_(DATA) | X_(DETH), 8),
	OP(0x65, "UD_SEND_ONLY_IMM", X_(DATA) | X_(DETH) | X_(IMMDT), 12),
	OP(0x81, "CNP", 0, 0),
};
#undef OP
#undef X_

const struct frame_opinfo *frame_opinfo(uint8_t opcode)
{
	return &op_table[opcode];
}

/* ---- layers ---- */
int frame_eth_decode(struct frame_eth *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_ETH_HLEN)
		return -EMSGSIZE;
	memcpy(out->dst, buf, FRAME_ETH_ALEN);
	memcpy(out->src, buf + 6, FRAME_ETH_ALEN);
	out->ethertype = qp_get16(buf + 12);
	return FRAME_ETH_HLEN;
}

int frame_eth_encode(uint8_t *buf, size_t cap, const struct frame_eth *h)
{
	if (cap < FRAME_ETH_HLEN)
		return -EMSGSIZE;
	memcpy(buf, h->dst, FRAME_ETH_ALEN);
	memcpy(buf + 6, h->src, FRAME_ETH_ALEN);
	qp_put16(buf + 12, h->ethertype);
	return FRAME_ETH_HLEN;
}

int frame_arp_decode(struct frame_arp *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_ARP_LEN)
		return -EMSGSIZE;
	if (qp_get16(buf) != 1 || qp_get16(buf + 2) != FRAME_ETHERTYPE_IPV4 || buf[4] != 6 ||
	    buf[5] != 4)
		return -EBADMSG;
	out->op = qp_get16(buf + 6);
	memcpy(out->sha, buf + 8, 6);
	out->spa = qp_get32(buf + 14);
	memcpy(out->tha, buf + 18, 6);
	out->tpa = qp_get32(buf + 24);
	return FRAME_ARP_LEN;
}

int frame_arp_encode(uint8_t *buf, size_t cap, const struct frame_arp *h)
{
	if (cap < FRAME_ARP_LEN)
		return -EMSGSIZE;
	qp_put16(buf, 1);
	qp_put16(buf + 2, FRAME_ETHERTYPE_IPV4);
	buf[4] = 6;
	buf[5] = 4;
	qp_put16(buf + 6, h->op);
	memcpy(buf + 8, h->sha, 6);
	qp_put32(buf + 14, h->spa);
	memcpy(buf + 18, h->tha, 6);
	qp_put32(buf + 24, h->tpa);
	return FRAME_ARP_LEN;
}

int frame_ipv4_decode(struct frame_ipv4 *out, const uint8_t *buf, size_t len)
{
	size_t hlen;

	if (len < FRAME_IPV4_HLEN)
		return -EMSGSIZE;
	if (buf[0] >> 4 != 4)
		return -EBADMSG;
	hlen = (size_t)(buf[0] & 0x0f) * 4;
	if (hlen < FRAME_IPV4_HLEN)
		return -EBADMSG;
	if (len < hlen)
		return -EMSGSIZE;
	out->hlen = (uint8_t)hlen;
	out->tos = buf[1];
	out->total_len = qp_get16(buf + 2);
	out->id = qp_get16(buf + 4);
	out->frag = qp_get16(buf + 6);
	out->ttl = buf[8];
	out->proto = buf[9];
	out->csum = qp_get16(buf + 10);
	out->src = qp_get32(buf + 12);
	out->dst = qp_get32(buf + 16);
	return (int)hlen;
}

int frame_ipv6_decode(struct frame_ipv6 *out, const uint8_t *buf, size_t len)
{
	uint32_t w;

	if (len < FRAME_IPV6_HLEN)
		return -EMSGSIZE;
	w = qp_get32(buf);
	if (w >> 28 != 6)
		return -EBADMSG;
	out->tclass = (uint8_t)(w >> 20);
	out->flow = w & 0xfffff;
	out->plen = qp_get16(buf + 4);
	out->next = buf[6];
	out->hlim = buf[7];
	memcpy(out->src, buf + 8, 16);
	memcpy(out->dst, buf + 24, 16);
	return FRAME_IPV6_HLEN;
}

int frame_ipv4_encode(uint8_t *buf, size_t cap, const struct frame_ipv4 *h)
{
	if (h->hlen != FRAME_IPV4_HLEN)
		return -EINVAL;
	if (cap < FRAME_IPV4_HLEN)
		return -EMSGSIZE;
	buf[0] = 0x45;
	buf[1] = h->tos;
	qp_put16(buf + 2, h->total_len);
	qp_put16(buf + 4, h->id);
	qp_put16(buf + 6, h->frag);
	buf[8] = h->ttl;
	buf[9] = h->proto;
	qp_put16(buf + 10, 0);
	qp_put32(buf + 12, h->src);
	qp_put32(buf + 16, h->dst);
	qp_put16(buf + 10, frame_ipv4_csum(buf, FRAME_IPV4_HLEN));
	return FRAME_IPV4_HLEN;
}

int frame_udp_decode(struct frame_udp *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_UDP_HLEN)
		return -EMSGSIZE;
	out->sport = qp_get16(buf);
	out->dport = qp_get16(buf + 2);
	out->len = qp_get16(buf + 4);
	out->csum = qp_get16(buf + 6);
	return FRAME_UDP_HLEN;
}

int frame_udp_encode(uint8_t *buf, size_t cap, const struct frame_udp *h)
{
	if (cap < FRAME_UDP_HLEN)
		return -EMSGSIZE;
	qp_put16(buf, h->sport);
	qp_put16(buf + 2, h->dport);
	qp_put16(buf + 4, h->len);
	qp_put16(buf + 6, h->csum);
	return FRAME_UDP_HLEN;
}

int frame_bth_decode(struct frame_bth *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_BTH_LEN)
		return -EMSGSIZE;
	out->opcode = buf[0];
	out->se = buf[1] >> 7;
	out->migreq = (buf[1] >> 6) & 1;
	out->pad = (buf[1] >> 4) & 3;
	out->tver = buf[1] & 0x0f;
	out->pkey = qp_get16(buf + 2);
	out->fecn = buf[4] >> 7;
	out->becn = (buf[4] >> 6) & 1;
	out->dest_qp = qp_get24(buf + 5);
	out->ackreq = buf[8] >> 7;
	out->psn = qp_get24(buf + 9);
	return FRAME_BTH_LEN;
}

int frame_bth_encode(uint8_t *buf, size_t cap, const struct frame_bth *h)
{
	if (cap < FRAME_BTH_LEN)
		return -EMSGSIZE;
	if (h->pad > 3 || h->tver > 15)
		return -EINVAL;
	buf[0] = h->opcode;
	buf[1] = (uint8_t)(h->se << 7 | h->migreq << 6 | h->pad << 4 | h->tver);
	qp_put16(buf + 2, h->pkey);
	buf[4] = (uint8_t)(h->fecn << 7 | h->becn << 6);
	qp_put24(buf + 5, h->dest_qp & 0xffffff);
	buf[8] = (uint8_t)(h->ackreq << 7);
	qp_put24(buf + 9, h->psn & 0xffffff);
	return FRAME_BTH_LEN;
}

int frame_reth_decode(struct frame_reth *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_RETH_LEN)
		return -EMSGSIZE;
	out->va = qp_get64(buf);
	out->rkey = qp_get32(buf + 8);
	out->dma_len = qp_get32(buf + 12);
	return FRAME_RETH_LEN;
}

int frame_reth_encode(uint8_t *buf, size_t cap, const struct frame_reth *h)
{
	if (cap < FRAME_RETH_LEN)
		return -EMSGSIZE;
	qp_put64(buf, h->va);
	qp_put32(buf + 8, h->rkey);
	qp_put32(buf + 12, h->dma_len);
	return FRAME_RETH_LEN;
}

int frame_aeth_decode(struct frame_aeth *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_AETH_LEN)
		return -EMSGSIZE;
	out->syndrome = buf[0];
	out->msn = qp_get24(buf + 1);
	return FRAME_AETH_LEN;
}

int frame_aeth_encode(uint8_t *buf, size_t cap, const struct frame_aeth *h)
{
	if (cap < FRAME_AETH_LEN)
		return -EMSGSIZE;
	buf[0] = h->syndrome;
	qp_put24(buf + 1, h->msn & 0xffffff);
	return FRAME_AETH_LEN;
}

int frame_atomiceth_decode(struct frame_atomiceth *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_ATOMICETH_LEN)
		return -EMSGSIZE;
	out->va = qp_get64(buf);
	out->rkey = qp_get32(buf + 8);
	out->swap_add = qp_get64(buf + 12);
	out->compare = qp_get64(buf + 20);
	return FRAME_ATOMICETH_LEN;
}

int frame_atomiceth_encode(uint8_t *buf, size_t cap, const struct frame_atomiceth *h)
{
	if (cap < FRAME_ATOMICETH_LEN)
		return -EMSGSIZE;
	qp_put64(buf, h->va);
	qp_put32(buf + 8, h->rkey);
	qp_put64(buf + 12, h->swap_add);
	qp_put64(buf + 20, h->compare);
	return FRAME_ATOMICETH_LEN;
}

int frame_atomicack_decode(uint64_t *orig, const uint8_t *buf, size_t len)
{
	if (len < FRAME_ATOMICACKETH_LEN)
		return -EMSGSIZE;
	*orig = qp_get64(buf);
	return FRAME_ATOMICACKETH_LEN;
}

int frame_atomicack_encode(uint8_t *buf, size_t cap, uint64_t orig)
{
	if (cap < FRAME_ATOMICACKETH_LEN)
		return -EMSGSIZE;
	qp_put64(buf, orig);
	return FRAME_ATOMICACKETH_LEN;
}

/* ---- whole frames ---- */

/* The RoCE part: @p->udp_off and udp are set; @end is the end of the UDP datagram. */
static int parse_roce(struct frame_parsed *p, const uint8_t *buf, size_t end)
{
	size_t off = (size_t)p->udp_off + FRAME_UDP_HLEN, need;
	const struct frame_opinfo *op;
	struct frame_bth bth;
	int rc;

	rc = frame_bth_decode(&bth, buf + off, end - off);
	if (rc < 0)
		return rc;
	op = frame_opinfo(bth.opcode);
	need = FRAME_BTH_LEN + op->ext_len + bth.pad + FRAME_ICRC_LEN;
	if (end - off < need)
		return -EMSGSIZE;
	p->bth = bth;
	p->op = op;
	p->bth_off = (uint16_t)off;
	off += FRAME_BTH_LEN;
	if (op->ext & FRAME_X_DETH)
		off += 8;
	if (op->ext & FRAME_X_RETH) {
		frame_reth_decode(&p->reth, buf + off, end - off);
		off += FRAME_RETH_LEN;
	}
	if (op->ext & FRAME_X_ATOMIC) {
		frame_atomiceth_decode(&p->atomic, buf + off, end - off);
		off += FRAME_ATOMICETH_LEN;
	}
	if (op->ext & FRAME_X_AETH) {
		frame_aeth_decode(&p->aeth, buf + off, end - off);
		off += FRAME_AETH_LEN;
	}
	if (op->ext & FRAME_X_ATOMICACK) {
		frame_atomicack_decode(&p->atomic_orig, buf + off, end - off);
		off += FRAME_ATOMICACKETH_LEN;
	}
	if (op->ext & (FRAME_X_IMMDT | FRAME_X_IETH)) {
		p->imm = qp_get32(buf + off);
		off += 4;
	}
	p->payload_off = (uint16_t)off;
	p->payload_len = (uint16_t)(end - off - bth.pad - FRAME_ICRC_LEN);
	off = end - FRAME_ICRC_LEN;
	p->icrc = (uint32_t)buf[off] | (uint32_t)buf[off + 1] << 8 |
		  (uint32_t)buf[off + 2] << 16 | (uint32_t)buf[off + 3] << 24;
	p->layers |= FRAME_L_ROCE;
	return 0;
}

/* UDP at @off, the IP payload ending at @ip_end. */
static int parse_udp(struct frame_parsed *p, const uint8_t *buf, size_t off, size_t ip_end)
{
	int rc = frame_udp_decode(&p->udp, buf + off, ip_end - off);

	if (rc < 0)
		return rc;
	if (p->udp.len < FRAME_UDP_HLEN)
		return -EBADMSG;
	if (p->udp.len > ip_end - off)
		return -EMSGSIZE;
	p->udp_off = (uint16_t)off;
	p->payload_off = (uint16_t)(off + FRAME_UDP_HLEN);
	p->payload_len = (uint16_t)(p->udp.len - FRAME_UDP_HLEN);
	p->layers |= FRAME_L_UDP;
	if (p->udp.dport == FRAME_ROCEV2_PORT)
		return parse_roce(p, buf, off + p->udp.len);
	return 0;
}

static int parse_ipv4(struct frame_parsed *p, const uint8_t *buf, size_t len)
{
	int rc = frame_ipv4_decode(&p->ip, buf + FRAME_ETH_HLEN, len - FRAME_ETH_HLEN);
	size_t end;

	if (rc < 0)
		return rc;
	if (p->ip.total_len < p->ip.hlen)
		return -EBADMSG;
	if (p->ip.total_len > len - FRAME_ETH_HLEN)
		return -EMSGSIZE;
	p->ip_off = FRAME_ETH_HLEN;
	p->layers |= FRAME_L_IPV4;
	end = FRAME_ETH_HLEN + (size_t)p->ip.total_len;
	p->len = (uint16_t)end;
	/* Fragments other than an unfragmented datagram carry no whole UDP header to trust. */
	if (p->ip.proto != FRAME_IPPROTO_UDP || (p->ip.frag & (FRAME_IPV4_MF | FRAME_IPV4_OFFMASK)))
		return 0;
	return parse_udp(p, buf, FRAME_ETH_HLEN + (size_t)p->ip.hlen, end);
}

static int parse_ipv6(struct frame_parsed *p, const uint8_t *buf, size_t len)
{
	int rc = frame_ipv6_decode(&p->ip6, buf + FRAME_ETH_HLEN, len - FRAME_ETH_HLEN);
	size_t end;

	if (rc < 0)
		return rc;
	if (p->ip6.plen > len - FRAME_ETH_HLEN - FRAME_IPV6_HLEN)
		return -EMSGSIZE;
	p->ip_off = FRAME_ETH_HLEN;
	p->layers |= FRAME_L_IPV6;
	end = FRAME_ETH_HLEN + FRAME_IPV6_HLEN + (size_t)p->ip6.plen;
	p->len = (uint16_t)end;
	/* An extension header (or a jumbogram's zero length) hides UDP: IPv6 alone. */
	if (p->ip6.next != FRAME_IPPROTO_UDP)
		return 0;
	return parse_udp(p, buf, FRAME_ETH_HLEN + FRAME_IPV6_HLEN, end);
}

int frame_parse(struct frame_parsed *out, const uint8_t *buf, size_t len)
{
	struct frame_parsed p;
	int rc;

	if (len > UINT16_MAX)
		return -EMSGSIZE;
	memset(&p, 0, sizeof(p));
	rc = frame_eth_decode(&p.eth, buf, len);
	if (rc < 0)
		return rc;
	p.layers = FRAME_L_ETH;
	p.len = (uint16_t)len;
	if (p.eth.ethertype == FRAME_ETHERTYPE_IPV4) {
		rc = parse_ipv4(&p, buf, len);
	} else if (p.eth.ethertype == FRAME_ETHERTYPE_IPV6) {
		rc = parse_ipv6(&p, buf, len);
	} else if (p.eth.ethertype == FRAME_ETHERTYPE_ARP) {
		rc = frame_arp_decode(&p.arp, buf + FRAME_ETH_HLEN, len - FRAME_ETH_HLEN);
		if (rc > 0)
			p.layers |= FRAME_L_ARP;
		else if (rc == -EBADMSG)
			rc = 0;   /* ARP for another protocol: forward it, do not read it */
	} else if (p.eth.ethertype == FRAME_ETHERTYPE_MAC_CONTROL && len >= FRAME_ETH_HLEN + 2 &&
		   qp_get16(buf + FRAME_ETH_HLEN) == FRAME_PFC_OPCODE) {
		rc = frame_pfc_decode(&p.pfc, buf, len);
		if (rc > 0)
			p.layers |= FRAME_L_PFC;
	}
	if (rc < 0)
		return rc;
	*out = p;
	return 0;
}

/* ---- checksums ---- */
/* RFC 1071: the one's-complement sum does not depend on byte order, so the bulk is summed
 * as native 64-bit words, their carries out counted apart, folded to 16 bits and
 * byte-swapped into network order once (RFC 1071 2(B)); 2^16 = 1 modulo 0xffff makes a
 * 64-bit word four 16-bit ones and a carry out of bit 63 (2^64) a 1. Several times faster
 * than 16 bits at a time on the switch's telemetry datagrams (and half the instructions of
 * 32-bit words, which -O2 does not vectorise); the folded result is the same.
 *
 * csum_words: the 32-bit words of @buf's first @len & ~3 bytes, summed, folded to 16 bits
 * and put in network order. Inline: with a constant @len (an IPv4 header) the loop
 * unrolls. */
static inline uint64_t csum_words(const uint8_t *buf, size_t len)
{
	uint64_t acc = 0, carries = 0;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, buf + i, sizeof(w));
		acc += w;
		carries += acc < w;
	}
	acc = (acc & 0xffffffffu) + (acc >> 32) + carries;   /* < 2^34: no carry lost */
	if (i + 4 <= len) {
		uint32_t w;
		memcpy(&w, buf + i, sizeof(w));
		acc += w;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	acc = (acc & 0xff) << 8 | acc >> 8;
#endif
	return acc;
}

uint32_t frame_csum_add(uint32_t sum, const uint8_t *buf, size_t len)
{
	uint64_t acc = csum_words(buf, len) + sum;
	size_t i = len & ~(size_t)3;

	if (i + 2 <= len) {
		acc += qp_get16(buf + i);
		i += 2;
	}
	if (i < len)
		acc += (uint32_t)buf[i] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t frame_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t frame_ipv4_csum(const uint8_t *ip, size_t hlen)
{
	if (hlen == FRAME_IPV4_HLEN)   /* no options (every frame qpace builds): unrolled */
		return frame_csum_fold((uint32_t)csum_words(ip, FRAME_IPV4_HLEN));
	return frame_csum_fold(frame_csum_add(0, ip, hlen));
}

uint16_t frame_udp_csum(uint32_t src, uint32_t dst, const uint8_t *udp, size_t udp_len)
{
	uint32_t sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
		       FRAME_IPPROTO_UDP + (uint32_t)udp_len;
	uint16_t c = frame_csum_fold(frame_csum_add(sum, udp, udp_len));

	return c ? c : 0xffff;
}

void frame_ipv4_set_ecn(uint8_t *ip, enum frame_ecn ecn)
{
	uint16_t old_word = qp_get16(ip), new_word;
	uint32_t sum;

	ip[1] = (uint8_t)((ip[1] & ~3u) | (unsigned)ecn);
	new_word = qp_get16(ip);
	/* HC' = ~(~HC + ~m + m'), RFC 1624 eq. 3 */
	sum = (uint16_t)~qp_get16(ip + 10);
	sum += (uint16_t)~old_word;
	sum += new_word;
	qp_put16(ip + 10, frame_csum_fold(sum));
}

void frame_ip_set_ecn(uint8_t *ip, enum frame_ecn ecn)
{
	if (ip[0] >> 4 == 6)   /* traffic class = bits 4..11: ECN is bits 10..11 */
		ip[1] = (uint8_t)((ip[1] & ~0x30u) | (unsigned)ecn << 4);
	else
		frame_ipv4_set_ecn(ip, ecn);
}

bool frame_complete_partial_csum(uint8_t *buf, size_t len)
{
	struct frame_ipv4 ip;
	size_t l4, l4_len, at;
	uint32_t pseudo;
	uint16_t c;

	if (len < FRAME_ETH_HLEN + FRAME_IPV4_HLEN || qp_get16(buf + 12) != FRAME_ETHERTYPE_IPV4 ||
	    frame_ipv4_decode(&ip, buf + FRAME_ETH_HLEN, len - FRAME_ETH_HLEN) < 0 ||
	    (ip.frag & (FRAME_IPV4_MF | FRAME_IPV4_OFFMASK)) || ip.total_len < ip.hlen ||
	    ip.total_len > len - FRAME_ETH_HLEN)
		return false;
	l4 = FRAME_ETH_HLEN + (size_t)ip.hlen;
	l4_len = (size_t)ip.total_len - ip.hlen;
	if (ip.proto == FRAME_IPPROTO_UDP && l4_len >= FRAME_UDP_HLEN)
		at = l4 + 6;
	else if (ip.proto == 6 && l4_len >= 20)   /* TCP */
		at = l4 + 16;
	else
		return false;
	pseudo = (ip.src >> 16) + (ip.src & 0xffff) + (ip.dst >> 16) + (ip.dst & 0xffff) +
		 ip.proto + (uint32_t)l4_len;
	uint16_t partial = (uint16_t)~frame_csum_fold(pseudo);   /* folded, not complemented */
	if (qp_get16(buf + at) != partial)
		return false;
	qp_put16(buf + at, 0);
	c = frame_csum_fold(frame_csum_add(pseudo, buf + l4, l4_len));
	qp_put16(buf + at, c || ip.proto != FRAME_IPPROTO_UDP ? c : 0xffff);
	return true;
}

/* The CRC-32 of the ICRC, zlib's crc32() in value and chaining, computed by ISA-L's
 * crc32_gzip_refl (PCLMULQDQ folding, chosen at run time). Not zlib: the ICRC is on the
 * hot path of every soft host, each frame sent and each frame received, and zlib's table
 * CRC took ~1 us per 1 KB frame (14% of a sending client's CPU samples, 26% of a
 * receiving server's; docs/performance.md, bench-icrc prints both). zlib stays the
 * reference in tests/unit/test_icrc.c. */
uint32_t frame_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t frame_icrc(const uint8_t *buf, const struct frame_parsed *p)
{
	if (p->layers & FRAME_L_IPV6)
		return frame_icrc_ipv6(buf + p->ip_off, (size_t)p->udp_off + p->udp.len - p->ip_off);
	/* 8 bytes of 0xFF, then the masked headers: one CRC call for both */
	uint8_t hdr[8 + 60 + FRAME_UDP_HLEN + FRAME_BTH_LEN], *ip = hdr + 8;
	size_t iph = p->ip.hlen, icrc_off = (size_t)p->udp_off + p->udp.len - FRAME_ICRC_LEN;
	size_t rest = (size_t)p->bth_off + FRAME_BTH_LEN;

	memset(hdr, 0xff, 8);
	memcpy(ip, buf + p->ip_off, iph + FRAME_UDP_HLEN + FRAME_BTH_LEN);
	ip[1] = 0xff;                          /* TOS */
	ip[8] = 0xff;                          /* TTL */
	ip[10] = ip[11] = 0xff;                /* header checksum */
	ip[iph + 6] = ip[iph + 7] = 0xff;      /* UDP checksum */
	ip[iph + FRAME_UDP_HLEN + 4] = 0xff;   /* FECN, BECN, reserved */
	return frame_crc32(frame_crc32(0, hdr, 8 + iph + FRAME_UDP_HLEN + FRAME_BTH_LEN),
			   buf + rest, icrc_off - rest);
}

bool frame_icrc_ok(const uint8_t *buf, const struct frame_parsed *p)
{
	return (p->layers & FRAME_L_ROCE) && frame_icrc(buf, p) == p->icrc;
}

uint32_t frame_icrc_ipv6(const uint8_t *ip6, size_t len)
{
	enum { HDRS = FRAME_IPV6_HLEN + FRAME_UDP_HLEN + FRAME_BTH_LEN };
	uint8_t hdr[8 + HDRS], *h = hdr + 8;

	if (len < HDRS + FRAME_ICRC_LEN)
		return 0;
	memset(hdr, 0xff, 8);
	memcpy(h, ip6, HDRS);
	h[0] |= 0x0f;                           /* traffic class, high nibble */
	h[1] = h[2] = h[3] = 0xff;              /* its low nibble, the flow label */
	h[7] = 0xff;                            /* hop limit */
	h[FRAME_IPV6_HLEN + 6] = h[FRAME_IPV6_HLEN + 7] = 0xff;   /* UDP checksum */
	h[FRAME_IPV6_HLEN + FRAME_UDP_HLEN + 4] = 0xff;          /* FECN, BECN, reserved */
	return frame_crc32(frame_crc32(0, hdr, sizeof(hdr)), ip6 + HDRS,
			   len - HDRS - FRAME_ICRC_LEN);
}

/* ---- builders ---- */
static void put_l2_l3(uint8_t *buf, const struct frame_addr *src, const struct frame_addr *dst,
		      const struct frame_ip_opts *o, size_t ip_total)
{
	struct frame_eth eth = { .ethertype = FRAME_ETHERTYPE_IPV4 };
	struct frame_ipv4 ip = {
		.hlen = FRAME_IPV4_HLEN, .tos = o ? o->tos : 0, .total_len = (uint16_t)ip_total,
		.id = o ? o->id : 0, .frag = (o && o->no_df) ? 0 : FRAME_IPV4_DF,
		.ttl = (o && o->ttl) ? o->ttl : 64, .proto = FRAME_IPPROTO_UDP,
		.src = src->ip, .dst = dst->ip,
	};

	memcpy(eth.dst, dst->mac, FRAME_ETH_ALEN);
	memcpy(eth.src, src->mac, FRAME_ETH_ALEN);
	frame_eth_encode(buf, FRAME_ETH_HLEN, &eth);
	frame_ipv4_encode(buf + FRAME_ETH_HLEN, FRAME_IPV4_HLEN, &ip);
}

#define L2L3L4 (FRAME_ETH_HLEN + FRAME_IPV4_HLEN + FRAME_UDP_HLEN)

int frame_build_udp(uint8_t *buf, size_t cap, const struct frame_addr *src,
		    const struct frame_addr *dst, const struct frame_ip_opts *ip,
		    const uint8_t *payload, size_t payload_len)
{
	size_t len = L2L3L4 + payload_len, wire = len < FRAME_ETH_MIN ? FRAME_ETH_MIN : len;
	uint8_t *udp = buf + FRAME_ETH_HLEN + FRAME_IPV4_HLEN;
	struct frame_udp uh = { .sport = src->port, .dport = dst->port,
				.len = (uint16_t)(FRAME_UDP_HLEN + payload_len) };

	if (payload_len > UINT16_MAX - FRAME_IPV4_HLEN - FRAME_UDP_HLEN || cap < wire)
		return -EMSGSIZE;
	put_l2_l3(buf, src, dst, ip, FRAME_IPV4_HLEN + FRAME_UDP_HLEN + payload_len);
	frame_udp_encode(udp, FRAME_UDP_HLEN, &uh);
	if (payload)
		memmove(udp + FRAME_UDP_HLEN, payload, payload_len);
	else
		memset(udp + FRAME_UDP_HLEN, 0, payload_len);
	qp_put16(udp + 6, frame_udp_csum(src->ip, dst->ip, udp, uh.len));
	memset(buf + len, 0, wire - len);
	return (int)wire;
}

int frame_build_roce(uint8_t *buf, size_t cap, const struct frame_roce_spec *s)
{
	const struct frame_opinfo *op = frame_opinfo(s->bth.opcode);
	size_t data = s->bth.opcode == FRAME_OP_CNP ? FRAME_CNP_PAYLOAD : s->payload_len;
	size_t pad = s->bth.opcode == FRAME_OP_CNP ? 0 : (4 - data % 4) % 4;
	size_t udp_len = FRAME_UDP_HLEN + FRAME_BTH_LEN + op->ext_len + data + pad + FRAME_ICRC_LEN;
	size_t len = FRAME_ETH_HLEN + FRAME_IPV4_HLEN + udp_len, off, wire;
	struct frame_udp uh = { .sport = s->src.port, .dport = FRAME_ROCEV2_PORT,
				.len = (uint16_t)udp_len };
	struct frame_bth bth = s->bth;
	struct frame_parsed p;
	uint32_t icrc;

	if (!(op->ext & FRAME_X_KNOWN) || (op->ext & FRAME_X_DETH) ||
	    ((op->ext & FRAME_X_ATOMIC) && s->payload_len))
		return -EINVAL;
	if (data > UINT16_MAX - 200)
		return -EMSGSIZE;
	wire = len < FRAME_ETH_MIN ? FRAME_ETH_MIN : len;
	if (cap < wire)
		return -EMSGSIZE;
	bth.pad = (uint8_t)pad;
	bth.tver = 0;
	if (!bth.pkey)
		bth.pkey = 0xffff;
	put_l2_l3(buf, &s->src, &s->dst, &s->ip, FRAME_IPV4_HLEN + udp_len);
	off = FRAME_ETH_HLEN + FRAME_IPV4_HLEN;
	off += (size_t)frame_udp_encode(buf + off, FRAME_UDP_HLEN, &uh);
	off += (size_t)frame_bth_encode(buf + off, FRAME_BTH_LEN, &bth);
	if (op->ext & FRAME_X_RETH)
		off += (size_t)frame_reth_encode(buf + off, FRAME_RETH_LEN, &s->reth);
	if (op->ext & FRAME_X_ATOMIC)
		off += (size_t)frame_atomiceth_encode(buf + off, FRAME_ATOMICETH_LEN, &s->atomic);
	if (op->ext & FRAME_X_AETH)
		off += (size_t)frame_aeth_encode(buf + off, FRAME_AETH_LEN, &s->aeth);
	if (op->ext & FRAME_X_ATOMICACK)
		off += (size_t)frame_atomicack_encode(buf + off, FRAME_ATOMICACKETH_LEN,
						      s->atomic_orig);
	if (op->ext & (FRAME_X_IMMDT | FRAME_X_IETH)) {
		qp_put32(buf + off, s->imm);
		off += 4;
	}
	if (s->payload && s->bth.opcode != FRAME_OP_CNP)
		memmove(buf + off, s->payload, data);
	else
		memset(buf + off, 0, data);
	off += data;
	memset(buf + off, 0, pad + FRAME_ICRC_LEN + (wire - len));
	if (s->no_icrc)
		return (int)wire;
	if (frame_parse(&p, buf, len) < 0 || !(p.layers & FRAME_L_ROCE))
		return -EINVAL;
	icrc = frame_icrc(buf, &p);
	off = len - FRAME_ICRC_LEN;
	buf[off] = (uint8_t)icrc;
	buf[off + 1] = (uint8_t)(icrc >> 8);
	buf[off + 2] = (uint8_t)(icrc >> 16);
	buf[off + 3] = (uint8_t)(icrc >> 24);
	return (int)wire;
}

int frame_build_arp(uint8_t *buf, size_t cap, uint16_t op, const uint8_t sha[FRAME_ETH_ALEN],
		    uint32_t spa, const uint8_t tha[FRAME_ETH_ALEN], uint32_t tpa)
{
	struct frame_eth eth = { .ethertype = FRAME_ETHERTYPE_ARP };
	struct frame_arp arp = { .op = op, .spa = spa, .tpa = tpa };
	size_t len = FRAME_ETH_HLEN + FRAME_ARP_LEN;

	if (cap < FRAME_ETH_MIN)
		return -EMSGSIZE;
	memcpy(arp.sha, sha, FRAME_ETH_ALEN);
	memcpy(arp.tha, tha, FRAME_ETH_ALEN);
	if (op == FRAME_ARP_REQUEST)
		memset(eth.dst, 0xff, FRAME_ETH_ALEN);
	else
		memcpy(eth.dst, tha, FRAME_ETH_ALEN);
	memcpy(eth.src, sha, FRAME_ETH_ALEN);
	frame_eth_encode(buf, cap, &eth);
	frame_arp_encode(buf + FRAME_ETH_HLEN, cap - FRAME_ETH_HLEN, &arp);
	memset(buf + len, 0, FRAME_ETH_MIN - len);
	return FRAME_ETH_MIN;
}
