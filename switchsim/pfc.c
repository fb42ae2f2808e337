/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PFC in the switch: ingress accounting, PAUSE and XON upstream, PAUSEs obeyed at egress
 * (see pfc.h). */
#include <string.h>

#include "sw.h"

uint64_t sw_pfc_auto_headroom(qp_rate_bps bps, qp_time_ns delay_ns)
{
	return qp_bytes_in(bps, 2 * delay_ns) + 2 * SW_FRAME_MAX;
}

static const struct sw_pfc_params *params(const struct sw_port *p)
{
	return &p->conf->pfc;
}

static qp_time_ns refresh_interval(const struct sw_port *p)
{
	qp_time_ns half = frame_pfc_quanta_ns(params(p)->quanta, p->conf->q.rate_bps) / 2;

	return half > SW_PFC_REFRESH_MIN_NS ? half : SW_PFC_REFRESH_MIN_NS;
}

/* A PFC frame for the class with @quanta, upstream out of @p at @now. */
static void send_pfc(struct sw_port *p, uint16_t quanta, qp_time_ns now)
{
	struct frame_pfc f = { .enable = (uint8_t)(1u << params(p)->prio) };
	uint8_t frame[FRAME_ETH_MIN];
	int n;

	memcpy(f.src, p->sw->conf->mac, FRAME_ETH_ALEN);
	f.quanta[params(p)->prio] = quanta;
	n = frame_build_pfc(frame, sizeof(frame), &f);
	if (n <= 0)
		return;
	sw_port_send_ctrl(p, frame, (size_t)n, now);
	if (quanta)
		p->pfc.st.pause_tx++;
	else
		p->pfc.st.xon_tx++;
}

/* PFC's times on @p moved (sw_pfc_next_ns): on every port of its switch when the first of
 * its ingresses was paused or the last let go (their queues' departures count then). */
static void pfc_touch(struct sw_port *p, bool all)
{
	if (!all) {
		sw_port_touch(p);
		return;
	}
	for (int i = 0; i < p->sw->nports; i++)
		sw_port_touch(&p->sw->ports[i]);
}

static void xoff(struct sw_port *p, qp_time_ns now)
{
	p->pfc.xoff = true;
	p->pfc.xoff_since = now;
	p->pfc.refresh_ns = now + refresh_interval(p);
	p->sw->pfc_xoff++;
	p->sw->fab->pfc_xoff++;
	send_pfc(p, params(p)->quanta, now);
	pfc_touch(p, p->sw->pfc_xoff == 1);
}

static void xon(struct sw_port *p, qp_time_ns now)
{
	p->pfc.xoff = false;
	p->pfc.xoff_closed_ns += qp_time_since(now, p->pfc.xoff_since);
	p->sw->pfc_xoff--;
	p->sw->fab->pfc_xoff--;
	send_pfc(p, 0, now);
	pfc_touch(p, p->sw->pfc_xoff == 0);
}

void sw_pfc_input(struct sw_port *in, const struct frame_parsed *p, qp_time_ns now)
{
	const struct sw_pfc_params *c = params(in);
	unsigned bit = 1u << c->prio;
	struct frame_pfc mine = { .enable = (uint8_t)bit };   /* the class only */
	uint16_t q;

	if (!(p->layers & FRAME_L_PFC) || !c->on || !(p->pfc.enable & bit)) {
		in->pfc.st.ignored_rx++;
		return;
	}
	q = mine.quanta[c->prio] = p->pfc.quanta[c->prio];
	qp_pause_rx(&in->pfc.rx, &mine, in->conf->q.rate_bps, now);
	if (q)
		in->pfc.st.pause_rx++;
	else
		in->pfc.st.xon_rx++;
	/* XON: until 0 releases the hold at now. */
	sw_queue_hold(in->q, now, qp_pause_until(&in->pfc.rx, c->prio), in->tx_from_queue);
	sw_port_touch(in);   /* its departures moved */
}

bool sw_pfc_admit(struct sw_port *in, const struct frame_parsed *p, struct sw_enq *e)
{
	const struct sw_pfc_params *c;
	unsigned prio;
	uint32_t len = e->frame_len < SW_FRAME_MIN ? SW_FRAME_MIN : e->frame_len;

	if (!in->pfc_on)   /* the port's own copy: its conf is a cache line further */
		return true;
	c = params(in);
	prio = (p->layers & FRAME_L_IPV4) ? frame_tos_priority(p->ip.tos) :
	       (p->layers & FRAME_L_IPV6) ? frame_tos_priority(p->ip6.tclass) : 0;
	if (prio != c->prio)
		return true;
	if (c->lossless && in->pfc.in_bytes + len > c->xoff_bytes + c->headroom_bytes) {
		in->pfc.st.headroom_drops++;
		in->pfc.st.headroom_drop_bytes += len;
		return false;
	}
	e->lossless = c->lossless;
	e->tag = (uint16_t)(in->index + 1);
	return true;
}

void sw_pfc_charge(struct sw_port *in, uint32_t len, qp_time_ns now)
{
	in->pfc.in_bytes += len;
	if (in->pfc.in_bytes > in->pfc.st.ingress_max_bytes)
		in->pfc.st.ingress_max_bytes = in->pfc.in_bytes;
	if (!in->pfc.xoff && in->pfc.in_bytes >= params(in)->xoff_bytes)
		xoff(in, now);
}

void sw_pfc_depart(void *arg, const struct sw_qent *e)
{
	struct sw_switch *sw = arg;
	struct sw_port *in = &sw->ports[e->tag - 1];

	in->pfc.in_bytes -= e->len;
	if (in->pfc.xoff && in->pfc.in_bytes <= params(in)->xon_bytes)
		xon(in, e->depart_ns);
}

qp_time_ns sw_pfc_next_ns(const struct sw_port *p)
{
	qp_time_ns t;

	if (!p->sw->fab->pfc_xoff)   /* the common case: nothing paused anywhere */
		return QP_TIME_NEVER;
	t = p->pfc.xoff ? p->pfc.refresh_ns : QP_TIME_NEVER;
	if (p->sw->pfc_xoff)
		t = qp_time_min(t, sw_queue_next_depart_ns(p->q));
	return t;
}

void sw_pfc_run(struct sw_port *p, qp_time_ns now)
{
	if (p->sw->pfc_xoff)
		sw_queue_bytes(p->q, now);   /* departures up to now: their hook may XON */
	if (p->pfc.xoff && p->pfc.refresh_ns <= now) {
		p->pfc.refresh_ns = now + refresh_interval(p);
		send_pfc(p, params(p)->quanta, now);
	}
	sw_port_touch(p);
}

qp_time_ns sw_pfc_paused_ns(const struct sw_port *p, qp_time_ns now)
{
	return qp_pause_time(&p->pfc.rx, params(p)->prio, now);
}

qp_time_ns sw_pfc_xoff_ns(const struct sw_port *p, qp_time_ns now)
{
	return p->pfc.xoff_closed_ns + (p->pfc.xoff ? qp_time_since(now, p->pfc.xoff_since) : 0);
}
