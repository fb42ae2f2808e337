/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rate written for a QP found on the wire (wire_rate.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "wire_rate.h"

#define WIRE_START_PARAM "init_rate"

qp_rate_bps wire_rate_fold(qp_rate_bps rate, uint64_t cap_bytes, qp_time_ns base_rtt_ns)
{
	unsigned __int128 cap_bps;

	if (!cap_bytes || !base_rtt_ns)
		return rate;
	cap_bps = (unsigned __int128)cap_bytes * 8u * QP_NS_PER_S / base_rtt_ns;
	return cap_bps < rate ? (qp_rate_bps)cap_bps : rate;
}

qp_time_ns wire_ack_timeout_ns(unsigned exp)
{
	if (exp == 0 || exp > 31)
		return 0;
	return (qp_time_ns)4096u << exp;   /* 4.096 us = 4096 ns */
}

qp_rate_bps wire_rate_floor(unsigned skbs, uint32_t mtu, qp_time_ns timeout_ns,
			    unsigned share_pct)
{
	unsigned __int128 bits = (unsigned __int128)skbs * (mtu + WIRE_ROCE_OVERHEAD) * 8u;
	unsigned __int128 window = (unsigned __int128)timeout_ns * share_pct;

	if (!timeout_ns || !share_pct || !skbs)
		return 0;
	/* R >= bits / (timeout x share / 100), rounded up */
	return (qp_rate_bps)((bits * QP_NS_PER_S * 100u + window - 1) / window);
}

qp_time_ns wire_rtt_auto(qp_rate_bps line, uint32_t mtu)
{
	unsigned __int128 ns;

	if (!line)
		return WIRE_RTT_MIN_NS;
	ns = (unsigned __int128)WIRE_RXE_INFLIGHT_SKBS * (mtu + WIRE_ROCE_OVERHEAD) * 8u *
	     QP_NS_PER_S / line;
	return ns < WIRE_RTT_MIN_NS ? WIRE_RTT_MIN_NS : ns > 10 * QP_NS_PER_S ? 10 * QP_NS_PER_S
											 : (qp_time_ns)ns;
}

qp_time_ns wire_ack_gap(qp_time_ns timeout_ns, unsigned share_pct)
{
	return (qp_time_ns)((unsigned __int128)timeout_ns * share_pct / 100u);
}

qp_rate_bps wire_rate(qp_rate_bps rate, uint64_t cap_bytes, qp_time_ns base_rtt_ns,
		      qp_rate_bps floor, qp_rate_bps line)
{
	qp_rate_bps r = wire_rate_fold(rate, cap_bytes, base_rtt_ns);

	if (r < floor)
		r = floor;
	if (line && r > line)
		r = line;
	return r;
}

qp_rate_bps wire_rate_used(qp_rate_bps want, qp_rate_bps used_bps, unsigned pct,
			   qp_rate_bps start)
{
	unsigned __int128 m = (unsigned __int128)used_bps * pct / 100u;
	qp_rate_bps cap = m > UINT64_MAX ? UINT64_MAX : (qp_rate_bps)m;

	if (!pct)
		return want;
	if (cap < start)
		cap = start;
	return want < cap ? want : cap;
}

qp_rate_bps wire_fq_maxrate(qp_rate_bps top, unsigned pct, qp_rate_bps cap)
{
	unsigned __int128 m = (unsigned __int128)top * pct / 100u;

	if (!pct || !top)
		return cap;
	if (!m)
		m = 1;
	if (m > UINT64_MAX)
		m = UINT64_MAX;
	return cap && m > cap ? cap : (qp_rate_bps)m;
}

bool wire_fq_maxrate_moved(qp_rate_bps cur, qp_rate_bps want)
{
	if (!cur)
		return want != 0;
	return (unsigned __int128)want * 8u > (unsigned __int128)cur * 9u ||
	       (unsigned __int128)want * 4u < (unsigned __int128)cur * 3u;
}

/* Does "k=v,..." set @key? */
static bool sets(const char *params, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = params; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == '=')
			return true;
	return false;
}

int wire_start_params(const struct cc_ops *ops, const char *params, qp_rate_bps start,
		      char *out, size_t len)
{
	int n;

	if (!params)
		params = "";
	if (!start || !cc_param_find(ops, WIRE_START_PARAM) || sets(params, WIRE_START_PARAM))
		n = snprintf(out, len, "%s", params);
	else
		n = snprintf(out, len, "%s%s" WIRE_START_PARAM "=%llu", params,
			     params[0] ? "," : "", (unsigned long long)start);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			out[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}
