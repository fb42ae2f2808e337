/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The actors' wake-ups: an indexed 4-ary heap of at most one wake-up per actor, and each
 * actor's ghosts; see wakeq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wakeq.h"

#define WAKEQ_ARITY 4

static inline bool key_lt(qp_time_ns t1, uint64_t s1, qp_time_ns t2, uint64_t s2)
{
	return t1 < t2 || (t1 == t2 && s1 < s2);
}

int sim_wakeq_init(struct sim_wakeq *w, uint32_t nactors, uint32_t solo)
{
	*w = (struct sim_wakeq){ .na = nactors, .solo = SIM_WAKEQ_NONE };
	if (solo != SIM_WAKEQ_NONE && solo >= nactors)
		return -EINVAL;
	w->solo = solo;
	w->a = calloc(nactors ? nactors : 1, sizeof(*w->a));
	w->h = calloc((size_t)nactors + 1, sizeof(*w->h));
	if (!w->a || !w->h) {
		sim_wakeq_fini(w);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nactors; i++)
		w->a[i].pos = SIM_WAKEQ_NONE;
	return 0;
}

void sim_wakeq_fini(struct sim_wakeq *w)
{
	for (uint32_t i = 0; w->a && i < w->na; i++) {
		for (uint32_t k = 0; k < w->a[i].gcap; k++)
			free(w->a[i].g[k].q);
		free(w->a[i].g);
	}
	free(w->a);
	free(w->h);
	*w = (struct sim_wakeq){ 0 };
}

/* ---- the heap: keys inline, each actor's place in it kept in its pos ---- */

static inline bool before(const struct sim_wake *x, const struct sim_wake *y)
{
	return key_lt(x->t, x->seq, y->t, y->seq);
}

static void sift_up(struct sim_wakeq *w, uint32_t i, struct sim_wake e)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / WAKEQ_ARITY;
		if (!before(&e, &w->h[parent]))
			break;
		w->h[i] = w->h[parent];
		w->a[w->h[i].id].pos = i;
		i = parent;
	}
	w->h[i] = e;
	w->a[e.id].pos = i;
}

uint32_t sim_wakeq_pop(struct sim_wakeq *w)
{
	uint32_t top, i = 0, n;
	struct sim_wake last;

	if (sim_wakeq_top(w) == &w->h[w->na]) {   /* the solo's, outside the heap */
		w->a[w->solo].pos = SIM_WAKEQ_NONE;
		return w->solo;
	}
	top = w->h[0].id;
	w->a[top].pos = SIM_WAKEQ_NONE;
	n = --w->n;
	if (!n)
		return top;
	last = w->h[n];
	for (;;) {
		uint32_t c = WAKEQ_ARITY * i + 1, end = c + WAKEQ_ARITY, m = c;
		if (c >= n)
			break;
		if (end > n)
			end = n;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(&w->h[k], &w->h[m]))
				m = k;
		if (!before(&w->h[m], &last))
			break;
		w->h[i] = w->h[m];
		w->a[w->h[i].id].pos = i;
		i = m;
	}
	w->h[i] = last;
	w->a[last.id].pos = i;
	return top;
}

/* ---- ghosts: an actor's stale events, by time ----
 * At one time the ghosts' sequences only ever take three steps: the wake-up that is moved
 * away leaves its own, the smallest (it ran first at that time); one moved back takes
 * the smallest and leaves its new one, the largest; and the time passes them from the
 * front. So each time has a deque of sequences, sorted, in an open-addressing table. */

#define GHOST_MIN_CAP 16u

static inline uint32_t ghost_hash(qp_time_ns t, uint32_t mask)
{
	return (uint32_t)((t * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static struct sim_ghost *ghost_find(const struct sim_actor *a, qp_time_ns t)
{
	uint32_t mask = a->gcap - 1;

	if (!a->gn)
		return NULL;
	for (uint32_t i = ghost_hash(t, mask); a->g[i].q; i = (i + 1) & mask)
		if (a->g[i].t == t)
			return &a->g[i];
	return NULL;
}

/* A new table holding the times not passed, a quarter full at most. */
static int ghost_rebuild(struct sim_actor *a, qp_time_ns now)
{
	uint32_t live = 0, cap = GHOST_MIN_CAP;
	struct sim_ghost *g;

	for (uint32_t i = 0; i < a->gcap; i++)
		live += a->g[i].q && a->g[i].t >= now;
	while ((uint64_t)(live + 1) * 4 > cap)
		cap *= 2;
	if (!(g = calloc(cap, sizeof(*g))))
		return -ENOMEM;
	for (uint32_t i = 0; i < a->gcap; i++) {
		struct sim_ghost *e = &a->g[i];
		if (!e->q)
			continue;
		if (e->t < now) {
			free(e->q);
			continue;
		}
		uint32_t k = ghost_hash(e->t, cap - 1);
		while (g[k].q)
			k = (k + 1) & (cap - 1);
		g[k] = *e;
	}
	free(a->g);
	a->g = g;
	a->gcap = cap;
	a->gn = live;
	return 0;
}

static inline uint64_t *ghost_at(struct sim_ghost *e, uint32_t k)
{
	return &e->q[(e->h + k) & (e->cap - 1)];
}

/* Room for one more sequence in @e's deque. */
static int ghost_room(struct sim_ghost *e)
{
	uint32_t cap = e->cap ? 2 * e->cap : 4;
	uint64_t *q;

	if (e->n < e->cap)
		return 0;
	if (!(q = malloc(cap * sizeof(*q))))
		return -ENOMEM;
	for (uint32_t k = 0; k < e->n; k++)
		q[k] = *ghost_at(e, k);
	free(e->q);
	e->q = q;
	e->h = 0;
	e->cap = cap;
	return 0;
}

/* The wake-up (@t, @seq) moved away stays as a ghost: the first at @t. Entries of times
 * passed stay until the table fills to half (lookups are at times not before now). */
static int ghost_leave(struct sim_actor *a, qp_time_ns t, uint64_t seq, qp_time_ns now)
{
	struct sim_ghost *e = ghost_find(a, t);

	if (!e) {
		uint32_t k;
		if ((uint64_t)(a->gn + 1) * 2 > a->gcap && ghost_rebuild(a, now))
			return -ENOMEM;
		k = ghost_hash(t, a->gcap - 1);
		while (a->g[k].q)
			k = (k + 1) & (a->gcap - 1);
		e = &a->g[k];
		*e = (struct sim_ghost){ .t = t };
		if (ghost_room(e))
			return -ENOMEM;   /* the slot stays free: q is NULL */
		a->gn++;
	} else if (ghost_room(e)) {
		return -ENOMEM;
	}
	e->h = (e->h - 1) & (e->cap - 1);
	e->q[e->h] = seq;
	e->n++;
	return 0;
}

/* A wake-up moved to @t (not before @now) with the new sequence @seq: if a ghost still
 * pending waits at @t, the first of them is the event that runs it (its sequence into
 * *@out) and @seq takes its place, the last at @t. Those at now before the event being
 * run (@cur_t, @cur_seq) were popped by the old engine: dropped. */
static bool ghost_take(struct sim_actor *a, qp_time_ns t, uint64_t seq, qp_time_ns now,
		       qp_time_ns cur_t, uint64_t cur_seq, uint64_t *out)
{
	struct sim_ghost *e = ghost_find(a, t);

	if (!e)
		return false;
	if (t == now && cur_t == now)
		while (e->n && e->q[e->h] < cur_seq) {
			e->h = (e->h + 1) & (e->cap - 1);
			e->n--;
		}
	if (!e->n)
		return false;
	*out = e->q[e->h];
	e->h = (e->h + 1) & (e->cap - 1);
	*ghost_at(e, e->n - 1) = seq;
	return true;
}

int sim_wakeq_move(struct sim_wakeq *w, uint32_t i, qp_time_ns t, uint64_t seq,
		   qp_time_ns now, qp_time_ns cur_t, uint64_t cur_seq)
{
	struct sim_actor *a = &w->a[i];
	uint64_t run_seq = seq;

	/* the wake-up it had stays, as a ghost (its time is later than @t) */
	if (a->pos != SIM_WAKEQ_NONE &&
	    ghost_leave(a, w->h[a->pos].t, w->h[a->pos].seq, now))
		return -ENOMEM;
	ghost_take(a, t, seq, now, cur_t, cur_seq, &run_seq);
	if (i == w->solo) {   /* its own slot, no heap */
		w->h[w->na] = (struct sim_wake){ .t = t, .seq = run_seq, .id = i };
		a->pos = w->na;
		return 0;
	}
	/* earlier than it was: up from its place, or from the end if it had none */
	sift_up(w, a->pos != SIM_WAKEQ_NONE ? a->pos : w->n++,
		(struct sim_wake){ .t = t, .seq = run_seq, .id = i });
	return 0;
}

qp_time_ns sim_wakeq_ghost_last(const struct sim_wakeq *w)
{
	qp_time_ns last = 0;

	for (uint32_t i = 0; i < w->na; i++)
		for (uint32_t k = 0; k < w->a[i].gcap; k++)
			if (w->a[i].g[k].n && w->a[i].g[k].t > last)
				last = w->a[i].g[k].t;
	return last;
}
