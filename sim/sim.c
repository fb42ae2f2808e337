/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The virtual-time engine: building the network and reading its figures (qpace/sim.h).
 * The event loop is run.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/soft.h"
#include "io.h"
#include "sim_priv.h"

struct sw_conf *sim_sw_conf_args(int argc, char **argv, char *err, size_t errlen)
{
	struct sw_conf *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		return NULL;
	}
	rc = sw_cli_parse(c, argc, argv);
	if (rc) {
		qp_errmsg(-EINVAL, err, errlen, "the switch's options: %s",
			  rc > 0 ? "--help is no configuration" : "see the line above");
		free(c);
		return NULL;
	}
	return c;
}

struct sw_conf *sim_sw_conf_text(const char *text, const char *name, char *err,
				 size_t errlen)
{
	struct sw_conf *c = calloc(1, sizeof(*c));

	if (!c) {
		qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		return NULL;
	}
	sw_conf_defaults(c);
	if (sw_topo_parse(c, text, name, err, errlen)) {
		free(c);
		return NULL;
	}
	sw_conf_finish(c);
	return c;
}

void sim_sw_conf_free(struct sw_conf *c)
{
	free(c);
}

/* Every I/O port becomes a sim port; frames leave at the model's times, nothing early;
 * no stats files (the caller asks for figures); a capture only where the words asked for
 * one (qpace-bench incast --pcap), stamped with simulated time (capture.h). */
static void conf_for_sim(struct sw_conf *c, bool icrc_skip)
{
	if (icrc_skip)
		c->icrc_every = 0;
	for (int s = 0; s < c->nswitches; s++)
		for (int i = 0; i < c->sw[s].nports; i++)
			if (c->sw[s].ports[i].kind != SW_PORT_LINK)
				c->sw[s].ports[i].kind = SW_PORT_SIM;
	c->tx_early_ns = 0;
	c->driver_clock_ns = SIM_START_NS;
	c->stats_path = c->stats_json_path = NULL;
}

/* --icrc off with a link that corrupts frames: the corruption would go unseen. */
static int corrupt_refused(const struct sw_conf *c, char *err, size_t errlen)
{
	for (int s = 0; s < c->nswitches; s++)
		for (int i = 0; i < c->sw[s].nports; i++)
			if (c->sw[s].ports[i].impair.corrupt > 0)
				return qp_errmsg(-EINVAL, err, errlen, "--icrc off: port %s of "
						 "switch %s corrupts frames (corrupt=%g%%), which only "
						 "the ICRC finds; accepted: --icrc on with corrupt=",
						 c->sw[s].ports[i].name, c->sw[s].name,
						 c->sw[s].ports[i].impair.corrupt * 100);
	return 0;
}

static int host_attach(struct sim *s, struct sim_host *sh, const struct sim_host_conf *hc,
		       const struct sim_conf *c, char *err, size_t errlen)
{
	char ip[QP_IPV4_STRLEN], opts[128], e[300];
	struct sw_port *p;
	int rc;

	qp_ipv4_fmt(hc->ip, ip, sizeof(ip));
	if (hc->sw < 0 || hc->sw >= s->fab->nswitches || hc->port < 0 ||
	    hc->port >= s->fab->sw[hc->sw]->nports)
		return qp_errmsg(-EINVAL, err, errlen, "host %u (%s): switch %d port %d is not in "
				 "the topology", sh->idx, ip, hc->sw, hc->port);
	p = &s->fab->sw[hc->sw]->ports[hc->port];
	if (!p->io || p->io->sim_tx)
		return qp_errmsg(-EINVAL, err, errlen, "host %u (%s): port %s of switch %s is %s",
				 sh->idx, ip, p->conf->name, p->sw->conf->name,
				 p->io ? "taken by another host" : "a link between switches");
	sh->s = s;
	sh->port = p;
	sh->nic_bps = hc->nic_bps ? hc->nic_bps : p->conf->q.rate_bps;
	sh->delay_ns = hc->link_delay_ns == SIM_PORT_DELAY ? p->q_delay_ns : hc->link_delay_ns;
	sh->window_pkts = hc->window_pkts ? hc->window_pkts : 128;
	/* link_rate: what a PAUSE's quanta mean to the host (its NIC's rate) */
	snprintf(opts, sizeof(opts), "ip=%s,window=%llu,mtu=%llu,link_rate=%llu%s", ip,
		 (unsigned long long)sh->window_pkts,
		 (unsigned long long)(hc->mtu_bytes ? hc->mtu_bytes : 1024),
		 (unsigned long long)sh->nic_bps, c->icrc_skip ? ",icrc=off" : "");
	struct host_conf h = { .options = opts, .cc = hc->cc, .credits = hc->credits,
			       .cnp_from_notice = hc->cnp_from_notice, .seed = c->seed,
			       .quiet = !c->verbose, .key = hc->key, .clock_offset_ns = 0,
			       .clock = sim_clock, .clock_arg = &s->lane[0],
			       .tx_ready = sim_nic_ready, .tx_ready_arg = sh };
	if ((rc = host_open(&sh->h, &h, s->lane[0].now, e, sizeof(e))))
		return qp_errmsg(rc, err, errlen, "host %u (%s): %s", sh->idx, ip, e);
	sh->soft = qp_soft_host(sh->h.ctx);
	p->io->sim_tx = sim_deliver;
	p->io->sim_arg = sh;
	return 0;
}

static int lane_init(struct sim *s, unsigned i, size_t nhosts)
{
	struct sim_lane *l = &s->lane[i];

	l->s = s;
	l->now = SIM_START_NS;
	l->end = SIM_START_NS;   /* split: frames made before the first window */
	l->pool.id = (uint8_t)i;
	return sim_evq_init(&l->q, 4096) ||
	       sim_wakeq_init(&l->wq, (uint32_t)nhosts + 1, (uint32_t)nhosts);
}

/* Split: the window is the smallest delay between a host and its switch, either way (a
 * frame a host sends reaches the switch that much later; the switches hand a frame for a
 * host on that much before it arrives, tx_early_ns). */
static int split_setup(struct sim *s, const struct sim_conf *c, char *err, size_t errlen)
{
	qp_time_ns la = QP_TIME_NEVER;

	for (size_t i = 0; i < s->nhosts; i++) {
		const struct sim_host *sh = &s->hosts[i];
		qp_time_ns d = qp_time_min(sh->delay_ns, sh->port->q_delay_ns);
		if (!d)
			return qp_errmsg(-EINVAL, err, errlen, "two lanes: host %zu's link (port "
					 "%s of switch %s) has no delay, and the lanes need one as "
					 "their lookahead; accepted: a delay of at least 1 ns, or "
					 "one lane", i, sh->port->conf->name,
					 sh->port->sw->conf->name);
		la = qp_time_min(la, d);
	}
	if (la == QP_TIME_NEVER)
		la = QP_NS_PER_US;   /* no host: nothing crosses */
	s->lookahead = la;
	s->conf->tx_early_ns = la;
	s->nlanes = 2;
	s->fl = &s->lane[1];
	s->threads = c->threads > 1 ? 2 : 1;
	return 0;
}

int sim_create(const struct sim_conf *c, struct sim **out, char *err, size_t errlen)
{
	struct sim *s = calloc(1, sizeof(*s));
	bool split = c->split || c->threads > 1;
	int rc = -ENOMEM;

	*out = NULL;
	if (!s || !(s->conf = malloc(sizeof(*s->conf))) ||
	    !(s->hosts = calloc(c->nhosts ? c->nhosts : 1, sizeof(*s->hosts))) ||
	    lane_init(s, 0, c->nhosts) || (split && lane_init(s, 1, c->nhosts))) {
		sim_destroy(s);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	s->nlanes = 1;
	s->fl = &s->lane[0];
	s->free_timer = UINT32_MAX;
	s->progress = c->progress;
	s->interrupt = c->interrupt;
	*s->conf = *c->sw;
	conf_for_sim(s->conf, c->icrc_skip);
	if (c->icrc_skip && (rc = corrupt_refused(s->conf, err, errlen))) {
		sim_destroy(s);
		return rc;
	}
	s->fab = sw_fabric_create(s->conf, err, errlen);
	if (!s->fab) {
		sim_destroy(s);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->nhosts; i++) {
		s->hosts[i].idx = (uint32_t)i;
		if ((rc = host_attach(s, &s->hosts[i], &c->hosts[i], c, err, errlen))) {
			sim_destroy(s);
			return rc;
		}
		s->nhosts = i + 1;
	}
	if (split && (rc = split_setup(s, c, err, errlen))) {
		sim_destroy(s);
		return rc;
	}
	for (size_t i = 0; i < s->nhosts; i++)
		sim_wake(s, i, s->lane[0].now);
	*out = s;
	return 0;
}

static void fifo_free(struct sim *s, struct sim_pkt *k)
{
	while (k) {
		struct sim_pkt *n = k->next;
		sim_pool_put(&s->lane[k->owner].pool, k);
		k = n;
	}
}

void sim_destroy(struct sim *s)
{
	if (!s)
		return;
	sim_threads_stop(s);
	for (size_t i = 0; s->hosts && i < s->nhosts; i++) {
		struct sim_host *sh = &s->hosts[i];
		fifo_free(s, sh->fly_head);
		fifo_free(s, sh->rx_head);
		host_close(&sh->h);
	}
	for (unsigned i = 0; i < 2; i++) {
		struct sim_lane *l = &s->lane[i];
		for (size_t k = 0; k < l->nout; k++)
			sim_pool_put(&s->lane[l->out[k].k->owner].pool, l->out[k].k);
		free(l->out);
		free(l->in);
	}
	sw_fabric_destroy(s->fab);
	for (unsigned i = 0; i < 2; i++) {
		sim_pool_fini(&s->lane[i].pool);
		sim_evq_fini(&s->lane[i].q);
		sim_wakeq_fini(&s->lane[i].wq);
	}
	free(s->sync);
	free(s->timers);
	free(s->hosts);
	free(s->conf);
	free(s);
}

size_t sim_nhosts(const struct sim *s)
{
	return s->nhosts;
}

struct host *sim_host(struct sim *s, size_t i)
{
	return i < s->nhosts ? &s->hosts[i].h : NULL;
}

qp_time_ns sim_now(const struct sim *s)
{
	return s->lane[0].now;
}

void sim_set_app(struct sim *s, sim_app_fn fn, void *arg)
{
	s->app = fn;
	s->app_arg = arg;
}

void sim_stats(const struct sim *s, struct sim_stats *out)
{
	*out = (struct sim_stats){ .sim_ns = s->lane[0].now - SIM_START_NS,
				   .wall_s = s->wall_s };
	for (unsigned i = 0; i < s->nlanes; i++) {
		out->events += s->lane[i].events;
		out->max_pending += s->lane[i].max_pending;
		out->pool_bytes += s->lane[i].pool.bytes;
		out->lane_busy_s[i] = s->lane[i].busy_s;
	}
	out->windows = s->windows;
	for (size_t i = 0; i < s->nhosts; i++)
		out->host_frames += s->hosts[i].tx_frames;
	out->packet_hops = out->host_frames;
	/* Out of I/O ports every frame counts in tx_frames; along links data frames do and
	 * the priority band's frames count in ctrl_frames. */
	for (int i = 0; i < s->fab->nports; i++) {
		const struct sw_port *p = s->fab->all[i];
		out->packet_hops += p->st.tx_frames + (p->peer ? p->st.ctrl_frames : 0);
	}
}

size_t sim_nports(const struct sim *s)
{
	return (size_t)s->fab->nports;
}

uint64_t sim_host_window(const struct sim *s, size_t i)
{
	return s->hosts[i].window_pkts;
}

size_t sim_host_port(const struct sim *s, size_t i)
{
	return (size_t)s->hosts[i].port->gidx;
}

void sim_port_info(const struct sim *s, size_t i, struct sim_port_info *out)
{
	const struct sw_port *p = s->fab->all[i];
	const struct sw_queue_stats *q = sw_queue_stats(p->q);
	const struct sw_impair_stats *im = p->imp ? sw_impair_stats(p->imp) : NULL;

	*out = (struct sim_port_info){
		.sw_name = p->sw->conf->name, .name = p->conf->name,
		.queue_bytes = sw_queue_bytes_at(p->q, s->fl->now),
		.drops = q->drop_tail + q->drop_store, .ecn_marks = q->ecn_marked,
		.max_queue_bytes = q->max_qbytes, .tx_frames = p->st.tx_frames,
		.impair_lost = im ? im->impair_loss + im->impair_ge_loss : 0,
		.tx_bytes = p->st.tx_bytes, .rx_bytes = p->st.rx_bytes, .link_bytes = q->deq_bytes,
		.rate_bps = p->conf->q.rate_bps, .link = p->peer != NULL,
		.pauses_sent = p->pfc.st.pause_tx, .pauses_received = p->pfc.st.pause_rx,
		.paused_ns = sw_pfc_paused_ns(p, s->fl->now),
	};
}

void sim_switch_csv_header(FILE *out)
{
	sw_stats_csv_header(out);
}

void sim_switch_csv_row(struct sim *s, FILE *out, qp_time_ns start)
{
	sw_stats_csv_row(s->fab, out, s->fl->now, start);
}

void sim_switch_json(const struct sim *s, FILE *out)
{
	sw_stats_json(s->fab, out, s->fl->now);
}
