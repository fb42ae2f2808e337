/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The TCP window core (win_core.h). */
#include <errno.h>
#include <stdio.h>

#include "win_core.h"

int win_check(const char *alg, const struct win_params *p, char *err, size_t errlen)
{
	if (p->max_pkts && p->max_pkts < p->iw_pkts) {
		snprintf(err, errlen, "%s: max_cwnd=%u is below iw=%u (the largest window must "
			 "hold the first)", alg, p->max_pkts, p->iw_pkts);
		return -EINVAL;
	}
	return 0;
}

void win_init(struct win *w, const struct win_params *p, const struct cc_path *path)
{
	*w = (struct win){ .mss = path->mtu_bytes, .t_ns = path->base_rtt_ns };
	w->cwnd = (double)p->iw_pkts * w->mss;
	w->max_cwnd = (double)p->max_pkts * w->mss;
	w->ssthresh = p->ssthresh_bytes ? (double)p->ssthresh_bytes : 1e300;
}

static void clamp(struct win *w)
{
	if (w->max_cwnd > 0 && w->cwnd > w->max_cwnd)
		w->cwnd = w->max_cwnd;
	if (w->cwnd < w->mss)
		w->cwnd = w->mss;
}

bool win_slow_start(const struct win *w)
{
	return w->cwnd < w->ssthresh;
}

/* The ACK ends the recovery it began in: by PSN, or by time when none is known. */
static void recovery_end(struct win *w, const struct cc_ack *a, qp_time_ns now)
{
	if (!w->recovery)
		return;
	if (w->recover_psn && a->psn ? a->psn >= w->recover_psn : now >= w->recover_until)
		w->recovery = w->grow = false;
}

void win_on_ack(struct win *w, const struct cc_ack *a, bool hold, qp_time_ns now)
{
	double flight;

	recovery_end(w, a, now);
	if (hold || (w->recovery && !w->grow))
		return;
	/* less than half the window in flight: the sender limits, the window has not been
	 * tested, so it does not grow (a source without PSNs: always grows) */
	flight = a->psn && a->snd_psn > a->psn ? (double)(a->snd_psn - a->psn) * w->mss : 0;
	if (a->psn && a->snd_psn && flight + (double)a->bytes < w->cwnd / 2)
		return;
	if (win_slow_start(w))
		w->cwnd += (double)a->bytes;
	else
		w->cwnd += w->mss * (double)a->bytes / w->cwnd;
	clamp(w);
}

static void recovery_begin(struct win *w, const struct cc_loss *l, bool grow, qp_time_ns now)
{
	w->recovery = true;
	w->grow = grow;
	w->recover_psn = l->snd_psn;
	w->recover_until = now + w->t_ns;
}

static void halve(struct win *w)
{
	if (win_slow_start(w))
		w->stats.ss_exits++;
	w->ssthresh = w->cwnd / 2 > 2 * w->mss ? w->cwnd / 2 : 2 * w->mss;
}

void win_on_nak(struct win *w, const struct cc_loss *l, qp_time_ns now)
{
	if (w->recovery && (w->recover_psn && l->psn ? l->psn < w->recover_psn
						     : now < w->recover_until)) {
		w->stats.naks_held++;
		return;
	}
	w->stats.halvings++;
	halve(w);
	w->cwnd = w->ssthresh;
	clamp(w);
	recovery_begin(w, l, false, now);
}

void win_on_timeout(struct win *w, const struct cc_loss *l, qp_time_ns now)
{
	w->stats.timeouts++;
	if (l->count <= 1)
		halve(w);
	w->cwnd = w->mss;
	recovery_begin(w, l, true, now);
}

void win_cut(struct win *w, double factor)
{
	if (win_slow_start(w))
		w->stats.ss_exits++;
	w->stats.cuts++;
	w->cwnd *= factor;
	clamp(w);
	w->ssthresh = w->cwnd;
}

unsigned win_publish(const struct win *w, struct cc *cc)
{
	cc->rate_bps = cc->path.line_bps;
	cc->cap_bytes = (uint64_t)w->cwnd;
	return CC_ACT_RATE;
}
