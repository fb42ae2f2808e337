/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The PFC frame (IEEE 802.1Qbb): encoder, bounds-checked decoder, pause time (see
 * qpace/frame.h). */
#include <errno.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/frame.h"
#include "qpace/rate.h"

static const uint8_t pfc_dst[FRAME_ETH_ALEN] = FRAME_PFC_DST_INIT;

int frame_pfc_decode(struct frame_pfc *out, const uint8_t *buf, size_t len)
{
	if (len < FRAME_PFC_LEN)
		return -EMSGSIZE;
	if (memcmp(buf, pfc_dst, FRAME_ETH_ALEN) || frame_mac_is_multicast(buf + 6) ||
	    qp_get16(buf + 12) != FRAME_ETHERTYPE_MAC_CONTROL ||
	    qp_get16(buf + 14) != FRAME_PFC_OPCODE || buf[16] != 0)
		return -EBADMSG;
	memcpy(out->src, buf + 6, FRAME_ETH_ALEN);
	out->enable = buf[17];
	for (int i = 0; i < FRAME_PFC_PRIOS; i++)
		out->quanta[i] = qp_get16(buf + 18 + 2 * i);
	return FRAME_PFC_LEN;
}

int frame_build_pfc(uint8_t *buf, size_t cap, const struct frame_pfc *p)
{
	if (cap < FRAME_ETH_MIN)
		return -EMSGSIZE;
	if (frame_mac_is_multicast(p->src))
		return -EINVAL;
	memset(buf, 0, FRAME_ETH_MIN);
	memcpy(buf, pfc_dst, FRAME_ETH_ALEN);
	memcpy(buf + 6, p->src, FRAME_ETH_ALEN);
	qp_put16(buf + 12, FRAME_ETHERTYPE_MAC_CONTROL);
	qp_put16(buf + 14, FRAME_PFC_OPCODE);
	buf[17] = p->enable;
	for (int i = 0; i < FRAME_PFC_PRIOS; i++)
		qp_put16(buf + 18 + 2 * i, p->quanta[i]);
	return FRAME_ETH_MIN;
}

uint64_t frame_pfc_quanta_ns(uint16_t quanta, uint64_t bps)
{
	return bps ? qp_tx_time_ns((uint64_t)quanta * (FRAME_PFC_QUANTUM_BITS / 8), bps) : 0;
}
