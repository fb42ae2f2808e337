/* The pacing gate's pure core: token bucket, chunking, credits, fallback (the rules are in
 * qpace/gate.h). No clock, no I/O, no allocation: the shell (verbs/pace.c) reads the rate
 * table and the clock and passes both in.
 *
 * Fixed point: tokens are whole bytes plus a fraction in units of 1/(8e9) byte, so that
 * rate [bit/s] x dt [ns] adds exactly rate*dt units; 128-bit products, no float, no drift.
 *
 * Parameters (qp_gate_params; zero = default):
 *   burst_bytes     bytes that may gather beyond one piece, 64 B..64 MiB, default 8192
 *                   (the QP layer: 2 x MTU)
 *   chunk_bytes     largest piece of a splittable message, bytes, 64 B..64 MiB, default 4096
 *   fallback_bps    rate with no live agent, bits/s, 1 kb/s..10 Tb/s, default 1 Gb/s
 *   max_bps         ceiling on table rates, bits/s, 1 kb/s..10 Tb/s, default none (0)
 *   stale_ns        heartbeat age that means "no agent", 1 ms..60 s, default 100 ms
 *   credit_poll_ns  retry interval while waiting for credits or the in-flight cap,
 *                   1 us..1 s, default 20 us
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
	uint64_t def;   /* 0: zero means "none" and is kept */
	uint64_t min, max;
	const char *unit;
};

static const struct gate_param gate_params[] = {
	{ "burst_bytes", offsetof(struct qp_gate_params, burst_bytes), QP_GATE_DEF_BURST_BYTES,
	  QP_GATE_MIN_BYTES, QP_GATE_MAX_BYTES, "bytes" },
	{ "chunk_bytes", offsetof(struct qp_gate_params, chunk_bytes), QP_GATE_DEF_CHUNK_BYTES,
	  QP_GATE_MIN_BYTES, QP_GATE_MAX_BYTES, "bytes" },
	{ "fallback_bps", offsetof(struct qp_gate_params, fallback_bps), QP_GATE_DEF_FALLBACK_BPS,
	  QP_GATE_MIN_BPS, QP_GATE_MAX_BPS, "bits/s" },
	{ "max_bps", offsetof(struct qp_gate_params, max_bps), 0,
	  QP_GATE_MIN_BPS, QP_GATE_MAX_BPS, "bits/s" },
	{ "stale_ns", offsetof(struct qp_gate_params, stale_ns), QP_GATE_DEF_STALE_NS,
	  QP_GATE_MIN_STALE_NS, QP_GATE_MAX_STALE_NS, "ns" },
	{ "credit_poll_ns", offsetof(struct qp_gate_params, credit_poll_ns),
	  QP_GATE_DEF_CREDIT_POLL_NS, QP_NS_PER_US, QP_NS_PER_S, "ns" },
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
					 "gate %s %llu %s: accepted %llu..%llu%s", d->name,
					 (unsigned long long)v, d->unit,
					 (unsigned long long)d->min, (unsigned long long)d->max,
					 d->def ? "" : " (or 0 = none)");
		memcpy((char *)&out + d->offset, &v, sizeof(v));
	}
	*p = out;
	return 0;
}

uint64_t qp_gate_cap_bytes(const struct qp_gate *g)
{
	return g->p.chunk_bytes + g->p.burst_bytes;
}

void qp_gate_init(struct qp_gate *g, const struct qp_gate_params *p, qp_time_ns now)
{
	memset(g, 0, sizeof(*g));
	g->p = *p;
	g->tokens_bytes = (int64_t)qp_gate_cap_bytes(g);
	g->last_ns = now;
	g->rate_bps = p->fallback_bps;
	g->fallback = QP_GATE_FB_COUNT; /* not known yet: the first verdict reports it */
}

/* Tokens earned from last_ns to now at the rate in force, up to the cap. */
static void gate_refill(struct qp_gate *g, qp_time_ns now)
{
	int64_t cap = (int64_t)qp_gate_cap_bytes(g);
	gate_u128 room, add;

	if (now <= g->last_ns)
		return;
	add = (gate_u128)g->rate_bps * (now - g->last_ns);
	g->last_ns = now;
	if (g->tokens_bytes >= cap) {
		g->tokens_bytes = cap;
		g->tokens_frac = 0;
		return;
	}
	room = (gate_u128)(uint64_t)(cap - g->tokens_bytes) * FRAC_PER_BYTE - g->tokens_frac;
	if (add >= room) {
		g->tokens_bytes = cap;
		g->tokens_frac = 0;
		return;
	}
	add += g->tokens_frac;
	g->tokens_bytes += (int64_t)(add / FRAC_PER_BYTE);
	g->tokens_frac = (uint64_t)(add % FRAC_PER_BYTE);
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

/* Take the rate, fallback state and credit generation from the input; returns events. */
static unsigned gate_update(struct qp_gate *g, const struct qp_gate_input *in, qp_time_ns now)
{
	enum qp_gate_fallback fb = gate_source(g, in, now);
	qp_rate_bps ceiling = g->p.max_bps ? g->p.max_bps : QP_GATE_MAX_BPS;
	qp_rate_bps rate = g->p.fallback_bps;
	unsigned ev = 0;

	if (fb == QP_GATE_FB_NONE) {
		rate = in->slot.rate_bps;
		rate = rate < QP_GATE_MIN_BPS ? QP_GATE_MIN_BPS : rate > ceiling ? ceiling : rate;
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
	if (rate != g->rate_bps) {
		ev |= QP_GATE_EV_RATE;
		g->stats.rate_changes++;
		g->rate_bps = rate;
	}
	if (in->have_slot && (!g->credit_gen_known || in->slot.gen != g->credit_gen)) {
		g->stats.credit_resets += g->credit_gen_known;
		g->credit_gen = in->slot.gen;
		g->credit_gen_known = true;
		g->credit_spent_bytes = 0;
	}
	return ev;
}

/* The in-flight cap: may a piece of *n bytes start now? A splittable piece is cut to the
 * whole units that fit; with nothing in flight one unit (or the whole SEND) goes anyway. */
static bool window_fit(const struct qp_gate_input *in, bool whole, uint64_t *n)
{
	uint64_t cap = in->slot.cap_bytes, used = in->inflight_bytes;
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

int qp_gate_take(struct qp_gate *g, const struct qp_gate_input *in, uint64_t want,
		 unsigned flags, qp_time_ns now, struct qp_gate_verdict *v)
{
	bool whole = flags & QP_GATE_WHOLE, credits;
	uint64_t n, need, cap = qp_gate_cap_bytes(g);

	memset(v, 0, sizeof(*v));
	gate_refill(g, now);                  /* up to now at the old rate */
	v->events = gate_update(g, in, now);  /* the new rate applies from now on */
	v->fallback = g->fallback;
	v->rate_bps = g->rate_bps;
	n = whole || want < g->p.chunk_bytes ? want : g->p.chunk_bytes;
	credits = g->fallback == QP_GATE_FB_NONE && (in->slot.flags & QP_RATE_F_CREDITS);
	if (credits && want) {
		uint64_t avail = in->slot.credit_bytes - g->credit_spent_bytes;

		if ((int64_t)avail <= 0) {
			g->stats.credit_waits++;
			v->wait = QP_GATE_WAIT_CREDITS;
			v->retry_ns = now + g->p.credit_poll_ns;
			return -EAGAIN;
		}
		if (!whole && n > avail)
			n = avail;
	}
	if (g->fallback == QP_GATE_FB_NONE && in->slot.cap_bytes && in->have_inflight && want &&
	    !window_fit(in, whole, &n)) {
		g->stats.window_waits++;
		v->wait = QP_GATE_WAIT_WINDOW;
		v->retry_ns = now + g->p.credit_poll_ns;
		return -EAGAIN;
	}
	need = n < cap ? n : cap;
	if (g->tokens_bytes < (int64_t)need) {
		g->stats.token_waits++;
		v->wait = QP_GATE_WAIT_TOKENS;
		v->retry_ns = gate_ready_at(g, need, now);
		return -EAGAIN;
	}
	g->tokens_bytes -= (int64_t)n;
	if (credits)
		g->credit_spent_bytes += n;
	g->stats.debt_pieces += n > cap;
	g->stats.pieces++;
	g->stats.bytes += n;
	if (g->fallback != QP_GATE_FB_NONE)
		g->stats.fallback_bytes += n;
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
