/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* swift: Swift's delay-target windows (Kumar et al., "Swift: Delay is Simple and Effective
 * for Congestion Control in the Datacenter", SIGCOMM 2020, Algorithm 1 and section 3), with
 * htsim's defaults (Broadcom csg-htsim, sim/swift.cpp, whose comments call them a guess at
 * the paper's), on the transport's ACKs, RTT samples, NAKs and timeouts.
 *
 * Two windows, in packets (MSS = the path MTU), the smaller of them in force:
 *   fabric    its delay: the RTT sample less its end-host part (cc_rtt.host_ns)
 *             target = base_target + hops * h + max(0, min(fs_alpha / sqrt(fcwnd) +
 *                      fs_beta, fs_range))                     (flow scaling)
 *             fs_alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd)),
 *             fs_beta = -fs_alpha / sqrt(fs_max_cwnd)
 *   endpoint  its delay: the end-host part; target = host_target (no scaling)
 * On each ACK with an RTT sample, for each window (cwnd, its delay d and target t):
 *   d < t     cwnd += ai * acked / cwnd   (cwnd >= 1; else cwnd += ai * acked: acked in
 *             packets, so +ai packets per RTT)
 *   d >= t    once per RTT (since the last decrease, at least the smoothed RTT):
 *             cwnd *= max(1 - beta * (d - t) / d, 1 - max_mdf)
 * NAK (fast recovery): the retransmit count to 0; once per RTT cwnd *= 1 - max_mdf.
 * Timeout: the retransmit count + 1; at retx_reset in a row cwnd = min_cwnd, else once per
 * RTT cwnd *= 1 - max_mdf. Each window stays in [min_cwnd, max_cwnd].
 * Out: cwnd >= 1 packet: bytes in flight <= cwnd * MSS at the line rate; below one packet
 * one packet in flight, paced at cwnd * MSS per smoothed RTT (the paper's pacing mode).
 *
 * Parameters (htsim's defaults where it has them): base_target 0 = the path's base RTT
 * (the unloaded fabric RTT; the paper's 25 us is its fabric's), hops 1 (the hop count
 * is not carried to the sender here: set it), h 0 = base_target / 6.55 (htsim), fs_range
 * 0 = 5 x base_target (htsim), fs_min_cwnd 0.1, fs_max_cwnd 100 (packets), ai 1
 * (packet per RTT), beta 0.8, max_mdf 0.5, host_target 0 = base_target, init_cwnd 0 =
 * one BDP (line rate x base RTT; htsim starts at 12 packets), min_cwnd 0.001 packets,
 * max_cwnd 0 = none, retx_reset 5 (htsim's KILL_THRESHOLD).
 *
 * What the sources give: every qpace source reports 0 for the end-host part (the soft
 * RC has no host processing to measure: its ACKs leave at once, in virtual time), so the
 * fabric delay is the whole RTT and the endpoint window never binds.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "cc_algs.h"
#include "swift.h"

struct swift_params {
	qp_time_ns base_target_ns, h_ns, fs_range_ns, host_target_ns;
	uint32_t hops, retx_reset;
	double fs_min_cwnd, fs_max_cwnd, ai, beta, max_mdf, init_cwnd, min_cwnd, max_cwnd;
};

#define SP(f) offsetof(struct swift_params, f)
static const struct cc_param swift_params_table[] = {
	{ "base_target", CC_P_TIME, SP(base_target_ns), 0, 0, 1e10, 0,
	  "fabric target at one packet of cwnd, less scaling; 0 = the path's base RTT" },
	{ "hops", CC_P_U32, SP(hops), 1, 0, 64, 0, "switch hops of the path (hop scaling)" },
	{ "h", CC_P_TIME, SP(h_ns), 0, 0, 1e10, 0,
	  "target added per hop; 0 = base_target / 6.55" },
	{ "fs_range", CC_P_TIME, SP(fs_range_ns), 0, 0, 1e10, 0,
	  "largest flow-scaling addition to the target; 0 = 5 x base_target" },
	{ "fs_min_cwnd", CC_P_DOUBLE, SP(fs_min_cwnd), 0.1, 0, 1e6, CC_P_MIN_OPEN,
	  "window (packets) at which flow scaling adds fs_range" },
	{ "fs_max_cwnd", CC_P_DOUBLE, SP(fs_max_cwnd), 100, 0, 1e6, CC_P_MIN_OPEN,
	  "window (packets) at which flow scaling adds nothing" },
	{ "ai", CC_P_DOUBLE, SP(ai), 1, 0, 1e6, CC_P_MIN_OPEN,
	  "additive increase, packets per RTT" },
	{ "beta", CC_P_DOUBLE, SP(beta), 0.8, 0, 1, CC_P_MIN_OPEN,
	  "multiplicative decrease per unit of relative excess delay" },
	{ "max_mdf", CC_P_DOUBLE, SP(max_mdf), 0.5, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "largest decrease per RTT, fraction" },
	{ "host_target", CC_P_TIME, SP(host_target_ns), 0, 0, 1e10, 0,
	  "endpoint window's target delay; 0 = base_target" },
	{ "init_cwnd", CC_P_DOUBLE, SP(init_cwnd), 0, 0, 1e6, 0,
	  "first window in packets, in [min_cwnd, max_cwnd]; 0 = one BDP (line rate x base RTT, taken into that range)" },
	{ "min_cwnd", CC_P_DOUBLE, SP(min_cwnd), 0.001, 0, 1e6, CC_P_MIN_OPEN,
	  "smallest window in packets (below 1: paced)" },
	{ "max_cwnd", CC_P_DOUBLE, SP(max_cwnd), 0, 0, 1e6, 0,
	  "largest window in packets; 0 = none" },
	{ "retx_reset", CC_P_U32, SP(retx_reset), 5, 1, 1000, 0,
	  "timeouts in a row that reset the window to min_cwnd" },
	{ .name = NULL },
};

struct swift_stats {
	uint64_t samples, increases, decreases, fabric_decreases, host_decreases;
	uint64_t loss_cuts, resets;
	uint64_t delay_sum_ns;     /* sum of the fabric delays sampled (mean: / samples) */
	uint64_t target_sum_ns;    /* sum of the fabric targets they were compared with */
};

struct swift_state {
	struct cc cc;
	struct swift_params p;
	double fcwnd, ecwnd;       /* packets */
	double fs_alpha, fs_beta;
	double srtt_ns;
	qp_time_ns last_decrease_ns;
	bool decreased;            /* last_decrease_ns is meaningful */
	uint32_t retx;
	uint64_t acked;            /* bytes acknowledged since the last sample */
	struct swift_stats stats;
};

static struct swift_state *to_swift(struct cc *cc)
{
	return (struct swift_state *)cc;
}

static int swift_check(const void *params, const struct cc_path *path, char *err,
		       size_t errlen)
{
	const struct swift_params *p = params;

	(void)path;
	if (p->fs_min_cwnd >= p->fs_max_cwnd) {
		snprintf(err, errlen, "swift: fs_min_cwnd=%g must be below fs_max_cwnd=%g",
			 p->fs_min_cwnd, p->fs_max_cwnd);
		return -EINVAL;
	}
	if (p->max_cwnd > 0 && p->max_cwnd < p->min_cwnd) {
		snprintf(err, errlen, "swift: max_cwnd=%g is below min_cwnd=%g", p->max_cwnd,
			 p->min_cwnd);
		return -EINVAL;
	}
	if (p->init_cwnd > 0 && (p->init_cwnd < p->min_cwnd ||
				 (p->max_cwnd > 0 && p->init_cwnd > p->max_cwnd))) {
		snprintf(err, errlen, "swift: init_cwnd=%g is outside [min_cwnd, max_cwnd] = "
			 "[%g, %g] (0: none)", p->init_cwnd, p->min_cwnd, p->max_cwnd);
		return -EINVAL;
	}
	return 0;
}

/* The fabric target at a window of @cwnd packets, ns. */
static double fabric_target(const struct swift_state *s, double cwnd)
{
	const struct swift_params *p = &s->p;
	double fs = s->fs_alpha / sqrt(cwnd) + s->fs_beta;

	fs = fmax(0, fmin(fs, (double)p->fs_range_ns));
	return (double)p->base_target_ns + p->hops * (double)p->h_ns + fs;
}

static double clamp_cwnd(const struct swift_state *s, double c)
{
	if (s->p.max_cwnd > 0 && c > s->p.max_cwnd)
		c = s->p.max_cwnd;
	return c < s->p.min_cwnd ? s->p.min_cwnd : c;
}

static unsigned publish(struct swift_state *s)
{
	struct cc *cc = &s->cc;
	double c = fmin(s->fcwnd, s->ecwnd), mss = cc->path.mtu_bytes;

	if (c >= 1) {
		cc->rate_bps = cc->path.line_bps;
		cc->cap_bytes = (uint64_t)(c * mss);
	} else {
		double rtt = s->srtt_ns > 0 ? s->srtt_ns : (double)cc->path.base_rtt_ns;

		cc->rate_bps = cc_clamp_rate(c * mss * 8e9 / rtt, 1, cc->path.line_bps);
		cc->cap_bytes = cc->path.mtu_bytes;
	}
	return CC_ACT_RATE;
}

static void swift_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct swift_state *s = to_swift(cc);
	struct swift_params *p = &s->p;
	double bdp = (double)cc_rate_window(cc->path.line_bps, cc->path.base_rtt_ns) /
		     cc->path.mtu_bytes;

	(void)now;
	*p = *(const struct swift_params *)params;
	if (!p->base_target_ns)
		p->base_target_ns = cc->path.base_rtt_ns;
	if (!p->h_ns)
		p->h_ns = (qp_time_ns)((double)p->base_target_ns / 6.55);
	if (!p->fs_range_ns)
		p->fs_range_ns = 5 * p->base_target_ns;
	if (!p->host_target_ns)
		p->host_target_ns = p->base_target_ns;
	s->fs_alpha = (double)p->fs_range_ns / (1 / sqrt(p->fs_min_cwnd) - 1 / sqrt(p->fs_max_cwnd));
	s->fs_beta = -s->fs_alpha / sqrt(p->fs_max_cwnd);
	s->fcwnd = s->ecwnd = clamp_cwnd(s, p->init_cwnd > 0 ? p->init_cwnd : fmax(1, bdp));
	publish(s);
}

static bool can_decrease(const struct swift_state *s, qp_time_ns now)
{
	return !s->decreased || (double)(now - s->last_decrease_ns) >= s->srtt_ns;
}

/* One window's reaction to delay @d against target @t, for @acked packets. */
static double react(struct swift_state *s, double cwnd, double d, double t, double acked,
		    bool may_cut, bool *cut)
{
	const struct swift_params *p = &s->p;

	if (d < t) {
		s->stats.increases++;
		return clamp_cwnd(s, cwnd >= 1 ? cwnd + p->ai * acked / cwnd : cwnd + p->ai * acked);
	}
	if (!may_cut)
		return cwnd;
	*cut = true;
	return clamp_cwnd(s, cwnd * fmax(1 - p->beta * (d - t) / d, 1 - p->max_mdf));
}

static unsigned swift_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	(void)now;
	to_swift(cc)->acked += ev->u.ack.bytes;
	to_swift(cc)->retx = 0;
	return 0;
}

static unsigned swift_on_rtt(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct swift_state *s = to_swift(cc);
	double rtt = (double)ev->u.rtt.rtt_ns, host = (double)ev->u.rtt.host_ns;
	double fabric = rtt - host, acked = (double)s->acked / cc->path.mtu_bytes;
	double ft = fabric_target(s, s->fcwnd);
	bool may = can_decrease(s, now), fcut = false, ecut = false;

	s->acked = 0;
	s->srtt_ns = s->srtt_ns > 0 ? 0.875 * s->srtt_ns + 0.125 * rtt : rtt;
	s->stats.samples++;
	s->stats.delay_sum_ns += (uint64_t)fabric;
	s->stats.target_sum_ns += (uint64_t)ft;
	s->fcwnd = react(s, s->fcwnd, fabric, ft, acked, may, &fcut);
	s->ecwnd = react(s, s->ecwnd, host, (double)s->p.host_target_ns, acked, may, &ecut);
	if (fcut || ecut) {
		s->stats.decreases++;
		s->stats.fabric_decreases += fcut;
		s->stats.host_decreases += ecut;
		s->decreased = true;
		s->last_decrease_ns = now;
	}
	return publish(s);
}

/* A loss: both windows by 1 - max_mdf, once per RTT. */
static void loss_cut(struct swift_state *s, qp_time_ns now)
{
	if (!can_decrease(s, now))
		return;
	s->fcwnd = clamp_cwnd(s, s->fcwnd * (1 - s->p.max_mdf));
	s->ecwnd = clamp_cwnd(s, s->ecwnd * (1 - s->p.max_mdf));
	s->decreased = true;
	s->last_decrease_ns = now;
	s->stats.loss_cuts++;
}

static unsigned swift_on_nak(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct swift_state *s = to_swift(cc);

	(void)ev;
	s->retx = 0;
	loss_cut(s, now);
	return publish(s);
}

static unsigned swift_on_timeout(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct swift_state *s = to_swift(cc);

	(void)ev;
	if (++s->retx >= s->p.retx_reset) {
		s->fcwnd = s->ecwnd = s->p.min_cwnd;
		s->stats.resets++;
	} else {
		loss_cut(s, now);
	}
	return publish(s);
}

int cc_swift_view(const struct cc *cc, struct cc_swift_view *out)
{
	const struct swift_state *s = (const struct swift_state *)cc;

	if (!cc || cc->ops != &cc_swift_ops || !out)
		return -EINVAL;
	*out = (struct cc_swift_view){ .fcwnd = s->fcwnd, .ecwnd = s->ecwnd,
				       .target_ns = fabric_target(s, s->fcwnd),
				       .srtt_ns = s->srtt_ns, .samples = s->stats.samples,
				       .decreases = s->stats.decreases };
	return 0;
}

#define SWIFT_C(f, doc) { #f, offsetof(struct swift_state, stats.f), doc }
static const struct cc_counter swift_counters[] = {
	SWIFT_C(samples, "RTT samples"),
	SWIFT_C(increases, "additive increases (either window, delay below its target)"),
	SWIFT_C(decreases, "multiplicative decreases on delay (at most one per RTT)"),
	SWIFT_C(fabric_decreases, "of them the fabric window's"),
	SWIFT_C(host_decreases, "of them the endpoint window's"),
	SWIFT_C(loss_cuts, "cuts by 1 - max_mdf on a NAK or timeout"),
	SWIFT_C(resets, "windows reset to min_cwnd after retx_reset timeouts"),
	SWIFT_C(delay_sum_ns, "sum of the fabric delays sampled, ns"),
	SWIFT_C(target_sum_ns, "sum of the fabric targets they met, ns"),
	{ .name = NULL },
};

const struct cc_ops cc_swift_ops = {
	.name = "swift",
	.summary = "Swift: fabric and endpoint windows held at target delays (hop and flow "
		   "scaling), AI below the target, MD above it once per RTT",
	.params = swift_params_table,
	.params_size = sizeof(struct swift_params),
	.state_size = sizeof(struct swift_state),
	.check = swift_check,
	.init = swift_init,
	.on = {
		[CC_EV_ACKED] = swift_on_ack,
		[CC_EV_RTT] = swift_on_rtt,
		[CC_EV_NAK] = swift_on_nak,
		[CC_EV_TIMEOUT] = swift_on_timeout,
	},
	.counters = swift_counters,
};
