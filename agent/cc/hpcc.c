/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hpcc: High Precision Congestion Control, as its reference ns-3 code does it.
 *
 * Source: Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019; the
 * reference simulator alibaba-edu/High-Precision-Congestion-Control (9f4be2a),
 * simulation/src/point-to-point/model/rdma-hw.cc (HandleAckHp, UpdateRateHp). The code is
 * rate-based (the paper's Algorithm 1 is window-based), single-rate mode (MULTI_RATE 0).
 *
 * Per INT report, for each hop i against that hop's record in the previous report:
 *
 *   tau_i  = ts_i - ts_i'                                      (ns)
 *   txRate = (txBytes_i - txBytes_i') * 8 / tau_i              (bits/s)
 *   u_i    = txRate / B_i + min(qlen_i, qlen_i') * 8 / (B_i * T)
 *
 * The most congested hop rules: u = max_i u_i, dt = min(tau of that hop, T). Then
 *
 *   U      = (U * (T - dt) + u * dt) / T                       (EWMA over one base RTT)
 *   max_c  = U / eta
 *   if max_c >= 1 or incStage >= maxStage:  R = Rc / max_c + R_AI,  incStage = 0
 *   else:                                   R = Rc + R_AI,          incStage + 1
 *   R clamped to [min_rate, line rate];  W = R * T  (in-flight cap, see below)
 *
 * A report whose seq is beyond last_update_seq makes a full update: the reference rate Rc
 * and incStage take the new values and last_update_seq = snd_nxt, so Rc moves once per
 * RTT. Any other report is a fast reaction: only the pacing rate R changes, computed from
 * the unchanged Rc and incStage (the EWMA and the stored hops do move). With fast_react=0
 * such reports are ignored entirely, as in the reference.
 *
 * Initial state: R = Rc = line rate (or init_rate, below), U = 1, incStage = 0. The
 * first report, and any report whose hop count, switch ids or ports differ from the
 * previous one, only stores the hops and sets last_update_seq = snd_nxt: there is nothing
 * comparable to measure against.
 *
 * Where qpace is more careful than the reference (whose counters are 24/20-bit and whose
 * hops never go back in time):
 *   - tau = 0 (two records with the same switch timestamp): the hop gives no sample and its
 *     previous record is kept, so its bytes count in the next interval. No division by 0.
 *     A report where no hop gives a sample changes nothing (not even last_update_seq).
 *   - A timestamp or byte counter going back (switch restart, reordered report) is treated
 *     like a path change: the report becomes the new baseline.
 *   - The in-flight cap is cap_bytes = W + MTU - 1. The reference sends while in flight
 *     < W, i.e. up to W + MTU - 1 bytes; qpace's senders send only while in flight + one
 *     packet <= cap_bytes. Without the MTU - 1 a window of a few packets would round down
 *     and bind below R (at 3 Gb/s and T = 10 us, W = 3.8 packets: 3 would fit, 2.4 Gb/s).
 *   - A hop with u = 0 still counts (the reference starts its max at 0 and skips it); a
 *     U of 0 makes the update jump to the line rate instead of dividing by zero.
 *
 * Parameters (key=value, units as cc.c parses them):
 *   eta         target utilization, fraction, (0, 1], default 0.95
 *   max_stage   additive stages before a multiplicative step, 0..1000, default 5
 *               (the reference experiments use 0: every update is R = Rc*eta/U + R_AI)
 *   rate_ai     R_AI, bits/s, 0..10T, default 0 = line/2500 (40 Mb/s at 100G, run.py's);
 *               must not exceed the line rate
 *   min_rate    rate floor, bits/s, 0..10T, default 0 = line/1000 (100 Mb/s at 100G);
 *               must not exceed the line rate
 *   fast_react  0/1, default 1
 *   window      0/1, default 1: cap bytes in flight at R*T
 *   init_rate   first R and Rc, bits/s, 0..10T, default 0 = line rate (the reference's
 *               start); at least min_rate (refused below it), at most the line rate.
 *               A deviation for senders that cannot take back what they committed at
 *               the start: qpaced's QPs found on the wire (--wire-start), whose first
 *               frames the tc program stamps before any INT report is back
 *
 * Cost: every handler is O(hops) with no allocation.
 *
 * The params, state and stats structs are in hpcc_core.h, because acc.c embeds them; this
 * file implements the core functions declared there and exports cc_hpcc_ops.
 */
#include "cc_algs.h"
#include "cc_check.h"
#include "hpcc_core.h"

#define HPCC_AI_DIVISOR 2500u  /* default R_AI = line / 2500 */
#define HPCC_MIN_DIVISOR 1000u /* default min rate = line / 1000 */
#define HPCC_MIN_MAX_C 1e-9    /* floor of U/eta: U = 0 means "jump to line rate" */

static const struct cc_param hpcc_params_table[] = {
	HPCC_PARAM_ENTRIES(0),
	{ .name = NULL },
};

/* ---- check ---- */

int hpcc_core_check(const struct hpcc_params *p, const struct cc_path *path, char *err,
		    size_t errlen, const char *alg)
{
	static const struct cc_rate_field capped[] = {
		{ "min_rate", offsetof(struct hpcc_params, min_rate) },
		{ "rate_ai", offsetof(struct hpcc_params, rate_ai) },
		{ "init_rate", offsetof(struct hpcc_params, init_rate) },
	};

	int rc = cc_check_rates_le_line(alg, p, capped, sizeof(capped) / sizeof(capped[0]), path,
					err, errlen);

	return rc ? rc : cc_check_init_rate(alg, p->init_rate, p->min_rate, HPCC_MIN_DIVISOR,
					    path, err, errlen);
}

static int hpcc_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	return hpcc_core_check(params, path, err, errlen, "hpcc");
}

/* ---- core ---- */

static unsigned set_rate(struct hpcc_core *h, struct cc *cc, qp_rate_bps rate)
{
	uint64_t cap = CC_CAP_NONE;

	if (h->p.window)
		cap = cc_rate_window(rate, h->t_ns) + cc->path.mtu_bytes - 1;
	cc->rate_bps = rate;
	cc->cap_bytes = cap;
	return CC_ACT_RATE;
}

void hpcc_core_init(struct hpcc_core *h, struct cc *cc, const struct hpcc_params *p)
{
	qp_rate_bps line = cc->path.line_bps;

	*h = (struct hpcc_core){ .p = *p, .t_ns = cc->path.base_rtt_ns, .u = 1.0,
				 .rc_bps = (double)line };
	if (!h->p.rate_ai)
		h->p.rate_ai = line / HPCC_AI_DIVISOR ? line / HPCC_AI_DIVISOR : 1;
	if (!h->p.min_rate)
		h->p.min_rate = line / HPCC_MIN_DIVISOR ? line / HPCC_MIN_DIVISOR : 1;
	if (h->p.init_rate)   /* in [min_rate, line]: hpcc_core_check */
		h->rc_bps = (double)cc_clamp_rate((double)h->p.init_rate, h->p.min_rate, line);
	set_rate(h, cc, (qp_rate_bps)h->rc_bps);
}

unsigned hpcc_core_set_reference(struct hpcc_core *h, struct cc *cc, double rate_bps)
{
	qp_rate_bps r = cc_clamp_rate(rate_bps, h->p.min_rate, cc->path.line_bps);

	h->rc_bps = (double)r;
	h->inc_stage = 0;
	return set_rate(h, cc, r);
}

/* Can this report be measured against the stored one? Same hops, counters not going back. */
static bool comparable(const struct hpcc_core *h, const struct cc_int_report *r)
{
	if (r->nhops != h->prev_nhops)
		return false;
	for (unsigned i = 0; i < r->nhops; i++) {
		const struct qp_int_hop *a = &r->hops[i], *b = &h->prev[i];
		if (a->switch_id != b->switch_id || a->port != b->port || a->ts_ns < b->ts_ns ||
		    a->tx_bytes < b->tx_bytes)
			return false;
	}
	return true;
}

static void store_hops(struct hpcc_core *h, const struct cc_int_report *r)
{
	for (unsigned i = 0; i < r->nhops; i++)
		h->prev[i] = r->hops[i];
	h->prev_nhops = r->nhops;
}

/* u_i of one hop against its previous record; tau_ns > 0. */
static double hop_util(const struct qp_int_hop *cur, const struct qp_int_hop *prev,
		       qp_time_ns tau_ns, qp_time_ns t_ns)
{
	double b = (double)cur->link_bps;
	double tx_bps = (double)(cur->tx_bytes - prev->tx_bytes) * 8.0 * 1e9 / (double)tau_ns;
	uint32_t q = cur->qlen_bytes < prev->qlen_bytes ? cur->qlen_bytes : prev->qlen_bytes;

	return tx_bps / b + (double)q * 8.0 * 1e9 / (b * (double)t_ns);
}

enum hpcc_kind hpcc_core_observe(struct hpcc_core *h, const struct cc_int_report *r,
				 double *u_now)
{
	double best_u = -1.0;
	qp_time_ns best_dt = 0;
	bool full;

	h->stats.reports++;
	if (!comparable(h, r)) {
		store_hops(h, r);
		if (r->snd_nxt > h->last_update_seq)
			h->last_update_seq = r->snd_nxt;
		h->stats.baselines++;
		return HPCC_BASELINE;
	}
	full = r->seq > h->last_update_seq;
	if (!full && !h->p.fast_react) {
		h->stats.skipped++;
		return HPCC_SKIP;
	}
	for (unsigned i = 0; i < r->nhops; i++) {
		qp_time_ns tau = r->hops[i].ts_ns - h->prev[i].ts_ns;
		double u;

		if (tau == 0) { /* keep the previous record: its bytes count next time */
			h->stats.zero_tau_hops++;
			continue;
		}
		u = hop_util(&r->hops[i], &h->prev[i], tau, h->t_ns);
		if (u > best_u) {
			best_u = u;
			best_dt = tau < h->t_ns ? tau : h->t_ns;
		}
		h->prev[i] = r->hops[i];
	}
	if (best_u < 0) {
		h->stats.no_sample++;
		return HPCC_NO_SAMPLE;
	}
	h->u = (h->u * (double)(h->t_ns - best_dt) + best_u * (double)best_dt) / (double)h->t_ns;
	*u_now = best_u;
	return full ? HPCC_FULL : HPCC_FAST;
}

unsigned hpcc_core_react(struct hpcc_core *h, struct cc *cc, const struct cc_int_report *r,
			 bool full)
{
	double max_c = h->u / h->p.eta;
	double rate;
	uint32_t stage;
	qp_rate_bps r_new;

	if (max_c < HPCC_MIN_MAX_C)
		max_c = HPCC_MIN_MAX_C;
	if (max_c >= 1.0 || h->inc_stage >= h->p.max_stage) {
		rate = h->rc_bps / max_c + (double)h->p.rate_ai;
		stage = 0;
	} else {
		rate = h->rc_bps + (double)h->p.rate_ai;
		stage = h->inc_stage + 1;
	}
	r_new = cc_clamp_rate(rate, h->p.min_rate, cc->path.line_bps);
	if (full) {
		h->rc_bps = (double)r_new;
		h->inc_stage = stage;
		if (r->snd_nxt > h->last_update_seq)
			h->last_update_seq = r->snd_nxt;
		h->stats.full_updates++;
	} else {
		h->stats.fast_reactions++;
	}
	return set_rate(h, cc, r_new);
}

/* ---- cc_ops ---- */

static struct hpcc_state *to_hpcc(struct cc *cc)
{
	return (struct hpcc_state *)(void *)((char *)cc - offsetof(struct hpcc_state, cc));
}

static void hpcc_init(struct cc *cc, const void *params, qp_time_ns now)
{
	(void)now;
	hpcc_core_init(&to_hpcc(cc)->core, cc, params);
}

static unsigned hpcc_on_int(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct hpcc_core *h = &to_hpcc(cc)->core;
	const struct cc_int_report *r = &ev->u.int_report;
	double u;

	(void)now;
	switch (hpcc_core_observe(h, r, &u)) {
	case HPCC_FULL:
		return hpcc_core_react(h, cc, r, true);
	case HPCC_FAST:
		return hpcc_core_react(h, cc, r, false);
	default:
		return 0;
	}
}

const struct cc_ops cc_hpcc_ops = {
	.name = "hpcc",
	.summary = "HPCC (SIGCOMM'19) as its ns-3 reference: INT utilization, EWMA over T, "
		   "reference rate once per RTT, fast reaction per report",
	.params = hpcc_params_table,
	.params_size = sizeof(struct hpcc_params),
	.state_size = sizeof(struct hpcc_state),
	.check = hpcc_check,
	.init = hpcc_init,
	.on = { [CC_EV_INT] = hpcc_on_int },
};
