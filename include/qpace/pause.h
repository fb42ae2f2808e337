/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a receiver of PFC frames does with them (IEEE 802.1Qbb 36.1.3): one pause timer
 * per priority. A frame that enables priority i with time[i] > 0 pauses it until now +
 * time[i] quanta at the link's rate (restarting a running pause); time[i] = 0 (XON) ends
 * it at once; priorities whose enable bit is clear are untouched. Pure: time passed in.
 * The switch's egress ports (switchsim/pfc.c) and the soft hosts (verbs/soft_host.c)
 * both keep one, so they count pauses and paused time alike. */
#ifndef QPACE_PAUSE_H
#define QPACE_PAUSE_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/rate.h"
#include "qpace/time.h"

struct qp_pause {
	qp_time_ns until[FRAME_PFC_PRIOS];     /* paused while now < until */
	qp_time_ns since[FRAME_PFC_PRIOS];     /* start of the running pause */
	qp_time_ns closed_ns[FRAME_PFC_PRIOS]; /* paused time of the pauses that ended */
	uint64_t pauses[FRAME_PFC_PRIOS];      /* frames with time > 0 for the priority */
	uint64_t xons[FRAME_PFC_PRIOS];        /* frames with time 0 */
	uint8_t on;                            /* bit i: until[i] != 0 (the common 0: no
						* priority has a pause to look at) */
};

/* Apply @f, received at @now over a link of @bps. Returns the frame's enable vector. */
unsigned qp_pause_rx(struct qp_pause *s, const struct frame_pfc *f, qp_rate_bps bps,
		     qp_time_ns now);
/* Pauses that have run out by @now end (so qp_pause_until stops naming them). */
void qp_pause_expire(struct qp_pause *s, qp_time_ns now);
/* Priority @prio is paused at @now. */
bool qp_pause_active(const struct qp_pause *s, unsigned prio, qp_time_ns now);
/* When priority @prio may send again: its pause's end, or 0 when no pause runs (a pause
 * that ran out stays named until qp_pause_expire or the next frame). */
qp_time_ns qp_pause_until(const struct qp_pause *s, unsigned prio);
/* The earliest qp_pause_until of any priority that names a pause, else QP_TIME_NEVER. */
qp_time_ns qp_pause_next(const struct qp_pause *s);
/* Total time @prio has been paused up to @now. */
qp_time_ns qp_pause_time(const struct qp_pause *s, unsigned prio, qp_time_ns now);

#endif
