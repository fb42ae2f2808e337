/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The IA credit schedule of a QP found on the wire (wire_credit.h). */
#include "wire_credit.h"

#include <string.h>

#include "wire_rate.h"

static uint64_t grant_rate(const struct wire_credit *w, qp_time_ns last, qp_time_ns interval)
{
	uint64_t frames = 0;

	for (unsigned i = 0; i < w->n; i++) {
		unsigned k = (w->head + WIRE_CREDIT_HIST - 1 - i) % WIRE_CREDIT_HIST;

		if (last - w->hist[k].t >= interval && i)
			break;
		frames += w->hist[k].frames;
	}
	return frames ? frames : 1;
}

static bool same(const struct qp_tc_rate *a, const struct qp_tc_rate *b)
{
	return (a->flags & QP_TC_F_CREDIT) == (b->flags & QP_TC_F_CREDIT) &&
	       a->credit_frames == b->credit_frames && a->credit_next_ns == b->credit_next_ns &&
	       a->credit_interval_ns == b->credit_interval_ns &&
	       a->credit_until_ns == b->credit_until_ns && a->credit_win == b->credit_win &&
	       a->credit_gen == b->credit_gen;
}

/* Frames of @mtu payload per @interval_ns at @bps, rounded up. */
static uint64_t floor_frames(qp_rate_bps bps, qp_time_ns interval_ns, uint32_t mtu)
{
	unsigned __int128 bits = (unsigned __int128)bps * interval_ns;
	uint64_t frame_bits = ((uint64_t)mtu + WIRE_ROCE_OVERHEAD) * 8u * QP_NS_PER_S;

	return (uint64_t)((bits + frame_bits - 1) / frame_bits);
}

bool wire_credit_fill(struct wire_credit *w, const struct agent_qp_credit *c, uint32_t mtu,
		      qp_rate_bps floor_bps, struct qp_tc_rate *r)
{
	uint64_t win, least;

	r->flags &= ~(uint32_t)QP_TC_F_CREDIT;
	/* Gating off: the last grant's fields stay, without the flag (the program reads them
	 * only under it), so the entry still says what the flow had been granted. */
	r->credit_frames = w->last.credit_frames;
	r->credit_next_ns = w->last.credit_next_ns;
	r->credit_interval_ns = w->last.credit_interval_ns;
	r->credit_until_ns = w->last.credit_until_ns;
	r->credit_win = w->last.credit_win;
	r->credit_gen = w->last.credit_gen;
	if (c->gated && mtu) {
		if (c->gen != w->gen) {
			w->gen = c->gen;
			w->seen_bytes = 0;
			w->n = w->head = 0;
		}
		if (c->gen_bytes / mtu > w->seen_bytes / mtu) {
			w->hist[w->head].t = c->last_ns;
			w->hist[w->head].frames = c->gen_bytes / mtu - w->seen_bytes / mtu;
			w->head = (w->head + 1) % WIRE_CREDIT_HIST;
			if (w->n < WIRE_CREDIT_HIST)
				w->n++;
		}
		w->seen_bytes = c->gen_bytes;
		win = grant_rate(w, c->last_ns, c->interval_ns);
		least = floor_frames(floor_bps, c->interval_ns, mtu);
		if (win < least)
			win = least;
		r->flags |= QP_TC_F_CREDIT;
		r->credit_frames = c->gen_bytes / mtu;
		r->credit_next_ns = c->last_ns + c->interval_ns;
		r->credit_interval_ns = c->interval_ns;
		r->credit_until_ns = c->expiry_ns;
		r->credit_win = win > UINT32_MAX ? UINT32_MAX : (uint32_t)win;
		r->credit_gen = c->gen;
	}
	if (same(r, &w->last))
		return false;
	w->last = *r;
	return true;
}
