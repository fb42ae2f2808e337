/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace rates: one type, bits per second. */
#ifndef QPACE_RATE_H
#define QPACE_RATE_H

#include <stdint.h>
#include "qpace/time.h"

typedef uint64_t qp_rate_bps;

#define QP_KBPS 1000ULL
#define QP_MBPS 1000000ULL
#define QP_GBPS 1000000000ULL

/* Serialisation time of @bytes at @bps, rounded up to the next ns; 0 for a zero rate is
 * never asked for (callers validate rates at configuration). 128-bit intermediate: exact
 * for any byte count and rate that fit in 64 bits. */
static inline qp_time_ns qp_tx_time_ns(uint64_t bytes, qp_rate_bps bps)
{
	__extension__ unsigned __int128 bits_ns = (unsigned __int128)bytes * 8u * QP_NS_PER_S;
	return (qp_time_ns)((bits_ns + bps - 1) / bps);
}

/* Bytes that @bps carries in @ns, rounded down. */
static inline uint64_t qp_bytes_in(qp_rate_bps bps, qp_time_ns ns)
{
	__extension__ unsigned __int128 b = (unsigned __int128)bps * ns;
	return (uint64_t)(b / (8u * QP_NS_PER_S));
}

#endif
