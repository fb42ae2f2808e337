/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Prometheus text exposition (format 0.0.4) of an agent core: agent counters and gauges,
 * and per-QP gauges and counters labelled {qpn, peer, peer_qpn, algo}. Pure: renders into
 * a buffer, so the daemon's HTTP endpoint and qpace-bench's emulated hosts share it. */
#ifndef QPACE_AGENT_METRICS_H
#define QPACE_AGENT_METRICS_H

#include "qpace/agent.h"
#include "qpace/hist.h"
#include "qpace/strbuf.h"

/* What the shell adds; any field may be 0 / NULL. */
struct agent_metrics_extra {
	qp_time_ns uptime_ns;
	const struct qp_hist *delay;   /* kernel arrival -> rate-table write, ns */
};

void agent_metrics_render(const struct agent *a, const struct agent_metrics_extra *x,
			  struct qp_strbuf *b);

#endif
