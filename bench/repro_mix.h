/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reproductions on a topology with a workload (the topology + workload runner, netrun.h),
 * for the experiments an incast cannot make: background traffic, flows of many sizes. */
#ifndef BENCH_REPRO_MIX_H
#define BENCH_REPRO_MIX_H

#include "netrun.h"
#include "repro.h"

#define REPRO_MIX_SHORT (100 * 1000)   /* "short" flows: up to 100 KB (HPCC's, IDCC's bins) */

struct repro_mix_series {
	const char *label, *algo;
	uint64_t window_pkts;               /* the NIC's window; 0: netrun's (128) */
	const char *dir;                    /* its files in DIR/TAG/<dir>/; NULL: its algo */
	const char *params;                 /* more "k=v,..." for the algorithm; NULL: none */
};

struct repro_mix_spec {
	const char *tag;                    /* "background": DIR/TAG.wl and DIR/TAG/ALGO/ */
	const struct topogen_params *gen;
	const char *workload;               /* the workload file's text */
	const char *pfc;                    /* NULL: off */
	qp_time_ns until_ns, sample_ns;
	int group;                          /* a group whose FCTs to take apart; -1: none */
	uint32_t mtu_bytes;                 /* 0: netrun's (1024) */
	bool end_with_finite;               /* netrun_conf's: background flows end with the rest */
	/* Called with each series' result before it is freed (@i: its index); NULL: none. */
	void (*inspect)(void *arg, size_t i, const struct netrun_result *r);
	void *arg;
};

struct repro_mix_run {
	const struct repro_mix_series *series;
	bool ok;
	struct fct_summary bins;            /* slowdown, HPCC's bins */
	double mean_queue_bytes;            /* every port, every sample */
	uint64_t drops, max_queue_bytes;
	size_t flows, done, unfinished;
	size_t group_flows;                 /* of spec->group */
	double group_fct_max_us, group_fct_mean_us;
	double sim_s, wall_s;
	/* what the senders ran with: netrun_result's */
	bool global_rtt;
	char cc_params[256];
	const struct cc_ops *cc_ops;
	uint64_t cc_counter[HOST_CC_COUNTERS];
};
/* What @m's senders ran with, for a report: "hpcc on the global T (its reference's), params
 * max_stage=0" or "... on each flow's own RTT ...". @buf. */
const char *repro_mix_setting(const struct repro_mix_run *m, char *buf, size_t len);
/* The T @m's flows registered, for a report: "global T" (its reference's) or "own RTT". */
static inline const char *repro_mix_rtt(const struct repro_mix_run *m)
{
	return m->global_rtt ? "global T" : "own RTT";
}
/* @m's counter @name (its algorithm's, qpace/cc.h), 0 when it has none of that name. */
uint64_t repro_mix_counter(const struct repro_mix_run *m, const char *name);

/* Run @sp once per series into @out (n entries), a progress line and a row of DIR/mix.csv
 * each. 0 or -1. */
int repro_mix(struct repro_ctx *ctx, const struct repro_mix_spec *sp,
	      const struct repro_mix_series *s, size_t n, struct repro_mix_run *out);
/* Slowdown percentile @which (50, 95, 99) over the bins of flows up to @max_bytes,
 * weighted by their flows; NAN when none. */
double repro_mix_bin_p(const struct repro_mix_run *m, uint64_t max_bytes, int which);

#endif
