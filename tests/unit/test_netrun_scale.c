/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Scale: a fat-tree of k = 16 (1,024 hosts, 320 switches, 5,120 ports) loads from its
 * generated file (routes computed by the loader, no mac lines) and runs flows across its
 * pods to their end, each on a shortest path (5 switches between pods); its memory
 * estimate is stated before it runs, and a limit below it refuses the run before it
 * starts, naming the estimate, what it is made of and the limit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "netrun.h"
#include "tmpdir.h"

static char dir[64];

static void conf(struct netrun_conf *c, struct topogen_params *g, const char *wl)
{
	topogen_defaults(g, TOPOGEN_FAT_TREE);
	g->k = 16;
	g->host_bps = 100 * QP_GBPS;
	netrun_conf_defaults(c);
	c->gen = g;
	c->workload_file = wl;
	c->algo = "hpcc";
	c->icrc_skip = true;
	c->progress = false;
}

static void test_k16_runs(void **state)
{
	/* 16 flows from pod 0 to pod 15 and back, 64 KB each (hosts 64 a pod) */
	const char *wl = tmpdir_file(dir, "x.cm", "Nodes 1024\nConnections 16\n"
				     "0->1023 start 0 size 65536\n1->1000 start 0 size 65536\n"
				     "2->990 start 0 size 65536\n3->980 start 0 size 65536\n"
				     "4->970 start 0 size 65536\n5->960 start 0 size 65536\n"
				     "6->512 start 0 size 65536\n7->700 start 0 size 65536\n"
				     "1023->0 start 0 size 65536\n1000->1 start 0 size 65536\n"
				     "990->2 start 0 size 65536\n980->3 start 0 size 65536\n"
				     "970->4 start 0 size 65536\n960->5 start 0 size 65536\n"
				     "512->6 start 0 size 65536\n700->7 start 0 size 65536\n");
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result r;
	char err[800];
	(void)state;

	conf(&c, &g, wl);
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_int_equal(r.hosts, 1024);
	assert_int_equal(r.switches, 320);
	assert_int_equal(r.ports, 5120);
	assert_true(r.all_finished);
	assert_int_equal(r.done, 16);
	/* base RTT of the longest path: 6 links of 100G, 1 us each, 1024 B a hop */
	assert_int_equal(r.base_rtt_ns, 6 * (2000 + 82));
	for (size_t k = 0; k < r.nflows; k++)
		assert_true(r.fct[k].ideal_ns > 0 && r.flow[k].fct_ns >= r.fct[k].ideal_ns - 6 * 82);
	print_message("      k = 16: %zu flows done in %.3f ms simulated, %llu packet-hops, "
		      "estimate %.0f MB, peak RSS %.0f MB\n", r.done, (double)r.sim_ns / 1e6,
		      (unsigned long long)r.packet_hops, (double)r.mem_estimate / (1 << 20),
		      (double)r.peak_rss_bytes / (1 << 20));
	assert_true(r.mem_estimate > (300u << 20) && r.mem_estimate < (600u << 20));
	netrun_result_free(&r);
}

static void test_refused_above_the_limit(void **state)
{
	const char *wl = tmpdir_file(dir, "y.wl", "incast bytes=1000 senders=1 receiver=0\n");
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result r;
	char err[800];
	(void)state;

	conf(&c, &g, wl);
	c.mem_limit = 64 << 20;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), -ENOMEM);
	print_message("      %s\n", err);
	assert_non_null(strstr(err, "the run is estimated at "));
	assert_non_null(strstr(err, "1024 hosts x 270 KB, 5120 switch ports x 17 KB"));
	assert_non_null(strstr(err, "the limit is 64 MB (--mem-limit)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k16_runs),
		cmocka_unit_test(test_refused_above_the_limit),
	};
	int rc;

	if (tmpdir_make(dir, sizeof(dir), "netrun_scale"))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	tmpdir_remove(dir);
	return rc;
}
