/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What enforces each QP's rate: the pacing gate, or the NIC's per-QP rate limit
 * (ibv_modify_qp_rate_limit on mlx5, bnxt_re) behind the same interface — the backend's
 * rate_caps / rate_limit slots (qpace/qp.h). Private to verbs/; the rules are in
 * verbs/qp_enforce.c and docs/verbs.md#hardware-rate-limits. */
#ifndef QPACE_VERBS_QP_ENFORCE_H
#define QPACE_VERBS_QP_ENFORCE_H

#include <stdbool.h>
#include "qpace/qp.h"

/* At connect: the device's caps (queried once per context, one line saying which
 * enforces and why), and the QP's enforcer. */
void qp_enforce_select(struct qp *qp);
/* The gate's take flags for this QP's pieces: QP_GATE_NO_TOKENS when the NIC paces. */
static inline unsigned qp_enforce_gate_flags(const struct qp *qp)
{
	return qp->enforce.which == QP_ENF_NIC ? QP_GATE_NO_TOKENS : 0;
}
/* The rate in force (the gate's verdict) is @bps: a NIC-enforced QP gets it as its limit
 * when it changed. A limit the NIC refuses sends the QP back to the gate for good
 * (counted, one line per context; EOPNOTSUPP: the context's later QPs too). */
void qp_enforce_nic(struct qp *qp, qp_rate_bps bps);
static inline void qp_enforce_apply(struct qp *qp, qp_rate_bps bps)
{
	if (qp->enforce.which == QP_ENF_NIC && bps)   /* after every verdict: the gate's QPs */
		qp_enforce_nic(qp, bps);
}
/* @bps in kbit/s (rounded to nearest, at least 1), clamped into @caps; *@clamped says
 * whether it had to be. */
uint32_t qp_enforce_kbps(qp_rate_bps bps, const struct qp_rate_caps *caps, bool *clamped);
/* "gate", "nic". */
const char *qp_enforcer_name(enum qp_enforcer e);

#endif
