/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology generators: parameters checked against what qpace-switch loads, then the
 * switches, hosts and links of each kind (qpace/topogen.h). Routing is topogen_route.c,
 * the file topogen_write.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/topogen.h"
#include "qpace/units.h"
#include "topogen_priv.h"

#define MIN_RATE QP_KBPS
#define MAX_RATE (10000 * QP_GBPS)
#define MAX_DELAY (10 * QP_NS_PER_S)
#define MIN_BUFFER 1514u
#define MAX_BUFFER (1ULL << 30)

static const char *const kind_names[TOPOGEN_NKINDS] = {
	[TOPOGEN_STAR] = "star", [TOPOGEN_DUMBBELL] = "dumbbell",
	[TOPOGEN_LEAF_SPINE] = "leaf-spine", [TOPOGEN_FAT_TREE] = "fat-tree",
	[TOPOGEN_TWO_SITE] = "two-site",
};

const char *topogen_kind_name(enum topogen_kind kind)
{
	return (unsigned)kind < TOPOGEN_NKINDS ? kind_names[kind] : "?";
}

int topogen_kind_find(const char *name)
{
	for (int k = 0; k < TOPOGEN_NKINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

void topogen_defaults(struct topogen_params *p, enum topogen_kind kind)
{
	static const uint32_t hosts[TOPOGEN_NKINDS] = {
		[TOPOGEN_STAR] = 8, [TOPOGEN_DUMBBELL] = 4, [TOPOGEN_TWO_SITE] = 2,
	};

	*p = (struct topogen_params){
		.kind = kind, .hosts = (unsigned)kind < TOPOGEN_NKINDS ? hosts[kind] : 0,
		.leaves = 2, .spines = 2, .hosts_per_leaf = 2, .oversub = 1, .k = 4,
		.host_bps = 10 * QP_GBPS, .wan_bps = QP_GBPS, .delay_ns = QP_NS_PER_US,
		.wan_delay_ns = 10 * QP_NS_PER_MS, .buffer_bytes = 1 << 20,
		.wan_buffer_bytes = 16 << 20, .base_port = 7000,
	};
}

static int bad(char *err, size_t errlen, const struct topogen_params *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(char *err, size_t errlen, const struct topogen_params *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_errmsg(-EINVAL, err, errlen, "%s: %s", topogen_kind_name(p->kind), msg);
}

#define BAD(...) bad(err, errlen, p, __VA_ARGS__)

static int check_rate(const struct topogen_params *p, const char *what, qp_rate_bps v,
		      char *err, size_t errlen)
{
	char b[32];

	if (v < MIN_RATE || v > MAX_RATE)
		return BAD("%s %s bits/s: accepted 1K..10T", what, qp_fmt_rate_exact(v, b, sizeof(b)));
	return 0;
}

/* The size of each kind: switches, hosts, and the most ports a switch has. */
static void kind_size(const struct topogen_params *p, uint32_t *sw, uint64_t *hosts,
		      uint64_t *ports)
{
	uint64_t k = p->k;

	switch (p->kind) {
	case TOPOGEN_STAR:
		*sw = 1, *hosts = p->hosts, *ports = p->hosts;
		break;
	case TOPOGEN_TWO_SITE:
		if (p->site_leaf_spine) {   /* a leaf-spine a site; the first spines' WAN port */
			*sw = 2 * (p->leaves + p->spines);
			*hosts = 2ULL * p->leaves * p->hosts_per_leaf;
			*ports = p->hosts_per_leaf + (uint64_t)p->spines;
			if (p->leaves + 1ULL > *ports)
				*ports = p->leaves + 1ULL;
			break;
		}
		/* fall through */
	case TOPOGEN_DUMBBELL:
		*sw = 2, *hosts = 2ULL * p->hosts, *ports = p->hosts + 1ULL;
		break;
	case TOPOGEN_LEAF_SPINE:
		*sw = p->leaves + p->spines, *hosts = (uint64_t)p->leaves * p->hosts_per_leaf;
		*ports = p->hosts_per_leaf + (uint64_t)p->spines;
		if (p->leaves > *ports)
			*ports = p->leaves;
		break;
	default:   /* fat-tree */
		*sw = (uint32_t)(5 * k * k / 4), *hosts = k * k * k / 4, *ports = k;
		break;
	}
}

/* A kind built of leaf-spines: leaf-spine, and two-site with a leaf-spine a site. */
#define LEAF_SPINES(p) ((p)->kind == TOPOGEN_LEAF_SPINE || \
			((p)->kind == TOPOGEN_TWO_SITE && (p)->site_leaf_spine))

static int check(const struct topogen_params *p, char *err, size_t errlen)
{
	uint32_t nsw;
	uint64_t hosts, ports;
	char b[32];

	if ((unsigned)p->kind >= TOPOGEN_NKINDS)
		return qp_errmsg(-EINVAL, err, errlen, "topology kind %d: accepted star, dumbbell, "
				 "leaf-spine, fat-tree, two-site", (int)p->kind);
	if (p->kind == TOPOGEN_FAT_TREE && (p->k < 2 || p->k % 2 || p->k > 32))
		return BAD("k %u: accepted an even number in 2..32", p->k);
	if (LEAF_SPINES(p) && (!p->leaves || !p->spines || !p->hosts_per_leaf))
		return BAD("leaves %u, spines %u, hosts-per-leaf %u: each accepted from 1",
			   p->leaves, p->spines, p->hosts_per_leaf);
	if (LEAF_SPINES(p) && !(p->oversub > 0 && p->oversub <= 1000))
		return BAD("oversub %g: accepted a ratio in (0, 1000] (1: non-blocking, 3: 3:1)",
			   p->oversub);
	if ((p->kind == TOPOGEN_STAR || p->kind == TOPOGEN_DUMBBELL ||
	     (p->kind == TOPOGEN_TWO_SITE && !p->site_leaf_spine)) && !p->hosts)
		return BAD("hosts 0: accepted from 1");
	kind_size(p, &nsw, &hosts, &ports);
	if (nsw > TOPOGEN_MAX_SWITCHES)
		return BAD("%u switches, accepted at most %u", nsw, TOPOGEN_MAX_SWITCHES);
	if (ports > TOPOGEN_MAX_PORTS)
		return BAD("%llu ports on one switch (%s), accepted at most %u",
			   (unsigned long long)ports,
			   p->kind == TOPOGEN_LEAF_SPINE ? "a leaf: hosts-per-leaf + spines; a "
			   "spine: leaves" : LEAF_SPINES(p) ? "a leaf: hosts-per-leaf + spines; a "
			   "spine: leaves + the WAN" : p->kind == TOPOGEN_STAR ? "its hosts" :
			   "its hosts and the link", TOPOGEN_MAX_PORTS);
	if (hosts > TOPOGEN_MAX_HOSTS)
		return BAD("%llu hosts, accepted at most %u", (unsigned long long)hosts,
			   TOPOGEN_MAX_HOSTS);
	if (!p->base_port || p->base_port + 2 * hosts - 1 > 65535)
		return BAD("base-port %u with %llu hosts: accepted 1..%llu (two UDP ports a host)",
			   p->base_port, (unsigned long long)hosts,
			   (unsigned long long)(65536 - 2 * hosts));
	if (check_rate(p, "rate", p->host_bps, err, errlen) ||
	    (p->fabric_bps && check_rate(p, "fabric-rate", p->fabric_bps, err, errlen)) ||
	    (p->kind == TOPOGEN_TWO_SITE && check_rate(p, "wan-rate", p->wan_bps, err, errlen)))
		return -EINVAL;
	if (p->delay_ns > MAX_DELAY || p->wan_delay_ns > MAX_DELAY)
		return BAD("%s %s: accepted 0..10s", p->delay_ns > MAX_DELAY ? "delay" : "wan-delay",
			   qp_fmt_time_exact(p->delay_ns > MAX_DELAY ? p->delay_ns : p->wan_delay_ns,
					     b, sizeof(b)));
	if (p->buffer_bytes < MIN_BUFFER || p->buffer_bytes > MAX_BUFFER)
		return BAD("buffer %llu bytes: accepted 1514..1G", (unsigned long long)p->buffer_bytes);
	if (p->kind == TOPOGEN_TWO_SITE && (p->wan_buffer_bytes < MIN_BUFFER ||
					    p->wan_buffer_bytes > MAX_BUFFER))
		return BAD("wan-buffer %llu bytes: accepted 1514..1G",
			   (unsigned long long)p->wan_buffer_bytes);
	return 0;
}

/* ---- building ---- */

static uint32_t add_switch(struct topogen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static uint32_t add_switch(struct topogen *g, const char *fmt, ...)
{
	struct topogen_switch *s = &g->sw[g->nswitches];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->name, sizeof(s->name), fmt, ap);
	va_end(ap);
	s->id = g->nswitches + 1;
	return g->nswitches++;
}

static struct topogen_port *add_port(struct topogen *g, uint32_t sw, qp_rate_bps rate,
				     qp_time_ns delay, uint64_t buffer)
{
	struct topogen_port *p = &g->sw[sw].ports[g->sw[sw].nports++];

	p->host = -1;
	p->peer_sw = p->peer_port = -1;
	p->rate_bps = rate;
	p->delay_ns = delay;
	p->buffer_bytes = buffer;
	g->nports++;
	return p;
}

static void add_host(struct topogen *g, uint32_t sw)
{
	const struct topogen_params *p = &g->p;
	uint32_t h = g->nhosts++;
	struct topogen_host *x = &g->host[h];
	struct topogen_port *port = add_port(g, sw, p->host_bps, p->delay_ns, p->buffer_bytes);

	snprintf(port->name, sizeof(port->name), "h%u", h);
	port->host = (int32_t)h;
	x->sw = sw;
	x->port = g->sw[sw].nports - 1;
	x->ip = 0x0a000000u + h + 1;                 /* 10.0.0.1 for host 0 */
	x->mac[0] = 0x02;                             /* soft_mac_from_ip */
	x->mac[1] = 0x00;
	for (int i = 0; i < 4; i++)
		x->mac[2 + i] = (uint8_t)(x->ip >> (24 - 8 * i));
	x->nic_bps = p->host_bps;
}

/* A link between switches @a and @b, its ends named @na and @nb. */
static void add_link(struct topogen *g, uint32_t a, const char *na, uint32_t b, const char *nb,
		     qp_rate_bps rate, qp_time_ns delay, uint64_t buffer)
{
	struct topogen_port *pa = add_port(g, a, rate, delay, buffer);
	struct topogen_port *pb = add_port(g, b, rate, delay, buffer);

	snprintf(pa->name, sizeof(pa->name), "%s", na);
	snprintf(pb->name, sizeof(pb->name), "%s", nb);
	pa->peer_sw = (int32_t)b;
	pa->peer_port = (int32_t)g->sw[b].nports - 1;
	pb->peer_sw = (int32_t)a;
	pb->peer_port = (int32_t)g->sw[a].nports - 1;
	g->nlinks++;
}

/* The same with the ends named PREFIX + number: "up1", "down2". */
static void add_link_n(struct topogen *g, uint32_t a, const char *pa, uint32_t ia, uint32_t b,
		       const char *pb, uint32_t ib)
{
	char na[TOPOGEN_NAME], nb[TOPOGEN_NAME];

	snprintf(na, sizeof(na), "%s%u", pa, ia);
	snprintf(nb, sizeof(nb), "%s%u", pb, ib);
	add_link(g, a, na, b, nb, g->p.fabric_bps, g->p.delay_ns, g->p.buffer_bytes);
}

static void build_star(struct topogen *g)
{
	uint32_t s = add_switch(g, "s1");

	for (uint32_t i = 0; i < g->p.hosts; i++)
		add_host(g, s);
}

/* The WAN link (the last one added) reports no INT at either end: the WAN may not support
 * INT (IDCC's premise), so its queueing is the RTT's, not the INT loop's. */
static void wan_no_int(struct topogen *g)
{
	for (uint32_t s = 0; s < g->nswitches; s++)
		for (uint32_t i = 0; i < g->sw[s].nports; i++)
			if (!strcmp(g->sw[s].ports[i].name, "wan"))
				g->sw[s].ports[i].no_int = true;
}

/* dumbbell and two-site: two switches, their hosts (site 0 and 1), one link between them
 * named @names[2] at both ends */
static void build_pair(struct topogen *g, const char *const names[3], qp_rate_bps rate,
		       qp_time_ns delay, uint64_t buffer)
{
	uint32_t s[2];

	for (int side = 0; side < 2; side++) {
		s[side] = add_switch(g, "%s", names[side]);
		for (uint32_t i = 0; i < g->p.hosts; i++) {
			g->site[g->nhosts] = (uint8_t)side;
			add_host(g, s[side]);
		}
	}
	add_link(g, s[0], names[2], s[1], names[2], rate, delay, buffer);
}

/* A leaf-spine, its switches named @prefix + leaf1.., spine1..; its hosts in @site when
 * the topology has sites. Returns its first spine. */
static uint32_t build_leaf_spine(struct topogen *g, const char *prefix, uint8_t site)
{
	const struct topogen_params *p = &g->p;
	uint32_t leaf0 = g->nswitches, spine0;

	for (uint32_t l = 0; l < p->leaves; l++) {
		uint32_t s = add_switch(g, "%sleaf%u", prefix, l + 1);
		for (uint32_t h = 0; h < p->hosts_per_leaf; h++) {
			if (g->site)
				g->site[g->nhosts] = site;
			add_host(g, s);
		}
	}
	spine0 = g->nswitches;
	for (uint32_t s = 0; s < p->spines; s++)
		add_switch(g, "%sspine%u", prefix, s + 1);
	for (uint32_t s = 0; s < p->spines; s++)
		for (uint32_t l = 0; l < p->leaves; l++)
			add_link_n(g, leaf0 + l, "up", s + 1, spine0 + s, "down", l + 1);
	return spine0;
}

static void build_fat_tree(struct topogen *g)
{
	const struct topogen_params *p = &g->p;
	const uint32_t k = p->k, half = k / 2;
	uint32_t core0;

	/* edge switches (with their hosts) and aggregation switches, pod by pod */
	for (uint32_t pod = 0; pod < k; pod++) {
		for (uint32_t e = 0; e < half; e++) {
			uint32_t s = add_switch(g, "edge%u_%u", pod, e);
			for (uint32_t h = 0; h < half; h++)
				add_host(g, s);
		}
		for (uint32_t a = 0; a < half; a++)
			add_switch(g, "agg%u_%u", pod, a);
	}
	core0 = g->nswitches;
	for (uint32_t c = 0; c < half * half; c++)
		add_switch(g, "core%u", c);
	for (uint32_t pod = 0; pod < k; pod++) {
		uint32_t edge0 = pod * k, agg0 = pod * k + half;
		for (uint32_t e = 0; e < half; e++)
			for (uint32_t a = 0; a < half; a++)
				add_link_n(g, edge0 + e, "up", a, agg0 + a, "down", e);
		/* aggregation switch a reaches cores a*k/2 .. a*k/2 + k/2 - 1 */
		for (uint32_t a = 0; a < half; a++)
			for (uint32_t c = 0; c < half; c++)
				add_link_n(g, agg0 + a, "up", c, core0 + a * half + c, "pod", pod);
	}
}

/* The file must be one sw_topo_load reads: write it once to know its size. */
static int check_file(struct topogen *g, char *err, size_t errlen)
{
	const struct topogen_params params = g->p, *p = &params;   /* BAD's; g is freed */
	const uint32_t nsw = g->nswitches, hosts = g->nhosts;
	struct qp_strbuf text = { 0 };
	bool ok = topogen_write(g, &text);
	size_t len = text.len;

	qp_strbuf_free(&text);
	if (ok && len <= TOPOGEN_MAX_FILE)
		return 0;
	topogen_free(g);
	if (!ok)
		return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", topogen_kind_name(p->kind));
	return BAD("a file of %zu bytes (%u switches, %u hosts), accepted at most %u: "
		   "qpace-switch reads no more; fewer hosts or switches", len, nsw, hosts,
		   TOPOGEN_MAX_FILE);
}

int topogen_build(struct topogen *g, const struct topogen_params *params, char *err,
		  size_t errlen)
{
	const struct topogen_params *p = params;
	uint32_t nsw;
	uint64_t hosts, ports;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((rc = check(p, err, errlen)))
		return rc;
	g->p = *p;
	if (!g->p.fabric_bps && LEAF_SPINES(p)) {
		double f = (double)p->hosts_per_leaf * (double)p->host_bps / (p->spines * p->oversub);
		g->p.fabric_bps = qp_u64_round_sat(f);   /* oversub 1e-300: refused below */
		if (check_rate(p, "fabric-rate (hosts-per-leaf x rate / (spines x oversub))",
			       g->p.fabric_bps, err, errlen))
			return -EINVAL;
	} else if (!g->p.fabric_bps) {
		g->p.fabric_bps = p->host_bps;
	}
	kind_size(p, &nsw, &hosts, &ports);
	g->sw = calloc(nsw, sizeof(*g->sw));
	g->host = calloc(hosts, sizeof(*g->host));
	g->route = calloc((size_t)nsw * hosts, sizeof(*g->route));
	if (p->kind == TOPOGEN_DUMBBELL || p->kind == TOPOGEN_TWO_SITE)
		g->site = calloc(hosts, 1);
	if (!g->sw || !g->host || !g->route ||
	    ((p->kind == TOPOGEN_DUMBBELL || p->kind == TOPOGEN_TWO_SITE) && !g->site)) {
		topogen_free(g);
		return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", topogen_kind_name(p->kind));
	}
	switch (p->kind) {
	case TOPOGEN_STAR:
		build_star(g);
		break;
	case TOPOGEN_DUMBBELL: {
		static const char *const names[3] = { "left", "right", "link" };
		build_pair(g, names, g->p.fabric_bps, p->delay_ns, p->buffer_bytes);
		break;
	}
	case TOPOGEN_TWO_SITE: {
		static const char *const names[3] = { "siteA", "siteB", "wan" };
		if (!p->site_leaf_spine) {
			build_pair(g, names, p->wan_bps, p->wan_delay_ns, p->wan_buffer_bytes);
		} else {
			uint32_t a = build_leaf_spine(g, "a_", 0), b = build_leaf_spine(g, "b_", 1);
			add_link(g, a, names[2], b, names[2], p->wan_bps, p->wan_delay_ns,
				 p->wan_buffer_bytes);
		}
		wan_no_int(g);
		break;
	}
	case TOPOGEN_LEAF_SPINE:
		build_leaf_spine(g, "", 0);
		break;
	default:
		build_fat_tree(g);
		break;
	}
	if (topogen_route(g)) {
		topogen_free(g);
		return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", topogen_kind_name(p->kind));
	}
	return check_file(g, err, errlen);
}

void topogen_free(struct topogen *g)
{
	free(g->sw);
	free(g->host);
	free(g->site);
	free(g->route);
	memset(g, 0, sizeof(*g));
}
