/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What enforces each QP's rate (verbs/qp_enforce.h).
 *
 * - Selection, per device: at a context's first connect the backend's rate_caps says
 *   whether the device limits RC QPs' rates itself (ibv: ibv_query_device_ex's
 *   packet_pacing_caps with IBV_QPT_RC among supported_qpts and a non-zero maximum). Then
 *   every QP of the context is the NIC's (one line says so, with the caps); else (rxe, the
 *   soft backend, a query that fails) the gate's, as before: ctx->enforce.why says why.
 * - The NIC's QPs still pass the gate, with QP_GATE_NO_TOKENS: it decides the rate in
 *   force exactly as for its own QPs (the agent's, or hold / safe when the agent is lost),
 *   keeps credits and the window cap, and does not wait for tokens. The rate it decides
 *   goes to the NIC when it changed: kbit/s, rounded, clamped to the caps (counted).
 * - Fallback: a limit the NIC refuses (EINVAL, EOPNOTSUPP, any error) sends the QP back to
 *   the gate for good: the NIC's limit is cleared (0 = none), the failure counted, one line
 *   per context. EOPNOTSUPP means the device will refuse every QP: later QPs of the
 *   context start on the gate.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qp_agent.h"
#include "qp_enforce.h"
#include "qpace/ctl.h"

_Static_assert((int)QP_ENF_GATE == (int)AGENT_ENF_GATE && (int)QP_ENF_NIC == (int)AGENT_ENF_NIC,
	       "the QP layer's enforcers are the control protocol's");

static void say(struct qp_ctx *ctx, const char *line)
{
	ctx->rates.log(ctx->rates.log_arg, line);
}

const char *qp_enforcer_name(enum qp_enforcer e)
{
	return ctl_enforce_name((unsigned)e);
}

uint32_t qp_enforce_kbps(qp_rate_bps bps, const struct qp_rate_caps *caps, bool *clamped)
{
	uint64_t k = (bps + QP_KBPS / 2) / QP_KBPS;

	*clamped = false;
	if (k < 1)
		k = 1;
	if (caps->min_kbps && k < caps->min_kbps) {
		k = caps->min_kbps;
		*clamped = true;
	}
	if (k > caps->max_kbps) {
		k = caps->max_kbps;
		*clamped = true;
	}
	return (uint32_t)k;
}

static void dev_query(struct qp_ctx *ctx)
{
	struct qp_enforce_dev *d = &ctx->enforce;

	d->queried = true;
	memset(&d->caps, 0, sizeof(d->caps));
	d->rc = ctx->ops->rate_caps(ctx, &d->caps);
	if (d->rc == 0 && (!d->caps.max_kbps || d->caps.min_kbps > d->caps.max_kbps))
		d->rc = -EOPNOTSUPP;  /* no usable range: as no support */
	if (d->rc == 0) {
		snprintf(d->why, sizeof(d->why), "%s: the NIC enforces each QP's rate (per-QP "
			 "rate limits %u..%u kbit/s); the gate keeps credits and the window",
			 ctx->ops->name, d->caps.min_kbps, d->caps.max_kbps);
		say(ctx, d->why);  /* the gate is the default: only the NIC is news */
	} else {
		snprintf(d->why, sizeof(d->why), "%s: the pacing gate enforces each QP's rate: "
			 "the device has no per-QP rate limits for RC QPs (%s)", ctx->ops->name,
			 strerror(-d->rc));
	}
}

void qp_enforce_select(struct qp *qp)
{
	struct qp_ctx *ctx = qp->ctx;

	if (!ctx->enforce.queried)
		dev_query(ctx);
	memset(&qp->enforce, 0, sizeof(qp->enforce));
	qp->enforce.which = ctx->enforce.rc == 0 ? QP_ENF_NIC : QP_ENF_GATE;
}

void qp_enforce_nic(struct qp *qp, qp_rate_bps bps)
{
	struct qp_enforce *e = &qp->enforce;
	struct qp_ctx *ctx = qp->ctx;
	char line[200];
	bool clamped;
	uint32_t kbps;
	int rc;

	kbps = qp_enforce_kbps(bps, &ctx->enforce.caps, &clamped);
	if (kbps == e->kbps)
		return;
	rc = ctx->ops->rate_limit(qp, kbps);
	if (rc == 0) {
		e->kbps = kbps;
		e->sets++;
		e->clamped += clamped;
		return;
	}
	rc = rc < 0 ? rc : -rc;
	e->failures++;
	e->which = QP_ENF_GATE;
	e->kbps = 0;
	(void)ctx->ops->rate_limit(qp, 0);  /* an earlier limit must not cap the gate's rate */
	if (rc == -EOPNOTSUPP)
		ctx->enforce.rc = rc;
	if (!ctx->enforce.said_refused) {
		snprintf(line, sizeof(line), "qp 0x%06x: the NIC refused a rate limit of %u kbit/s "
			 "(%s): the pacing gate enforces its rate from now on%s", qp->qpn, kbps,
			 strerror(-rc), rc == -EOPNOTSUPP ? ", and every later QP's" : "");
		say(ctx, line);
		ctx->enforce.said_refused = true;
	}
	qp_agent_posted(ctx);  /* the agent is told the new enforcer */
}
