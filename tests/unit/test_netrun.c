/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench run's library call (bench/netrun.h) on small generated fabrics: every flow
 * of a Poisson workload on a leaf-spine finishes, no faster than its ideal (so its
 * slowdown, floored at 1, is honest), the same seed gives the same flows and FCTs to the
 * nanosecond, the generated file run as --topo gives the run --gen gives, closed-loop
 * incast rounds start their gap after the round before, a flow that cannot finish is
 * stopped at the time limit and named, and bad files stop with FILE:LINE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "netrun.h"
#include "tmpdir.h"

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
	const char *p = tmpdir_file(dir, name, text);

	assert_non_null(p);
	return p;
}

static struct topogen_params leaf_spine(void)
{
	struct topogen_params p;

	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);   /* 2 x 2, 2 hosts a leaf, 10G, 1 us */
	p.hosts_per_leaf = 4;
	return p;
}

static struct topogen_params star(uint32_t hosts)
{
	struct topogen_params p;

	topogen_defaults(&p, TOPOGEN_STAR);     /* 10G, 1 us */
	p.hosts = hosts;
	return p;
}

static void conf(struct netrun_conf *c, const struct topogen_params *g, const char *wl)
{
	netrun_conf_defaults(c);
	c->gen = g;
	c->workload_file = wl;
	c->cdf_dirs[c->ncdf_dirs++] = "sim/cdf";
	c->progress = false;
}

static void test_poisson_leaf_spine(void **state)
{
	struct topogen_params g = leaf_spine();
	struct netrun_conf c;
	struct netrun_result r, r2;
	char err[400];
	(void)state;

	conf(&c, &g, write_file("p.wl", "# FB-Hadoop at 0.4 load, 3 ms\n"
				"poisson cdf=fb_hadoop load=0.4 duration=3ms\n"));
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_int_equal(r.hosts, 8);
	assert_int_equal(r.switches, 4);
	assert_true(r.nflows >= 50);        /* 8 hosts x 0.4 x 10G / (8 x 120 KB) x 3 ms ~ 100 */
	assert_true(r.all_finished);
	assert_int_equal(r.done, r.nflows);
	assert_int_equal(r.unfinished, 0);
	assert_non_null(strstr(r.end_reason, "flows finished"));
	size_t cross = 0;
	for (size_t k = 0; k < r.nflows; k++) {
		assert_true(r.flow[k].done);
		assert_true(r.fct[k].ideal_ns > 0);
		/* HPCC's ideal counts one MTU's serialisation per hop even for a one-packet
		 * flow (hence its floor at 1); without that term it is a bound no flow beats:
		 * the propagation both ways and the wire bytes at the bottleneck */
		assert_true(r.flow[k].fct_ns + 4 * 820 >= r.fct[k].ideal_ns);
		assert_true(fct_slowdown(r.flow[k].fct_ns, r.fct[k].ideal_ns) >= 1.0);
		cross += r.flow[k].src / 4 != r.flow[k].dst / 4;
	}
	assert_true(cross > 0 && cross < r.nflows);   /* both within a leaf and across */
	/* 4 links across the fabric: 2 x 4 x 1 us, an MTU's serialisation on the two host
	 * links at 10G and the two fabric links at 4 x 10G / 2 spines = 20G */
	assert_int_equal(r.base_rtt_ns, 8000 + 2 * 820 + 2 * 410);
	assert_true(r.bins.nbins > 0);
	assert_true(r.packet_hops > r.nflows);
	/* run twice: the same flows, the same FCTs */
	assert_int_equal(netrun_run(&c, &r2, err, sizeof(err)), 0);
	assert_int_equal(r2.nflows, r.nflows);
	for (size_t k = 0; k < r.nflows; k++)
		assert_int_equal(r2.flow[k].fct_ns, r.flow[k].fct_ns);
	assert_int_equal(r2.events, r.events);
	netrun_result_free(&r2);
	/* the generated file, loaded as a topology file, is the same network */
	{
		struct topogen t;
		struct qp_strbuf text = { 0 };
		assert_int_equal(topogen_build(&t, &g, err, sizeof(err)), 0);
		assert_true(topogen_write(&t, &text));
		char *s = strndup(text.p, text.len);
		c.topo_file = write_file("ls.topo", s);
		c.gen = NULL;
		free(s);
		qp_strbuf_free(&text);
		topogen_free(&t);
	}
	assert_int_equal(netrun_run(&c, &r2, err, sizeof(err)), 0);
	assert_int_equal(r2.nflows, r.nflows);
	assert_int_equal(r2.base_rtt_ns, r.base_rtt_ns);
	for (size_t k = 0; k < r.nflows; k++)
		assert_int_equal(r2.flow[k].fct_ns, r.flow[k].fct_ns);
	netrun_result_free(&r2);
	netrun_result_free(&r);
}

/* A closed-loop incast: each round starts gap=20us after the last flow of the one
 * before it finished. */
static void test_incast_rounds(void **state)
{
	struct topogen_params g = star(5);
	struct netrun_conf c;
	struct netrun_result r;
	char err[400];
	(void)state;

	conf(&c, &g, write_file("i.wl", "incast bytes=32K senders=1-4 receiver=0 rounds=3 "
				"gap=20us\n"));
	c.algo = "none+ia";
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_int_equal(r.nflows, 12);
	assert_true(r.all_finished);
	assert_true(r.credits);
	for (uint32_t round = 1; round < 3; round++) {
		qp_time_ns end = 0;
		for (size_t k = 0; k < r.nflows; k++)
			if (r.wl[k].round == round - 1 && r.flow[k].start_ns + r.flow[k].fct_ns > end)
				end = r.flow[k].start_ns + r.flow[k].fct_ns;
		for (size_t k = 0; k < r.nflows; k++)
			if (r.wl[k].round == round)
				assert_int_equal(r.flow[k].start_ns, end + 20 * QP_NS_PER_US);
	}
	/* four senders share the receiver's link: no flow at its ideal */
	for (size_t k = 0; k < r.nflows; k++)
		assert_true(r.flow[k].fct_ns > 2 * r.fct[k].ideal_ns);
	netrun_result_free(&r);
}

/* A flow that never ends is stopped at the limit, named; one that would start after it
 * is counted as not started. */
static void test_until(void **state)
{
	struct topogen_params g = star(3);
	struct netrun_conf c;
	struct netrun_result r;
	char err[400];
	(void)state;

	conf(&c, &g, write_file("l.wl", "long senders=1 receiver=0\n"
				"incast bytes=64K senders=2 receiver=0\n"
				"incast bytes=1K senders=2 receiver=0 start=8ms\n"));
	c.until_ns = 5 * QP_NS_PER_MS;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_false(r.all_finished);
	assert_int_equal(r.end, SIM_END_TIME);
	assert_int_equal(r.sim_ns, 5 * QP_NS_PER_MS);
	assert_int_equal(r.done, 1);
	assert_int_equal(r.unfinished, 2);
	assert_int_equal(r.not_started, 1);
	assert_non_null(strstr(r.end_reason, "stopped at --until 5ms of simulated time: 2 flows "
				   "had not finished, 1 of them not started (the first: flow 0, "
				   "host 1 -> 0, bytes=forever"));
	/* the long flow kept its link busy: most of 5 ms at 10G */
	double u = 0;
	for (size_t i = 0; i < r.ports; i++)
		if (!strcmp(r.links[i].name, "s1:h0"))
			u = fct_utilisation(r.links[i].tx_bytes, r.links[i].rate_bps, r.sim_ns);
	print_message("the receiver's link s1:h0 busy %.4f of 5 ms\n", u);
	assert_true(u > 0.8 && u <= 1.0);
	netrun_result_free(&r);
}

/* Two sites, an intra-DC and an inter-DC flow into one host: IDCC (no global T in its
 * source) registers each flow's own path's RTT, and both of its loops sample and rule
 * (the report's counters); HPCC registers the longest path's for both (its reference's
 * GLOBAL_T). The WAN link reports no INT. */
static void test_two_site_rtt_and_loops(void **state)
{
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result r;
	char err[400];
	(void)state;

	topogen_defaults(&g, TOPOGEN_TWO_SITE);      /* 2 hosts a site, 10G, 1 us */
	g.wan_bps = QP_GBPS;
	g.wan_delay_ns = QP_NS_PER_MS;
	conf(&c, &g, write_file("ts.wl", "long senders=0 receiver=1 bytes=20M\n"
				"long senders=2 receiver=1 bytes=20M\n"));
	c.algo = "idcc";
	c.until_ns = 100 * QP_NS_PER_MS;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_false(r.global_rtt);
	assert_true(r.flow[0].base_rtt_ns > 0 && r.flow[0].base_rtt_ns < 20 * QP_NS_PER_US);
	assert_true(r.flow[1].base_rtt_ns > 2 * QP_NS_PER_MS);
	assert_true(r.base_rtt_ns == r.flow[1].base_rtt_ns);
	/* int_samples, rtt_samples, steps, int_steps, rtt_steps, holds */
	for (int i = 0; i < 5; i++) {
		print_message("idcc %s: %llu\n", r.cc_ops->counters[i].name,
			      (unsigned long long)r.cc_counter[i]);
		assert_true(r.cc_counter[i] > 0);
	}
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);
	netrun_print(f, &r, true);
	fclose(f);
	assert_non_null(strstr(json, "\"flow_rtt\":\"own"));
	assert_non_null(strstr(json, "\"rtt_samples\":"));
	free(json);
	netrun_result_free(&r);

	c.algo = "hpcc";
	c.until_ns = 5 * QP_NS_PER_MS;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_true(r.global_rtt);
	assert_int_equal(r.flow[0].base_rtt_ns, 0);   /* the runner's: base_rtt_ns */
	netrun_result_free(&r);
}

static void test_bad_input(void **state)
{
	struct topogen_params g = leaf_spine();
	struct netrun_conf c;
	struct netrun_result r;
	char err[400];
	(void)state;

	conf(&c, &g, write_file("bad.wl", "# ok\npoisson cdf=websearch load=1.5 duration=1ms\n"));
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad.wl:2: load '1.5'"));
	conf(&c, &g, write_file("bad2.wl", "incast bytes=1K senders=1-9 receiver=0\n"));
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad2.wl:1:"));
	assert_non_null(strstr(err, "hosts 0..7"));
	conf(&c, &g, write_file("bad3.wl", "poisson cdf=nosuch load=0.5 duration=1ms\n"));
	assert_true(netrun_run(&c, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bad3.wl:1: cdf 'nosuch'"));
	conf(&c, &g, "/nonexistent/x.wl");
	assert_true(netrun_run(&c, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/x.wl"));
	/* an unknown algorithm */
	conf(&c, &g, write_file("ok.wl", "incast bytes=1K senders=1 receiver=0\n"));
	c.algo = "cubic";
	assert_true(netrun_run(&c, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cubic"));
	/* a generator spec, as --gen takes it */
	char buf[256];
	assert_int_equal(bench_topo_gen_parse("leaf-spine:leaves=3,spines=2,rate=25G,settings="
					      "ecn=20K,80K,0.2 int=direct", &g, buf, sizeof(buf),
					      err, sizeof(err)), 0);
	assert_int_equal(g.leaves, 3);
	assert_int_equal(g.host_bps, 25 * QP_GBPS);
	assert_string_equal(g.settings, "ecn=20K,80K,0.2 int=direct");
	assert_int_equal(bench_topo_gen_parse("leaf-spine:leaves=0", &g, buf, sizeof(buf), err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "leaves"));
	assert_int_equal(bench_topo_gen_parse("ring:n=3", &g, buf, sizeof(buf), err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "KIND 'ring'"));
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "netrun");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poisson_leaf_spine),
		cmocka_unit_test(test_incast_rounds),
		cmocka_unit_test(test_until),
		cmocka_unit_test(test_two_site_rtt_and_loops),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
