/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The engine's flow runner on a topology file: switchsim's own leaf-spine example (two
 * leaves, two spines, links between switches in process) carries flows between leaves and
 * within one; each flow's completion time is at least its bytes' serialisation plus its
 * path; an unloaded flow repeated later takes exactly as long; QPs are given back (more
 * flows one after the other than a host has QP numbers); bad flow lists are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "qpace/sim.h"

#define FRAME 1082u     /* a 1024-byte payload's frame */

static struct sim *leaf_spine(void)
{
	char *argv[] = { "qpace-switch", "-c", "switchsim/examples/leaf-spine.topo",
			 "--int", "off", "--early", "off", "--quiet", NULL };
	char err[300];
	struct sw_conf *sw = sim_sw_conf_args(8, argv, err, sizeof(err));
	struct sim_host_conf hc[4];
	struct sim *s;

	assert_non_null(sw);
	for (int i = 0; i < 4; i++)     /* h0 h1 on leaf1 (switch 0), h2 h3 on leaf2 */
		hc[i] = (struct sim_host_conf){ .ip = 0x0a000001u + (uint32_t)i, .sw = i / 2,
						.port = i % 2, .link_delay_ns = SIM_PORT_DELAY,
						.cc = "none" };
	struct sim_conf c = { .sw = sw, .hosts = hc, .nhosts = 4, .seed = 3 };
	assert_int_equal(sim_create(&c, &s, err, sizeof(err)), 0);
	sim_sw_conf_free(sw);
	return s;
}

struct done_log {
	size_t n;
	struct sim *s;
	size_t want;
};

static void on_done(void *arg, const struct sim_flow *f, qp_time_ns now)
{
	struct done_log *d = arg;
	(void)f, (void)now;
	if (++d->n == d->want)
		sim_stop(d->s);
}

static void run_flows(struct sim *s, struct sim_flow *f, size_t n)
{
	struct done_log d = { .s = s, .want = n };
	struct sim_flow_conf c = { .done = on_done, .arg = &d, .seed = 1 };
	struct sim_flows *fl;
	char err[300];

	assert_int_equal(sim_flows_start(s, f, n, &c, &fl, err, sizeof(err)), 0);
	assert_int_equal(sim_run(s, SIM_START_NS + 10 * QP_NS_PER_S, QP_TIME_NEVER),
			 SIM_END_STOPPED);
	assert_int_equal(sim_flows_finished(fl), n);
	sim_flows_free(fl);
}

static void test_leaf_spine(void **state)
{
	const uint64_t bytes = 64 * 1024;
	/* h0 -> h2 crosses leaf1, spine1, leaf2; h0 -> h1 stays on leaf1. A flow's first
	 * packets wait for ARP unless its peer already asked for the sender (and was
	 * learned): f0, f1 and f3 resolve, f2, f4 and f5 do not. */
	struct sim_flow f[] = {
		{ .src = 0, .dst = 2, .bytes = bytes, .start_ns = 0 },
		{ .src = 1, .dst = 3, .bytes = bytes, .start_ns = 10 * QP_NS_PER_MS },
		{ .src = 2, .dst = 0, .bytes = bytes, .start_ns = 20 * QP_NS_PER_MS },
		{ .src = 0, .dst = 1, .bytes = bytes, .start_ns = 30 * QP_NS_PER_MS },
		{ .src = 1, .dst = 3, .bytes = bytes, .start_ns = 50 * QP_NS_PER_MS },
		{ .src = 1, .dst = 0, .bytes = bytes, .start_ns = 60 * QP_NS_PER_MS },
	};
	struct sim *s = leaf_spine();
	struct sim_stats st;
	(void)state;

	run_flows(s, f, 6);
	for (int i = 0; i < 6; i++) {
		assert_true(f[i].done);
		assert_int_equal(f[i].retransmits, 0);
		/* 64 packets at 1 Gb/s, pipelined, and at least the path's delays (2 us a
		 * link) once each way */
		assert_true(f[i].fct_ns >= 64 * FRAME * 8);
	}
	/* crossing the fabric: 4 links each way of 2 us, the 10 Gb/s links' serialisation */
	assert_true(f[0].fct_ns >= 64 * FRAME * 8 + 2 * 4 * 2000);
	assert_true(f[0].fct_ns < 64 * FRAME * 8 * 11 / 10 + 200 * QP_NS_PER_US);
	/* unloaded, resolved, across the fabric: the same time to the nanosecond whichever
	 * pair of hosts; the ARP exchange adds its round trip */
	assert_int_equal(f[4].fct_ns, f[2].fct_ns);
	assert_int_equal(f[0].fct_ns, f[1].fct_ns);
	assert_true(f[1].fct_ns > f[4].fct_ns + 2 * 4 * 2000);
	/* within one leaf: two links each way instead of four (2 x 2 x 2 us less, and no
	 * 10 Gb/s hops) */
	assert_true(f[5].fct_ns + 2 * 2 * 2000 <= f[2].fct_ns);
	sim_stats(s, &st);
	assert_true(st.packet_hops > st.host_frames * 2);   /* switch-to-switch hops too */
	sim_destroy(s);
}

/* More flows one after the other between two hosts than a host has QP numbers (1024):
 * every flow's QPs are given back when it ends. */
static void test_qps_given_back(void **state)
{
	enum { N = 1100 };
	struct sim_flow *f = calloc(N, sizeof(*f));
	struct sim *s = leaf_spine();
	(void)state;

	for (size_t k = 0; k < N; k++)
		f[k] = (struct sim_flow){ .src = 0, .dst = 1, .bytes = 2048,
					  .start_ns = k * 100 * QP_NS_PER_US };
	run_flows(s, f, N);
	for (size_t k = 0; k < N; k++)
		assert_true(f[k].done);
	sim_destroy(s);
	free(f);
}

static void test_bad_flows(void **state)
{
	struct sim *s = leaf_spine();
	struct sim_flow_conf c = { 0 };
	struct sim_flows *fl;
	char err[300];
	struct sim_flow f[2] = { { .src = 0, .dst = 4, .bytes = 1 } };
	(void)state;

	assert_int_equal(sim_flows_start(s, f, 1, &c, &fl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flow 0: 0 -> 4, 1 bytes: hosts 0..3"));
	f[0] = (struct sim_flow){ .src = 0, .dst = 1, .bytes = 1, .start_ns = 5 };
	f[1] = (struct sim_flow){ .src = 1, .dst = 0, .bytes = 1, .start_ns = 4 };
	assert_int_equal(sim_flows_start(s, f, 2, &c, &fl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flow 1 starts before flow 0"));
	/* a topology's text: its errors are FILE:LINE */
	assert_null(sim_sw_conf_text("switch a\nport a p0 udp\n", "t.topo", err, sizeof(err)));
	assert_non_null(strstr(err, "t.topo:2:"));
	sim_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_spine),
		cmocka_unit_test(test_qps_given_back),
		cmocka_unit_test(test_bad_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
