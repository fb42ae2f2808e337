/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* No work while nothing happens (docs/performance.md, "Events"): the engine runs an event
 * per frame per hop and per deadline, none while a host waits. A 15 -> 1 incast on a
 * k = 4 fat-tree at 100 Gb/s without congestion control, once lossy (drops, the senders'
 * send queues full and waiting out retransmission timeouts of 67 ms, the run bound by
 * them) and once lossless (PFC: upstreams paused for most of the run). Both must finish
 * in at most 3 events per packet-hop: a host that polled while paused or in a timeout (a
 * paced piece offered every ~87 ns, a turn each) ran 9.6 events a hop on the first and
 * 2.3 on the second; a fabric woken at every departure of a switch with a paused ingress
 * adds one event a frame at most. */
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

static void incast(const char *pfc, struct netrun_result *r)
{
	struct topogen_params g;
	struct netrun_conf c;
	char err[400];
	const char *wl = tmpdir_file(dir, "incast.wl", "incast bytes=500000 receiver=5\n");

	assert_non_null(wl);
	topogen_defaults(&g, TOPOGEN_FAT_TREE);
	g.k = 4;
	g.host_bps = 100 * QP_GBPS;
	netrun_conf_defaults(&c);
	c.gen = &g;
	c.workload_file = wl;
	c.algo = "none";
	c.pfc = pfc;
	c.icrc_skip = true;
	c.progress = false;
	assert_int_equal(netrun_run(&c, r, err, sizeof(err)), 0);
	assert_true(r->all_finished);
	assert_int_equal(r->done, 15);
	print_message("      %s: %llu events, %llu packet-hops (%.2f a hop), %llu timeouts, "
		      "%.3f ms\n", pfc ? "PFC" : "lossy", (unsigned long long)r->events,
		      (unsigned long long)r->packet_hops,
		      (double)r->events / (double)r->packet_hops,
		      (unsigned long long)r->timeouts, (double)r->sim_ns / 1e6);
}

static void test_timeout_bound(void **state)
{
	struct netrun_result r;
	(void)state;

	incast(NULL, &r);
	assert_true(r.timeouts > 0);           /* the run waits out timeouts */
	assert_true(r.sim_ns > 60 * QP_NS_PER_MS);
	assert_true(r.events <= 3 * r.packet_hops);
	netrun_result_free(&r);
}

static void test_paused(void **state)
{
	struct netrun_result r;
	uint64_t paused = 0;
	(void)state;

	incast("xoff=32K,headroom=auto,class=0,lossless", &r);
	assert_int_equal(r.drops, 0);
	for (size_t i = 0; i < r.ports; i++)
		paused += r.pfc[i].pauses_sent;
	assert_true(paused > 100);             /* upstreams paused, again and again */
	assert_true(r.events <= 3 * r.packet_hops);
	netrun_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_bound),
		cmocka_unit_test(test_paused),
	};

	if (tmpdir_make(dir, sizeof(dir), "netrun_events"))
		return 1;
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tmpdir_remove(dir);
	return rc;
}
