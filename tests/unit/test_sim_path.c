/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The longest base RTT of a fabric (sim_sw_conf_max_rtt) is what walking every ordered pair
 * of hosts with sim_sw_conf_path gives: on generated fabrics (routes computed by the
 * loader), on two sites whose WAN delay makes one pair the longest, and on hand-written
 * files with mac lines where some pairs have no path (a switch without an entry floods, a
 * loop of entries) and where the hop limit cuts pairs off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/sim.h"
#include "qpace/topogen.h"

static qp_time_ns brute(const struct sw_conf *c, const struct sim_host_conf *h, size_t n,
			size_t max_hops)
{
	struct fct_hop hops[32];
	qp_time_ns best = 0;

	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++) {
			size_t k = a == b ? 0 : sim_sw_conf_path(c, &h[a], &h[b], hops, 32);
			if (k && k <= max_hops && fct_base_rtt_ns(hops, k, 1024) > best)
				best = fct_base_rtt_ns(hops, k, 1024);
		}
	return best;
}

static void check_text(const char *text, size_t max_hops, qp_time_ns want)
{
	char err[400];
	struct sw_conf *c = sim_sw_conf_text(text, "t.topo", err, sizeof(err));
	struct sim_host_conf h[64];
	size_t n;
	qp_time_ns got, bf;

	if (!c)
		fail_msg("%s", err);
	n = sim_sw_conf_hosts(c, h, 64);
	got = sim_sw_conf_max_rtt(c, h, n, 1024, max_hops);
	bf = brute(c, h, n, max_hops);
	print_message("      %zu hosts: %llu ns (pairs walked: %llu ns)\n", n,
		      (unsigned long long)got, (unsigned long long)bf);
	assert_int_equal(got, bf);
	if (want)
		assert_int_equal(got, want);
	sim_sw_conf_free(c);
}

static void check_gen(const struct topogen_params *p)
{
	struct topogen g;
	struct qp_strbuf text = { 0 };
	char err[400];

	assert_int_equal(topogen_build(&g, p, err, sizeof(err)), 0);
	assert_true(topogen_write(&g, &text));
	check_text(text.p, 16, 0);
	qp_strbuf_free(&text);
	topogen_free(&g);
}

static void test_generated(void **state)
{
	struct topogen_params p;
	(void)state;

	topogen_defaults(&p, TOPOGEN_FAT_TREE);
	check_gen(&p);
	topogen_defaults(&p, TOPOGEN_LEAF_SPINE);
	p.leaves = 3, p.spines = 2, p.hosts_per_leaf = 3, p.oversub = 3;
	check_gen(&p);
	topogen_defaults(&p, TOPOGEN_TWO_SITE);
	p.site_leaf_spine = true;
	p.wan_delay_ns = 7 * QP_NS_PER_MS;
	check_gen(&p);
	topogen_defaults(&p, TOPOGEN_DUMBBELL);
	p.fabric_bps = QP_GBPS;
	check_gen(&p);
}

/* a - b - c in a line, one host each and one more on c; mac lines route a's and b's host
 * only partly: c has no entry for the host on a (its frames flood: no path), b and c send
 * c2's frames to each other (a loop) */
static void test_mac_lines(void **state)
{
	static const char text[] =
		"switch a rate=10G delay=1us\nswitch b rate=10G delay=2us\n"
		"switch c rate=1G delay=5us\n"
		"port a h0 udp local=127.0.0.1:7000\nport b h1 udp local=127.0.0.1:7002\n"
		"port c h2 udp local=127.0.0.1:7004\nport c h3 udp local=127.0.0.1:7006\n"
		"link a:r b:l\nlink b:r c:l\n"
		"mac a 02:00:0a:00:00:02 r\nmac b 02:00:0a:00:00:02 h1\n"
		"mac a 02:00:0a:00:00:03 r\nmac b 02:00:0a:00:00:03 r\nmac c 02:00:0a:00:00:03 h2\n"
		"mac b 02:00:0a:00:00:01 l\nmac a 02:00:0a:00:00:01 h0\n"
		"mac c 02:00:0a:00:00:02 l\n"
		"mac b 02:00:0a:00:00:04 r\nmac c 02:00:0a:00:00:04 l\nmac a 02:00:0a:00:00:04 r\n";
	(void)state;

	/* longest: h2 -> h1, two hops of c (1G, 5 us: 2 x 5 us + 1024 B at 1G each) and b's
	 * port to h1 (10G, 2 us) */
	check_text(text, 16, 2 * (2 * 5000 + 8192) + 2 * 2000 + 820);
	check_text(text, 2, 0);   /* only the pairs on one switch */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_mac_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
