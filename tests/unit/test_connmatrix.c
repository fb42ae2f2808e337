/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* htsim's connection matrices (qpace/connmatrix.h): htsim's own incast file's shape reads
 * into its connections, times in picoseconds come out in nanoseconds, triggers and their
 * kinds and counts are kept and found by id, sizes of 0 mean a flow that never ends;
 * every malformed file is refused with FILE:LINE, the value and the accepted range; the
 * header's counts and the triggers' references are checked at the end; a file is told
 * from a workload file by its first word. And through qpace-bench run's library call:
 * a small matrix runs, its triggered flows starting only once the flows that trigger them
 * have ended (a chain, a barrier, a multishot). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/connmatrix.h"
#include "netrun.h"
#include "tmpdir.h"

static struct cm_matrix m;
static char err[600];
static char dir[64];

static void test_incast_shape(void **state)
{
	static const char text[] = "Nodes 8\nConnections 3\n"
				   "1->0 start 0 size 2000000\n"
				   "2->0 id 7 start 1500000 size 100 prio 3 msg\n"
				   "3->0 start 2500.5 size 0 msg 4\n";
	(void)state;

	assert_int_equal(cm_parse(&m, text, strlen(text), "i.cm", err, sizeof(err)), 0);
	assert_int_equal(m.nodes, 8);
	assert_int_equal(m.nconn, 3);
	assert_int_equal(m.conn[0].src, 1);
	assert_int_equal(m.conn[0].bytes, 2000000);
	assert_int_equal(m.conn[1].start_ns, 1500);       /* 1.5 us in picoseconds */
	assert_int_equal(m.conn[1].id, 7);
	assert_int_equal(m.conn[2].start_ns, 2);          /* the nanosecond below 2500.5 ps */
	assert_int_equal(m.conn[2].bytes, 0);             /* never ends */
	assert_int_equal(m.conn[2].line, 5);
	assert_true(cm_is_matrix(text, strlen(text)));
	assert_true(cm_is_matrix("# htsim\n\n  Nodes 2\n", 18));
	assert_false(cm_is_matrix("incast bytes=1M\n", 16));
	assert_false(cm_is_matrix("Nodesx 2\n", 9));
}

static void test_triggers(void **state)
{
	static const char text[] =
		"Nodes 4\nConnections 5\nTriggers 3\n"
		"0->1 id 1 start 0 size 1000 send_done_trigger 1\n"
		"1->2 id 2 trigger 1 size 1000 send_done_trigger 2\n"
		"2->3 id 3 start 0 size 1000 send_done_trigger 2 recv_done_trigger 3\n"
		"3->0 id 4 trigger 2 size 1000\n"
		"0->2 id 5 trigger 3 size 1000\n"
		"trigger id 3 multishot\ntrigger id 1 oneshot\ntrigger id 2 barrier count 2\n";
	const struct cm_trigger *t;
	(void)state;

	assert_int_equal(cm_parse(&m, text, strlen(text), "t.cm", err, sizeof(err)), 0);
	assert_int_equal(m.ntrig, 3);
	assert_non_null(t = cm_trigger_find(&m, 2));
	assert_int_equal(t->kind, CM_BARRIER);
	assert_int_equal(t->count, 2);
	assert_int_equal(t->line, 11);
	assert_int_equal(cm_trigger_find(&m, 3)->kind, CM_MULTISHOT);
	assert_null(cm_trigger_find(&m, 4));
	assert_int_equal(m.conn[1].trigger, 1);
	assert_int_equal(m.conn[2].recv_done, 3);
}

static void test_errors(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "Nodes 0\n", "b.cm:1: Nodes '0': accepted a host count in 1..1048576" },
		{ "Nodes 2000000\n", "b.cm:1: Nodes '2000000': accepted a host count" },
		{ "Nodes 4 5\n", "b.cm:1: Nodes '4': accepted" },
		{ "Nodes 4\nFailures 1\n", "b.cm:2: Failures '1': accepted 0 (link failures" },
		{ "0->1 start 0 size 1\n", "b.cm:1: a connection before the Nodes line" },
		{ "Nodes 4\nConnections 1\n0->4 start 0 size 1\n",
		  "b.cm:3: connection '0->4': hosts accepted 0..3 (Nodes 4 at line 1)" },
		{ "Nodes 4\nConnections 1\n2->2 start 0 size 1\n",
		  "b.cm:3: connection '2->2': a host to itself; accepted two different hosts" },
		{ "Nodes 4\nConnections 1\n0-1 start 0 size 1\n",
		  "b.cm:3: '0-1': accepted Nodes, Connections, Triggers, Failures, SRC->DST, trigger" },
		{ "Nodes 4\nConnections 1\nx->1 start 0 size 1\n",
		  "b.cm:3: connection 'x->1': hosts accepted 0..3" },
		{ "Nodes 4\nConnections 1\n0->1 start -5 size 1\n",
		  "b.cm:3: connection: start '-5': accepted picoseconds in 0..3600000000000000" },
		{ "Nodes 4\nConnections 1\n0->1 start 4e15 size 1\n",
		  "b.cm:3: connection: start '4e15': accepted picoseconds" },
		{ "Nodes 4\nConnections 1\n0->1 start 0 size 2000000000000\n",
		  "b.cm:3: connection: size '2000000000000': accepted bytes in 0..1099511627776" },
		{ "Nodes 4\nConnections 1\n0->1 start 0 size\n",
		  "b.cm:3: connection: size without a value: accepted bytes" },
		{ "Nodes 4\nConnections 1\n0->1 start 0\n", "b.cm:3: connection 0->1: no size" },
		{ "Nodes 4\nConnections 1\n0->1 size 5\n",
		  "b.cm:3: connection 0->1: neither a start time nor a trigger; accepted exactly one" },
		{ "Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 trigger 1 size 5\n"
		  "trigger id 1 oneshot\n", "b.cm:4: connection 0->1: both a start time and a "
		  "trigger" },
		{ "Nodes 4\nConnections 1\n0->1 start 0 size 5 colour red\n",
		  "b.cm:3: connection: unknown key 'colour' (accepted: start, size, id, prio, msg, "
		  "trigger, send_done_trigger, recv_done_trigger)" },
		{ "Nodes 4\nConnections 1\n0->1 start 0 size 5 size 6\n",
		  "b.cm:3: connection: size given twice" },
		{ "Nodes 4\nConnections 1\n0->1 id 0 start 0 size 5\n",
		  "b.cm:3: connection: id '0': accepted a flow id in 1..4294967295" },
		{ "Nodes 4\nConnections 2\n0->1 start 0 size 5\n",
		  "b.cm:2: Connections 2, but 1 connection lines follow" },
		{ "Nodes 4\nConnections 1\n0->1 start 0 size 5\nNodes 5\n",
		  "b.cm:4: Nodes after the first connection or trigger line" },
		{ "Nodes 4\nConnections 0\nfailure switch_type TOR\n",
		  "b.cm:3: failure: link failures are not modelled here" },
		{ "Nodes 4\nConnections 1\n0->1 trigger 9 size 5\n",
		  "b.cm:3: trigger 9: no trigger line declares it" },
		{ "Nodes 4\nConnections 2\nTriggers 1\n0->1 start 0 size 5 send_done_trigger 1\n"
		  "1->2 start 0 size 5 send_done_trigger 1\ntrigger id 1 oneshot\n",
		  "b.cm:5: send_done_trigger 1: a oneshot trigger activated a second time (first "
		  "at line 4)" },
		{ "Nodes 4\nConnections 0\nTriggers 2\ntrigger id 1 oneshot\ntrigger id 1 barrier "
		  "count 2\n", "b.cm:5: trigger id 1: declared twice (first at line 4)" },
		{ "Nodes 4\nConnections 0\nTriggers 1\ntrigger id 1 barrier\n",
		  "b.cm:4: trigger 1: count missing; accepted count N with barrier only" },
		{ "Nodes 4\nConnections 0\nTriggers 1\ntrigger id 1 oneshot count 3\n",
		  "b.cm:4: trigger 1: count given" },
		{ "Nodes 4\nConnections 0\nTriggers 1\ntrigger oneshot\n",
		  "b.cm:4: trigger: no id" },
		{ "Nodes 4\nConnections 0\nTriggers 1\ntrigger id 1 oneshot multishot\n",
		  "b.cm:4: trigger: a second kind 'multishot'" },
		{ "Nodes 4\nConnections 0\nTriggers 1\ntrigger id 1 twice\n",
		  "b.cm:4: trigger: unknown word 'twice'" },
		{ "Nodes 4\nConnections 0\nTriggers 2\ntrigger id 1 oneshot\n",
		  "b.cm:3: Triggers 2, but 1 trigger lines follow" },
		{ "# only a comment\n", "b.cm:1: no Nodes line" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = cm_parse(&m, bad[i].text, strlen(bad[i].text), "b.cm", err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want))
			fail_msg("case %zu: rc %d, got '%s', want '%s'", i, rc, err, bad[i].want);
		assert_null(m.conn);    /* nothing left allocated */
		assert_null(m.trig);
	}
}

/* 0 -> 1 ends; it fires oneshot 1, which starts 1 -> 2 and 2 -> 3; both end and the
 * barrier (count 2) starts 3 -> 0; 0 -> 2 and 0 -> 3 each activate multishot 3 once,
 * starting 3 -> 1 and then 1 -> 0 in file order. */
static void test_run(void **state)
{
	static const char text[] =
		"Nodes 4\nConnections 8\nTriggers 3\n"
		"0->1 id 1 start 0 size 20000 send_done_trigger 1\n"
		"1->2 id 2 trigger 1 size 20000 send_done_trigger 2\n"
		"2->3 id 3 trigger 1 size 20000 send_done_trigger 2\n"
		"3->0 id 4 trigger 2 size 20000\n"
		"0->2 id 5 start 1000000 size 20000 send_done_trigger 3\n"
		"0->3 id 6 start 2000000 size 20000 send_done_trigger 3\n"
		"3->1 id 7 trigger 3 size 20000\n"
		"1->0 id 8 trigger 3 size 20000\n"
		"trigger id 1 oneshot\ntrigger id 2 barrier count 2\ntrigger id 3 multishot\n";
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result r;
	const char *wl = tmpdir_file(dir, "t.cm", text);
	qp_time_ns end[9] = { 0 }, start[9] = { 0 };
	(void)state;

	topogen_defaults(&g, TOPOGEN_STAR);
	g.hosts = 4;
	netrun_conf_defaults(&c);
	c.gen = &g;
	c.workload_file = wl;
	c.algo = "none";
	c.progress = false;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_true(r.all_finished);
	assert_int_equal(r.nflows, 8);
	for (size_t k = 0; k < r.nflows; k++) {   /* the list is sorted: by the wl's id */
		uint32_t id = r.wl[k].id + 1;
		start[id] = r.flow[k].start_ns;
		end[id] = r.flow[k].start_ns + r.flow[k].fct_ns;
	}
	assert_int_equal(start[1], 0);
	assert_int_equal(start[2], end[1]);
	assert_int_equal(start[3], end[1]);
	assert_int_equal(start[4], end[2] > end[3] ? end[2] : end[3]);
	assert_int_equal(start[5], 1000);
	assert_int_equal(start[6], 2000);
	assert_int_equal(start[7], end[5] < end[6] ? end[5] : end[6]);
	assert_int_equal(start[8], end[5] > end[6] ? end[5] : end[6]);
	netrun_result_free(&r);
	/* Nodes past the topology's hosts */
	wl = tmpdir_file(dir, "big.cm", "Nodes 5\nConnections 1\n0->4 start 0 size 1\n");
	c.workload_file = wl;
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "big.cm:1: Nodes 5: the topology has 4 hosts; accepted 1..4"));
}

static int teardown(void **state)
{
	(void)state;
	cm_free(&m);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast_shape),
		cmocka_unit_test(test_triggers),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_run),
	};
	int rc;

	if (tmpdir_make(dir, sizeof(dir), "connmatrix"))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, teardown);
	tmpdir_remove(dir);
	return rc;
}
