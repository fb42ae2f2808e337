/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* INT only where it is used: a QP whose algorithm takes INT reports (cc_needs) asks the
 * switches on its data path for them with a WANT message (qpace/feedback.h), sent to the
 * data receiver so that every switch on the way takes it. It asks at registration, again
 * every AGENT_WANT_REFRESH_NS while it stays (a switch forgets a flow it has not heard
 * from for SW_WANT_HOLD_NS, 5 s: a restarted switch, a full table), and withdraws the wish
 * (int_every 0) when it goes or its algorithm changes to one that takes none. A QP that
 * runs no INT-driven algorithm never asks, and a switch that only serves flows that ask
 * (qpace-switch's default, --int-flows wanted) sends it no report.
 *
 * The same message carries a flow's last window (FB_WANT_F_LAST; ACC's ramp-up in
 * advance): when the QP's controller says the last window of its message is on its way
 * (CC_ACT_LAST_WINDOW), the switches on the path take the flow out of their ports' flow
 * counts; the next message (CC_EV_FLOW_START) or wish puts it back.
 */
#include "qpace/cc.h"
#include "core_priv.h"

/* An IPv6 flow asks for none: the message goes to the receiver's IPv4 address, which an
 * IPv6 flow does not name (qpace-switch --int-flows all reports on it unasked). */
static bool wants_int(const struct agent_qp *q)
{
	return q->cc && (cc_needs(q->cc->ops) & CC_NEED_INT) && !(q->reg.flags & AGENT_QP_IPV6);
}

static void send_want(struct agent *a, struct agent_qp *q, uint32_t every, uint32_t flags,
		      qp_time_ns now)
{
	struct fb_msg m = { .type = FB_T_WANT };

	m.u.want = (struct fb_want){
		.flow = agent_data_flow(q),
		.int_every = every, .flags = flags,
		.int_interval_ns = every ? a->p.int_interval_ns : 0,
	};
	if (agent_send(a, &m, q->reg.peer_ip, FB_PORT, now))
		a->counters[AGENT_C_WANTS_SENT]++;
}

void agent_want_update(struct agent *a, uint32_t idx, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];
	bool want = wants_int(q);

	if (want)
		send_want(a, q, a->p.int_every ? a->p.int_every : 1, 0, now);
	else if (q->want_ns != QP_TIME_NEVER)
		send_want(a, q, 0, 0, now);
	q->last_sent = false;
	q->want_ns = want ? now + AGENT_WANT_REFRESH_NS : QP_TIME_NEVER;
}

void agent_want_withdraw(struct agent *a, uint32_t idx, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];

	if (q->want_ns != QP_TIME_NEVER)
		send_want(a, q, 0, 0, now);
	q->want_ns = QP_TIME_NEVER;
}

void agent_want_last(struct agent *a, uint32_t idx, bool last, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];

	if (q->last_sent == last || (q->reg.flags & AGENT_QP_IPV6))
		return;
	/* the wish as it stands (a WANT of every 0 would withdraw INT), with the flag */
	send_want(a, q, wants_int(q) ? (a->p.int_every ? a->p.int_every : 1) : 0,
		  last ? FB_WANT_F_LAST : 0, now);
	q->last_sent = last;
}
