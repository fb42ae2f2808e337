/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's pure core: token bucket, chunking, credits, window, fallback (the rules
 * are in qpace/gate.h). No clock, no I/O, no allocation: the shell (verbs/pace.c) reads the
 * rate table and the clock and passes both in.
 *
 * Fixed point: tokens are whole bytes plus a fraction in units of 1/(8e9) byte, so that
 * rate [bit/s] x dt [ns] adds exactly rate*dt units; 128-bit products, no float, no drift.
 *
 * Parameters (qp_gate_params; zero = default):
 *   burst_bytes     bytes that may gather beyond one piece, 64 B..64 MiB, default 8192
 *                   (the QP layer: 2 x MTU)
 *   chunk_bytes     largest piece of a splittable message, bytes, 64 B..64 MiB, default 4096
 *   line_bps        the QP's line rate, bits/s, 1 kb/s..10 Tb/s, default 10 Gb/s (the QP
 *                   layer: the link rate it registers with the agent)
 *   max_bps         ceiling on table rates, bits/s, 1 kb/s..10 Tb/s, default none (0)
 *   stale_ns        heartbeat age that means "no agent", 1 ms..60 s, default 100 ms
 *   hold_ns         agent lost: hold its last rate, window and credits this long,
 *                   1 ms..60 s; 0 = the agent's published policy, else 1 s
 *   safe_permille   then pace at this share of line_bps (never above the last agent rate),
 *                   1..1000 (1/1000); 0 = the agent's published policy, else 100 (1/10)
 *   credit_poll_ns  retry interval while waiting for credits or the in-flight cap,
 *                   1 us..1 s, default 20 us
 *   catchup_ns      how far a sender back late for tokens may catch up beyond the bucket,
 *                   as time at the rate in force (at least one chunk), 1 us..1 s,
 *                   default 100 us
 *
 * Why 1 s and 1/10 by default. The hold outlasts what a restart costs: the heartbeat goes
 * stale after 100 ms, a supervisor restarts qpaced, the QP layer reconnects after 100, 200,
 * 400 ms; a restarted agent inside the hold finds its QPs still at the dead agent's rate.
 * The rate it holds was set for a network the agent no longer watches, so the hold stays
 * short, and after it a QP gets a tenth of its line: ten such QPs of one host behind one
 * bottleneck of their line rate (a whole host's agent gone during an incast) still sum to
 * no more than that link, and a lone one keeps making progress. Never the line rate, never
 * a fixed absolute rate (a 1 Gb/s fallback was 2.5x a 400 Mb/s QP's line), and never above
 * what the agent last set: a QP cut to 400 kb/s stays at 400 kb/s.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/gate.h"

#define FRAC_PER_BYTE (8u * QP_NS_PER_S)

__extension__ typedef unsigned __int128 gate_u128;

struct gate_param {
	const char *name;
	size_t offset;
	uint64_t def;   /* 0: zero is kept, and means `zero` */
	uint64_t min, max;
	const char *unit;
	const char *zero;
};

static const struct gate_param gate_params[] = {
	{ "burst_bytes", offsetof(struct qp_gate_params, burst_bytes), QP_GATE_DEF_BURST_BYTES,
	  QP_GATE_MIN_BYTES, QP_GATE_MAX_BYTES, "bytes", NULL },
	{ "chunk_bytes", offsetof(struct qp_gate_params, chunk_bytes), QP_GATE_DEF_CHUNK_BYTES,
	  QP_GATE_MIN_BYTES, QP_GATE_MAX_BYTES, "bytes", NULL },
	{ "line_bps", offsetof(struct qp_gate_params, line_bps), QP_GATE_DEF_LINE_BPS,
	  QP_GATE_MIN_BPS, QP_GATE_MAX_BPS, "bits/s", NULL },
	{ "max_bps", offsetof(struct qp_gate_params, max_bps), 0,
	  QP_GATE_MIN_BPS, QP_GATE_MAX_BPS, "bits/s", "none" },
	{ "stale_ns", offsetof(struct qp_gate_params, stale_ns), QP_GATE_DEF_STALE_NS,
	  QP_GATE_MIN_STALE_NS, QP_GATE_MAX_STALE_NS, "ns", NULL },
	{ "hold_ns", offsetof(struct qp_gate_params, hold_ns), 0,
	  QP_GATE_MIN_HOLD_NS, QP_GATE_MAX_HOLD_NS, "ns", "the agent's policy" },
	{ "safe_permille", offsetof(struct qp_gate_params, safe_permille), 0,
	  1, QP_GATE_MAX_PERMILLE, "/1000 of line_bps", "the agent's policy" },
	{ "credit_poll_ns", offsetof(struct qp_gate_params, credit_poll_ns),
	  QP_GATE_DEF_CREDIT_POLL_NS, QP_NS_PER_US, QP_NS_PER_S, "ns", NULL },
	{ "catchup_ns", offsetof(struct qp_gate_params, catchup_ns), QP_GATE_DEF_CATCHUP_NS,
	  QP_GATE_MIN_CATCHUP_NS, QP_GATE_MAX_CATCHUP_NS, "ns", NULL },
};

int qp_gate_params_resolve(struct qp_gate_params *p, char *err, size_t errlen)
{
	struct qp_gate_params out = *p;

	for (size_t i = 0; i < sizeof(gate_params) / sizeof(gate_params[0]); i++) {
		const struct gate_param *d = &gate_params[i];
		uint64_t v;

		memcpy(&v, (char *)&out + d->offset, sizeof(v));
		if (v == 0 && d->def == 0)
			continue;
		if (v == 0)
			v = d->def;
		if (v < d->min || v > d->max)
			return qp_errmsg(-EINVAL, err, errlen,
					 "gate %s %llu %s: accepted %llu..%llu%s%s%s", d->name,
					 (unsigned long long)v, d->unit,
					 (unsigned long long)d->min, (unsigned long long)d->max,
					 d->def ? "" : " (or 0 = ", d->def ? "" : d->zero,
					 d->def ? "" : ")");
		memcpy((char *)&out + d->offset, &v, sizeof(v));
	}
	*p = out;
	return 0;
}

uint64_t qp_gate_cap_bytes(const struct qp_gate *g)
{
	return g->p.chunk_bytes + g->p.burst_bytes;
}

uint64_t qp_gate_catchup_bytes(const struct qp_gate *g)
{
	uint64_t a = qp_bytes_in(g->rate_bps, g->p.catchup_ns);

	return a > g->p.chunk_bytes ? a : g->p.chunk_bytes;
}

qp_time_ns qp_gate_hold_ns(const struct qp_gate *g)
{
	return g->p.hold_ns ? g->p.hold_ns
	       : g->policy_hold_ns ? g->policy_hold_ns : QP_GATE_DEF_HOLD_NS;
}

qp_rate_bps qp_gate_safe_bps(const struct qp_gate *g)
{
	uint64_t pm = g->p.safe_permille ? g->p.safe_permille
		      : g->policy_safe_permille ? g->policy_safe_permille
		      : QP_GATE_DEF_SAFE_PERMILLE;
	qp_rate_bps r = (qp_rate_bps)((gate_u128)g->p.line_bps * pm / 1000);

	if (g->have_last && g->last_bps < r)
		r = g->last_bps;
	if (g->p.max_bps && g->p.max_bps < r)
		r = g->p.max_bps;
	return r < QP_GATE_MIN_BPS ? QP_GATE_MIN_BPS : r;
}

void qp_gate_init(struct qp_gate *g, const struct qp_gate_params *p, qp_time_ns now)
{
	memset(g, 0, sizeof(*g));
	g->p = *p;
	g->tokens_bytes = (int64_t)qp_gate_cap_bytes(g);
	g->last_ns = now;
	g->mode = QP_GATE_SAFE;
	g->rate_bps = qp_gate_safe_bps(g);
	g->fallback = QP_GATE_FB_COUNT; /* not known yet: the first verdict reports it */
}

/* Tokens earned from last_ns to now at the rate in force, up to the cap; for a sender back
 * after a wait for tokens, up to cap + the catch-up allowance. Tokens already above the
 * limit stay (a catch-up not yet spent), none are added. */
static void gate_refill(struct qp_gate *g, qp_time_ns now)
{
	int64_t cap = (int64_t)qp_gate_cap_bytes(g), limit = cap, was = g->tokens_bytes;
	gate_u128 room, add;

	if (now <= g->last_ns)
		return;
	if (g->behind && now > g->due_ns) {
		limit += (int64_t)qp_gate_catchup_bytes(g);
		g->stats.late_takes++;
	}
	add = (gate_u128)g->rate_bps * (now - g->last_ns);
	g->last_ns = now;
	if (g->tokens_bytes >= limit) {
		if (limit == cap && g->tokens_bytes == cap)
			g->tokens_frac = 0;
		return;
	}
	room = (gate_u128)(uint64_t)(limit - g->tokens_bytes) * FRAC_PER_BYTE - g->tokens_frac;
	if (add >= room) {
		g->tokens_bytes = limit;
		g->tokens_frac = 0;
	} else {
		add += g->tokens_frac;
		g->tokens_bytes += (int64_t)(add / FRAC_PER_BYTE);
		g->tokens_frac = (uint64_t)(add % FRAC_PER_BYTE);
	}
	if (g->tokens_bytes > cap)
		g->stats.catchup_bytes += (uint64_t)(g->tokens_bytes - (was > cap ? was : cap));
}

/* When the bucket will hold @need bytes (tokens < need). */
static qp_time_ns gate_ready_at(const struct qp_gate *g, uint64_t need, qp_time_ns now)
{
	gate_u128 units = (gate_u128)(uint64_t)((int64_t)need - g->tokens_bytes) * FRAC_PER_BYTE -
			  g->tokens_frac;

	return now + (qp_time_ns)((units + g->rate_bps - 1) / g->rate_bps);
}

static enum qp_gate_fallback gate_source(const struct qp_gate *g,
					 const struct qp_gate_input *in, qp_time_ns now)
{
	if (!in->have_table)
		return QP_GATE_FB_NO_TABLE;
	if (in->heartbeat_ns == 0 || qp_time_since(now, in->heartbeat_ns) > g->p.stale_ns)
		return QP_GATE_FB_STALE;
	if (!in->have_slot)
		return QP_GATE_FB_NO_SLOT;
	if (in->slot.rate_bps == 0)
		return QP_GATE_FB_NO_RATE;
	return QP_GATE_FB_NONE;
}

/* No agent rate in force: hold the last one while the hold lasts, else the safe rate. */
static qp_rate_bps gate_fallback_rate(struct qp_gate *g, qp_time_ns now)
{
	if (g->mode == QP_GATE_AGENT)
		g->lost_ns = now;
	if (g->have_last && qp_time_since(now, g->lost_ns) < qp_gate_hold_ns(g)) {
		g->mode = QP_GATE_HOLD;
		return g->last_bps < g->p.line_bps ? g->last_bps : g->p.line_bps;
	}
	g->mode = QP_GATE_SAFE;
	return qp_gate_safe_bps(g);
}

/* Take the rate, mode, fallback state and credit generation from the input; returns events. */
static unsigned gate_update(struct qp_gate *g, const struct qp_gate_input *in, qp_time_ns now)
{
	enum qp_gate_fallback fb = gate_source(g, in, now);
	enum qp_gate_mode was = g->mode;
	qp_rate_bps ceiling = g->p.max_bps ? g->p.max_bps : QP_GATE_MAX_BPS;
	qp_rate_bps rate;
	unsigned ev = 0;

	if (fb == QP_GATE_FB_NONE) {
		rate = in->slot.rate_bps;
		rate = rate < QP_GATE_MIN_BPS ? QP_GATE_MIN_BPS : rate > ceiling ? ceiling : rate;
		g->mode = QP_GATE_AGENT;
		g->have_last = true;
		g->last = in->slot;
		g->last_bps = rate;
		g->policy_hold_ns = in->policy_hold_ns;
		g->policy_safe_permille = in->policy_safe_permille;
		if (!g->credit_gen_known || in->slot.gen != g->credit_gen) {
			g->stats.credit_resets += g->credit_gen_known;
			g->credit_gen = in->slot.gen;
			g->credit_gen_known = true;
			g->credit_spent_bytes = 0;
		}
	} else {
		rate = gate_fallback_rate(g, now);
	}
	if (fb != g->fallback) {
		if (fb != QP_GATE_FB_NONE) {
			ev |= QP_GATE_EV_FALLBACK;
			g->stats.fallback_entries++;
		} else if (g->fallback != QP_GATE_FB_COUNT) {
			ev |= QP_GATE_EV_RECOVERED;
			g->stats.recoveries++;
		}
		g->fallback = fb;
	}
	if (was == QP_GATE_HOLD && g->mode == QP_GATE_SAFE) {
		ev |= QP_GATE_EV_SAFE;
		g->stats.safe_entries++;
	}
	if (rate != g->rate_bps) {
		ev |= QP_GATE_EV_RATE;
		g->stats.rate_changes++;
		g->rate_bps = rate;
	}
	return ev;
}

bool qp_gate_wants_inflight(const struct qp_gate *g, const struct qp_gate_input *in)
{
	return (in->have_slot && in->slot.cap_bytes) ||
	       (g->have_last && g->last.cap_bytes && g->mode != QP_GATE_SAFE);
}

/* The in-flight cap: may a piece of *n bytes start now? A splittable piece is cut to the
 * whole units that fit; with nothing in flight one unit (or the whole SEND) goes anyway. */
static bool window_fit(const struct qp_gate_input *in, uint64_t cap, bool whole, uint64_t *n)
{
	uint64_t used = in->inflight_bytes;
	uint64_t unit = in->unit_bytes ? in->unit_bytes : 1;
	uint64_t room = used < cap ? cap - used : 0, fit;

	if (*n <= room)
		return true;
	if (used == 0) {
		if (!whole && *n > unit)
			*n = unit;
		return true;
	}
	if (whole)
		return false;
	fit = room / unit * unit;
	if (!fit)
		return false;
	*n = fit;
	return true;
}

/* A closed verdict; remembered for qp_gate_closed_again when the agent's slot decided it. */
static int gate_closed(struct qp_gate *g, struct qp_gate_verdict *v,
		       enum qp_gate_wait_reason wait, qp_time_ns retry_ns)
{
	v->wait = wait;
	v->retry_ns = retry_ns;
	if (g->mode == QP_GATE_AGENT) {
		g->closed = wait;
		g->closed_retry_ns = retry_ns;
	}
	return -EAGAIN;
}

bool qp_gate_closed_again(struct qp_gate *g, qp_time_ns heartbeat_ns, qp_time_ns now,
			  struct qp_gate_verdict *v)
{
	if (g->closed == QP_GATE_OPEN || g->mode != QP_GATE_AGENT || now < g->last_ns ||
	    heartbeat_ns == 0 || qp_time_since(now, heartbeat_ns) > g->p.stale_ns ||
	    (g->closed == QP_GATE_WAIT_TOKENS && now >= g->closed_retry_ns))
		return false;
	memset(v, 0, sizeof(*v));
	v->wait = g->closed;
	v->fallback = g->fallback;
	v->mode = g->mode;
	v->rate_bps = g->rate_bps;
	switch (g->closed) {
	case QP_GATE_WAIT_TOKENS:
		g->stats.token_waits++;
		v->retry_ns = g->closed_retry_ns;
		break;
	case QP_GATE_WAIT_CREDITS:
		g->stats.credit_waits++;
		v->retry_ns = now + g->p.credit_poll_ns;
		break;
	default:
		g->stats.window_waits++;
		v->retry_ns = now + g->p.credit_poll_ns;
		break;
	}
	return true;
}

int qp_gate_take(struct qp_gate *g, const struct qp_gate_input *in, uint64_t want,
		 unsigned flags, qp_time_ns now, struct qp_gate_verdict *v)
{
	bool whole = flags & QP_GATE_WHOLE, credits;
	uint64_t n, need, cap = qp_gate_cap_bytes(g);
	const struct qp_rate_entry *e;

	memset(v, 0, sizeof(*v));
	g->closed = QP_GATE_OPEN;
	gate_refill(g, now);                  /* up to now at the old rate */
	g->behind = false;                    /* until this verdict is a wait for tokens */
	v->events = gate_update(g, in, now);  /* the new rate applies from now on */
	v->fallback = g->fallback;
	v->mode = g->mode;
	v->rate_bps = g->rate_bps;
	n = whole || want < g->p.chunk_bytes ? want : g->p.chunk_bytes;
	/* The agent's slot as last in force: this call's in AGENT mode, the lost agent's in
	 * HOLD; none in SAFE. */
	e = g->mode == QP_GATE_SAFE ? NULL : &g->last;
	credits = e && (e->flags & QP_RATE_F_CREDITS);
	if (credits && want) {
		uint64_t avail = e->credit_bytes - g->credit_spent_bytes;

		if ((int64_t)avail <= 0) {
			g->stats.credit_waits++;
			return gate_closed(g, v, QP_GATE_WAIT_CREDITS, now + g->p.credit_poll_ns);
		}
		if (!whole && n > avail)
			n = avail;
	}
	if (e && e->cap_bytes && in->have_inflight && want &&
	    !window_fit(in, e->cap_bytes, whole, &n)) {
		g->stats.window_waits++;
		return gate_closed(g, v, QP_GATE_WAIT_WINDOW, now + g->p.credit_poll_ns);
	}
	need = n < cap ? n : cap;
	/* With QP_GATE_NO_TOKENS the NIC paces: the bucket is not looked at. */
	if (!(flags & QP_GATE_NO_TOKENS) && g->tokens_bytes < (int64_t)need) {
		g->stats.token_waits++;
		g->behind = true;
		g->due_ns = gate_ready_at(g, need, now);
		return gate_closed(g, v, QP_GATE_WAIT_TOKENS, g->due_ns);
	}
	if (!(flags & QP_GATE_NO_TOKENS))
		g->tokens_bytes -= (int64_t)n;
	else
		g->stats.nic_pieces++;
	if (credits)
		g->credit_spent_bytes += n;
	g->stats.debt_pieces += n > cap;
	g->stats.pieces++;
	g->stats.bytes += n;
	if (g->mode != QP_GATE_AGENT)
		g->stats.fallback_bytes += n;
	if (g->mode == QP_GATE_SAFE)
		g->stats.safe_bytes += n;
	v->bytes = n;
	return 0;
}

const char *qp_gate_fallback_str(enum qp_gate_fallback f)
{
	static const char *const names[QP_GATE_FB_COUNT] = {
		[QP_GATE_FB_NONE] = "agent rate",
		[QP_GATE_FB_NO_TABLE] = "no rate table (no agent)",
		[QP_GATE_FB_NO_SLOT] = "no slot for this QP in the rate table (not registered?)",
		[QP_GATE_FB_STALE] = "agent heartbeat stale (agent dead or stuck?)",
		[QP_GATE_FB_NO_RATE] = "agent has not set a rate yet",
	};

	return (unsigned)f < QP_GATE_FB_COUNT ? names[f] : "UNKNOWN";
}

const char *qp_gate_mode_str(enum qp_gate_mode m)
{
	static const char *const names[QP_GATE_MODE_COUNT] = {
		[QP_GATE_AGENT] = "agent", [QP_GATE_HOLD] = "hold", [QP_GATE_SAFE] = "safe",
	};

	return (unsigned)m < QP_GATE_MODE_COUNT ? names[m] : "UNKNOWN";
}
