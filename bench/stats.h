/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Statistics for qpace-bench: pure functions, no I/O, no allocation (callers pass the
 * buffers; functions that need order sort the caller's array in place).
 *
 * Jain's fairness index (Jain, Chiu, Hawe, DEC-TR-301, 1984):
 *     J(x) = (sum x_i)^2 / (n * sum x_i^2),  1/n <= J <= 1; J = 1 when all x_i are equal.
 * Percentiles: nearest rank, p-th percentile = x_(ceil(p/100 * n)) of the sorted sample
 *     (1-based; p = 100 is the maximum), so every reported figure is a measured value.
 * FCT slowdown (HPCC's analysis/fct_analysis.py, references §1.3):
 *     standalone = base_rtt + wire_bytes * 8 / link,   wire_bytes = payload + per-packet
 *     headers of ceil(payload / mtu) packets;   slowdown = max(1, fct / standalone).
 * perftest's latency summary (src/perftest_parameters.c print_report_lat): sort, drop the
 *     LAT_MEASURE_TAIL = 2 largest samples, typical = median, avg and population stdev over
 *     the rest, 99% = x[ceil(0.99 m)], 99.9% = x[ceil(0.999 m)] (0-based, m samples kept),
 *     max = x[m].
 */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

/* RoCEv2 per-packet bytes on the switch's wire besides payload: Ethernet 14, IPv4 20,
 * UDP 8, BTH 12, ICRC 4 (the queue model counts frames without FCS). */
#define STATS_ROCE_PKT_OVERHEAD 58u

/* 0 for n = 0 or all-zero samples (no throughput is not "fair"). */
double stats_jain(const double *x, size_t n);
/* Sorts @x in place; nearest-rank percentile, 0 < p <= 100; NaN for n = 0. */
double stats_percentile(double *x, size_t n, double p);
void stats_sort(double *x, size_t n);
double stats_mean(const double *x, size_t n);

/* Bytes on the wire for @payload bytes in packets of @mtu payload bytes. */
uint64_t stats_wire_bytes(uint64_t payload, uint32_t mtu, uint32_t pkt_overhead);
/* The payload rate a link of @link_bps carries with full packets of @mtu bytes. */
double stats_payload_bps(qp_rate_bps link_bps, uint32_t mtu, uint32_t pkt_overhead);
qp_time_ns stats_standalone_fct_ns(uint64_t payload, uint32_t mtu, uint32_t pkt_overhead,
				   qp_rate_bps link_bps, qp_time_ns base_rtt_ns);
double stats_slowdown(qp_time_ns fct_ns, qp_time_ns standalone_ns);

struct stats_fct {
	double p50_us, p99_us, max_us;
	double slowdown_p50, slowdown_p99;
};
/* From @n flow completion times (ns, sorted in place) of flows of @payload bytes each. */
void stats_fct_summary(qp_time_ns *fct_ns, size_t n, qp_time_ns standalone_ns,
		       struct stats_fct *out);

struct stats_lat {
	double min_us, max_us, typical_us, avg_us, stdev_us, p99_us, p999_us;
	size_t kept;                /* samples after dropping the tail */
};
#define STATS_LAT_TAIL 2u
/* @ns (sorted in place) one-way latencies in ns; n > STATS_LAT_TAIL. -ENODATA when too
 * few. */
int stats_lat_summary(double *ns, size_t n, struct stats_lat *out);

/* perftest's BW report: bytes moved in an interval, messages of @size bytes. */
struct stats_bw {
	double peak, avg;           /* MiB/s (2^20 bytes) or Gb/s (1e9 bits) */
	double msg_rate_mpps;
};
/* Average over [first post, last completion]; peak: the best rate over any window of
 * @window consecutive completions (perftest measures its peak over one tx_depth of
 * completions). @done_ns: completion times, ascending; @start_ns: the first post. */
void stats_bw(const qp_time_ns *done_ns, size_t n, qp_time_ns start_ns, uint64_t size,
	      size_t window, int gbits, struct stats_bw *out);

#endif
