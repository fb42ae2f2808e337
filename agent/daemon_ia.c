/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced --credits ia --enforce tc, the receiver's side of IA credits for programs that do
 * not register their QPs (docs/enforce.md "IA credits for unmodified receivers"):
 *
 *   poll   every half grant period (100 us..1 ms), the ingress program's receiving flows
 *          (qpi_flows: data frames per (sender address, local QPN), tc_ingress_abi.h), no
 *          per-packet report. A flow not seen before becomes a receiving QP of the core (its QPN the
 *          local one, AGENT_QP_RECEIVER, cc none, --wire-mtu/-rtt, the line rate), so it
 *          joins its local address's credit pacer; the frames that found it (of a flow
 *          first seen within --ia-idle), then those that arrived since the last
 *          poll, go to the pacer as arrivals (frames x --wire-mtu, agent_qp_arrived), which
 *          answers them with grants (CREDIT messages to the agent at the sender's address,
 *          feedback port --peer-port, signed when a key is set)
 *   idle   a receiving flow with no frame for --ia-idle (1 s) leaves the pacer (n falls,
 *          the others' W grows); its count is kept, so when it sends again it is a
 *          receiving QP again with no frame counted twice or lost
 *
 * The sender's agent turns the grants into its egress program's credit budget
 * (daemon_tc.c, wire_credit.h). The wire shows only the destination QPN: the receiving QP's
 * peer QPN is a placeholder, QP_RATE_QPN_MAX - local QPN (unique per local QP; it names no
 * flow the core feeds). A QPN a program registered itself is left to that program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "daemon_priv.h"
#include "qpace/addr.h"

#define QPACED_IA_POLL_NS QP_NS_PER_MS          /* at most; at least: */
#define QPACED_IA_POLL_MIN_NS (100 * QP_NS_PER_US)
#define QPACED_IA_FORGET_NS (60 * QP_NS_PER_S)
#define QPACED_IA_OWNER 0xfffffffeu   /* owner of the receiving QPs made here */

struct ia_flow {
	bool used, ours;             /* ours: a QP this file registered (else skipped) */
	bool idle;                   /* its QP went for idleness: registered again on data */
	struct qp_tci_flow_key key;
	uint32_t qpn, local_ip;
	uint64_t frames;             /* the program's count at the last poll */
	qp_time_ns active_ns;
};

struct qpaced_ia {
	struct qp_tci *prog;
	struct qp_evtimer poll;      /* a timerfd: an ev_timer fires about once a ms at best */
	uint32_t cap, n;
	struct ia_flow *flows;
	uint64_t created, skipped, idle, arrived_frames;
};

static struct ia_flow *ia_find(struct qpaced_ia *ia, const struct qp_tci_flow_key *k)
{
	for (uint32_t i = 0; i < ia->cap; i++)
		if (ia->flows[i].used && memcmp(&ia->flows[i].key, k, sizeof(*k)) == 0)
			return &ia->flows[i];
	return NULL;
}

/* Make @w's flow a receiving QP (false when it cannot be one: counted, and the flow is
 * tracked so it is not tried every poll). */
static bool ia_register(struct qpaced *d, struct ia_flow *w, const struct qp_tci_flow *f,
			qp_time_ns now)
{
	struct agent_qp_reg reg = { .qpn = w->key.dqpn, .peer_qpn = QP_RATE_QPN_MAX - w->key.dqpn,
				    .flags = AGENT_QP_RECEIVER, .sport = f->sport,
				    .mtu_bytes = (uint32_t)d->cfg.wire_mtu,
				    .link_bps = qpaced_tc_line_bps(d),
				    .base_rtt_ns = qpaced_wire_rtt(d, qpaced_tc_line_bps(d)) };
	char err[CTL_TEXT_MAX], a[QP_IPV4_STRLEN], b[QP_IPV4_STRLEN];

	/* it sends no data of its own: no controller that would ask switches for INT */
	snprintf(reg.algo, sizeof(reg.algo), "none");
	if (!qp_tc_addr_ipv4(w->key.saddr, &reg.peer_ip) ||
	    !qp_tc_addr_ipv4(f->daddr, &reg.local_ip)) {
		d->ia->skipped++;
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc ingress: an IPv6 RoCE flow to QPN "
			   "0x%06x gets no credits: IA credits go between agents over IPv4 "
			   "(the flow is still measured and paced as any)", w->key.dqpn);
		return false;
	}
	if (agent_register(d->agent, &reg, QPACED_IA_OWNER, 0, now, err, sizeof(err))) {
		d->ia->skipped++;
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc ingress: data from %s to QPN "
			   "0x%06x gets no credits: %s", qp_ipv4_fmt(reg.peer_ip, a, sizeof(a)),
			   w->key.dqpn, err);
		return false;
	}
	w->local_ip = reg.local_ip;
	d->ia->created++;
	agent_count(d->agent, AGENT_C_WIRE_CREATED, 1);
	qpaced_log(AGENT_LOG_INFO, "tc ingress: receiving QP 0x%06x from the wire: data from "
		   "%s (sport %u) to %s, IA credits paced to its agent", reg.qpn,
		   qp_ipv4_fmt(reg.peer_ip, a, sizeof(a)), reg.sport,
		   qp_ipv4_fmt(reg.local_ip, b, sizeof(b)));
	return true;
}

/* @n frames arrived on @w's flow: to its QP's pacer. */
static void ia_arrived(struct qpaced *d, struct ia_flow *w, uint64_t n, qp_time_ns now)
{
	if (!w->ours || !n)
		return;
	d->ia->arrived_frames += n;
	agent_qp_arrived(d->agent, w->qpn, n * d->cfg.wire_mtu, now);
}

/* A flow not tracked yet. A new one's frames that found it arrived too, and make its
 * pacer arrival-clocked at once (no timer grants to a sender whose data the program
 * counts); an old entry qpaced forgot (QPACED_IA_FORGET_NS idle) counts from here. */
static void ia_add(struct qpaced *d, const struct qp_tci_flow_key *k,
		   const struct qp_tci_flow *f, qp_time_ns now)
{
	struct qpaced_ia *ia = d->ia;
	struct ia_flow *w = NULL;

	for (uint32_t i = 0; i < ia->cap && !w; i++)
		if (!ia->flows[i].used)
			w = &ia->flows[i];
	if (!w)
		return;
	*w = (struct ia_flow){ .used = true, .key = *k, .qpn = k->dqpn, .frames = f->frames,
			       .active_ns = now };
	ia->n++;
	w->ours = ia_register(d, w, f, now);
	if (now - f->first_ns <= d->cfg.ia_idle_ns)
		ia_arrived(d, w, f->frames, now);
}

/* Idle for --ia-idle: its QP leaves the pacer, the entry stays (its count) until
 * QPACED_IA_FORGET_NS. */
static void ia_idle(struct qpaced *d, struct ia_flow *w, qp_time_ns now)
{
	if (w->ours) {
		agent_unregister(d->agent, w->qpn, now);
		agent_count(d->agent, AGENT_C_WIRE_IDLE, 1);
		d->ia->idle++;
		w->ours = false;
		w->idle = true;
	}
	if (now - w->active_ns > QPACED_IA_FORGET_NS) {
		w->used = false;
		d->ia->n--;
	}
}

struct poll_ctx {
	struct qpaced *d;
	qp_time_ns now;
};

static void poll_one(void *ctx, const struct qp_tci_flow_key *k, const struct qp_tci_flow *f)
{
	struct poll_ctx *c = ctx;
	struct ia_flow *w = ia_find(c->d->ia, k);
	uint64_t n;

	if (!w) {
		if (c->now - f->last_ns < c->d->cfg.ia_idle_ns)   /* not an old entry */
			ia_add(c->d, k, f, c->now);
		return;
	}
	if (f->frames == w->frames)
		return;
	/* an LRU entry made afresh counts from 0 */
	n = f->frames > w->frames ? f->frames - w->frames : f->frames;
	w->frames = f->frames;
	w->active_ns = c->now;
	if (w->idle) {               /* back from idle: a receiving QP again */
		w->idle = false;
		w->ours = ia_register(c->d, w, f, c->now);
	}
	ia_arrived(c->d, w, n, c->now);
}

/* The next poll: half the shortest grant period of a link with a receiving QP, so each
 * sender's arrivals are seen at least twice per period (its grants are answers to them),
 * within QPACED_IA_POLL_MIN_NS..QPACED_IA_POLL_NS. */
static qp_time_ns poll_interval(const struct qpaced *d)
{
	const struct qpaced_ia *ia = d->ia;
	qp_time_ns t = QPACED_IA_POLL_NS, delta, per;
	uint32_t n, w;

	for (uint32_t i = 0; i < ia->cap && ia->n; i++)
		if (ia->flows[i].used && ia->flows[i].ours &&
		    agent_link_view(d->agent, ia->flows[i].local_ip, &n, &w, &delta, &per) == 0 &&
		    per / 2 < t)
			t = per / 2;
	return t < QPACED_IA_POLL_MIN_NS ? QPACED_IA_POLL_MIN_NS : t;
}

static void on_poll(struct qp_evtimer *tm, qp_time_ns now)
{
	struct qpaced *d = tm->data;
	struct qpaced_ia *ia = d->ia;
	struct poll_ctx c = { d, now };

	qp_tci_flows(ia->prog, poll_one, &c);
	for (uint32_t i = 0; i < ia->cap && ia->n; i++)
		if (ia->flows[i].used && c.now - ia->flows[i].active_ns > d->cfg.ia_idle_ns)
			ia_idle(d, &ia->flows[i], c.now);
	qp_evtimer_arm(tm, now + poll_interval(d));
	qpaced_after(d);
}

int qpaced_ia_open(struct qpaced *d, struct qp_tci *prog, char *err, size_t errlen)
{
	struct qpaced_ia *ia = calloc(1, sizeof(*ia));
	int rc;

	if (!ia || !(ia->flows = calloc(d->cfg.agent.max_qps, sizeof(*ia->flows)))) {
		free(ia);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->ia = ia;
	ia->prog = prog;
	ia->cap = d->cfg.agent.max_qps;
	ia->poll.fd = -1;
	if ((rc = qp_evtimer_init(&ia->poll, d->loop, on_poll, err, errlen)))
		return rc;
	ia->poll.data = d;
	qp_evtimer_arm(&ia->poll, qp_now_ns() + QPACED_IA_POLL_NS);
	qpaced_log(AGENT_LOG_INFO, "tc ingress on %s: IA credits for unmodified receivers: data "
		   "arriving per (sender, local QP) read every half grant period (%llu..%llu us), "
		   "each flow a receiving QP of its address's credit pacer (mtu %llu, rtt %llu "
		   "us until measured)", qpaced_tc_dev(d),
		   (unsigned long long)(QPACED_IA_POLL_MIN_NS / 1000),
		   (unsigned long long)(QPACED_IA_POLL_NS / 1000),
		   (unsigned long long)d->cfg.wire_mtu,
		   (unsigned long long)(qpaced_wire_rtt(d, qpaced_tc_line_bps(d)) / 1000));
	return 0;
}

void qpaced_ia_close(struct qpaced *d)
{
	struct qpaced_ia *ia = d->ia;

	if (!ia)
		return;
	if (d->loop && ia->poll.fd >= 0)
		qp_evtimer_close(&ia->poll, d->loop);
	free(ia->flows);
	free(ia);
	d->ia = NULL;
}

void qpaced_ia_metrics(struct qpaced *d, struct qp_strbuf *b)
{
	const struct qpaced_ia *ia = d->ia;

	if (!ia)
		return;
	qp_strbuf_printf(b, "# HELP qpace_ia_total IA credits for unmodified receivers: "
			 "receiving flows found on ingress, made receiving QPs, skipped, gone "
			 "idle, and the data frames fed to the credit pacer as arrivals\n"
			 "# TYPE qpace_ia_total counter\n"
			 "qpace_ia_total{event=\"flows_created\"} %llu\n"
			 "qpace_ia_total{event=\"flows_skipped\"} %llu\n"
			 "qpace_ia_total{event=\"flows_idle\"} %llu\n"
			 "qpace_ia_total{event=\"arrived_frames\"} %llu\n",
			 (unsigned long long)ia->created, (unsigned long long)ia->skipped,
			 (unsigned long long)ia->idle, (unsigned long long)ia->arrived_frames);
}
