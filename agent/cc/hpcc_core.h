/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The HPCC core, shared by hpcc.c and acc.c (internal to agent/cc/).
 *
 * hpcc.c holds the algorithm's description and implements these functions; acc.c embeds
 * struct hpcc_core in its own state and drives the same steps with its additions between
 * them. Every function is O(hops), allocates nothing and reads no clock.
 *
 * One INT report is handled in two steps:
 *   hpcc_core_observe()  classify the report, measure each hop against the stored previous
 *                        record, keep the most congested hop, update the EWMA U and store
 *                        the report's hops as the previous ones;
 *   hpcc_core_react()    derive the new rate from the reference rate Rc: a full update (Rc
 *                        and the stage move, once per RTT) or a fast reaction (pacing rate
 *                        only).
 */
#ifndef QPACE_AGENT_HPCC_CORE_H
#define QPACE_AGENT_HPCC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qpace/cc.h"

struct hpcc_params {
	double eta;           /* target utilization η, (0, 1] */
	uint32_t max_stage;   /* additive stages before a multiplicative step, 0..1000 */
	qp_rate_bps rate_ai;  /* additive increase R_AI, bits/s; 0 = line/2500 */
	qp_rate_bps min_rate; /* rate floor, bits/s; 0 = line/1000 */
	uint32_t fast_react;  /* 1 = react to every report, 0 = once per RTT only */
	uint32_t window;      /* 1 = in-flight cap W = R·T, 0 = rate only */
	qp_rate_bps init_rate; /* first R and Rc, bits/s, at least min_rate; 0 = line rate */
};

/* The parameter table entries of HPCC, for a params struct that holds struct hpcc_params
 * at byte offset @base (0 for hpcc.c; acc.c embeds it). */
#define HPCC_PARAM_ENTRIES(base)                                                            \
	{ "eta", CC_P_DOUBLE, (base) + offsetof(struct hpcc_params, eta), 0.95, 0, 1,          \
	  CC_P_MIN_OPEN, "target utilization eta, fraction of the bottleneck link" },          \
	{ "max_stage", CC_P_U32, (base) + offsetof(struct hpcc_params, max_stage), 5, 0, 1000, \
	  0, "additive-increase stages before a multiplicative step (paper's maxStage)" },     \
	{ "rate_ai", CC_P_RATE, (base) + offsetof(struct hpcc_params, rate_ai), 0, 0, 1e13, 0, \
	  "additive increase per RTT in bits/s; 0 = line rate / 2500" },                       \
	{ "min_rate", CC_P_RATE, (base) + offsetof(struct hpcc_params, min_rate), 0, 0, 1e13,  \
	  0, "lowest pacing rate in bits/s; 0 = line rate / 1000" },                           \
	{ "fast_react", CC_P_U32, (base) + offsetof(struct hpcc_params, fast_react), 1, 0, 1,  \
	  0, "1 = adjust the pacing rate on every INT report, 0 = once per RTT" },             \
	{ "window", CC_P_U32, (base) + offsetof(struct hpcc_params, window), 1, 0, 1, 0,       \
	  "1 = cap bytes in flight at rate * base RTT, 0 = no cap" },                          \
	{ "init_rate", CC_P_RATE, (base) + offsetof(struct hpcc_params, init_rate), 0, 0,      \
	  1e13, 0, "first rate in bits/s, at least min_rate; 0 = line rate (the reference)" }

struct hpcc_stats {
	uint64_t reports;         /* INT reports handed to the core */
	uint64_t baselines;       /* first report, path change or counters going back */
	uint64_t full_updates;    /* reference-rate updates (once per RTT) */
	uint64_t fast_reactions;  /* pacing-rate updates from the unchanged reference */
	uint64_t skipped;         /* fast_react=0: report between full updates, unread */
	uint64_t zero_tau_hops;   /* hop records with no time elapsed: no sample */
	uint64_t no_sample;       /* reports where no hop gave a sample */
};

struct hpcc_core {
	/* configuration, resolved at init (rate_ai, min_rate never 0 here) */
	struct hpcc_params p;
	qp_time_ns t_ns;          /* T: base RTT, the EWMA horizon and window time */
	/* state */
	double u;                 /* EWMA of the most congested hop's utilization */
	double rc_bps;            /* reference rate Rc: moves once per RTT */
	uint32_t inc_stage;
	uint64_t last_update_seq; /* 0 until the first report */
	struct qp_int_hop prev[QP_INT_MAX_HOPS];
	unsigned prev_nhops;
	struct hpcc_stats stats;
};

/* The state of cc_hpcc_ops (visible here for the unit tests; nothing else reads it). */
struct hpcc_state {
	struct cc cc;
	struct hpcc_core core;
};

/* What a report is, decided before it is measured. */
enum hpcc_kind {
	HPCC_BASELINE,  /* stored as previous only; no rate change */
	HPCC_FULL,      /* seq > last_update_seq: the reference moves */
	HPCC_FAST,      /* a report inside the current RTT */
	HPCC_SKIP,      /* fast_react=0 and inside the RTT: ignored like the reference code */
	HPCC_NO_SAMPLE, /* no hop had time elapsed: nothing measured, nothing changes */
};

/* Cross-field checks on resolved-or-default parameters against the path. */
int hpcc_core_check(const struct hpcc_params *p, const struct cc_path *path, char *err,
		    size_t errlen, const char *alg);

/* Start at line rate, U = 1, stage 0; set cc's rate and cap. */
void hpcc_core_init(struct hpcc_core *h, struct cc *cc, const struct hpcc_params *p);

/* Step 1. Returns the kind; for HPCC_FULL and HPCC_FAST, *u_now is the instantaneous
 * utilization of the most congested hop and the EWMA has taken it in. */
enum hpcc_kind hpcc_core_observe(struct hpcc_core *h, const struct cc_int_report *r,
				 double *u_now);

/* Step 2 for HPCC_FULL (full = true) or HPCC_FAST: set cc's rate (and Rc, stage and
 * last_update_seq = r->snd_nxt on a full update). Returns CC_ACT_RATE. */
unsigned hpcc_core_react(struct hpcc_core *h, struct cc *cc, const struct cc_int_report *r,
			 bool full);

/* Set both the reference and the pacing rate (clamped to [min_rate, line]) and restart
 * the stage count; used by ACC's cut and jump. Returns CC_ACT_RATE. */
unsigned hpcc_core_set_reference(struct hpcc_core *h, struct cc *cc, double rate_bps);

#endif
