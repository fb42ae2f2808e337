/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCTCP (agent/cc/dctcp.c): its state, for monitoring and tests. The controller is used
 * through qpace/cc.h like every algorithm; this only lets a reader look inside one. */
#ifndef QPACE_DCTCP_H
#define QPACE_DCTCP_H

#include <stdint.h>
#include "qpace/cc.h"

struct cc_dctcp_stats {
	uint64_t alpha_updates;  /* alpha updates (one per window of data) */
	uint64_t ecn_cuts;       /* cuts by 1 - alpha/2 */
};

struct cc_dctcp_view {
	double alpha;
	double cwnd_bytes, ssthresh_bytes;
	struct cc_dctcp_stats stats;
};

/* 0, or -EINVAL when @cc is not a DCTCP controller. */
int cc_dctcp_view(const struct cc *cc, struct cc_dctcp_view *out);

#endif
