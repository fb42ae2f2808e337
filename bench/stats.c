/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Statistics for qpace-bench: see stats.h for the definitions and their sources. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats.h"

double stats_jain(const double *x, size_t n)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	if (n == 0 || sq <= 0)
		return 0;
	return sum * sum / ((double)n * sq);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void stats_sort(double *x, size_t n)
{
	if (n > 1)
		qsort(x, n, sizeof(*x), cmp_double);
}

double stats_percentile(double *x, size_t n, double p)
{
	if (n == 0 || !(p > 0) || p > 100)
		return NAN;
	stats_sort(x, n);
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);   /* 1-based */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return x[rank - 1];
}

double stats_mean(const double *x, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += x[i];
	return n ? sum / (double)n : NAN;
}

uint64_t stats_wire_bytes(uint64_t payload, uint32_t mtu, uint32_t pkt_overhead)
{
	uint64_t pkts = mtu ? (payload + mtu - 1) / mtu : 1;

	if (pkts == 0)
		pkts = 1;
	return payload + pkts * pkt_overhead;
}

double stats_payload_bps(qp_rate_bps link_bps, uint32_t mtu, uint32_t pkt_overhead)
{
	return (double)link_bps * mtu / ((double)mtu + pkt_overhead);
}

qp_time_ns stats_standalone_fct_ns(uint64_t payload, uint32_t mtu, uint32_t pkt_overhead,
				   qp_rate_bps link_bps, qp_time_ns base_rtt_ns)
{
	return base_rtt_ns + qp_tx_time_ns(stats_wire_bytes(payload, mtu, pkt_overhead),
					   link_bps);
}

double stats_slowdown(qp_time_ns fct_ns, qp_time_ns standalone_ns)
{
	if (standalone_ns == 0)
		return NAN;
	double s = (double)fct_ns / (double)standalone_ns;
	return s < 1 ? 1 : s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest rank in a sorted array of n > 0 values. */
static qp_time_ns rank_u64(const qp_time_ns *x, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);

	if (rank < 1)
		rank = 1;
	return x[(rank > n ? n : rank) - 1];
}

void stats_fct_summary(qp_time_ns *fct_ns, size_t n, qp_time_ns standalone_ns,
		       struct stats_fct *out)
{
	if (n == 0) {
		*out = (struct stats_fct){ NAN, NAN, NAN, NAN, NAN };
		return;
	}
	qsort(fct_ns, n, sizeof(*fct_ns), cmp_u64);
	qp_time_ns p50 = rank_u64(fct_ns, n, 50), p99 = rank_u64(fct_ns, n, 99);
	out->p50_us = (double)p50 / 1e3;
	out->p99_us = (double)p99 / 1e3;
	out->max_us = (double)fct_ns[n - 1] / 1e3;
	out->slowdown_p50 = stats_slowdown(p50, standalone_ns);
	out->slowdown_p99 = stats_slowdown(p99, standalone_ns);
}

int stats_lat_summary(double *ns, size_t n, struct stats_lat *out)
{
	if (n <= STATS_LAT_TAIL)
		return -ENODATA;
	stats_sort(ns, n);
	size_t m = n - STATS_LAT_TAIL;
	double sum = 0, var = 0;

	for (size_t i = 0; i < m; i++)
		sum += ns[i];
	double avg = sum / (double)m;
	for (size_t i = 0; i < m; i++)
		var += (ns[i] - avg) * (ns[i] - avg);
	/* perftest's get_median on the kept samples. */
	double median = (m - 1) % 2 ? (ns[m / 2] + ns[m / 2 - 1]) / 2 : ns[m / 2];
	size_t i99 = (size_t)ceil((double)m * 0.99), i999 = (size_t)ceil((double)m * 0.999);

	out->min_us = ns[0] / 1e3;
	out->max_us = ns[m] / 1e3;
	out->typical_us = median / 1e3;
	out->avg_us = avg / 1e3;
	out->stdev_us = sqrt(var / (double)m) / 1e3;
	out->p99_us = ns[i99 < n ? i99 : n - 1] / 1e3;
	out->p999_us = ns[i999 < n ? i999 : n - 1] / 1e3;
	out->kept = m;
	return 0;
}

static double bw_units(double bytes_per_s, int gbits)
{
	return gbits ? bytes_per_s * 8 / 1e9 : bytes_per_s / (1024.0 * 1024.0);
}

void stats_bw(const qp_time_ns *done_ns, size_t n, qp_time_ns start_ns, uint64_t size,
	      size_t window, int gbits, struct stats_bw *out)
{
	*out = (struct stats_bw){ 0, 0, 0 };
	if (n == 0 || done_ns[n - 1] <= start_ns)
		return;
	double secs = (double)(done_ns[n - 1] - start_ns) / 1e9;
	out->avg = bw_units((double)size * (double)n / secs, gbits);
	out->msg_rate_mpps = (double)n / secs / 1e6;
	out->peak = out->avg;
	if (window == 0)
		window = 1;
	if (window >= n)
		return;
	for (size_t i = 0; i + window < n; i++) {
		qp_time_ns dt = done_ns[i + window] - done_ns[i];
		if (dt == 0)
			continue;
		double bw = bw_units((double)size * (double)window / ((double)dt / 1e9), gbits);
		if (bw > out->peak)
			out->peak = bw;
	}
}
