/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Network-order (big-endian) loads and stores for the wire codecs. Callers check the
 * length first; these never do. */
#ifndef QPACE_BYTES_H
#define QPACE_BYTES_H

#include <stdint.h>

static inline uint16_t qp_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t qp_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t qp_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t qp_get64(const uint8_t *p)
{
	return (uint64_t)qp_get32(p) << 32 | qp_get32(p + 4);
}

static inline void qp_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void qp_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void qp_put32(uint8_t *p, uint32_t v)
{
	qp_put16(p, (uint16_t)(v >> 16));
	qp_put16(p + 2, (uint16_t)v);
}

static inline void qp_put64(uint8_t *p, uint64_t v)
{
	qp_put32(p, (uint32_t)(v >> 32));
	qp_put32(p + 4, (uint32_t)v);
}

#endif
