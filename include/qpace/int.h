/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* In-band network telemetry: the hop record a switch writes for a data frame.
 *
 * The fields follow HPCC's IntHop (switch-side PushHop at dequeue: timestamp, cumulative
 * bytes sent on the egress port, egress queue bytes, port rate), widened to full integers:
 * qpace's own feedback format carries 64-bit counters, so no 24/20-bit wrap handling is
 * needed downstream. The wire encoding lives in qpace/feedback.h.
 */
#ifndef QPACE_INT_H
#define QPACE_INT_H

#include <stdint.h>
#include "qpace/time.h"
#include "qpace/rate.h"

/* HPCC's IntHeader::maxHop. A report with more hops is rejected, never truncated. */
#define QP_INT_MAX_HOPS 5

struct qp_int_hop {
	uint32_t switch_id;    /* switch that wrote the record */
	uint16_t port;         /* its egress port */
	qp_time_ns ts_ns;      /* dequeue time, switch clock */
	uint64_t tx_bytes;     /* cumulative bytes sent on the egress port, excluding this frame */
	uint32_t qlen_bytes;   /* egress queue bytes at dequeue */
	qp_rate_bps link_bps;  /* egress link rate */
};

#endif
