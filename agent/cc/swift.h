/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Swift (agent/cc/swift.c): its state, for monitoring and tests. The controller is used
 * through qpace/cc.h like every algorithm; this only lets a reader look inside one. */
#ifndef QPACE_SWIFT_H
#define QPACE_SWIFT_H

#include <stdint.h>
#include "qpace/cc.h"

struct cc_swift_view {
	double fcwnd, ecwnd;      /* packets */
	double target_ns;         /* the fabric target at the current fabric window */
	double srtt_ns;
	uint64_t samples, decreases;
};

/* 0, or -EINVAL when @cc is not a Swift controller. */
int cc_swift_view(const struct cc *cc, struct cc_swift_view *out);

#endif
