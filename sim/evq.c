/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The event queue: a 4-ary min-heap on (time, sequence); see evq.h. Four children per
 * node halve the levels a pop walks down (a million pending events: 10, not 20), and the
 * four children of a node lie side by side in memory; (time, sequence) is a total order,
 * so the events come out in exactly the order a binary heap gives. */
#include <errno.h>
#include <stdlib.h>

#include "evq.h"

#define EVQ_ARITY 4

int sim_evq_init(struct sim_evq *q, size_t cap)
{
	*q = (struct sim_evq){ .cap = cap ? cap : 1024 };
	q->h = malloc(q->cap * sizeof(*q->h));
	return q->h ? 0 : -ENOMEM;
}

void sim_evq_fini(struct sim_evq *q)
{
	free(q->h);
	*q = (struct sim_evq){ 0 };
}

static inline bool before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sim_evq_push(struct sim_evq *q, qp_time_ns t, uint32_t type, uint32_t id)
{
	struct sim_ev e = { .t = t, .seq = q->seq, .type = type, .id = id };
	size_t i;

	if (q->n == q->cap) {
		struct sim_ev *h = realloc(q->h, 2 * q->cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		q->h = h;
		q->cap *= 2;
	}
	q->seq++;
	q->pushed++;
	/* sift up: move parents down until e fits */
	for (i = q->n++; i > 0; ) {
		size_t parent = (i - 1) / EVQ_ARITY;
		if (!before(&e, &q->h[parent]))
			break;
		q->h[i] = q->h[parent];
		i = parent;
	}
	q->h[i] = e;
	if (q->n > q->max_n)
		q->max_n = q->n;
	return 0;
}

bool sim_evq_pop(struct sim_evq *q, struct sim_ev *out)
{
	struct sim_ev last;
	size_t i = 0, n;

	if (!q->n)
		return false;
	*out = q->h[0];
	q->popped++;
	n = --q->n;
	if (!n)
		return true;
	last = q->h[n];
	/* sift down: move the smallest child up until the last element fits */
	for (;;) {
		size_t c = EVQ_ARITY * i + 1, end = c + EVQ_ARITY, m = c;
		if (c >= n)
			break;
		if (end > n)
			end = n;
		for (size_t k = c + 1; k < end; k++)
			if (before(&q->h[k], &q->h[m]))
				m = k;
		if (!before(&q->h[m], &last))
			break;
		q->h[i] = q->h[m];
		i = m;
	}
	q->h[i] = last;
	return true;
}
