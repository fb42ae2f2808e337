/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The virtual-time engine (qpace/sim.h) on small stars: a flow's completion time against
 * the serialisation and delays the engine models, the NIC's serialisation seen in the
 * switch's queue, packet-hop accounting, determinism, DCQCN's loop through RED and the
 * receivers' CNPs, the real-clock guard, bad topologies.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/sim.h"
#include "qpace/qp.h"
#include "qpace/soft.h"

#define RATE (1000 * QP_MBPS)
#define DELAY_NS (10 * QP_NS_PER_US)
#define MTU 1024u
#define FRAME (MTU + 58u)                    /* Eth/IPv4/UDP/BTH/RETH-or-not/ICRC */
#define MAX_SENDERS 4

struct flow {
	struct qp *qp, *rqp;
	struct qp_mr *smr;
	uint64_t bytes, acked;
	qp_time_ns start_ns, done_ns;
	bool posted;
};

struct app {
	struct sim *s;
	struct qp_mr *rmr;
	uint8_t rbuf[256 * 1024], sbuf[256 * 1024];
	struct flow f[MAX_SENDERS + 1];
	unsigned senders, done;
};

/* A star of @ports at 1 Gb/s; @ecn: RED marking ("KMIN,KMAX,PMAX") or "off". */
static struct sw_conf *star_ecn(unsigned ports, const char *ecn)
{
	char n[8], err[300];
	snprintf(n, sizeof(n), "%u", ports);
	char *argv[] = { "qpace-switch", "--star", n, "--rate", "1G", "--delay", "10us",
			 "--buffer", "256K", "--int", "off", "--early", "off", "--quiet",
			 "--ecn", (char *)ecn, NULL };
	struct sw_conf *c = sim_sw_conf_args(16, argv, err, sizeof(err));

	assert_non_null(c);
	return c;
}

static struct sw_conf *star(unsigned ports)
{
	return star_ecn(ports, "off");
}

static qp_time_ns app_fn(void *arg, size_t host, qp_time_ns now)
{
	struct app *a = arg;
	struct flow *f = &a->f[host];
	struct qp_wc wc[8];
	int n;

	if (host == 0 || !f->qp || f->done_ns)
		return QP_TIME_NEVER;
	if (!f->posted) {
		struct qp_wr w = { .opcode = QP_OP_WRITE, .wr_id = 1, .mr = f->smr,
				   .addr = a->sbuf, .length = (uint32_t)f->bytes,
				   .remote_addr = f->qp->remote.addr, .rkey = f->qp->remote.rkey,
				   .flags = QP_WR_SIGNALED };
		assert_int_equal(qp_post_send(f->qp, &w), 0);
		f->posted = true;
		f->start_ns = now;
		return QP_TIME_NEVER;
	}
	n = qp_poll(f->qp, wc, 8);
	for (int k = 0; k < n; k++) {
		assert_int_equal(wc[k].status, QP_WC_SUCCESS);
		f->done_ns = now;
		if (++a->done == a->senders)
			sim_stop(a->s);
	}
	return QP_TIME_NEVER;
}

/* @senders hosts write @bytes each to host 0 at once under algorithm @cc, the switch
 * marking per @ecn and the senders' QPs ECN-capable when it does; returns the engine. */
static struct sim *run_cc(struct app *a, unsigned senders, uint64_t bytes, const char *cc,
			  const char *ecn)
{
	struct sim_host_conf hc[MAX_SENDERS + 1];
	struct sw_conf *sw = star_ecn(senders + 1, ecn);
	char err[300];
	struct qp_attr qa = { .flags = QP_F_NONBLOCK, .psn_fixed = true, .psn = 100,
			      .gate = { .chunk_bytes = MTU, .burst_bytes = MTU } }, sa = qa;
	qp_rate_bps line = RATE / FRAME * MTU;   /* the payload rate: the gate meters payload */

	memset(a, 0, sizeof(*a));
	a->senders = senders;
	for (unsigned i = 0; i <= senders; i++)
		hc[i] = (struct sim_host_conf){ .ip = 0x0a000001u + i, .sw = 0, .port = (int)i,
						.link_delay_ns = SIM_PORT_DELAY, .cc = cc };
	struct sim_conf c = { .sw = sw, .hosts = hc, .nhosts = senders + 1, .seed = 1 };
	assert_int_equal(sim_create(&c, &a->s, err, sizeof(err)), 0);
	sim_sw_conf_free(sw);
	struct host *rh = sim_host(a->s, 0);
	assert_int_equal(qp_mr_reg(rh->ctx, a->rbuf, sizeof(a->rbuf),
				   QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, &a->rmr), 0);
	for (unsigned i = 1; i <= senders; i++) {
		struct host *sh = sim_host(a->s, i);
		struct flow *f = &a->f[i];
		struct qp_conn_info li, ri;
		f->bytes = bytes;
		assert_int_equal(qp_mr_reg(sh->ctx, a->sbuf, sizeof(a->sbuf), QP_ACCESS_LOCAL_WRITE,
					   &f->smr), 0);
		assert_int_equal(qp_create(rh->ctx, &qa, &f->rqp, err, sizeof(err)), 0);
		sa.traffic_class = strcmp(ecn, "off") ? FRAME_ECN_ECT0 : 0;
		assert_int_equal(qp_create(sh->ctx, &sa, &f->qp, err, sizeof(err)), 0);
		qp_local_info(f->rqp, a->rmr, &ri);
		qp_local_info(f->qp, NULL, &li);
		assert_int_equal(qp_connect(f->rqp, &li, err, sizeof(err)), 0);
		assert_int_equal(qp_connect(f->qp, &ri, err, sizeof(err)), 0);
		assert_int_equal(host_register(sh, f->qp, line, 100 * QP_NS_PER_US, false, cc,
					       NULL, sim_now(a->s), err, sizeof(err)), 0);
		assert_int_equal(host_register(rh, f->rqp, line, 100 * QP_NS_PER_US, true, cc,
					       NULL, sim_now(a->s), err, sizeof(err)), 0);
	}
	sim_set_app(a->s, app_fn, a);
	assert_int_equal(sim_run(a->s, SIM_START_NS + QP_NS_PER_S, QP_TIME_NEVER),
			 SIM_END_STOPPED);
	return a->s;
}

static struct sim *run(struct app *a, unsigned senders, uint64_t bytes)
{
	return run_cc(a, senders, bytes, "none", "off");
}

static struct app app;

/* One flow alone: it takes its packets' serialisation, pipelined, plus one frame's trip
 * (NIC, host link, switch port, its link) and the last ACK's trip back; ARP for the peer
 * comes first (two 60-byte frames each way). */
static void test_one_flow(void **state)
{
	const uint64_t bytes = 128 * 1024, pkts = bytes / MTU;
	const qp_time_ns ser = FRAME * 8, small = 60 * 8;    /* ns at 1 Gb/s */
	struct sim_port_info p0;
	struct sim_stats st;
	(void)state;

	struct sim *s = run(&app, 1, bytes);
	qp_time_ns fct = app.f[1].done_ns - app.f[1].start_ns;
	qp_time_ns arp = 2 * (2 * small + 2 * DELAY_NS);
	qp_time_ns ideal = pkts * ser + ser + 2 * DELAY_NS + 2 * small + 2 * DELAY_NS;
	/* the gate paces payload at exactly the wire's rate: within 2% of the ideal */
	assert_true(fct >= ideal);
	assert_true(fct <= ideal + arp + ideal / 50);
	/* the NIC serialises: frames reach the receiver's port one frame time apart, so its
	 * queue never holds more than the frame on the wire and the one arriving */
	sim_port_info(s, 0, &p0);
	assert_true(p0.max_queue_bytes >= FRAME);
	assert_true(p0.max_queue_bytes <= 2 * FRAME);
	assert_int_equal(p0.drops, 0);
	/* no telemetry (--int off --early off): every host frame crosses the switch once */
	sim_stats(s, &st);
	assert_true(st.host_frames > pkts);
	assert_int_equal(st.packet_hops, 2 * st.host_frames);
	sim_destroy(s);
}

/* Three senders at once: the receiver's port queues what three NICs send at the rate one
 * link drains; the same inputs give the same events, hops and completion times. */
static void test_incast_deterministic(void **state)
{
	qp_time_ns done[2][MAX_SENDERS + 1];
	struct sim_stats st[2];
	struct sim_port_info p0;
	(void)state;

	for (int r = 0; r < 2; r++) {
		struct sim *s = run(&app, 3, 64 * 1024);
		sim_stats(s, &st[r]);
		for (unsigned i = 1; i <= 3; i++)
			done[r][i] = app.f[i].done_ns;
		sim_port_info(s, 0, &p0);
		/* 3 x 64 KiB arriving at 3x the drain rate: about 2/3 of it waits */
		assert_true(p0.max_queue_bytes > 100 * 1024);
		assert_true(p0.max_queue_bytes < 3 * 64 * 1024 + 3 * FRAME);
		sim_destroy(s);
	}
	assert_int_equal(st[0].events, st[1].events);
	assert_int_equal(st[0].packet_hops, st[1].packet_hops);
	assert_int_equal(st[0].sim_ns, st[1].sim_ns);
	for (unsigned i = 1; i <= 3; i++)
		assert_int_equal(done[0][i], done[1][i]);
	/* the last flow ends after all 192 KiB crossed the one bottleneck */
	qp_time_ns last = done[0][1] > done[0][2] ? done[0][1] : done[0][2];
	last = last > done[0][3] ? last : done[0][3];
	assert_true(last - SIM_START_NS >= 3 * 64 * FRAME * 8);
}

/* DCQCN's loop in virtual time, every piece real: 4 senders x 192 KiB into one 1 Gb/s
 * port, RED at dequeue at the reference's thresholds for 1 Gb/s (100*bw/25 KB, 400*bw/25
 * KB, 0.2: 4000 B, 16000 B), the receiver's soft RC answering CE marks with CNPs (at
 * most one per QP per 50 us), each sender's host handing its CNPs to its agent's dcqcn.
 * Against the same incast under "none" with the same marking (whose agents get the CNPs
 * too and ignore them): every CNP reaches DCQCN, at most one per QP per 50 us, and far
 * fewer frames drop (measured 49 against 342; the first windows, 4 x 128 packets, fill
 * the 256 KiB buffer either way). */
static void test_dcqcn_closed_loop(void **state)
{
	const uint64_t bytes = 192 * 1024;
	struct sim_port_info none_p0, p0;
	uint64_t cnps = 0, cnp_rx = 0, cnp_tx = 0;
	qp_time_ns span = 0;
	(void)state;

	struct sim *s = run_cc(&app, 4, bytes, "none", "4000,16000,0.2");
	sim_port_info(s, 0, &none_p0);
	for (unsigned i = 1; i <= 4; i++)
		cnps += sim_host(s, i)->cnps;
	assert_true(cnps > 0);   /* the NP works whatever the algorithm; none ignores them */
	sim_destroy(s);
	cnps = 0;
	s = run_cc(&app, 4, bytes, "dcqcn", "4000,16000,0.2");
	sim_port_info(s, 0, &p0);
	for (unsigned i = 1; i <= 4; i++) {
		cnps += sim_host(s, i)->cnps;
		cnp_rx += qp_soft_rc_stats(app.f[i].qp)->cnp_rx;
		cnp_tx += qp_soft_rc_stats(app.f[i].rqp)->cnp_tx;
		if (app.f[i].done_ns - SIM_START_NS > span)
			span = app.f[i].done_ns - SIM_START_NS;
	}
	print_message("4 x 192 KiB at 1G: none peak %llu B (%llu marks, %llu drops); dcqcn peak "
		      "%llu B (%llu drops), %llu marks, %llu CNPs sent, %llu received, %llu to the agents in %.2f ms\n",
		      (unsigned long long)none_p0.max_queue_bytes,
		      (unsigned long long)none_p0.ecn_marks, (unsigned long long)none_p0.drops,
		      (unsigned long long)p0.max_queue_bytes, (unsigned long long)p0.drops,
		      (unsigned long long)p0.ecn_marks,
		      (unsigned long long)cnp_tx, (unsigned long long)cnp_rx,
		      (unsigned long long)cnps, (double)span / 1e6);
	assert_true(p0.ecn_marks > 0);
	assert_true(cnp_tx > 0 && cnp_tx < p0.ecn_marks);
	assert_int_equal(cnp_rx, cnp_tx);   /* nothing lost on the way back */
	assert_int_equal(cnps, cnp_rx);     /* every CNP reached DCQCN */
	assert_true(cnp_tx <= 4 * (span / (50 * QP_NS_PER_US) + 1));
	assert_true(p0.drops < none_p0.drops);
	sim_destroy(s);
}

static void read_clock(void *arg, qp_time_ns now)
{
	(void)arg, (void)now;
	(void)qp_now_ns();
}

/* Reading the real clock while virtual time runs aborts. */
static void test_clock_guard(void **state)
{
	int status;
	pid_t pid;
	(void)state;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sim_host_conf hc = { .ip = 0x0a000001u, .link_delay_ns = SIM_PORT_DELAY,
					    .cc = "none" };
		struct sw_conf *sw = star(1);
		struct sim *s;
		char err[300];
		int devnull = open("/dev/null", 1);
		struct sim_conf c = { .sw = sw, .hosts = &hc, .nhosts = 1 };
		dup2(devnull, 2);
		if (sim_create(&c, &s, err, sizeof(err)) || sim_at(s, SIM_START_NS + 10, read_clock, NULL))
			_exit(3);
		sim_run(s, SIM_START_NS + QP_NS_PER_MS, QP_TIME_NEVER);
		_exit(0);    /* not reached */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	/* outside sim_run the clock reads as usual */
	assert_true(qp_now_ns() > 0);
}

static void test_bad_attach(void **state)
{
	struct sim_host_conf hc[2] = {
		{ .ip = 0x0a000001u, .port = 0, .link_delay_ns = SIM_PORT_DELAY, .cc = "none" },
		{ .ip = 0x0a000002u, .port = 5, .link_delay_ns = SIM_PORT_DELAY, .cc = "none" },
	};
	struct sw_conf *sw = star(2);
	struct sim_conf c = { .sw = sw, .hosts = hc, .nhosts = 2 };
	struct sim *s;
	char err[300];
	(void)state;

	assert_int_equal(sim_create(&c, &s, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "host 1 (10.0.0.2): switch 0 port 5 is not in the topology"));
	hc[1].port = 0;
	assert_int_equal(sim_create(&c, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "port p0 of switch s1 is taken by another host"));
	sim_sw_conf_free(sw);
	/* the switch's own parser judges its words */
	char *argv[] = { "qpace-switch", "--star", "0", NULL };
	int e = dup(2), devnull = open("/dev/null", 1);
	dup2(devnull, 2);
	assert_null(sim_sw_conf_args(3, argv, err, sizeof(err)));
	dup2(e, 2);
	assert_non_null(strstr(err, "the switch's options"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_flow),
		cmocka_unit_test(test_incast_deterministic),
		cmocka_unit_test(test_dcqcn_closed_loop),
		cmocka_unit_test(test_clock_guard),
		cmocka_unit_test(test_bad_attach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
