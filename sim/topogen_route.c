/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Static forwarding for generated topologies: shortest paths by breadth-first search, one
 * equal-cost next hop per (switch, destination host), a broadcast spanning tree,
 * and paths read back from the tables (qpace/topogen.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/rng.h"
#include "topogen_priv.h"

#define FAR UINT32_MAX

/* Hops from every switch to @root over links; @dist holds nswitches, @queue as many. */
static void bfs(const struct topogen *g, uint32_t root, uint32_t *dist, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t s = 0; s < g->nswitches; s++)
		dist[s] = FAR;
	dist[root] = 0;
	queue[tail++] = root;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t i = 0; i < g->sw[s].nports; i++) {
			const struct topogen_port *p = &g->sw[s].ports[i];
			if (p->peer_sw >= 0 && dist[p->peer_sw] == FAR) {
				dist[p->peer_sw] = dist[s] + 1;
				queue[tail++] = (uint32_t)p->peer_sw;
			}
		}
	}
}

/* The egress port of switch @s towards host @h, whose switch is at @dist 0. */
static int16_t next_hop(const struct topogen *g, uint32_t s, uint32_t h, const uint32_t *dist)
{
	const struct topogen_switch *sw = &g->sw[s];
	uint32_t cand[TOPOGEN_MAX_PORTS], n = 0;

	if (g->host[h].sw == s)
		return (int16_t)g->host[h].port;
	if (dist[s] == FAR)
		return -1;
	for (uint32_t i = 0; i < sw->nports; i++) {
		const struct topogen_port *p = &sw->ports[i];
		if (p->peer_sw >= 0 && dist[p->peer_sw] + 1 == dist[s])
			cand[n++] = i;
	}
	if (!n)
		return -1;
	/* the destination's number plus a rotation of this switch's own: consecutive hosts
	 * take consecutive ports, so each switch spreads destinations evenly */
	return (int16_t)cand[(h + qp_mix64(sw->id) % n) % n];
}

/* Links off the spanning tree that breadth-first search from switch 0 draws: flood=off. */
static void flood_tree(struct topogen *g, uint32_t *seen, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t s = 0; s < g->nswitches; s++) {
		seen[s] = 0;
		for (uint32_t i = 0; i < g->sw[s].nports; i++)
			g->sw[s].ports[i].no_flood = g->sw[s].ports[i].peer_sw >= 0;
	}
	seen[0] = 1;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t i = 0; i < g->sw[s].nports; i++) {
			struct topogen_port *p = &g->sw[s].ports[i];
			if (p->peer_sw < 0 || seen[p->peer_sw])
				continue;
			seen[p->peer_sw] = 1;
			queue[tail++] = (uint32_t)p->peer_sw;
			p->no_flood = false;   /* a tree link floods, both ways */
			g->sw[p->peer_sw].ports[p->peer_port].no_flood = false;
		}
	}
}

int topogen_route(struct topogen *g)
{
	uint32_t *dist = malloc(2 * g->nswitches * sizeof(*dist)), *queue;

	if (!dist)
		return -ENOMEM;
	queue = dist + g->nswitches;
	memset(g->route, 0xff, (size_t)g->nswitches * g->nhosts * sizeof(*g->route));
	for (uint32_t root = 0; root < g->nswitches; root++) {
		bool has_host = false;
		for (uint32_t h = 0; h < g->nhosts && !has_host; h++)
			has_host = g->host[h].sw == root;
		if (!has_host)
			continue;
		bfs(g, root, dist, queue);
		for (uint32_t h = 0; h < g->nhosts; h++) {
			if (g->host[h].sw != root)
				continue;
			for (uint32_t s = 0; s < g->nswitches; s++)
				g->route[(size_t)s * g->nhosts + h] = next_hop(g, s, h, dist);
		}
	}
	flood_tree(g, dist, queue);
	free(dist);
	return 0;
}

size_t topogen_path(const struct topogen *g, uint32_t src, uint32_t dst,
		    struct fct_hop *hops, size_t max)
{
	const struct topogen_port *own;
	uint32_t s;
	size_t n = 0;

	if (src >= g->nhosts || dst >= g->nhosts || src == dst)
		return 0;
	own = &g->sw[g->host[src].sw].ports[g->host[src].port];
	if (n < max)
		hops[n] = (struct fct_hop){ own->rate_bps, own->delay_ns };
	n++;
	s = g->host[src].sw;
	for (uint32_t guard = 0; guard <= g->nswitches; guard++) {
		int16_t port = g->route[(size_t)s * g->nhosts + dst];
		const struct topogen_port *p;
		if (port < 0)
			return 0;
		p = &g->sw[s].ports[port];
		if (n < max)
			hops[n] = (struct fct_hop){ p->rate_bps, p->delay_ns };
		n++;
		if (p->host == (int32_t)dst)
			return n;
		if (p->host >= 0 || p->peer_sw < 0)
			return 0;
		s = (uint32_t)p->peer_sw;
	}
	return 0;   /* a loop: the tables are wrong */
}
