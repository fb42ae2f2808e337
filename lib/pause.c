/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PFC pause timers on the receiving side (see qpace/pause.h). */
#include "qpace/pause.h"

/* The running pause of @i ends at @t (at most its own end). */
static void close_at(struct qp_pause *s, unsigned i, qp_time_ns t)
{
	if (s->until[i] > s->since[i]) {
		qp_time_ns end = t < s->until[i] ? t : s->until[i];
		s->closed_ns[i] += qp_time_since(end, s->since[i]);
	}
	s->since[i] = s->until[i] = 0;
	s->on &= (uint8_t)~(1u << i);
}

unsigned qp_pause_rx(struct qp_pause *s, const struct frame_pfc *f, qp_rate_bps bps,
		     qp_time_ns now)
{
	for (unsigned i = 0; i < FRAME_PFC_PRIOS; i++) {
		if (!(f->enable & (1u << i)))
			continue;
		close_at(s, i, now);
		if (!f->quanta[i]) {
			s->xons[i]++;
			continue;
		}
		s->pauses[i]++;
		s->since[i] = now;
		s->until[i] = now + frame_pfc_quanta_ns(f->quanta[i], bps);
		s->on |= (uint8_t)(1u << i);
	}
	return f->enable;
}

void qp_pause_expire(struct qp_pause *s, qp_time_ns now)
{
	if (!s->on)
		return;
	for (unsigned i = 0; i < FRAME_PFC_PRIOS; i++)
		if (s->until[i] && s->until[i] <= now)
			close_at(s, i, now);
}

bool qp_pause_active(const struct qp_pause *s, unsigned prio, qp_time_ns now)
{
	return prio < FRAME_PFC_PRIOS && now < s->until[prio];
}

qp_time_ns qp_pause_until(const struct qp_pause *s, unsigned prio)
{
	return prio < FRAME_PFC_PRIOS ? s->until[prio] : 0;
}

qp_time_ns qp_pause_next(const struct qp_pause *s)
{
	qp_time_ns t = QP_TIME_NEVER;

	if (!s->on)
		return t;   /* the common case */
	for (unsigned i = 0; i < FRAME_PFC_PRIOS; i++)
		if (s->until[i] && s->until[i] < t)
			t = s->until[i];
	return t;
}

qp_time_ns qp_pause_time(const struct qp_pause *s, unsigned prio, qp_time_ns now)
{
	qp_time_ns t;

	if (prio >= FRAME_PFC_PRIOS)
		return 0;
	t = s->closed_ns[prio];
	if (s->until[prio] > s->since[prio])
		t += qp_time_since(now < s->until[prio] ? now : s->until[prio], s->since[prio]);
	return t;
}
