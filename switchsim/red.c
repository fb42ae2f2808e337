/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RED-style ECN marking on the instantaneous queue (see red.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "qpace/errmsg.h"
#include "red.h"

int sw_red_check(const struct sw_red_params *p, uint64_t buffer_bytes, char *err, size_t len)
{
	if (!p->kmax_bytes)
		return 0;
	if (p->kmin_bytes >= p->kmax_bytes)
		return qp_errmsg(-EINVAL, err, len, "ecn: Kmin %" PRIu64 " must be below Kmax %"
				 PRIu64 " (bytes)", p->kmin_bytes, p->kmax_bytes);
	if (p->kmax_bytes > buffer_bytes)
		return qp_errmsg(-EINVAL, err, len, "ecn: Kmax %" PRIu64
				 " is above the buffer of %" PRIu64
				 " bytes (accepted: Kmin < Kmax <= buffer)",
				 p->kmax_bytes, buffer_bytes);
	if (!(p->pmax > 0 && p->pmax <= 1))
		return qp_errmsg(-EINVAL, err, len, "ecn: Pmax %g outside (0, 1]", p->pmax);
	return 0;
}

uint64_t sw_red_prob32(const struct sw_red_params *p, uint64_t qbytes)
{
	double frac;

	if (!p->kmax_bytes || qbytes <= p->kmin_bytes)
		return 0;
	if (qbytes >= p->kmax_bytes)
		return 1ULL << 32;
	frac = (double)(qbytes - p->kmin_bytes) / (double)(p->kmax_bytes - p->kmin_bytes);
	return (uint64_t)(p->pmax * frac * 4294967296.0);
}

bool sw_red_mark(const struct sw_red_params *p, uint64_t qbytes, struct sw_rng *rng)
{
	uint64_t prob = sw_red_prob32(p, qbytes);

	if (prob == 0)
		return false;
	if (prob >= 1ULL << 32)
		return true;
	return (sw_rng_next(rng) >> 32) < prob;
}

uint64_t sw_red_avg_update(struct sw_red_avg *a, double w, uint64_t q, qp_time_ns arrival,
			   qp_time_ns depart, qp_time_ns tx_ns)
{
	if (w >= 1) {
		a->avg = (double)q;
	} else {
		if (arrival > a->busy_until && a->avg > 0 && tx_ns)
			a->avg *= pow(1 - w, (double)(arrival - a->busy_until) / (double)tx_ns);
		a->avg = (1 - w) * a->avg + w * (double)q;
	}
	if (depart > a->busy_until)
		a->busy_until = depart;
	return (uint64_t)(a->avg + 0.5);
}
