/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced --enforce observe|tc: RTT samples and NAKs for QPs it does not see post, from the
 * tc programs (tc_abi.h, tc_ingress_abi.h). The egress program stamps each data frame that
 * asks for an ACK (BTH AckReq) by (peer, PSN) as it leaves; the ingress program takes the
 * stamp when the ACK for that PSN arrives and reports the difference, with the QPN the
 * frame was sent to. Here each report becomes a transport event of the QP that sends the
 * flow (agent_qp_transport: its algorithm takes it when it declares CC_NEED_ACK or
 * CC_NEED_LOSS), found by the flow's egress key (peer address, peer QPN):
 *
 *   RTT  the sample, as AGENT_TP_RTT (the view's `rtt` shows the latest)
 *   NAK  a PSN sequence error, as AGENT_TP_NAK. The NAK names the local QPN only (the
 *        wire shows no peer QPN on an ACK): the flow is the one whose RTT samples came
 *        back to that local QPN from that peer, learned from them (a NAK before any
 *        sample of its QP is counted as unmapped)
 *
 * What the wire cannot give: bytes acknowledged per ACK (RC ACKs are cumulative by PSN,
 * and a flow's message sizes are not on the wire), ECN echoes (RoCE has none in its ACKs),
 * retransmission timeouts (the sender's timer is inside the NIC). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "daemon_priv.h"
#include "qpace/errmsg.h"

#define RTT_SLOTS 1024               /* learned (peer, local QPN) -> QP, open addressing */
#define RTT_FORGET_NS QP_NS_PER_S    /* a learned QP is looked up again after this */

enum rtt_counter {
	RTT_C_RTT,                   /* RTT reports taken */
	RTT_C_RTT_EVENTS,            /* ... given to a QP */
	RTT_C_RTT_NO_FLOW,           /* ... whose flow qpaced does not track */
	RTT_C_NAK,
	RTT_C_NAK_EVENTS,
	RTT_C_NAK_UNMAPPED,          /* ... of a local QPN no sample has named yet */
	RTT_C_COUNT
};

static const char *const rtt_names[RTT_C_COUNT] = {
	[RTT_C_RTT] = "rtt_reports",
	[RTT_C_RTT_EVENTS] = "rtt_events",
	[RTT_C_RTT_NO_FLOW] = "rtt_no_flow",
	[RTT_C_NAK] = "nak_reports",
	[RTT_C_NAK_EVENTS] = "nak_events",
	[RTT_C_NAK_UNMAPPED] = "nak_unmapped",
};

struct rtt_slot {
	uint8_t peer[16];
	uint32_t local_qpn;          /* the ACK's destination QPN (0: empty slot) */
	uint32_t qpn;                /* the agent's QP */
	qp_time_ns learned_ns;
};

struct qpaced_rtt {
	struct rtt_slot slot[RTT_SLOTS];
	uint64_t c[RTT_C_COUNT];
	qp_time_ns min_ns, max_ns;   /* of the samples given to QPs */
	bool said;
};

static uint32_t slot_of(const uint8_t peer[16], uint32_t local_qpn)
{
	uint32_t h = local_qpn * 2654435761u;

	for (int i = 0; i < 16; i++)
		h = (h ^ peer[i]) * 16777619u;
	return h % RTT_SLOTS;
}

/* The slot of (@peer, @local_qpn), or where it would go (an empty one or, when every
 * probe is taken, the first). */
static struct rtt_slot *slot_find(struct qpaced_rtt *s, const uint8_t peer[16],
				  uint32_t local_qpn)
{
	uint32_t h = slot_of(peer, local_qpn);

	for (uint32_t i = 0; i < 8; i++) {
		struct rtt_slot *x = &s->slot[(h + i) % RTT_SLOTS];

		if (!x->local_qpn || (x->local_qpn == local_qpn && !memcmp(x->peer, peer, 16)))
			return x;
	}
	return &s->slot[h];
}

int qpaced_rtt_open(struct qpaced *d, char *err, size_t errlen)
{
	d->rtt = calloc(1, sizeof(*d->rtt));
	return d->rtt ? 0 : qp_errmsg(-ENOMEM, err, errlen, "RTT samples: out of memory");
}

void qpaced_rtt_close(struct qpaced *d)
{
	free(d->rtt);
	d->rtt = NULL;
}

/* The agent's QP of the flow a report names, learned or looked up. */
static int rtt_qpn(struct qpaced *d, const struct qp_tci_report *r, qp_time_ns now,
		   uint32_t *qpn)
{
	struct qpaced_rtt *s = d->rtt;
	uint32_t local = r->dqpn & 0xffffffu;
	struct rtt_slot *x = slot_find(s, r->saddr, local);
	struct qp_tc_key k = { .dqpn = r->peer_qpn };

	if (x->local_qpn == local && !memcmp(x->peer, r->saddr, 16) &&
	    (r->kind == QP_TCI_K_NAK || now - x->learned_ns < RTT_FORGET_NS)) {
		*qpn = x->qpn;
		return 0;
	}
	if (r->kind == QP_TCI_K_NAK)
		return -ENOENT;
	memcpy(k.daddr, r->saddr, 16);
	if (qpaced_tc_flow_qpn(d, &k, qpn))
		return -ENOENT;
	*x = (struct rtt_slot){ .local_qpn = local, .qpn = *qpn, .learned_ns = now };
	memcpy(x->peer, r->saddr, 16);
	return 0;
}

void qpaced_rtt_report(struct qpaced *d, const struct qp_tci_report *r, qp_time_ns now)
{
	struct qpaced_rtt *s = d->rtt;
	bool nak = r->kind == QP_TCI_K_NAK;
	struct agent_tp_event e = { .type = nak ? AGENT_TP_NAK : AGENT_TP_RTT };
	uint32_t qpn;

	if (!s)
		return;
	s->c[nak ? RTT_C_NAK : RTT_C_RTT]++;
	if (rtt_qpn(d, r, now, &qpn)) {
		s->c[nak ? RTT_C_NAK_UNMAPPED : RTT_C_RTT_NO_FLOW]++;
		return;
	}
	if (nak) {
		e.psn = r->psn;
		e.flags = AGENT_TP_F_PSN;
	} else {
		e.rtt_ns = r->rtt_ns;
		if (!s->min_ns || r->rtt_ns < s->min_ns)
			s->min_ns = r->rtt_ns;
		if (r->rtt_ns > s->max_ns)
			s->max_ns = r->rtt_ns;
	}
	agent_qp_transport(d->agent, qpn, &e, now);
	s->c[nak ? RTT_C_NAK_EVENTS : RTT_C_RTT_EVENTS]++;
	if (!nak && !s->said) {
		s->said = true;
		qpaced_log(AGENT_LOG_INFO, "tc ingress: RTT samples from ACKs: the first, %llu us, "
			   "for QP 0x%06x (peer QPN 0x%06x)",
			   (unsigned long long)(r->rtt_ns / 1000), qpn, r->peer_qpn);
	}
}

void qpaced_rtt_metrics(struct qpaced *d, struct qp_strbuf *b)
{
	struct qpaced_rtt *s = d->rtt;

	if (!s)
		return;
	qp_strbuf_printf(b, "# HELP qpace_rtt_total RTT samples and NAKs from the tc programs "
			 "(ACKs matched with their frames' departures), and what became QPs' "
			 "transport events\n# TYPE qpace_rtt_total counter\n");
	for (unsigned i = 0; i < RTT_C_COUNT; i++)
		qp_strbuf_printf(b, "qpace_rtt_total{event=\"%s\"} %llu\n", rtt_names[i],
				 (unsigned long long)s->c[i]);
	qp_strbuf_printf(b, "# HELP qpace_rtt_sample_ns the least and the largest RTT sample "
			 "given to a QP\n# TYPE qpace_rtt_sample_ns gauge\n"
			 "qpace_rtt_sample_ns{which=\"min\"} %llu\nqpace_rtt_sample_ns{which=\"max\"} "
			 "%llu\n", (unsigned long long)s->min_ns, (unsigned long long)s->max_ns);
}
