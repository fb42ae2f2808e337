/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run figures for topology + workload runs (docs/workloads.md): flow-completion-time
 * slowdown by flow size, per-link utilisation, and a summary of PFC pauses. Pure
 * functions over what a run measured; output as CSV and through the shared printer.
 *
 * Slowdown, HPCC's definition (alibaba-edu/High-Precision-Congestion-Control:
 * simulation/scratch/third.cc qp_finish, analysis/fct_analysis.py):
 *
 *   slowdown = max(1, FCT / ideal)
 *   ideal    = base RTT + wire bytes x 8 / bottleneck rate
 *   wire     = bytes + ceil(bytes / MTU payload) x per-packet headers
 *   base RTT = 2 x (sum of the path's propagation delays)
 *              + sum over its hops of one MTU payload's serialisation at the hop's rate
 *
 * HPCC counts its headers without INT; here the per-packet headers are RoCEv2's
 * (FCT_ROCE_HDR_BYTES: Ethernet, IPv4, UDP, BTH, ICRC = 58 bytes; no FCS, as the switch's
 * queue model counts frames).
 *
 * Bins, as HPCC's fct_analysis: the finished flows sorted by size are cut into bins of
 * step% of the flows each (default 5: 20 bins), a bin named by its largest size; in each,
 * the slowdowns sorted and p-th percentile = the value at index floor(count x p) (HPCC:
 * tuples[l + (r - l) * p]). Flows that did not finish are counted, not binned.
 */
#ifndef QPACE_FCT_H
#define QPACE_FCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/frame.h"
#include "qpace/out.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define FCT_ROCE_HDR_BYTES (FRAME_ETH_HLEN + FRAME_IPV4_HLEN + FRAME_UDP_HLEN + \
			    FRAME_BTH_LEN + FRAME_ICRC_LEN)
#define FCT_MAX_BINS 100
#define FCT_DEFAULT_STEP 5

struct fct_hop {
	qp_rate_bps rate_bps;
	qp_time_ns delay_ns;
};

qp_time_ns fct_base_rtt_ns(const struct fct_hop *hops, size_t n, uint32_t mtu_bytes);
uint64_t fct_wire_bytes(uint64_t bytes, uint32_t mtu_bytes, uint32_t hdr_bytes);
/* base RTT + wire bytes at @bottleneck_bps, rounded up to the ns. */
qp_time_ns fct_ideal_ns(uint64_t bytes, qp_time_ns base_rtt_ns, qp_rate_bps bottleneck_bps,
			uint32_t mtu_bytes, uint32_t hdr_bytes);
double fct_slowdown(qp_time_ns fct_ns, qp_time_ns ideal_ns);   /* at least 1 */
/* The value at index floor(n x p) of @sorted (n - 1 when that is n); NaN when n is 0. */
double fct_pctl(const double *sorted, size_t n, double p);

struct fct_flow {
	uint64_t bytes;
	qp_time_ns fct_ns;
	qp_time_ns ideal_ns;
	bool done;                    /* false: did not finish (not binned) */
};

struct fct_bin {
	double pct_lo, pct_hi;        /* the share of flows, by size, the bin covers */
	uint64_t min_bytes, max_bytes;
	size_t flows;
	double mean, p50, p95, p99;
};

struct fct_summary {
	size_t flows, done, unfinished;
	unsigned step_pct;
	double mean, p50, p95, p99;   /* over every finished flow */
	size_t nbins;                 /* bins with flows in them */
	struct fct_bin bins[FCT_MAX_BINS];
};

/* Slowdowns of @flows binned by size. @step_pct in 1..100 (0: FCT_DEFAULT_STEP). 0, or
 * -EINVAL (a bad step, an ideal FCT of 0) or -ENOMEM with a message. */
int fct_summarise(const struct fct_flow *flows, size_t n, unsigned step_pct,
		  struct fct_summary *out, char *err, size_t errlen);

/* Link utilisation: bytes a port sent over an interval at its rate. */
struct fct_link {
	const char *name;             /* "SWITCH:PORT" */
	uint64_t tx_bytes;
	qp_rate_bps rate_bps;
};
double fct_utilisation(uint64_t tx_bytes, qp_rate_bps rate_bps, qp_time_ns interval_ns);

struct fct_util_summary {
	size_t links, busy;           /* busy: sent anything */
	double mean, max;             /* mean over every link */
	size_t max_index;
};
void fct_util_summarise(const struct fct_link *l, size_t n, qp_time_ns interval_ns,
			struct fct_util_summary *out);

/* PFC pauses, from the switch's per-port counters. */
struct fct_pfc_port {
	const char *name;
	uint64_t pauses_sent, pauses_received;
	qp_time_ns paused_ns;         /* time its egress was paused */
};

struct fct_pfc_summary {
	size_t ports, ports_paused;   /* ports_paused: paused for any time */
	uint64_t pauses_sent, pauses_received;
	qp_time_ns paused_ns, paused_max_ns;
	size_t max_index;             /* the port paused longest */
	double paused_max_frac;       /* of the run */
};
void fct_pfc_summarise(const struct fct_pfc_port *p, size_t n, qp_time_ns run_ns,
		       struct fct_pfc_summary *out);

/* CSV, a header line then one row each: fct_bins.csv, links.csv, pfc.csv. */
void fct_csv_bins(FILE *f, const struct fct_summary *s);
void fct_csv_links(FILE *f, const struct fct_link *l, size_t n, qp_time_ns interval_ns);
void fct_csv_pfc(FILE *f, const struct fct_pfc_port *p, size_t n, qp_time_ns run_ns);

/* Through the printer, as an object under @key: JSON carries every bin; text the
 * summary values and the bins as a table. */
void fct_print(struct qp_out *o, const char *key, const struct fct_summary *s);
void fct_print_links(struct qp_out *o, const char *key, const struct fct_link *l, size_t n,
		     qp_time_ns interval_ns);
void fct_print_pfc(struct qp_out *o, const char *key, const struct fct_pfc_port *p,
		   size_t n, qp_time_ns run_ns);

#endif
