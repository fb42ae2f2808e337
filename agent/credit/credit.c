/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IA credit pacing, receiver side, as IA-TCP describes it (Hwang, Yoo, Choi, "IA-TCP: a
 * rate based incast-avoidance algorithm for TCP in data center networks", ICC 2012; the
 * patent JP5819530B2 is ../shared/seeds/000_*.txt): the receiver (the aggregator)
 * controls both how much each sender may have outstanding and when it may send more.
 *
 * For one receiving link of capacity C (bits/s) and RTT, with n active senders:
 *
 *     W = max(1, floor(C·RTT / (8·MTU·n)))   the advertised window, in MTUs
 *     Δ = max(0, n·W·MTU·8/C − RTT)          the ACK delay when n·MTU exceeds C·RTT
 *
 * The aggregate is n·W·MTU per RTT + Δ <= C·(RTT + Δ). The patent's formulas were images;
 * these are qpace's design notes' (references.md §4), self-consistent with its prose ("if
 * the link carries 10 MSS per RTT, 20 MSS can be allowed by adding one RTT of delay").
 *
 * What the patent says, and how it is followed here:
 *  - "Whenever the aggregator needs to send an ACK" it computes the window, and sends the
 *    ACK Δ later (at once when Δ <= 0); it uses immediate ACKs, one per data packet. So a
 *    grant is clocked by the receiver's arrivals: credit_arrived(b bytes) makes the grant
 *    due Δ later.
 *  - The window W bounds what a sender may have outstanding: a grant tops the sender's
 *    outstanding credit (granted − arrived) up to W·MTU, never beyond. A sender that sends
 *    nothing gets nothing more than its window: an idle QP cannot bank credit and burst.
 *    When n grows, W shrinks and arrivals are answered by nothing until the outstanding
 *    bytes are below the new window; when n falls, the next arrival grants the larger one.
 *  - The first ACK is delayed by a uniformly random time in [0, RTT + Δ], so senders that
 *    start together do not send together: a sender's first grant (W·MTU) falls at a
 *    uniform time in [add, add + RTT + Δ] (splitmix64 seeded from the params; unbiased to
 *    within 2^-64 by multiply-shift).
 *  - "RTT is the minimum round trip time", measured by the aggregator (claim 1: "sending
 *    an ACK to the worker and measuring the RTT"): a grant starts a probe; the first
 *    arrival of data beyond everything granted before it (so data that grant released)
 *    ends it, and the sample is the time between. The pacer uses the smallest sample
 *    (params.rtt_ns until the first), and recomputes W and Δ when it falls. A probe open
 *    for more than 16 RTTs measured an idle sender, not the path, and gives no sample.
 *  - Deviation: params.rtt_floor_ns, when given, is the least RTT the pacer uses (a sample
 *    below it counts as it). Why: qpace-bench's hosts register the modelled network's
 *    base RTT (4 link delays and the serialisations). In virtual time those are links and
 *    the measured minimum is about that; in real time the loopback path to the switch has
 *    no link delay, so the measured minimum is two link delays shorter (~0.3 ms against
 *    0.61 ms at 100 us links). With the measured one, Δ grows by the difference and the
 *    link runs at exactly C with no queue: any lateness of the loop idles it (measured:
 *    goodput 0.72 with echo INT as the arrivals). With the registered one as the floor,
 *    W and Δ are the same in both clocks and the two missing delays become a standing
 *    queue of that length at the bottleneck (a few packets), which covers the loop's
 *    jitter as the links' bytes in flight do in virtual time. qpaced, whose RTTs are
 *    real, sets no floor: there the measured minimum rules, as in the patent.
 *
 * Where arrivals come from is the shell's choice (agent/core_credit.c): qpace-bench's
 * emulated hosts count the payload their soft RC accepts, at the time the frame reached
 * the receiving host, in both clocks and whatever the cc and INT mode; qpaced, which
 * cannot see its NIC's receives, takes echo INT (the switch's dequeue, one link earlier).
 *
 * A shell that cannot see arrivals (it never calls credit_arrived) gets the older timer
 * schedule: W·MTU per sender once every RTT + Δ, on each sender's own phase; a poll a
 * period or more late sends the latest grant of the sender's grid and drops the older ones
 * (stats.skipped). That schedule is not bounded by the window (the pacer cannot know what
 * was used); the first credit_arrived switches the whole pacer to arrival clocking for
 * good (params.arrivals: from the start, so no sender gets more than its first window
 * before the first arrival). Deviation, and why: qpace's senders are RoCE QPs paced by a gate, not TCP, so a
 * grant is a credit message (bytes) rather than an ACK's advertised window.
 *
 * Arithmetic is integer, with 128-bit intermediates. n·W·MTU/C is rounded UP to the ns, so
 * the period never gives the senders more than C carries in it. When n or the RTT changes,
 * W, Δ and the period are recomputed at once; senders keep their next grant time.
 *
 * Parameters (struct credit_params): link_bps > 0; rtt_ns > 0 (initial RTT, until the first
 * sample); mtu_bytes > 0; max_senders in 1..CREDIT_MAX_SENDERS; seed any. At create the
 * window for n = 1 and the period for n = max_senders must fit (W < 2^32, period < 2^63 ns),
 * so no later add or remove can fail to recompute; a measured RTT is taken only when the
 * same two bounds hold for it.
 *
 * Measured, on the real switch in virtual time (test_loop_ia.c, IA-TCP's 56-packet buffer
 * at 10 Gb/s, 256 KB answers): no drops and no timeouts for 16 and 32 workers, at 96.7% and
 * 65.8% of the payload rate (the source: high goodput throughout); 63 workers overflow the
 * buffer (573 drops in 20 ms), where the source has no timeouts to 96: one packet per
 * sender per period is already more than 56 packets, and the source's sub-packet windows
 * have no counterpart here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/credit.h"
#include "qpace/errmsg.h"

struct credit_sender {
	uint32_t id;
	qp_time_ns next_ns;       /* next grant; arrival clocking: QP_TIME_NEVER for none */
	bool started;             /* its first grant went out */
	uint64_t granted, arrived; /* cumulative bytes */
	uint64_t pending;         /* arrival clocking: bytes to grant at next_ns */
	bool probing;             /* an RTT probe is open: */
	qp_time_ns probe_ns;      /*   the grant that started it went out then, and */
	uint64_t probe_above;     /*   its data is what arrives beyond this many bytes */
};

struct credit_pacer {
	struct credit_params p;
	uint32_t n;               /* active senders: senders[0..n) */
	uint32_t w;               /* messages per grant; 0 when n = 0 */
	qp_time_ns delta_ns;
	qp_time_ns period_ns;     /* RTT + Δ; 0 when n = 0 */
	uint32_t cursor;          /* where the next poll starts scanning */
	bool arrivals;            /* grants clocked by arrivals (credit_arrived was called) */
	qp_time_ns rtt_ns;        /* in use: params.rtt_ns, then the smallest sample */
	bool rtt_measured;
	uint64_t rng;             /* splitmix64 state */
	struct credit_stats stats;
	struct credit_sender senders[]; /* max_senders, allocated at create */
};

#define CREDIT_PERIOD_MAX_NS (UINT64_MAX / 2)
#define CREDIT_PROBE_MAX_RTTS 16u

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
		{ "rtt_floor_ns", p->rtt_floor_ns, 0, p->rtt_ns, "ns (0 = none, at most rtt_ns)" },
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
	cp->rtt_ns = p->rtt_ns;
	cp->arrivals = p->arrivals;
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
	if (cp->n && credit_window(cp->p.link_bps, cp->rtt_ns, cp->p.mtu_bytes, cp->n, &cp->w,
				   &cp->delta_ns, NULL, 0) == 0)
		cp->period_ns = cp->rtt_ns + cp->delta_ns;
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
	*s = (struct credit_sender){ .id = sender_id };
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

/* Bytes sender @s may still be granted: W·MTU less what it has outstanding. */
static uint64_t credit_room(const struct credit_pacer *cp, const struct credit_sender *s)
{
	uint64_t window = (uint64_t)cp->w * cp->p.mtu_bytes;
	uint64_t out = s->granted > s->arrived ? s->granted - s->arrived : 0;

	return window > out ? window - out : 0;
}

/* The grant for sender @s due now: its bytes (0 = nothing to send) and its next time. */
static uint64_t credit_due(struct credit_pacer *cp, struct credit_sender *s, qp_time_ns now,
			   qp_time_ns *due)
{
	uint64_t bytes, missed;

	*due = s->next_ns;
	if (cp->arrivals) {
		uint64_t room = credit_room(cp, s);

		bytes = s->started ? s->pending : (uint64_t)cp->w * cp->p.mtu_bytes;
		bytes = bytes < room ? bytes : room;
		s->pending = 0;
		s->next_ns = QP_TIME_NEVER;
		return bytes;
	}
	missed = (now - s->next_ns) / cp->period_ns;
	cp->stats.skipped += missed;
	*due = s->next_ns + missed * cp->period_ns;
	s->next_ns = *due + cp->period_ns;
	return (uint64_t)cp->w * cp->p.mtu_bytes;
}

unsigned credit_poll(struct credit_pacer *cp, qp_time_ns now, struct credit_grant *out,
		     unsigned max)
{
	unsigned k = 0;

	if (!out)
		return 0;
	for (uint32_t scanned = 0; scanned < cp->n; scanned++) {
		uint32_t i = (cp->cursor + scanned) % cp->n;
		struct credit_sender *s = &cp->senders[i];
		qp_time_ns due;
		uint64_t bytes;

		if (s->next_ns > now)
			continue;
		if (k == max) {
			cp->cursor = i; /* served first next time */
			return k;
		}
		bytes = credit_due(cp, s, now, &due);
		if (!bytes)
			continue;
		if (!s->probing) {
			s->probing = true;
			s->probe_ns = now;
			s->probe_above = s->granted;
		}
		s->started = true;
		s->granted += bytes;
		out[k].sender_id = s->id;
		out[k].bytes = bytes;
		out[k].due_ns = due;
		cp->stats.grants++;
		cp->stats.granted_bytes += bytes;
		k++;
	}
	return k;
}

/* A sample of the RTT: the smallest so far is the pacer's RTT. A probe open for more than
 * CREDIT_PROBE_MAX_RTTS RTTs measured an idle sender, not the path: no sample. A sample
 * whose window or period would not fit (credit_check's bounds) is not taken either. */
static void credit_rtt_sample(struct credit_pacer *cp, qp_time_ns sample)
{
	uint32_t w;
	qp_time_ns d;

	if (sample == 0)
		sample = 1;
	if (sample < cp->p.rtt_floor_ns)
		sample = cp->p.rtt_floor_ns;
	if (sample / CREDIT_PROBE_MAX_RTTS > cp->rtt_ns) {
		cp->stats.rtt_idle_probes++;
		return;
	}
	cp->stats.rtt_samples++;
	if (cp->rtt_measured && sample >= cp->rtt_ns)
		return;
	if (credit_window(cp->p.link_bps, sample, cp->p.mtu_bytes, 1, &w, &d, NULL, 0) ||
	    credit_window(cp->p.link_bps, sample, cp->p.mtu_bytes, cp->p.max_senders, &w, &d,
			  NULL, 0) || sample > CREDIT_PERIOD_MAX_NS / 2)
		return;
	cp->rtt_measured = true;
	if (sample != cp->rtt_ns) {
		cp->rtt_ns = sample;
		credit_recompute(cp);
	}
}

/* The first arrival: from now on every sender is clocked by its arrivals. */
static void credit_clock_by_arrivals(struct credit_pacer *cp)
{
	cp->arrivals = true;
	for (uint32_t i = 0; i < cp->n; i++)
		if (cp->senders[i].started)
			cp->senders[i].next_ns = QP_TIME_NEVER;
}

int credit_arrived(struct credit_pacer *cp, uint32_t sender_id, uint64_t bytes, qp_time_ns now)
{
	uint32_t i = credit_slot(cp, sender_id);
	struct credit_sender *s;
	uint64_t room;

	if (i == cp->n) {
		cp->stats.rejected_unknown++;
		return -ENOENT;
	}
	if (!cp->arrivals)
		credit_clock_by_arrivals(cp);
	s = &cp->senders[i];
	s->arrived += bytes;
	cp->stats.arrivals++;
	cp->stats.arrived_bytes += bytes;
	if (s->probing && s->arrived > s->probe_above) {
		s->probing = false;
		credit_rtt_sample(cp, now > s->probe_ns ? now - s->probe_ns : 0);
	}
	if (!s->started)
		return 0; /* its first grant is still to come, W·MTU */
	room = credit_room(cp, s);
	if (room <= s->pending) {
		cp->stats.window_full++;
		return 0;
	}
	if (!s->pending)
		s->next_ns = now + cp->delta_ns; /* the ACK delay */
	s->pending = room;
	return 0;
}

int credit_sender_outstanding(const struct credit_pacer *cp, uint32_t sender_id,
			      uint64_t *bytes)
{
	uint32_t i = credit_slot(cp, sender_id);
	const struct credit_sender *s;

	if (i == cp->n)
		return -ENOENT;
	s = &cp->senders[i];
	*bytes = s->granted > s->arrived ? s->granted - s->arrived : 0;
	return 0;
}

qp_time_ns credit_rtt_ns(const struct credit_pacer *cp)
{
	return cp->rtt_ns;
}

bool credit_arrival_clocked(const struct credit_pacer *cp)
{
	return cp->arrivals;
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
