/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A log-linear histogram of nanosecond values: 16 buckets per power of two (values below
 * 16 exact), so a quantile is reported within 1/16 (6.25%) above the true value. Fixed
 * size, no allocation: add is a few instructions, fit for a per-datagram hot path. */
#ifndef QPACE_HIST_H
#define QPACE_HIST_H

#include <stdint.h>

#define QP_HIST_SUB 16u
#define QP_HIST_BUCKETS (61u * QP_HIST_SUB)

struct qp_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t b[QP_HIST_BUCKETS];
};

void qp_hist_add(struct qp_hist *h, uint64_t v);
/* The upper bound of the bucket holding the q-quantile (0..1); 0 when empty. */
uint64_t qp_hist_quantile(const struct qp_hist *h, double q);

#endif
