/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Synthetic INT reports: see int_feed.h. */
#include <string.h>

#include "int_feed.h"

void int_feed_init(struct int_feed *f, struct cc *cc, unsigned nhops,
		   const qp_rate_bps *link_bps, uint64_t window_bytes)
{
	memset(f, 0, sizeof(*f));
	f->cc = cc;
	f->nhops = nhops;
	f->window_bytes = window_bytes;
	for (unsigned i = 0; i < nhops; i++) {
		f->hops[i].switch_id = i + 1;
		f->hops[i].port = (uint16_t)(i + 1);
		f->hops[i].link_bps = link_bps[i];
		f->hops[i].ts_ns = 1000000; /* switch clocks need not start at 0 */
	}
}

unsigned int_feed_step(struct int_feed *f, qp_time_ns dt_ns, const double *util,
		       const uint32_t *qlen, uint64_t seq_step)
{
	struct cc_event ev = { .type = CC_EV_INT };

	f->now += dt_ns;
	f->seq += seq_step;
	for (unsigned i = 0; i < f->nhops; i++) {
		struct qp_int_hop *h = &f->hops[i];
		h->ts_ns += dt_ns;
		h->tx_bytes += (uint64_t)(util[i] * (double)h->link_bps * (double)dt_ns / 8e9 + 0.5);
		h->qlen_bytes = qlen[i];
	}
	ev.u.int_report.seq = f->seq;
	ev.u.int_report.snd_nxt = f->seq + f->window_bytes;
	ev.u.int_report.hops = f->hops;
	ev.u.int_report.nhops = f->nhops;
	return cc_event(f->cc, &ev, f->now);
}

unsigned int_feed_step_all(struct int_feed *f, qp_time_ns dt_ns, double util, uint32_t qlen,
			   uint64_t seq_step)
{
	double u[QP_INT_MAX_HOPS];
	uint32_t q[QP_INT_MAX_HOPS];

	for (unsigned i = 0; i < QP_INT_MAX_HOPS; i++) {
		u[i] = util;
		q[i] = qlen;
	}
	return int_feed_step(f, dt_ns, u, q, seq_step);
}
