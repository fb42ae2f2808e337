/* The actors' wake-ups (the hosts and the fabric): each actor has at most ONE pending
 * wake-up, kept in a small indexed 4-ary heap beside the event queue and moved earlier
 * in place (decrease-key) when the actor is woken sooner, instead of a new event pushed
 * beside a stale one. Keys are (time, sequence), sequences drawn from the event queue's
 * counter, so wake-ups and events interleave in one total order.
 *
 * The order is the one the engine had when it pushed a new event per wake-up and let the
 * stale ones be popped as no-ops: a wake-up is run by the first of the actor's events at
 * its time, and a stale event still pending at that time may be older (a smaller
 * sequence) than the one pushed. So each actor keeps its stale events' keys ("ghosts",
 * 8 bytes each, by time, dropped once their time has passed) and a wake-up moved to
 * a time that has a ghost takes the ghost's sequence; the new sequence stays as a ghost
 * in its place. Outputs are the same to the byte; only the events popped and the queue's
 * length fall. */
#ifndef SIM_WAKEQ_H
#define SIM_WAKEQ_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/time.h"

#define SIM_WAKEQ_NONE UINT32_MAX

struct sim_ghost {                /* the ghosts at one time */
	qp_time_ns t;
	uint64_t *q;                  /* their sequences, a ring, ascending; NULL: slot free */
	uint32_t h, n, cap;
};

struct sim_wake {
	qp_time_ns t;
	uint64_t seq;
	uint32_t id;                  /* the actor */
};

struct sim_actor {
	uint32_t pos;                 /* its wake-up's index in the heap; SIM_WAKEQ_NONE: none */
	uint32_t gn, gcap;            /* times held (some may have passed), table size */
	struct sim_ghost *g;          /* open addressing by time */
};

struct sim_wakeq {
	struct sim_actor *a;
	struct sim_wake *h;           /* h[0] wakes first */
	uint32_t n, na;
};

/* @nactors actors, none with a wake-up. 0 or -ENOMEM. */
int sim_wakeq_init(struct sim_wakeq *w, uint32_t nactors);
void sim_wakeq_fini(struct sim_wakeq *w);

/* Actor @i's pending wake-up, QP_TIME_NEVER when none. */
static inline qp_time_ns sim_wakeq_at(const struct sim_wakeq *w, uint32_t i)
{
	uint32_t pos = w->a[i].pos;

	return pos != SIM_WAKEQ_NONE ? w->h[pos].t : QP_TIME_NEVER;
}

/* Wake actor @i at @t, earlier than its pending wake-up (sim_wakeq_at) and not before
 * @now; @seq is the next sequence number (taken from the event queue). (@cur_t, @cur_seq)
 * is the key of the event being run, which says which ghosts have passed. 0 or -ENOMEM
 * (nothing changed). */
int sim_wakeq_move(struct sim_wakeq *w, uint32_t i, qp_time_ns t, uint64_t seq,
		   qp_time_ns now, qp_time_ns cur_t, uint64_t cur_seq);

/* The earliest wake-up's key; false when none is pending. */
static inline bool sim_wakeq_first(const struct sim_wakeq *w, qp_time_ns *t, uint64_t *seq)
{
	if (!w->n)
		return false;
	*t = w->h[0].t;
	*seq = w->h[0].seq;
	return true;
}

/* Take the earliest wake-up out (its actor has none pending then); the actor's id. */
uint32_t sim_wakeq_pop(struct sim_wakeq *w);

/* The latest time of any ghost (QP_TIME_NEVER's opposite, 0, when none): the old engine
 * popped those stale events before it found its queue empty. */
qp_time_ns sim_wakeq_ghost_last(const struct sim_wakeq *w);

#endif
