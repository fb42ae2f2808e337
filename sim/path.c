/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hosts and paths of a switchsim configuration (qpace/sim.h: sim_sw_conf_hosts,
 * sim_sw_conf_path): the I/O ports in order, and the links a frame crosses between two of
 * them read from the switches' static forwarding entries, so any topology file gives its
 * base RTTs, whoever wrote it. */
#include <string.h>

#include "qpace/soft_host.h"
#include "sim_priv.h"

size_t sim_sw_conf_hosts(const struct sw_conf *c, struct sim_host_conf *hosts, size_t max)
{
	size_t n = 0;

	for (int s = 0; s < c->nswitches; s++)
		for (int i = 0; i < c->sw[s].nports; i++) {
			if (c->sw[s].ports[i].kind == SW_PORT_LINK)
				continue;
			if (n < max)
				hosts[n] = (struct sim_host_conf){
					.ip = 0x0a000001u + (uint32_t)n, .sw = s, .port = i,
					.nic_bps = c->sw[s].ports[i].q.rate_bps,
					.link_delay_ns = SIM_PORT_DELAY };
			n++;
		}
	return n;
}

static int static_port(const struct sw_switch_conf *sw, const uint8_t mac[6])
{
	for (int i = 0; i < sw->nstatic; i++)
		if (!memcmp(sw->statics[i].mac, mac, 6))
			return sw->statics[i].port;
	return -1;
}

size_t sim_sw_conf_path(const struct sw_conf *c, const struct sim_host_conf *src,
			const struct sim_host_conf *dst, struct fct_hop *hops, size_t max)
{
	const struct sw_port_conf *hp;
	uint8_t mac[FRAME_ETH_ALEN];
	int sw = src->sw, in = src->port;
	size_t n = 0;

	if (src == dst || src->sw < 0 || src->sw >= c->nswitches || src->port < 0 ||
	    src->port >= c->sw[src->sw].nports)
		return 0;
	hp = &c->sw[src->sw].ports[src->port];
	soft_mac_from_ip(dst->ip, mac);
	if (max)
		hops[0] = (struct fct_hop){
			src->nic_bps ? src->nic_bps : hp->q.rate_bps,
			src->link_delay_ns == SIM_PORT_DELAY ? hp->q.delay_ns : src->link_delay_ns };
	n = 1;
	for (int k = 0; k < c->nswitches; k++) {     /* each switch at most once */
		const struct sw_switch_conf *s = &c->sw[sw];
		int e = static_port(s, mac);
		const struct sw_port_conf *out;

		if (e < 0 || e >= s->nports || e == in)
			return 0;                  /* the switch would flood or filter it */
		out = &s->ports[e];
		if (n < max)
			hops[n] = (struct fct_hop){ out->q.rate_bps, out->q.delay_ns };
		n++;
		if (sw == dst->sw && e == dst->port)
			return n;
		if (out->kind != SW_PORT_LINK)
			return 0;                  /* another host's port */
		sw = out->peer_switch;
		in = out->peer_port;
		if (sw < 0 || sw >= c->nswitches)
			return 0;
	}
	return 0;
}
