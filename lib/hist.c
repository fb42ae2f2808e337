/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "qpace/hist.h"

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < QP_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);                 /* 4..63 */
	return (e - 3u) * QP_HIST_SUB + (unsigned)((v >> (e - 4u)) & (QP_HIST_SUB - 1));
}

static uint64_t bucket_top(unsigned i)
{
	unsigned e, m;

	if (i < QP_HIST_SUB)
		return i;
	e = i / QP_HIST_SUB + 3u;
	m = i % QP_HIST_SUB;
	if (e == 63 && m == QP_HIST_SUB - 1)
		return UINT64_MAX;
	return (((uint64_t)QP_HIST_SUB + m + 1) << (e - 4u)) - 1;
}

void qp_hist_add(struct qp_hist *h, uint64_t v)
{
	h->b[bucket_of(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

uint64_t qp_hist_quantile(const struct qp_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)(h->count - 1)) + 1;
	for (unsigned i = 0; i < QP_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			return bucket_top(i) < h->max ? bucket_top(i) : h->max;
	}
	return h->max;
}
