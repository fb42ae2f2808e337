/* IA credit pacing, receiver side, in the style of IA-TCP (Hwang, Yoo, Choi, "IA-TCP: a
 * rate based incast-avoidance algorithm for TCP in data center networks", ICC 2012): the
 * receiver (the paper's aggregator) controls both how much each sender may send and when.
 *
 * For one receiving link of capacity C (bits/s) and base RTT, with n active senders:
 *
 *     W = max(1, floor(C·RTT / (8·MTU·n)))   messages of one MTU per grant
 *     Δ = max(0, n·W·MTU·8/C − RTT)          extra spacing when n·MTU exceeds C·RTT
 *     period = RTT + Δ                       each sender gets W·MTU bytes once per period
 *
 * The aggregate is n·W·MTU per period <= C·(RTT + Δ): with W >= 1 from the floor,
 * n·W·MTU <= C·RTT and Δ = 0; Δ > 0 only when n > C·RTT/MTU, which forces W = 1, and then
 * the period is exactly the time C needs for n MTUs. The paper's abstract confirms the
 * rate-based window-and-delay control; the formulas themselves come from qpace's design
 * notes (references.md §4), which clamp Δ at 0.
 *
 * Rules chosen here:
 *  - Integer arithmetic, 128-bit intermediates. n·W·MTU/C is rounded UP to the ns, so the
 *    period never gives the senders more than C carries in it.
 *  - A sender's first grant falls at a uniformly random time in [add, add + RTT + Δ]
 *    (splitmix64 seeded from the params; unbiased to within 2^-64 by multiply-shift), so
 *    senders added together do not fire together.
 *  - When n changes (add/remove), W, Δ and the period are recomputed at once. Senders
 *    already there keep their next grant time (their phase); that grant carries the new
 *    W, and the one after it comes one new period later.
 *  - A poll grants each due sender once. If the shell polled a period or more late, the
 *    older grants of that sender are dropped (stats.skipped), not sent in a burst, and the
 *    grant sent is the latest one on the sender's grid. So in steady state any half-open
 *    window of one period holds at most one grant per sender, whatever the poll times.
 *
 * Parameters (struct credit_params): link_bps > 0; rtt_ns > 0; mtu_bytes > 0;
 * max_senders in 1..CREDIT_MAX_SENDERS; seed any. At create the window for n = 1 and the
 * period for n = max_senders must fit (W < 2^32, period < 2^63 ns), so no later add or
 * remove can fail to recompute.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/credit.h"
#include "qpace/errmsg.h"

struct credit_sender {
	uint32_t id;
	qp_time_ns next_ns;       /* next grant */
};

struct credit_pacer {
	struct credit_params p;
	uint32_t n;               /* active senders: senders[0..n) */
	uint32_t w;               /* messages per grant; 0 when n = 0 */
	qp_time_ns delta_ns;
	qp_time_ns period_ns;     /* RTT + Δ; 0 when n = 0 */
	uint32_t cursor;          /* where the next poll starts scanning */
	uint64_t rng;             /* splitmix64 state */
	struct credit_stats stats;
	struct credit_sender senders[]; /* max_senders, allocated at create */
};

#define CREDIT_PERIOD_MAX_NS (UINT64_MAX / 2)

/* One row per input that must lie in [min, max]. */
struct credit_limit {
	const char *name;
	uint64_t value, min, max;
	const char *unit;
};

static int credit_check_limits(const struct credit_limit *l, size_t n, char *err,
			       size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].value < l[i].min || l[i].value > l[i].max)
			return qp_errmsg(-EINVAL, err, errlen,
					   "credit: %s=%llu is out of range: must be %llu..%llu %s",
					   l[i].name, (unsigned long long)l[i].value,
					   (unsigned long long)l[i].min,
					   (unsigned long long)l[i].max, l[i].unit);
	return 0;
}

int credit_window(qp_rate_bps link_bps, qp_time_ns rtt_ns, uint32_t mtu_bytes, uint32_t n,
		  uint32_t *w, qp_time_ns *delta_ns, char *err, size_t errlen)
{
	const struct credit_limit limits[] = {
		{ "link_bps", link_bps, 1, UINT64_MAX, "bits/s (link rate C)" },
		{ "rtt_ns", rtt_ns, 1, UINT64_MAX, "ns (base RTT)" },
		{ "mtu_bytes", mtu_bytes, 1, UINT32_MAX, "bytes (MTU)" },
		{ "n", n, 1, UINT32_MAX, "senders (active incoming QPs)" },
	};
	__extension__ unsigned __int128 bdp_bits = (unsigned __int128)link_bps * rtt_ns;
	__extension__ unsigned __int128 win, tx_ns;
	int rc = credit_check_limits(limits, sizeof(limits) / sizeof(limits[0]), err, errlen);

	if (rc)
		return rc;
	win = bdp_bits / ((unsigned __int128)8 * QP_NS_PER_S * mtu_bytes * n);
	if (win > UINT32_MAX)
		return qp_errmsg(-ERANGE, err, errlen,
				   "credit: window of %.3g messages (link_bps x rtt_ns / mtu_bytes) "
				   "exceeds %u", (double)win, UINT32_MAX);
	if (win == 0)
		win = 1;
	/* ceil(n·W·MTU·8 / C) in ns: the time C takes for one round of grants. No overflow:
	 * with the floor's W, n·W·MTU·8e9 <= C·RTT < 2^128; with W forced to 1, < 2^97. */
	tx_ns = ((unsigned __int128)n * win * mtu_bytes * 8 * QP_NS_PER_S + link_bps - 1) /
		link_bps;
	if (tx_ns > CREDIT_PERIOD_MAX_NS)
		return qp_errmsg(-ERANGE, err, errlen,
				   "credit: period for n=%u senders of mtu_bytes=%u at link_bps=%llu "
				   "is %.3g ns, beyond %.3g ns", n, mtu_bytes,
				   (unsigned long long)link_bps, (double)tx_ns,
				   (double)CREDIT_PERIOD_MAX_NS);
	*w = (uint32_t)win;
	*delta_ns = tx_ns > rtt_ns ? (qp_time_ns)tx_ns - rtt_ns : 0;
	return 0;
}

int credit_check(const struct credit_params *p, char *err, size_t errlen)
{
	const struct credit_limit limits[] = {
		{ "link_bps", p->link_bps, 1, UINT64_MAX, "bits/s (link rate C)" },
		{ "rtt_ns", p->rtt_ns, 1, CREDIT_PERIOD_MAX_NS, "ns (base RTT)" },
		{ "mtu_bytes", p->mtu_bytes, 1, UINT32_MAX, "bytes (MTU)" },
		{ "max_senders", p->max_senders, 1, CREDIT_MAX_SENDERS, "senders" },
	};
	uint32_t w;
	qp_time_ns d;
	int rc = credit_check_limits(limits, sizeof(limits) / sizeof(limits[0]), err, errlen);

	if (rc)
		return rc;
	/* The extremes: W is largest at n = 1, the period longest at n = max_senders. */
	rc = credit_window(p->link_bps, p->rtt_ns, p->mtu_bytes, 1, &w, &d, err, errlen);
	if (!rc)
		rc = credit_window(p->link_bps, p->rtt_ns, p->mtu_bytes, p->max_senders, &w, &d,
				   err, errlen);
	return rc;
}

struct credit_pacer *credit_create(const struct credit_params *p, char *err, size_t errlen)
{
	struct credit_pacer *cp;

	if (!p) {
		qp_errmsg(-EINVAL, err, errlen, "credit: no parameters given");
		return NULL;
	}
	if (credit_check(p, err, errlen))
		return NULL;
	cp = calloc(1, sizeof(*cp) + (size_t)p->max_senders * sizeof(cp->senders[0]));
	if (!cp) {
		qp_errmsg(-ENOMEM, err, errlen, "credit: out of memory for %u senders",
			    p->max_senders);
		return NULL;
	}
	cp->p = *p;
	cp->rng = p->seed;
	return cp;
}

void credit_destroy(struct credit_pacer *cp)
{
	free(cp);
}

/* ---- senders ---- */

static uint64_t credit_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, span]. */
static qp_time_ns credit_uniform(struct credit_pacer *cp, qp_time_ns span)
{
	__extension__ unsigned __int128 r = credit_splitmix64(&cp->rng);
	return (qp_time_ns)((r * ((unsigned __int128)span + 1)) >> 64);
}

static void credit_recompute(struct credit_pacer *cp)
{
	cp->stats.recomputes++;
	cp->w = 0;
	cp->delta_ns = 0;
	cp->period_ns = 0;
	/* Cannot fail: credit_check bounded n = 1 .. max_senders at create. */
	if (cp->n && credit_window(cp->p.link_bps, cp->p.rtt_ns, cp->p.mtu_bytes, cp->n, &cp->w,
				   &cp->delta_ns, NULL, 0) == 0)
		cp->period_ns = cp->p.rtt_ns + cp->delta_ns;
}

/* Slot of sender @id, or cp->n when it is not there. */
static uint32_t credit_slot(const struct credit_pacer *cp, uint32_t id)
{
	uint32_t i = 0;

	while (i < cp->n && cp->senders[i].id != id)
		i++;
	return i;
}

int credit_add(struct credit_pacer *cp, uint32_t sender_id, qp_time_ns now)
{
	struct credit_sender *s;

	if (credit_slot(cp, sender_id) < cp->n) {
		cp->stats.rejected_dup++;
		return -EEXIST;
	}
	if (cp->n >= cp->p.max_senders) {
		cp->stats.rejected_full++;
		return -ENOSPC;
	}
	s = &cp->senders[cp->n++];
	credit_recompute(cp);
	s->id = sender_id;
	s->next_ns = now + credit_uniform(cp, cp->period_ns);
	cp->stats.adds++;
	return 0;
}

int credit_remove(struct credit_pacer *cp, uint32_t sender_id, qp_time_ns now)
{
	uint32_t i = credit_slot(cp, sender_id);
	(void)now;

	if (i == cp->n) {
		cp->stats.rejected_unknown++;
		return -ENOENT;
	}
	cp->senders[i] = cp->senders[--cp->n];
	if (cp->cursor >= cp->n)
		cp->cursor = 0;
	credit_recompute(cp);
	cp->stats.removes++;
	return 0;
}

int credit_sender_next_ns(const struct credit_pacer *cp, uint32_t sender_id,
			  qp_time_ns *next_ns)
{
	uint32_t i = credit_slot(cp, sender_id);

	if (i == cp->n)
		return -ENOENT;
	*next_ns = cp->senders[i].next_ns;
	return 0;
}

/* ---- grants ---- */

qp_time_ns credit_next_ns(const struct credit_pacer *cp)
{
	qp_time_ns next = QP_TIME_NEVER;

	for (uint32_t i = 0; i < cp->n; i++)
		next = qp_time_min(next, cp->senders[i].next_ns);
	return next;
}

unsigned credit_poll(struct credit_pacer *cp, qp_time_ns now, struct credit_grant *out,
		     unsigned max)
{
	uint64_t bytes = (uint64_t)cp->w * cp->p.mtu_bytes;
	unsigned k = 0;

	if (!out)
		return 0;
	for (uint32_t scanned = 0; scanned < cp->n; scanned++) {
		uint32_t i = (cp->cursor + scanned) % cp->n;
		struct credit_sender *s = &cp->senders[i];
		uint64_t missed;

		if (s->next_ns > now)
			continue;
		if (k == max) {
			cp->cursor = i; /* served first next time */
			return k;
		}
		missed = (now - s->next_ns) / cp->period_ns;
		cp->stats.skipped += missed;
		out[k].sender_id = s->id;
		out[k].bytes = bytes;
		out[k].due_ns = s->next_ns + missed * cp->period_ns;
		s->next_ns = out[k].due_ns + cp->period_ns;
		cp->stats.grants++;
		cp->stats.granted_bytes += bytes;
		k++;
	}
	return k;
}

uint32_t credit_senders(const struct credit_pacer *cp)
{
	return cp->n;
}

uint32_t credit_w(const struct credit_pacer *cp)
{
	return cp->w;
}

qp_time_ns credit_delta_ns(const struct credit_pacer *cp)
{
	return cp->delta_ns;
}

qp_time_ns credit_period_ns(const struct credit_pacer *cp)
{
	return cp->period_ns;
}

uint64_t credit_grant_bytes(const struct credit_pacer *cp)
{
	return (uint64_t)cp->w * cp->p.mtu_bytes;
}

const struct credit_stats *credit_get_stats(const struct credit_pacer *cp)
{
	return &cp->stats;
}
