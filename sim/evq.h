/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The event queue of the virtual-time engine: a 4-ary min-heap of small events keyed by
 * (time, insertion sequence), so events at the same nanosecond run in the order they were
 * scheduled, on every machine. O(log n) push and pop; the events live in the heap's own
 * array (grown by doubling, never shrunk), so a run in steady state allocates nothing.
 *
 * Events are not cancelled; the actors that reschedule themselves (hosts, the fabric) keep
 * their one wake-up in wakeq.h's heap beside this one, sharing its sequence numbers. */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

struct sim_ev {
	qp_time_ns t;
	uint64_t seq;          /* insertion order: the tie-break */
	uint32_t type;         /* what happens (the engine's enum) */
	uint32_t id;           /* to whom: a host, a timer... */
};

struct sim_evq {
	struct sim_ev *h;      /* h[0] is the earliest */
	size_t n, cap;
	uint64_t seq;          /* next insertion number */
	uint64_t pushed, popped, max_n;
};

/* @cap events preallocated (0: 1024). 0 or -ENOMEM. */
int sim_evq_init(struct sim_evq *q, size_t cap);
void sim_evq_fini(struct sim_evq *q);
/* 0, or -ENOMEM (the queue is unchanged). */
int sim_evq_push(struct sim_evq *q, qp_time_ns t, uint32_t type, uint32_t id);
/* The earliest event into *@out; false when the queue is empty. */
bool sim_evq_pop(struct sim_evq *q, struct sim_ev *out);
/* The next sequence number, taken for a wake-up moved in the wakeq (wakeq.h) instead. */
static inline uint64_t sim_evq_take_seq(struct sim_evq *q)
{
	return q->seq++;
}
/* The earliest event's time, QP_TIME_NEVER when empty. */
static inline qp_time_ns sim_evq_next(const struct sim_evq *q)
{
	return q->n ? q->h[0].t : QP_TIME_NEVER;
}

#endif
