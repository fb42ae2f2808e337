/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Building the fabric from a configuration: switches, queues, sockets, links, capture. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "capture.h"
#include "io.h"
#include "sw.h"

static bool capture_wanted(const struct sw_conf *c, const struct sw_switch_conf *s,
			   const struct sw_port_conf *p)
{
	char full[2 * SW_NAME_LEN + 2];

	if (!c->pcap_path)
		return false;
	if (!c->pcap_port)
		return true;
	snprintf(full, sizeof(full), "%s:%s", s->name, p->name);
	return !strcmp(c->pcap_port, full) || !strcmp(c->pcap_port, p->name);
}

/* What lossless frames may add to egress @i of @s above its buffer: every other PFC
 * lossless port's xoff + headroom, as much as a queue can store. */
static uint64_t lossless_bytes(const struct sw_switch_conf *s, int i)
{
	const struct sw_queue_params *q = &s->ports[i].q;
	uint64_t sum = 0, fit = (UINT32_MAX - 65536) / 2, used;

	for (int j = 0; j < s->nports; j++) {
		const struct sw_pfc_params *c = &s->ports[j].pfc;
		if (j != i && c->on && c->lossless)
			sum += c->xoff_bytes + c->headroom_bytes;
	}
	used = q->buffer_bytes + qp_bytes_in(q->rate_bps, q->delay_ns);
	fit = used < fit ? fit - used : 0;   /* else the queue's own check refuses it */
	if (sum > fit)
		sum = fit;
	return sum < (1ULL << 30) ? sum : 1ULL << 30;
}

static int port_build(struct sw_fabric *f, struct sw_switch *sw, int i, char *err, size_t len)
{
	const struct sw_port_conf *pc = &sw->conf->ports[i];
	struct sw_port *p = &sw->ports[i];
	struct sw_queue_params qp = pc->q;
	char qerr[200];
	int rc;

	p->sw = sw;
	p->index = i;
	p->conf = pc;
	p->pfc_on = pc->pfc.on;
	p->telem = pc->telem;
	p->q_delay_ns = pc->q.delay_ns;
	qp.lossless_bytes = lossless_bytes(sw->conf, i);
	p->q = sw_queue_create(&qp, qerr, sizeof(qerr));
	if (p->q)
		sw_queue_on_depart(p->q, sw_pfc_depart, sw);
	if (!p->q)
		return qp_errmsg(-EINVAL, err, len, "switch %s port %s: %s", sw->conf->name,
				 pc->name, qerr);
	p->gidx = f->nports;
	f->next[f->nports] = (struct sw_next){ .t = QP_TIME_NEVER, .pfc = QP_TIME_NEVER,
					       .io = pc->kind != SW_PORT_LINK };
	if (sw_impair_on(&pc->impair) &&
	    !(p->imp = sw_impair_create(&pc->impair, pc->q.rate_bps, sizeof(struct sw_meta),
					qerr, sizeof(qerr))))
		return qp_errmsg(-EINVAL, err, len, "switch %s port %s: %s", sw->conf->name,
				 pc->name, qerr);
	f->all[f->nports++] = p;
	if (pc->kind == SW_PORT_LINK)
		return 0;
	rc = sw_io_open(pc, sw_conf_shm_path(f->conf, pc), &p->io, err, len);
	if (rc)
		return rc;
	memcpy(p->io->own_mac, sw->conf->mac, 6);
	p->io->sim_leave = p->tx_leave;
	p->io->gso.off = !f->conf->gso;   /* off: a datagram per frame (qpace/udp_gso.h) */
	f->io_ports[f->nio++] = p;
	p->capture = capture_wanted(f->conf, sw->conf, pc);
	return 0;
}

int sw_port_ctrl_room(struct sw_port *p)
{
	uint32_t cap = p->ctrl_cap ? 2 * p->ctrl_cap : SW_CTRL_SLOTS0;
	struct sw_ctrl_slot *n;

	if (p->ctrl_tail - p->ctrl_head < p->ctrl_cap)
		return 0;
	if (cap > SW_CTRL_SLOTS || p->nctrl_old == sizeof(p->ctrl_old) / sizeof(p->ctrl_old[0]) ||
	    !(n = malloc(cap * sizeof(*n))))
		return -ENOMEM;
	for (uint32_t i = p->ctrl_head; i != p->ctrl_tail; i++)
		n[i & (cap - 1)] = *sw_ctrl_at(p, i);
	if (p->ctrl)
		p->ctrl_old[p->nctrl_old++] = p->ctrl;
	p->ctrl = n;
	p->ctrl_cap = cap;
	return 0;
}

void sw_port_ctrl_release(struct sw_port *p)
{
	while (p->nctrl_old)
		free(p->ctrl_old[--p->nctrl_old]);
}

/* The sender id of the first switch (the others count up from it): configured, or a new
 * random one per run. */
static uint32_t auth_sender(const struct sw_conf *c)
{
	uint32_t id = c->auth_sender;

	if (!id && c->driver_clock_ns)
		return 1;
	if (!id && getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
		id = (uint32_t)(qp_now_ns() ^ (uint64_t)getpid());
	return id;
}

/* The learned tables' slots: with computed routes the hosts are in none, so room for the
 * switches' own addresses (four slots each, at least 256); without, SW_FWD_SLOTS. */
uint32_t sw_fabric_fwd_slots(const struct sw_conf *c)
{
	uint32_t n = 256;

	if (!c->route)
		return SW_FWD_SLOTS;
	while (n < SW_FWD_SLOTS && n < 4u * (uint32_t)c->nswitches)
		n *= 2;
	return n;
}

/* The fabric's arrays over every port. */
static int arrays(struct sw_fabric *f, const struct sw_conf *c)
{
	size_t n = 1;

	for (int s = 0; s < c->nswitches; s++)
		n += (size_t)c->sw[s].nports;
	f->sw = calloc((size_t)c->nswitches + 1, sizeof(*f->sw));
	f->all = calloc(n, sizeof(*f->all));
	f->next = calloc(n, sizeof(*f->next));
	f->io_ports = calloc(n, sizeof(*f->io_ports));
	f->packl = calloc(n, sizeof(*f->packl));
	f->txp = calloc(n, sizeof(*f->txp));
	return f->sw && f->all && f->next && f->io_ports && f->packl && f->txp ? 0 : -ENOMEM;
}

struct sw_fabric *sw_fabric_create(const struct sw_conf *c, char *err, size_t len)
{
	struct sw_fabric *f = calloc(1, sizeof(*f));
	qp_time_ns now = c->driver_clock_ns ? c->driver_clock_ns : qp_now_ns();
	qp_time_ns wall = c->driver_clock_ns ? 0 : qp_wall_offset_ns();
	uint32_t sender = auth_sender(c);

	if (!f || arrays(f, c)) {
		qp_errmsg(-ENOMEM, err, len, "out of memory");
		sw_fabric_destroy(f);
		return NULL;
	}
	f->conf = c;
	f->next_hint = QP_TIME_NEVER;
	for (int s = 0; s < c->nswitches; s++) {
		/* its ports start on cache lines (sw.h): calloc aligns to 16 only */
		struct sw_switch *sw = aligned_alloc(_Alignof(struct sw_switch), sizeof(*sw));
		size_t pbytes = ((size_t)c->sw[s].nports * sizeof(struct sw_port) + 63) & ~(size_t)63;
		if (sw)
			memset(sw, 0, sizeof(*sw));
		if (!sw || !(sw->ports = aligned_alloc(_Alignof(struct sw_port), pbytes ? pbytes : 64))) {
			free(sw);
			qp_errmsg(-ENOMEM, err, len, "out of memory");
			goto fail;
		}
		memset(sw->ports, 0, pbytes);
		f->sw[f->nswitches++] = sw;
		sw->fab = f;
		sw->conf = &c->sw[s];
		sw->id = c->sw[s].id;
		sw->nports = c->sw[s].nports;
		if (sw_fwd_init(&sw->fwd, sw_fabric_fwd_slots(c),
				c->route ? c->route + (size_t)s * c->nroutes : NULL,
				c->routes.first_ip, c->nroutes)) {
			qp_errmsg(-ENOMEM, err, len, "out of memory");
			goto fail;
		}
		if (sw_auth_init(&sw->auth, c->sw[s].have_key ? c->sw[s].key : NULL,
				 sender + (uint32_t)s, now, wall, err, len))
			goto fail;
		for (int i = 0; i < sw->nports; i++)
			if (port_build(f, sw, i, err, len))
				goto fail;
		for (int i = 0; i < c->sw[s].nstatic; i++)
			sw_fwd_static(&sw->fwd, c->sw[s].statics[i].mac, c->sw[s].statics[i].port);
	}
	for (int i = 0; i < f->nports; i++) {
		const struct sw_port_conf *pc = f->all[i]->conf;
		if (pc->kind == SW_PORT_LINK)
			f->all[i]->peer = &f->sw[pc->peer_switch]->ports[pc->peer_port];
	}
	if (sw_fabric_tree_build(f)) {
		qp_errmsg(-ENOMEM, err, len, "out of memory");
		goto fail;
	}
	if (c->pcap_path) {
		f->cap = sw_capture_open(c->pcap_path, wall, err, len);
		if (!f->cap)
			goto fail;
	}
	return f;
fail:
	sw_fabric_destroy(f);
	return NULL;
}

void sw_fabric_destroy(struct sw_fabric *f)
{
	if (!f)
		return;
	for (int s = 0; s < f->nswitches; s++) {
		struct sw_switch *sw = f->sw[s];
		for (int i = 0; i < sw->nports; i++) {
			sw_queue_destroy(sw->ports[i].q);
			sw_io_close(sw->ports[i].io);
			sw_impair_destroy(sw->ports[i].imp);
			sw_port_ctrl_release(&sw->ports[i]);
			free(sw->ports[i].ctrl);
		}
		sw_auth_fini(&sw->auth);
		sw_wants_free(&sw->wants);
		sw_fwd_free(&sw->fwd);
		free(sw->ports);
		free(sw);
	}
	sw_capture_close(f->cap);
	free(f->win);
	free(f->wkey);
	free(f->sw);
	free(f->all);
	free(f->next);
	free(f->io_ports);
	free(f->packl);
	free(f->txp);
	free(f);
}
