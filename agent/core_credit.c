/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's IA credits, both sides (rules in qpace/agent.h and qpace/credit.h).
 *
 * Receiver: one credit pacer per local IP (link), created when its first receiving QP
 * registers and freed with its last; each grant goes to the peer's agent as a CREDIT
 * message about the data flow (peer -> us), with the period as its interval. Arrivals
 * clock the grants, bound each sender to its window W and measure the RTT
 * (qpace/credit.h); they come from one of two sources, never both:
 *  - the shell (agent_params.arrivals: qpace-bench's emulated hosts, whose soft RC sees
 *    each packet it accepts): agent_qp_arrived with the payload bytes, at the time the
 *    data reached the receiving host, whatever the cc and the switch's INT mode; the
 *    pacers are arrival-clocked from their creation;
 *  - otherwise (qpaced, which cannot see the NIC's receives) echo INT about data a
 *    receiving QP got (FB_F_TO_RECEIVER): the PSN's progress times the MTU. Until the
 *    first echo INT of a link its pacer grants on the timer schedule: a switch that sends
 *    no INT to receivers still gets IA pacing, without the bound.
 * Echo INT is the switch's dequeue (before the link's delay), so it measures a shorter
 * RTT than the data's; the host's own count is when the data arrived.
 * Sender: a grant adds to the QP's cumulative credits in the rate table and turns credit
 * gating on; gating ends after AGENT_CREDIT_EXPIRY_GRANTS silent intervals. What a shell
 * that enforces credits itself needs (qpaced's tc egress program) is in agent_qp_credit.
 * The shell's arrivals (agent_qp_arrived) make it a QP's one source of arrivals from then
 * on, also in qpaced (its tc ingress program's counts): echo INT is not counted as well.
 */
#include <errno.h>
#include <stdio.h>

#include "qpace/errmsg.h"
#include "core_priv.h"

static int link_find(struct agent *a, uint32_t ip, bool create)
{
	int free_li = -1;

	for (unsigned i = 0; i < AGENT_MAX_LINKS; i++) {
		if (a->links[i].local_ip == ip)
			return (int)i;
		if (!a->links[i].local_ip && free_li < 0)
			free_li = (int)i;
	}
	return create ? free_li : -1;
}

int agent_link_join(struct agent *a, uint32_t idx, qp_time_ns now, char *err, size_t errlen)
{
	struct agent_qp *q = &a->qps[idx];
	struct agent_link *l;
	char msg[200], ips[QP_IPV4_STRLEN];
	int li = link_find(a, q->reg.local_ip, true), rc;

	if (li < 0)
		return qp_errmsg(-ENOSPC, err, errlen, "register qp 0x%06x: more than %u local "
				 "links pace credits", q->reg.qpn, AGENT_MAX_LINKS);
	l = &a->links[li];
	if (!l->pacer) {
		struct credit_params cp = {
			.link_bps = q->reg.link_bps, .rtt_ns = q->reg.base_rtt_ns,
			.mtu_bytes = q->reg.mtu_bytes, .max_senders = a->p.max_qps,
			.seed = a->p.seed ^ (uint64_t)q->reg.local_ip * 0x9e3779b97f4a7c15ULL,
			.arrivals = a->p.arrivals,
			.rtt_floor_ns = a->p.rtt_floor ? q->reg.base_rtt_ns : 0,
		};

		l->pacer = credit_create(&cp, msg, sizeof(msg));
		if (!l->pacer)
			return qp_errmsg(-EINVAL, err, errlen, "register qp 0x%06x: credit pacer "
					 "for %s: %s", q->reg.qpn,
					 qp_ipv4_fmt(q->reg.local_ip, ips, sizeof(ips)), msg);
		l->local_ip = q->reg.local_ip;
		a->npaced++;
		agent_log(a, AGENT_LOG_INFO, "credits: pacing link %s (%llu b/s, rtt %llu ns, "
			  "mtu %u) from qp 0x%06x's registration",
			  qp_ipv4_fmt(l->local_ip, ips, sizeof(ips)),
			  (unsigned long long)cp.link_bps, (unsigned long long)cp.rtt_ns,
			  cp.mtu_bytes, q->reg.qpn);
	}
	rc = credit_add(l->pacer, idx, now);
	if (rc) {
		if (!l->nqps)
			agent_link_leave(a, idx, now);
		return qp_errmsg(rc, err, errlen, "register qp 0x%06x: credit pacer add: %d",
				 q->reg.qpn, rc);
	}
	l->nqps++;
	q->link = li;
	return 0;
}

void agent_link_leave(struct agent *a, uint32_t idx, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	struct agent_link *l;

	if (q->link < 0) {
		/* a join that failed before the QP was added: drop an empty pacer */
		int li = link_find(a, q->reg.local_ip, false);

		if (li >= 0 && !a->links[li].nqps) {
			a->npaced -= a->links[li].pacer != NULL;
			credit_destroy(a->links[li].pacer);
			a->links[li] = (struct agent_link){ 0 };
		}
		return;
	}
	l = &a->links[q->link];
	credit_remove(l->pacer, idx, now);
	q->link = -1;
	if (--l->nqps == 0) {
		a->npaced--;
		credit_destroy(l->pacer);
		*l = (struct agent_link){ 0 };
	}
}

static void send_grant(struct agent *a, const struct agent_link *l, const struct credit_grant *g,
		       qp_time_ns now)
{
	struct agent_qp *q = &a->qps[g->sender_id];
	struct fb_msg m = { .type = FB_T_CREDIT };

	if (q->reg.flags & AGENT_QP_READER) {
		/* its READ requests are its grants: the credits are its own, for the data it
		 * asks for (the gate charges a READ its response's length) */
		struct fb_credit c = { .seq = ++a->grant_seq,
				       .credit_bytes = g->bytes > UINT32_MAX ? UINT32_MAX
									      : (uint32_t)g->bytes,
				       .interval_ns = credit_period_ns(l->pacer) };

		agent_credit_rx(a, g->sender_id, &c, now);
		q->credits_tx_bytes += c.credit_bytes;
		a->counters[AGENT_C_GRANTS]++;
		return;
	}

	m.u.credit = (struct fb_credit){
		.flow = { .src_ip = q->reg.peer_ip, .dst_ip = q->reg.local_ip,
			  .sport = q->peer_sport, .dest_qp = q->reg.qpn },
		.seq = ++a->grant_seq,
		.credit_bytes = g->bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)g->bytes,
		.interval_ns = credit_period_ns(l->pacer),
	};
	if (!agent_send(a, &m, q->reg.peer_ip, a->p.peer_port, now))
		return;
	q->credits_tx_bytes += m.u.credit.credit_bytes;
	a->counters[AGENT_C_GRANTS]++;
}

static void arrived(struct agent *a, uint32_t idx, uint64_t bytes, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];

	if (q->link < 0 || !a->links[q->link].pacer || !bytes)
		return;
	credit_arrived(a->links[q->link].pacer, idx, bytes, now);
	agent_links_poll(a, now);
}

void agent_link_arrived(struct agent *a, uint32_t idx, uint64_t bytes, qp_time_ns now)
{
	a->qps[idx].rx_shell = true;   /* the shell counts this QP's data: echo INT no more */
	arrived(a, idx, bytes, now);
}

void agent_link_arrival(struct agent *a, uint32_t idx, uint32_t psn, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	bool first = !q->rx_psn_valid;
	uint64_t before = q->rx_psn64_max, packets;

	if (a->p.arrivals || q->rx_shell || q->link < 0 || !a->links[q->link].pacer)
		return;   /* the shell reports arrivals itself: one source */
	agent_psn_extend(&q->rx_psn_valid, &q->rx_psn64_max, psn);
	packets = first ? 1 : q->rx_psn64_max - before;
	if (!packets)
		return; /* a reordered or repeated report: nothing new arrived */
	arrived(a, idx, packets * q->reg.mtu_bytes, now);
}

void agent_links_poll(struct agent *a, qp_time_ns now)
{
	const unsigned max = sizeof(a->grants) / sizeof(a->grants[0]);

	for (unsigned i = 0; a->npaced && i < AGENT_MAX_LINKS; i++) {
		struct agent_link *l = &a->links[i];
		unsigned n;

		if (!l->pacer)
			continue;
		do {
			n = credit_poll(l->pacer, now, a->grants, max);
			for (unsigned k = 0; k < n; k++)
				send_grant(a, l, &a->grants[k], now);
		} while (n == max);
	}
}

qp_time_ns agent_links_next_ns(const struct agent *a)
{
	qp_time_ns t = QP_TIME_NEVER;

	for (unsigned i = 0; a->npaced && i < AGENT_MAX_LINKS; i++)
		if (a->links[i].pacer)
			t = qp_time_min(t, credit_next_ns(a->links[i].pacer));
	return t;
}

int agent_link_view(const struct agent *a, uint32_t local_ip, uint32_t *n, uint32_t *w,
		    qp_time_ns *delta_ns, qp_time_ns *period_ns)
{
	for (unsigned i = 0; i < AGENT_MAX_LINKS; i++) {
		const struct credit_pacer *cp = a->links[i].pacer;

		if (!cp || a->links[i].local_ip != local_ip)
			continue;
		*n = credit_senders(cp);
		*w = credit_w(cp);
		*delta_ns = credit_delta_ns(cp);
		*period_ns = credit_period_ns(cp);
		return 0;
	}
	return -ENOENT;
}

/* ---- sender side ---- */

unsigned agent_credit_rx(struct agent *a, uint32_t idx, const struct fb_credit *c,
			 qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	unsigned res = AGENT_RX_MATCHED;
	qp_time_ns hold;

	if (q->credit_gated && (int32_t)(c->seq - q->credit_seq) <= 0) {
		agent_note(a, AGENT_C_FB_DUP_CREDIT, "qp 0x%06x: credit grant seq %u after seq %u "
			   "(duplicate or reordered), ignored", q->reg.qpn, c->seq, q->credit_seq);
		return res;
	}
	q->credit_seq = c->seq;
	if (!q->credit_gated) {
		q->credit_gen++;
		q->credit_gen_bytes = 0;
	}
	if (c->credit_bytes && qp_ratetable_grant(a->table, (uint32_t)q->slot, c->credit_bytes,
						  now) == 0) {
		q->credits_rx_bytes += c->credit_bytes;
		q->credit_gen_bytes += c->credit_bytes;
		res |= AGENT_RX_RATE;
	}
	q->credit_gated = true;
	q->credit_last_ns = now;
	q->credit_interval_ns = c->interval_ns;
	hold = c->interval_ns < QP_TIME_NEVER / AGENT_CREDIT_EXPIRY_GRANTS
		       ? c->interval_ns * AGENT_CREDIT_EXPIRY_GRANTS : QP_TIME_NEVER / 2;
	if (hold < AGENT_CREDIT_EXPIRY_MIN_NS)
		hold = AGENT_CREDIT_EXPIRY_MIN_NS;
	q->credit_expiry_ns = now + hold;
	return res | agent_after_cc(a, idx, 0, now);
}

unsigned agent_credit_expire(struct agent *a, uint32_t idx, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];

	(void)now;
	q->credit_gated = false;
	q->credit_expiry_ns = QP_TIME_NEVER;
	agent_note(a, AGENT_C_CREDIT_EXPIRED, "qp 0x%06x: no credit grant for %u grant intervals "
		   "(at least %llu ms): credit gating off, the rate alone paces it", q->reg.qpn,
		   AGENT_CREDIT_EXPIRY_GRANTS,
		   (unsigned long long)(AGENT_CREDIT_EXPIRY_MIN_NS / QP_NS_PER_MS));
	return 0;
}

int agent_qp_credit(const struct agent *a, uint32_t qpn, struct agent_qp_credit *out)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);
	const struct agent_qp *q;

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	q = &a->qps[idx];
	*out = (struct agent_qp_credit){
		.gated = q->credit_gated, .gen = q->credit_gen, .gen_bytes = q->credit_gen_bytes,
		.last_ns = q->credit_last_ns, .interval_ns = q->credit_interval_ns,
		.expiry_ns = q->credit_expiry_ns,
	};
	return 0;
}
