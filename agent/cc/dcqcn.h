/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN (agent/cc/dcqcn.c): the reaction-point state, for monitoring and tests.
 *
 * The controller itself is used through qpace/cc.h like every algorithm; this header only
 * lets a reader look inside one without changing it.
 */
#ifndef QPACE_DCQCN_H
#define QPACE_DCQCN_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/cc.h"

/* One counter per thing the reaction point did. Ticks are counted as periods elapsed,
 * even when a late cc_timer applied many of them at once in closed form. */
struct cc_dcqcn_stats {
	uint64_t cnps;          /* CNPs accepted */
	uint64_t decreases;     /* rate cuts, the first-CNP cut included */
	uint64_t floor_hits;    /* cuts that stopped at min_rate */
	uint64_t alpha_ticks;   /* alpha periods elapsed since the first CNP */
	uint64_t inc_ticks;     /* increase-timer periods run */
	uint64_t catch_ups;     /* calls that applied more than one increase period at once */
};

struct cc_dcqcn_view {
	bool started;           /* a CNP has arrived; before it nothing runs */
	double alpha;           /* congestion estimate, [0, 1] */
	double rate_bps;        /* current rate (cc->rate_bps is this, truncated) */
	double target_bps;      /* target rate of the recovery */
	uint32_t stage;         /* increase-timer periods since the last cut (saturates) */
	struct cc_dcqcn_stats stats;
};

/* The state @cc would have after cc_timer(cc, @now), computed on a copy: @cc is not
 * changed. 0, or -EINVAL when @cc is not a DCQCN controller. */
int cc_dcqcn_view(const struct cc *cc, qp_time_ns now, struct cc_dcqcn_view *out);

#endif
