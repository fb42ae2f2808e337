/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* FCT slowdown by flow size, link utilisation and PFC pause summaries (qpace/fct.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/fct.h"

qp_time_ns fct_base_rtt_ns(const struct fct_hop *hops, size_t n, uint32_t mtu_bytes)
{
	qp_time_ns rtt = 0;

	for (size_t i = 0; i < n; i++)
		rtt += 2 * hops[i].delay_ns + qp_tx_time_ns(mtu_bytes, hops[i].rate_bps);
	return rtt;
}

uint64_t fct_wire_bytes(uint64_t bytes, uint32_t mtu_bytes, uint32_t hdr_bytes)
{
	/* a message of 0 bytes is still one packet (as the RC core sends it) */
	uint64_t packets = bytes ? (bytes + mtu_bytes - 1) / mtu_bytes : 1;
	return bytes + packets * hdr_bytes;
}

qp_time_ns fct_ideal_ns(uint64_t bytes, qp_time_ns base_rtt_ns, qp_rate_bps bottleneck_bps,
			uint32_t mtu_bytes, uint32_t hdr_bytes)
{
	return base_rtt_ns + qp_tx_time_ns(fct_wire_bytes(bytes, mtu_bytes, hdr_bytes),
					   bottleneck_bps);
}

double fct_slowdown(qp_time_ns fct_ns, qp_time_ns ideal_ns)
{
	double s = (double)fct_ns / (double)ideal_ns;
	return s < 1 ? 1 : s;
}

double fct_pctl(const double *sorted, size_t n, double p)
{
	size_t i;

	if (!n)
		return NAN;
	i = (size_t)((double)n * p);
	return sorted[i < n ? i : n - 1];
}

struct sized {
	uint64_t bytes;
	double slowdown;
};

static int cmp_sized(const void *pa, const void *pb)
{
	const struct sized *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return (a->slowdown > b->slowdown) - (a->slowdown < b->slowdown);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* Mean and percentiles of @v (sorted here). */
static void describe(double *v, size_t n, double *mean, double *p50, double *p95, double *p99)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	*mean = n ? sum / (double)n : NAN;
	*p50 = fct_pctl(v, n, 0.50);
	*p95 = fct_pctl(v, n, 0.95);
	*p99 = fct_pctl(v, n, 0.99);
}

int fct_summarise(const struct fct_flow *flows, size_t n, unsigned step_pct,
		  struct fct_summary *out, char *err, size_t errlen)
{
	struct sized *f;
	double *v;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->step_pct = step_pct ? step_pct : FCT_DEFAULT_STEP;
	if (out->step_pct > 100)
		return qp_errmsg(-EINVAL, err, errlen, "bin step %u%%: accepted 1..100", step_pct);
	out->flows = n;
	f = malloc((n ? n : 1) * sizeof(*f));
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!f || !v) {
		free(f);
		free(v);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory for %zu flows", n);
	}
	for (size_t i = 0; i < n; i++) {
		if (!flows[i].done)
			continue;
		if (!flows[i].ideal_ns) {
			free(f);
			free(v);
			return qp_errmsg(-EINVAL, err, errlen, "flow %zu: ideal FCT of 0 ns "
					 "(a path of zero rate?)", i);
		}
		f[k].bytes = flows[i].bytes;
		f[k++].slowdown = fct_slowdown(flows[i].fct_ns, flows[i].ideal_ns);
	}
	out->done = k;
	out->unfinished = n - k;
	qsort(f, k, sizeof(*f), cmp_sized);
	for (size_t i = 0; i < k; i++)
		v[i] = f[i].slowdown;
	describe(v, k, &out->mean, &out->p50, &out->p95, &out->p99);
	/* HPCC: for p in range(0, 100, step): flows [p n / 100, (p + step) n / 100) */
	for (unsigned p = 0; p < 100; p += out->step_pct) {
		size_t lo = (size_t)p * k / 100, hi = (size_t)(p + out->step_pct) * k / 100;
		struct fct_bin *b = &out->bins[out->nbins];

		if (hi > k)
			hi = k;
		if (hi <= lo)
			continue;
		b->pct_lo = p;
		b->pct_hi = p + out->step_pct > 100 ? 100 : p + out->step_pct;
		b->min_bytes = f[lo].bytes;
		b->max_bytes = f[hi - 1].bytes;
		b->flows = hi - lo;
		for (size_t i = lo; i < hi; i++)
			v[i - lo] = f[i].slowdown;
		describe(v, hi - lo, &b->mean, &b->p50, &b->p95, &b->p99);
		out->nbins++;
	}
	free(f);
	free(v);
	return 0;
}

double fct_utilisation(uint64_t tx_bytes, qp_rate_bps rate_bps, qp_time_ns interval_ns)
{
	if (!rate_bps || !interval_ns)
		return 0;
	return (double)tx_bytes * 8 * 1e9 / ((double)rate_bps * (double)interval_ns);
}

void fct_util_summarise(const struct fct_link *l, size_t n, qp_time_ns interval_ns,
			struct fct_util_summary *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	out->links = n;
	for (size_t i = 0; i < n; i++) {
		double u = fct_utilisation(l[i].tx_bytes, l[i].rate_bps, interval_ns);
		sum += u;
		out->busy += l[i].tx_bytes > 0;
		if (u > out->max) {
			out->max = u;
			out->max_index = i;
		}
	}
	out->mean = n ? sum / (double)n : 0;
}

void fct_pfc_summarise(const struct fct_pfc_port *p, size_t n, qp_time_ns run_ns,
		       struct fct_pfc_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->ports = n;
	for (size_t i = 0; i < n; i++) {
		out->pauses_sent += p[i].pauses_sent;
		out->pauses_received += p[i].pauses_received;
		out->paused_ns += p[i].paused_ns;
		out->ports_paused += p[i].paused_ns > 0;
		if (p[i].paused_ns > out->paused_max_ns) {
			out->paused_max_ns = p[i].paused_ns;
			out->max_index = i;
		}
	}
	out->paused_max_frac = run_ns ? (double)out->paused_max_ns / (double)run_ns : 0;
}
