/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The fabric's schedule: when each port next has work, and which port's work comes first.
 *
 * A port has work at its next leave time (the oldest frame of either band not yet in its
 * tx batch, or the first frame its delay lines hand on) and at PFC's own times (a PAUSE
 * repeat; while an ingress of its switch is paused, its queue's next departure, which may
 * bring the XON: pfc.h). Its key is the earlier of the two, the leave time less
 * --tx-early on I/O ports (PFC work is never early). The emit takes the ports in key order,
 * ties to the lower port, and within a port PFC's work before a frame of the same key.
 *
 * A tournament tree over the ports' keys (each node the earlier of its two children, and
 * that one's key) finds the first in O(1) and follows a change of one port's key in
 * log2(ports) steps, stopping where a node's winner stands. Every change of what a key
 * is made of calls sw_port_touch: a band, a delay line, a queue's departures (an enqueue,
 * a hold, a pop, the model advanced by PFC), a PAUSE sent or obeyed, an ingress of the
 * switch paused or let go (all its ports: pfc.c). So no pass over the ports is needed,
 * with PFC or without. */
#include <stdlib.h>

#include "sw.h"

/* A leave time's place in the emit's order: itself, less --tx-early on an I/O port. */
static inline qp_time_ns emit_key(const struct sw_fabric *f, qp_time_ns t, bool io)
{
	return io && t != QP_TIME_NEVER ? qp_time_since(t, f->conf->tx_early_ns) : t;
}

/* Port @i's key: the earlier of its next leave time's place and PFC's next time. */
static qp_time_ns port_key(const struct sw_fabric *f, uint32_t i)
{
	if (i == SW_TREE_NONE)
		return QP_TIME_NEVER;
	return qp_time_min(emit_key(f, f->next[i].t, f->next[i].io), f->next[i].pfc);
}

/* Leave time of the first frame of each band not yet in the tx batch, and of the first
 * frame in the port's delay lines not yet taken (impair.h). */
static qp_time_ns port_next(const struct sw_port *p)
{
	const struct sw_qent *e = sw_queue_peek(p->q, p->tx_from_queue);
	qp_time_ns t = e ? e->depart_ns + p->q_delay_ns : QP_TIME_NEVER;

	if (p->ctrl_head + p->tx_from_ctrl != p->ctrl_tail)
		t = qp_time_min(t, sw_ctrl_at(p, p->ctrl_head + p->tx_from_ctrl)->leave_ns);
	if (p->imp)
		t = qp_time_min(t, sw_impair_next_ns(p->imp));
	return t;
}

/* Inner node @pos gets the earlier of its children @c and @c + 1 and that one's key;
 * ties to the lower port, as a scan in port order finds it. Returns the winner. */
static inline uint32_t tree_set(struct sw_fabric *f, unsigned pos, unsigned c)
{
	qp_time_ns ka = f->wkey[c], kb = f->wkey[c + 1];
	uint32_t a = f->win[c], b = f->win[c + 1];
	uint32_t w = ka != kb ? (ka < kb ? a : b) : (a < b ? a : b);

	f->win[pos] = w;
	f->wkey[pos] = ka < kb ? ka : kb;
	return w;
}

/* Port @i's key changed: the nodes on its path to the root again. Once a node's winner
 * is the one it was and is not @i, no node above it sees a different key: stop there.
 * Each node keeps its winner's key (wkey), so a step compares two stored keys. */
static void tree_update(struct sw_fabric *f, uint32_t i)
{
	unsigned pos = (unsigned)f->tsize + i;

	f->wkey[pos] = port_key(f, i);
	for (pos >>= 1; pos; pos >>= 1) {
		uint32_t old = f->win[pos];
		uint32_t w = tree_set(f, pos, 2 * pos);

		if (w == old && w != i)
			return;
	}
}

int sw_fabric_tree_build(struct sw_fabric *f)
{
	unsigned n = 1;

	while (n < (unsigned)f->nports)
		n *= 2;
	f->win = calloc(2 * (size_t)n, sizeof(*f->win));
	f->wkey = calloc(2 * (size_t)n, sizeof(*f->wkey));
	if (!f->win || !f->wkey)
		return -1;
	f->tsize = (int)n;
	for (unsigned i = 0; i < n; i++) {
		f->win[n + i] = i < (unsigned)f->nports ? i : SW_TREE_NONE;
		f->wkey[n + i] = port_key(f, f->win[n + i]);
	}
	for (unsigned k = n - 1; k >= 1; k--)
		tree_set(f, k, 2 * k);
	return 0;
}

void sw_port_touch(struct sw_port *p)
{
	struct sw_fabric *f = p->sw->fab;
	struct sw_next *n = &f->next[p->gidx];
	qp_time_ns t = port_next(p), pt = sw_pfc_next_ns(p);

	f->next_hint = qp_time_min(f->next_hint, qp_time_min(emit_key(f, t, n->io), pt));
	if (t == n->t && pt == n->pfc)
		return;              /* no key moved: the tree stands */
	n->t = t;
	n->pfc = pt;
	if (f->tsize)
		tree_update(f, (uint32_t)p->gidx);
}

bool sw_fabric_first(const struct sw_fabric *f, struct sw_port **best, qp_time_ns *due,
		     qp_time_ns *t, bool *pfc)
{
	uint32_t w = f->win[1];

	*due = f->wkey[1];
	if (*due == QP_TIME_NEVER)
		return false;
	*best = f->all[w];
	*pfc = f->next[w].pfc == *due;
	*t = *pfc ? f->next[w].pfc : f->next[w].t;
	return true;
}

qp_time_ns sw_fabric_next_ns(const struct sw_fabric *f)
{
	qp_time_ns t = QP_TIME_NEVER;

	if (!f->conf->tx_early_ns)
		return f->wkey[1];   /* no early: the tree's order is leave time */
	for (int i = 0; i < f->nports; i++)
		t = qp_time_min(t, qp_time_min(f->next[i].t, f->next[i].pfc));
	return t;
}

qp_time_ns sw_fabric_next_key_ns(const struct sw_fabric *f)
{
	return f->wkey[1];
}
