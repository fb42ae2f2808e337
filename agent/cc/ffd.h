/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* FFD (agent/cc/ffd.c): the sender's level state, for monitoring and tests.
 *
 * The controller itself is used through qpace/cc.h like every algorithm; this header only
 * lets a reader look inside one without changing it.
 */
#ifndef QPACE_FFD_H
#define QPACE_FFD_H

#include <stdint.h>
#include "qpace/cc.h"

struct cc_ffd_stats {
	uint64_t entered[CC_LEVEL_SEVERE + 1]; /* levels entered (a change of level), by level */
	uint64_t repeats;      /* the current level received again: acknowledged, nothing else */
	uint64_t acks;         /* CC_ACT_ACK_LEVEL returned */
	uint64_t cuts_merged;  /* cut levels within T of a cut at least as deep: no cut */
	uint64_t held_acks;    /* ACKs a level 1-3 kept from growing the window */
};

struct cc_ffd_view {
	int level;             /* current level 0..3, -1 before the first */
	double cwnd_bytes, ssthresh_bytes;
	struct cc_ffd_stats stats;
};

/* The state of @cc as it is (no timers run). 0, or -EINVAL when @cc is not an FFD
 * controller. */
int cc_ffd_view(const struct cc *cc, struct cc_ffd_view *out);

#endif
