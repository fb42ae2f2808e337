/* The event queue: a binary heap on (time, sequence); see evq.h. */
#include <errno.h>
#include <stdlib.h>

#include "evq.h"

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

static bool before(const struct sim_ev *a, const struct sim_ev *b)
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
		size_t parent = (i - 1) / 2;
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
	/* sift down: move the smaller child up until the last element fits */
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&q->h[c + 1], &q->h[c]))
			c++;
		if (!before(&q->h[c], &last))
			break;
		q->h[i] = q->h[c];
		i = c;
	}
	q->h[i] = last;
	return true;
}
