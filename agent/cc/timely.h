/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TIMELY (agent/cc/timely.c): its state, for monitoring and tests. The controller is used
 * through qpace/cc.h like every algorithm; this only lets a reader look inside one. */
#ifndef QPACE_TIMELY_H
#define QPACE_TIMELY_H

#include <stdint.h>
#include "qpace/cc.h"

struct cc_timely_view {
	double rate_bps;
	double gradient;          /* the EWMA of RTT differences over min_rtt */
	qp_time_ns rtt_ns;        /* the RTT of the last update */
	uint64_t updates;
};

/* 0, or -EINVAL when @cc is not a TIMELY controller. */
int cc_timely_view(const struct cc *cc, struct cc_timely_view *out);

#endif
