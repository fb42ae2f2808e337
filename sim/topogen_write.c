/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A generated topology as a topology file, switchsim/topo.c's grammar (qpace/topogen.h):
 * comments that say what made it, then switch, port, link and mac lines. Every quantity is
 * written exactly (qp_fmt_*), so the loader reads back the numbers built here. */
#include <stdio.h>

#include "qpace/topogen.h"
#include "qpace/units.h"

static void describe(const struct topogen *g, struct qp_strbuf *o)
{
	const struct topogen_params *p = &g->p;
	char r[32], f[32], w[32], d[32];

	qp_fmt_rate_exact(p->host_bps, r, sizeof(r));
	qp_fmt_rate_exact(p->fabric_bps, f, sizeof(f));
	switch (p->kind) {
	case TOPOGEN_STAR:
		qp_strbuf_printf(o, "# star: %u hosts on one switch at %s\n", p->hosts, r);
		break;
	case TOPOGEN_DUMBBELL:
		qp_strbuf_printf(o, "# dumbbell: %u hosts on each side at %s, the bottleneck link "
				 "between them at %s\n", p->hosts, r, f);
		break;
	case TOPOGEN_LEAF_SPINE:
		qp_strbuf_printf(o, "# leaf-spine: %u leaves x %u spines, %u hosts a leaf at %s, "
				 "leaf-spine links at %s (oversubscription %g:1)\n", p->leaves,
				 p->spines, p->hosts_per_leaf, r, f,
				 (double)p->hosts_per_leaf * (double)p->host_bps /
				 ((double)p->spines * (double)p->fabric_bps));
		break;
	case TOPOGEN_FAT_TREE:
		qp_strbuf_printf(o, "# fat-tree: k = %u, %u pods, %u core switches, hosts at %s, "
				 "switch links at %s\n", p->k, p->k, p->k * p->k / 4, r, f);
		break;
	default:
		if (p->site_leaf_spine)
			qp_strbuf_printf(o, "# two-site: a leaf-spine a site, %u leaves x %u spines, %u "
					 "hosts a leaf at %s, switch links at %s; the WAN link between "
					 "the first spines at %s with %s each way\n", p->leaves,
					 p->spines, p->hosts_per_leaf, r, f,
					 qp_fmt_rate_exact(p->wan_bps, w, sizeof(w)),
					 qp_fmt_time_exact(p->wan_delay_ns, d, sizeof(d)));
		else
			qp_strbuf_printf(o, "# two-site: %u hosts a site at %s, the WAN link at %s "
					 "with %s each way\n", p->hosts, r,
					 qp_fmt_rate_exact(p->wan_bps, w, sizeof(w)),
					 qp_fmt_time_exact(p->wan_delay_ns, d, sizeof(d)));
		break;
	}
}

static void header(const struct topogen *g, struct qp_strbuf *o)
{
	describe(g, o);
	qp_strbuf_printf(o, "# written by qpace-bench topo (sim/topogen.c): %u switches, %u ports, "
			 "%u links, %u hosts\n", g->nswitches, g->nports, g->nlinks, g->nhosts);
	qp_strbuf_printf(o,
		"#\n"
		"# Host i is port h<i>: udp local=127.0.0.1:%u+2i remote=127.0.0.1:%u+2i+1, IPv4\n"
		"# 10.0.0.0+i+1, MAC 02:00 and that address. Forwarding is static (one mac line a\n"
		"# switch and host; each switch spreads destinations evenly over its equal-cost\n"
		"# ports); links off the broadcast spanning tree are flood=off.\n"
		"#\n"
		"#   qpace-switch -c FILE\n\n", g->p.base_port, g->p.base_port);
}

static void switches(const struct topogen *g, struct qp_strbuf *o)
{
	char r[32], d[32], b[32];

	qp_fmt_rate_exact(g->p.host_bps, r, sizeof(r));
	qp_fmt_time_exact(g->p.delay_ns, d, sizeof(d));
	qp_fmt_bytes(g->p.buffer_bytes, b, sizeof(b));
	for (uint32_t s = 0; s < g->nswitches; s++)
		qp_strbuf_printf(o, "switch %s id=%u rate=%s delay=%s buffer=%s%s%s\n",
				 g->sw[s].name, g->sw[s].id, r, d, b, g->p.settings ? " " : "",
				 g->p.settings ? g->p.settings : "");
	qp_strbuf_printf(o, "\n");
}

static void hosts(const struct topogen *g, struct qp_strbuf *o)
{
	for (uint32_t h = 0; h < g->nhosts; h++) {
		const struct topogen_host *x = &g->host[h];
		unsigned port = g->p.base_port + 2 * h;
		qp_strbuf_printf(o, "port %s h%u udp local=127.0.0.1:%u remote=127.0.0.1:%u"
				 "   # 10.0.%u.%u\n", g->sw[x->sw].name, h, port, port + 1,
				 (x->ip >> 8) & 0xff, x->ip & 0xff);
	}
	qp_strbuf_printf(o, "\n");
}

/* Each link once, from its end on the lower switch (then port) index. */
static void links(const struct topogen *g, struct qp_strbuf *o)
{
	char r[32], d[32], b[32];

	for (uint32_t s = 0; s < g->nswitches; s++)
		for (uint32_t i = 0; i < g->sw[s].nports; i++) {
			const struct topogen_port *p = &g->sw[s].ports[i];
			const struct topogen_switch *peer;
			if (p->peer_sw < 0 || (uint32_t)p->peer_sw < s ||
			    ((uint32_t)p->peer_sw == s && (uint32_t)p->peer_port < i))
				continue;
			peer = &g->sw[p->peer_sw];
			qp_strbuf_printf(o, "link %s:%s %s:%s rate=%s", g->sw[s].name, p->name,
					 peer->name, peer->ports[p->peer_port].name,
					 qp_fmt_rate_exact(p->rate_bps, r, sizeof(r)));
			if (p->delay_ns != g->p.delay_ns)
				qp_strbuf_printf(o, " delay=%s",
						 qp_fmt_time_exact(p->delay_ns, d, sizeof(d)));
			if (p->buffer_bytes != g->p.buffer_bytes)
				qp_strbuf_printf(o, " buffer=%s",
						 qp_fmt_bytes(p->buffer_bytes, b, sizeof(b)));
			qp_strbuf_printf(o, "%s\n", p->no_flood ? " flood=off" : "");
		}
}

static void macs(const struct topogen *g, struct qp_strbuf *o)
{
	for (uint32_t s = 0; s < g->nswitches; s++) {
		qp_strbuf_printf(o, "\n");
		for (uint32_t h = 0; h < g->nhosts; h++) {
			const uint8_t *m = g->host[h].mac;
			int16_t port = g->route[(size_t)s * g->nhosts + h];
			if (port < 0)
				continue;
			qp_strbuf_printf(o, "mac %s %02x:%02x:%02x:%02x:%02x:%02x %s\n", g->sw[s].name,
					 m[0], m[1], m[2], m[3], m[4], m[5], g->sw[s].ports[port].name);
		}
	}
}

bool topogen_write(const struct topogen *g, struct qp_strbuf *out)
{
	header(g, out);
	switches(g, out);
	hosts(g, out);
	links(g, out);
	macs(g, out);
	return !out->oom;
}
