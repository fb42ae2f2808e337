/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RoCEv2 frames over IPv6 for tests (lib/frame.c builds IPv4 ones only): Ethernet / IPv6
 * (no extension headers) / UDP 4791 / BTH / payload / ICRC, the ICRC as rxe computes it. */
#ifndef QPACE_TEST_FRAME6_H
#define QPACE_TEST_FRAME6_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"

struct frame6_spec {
	uint8_t src_mac[6], dst_mac[6];
	uint8_t src[16], dst[16];
	uint8_t tclass;              /* DSCP << 2 | ECN */
	uint32_t flow_label;
	uint16_t sport;
	struct frame_bth bth;        /* pad is set from the payload */
	const uint8_t *payload;      /* after the BTH, the opcode's extension headers first;
				      * NULL: bytes of (uint8_t)psn */
	size_t payload_len;
};

/* Into @f (@cap bytes): the frame's length, or -EMSGSIZE. */
int frame6_build(uint8_t *f, size_t cap, const struct frame6_spec *s);

#endif
