/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-sender replay windows (see qpace/fb_replay.h). */
#include <errno.h>
#include <stdlib.h>

#include "qpace/fb_replay.h"

#define MASK (FB_REPLAY_WINDOW - 1)
_Static_assert((FB_REPLAY_WINDOW & MASK) == 0 && FB_REPLAY_WINDOW < 256,
	       "the ring is indexed by a mask and counted in a byte");

int fb_replay_init(struct fb_replay *r, uint32_t max_senders, uint64_t start_ns)
{
	uint32_t ways = max_senders < FB_REPLAY_WAYS ? max_senders : FB_REPLAY_WAYS, nsets = 1;

	*r = (struct fb_replay){ 0 };
	if (max_senders < 1 || max_senders > FB_REPLAY_MAX_SENDERS)
		return -EINVAL;
	while (nsets * ways < max_senders)
		nsets *= 2;
	r->slots = calloc((size_t)nsets * ways, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	r->nsets = nsets;
	r->ways = ways;
	r->floor = start_ns;
	return 0;
}

void fb_replay_fini(struct fb_replay *r)
{
	free(r->slots);
	*r = (struct fb_replay){ 0 };
}

static uint32_t set_of(const struct fb_replay *r, uint32_t id)
{
	id ^= id >> 16;
	id *= 0x7feb352du;
	id ^= id >> 15;
	id *= 0x846ca68bu;
	id ^= id >> 16;
	return id & (r->nsets - 1);
}

static uint64_t *at(struct fb_replay_sender *s, unsigned i)
{
	return &s->seen[(s->head + i) & MASK];
}

/* The sender's highest accepted number (it has one: a sender enters with its first). */
static uint64_t top_of(struct fb_replay_sender *s)
{
	return *at(s, s->n - 1u);
}

/* Forget the smallest remembered number; the floor rises above it. */
static void forget_oldest(struct fb_replay_sender *s)
{
	s->floor = *at(s, 0) + 1;
	s->head = (uint8_t)((s->head + 1) & MASK);
	s->n--;
}

static int accept(struct fb_replay_sender *s, uint64_t seq)
{
	unsigned lo = 0, hi = s->n;

	if (s->n && seq > top_of(s)) {   /* in order: the usual case, no search */
		if (s->n == FB_REPLAY_WINDOW)
			forget_oldest(s);
		*at(s, s->n++) = seq;
		return 0;
	}
	if (seq < s->floor)
		return -ESTALE;
	while (lo < hi) {                /* the first remembered number >= seq */
		unsigned mid = (lo + hi) / 2;

		if (*at(s, mid) < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && *at(s, lo) == seq)
		return -EALREADY;
	if (s->n == FB_REPLAY_WINDOW) {
		if (lo == 0) {           /* older than all it remembers: accepted, forgotten */
			s->floor = seq + 1;
			return 0;
		}
		forget_oldest(s);
		lo--;
	}
	for (unsigned i = s->n; i > lo; i--)
		*at(s, i) = *at(s, i - 1);
	*at(s, lo) = seq;
	s->n++;
	return 0;
}

int fb_replay_check(struct fb_replay *r, uint32_t sender, uint64_t seq, uint64_t clock_ns)
{
	struct fb_replay_sender *set, *s = NULL, *victim = NULL;
	int rc;

	if (seq > clock_ns && seq - clock_ns > FB_REPLAY_AHEAD_NS)
		return -ERANGE;
	set = &r->slots[(size_t)set_of(r, sender) * r->ways];
	for (uint32_t i = 0; i < r->ways && !s; i++) {
		struct fb_replay_sender *c = &set[i];

		if (c->used && c->id == sender)
			s = c;
		else if (!victim || (victim->used && (!c->used || c->heard < victim->heard)))
			victim = c;
	}
	if (!s) {
		uint64_t floor = r->floor;

		if (victim->used && top_of(victim) >= floor)
			floor = top_of(victim) + 1;
		if (seq < floor)
			return -ESTALE;
		if (victim->used) {
			r->floor = floor;
			r->evictions++;
		} else {
			r->senders++;
		}
		*victim = (struct fb_replay_sender){ .id = sender, .used = 1, .floor = r->floor };
		s = victim;
	}
	rc = accept(s, seq);
	if (rc == 0)
		s->heard = ++r->tick;
	return rc;
}
