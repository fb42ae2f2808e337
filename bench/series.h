/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A time series of per-QP sending rates, sampled by the incast loop (rates.csv: time_s,
 * then one column per sender in Mb/s). Memory is fixed at create; samples beyond the
 * capacity are counted, not stored. */
#ifndef BENCH_SERIES_H
#define BENCH_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

struct series {
	unsigned cols;
	size_t cap, n;
	uint64_t dropped;
	qp_time_ns *t_ns;
	qp_rate_bps *v;              /* n x cols */
	const char *col_name;        /* columns NAME0_mbps, NAME1_mbps...; NULL: qp1_mbps... */
};

int series_create(struct series *s, unsigned cols, size_t cap);
void series_free(struct series *s);
/* One row: @v has cols values. */
void series_add(struct series *s, qp_time_ns t_ns, const qp_rate_bps *v);
/* CSV with times relative to @t0_ns. 0 or -errno. */
int series_write_csv(const struct series *s, const char *path, qp_time_ns t0_ns);

#endif
