/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hosts and paths of a switchsim configuration (qpace/sim.h: sim_sw_conf_hosts,
 * sim_sw_conf_path): the I/O ports in order, and the links a frame crosses between two of
 * them read from the switches' static forwarding entries, so any topology file gives its
 * base RTTs, whoever wrote it. */
#include <stdlib.h>
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

/* Switch @s's port towards @ip (whose MAC is @mac): its route, else its mac line; -1
 * when it has neither (it would flood). */
static int static_port(const struct sw_conf *c, int s, uint32_t ip, const uint8_t mac[6])
{
	const struct sw_switch_conf *sw = &c->sw[s];
	uint32_t h = ip - c->routes.first_ip;

	if (c->route && h < c->nroutes) {
		uint16_t p = c->route[(size_t)s * c->nroutes + h];
		return p == SW_ROUTE_NONE ? -1 : p;
	}
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
		int e = static_port(c, sw, dst->ip, mac);
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

/* One hop's share of a base RTT (fct_base_rtt_ns: the two ways' delay and one MTU's
 * serialisation); every hop adds its own, so a path's is the sum of its hops'. */
static qp_time_ns hop_rtt(qp_rate_bps bps, qp_time_ns delay_ns, uint32_t mtu)
{
	return 2 * delay_ns + qp_tx_time_ns(mtu, bps);
}

struct to_dst {                   /* switch s towards the destination: the rest of the path */
	qp_time_ns rtt;
	uint32_t hops;                /* egress ports to the destination, 0: none reaches it */
	uint32_t port;                /* the egress it takes */
	uint8_t state;                /* 0 not yet, 1 on the way (a loop), 2 known */
};

/* Switch @s's rest of the path to @dst (memo), iteratively along its chain of switches. */
static void rest(const struct sw_conf *c, const struct sim_host_conf *dst, uint32_t mtu,
		 struct to_dst *t, int s, int *chain, uint8_t mac[6])
{
	int n = 0, k;

	while (t[s].state == 0) {
		const struct sw_port_conf *out;
		int e = static_port(c, s, dst->ip, mac);
		t[s].state = 1;
		chain[n++] = s;
		if (e < 0 || e >= c->sw[s].nports)
			break;                     /* floods: no path */
		t[s].port = (uint32_t)e;
		out = &c->sw[s].ports[e];
		if (s == dst->sw && e == dst->port) {
			t[s] = (struct to_dst){ hop_rtt(out->q.rate_bps, out->q.delay_ns, mtu), 1,
						(uint32_t)e, 2 };
			n--;
			break;
		}
		if (out->kind != SW_PORT_LINK || out->peer_switch < 0 ||
		    out->peer_switch >= c->nswitches)
			break;                     /* another host's port */
		s = out->peer_switch;
	}
	/* back along the chain: each takes its next's rest; the next must not send it back */
	for (k = n - 1; k >= 0; k--) {
		int w = chain[k];
		const struct sw_port_conf *out;
		struct to_dst nx;
		if (t[w].state == 2)
			continue;
		if (static_port(c, w, dst->ip, mac) < 0 ||
		    t[w].port >= (uint32_t)c->sw[w].nports ||
		    (out = &c->sw[w].ports[t[w].port])->kind != SW_PORT_LINK ||
		    out->peer_switch < 0 || out->peer_switch >= c->nswitches) {
			t[w] = (struct to_dst){ .state = 2 };
			continue;
		}
		nx = t[out->peer_switch];
		if (nx.state != 2 || !nx.hops || nx.port == (uint32_t)out->peer_port) {
			t[w] = (struct to_dst){ .state = 2 };   /* a loop, none, or filtered back */
			continue;
		}
		t[w] = (struct to_dst){ nx.rtt + hop_rtt(out->q.rate_bps, out->q.delay_ns, mtu),
					nx.hops + 1, t[w].port, 2 };
	}
}

qp_time_ns sim_sw_conf_max_rtt(const struct sw_conf *c, const struct sim_host_conf *hosts,
			       size_t n, uint32_t mtu, size_t max_hops)
{
	struct to_dst *t = calloc((size_t)c->nswitches + 1, sizeof(*t));
	int *chain = calloc((size_t)c->nswitches + 1, sizeof(*chain));
	qp_time_ns best = 0;

	if (!t || !chain) {
		free(t);
		free(chain);
		return QP_TIME_NEVER;
	}
	for (size_t b = 0; b < n; b++) {
		uint8_t mac[FRAME_ETH_ALEN];
		const struct sim_host_conf *dst = &hosts[b];
		if (dst->sw < 0 || dst->sw >= c->nswitches)
			continue;
		soft_mac_from_ip(dst->ip, mac);
		memset(t, 0, (size_t)c->nswitches * sizeof(*t));
		for (size_t a = 0; a < n; a++) {
			const struct sim_host_conf *src = &hosts[a];
			const struct sw_port_conf *hp;
			struct to_dst r;
			if (a == b || src->sw < 0 || src->sw >= c->nswitches || src->port < 0 ||
			    src->port >= c->sw[src->sw].nports)
				continue;
			if (t[src->sw].state != 2)
				rest(c, dst, mtu, t, src->sw, chain, mac);
			r = t[src->sw];
			/* the host's own port sends nothing back out of itself (filtered) */
			if (!r.hops || r.port == (uint32_t)src->port || r.hops + 1 > max_hops)
				continue;
			hp = &c->sw[src->sw].ports[src->port];
			r.rtt += hop_rtt(src->nic_bps ? src->nic_bps : hp->q.rate_bps,
					 src->link_delay_ns == SIM_PORT_DELAY ? hp->q.delay_ns
									: src->link_delay_ns, mtu);
			if (r.rtt > best)
				best = r.rtt;
		}
	}
	free(t);
	free(chain);
	return best;
}

void sim_sw_conf_size(const struct sw_conf *c, struct sim_sw_conf_size *out)
{
	*out = (struct sim_sw_conf_size){ .switches = (size_t)c->nswitches,
					  .fwd_slots = sw_fabric_fwd_slots(c),
					  .route_bytes = (uint64_t)c->nswitches * c->nroutes *
							 sizeof(*c->route) };
	for (int s = 0; s < c->nswitches; s++)
		out->ports += (size_t)c->sw[s].nports;
}
