/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Prometheus text for an agent core (see qpace/agent_metrics.h).
 *
 * Agent counters become qpace_agent_<name>_total, except the feedback outcomes, which are
 * families with a label so a dashboard can sum them: qpace_agent_feedback_rejected_total
 * {reason}, qpace_agent_feedback_malformed_total{kind}. Samples of one family are written
 * together, as the format requires: one pass over the QPs per per-QP family.
 */
#include <stdio.h>
#include <string.h>

#include "agent_metrics.h"
#include "qpace/addr.h"

static const struct {
	enum agent_counter c;
	const char *family, *label, *value;
} labelled[] = {
	{ AGENT_C_FB_REJ_SOURCE, "feedback_rejected", "reason", "source" },
	{ AGENT_C_FB_REJ_NOTAG, "feedback_rejected", "reason", "notag" },
	{ AGENT_C_FB_REJ_TAG, "feedback_rejected", "reason", "tag" },
	{ AGENT_C_FB_REJ_REPLAY, "feedback_rejected", "reason", "replay" },
	{ AGENT_C_FB_REJ_FUTURE, "feedback_rejected", "reason", "future" },
	{ AGENT_C_FB_MAL_PROTO, "feedback_malformed", "kind", "proto" },
	{ AGENT_C_FB_MAL_TRUNC, "feedback_malformed", "kind", "truncated" },
	{ AGENT_C_FB_MAL_FIELD, "feedback_malformed", "kind", "field" },
	{ AGENT_C_FB_MAL_TYPE, "feedback_malformed", "kind", "type" },
	{ AGENT_C_FB_MAL_OVERSIZE, "feedback_malformed", "kind", "oversize" },
};

#define N_LABELLED (sizeof(labelled) / sizeof(labelled[0]))

static int labelled_at(enum agent_counter c)
{
	for (size_t i = 0; i < N_LABELLED; i++)
		if (labelled[i].c == c)
			return (int)i;
	return -1;
}

/* A family is written whole at its first member in the table (later members of it may
 * come anywhere in the counters' order: counters are appended). */
static bool family_first(int l)
{
	for (int k = 0; k < l; k++)
		if (strcmp(labelled[k].family, labelled[l].family) == 0)
			return false;
	return true;
}

static void family_head(struct qp_strbuf *b, const char *name, const char *type,
			const char *help)
{
	qp_strbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_counters(const struct agent *a, struct qp_strbuf *b)
{
	const uint64_t *c = agent_counters(a);

	for (int i = 0; i < AGENT_C_COUNT; i++) {
		int l = labelled_at((enum agent_counter)i);
		const char *family;
		char name[96];

		if (l < 0) {
			snprintf(name, sizeof(name), "qpace_agent_%s_total", agent_counter_name(i));
			family_head(b, name, "counter", agent_counter_help(i));
			qp_strbuf_printf(b, "%s %llu\n", name, (unsigned long long)c[i]);
			continue;
		}
		if (!family_first(l))
			continue;
		family = labelled[l].family;
		snprintf(name, sizeof(name), "qpace_agent_%s_total", family);
		family_head(b, name, "counter", strcmp(family, "feedback_rejected") == 0
				? "feedback dropped: source not allowed; with a key: unsigned, tag "
				  "wrong, a replay, or a clock too far ahead"
				: "feedback that did not decode, by kind");
		for (size_t k = 0; k < N_LABELLED; k++)
			if (strcmp(labelled[k].family, family) == 0)
				qp_strbuf_printf(b, "%s{%s=\"%s\"} %llu\n", name, labelled[k].label,
						 labelled[k].value,
						 (unsigned long long)c[labelled[k].c]);
	}
}

static void render_delay(const struct qp_hist *h, struct qp_strbuf *b)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	const char *name = "qpace_agent_feedback_delay_seconds";

	family_head(b, name, "summary", "delay from a feedback datagram's arrival (kernel "
		    "timestamp) to the rate-table write it caused");
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		qp_strbuf_printf(b, "%s{quantile=\"%g\"} %.9f\n", name, qs[i],
				 qp_hist_quantile(h, qs[i]) / 1e9);
	qp_strbuf_printf(b, "%s_sum %.9f\n%s_count %llu\n", name, h->sum / 1e9, name,
			 (unsigned long long)h->count);
}

/* ---- per QP ---- */

typedef double (*qp_value_fn)(const struct agent_qp_view *v);

#define VIEW_FN(fn, expr) \
	static double fn(const struct agent_qp_view *v) { return (double)(expr); }
VIEW_FN(v_rate, v->rate_bps)
VIEW_FN(v_target, v->target_bps)
VIEW_FN(v_line, v->reg.link_bps)
VIEW_FN(v_override, v->override)
VIEW_FN(v_gated, v->credit_gated)
VIEW_FN(v_credits_rx, v->credits_rx_bytes)
VIEW_FN(v_credits_tx, v->credits_tx_bytes)
VIEW_FN(v_util, v->utilization)
VIEW_FN(v_queue, v->queue_bytes)
VIEW_FN(v_rtt, v->rtt_ns / 1e9)
VIEW_FN(v_base_rtt, v->reg.base_rtt_ns / 1e9)
VIEW_FN(v_tx, v->tx_bytes)
VIEW_FN(v_retrans, v->retransmissions)
VIEW_FN(v_feedback, v->feedback)
VIEW_FN(v_wire, v->wire.measured_bps)
VIEW_FN(v_wire_set, v->wire.set_bps)
VIEW_FN(v_wire_bytes, v->wire.bytes)
VIEW_FN(v_wire_pkts, v->wire.pkts)
VIEW_FN(v_wire_floored, v->wire.floored)
VIEW_FN(v_wire_resent, v->wire.resent)
VIEW_FN(v_wire_ackreq, v->wire.ackreqs)

static const struct {
	const char *name, *type, *help;
	qp_value_fn value;
} qp_families[] = {
	{ "qpace_qp_rate_bps", "gauge", "rate published to the pacing gate, bits/s", v_rate },
	{ "qpace_qp_target_bps", "gauge", "the algorithm's own rate, bits/s", v_target },
	{ "qpace_qp_line_bps", "gauge", "the QP's link rate, bits/s", v_line },
	{ "qpace_qp_override", "gauge", "1 when a manual rate is in force", v_override },
	{ "qpace_qp_credit_gated", "gauge", "1 when the receiver paces this QP with credits",
	  v_gated },
	{ "qpace_qp_credits_received_bytes_total", "counter",
	  "credits granted to this QP by its receiver", v_credits_rx },
	{ "qpace_qp_credits_granted_bytes_total", "counter",
	  "credits this agent granted to the QP's sender", v_credits_tx },
	{ "qpace_qp_utilization", "gauge",
	  "most congested hop of the last INT report: txRate/B + qlen/(B*T)", v_util },
	{ "qpace_qp_queue_bytes", "gauge", "largest queue in the last report", v_queue },
	{ "qpace_qp_rtt_seconds", "gauge", "base RTT plus the last report's queueing delay",
	  v_rtt },
	{ "qpace_qp_base_rtt_seconds", "gauge", "registered base RTT", v_base_rtt },
	{ "qpace_qp_tx_bytes_total", "counter", "bytes sent, as the application reports",
	  v_tx },
	{ "qpace_qp_retransmissions_total", "counter",
	  "retransmitted packets, as the application reports", v_retrans },
	{ "qpace_qp_feedback_total", "counter", "feedback messages that reached this QP",
	  v_feedback },
	{ "qpace_qp_wire_bps", "gauge", "rate measured on the wire (tc egress), bits/s", v_wire },
	{ "qpace_qp_wire_set_bps", "gauge", "rate the tc egress program enforces, bits/s "
	  "(0 = none)", v_wire_set },
	{ "qpace_qp_wire_bytes_total", "counter", "Ethernet bytes seen on the wire (tc egress)",
	  v_wire_bytes },
	{ "qpace_qp_wire_packets_total", "counter", "frames seen on the wire (tc egress)",
	  v_wire_pkts },
	{ "qpace_qp_wire_floored", "gauge", "1 when the algorithm asks for less than the "
	  "no-timeout floor and the QP is paced at the floor (its fair share is infeasible)",
	  v_wire_floored },
	{ "qpace_qp_wire_resent_total", "counter", "go-back-N resends seen on the wire "
	  "(a PSN not beyond the highest sent)", v_wire_resent },
	{ "qpace_qp_wire_ackreq_total", "counter", "data frames the tc program gave AckReq",
	  v_wire_ackreq },
};

/* Integers as integers (1e10 would be valid, 10000000000 is kinder to a reader). */
static void value(struct qp_strbuf *b, double v)
{
	if (v >= 0 && v < 9e18 && v == (double)(uint64_t)v)
		qp_strbuf_printf(b, "%llu\n", (unsigned long long)v);
	else
		qp_strbuf_printf(b, "%.9g\n", v);
}

static void render_qps(const struct agent *a, struct qp_strbuf *b)
{
	for (size_t f = 0; f < sizeof(qp_families) / sizeof(qp_families[0]); f++) {
		family_head(b, qp_families[f].name, qp_families[f].type, qp_families[f].help);
		for (uint32_t i = 0; i < agent_max_qps(a); i++) {
			struct agent_qp_view v;
			char peer[QP_IPV6_STRLEN];

			if (agent_qp_view_at(a, i, &v))
				continue;
			qp_strbuf_printf(b, "%s{qpn=\"0x%06x\",peer=\"%s\",peer_qpn=\"0x%06x\","
					 "algo=\"%s\"} ", qp_families[f].name, v.reg.qpn,
					 agent_qp_addr_fmt(&v.reg, true, peer, sizeof(peer)),
					 v.reg.peer_qpn, v.reg.algo);
			value(b, qp_families[f].value(&v));
		}
	}
}

void agent_metrics_render(const struct agent *a, const struct agent_metrics_extra *x,
			  struct qp_strbuf *b)
{
	family_head(b, "qpace_agent_qps", "gauge", "QPs registered");
	qp_strbuf_printf(b, "qpace_agent_qps %u\n", agent_qp_count(a));
	family_head(b, "qpace_agent_max_qps", "gauge", "most QPs the agent accepts");
	qp_strbuf_printf(b, "qpace_agent_max_qps %u\n", agent_max_qps(a));
	family_head(b, "qpace_agent_tx_pending", "gauge", "datagrams queued for sending");
	qp_strbuf_printf(b, "qpace_agent_tx_pending %u\n", agent_tx_pending(a));
	if (x && x->uptime_ns) {
		family_head(b, "qpace_agent_uptime_seconds", "gauge", "seconds since the start");
		qp_strbuf_printf(b, "qpace_agent_uptime_seconds %.3f\n", x->uptime_ns / 1e9);
	}
	render_counters(a, b);
	if (x && x->delay)
		render_delay(x->delay, b);
	render_qps(a, b);
}
