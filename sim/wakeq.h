/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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

/* One actor may be "solo": one woken so often (the fabric, after every frame) that a place
 * in the heap costs more than a comparison. Its wake-up is kept in the slot h[na], outside
 * the heap, and compared with the heap's first; its ghosts are kept as anyone's. The
 * order is the same total order of (time, sequence) keys. */
struct sim_wakeq {
	struct sim_actor *a;
	struct sim_wake *h;           /* h[0] wakes first of the heap's; h[na]: the solo's */
	uint32_t n, na;               /* in the heap; actors */
	uint32_t solo;                /* the solo actor, SIM_WAKEQ_NONE: none */
};

/* @nactors actors, none with a wake-up; @solo the one kept outside the heap (above), or
 * SIM_WAKEQ_NONE. 0 or -ENOMEM (and -EINVAL for a @solo not below @nactors). */
int sim_wakeq_init(struct sim_wakeq *w, uint32_t nactors, uint32_t solo);
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

/* Is the solo actor's wake-up pending? */
static inline bool sim_wakeq_solo_on(const struct sim_wakeq *w)
{
	return w->solo != SIM_WAKEQ_NONE && w->a[w->solo].pos != SIM_WAKEQ_NONE;
}

/* Wake-ups pending, the solo's included. */
static inline uint32_t sim_wakeq_len(const struct sim_wakeq *w)
{
	return w->n + sim_wakeq_solo_on(w);
}

/* The earliest wake-up: h[0] or the solo's slot; NULL when none is pending. */
static inline const struct sim_wake *sim_wakeq_top(const struct sim_wakeq *w)
{
	const struct sim_wake *s = sim_wakeq_solo_on(w) ? &w->h[w->na] : NULL;

	if (!w->n)
		return s;
	if (s && (s->t < w->h[0].t || (s->t == w->h[0].t && s->seq < w->h[0].seq)))
		return s;
	return &w->h[0];
}

/* The earliest wake-up's key; false when none is pending. */
static inline bool sim_wakeq_first(const struct sim_wakeq *w, qp_time_ns *t, uint64_t *seq)
{
	const struct sim_wake *e = sim_wakeq_top(w);

	if (!e)
		return false;
	*t = e->t;
	*seq = e->seq;
	return true;
}

/* Take the earliest wake-up out (its actor has none pending then); the actor's id. */
uint32_t sim_wakeq_pop(struct sim_wakeq *w);

/* The latest time of any ghost (QP_TIME_NEVER's opposite, 0, when none): the old engine
 * popped those stale events before it found its queue empty. */
qp_time_ns sim_wakeq_ghost_last(const struct sim_wakeq *w);

#endif
