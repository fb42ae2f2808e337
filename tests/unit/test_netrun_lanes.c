/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two lanes (sim_priv.h, qpace-bench run --lanes 2): the hosts in one lane, the switches
 * in the other, meeting every lookahead. The same run on one thread and on two gives the
 * same flows, FCTs, events and hops to the nanosecond; against one lane (another order of
 * the same model's events) every flow still finishes and the figures agree within stated
 * margins; PAUSE frames cross between the lanes and the hosts obey them (lossless: no
 * drop on a finite buffer); a link with no delay, which leaves no lookahead, is refused
 * with its name. And the pools: a buffer let go by the other lane goes back to its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <cmocka.h>

#include "netrun.h"
#include "pool.h"
#include "tmpdir.h"

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
	const char *p = tmpdir_file(dir, name, text);

	assert_non_null(p);
	return p;
}

static void conf(struct netrun_conf *c, const struct topogen_params *g, const char *wl,
		 unsigned lanes, unsigned threads)
{
	netrun_conf_defaults(c);
	c->gen = g;
	c->workload_file = wl;
	c->cdf_dirs[c->ncdf_dirs++] = "sim/cdf";
	c->progress = false;
	c->lanes = lanes;
	c->threads = threads;
}

static double mean_fct(const struct netrun_result *r)
{
	double sum = 0;

	for (size_t k = 0; k < r->nflows; k++)
		sum += (double)r->flow[k].fct_ns;
	return sum / (double)r->nflows;
}

static void same_run(const struct netrun_result *a, const struct netrun_result *b)
{
	assert_int_equal(a->nflows, b->nflows);
	for (size_t k = 0; k < a->nflows; k++) {
		assert_int_equal(a->flow[k].fct_ns, b->flow[k].fct_ns);
		assert_int_equal(a->flow[k].retransmits, b->flow[k].retransmits);
	}
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->packet_hops, b->packet_hops);
	assert_int_equal(a->sim_ns, b->sim_ns);
	assert_int_equal(a->max_queue_bytes, b->max_queue_bytes);
	assert_int_equal(a->drops, b->drops);
}

/* FB-Hadoop at 0.5 on a 2 x 2 leaf-spine of 8 hosts at 10G, HPCC: one lane, two lanes on
 * one thread, two lanes on two threads. */
static void test_poisson(void **state)
{
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result one, t1, t2;
	char err[400];
	const char *wl = write_file("p.wl", "poisson cdf=fb_hadoop load=0.5 duration=3ms\n");
	(void)state;

	topogen_defaults(&g, TOPOGEN_LEAF_SPINE);   /* 2 x 2, 10G, 1 us */
	g.hosts_per_leaf = 4;
	conf(&c, &g, wl, 1, 1);
	c.algo = "hpcc";
	assert_int_equal(netrun_run(&c, &one, err, sizeof(err)), 0);
	conf(&c, &g, wl, 2, 1);
	c.algo = "hpcc";
	assert_int_equal(netrun_run(&c, &t1, err, sizeof(err)), 0);
	conf(&c, &g, wl, 2, 2);
	c.algo = "hpcc";
	assert_int_equal(netrun_run(&c, &t2, err, sizeof(err)), 0);
	assert_true(one.all_finished && t1.all_finished && t2.all_finished);
	assert_true(one.nflows >= 50);
	/* one thread or two: the same run */
	same_run(&t1, &t2);
	/* one lane or two: the same flows, each finished; the frames each sends are the
	 * model's (the same bytes within 1%); the mean FCT within 5%. Not the same to the
	 * nanosecond: frames reaching a host at the same nanosecond as one of its own
	 * events come in another order. */
	double m1 = mean_fct(&one), m2 = mean_fct(&t2);
	double hops = (double)t2.packet_hops / (double)one.packet_hops;
	print_message("mean FCT one lane %.0f ns, two %.0f ns; packet-hops %" PRIu64 " / %"
		      PRIu64 "; events %" PRIu64 " / %" PRIu64 "\n", m1, m2, one.packet_hops,
		      t2.packet_hops, one.events, t2.events);
	assert_int_equal(one.nflows, t2.nflows);
	assert_true(fabs(m2 / m1 - 1) < 0.05);
	assert_true(fabs(hops - 1) < 0.01);
	for (size_t k = 0; k < one.nflows; k++)
		assert_true(t2.flow[k].done);
	assert_int_equal(t2.lanes, 2);
	netrun_result_free(&one);
	netrun_result_free(&t1);
	netrun_result_free(&t2);
}

/* 8 -> 1 at 10G through one lossless class: the switch pauses the senders, frames that
 * cross between the lanes (the PAUSEs to the hosts, the hosts' frames to the switch), and
 * nothing is dropped on the receiver port's finite buffer (which drops without PFC);
 * one thread or two the same. */
static void test_pfc(void **state)
{
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result t1, t2;
	char err[400];
	const char *wl = write_file("i.wl", "incast bytes=256K senders=1-8 receiver=0\n");
	(void)state;

	topogen_defaults(&g, TOPOGEN_STAR);
	g.hosts = 9;
	for (unsigned th = 1; th <= 2; th++) {
		conf(&c, &g, wl, 2, th);
		c.algo = "none";
		c.pfc = "xoff=32K,headroom=auto,class=0,lossless";
		assert_int_equal(netrun_run(&c, th == 1 ? &t1 : &t2, err, sizeof(err)), 0);
	}
	assert_true(t1.all_finished);
	assert_int_equal(t1.drops, 0);
	uint64_t pauses = 0;
	for (size_t i = 0; i < t1.ports; i++)
		pauses += t1.pfc[i].pauses_sent;
	print_message("two lanes, lossless: %" PRIu64 " PAUSE frames sent, no drop\n", pauses);
	assert_true(pauses > 0);
	same_run(&t1, &t2);
	netrun_result_free(&t1);
	netrun_result_free(&t2);
	/* without PFC the same incast overflows that buffer: the check above can fail */
	conf(&c, &g, wl, 2, 2);
	c.algo = "none";
	assert_int_equal(netrun_run(&c, &t1, err, sizeof(err)), 0);
	print_message("two lanes, no PFC: %" PRIu64 " drops\n", t1.drops);
	assert_true(t1.drops > 0);
	netrun_result_free(&t1);
}

/* Links without delay leave the lanes no lookahead: refused, the port named. */
static void test_no_lookahead(void **state)
{
	struct topogen_params g;
	struct netrun_conf c;
	struct netrun_result r;
	char err[400];
	(void)state;

	topogen_defaults(&g, TOPOGEN_STAR);
	g.hosts = 3;
	g.delay_ns = 0;
	conf(&c, &g, write_file("z.wl", "incast bytes=8K senders=1-2 receiver=0\n"), 2, 2);
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has no delay"));
	assert_non_null(strstr(err, "host 0's link"));
	/* one lane runs it */
	conf(&c, &g, write_file("z.wl", "incast bytes=8K senders=1-2 receiver=0\n"), 1, 1);
	assert_int_equal(netrun_run(&c, &r, err, sizeof(err)), 0);
	assert_true(r.all_finished);
	netrun_result_free(&r);
}

/* A buffer of pool A let go in lane B waits on B's return list, then goes back to A. */
static void test_pool_return(void **state)
{
	struct sim_pool a = { .id = 0 }, b = { .id = 1 };
	(void)state;

	struct sim_pkt *k = sim_pool_get(&a, 100), *k2 = sim_pool_get(&b, 100);
	assert_non_null(k);
	assert_non_null(k2);
	uint64_t bytes = a.bytes;
	sim_pool_put(&b, k);
	assert_int_equal(b.nret, 1);
	assert_int_equal(a.live, 1);
	assert_null(a.free[k->cls]);
	sim_pool_return(&b, &a);
	assert_int_equal(b.nret, 0);
	assert_int_equal(a.live, 0);
	assert_ptr_equal(sim_pool_get(&a, 90), k);   /* the same class, reused */
	assert_int_equal(a.bytes, bytes);
	sim_pool_put(&a, k);
	sim_pool_put(&b, k2);                        /* its own: straight back */
	assert_int_equal(b.nret, 0);
	assert_int_equal(b.live, 0);
	sim_pool_fini(&a);
	sim_pool_fini(&b);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "lanes");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poisson),
		cmocka_unit_test(test_pfc),
		cmocka_unit_test(test_no_lookahead),
		cmocka_unit_test(test_pool_return),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
