/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forwarding computed from the topology (a routes line; conf.h struct sw_routes_conf).
 *
 * Host h is the h-th I/O port of the configuration (switch by switch, port by port). Each
 * switch forwards towards it along a shortest path in switch hops: from breadth-first
 * search over the links out of the host's switch, a switch's candidates are its link
 * ports whose far end is one hop nearer, in port order, and it takes candidate
 * (h + r) mod n, r = qp_mix64(switch id) mod n: deterministic, and each switch spreads
 * destinations evenly over its equal-cost ports. The host's own switch takes the host's
 * port. This is qpace-bench topo's rule for its mac lines (sim/topogen_route.c): a
 * generated file with a routes line forwards as one with a mac line per host and switch,
 * to the frame. ECMP is per destination: the switch forwards on the destination MAC, so
 * the source cannot enter the choice.
 *
 * Cost: a search per switch that has hosts, O(ports) each, and one table of switches x
 * hosts 16-bit ports (21 MB for a k = 32 fat-tree: 1,280 switches, 8,192 hosts). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/rng.h"
#include "conf.h"

#define FAR UINT32_MAX

/* Hops from every switch to @root over links. */
static void bfs(const struct sw_conf *c, uint32_t root, uint32_t *dist, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (int s = 0; s < c->nswitches; s++)
		dist[s] = FAR;
	dist[root] = 0;
	queue[tail++] = root;
	while (head < tail) {
		const struct sw_switch_conf *s = &c->sw[queue[head]];
		uint32_t d = dist[queue[head++]];
		for (int i = 0; i < s->nports; i++) {
			const struct sw_port_conf *p = &s->ports[i];
			if (p->kind == SW_PORT_LINK && dist[p->peer_switch] == FAR) {
				dist[p->peer_switch] = d + 1;
				queue[tail++] = (uint32_t)p->peer_switch;
			}
		}
	}
}

static bool io_port(const struct sw_port_conf *p)
{
	return p->kind != SW_PORT_LINK;
}

bool sw_routes_host(const struct sw_conf *c, uint32_t h, int *sw, int *port)
{
	uint32_t n = 0;

	for (int s = 0; s < c->nswitches; s++)
		for (int i = 0; i < c->sw[s].nports; i++)
			if (io_port(&c->sw[s].ports[i]) && n++ == h) {
				*sw = s;
				*port = i;
				return true;
			}
	return false;
}

int sw_routes_build(struct sw_conf *c)
{
	uint32_t ns = (uint32_t)c->nswitches, nh = 0, h0;
	uint32_t *dist = NULL, *queue, *first = NULL;
	uint16_t *cand = NULL, *ncand = NULL;
	int rc = -ENOMEM;

	for (uint32_t s = 0; s < ns; s++)
		for (int i = 0; i < c->sw[s].nports; i++)
			nh += io_port(&c->sw[s].ports[i]);
	free(c->route);
	c->nroutes = nh;
	c->route = malloc(((size_t)ns * nh + 1) * sizeof(*c->route));
	dist = malloc(2 * ((size_t)ns + 1) * sizeof(*dist));
	first = malloc(((size_t)ns + 1) * sizeof(*first));
	ncand = malloc(((size_t)ns + 1) * sizeof(*ncand));
	if (!c->route || !dist || !first || !ncand)
		goto out;
	queue = dist + ns + 1;
	memset(c->route, 0xff, (size_t)ns * nh * sizeof(*c->route));
	/* each switch's candidates towards the current root, from first[s] in one array of
	 * as many slots as there are link ports */
	{
		size_t links = 0;
		for (uint32_t s = 0; s < ns; s++) {
			first[s] = (uint32_t)links;
			for (int i = 0; i < c->sw[s].nports; i++)
				links += !io_port(&c->sw[s].ports[i]);
		}
		if (!(cand = malloc((links + 1) * sizeof(*cand))))
			goto out;
	}
	h0 = 0;
	for (uint32_t root = 0; root < ns; root++) {
		const struct sw_switch_conf *rs = &c->sw[root];
		uint32_t hosts = 0;

		for (int i = 0; i < rs->nports; i++)
			hosts += io_port(&rs->ports[i]);
		if (!hosts)
			continue;
		bfs(c, root, dist, queue);
		for (uint32_t s = 0; s < ns; s++) {
			const struct sw_switch_conf *sw = &c->sw[s];
			uint16_t n = 0;
			if (s == root || dist[s] == FAR) {
				ncand[s] = 0;
				continue;
			}
			for (int i = 0; i < sw->nports; i++) {
				const struct sw_port_conf *p = &sw->ports[i];
				if (!io_port(p) && dist[p->peer_switch] + 1 == dist[s])
					cand[first[s] + n++] = (uint16_t)i;
			}
			ncand[s] = n;
		}
		for (int i = 0, k = 0; i < rs->nports; i++) {
			uint32_t h;
			if (!io_port(&rs->ports[i]))
				continue;
			h = h0 + (uint32_t)k++;
			for (uint32_t s = 0; s < ns; s++) {
				uint16_t *r = &c->route[(size_t)s * nh + h];
				if (s == root)
					*r = (uint16_t)i;
				else if (ncand[s])
					*r = cand[first[s] + (h + qp_mix64(c->sw[s].id) % ncand[s]) %
						  ncand[s]];
			}
		}
		h0 += hosts;
	}
	rc = 0;
out:
	free(dist);
	free(first);
	free(cand);
	free(ncand);
	if (rc) {
		free(c->route);
		c->route = NULL;
		c->nroutes = 0;
	}
	return rc;
}
