/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology generators: each kind's file loads with the switch's own loader (sw_topo_parse)
 * with the switches, ports, links and hosts it should have; walking the loaded static
 * tables takes every host to every other on a shortest path; the broadcast links form a
 * spanning tree; rates, the WAN and the settings arrive as generated; the static MACs fit
 * the switch's forwarding table; bad parameters are refused with their message. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/topogen.h"
#include "tmpdir.h"
#include "../../switchsim/conf.h"
#include "../../switchsim/fwd.h"

_Static_assert(TOPOGEN_MAX_SWITCHES <= SW_MAX_SWITCHES, "within the loader's limits");
_Static_assert(TOPOGEN_MAX_PORTS <= SW_MAX_PORTS, "within the loader's limits");
_Static_assert(TOPOGEN_MAX_HOSTS <= SW_MAX_STATIC, "one static entry per host");

static struct sw_conf conf;
static struct sw_fwd fwd;
static char err[512];

/* Build, write and load @p; the generated description in @g, the loaded one in conf. */
static void load(const struct topogen_params *p, struct topogen *g)
{
	struct qp_strbuf text = { 0 };
	int rc = topogen_build(g, p, err, sizeof(err));

	if (rc)
		fail_msg("build: %s", err);
	assert_true(topogen_write(g, &text));
	sw_conf_defaults(&conf);
	rc = sw_topo_parse(&conf, text.p, "generated", err, sizeof(err));
	if (rc)
		fail_msg("load: %s", err);
	sw_conf_finish(&conf);
	qp_strbuf_free(&text);
}

struct counts {
	int switches, ports, links, hosts;
};

static struct counts count(void)
{
	struct counts n = { conf.nswitches, 0, 0, 0 };

	for (int s = 0; s < conf.nswitches; s++)
		for (int i = 0; i < conf.sw[s].nports; i++) {
			n.ports++;
			if (conf.sw[s].ports[i].kind == SW_PORT_LINK)
				n.links++;
			else
				n.hosts++;
		}
	n.links /= 2;
	return n;
}

/* The switch and port of host @h in the loaded configuration (port "h<h>"). */
static void find_host(int h, int *sw, int *port)
{
	char name[16];

	snprintf(name, sizeof(name), "h%d", h);
	for (int s = 0; s < conf.nswitches; s++)
		for (int i = 0; i < conf.sw[s].nports; i++)
			if (!strcmp(conf.sw[s].ports[i].name, name)) {
				*sw = s;
				*port = i;
				return;
			}
	fail_msg("no port %s", name);
}

static int lookup(int sw, const uint8_t mac[6])
{
	for (int i = 0; i < conf.sw[sw].nstatic; i++)
		if (!memcmp(conf.sw[sw].statics[i].mac, mac, 6))
			return conf.sw[sw].statics[i].port;
	return -1;
}

/* Follow the loaded static tables from host @src to host @dst: the switches crossed. */
static int walk(const struct topogen *g, int src, int dst)
{
	int s, port, dsw, dport, hops = 0;

	find_host(src, &s, &port);
	find_host(dst, &dsw, &dport);
	for (;;) {
		const struct sw_port_conf *p;
		hops++;
		if (hops > conf.nswitches)
			fail_msg("host %d to %d: a loop", src, dst);
		port = lookup(s, g->host[dst].mac);
		if (port < 0)
			fail_msg("host %d to %d: switch %s has no entry", src, dst, conf.sw[s].name);
		p = &conf.sw[s].ports[port];
		if (p->kind != SW_PORT_LINK) {
			if (s != dsw || port != dport)
				fail_msg("host %d to %d: delivered to %s:%s", src, dst, conf.sw[s].name,
					 p->name);
			return hops;
		}
		s = p->peer_switch;
	}
}

/* Links that flood form a spanning tree of the switches: n - 1 of them, all connected. */
static void assert_flood_tree(void)
{
	int seen[SW_MAX_SWITCHES] = { 1 }, queue[SW_MAX_SWITCHES], head = 0, tail = 0, links = 0;

	queue[tail++] = 0;
	for (int s = 0; s < conf.nswitches; s++)
		for (int i = 0; i < conf.sw[s].nports; i++) {
			const struct sw_port_conf *p = &conf.sw[s].ports[i];
			if (p->kind == SW_PORT_LINK && !p->no_flood) {
				links++;
				/* both ends agree */
				assert_false(conf.sw[p->peer_switch].ports[p->peer_port].no_flood);
			}
		}
	assert_int_equal(links / 2, conf.nswitches - 1);
	while (head < tail) {
		int s = queue[head++];
		for (int i = 0; i < conf.sw[s].nports; i++) {
			const struct sw_port_conf *p = &conf.sw[s].ports[i];
			if (p->kind == SW_PORT_LINK && !p->no_flood && !seen[p->peer_switch]) {
				seen[p->peer_switch] = 1;
				queue[tail++] = p->peer_switch;
			}
		}
	}
	assert_int_equal(tail, conf.nswitches);
}

/* Every switch has an entry for every host, and they all fit the switch's MAC table. */
static void assert_statics(const struct topogen *g)
{
	for (int s = 0; s < conf.nswitches; s++) {
		assert_int_equal(conf.sw[s].nstatic, g->nhosts);
		sw_fwd_init(&fwd);
		for (int i = 0; i < conf.sw[s].nstatic; i++)
			assert_int_equal(sw_fwd_static(&fwd, conf.sw[s].statics[i].mac,
						       conf.sw[s].statics[i].port), 0);
	}
}

/* Hop counts by hand per kind: the switches between hosts @a and @b. */
typedef int (*hops_fn)(const struct topogen_params *p, int a, int b);

static int hops_one(const struct topogen_params *p, int a, int b)
{
	(void)p, (void)a, (void)b;
	return 1;
}

static int hops_pair(const struct topogen_params *p, int a, int b)
{
	return (uint32_t)a / p->hosts == (uint32_t)b / p->hosts ? 1 : 2;
}

static int hops_leaf_spine(const struct topogen_params *p, int a, int b)
{
	return (uint32_t)a / p->hosts_per_leaf == (uint32_t)b / p->hosts_per_leaf ? 1 : 3;
}

static int hops_fat_tree(const struct topogen_params *p, int a, int b)
{
	uint32_t half = p->k / 2, per_pod = half * half;
	if ((uint32_t)a / half == (uint32_t)b / half)
		return 1;
	return (uint32_t)a / per_pod == (uint32_t)b / per_pod ? 3 : 5;
}

/* two sites of leaf-spines: a leaf, a site (3), or leaf, spine1, the far spine1, leaf (4) */
static int hops_sites(const struct topogen_params *p, int a, int b)
{
	uint32_t site = p->leaves * p->hosts_per_leaf;
	if ((uint32_t)a / site != (uint32_t)b / site)
		return 4;
	return hops_leaf_spine(p, a, b);
}

static void check_kind(const struct topogen_params *p, struct counts want, hops_fn hops)
{
	struct topogen g;
	struct counts got, built;

	load(p, &g);
	got = count();   /* as the switch loaded it */
	built = (struct counts){ (int)g.nswitches, (int)g.nports, (int)g.nlinks, (int)g.nhosts };
	if (memcmp(&got, &want, sizeof(want)) || memcmp(&built, &want, sizeof(want)))
		fail_msg("%s: loaded %d %d %d %d, built %d %d %d %d, want %d %d %d %d (switches "
			 "ports links hosts)", topogen_kind_name(p->kind), got.switches, got.ports,
			 got.links, got.hosts, built.switches, built.ports, built.links, built.hosts,
			 want.switches, want.ports, want.links, want.hosts);
	assert_statics(&g);
	assert_flood_tree();
	for (int a = 0; a < want.hosts; a++)
		for (int b = 0; b < want.hosts; b++) {
			struct fct_hop h[16];
			if (a == b)
				continue;
			int n = walk(&g, a, b);
			assert_int_equal(n, hops(p, a, b));
			/* the generator's own path agrees: host link + one egress per switch */
			assert_int_equal(topogen_path(&g, (uint32_t)a, (uint32_t)b, h, 16),
					 (size_t)n + 1);
		}
	topogen_free(&g);
}

static void test_each_kind_loads_with_paths(void **state)
{
	struct topogen_params p;
	(void)state;

	topogen_defaults(&p, TOPOGEN_STAR);
	p.hosts = 16;
	check_kind(&p, (struct counts){ 1, 16, 0, 16 }, hops_one);
	topogen_defaults(&p, TOPOGEN_DUMBBELL);
	p.hosts = 5;
	check_kind(&p, (struct counts){ 2, 12, 1, 10 }, hops_pair);
	topogen_defaults(&p, TOPOGEN_TWO_SITE);
	p.hosts = 3;
	check_kind(&p, (struct counts){ 2, 8, 1, 6 }, hops_pair);
	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.leaves = 4, p.spines = 3, p.hosts_per_leaf = 5;
	check_kind(&p, (struct counts){ 7, 4 * 5 + 2 * 4 * 3, 12, 20 }, hops_leaf_spine);
	for (uint32_t k = 2; k <= 6; k += 2) {
		topogen_defaults(&p, TOPOGEN_FAT_TREE);
		p.k = k;
		/* 5k^2/4 switches of k ports, k^3/2 links, k^3/4 hosts */
		check_kind(&p, (struct counts){ (int)(5 * k * k / 4), (int)(5 * k * k * k / 4),
					       (int)(k * k * k / 2), (int)(k * k * k / 4) },
			   hops_fat_tree);
	}
}

/* Two sites, each a leaf-spine (3 leaves x 2 spines, 2 hosts a leaf), the WAN between the
 * first spines: IDCC's large-scale evaluation's shape. */
static void test_leaf_spine_sites(void **state)
{
	struct topogen_params p;
	struct topogen g;
	struct fct_hop h[8];
	(void)state;

	topogen_defaults(&p, TOPOGEN_TWO_SITE);
	p.site_leaf_spine = true;
	p.leaves = 3, p.spines = 2, p.hosts_per_leaf = 2;
	p.fabric_bps = 40 * QP_GBPS, p.wan_bps = 500 * QP_MBPS, p.wan_delay_ns = 50 * QP_NS_PER_MS;
	p.wan_buffer_bytes = 1 << 20;
	/* 10 switches, 12 hosts, 2 x 6 + 1 links, 12 + 2 x 13 ports */
	check_kind(&p, (struct counts){ 10, 38, 13, 12 }, hops_sites);
	load(&p, &g);
	assert_non_null(g.site);
	assert_int_equal(g.site[5], 0);
	assert_int_equal(g.site[6], 1);
	assert_string_equal(g.sw[3].name, "a_spine1");
	assert_string_equal(g.sw[8].name, "b_spine1");
	/* a_spine1: down1..3, then the WAN */
	assert_string_equal(conf.sw[3].ports[3].name, "wan");
	assert_int_equal(conf.sw[3].ports[3].q.rate_bps, 500 * QP_MBPS);
	assert_int_equal(conf.sw[3].ports[3].q.delay_ns, 50 * QP_NS_PER_MS);
	assert_int_equal(conf.sw[3].ports[0].q.rate_bps, 40 * QP_GBPS);
	/* host 0 to host 6: h0, up, wan, down, h6 = 5 links; RTT 2 x (4 us + 50 ms) + serialisations */
	assert_int_equal(topogen_path(&g, 0, 6, h, 8), 5);
	assert_int_equal(fct_base_rtt_ns(h, 5, 1000), 2 * (4000 + 50 * QP_NS_PER_MS) +
			 800 + 200 + 16000 + 200 + 800);
	topogen_free(&g);
	/* no hosts a site is fine (leaves give them); a leaf-spine with no spines is not */
	p.hosts = 0, p.spines = 0;
	struct topogen bad;
	char msg[256];
	assert_int_equal(topogen_build(&bad, &p, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "spines 0"));
}

/* The scale: 128 hosts as a fat-tree (k = 8) and as a leaf-spine. */
static void test_128_hosts(void **state)
{
	struct topogen_params p;
	(void)state;

	topogen_defaults(&p, TOPOGEN_FAT_TREE);
	p.k = 8;
	p.host_bps = 100 * QP_GBPS;
	check_kind(&p, (struct counts){ 80, 640, 256, 128 }, hops_fat_tree);
	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.leaves = 8, p.spines = 4, p.hosts_per_leaf = 16;
	check_kind(&p, (struct counts){ 12, 128 + 2 * 32, 32, 128 }, hops_leaf_spine);
}

/* The largest fabric by hosts the limits allow (512 hosts, 48 switches, a 0.9 MB file),
 * written to disk and read back by the switch's own file loader. */
static void test_largest_file(void **state)
{
	struct topogen_params p;
	struct topogen g;
	struct qp_strbuf text = { 0 };
	char dir[128], path[160];
	FILE *f;
	(void)state;

	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.leaves = 32, p.spines = 16, p.hosts_per_leaf = 16;
	assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), 0);
	assert_true(topogen_write(&g, &text));
	assert_true(text.len > 900000 && text.len <= TOPOGEN_MAX_FILE);
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "topogen"), 0);
	snprintf(path, sizeof(path), "%s/ls.topo", dir);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text.p, 1, text.len, f), text.len);
	assert_int_equal(fclose(f), 0);
	sw_conf_defaults(&conf);
	if (sw_topo_load(&conf, path, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(conf.nswitches, 48);
	assert_statics(&g);
	for (int a = 0; a < 512; a += 37)
		for (int b = 5; b < 512; b += 41)
			if (a != b)
				assert_int_equal(walk(&g, a, b), a / 16 == b / 16 ? 1 : 3);
	assert_int_equal(tmpdir_remove(dir), 0);
	qp_strbuf_free(&text);
	topogen_free(&g);
}

static void test_rates_and_settings(void **state)
{
	struct topogen_params p;
	struct topogen g;
	struct fct_hop h[8];
	(void)state;

	/* leaf-spine: 4 hosts x 10G over 2 spines at 2:1 -> 10G uplinks */
	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.hosts_per_leaf = 4;
	p.oversub = 2;
	p.settings = "ecn=20K,80K,0.2 int=direct";
	load(&p, &g);
	assert_int_equal(g.p.fabric_bps, 10 * QP_GBPS);
	assert_int_equal(conf.sw[0].ports[0].q.rate_bps, 10 * QP_GBPS);     /* h0 */
	assert_int_equal(conf.sw[0].ports[4].q.rate_bps, 10 * QP_GBPS);     /* up1 */
	assert_string_equal(conf.sw[0].ports[4].name, "up1");
	assert_int_equal(conf.sw[0].ports[0].q.red.kmax_bytes, 80 * 1024);
	assert_int_equal(conf.sw[2].ports[0].telem.int_mode, SW_INT_DIRECT);  /* spine1 */
	assert_int_equal(conf.sw[0].ports[0].q.delay_ns, 1000);
	assert_int_equal(conf.sw[0].ports[0].q.buffer_bytes, 1 << 20);
	/* host 0 to host 4 (the other leaf): 4 links of 10G, 1 us each */
	assert_int_equal(topogen_path(&g, 0, 4, h, 8), 4);
	assert_int_equal(fct_base_rtt_ns(h, 4, 1000), 4 * (2000 + 800));
	assert_int_equal(topogen_path(&g, 0, 0, h, 8), 0);
	assert_int_equal(topogen_path(&g, 0, 99, h, 8), 0);
	topogen_free(&g);
	/* non-blocking leaf-spine with an odd rate: 3 x 10G / 4 spines = 7.5G, exactly */
	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.hosts_per_leaf = 3, p.spines = 4;
	load(&p, &g);
	assert_int_equal(conf.sw[0].ports[3].q.rate_bps, 7500 * QP_MBPS);
	topogen_free(&g);
	/* two sites: the WAN link's rate, delay and buffer at both ends; hosts know their site */
	topogen_defaults(&p, TOPOGEN_TWO_SITE);
	p.wan_bps = 100 * QP_MBPS, p.wan_delay_ns = 50 * QP_NS_PER_MS, p.wan_buffer_bytes = 4 << 20;
	load(&p, &g);
	for (int s = 0; s < 2; s++) {
		const struct sw_port_conf *wan = &conf.sw[s].ports[2];
		assert_int_equal(wan->kind, SW_PORT_LINK);
		assert_int_equal(wan->q.rate_bps, 100 * QP_MBPS);
		assert_int_equal(wan->q.delay_ns, 50 * QP_NS_PER_MS);
		assert_int_equal(wan->q.buffer_bytes, 4 << 20);
		assert_int_equal(conf.sw[s].ports[0].q.delay_ns, 1000);
	}
	assert_non_null(g.site);
	assert_int_equal(g.site[0], 0);
	assert_int_equal(g.site[3], 1);
	/* base RTT across the WAN: 2 x (1us + 50ms + 1us) + 1000 B at 10G, 100M, 10G */
	assert_int_equal(topogen_path(&g, 0, 2, h, 8), 3);
	assert_int_equal(fct_base_rtt_ns(h, 3, 1000),
			 2 * (2000 + 50 * QP_NS_PER_MS) + 800 + 80000 + 800);
	/* hosts: IPv4 10.0.0.(i+1) and the soft backend's MAC for it */
	assert_int_equal(g.host[3].ip, 0x0a000004);
	assert_memory_equal(g.host[3].mac, ((uint8_t[]){ 2, 0, 10, 0, 0, 4 }), 6);
	topogen_free(&g);
}

/* Equal-cost choices are spread: a leaf's uplinks evenly, and every core carries routes. */
static void test_ecmp_spread(void **state)
{
	struct topogen_params p;
	struct topogen g;
	(void)state;

	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.leaves = 4, p.spines = 4, p.hosts_per_leaf = 16;
	assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), 0);
	for (uint32_t l = 0; l < 4; l++) {
		unsigned used[64] = { 0 };
		for (uint32_t h = 0; h < g.nhosts; h++)
			if (g.host[h].sw != l)
				used[g.route[l * g.nhosts + h]]++;
		/* 48 remote hosts over 4 uplinks (ports 16..19): 12 each */
		for (int port = 16; port < 20; port++)
			assert_int_equal(used[port], 12);
	}
	topogen_free(&g);
	topogen_defaults(&p, TOPOGEN_FAT_TREE);
	p.k = 8;
	assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), 0);
	unsigned via_core[16] = { 0 };
	for (uint32_t a = 0; a < g.nhosts; a += 3)
		for (uint32_t b = 0; b < g.nhosts; b += 5) {
			struct fct_hop h[8];
			if (a / 16 == b / 16)
				continue;   /* the same pod: no core */
			/* the core is the third switch: edge, agg, core; find it by walking */
			uint32_t s = g.host[a].sw;
			for (int i = 0; i < 2; i++)
				s = (uint32_t)g.sw[s].ports[g.route[s * g.nhosts + b]].peer_sw;
			assert_true(s >= 64 && s < 80);
			via_core[s - 64]++;
			assert_int_equal(topogen_path(&g, a, b, h, 8), 6);
		}
	for (int c = 0; c < 16; c++)
		assert_true(via_core[c] > 0);
	topogen_free(&g);
}

static void test_bad_parameters(void **state)
{
	struct topogen_params p;
	struct topogen g;
	(void)state;

#define REFUSED(kind, change, text)                                                      \
	do {                                                                             \
		topogen_defaults(&p, kind);                                              \
		change;                                                                  \
		assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), -EINVAL);      \
		assert_string_equal(err, text);                                          \
		assert_null(g.sw);                                                       \
	} while (0)
	REFUSED(TOPOGEN_STAR, p.hosts = 0, "star: hosts 0: accepted from 1");
	REFUSED(TOPOGEN_STAR, p.hosts = 65,
		"star: 65 ports on one switch (its hosts), accepted at most 64");
	REFUSED(TOPOGEN_DUMBBELL, p.hosts = 64,
		"dumbbell: 65 ports on one switch (its hosts and the link), accepted at most 64");
	REFUSED(TOPOGEN_LEAF_SPINE, p.spines = 0,
		"leaf-spine: leaves 2, spines 0, hosts-per-leaf 2: each accepted from 1");
	REFUSED(TOPOGEN_LEAF_SPINE, (p.hosts_per_leaf = 60, p.spines = 8),
		"leaf-spine: 68 ports on one switch (a leaf: hosts-per-leaf + spines; a spine: "
		"leaves), accepted at most 64");
	REFUSED(TOPOGEN_LEAF_SPINE, (p.leaves = 100, p.spines = 29, p.hosts_per_leaf = 1),
		"leaf-spine: 129 switches, accepted at most 128");
	REFUSED(TOPOGEN_LEAF_SPINE, (p.leaves = 65, p.spines = 1, p.hosts_per_leaf = 1),
		"leaf-spine: 65 ports on one switch (a leaf: hosts-per-leaf + spines; a spine: "
		"leaves), accepted at most 64");
	REFUSED(TOPOGEN_LEAF_SPINE, (p.leaves = 20, p.hosts_per_leaf = 30),
		"leaf-spine: 600 hosts, accepted at most 512 (a switch's static entries)");
	REFUSED(TOPOGEN_LEAF_SPINE, p.oversub = 0,
		"leaf-spine: oversub 0: accepted a ratio in (0, 1000] (1: non-blocking, 3: 3:1)");
	REFUSED(TOPOGEN_LEAF_SPINE, (p.oversub = 1000, p.host_bps = 1000),
		"leaf-spine: fabric-rate (hosts-per-leaf x rate / (spines x oversub)) 1 bits/s: "
		"accepted 1K..10T");
	/* a tiny ratio made the derived rate overflow its conversion (undefined under SAN=1) */
	REFUSED(TOPOGEN_LEAF_SPINE, p.oversub = 1e-300,
		"leaf-spine: fabric-rate (hosts-per-leaf x rate / (spines x oversub)) "
		"18446744073709551615 bits/s: accepted 1K..10T");
	REFUSED(TOPOGEN_FAT_TREE, p.k = 5,
		"fat-tree: k 5: accepted an even number in 2..8 (k = 10: a file of 1.1 MB, more "
		"than qpace-switch reads)");
	REFUSED(TOPOGEN_FAT_TREE, p.k = 10,
		"fat-tree: k 10: accepted an even number in 2..8 (k = 10: a file of 1.1 MB, more "
		"than qpace-switch reads)");
	/* 56 switches x 512 hosts of mac lines: more than the loader reads */
	REFUSED(TOPOGEN_LEAF_SPINE, (p.leaves = 32, p.spines = 24, p.hosts_per_leaf = 16),
		"leaf-spine: a file of 1079280 bytes (56 switches x 512 hosts of mac lines), "
		"accepted at most 1048576: qpace-switch reads no more; fewer hosts or switches");
	REFUSED(TOPOGEN_STAR, p.host_bps = 999, "star: rate 999 bits/s: accepted 1K..10T");
	REFUSED(TOPOGEN_DUMBBELL, p.fabric_bps = 20000 * QP_GBPS,
		"dumbbell: fabric-rate 20T bits/s: accepted 1K..10T");
	REFUSED(TOPOGEN_TWO_SITE, p.wan_delay_ns = 11 * QP_NS_PER_S,
		"two-site: wan-delay 11s: accepted 0..10s");
	REFUSED(TOPOGEN_TWO_SITE, p.wan_buffer_bytes = 100,
		"two-site: wan-buffer 100 bytes: accepted 1514..1G");
	REFUSED(TOPOGEN_STAR, p.buffer_bytes = (2ULL << 30),
		"star: buffer 2147483648 bytes: accepted 1514..1G");
	REFUSED(TOPOGEN_STAR, p.base_port = 65530,
		"star: base-port 65530 with 8 hosts: accepted 1..65520 (two UDP ports a host)");
	REFUSED(TOPOGEN_STAR, p.kind = (enum topogen_kind)9,
		"topology kind 9: accepted star, dumbbell, leaf-spine, fat-tree, two-site");
#undef REFUSED
	assert_int_equal(topogen_kind_find("fat-tree"), TOPOGEN_FAT_TREE);
	assert_int_equal(topogen_kind_find("ring"), -1);
}

static void test_deterministic_text(void **state)
{
	struct topogen_params p;
	struct topogen g;
	struct qp_strbuf a = { 0 }, b = { 0 };
	(void)state;

	topogen_defaults(&p, TOPOGEN_FAT_TREE);
	assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), 0);
	assert_true(topogen_write(&g, &a));
	topogen_free(&g);
	assert_int_equal(topogen_build(&g, &p, err, sizeof(err)), 0);
	assert_true(topogen_write(&g, &b));
	topogen_free(&g);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.p, b.p, a.len);
	assert_non_null(strstr(a.p, "# fat-tree: k = 4, 4 pods, 4 core switches, hosts at 10G"));
	assert_non_null(strstr(a.p, "switch edge0_0 id=1 rate=10G delay=1us buffer=1M\n"));
	assert_non_null(strstr(a.p, "port edge0_0 h0 udp local=127.0.0.1:7000 "
				    "remote=127.0.0.1:7001   # 10.0.0.1\n"));
	assert_non_null(strstr(a.p, "link edge0_0:up0 agg0_0:down0 rate=10G\n"));
	qp_strbuf_free(&a);
	qp_strbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_kind_loads_with_paths),
		cmocka_unit_test(test_128_hosts),
		cmocka_unit_test(test_leaf_spine_sites),
		cmocka_unit_test(test_largest_file),
		cmocka_unit_test(test_rates_and_settings),
		cmocka_unit_test(test_ecmp_spread),
		cmocka_unit_test(test_bad_parameters),
		cmocka_unit_test(test_deterministic_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
