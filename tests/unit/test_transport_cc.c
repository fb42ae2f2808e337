/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The transport-driven algorithms with injected events (their closed loops are the
 * test_loop_tcp, _dctcp, _timely and _swift files):
 *   tcp     slow start by bytes, +1 MSS per window, one halving per window of losses, the
 *           loss window after a timeout with ssthresh held on repeats, no growth while
 *           the sender leaves most of the window unused, max_cwnd;
 *   dctcp   alpha = (1 - g) alpha + g F once per window, one cut of alpha/2 per window;
 *   timely  the first update records, then additive increase below t_low and on a
 *           negative gradient, beta * gradient above, hyper increase after n_hai;
 *   swift   the flow-scaled target, AI below it, one MD per RTT above it, the loss cuts;
 *   the agent hands each only the events it takes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/agent.h"
#include "qpace/cc.h"
#include "qpace/ratetable.h"
#include "dctcp.h"
#include "swift.h"
#include "timely.h"

#define MSS 1000u
static const struct cc_path path = { 10000000000ull, 10 * QP_NS_PER_US, MSS };

static struct cc *make(const char *name, const char *params)
{
	char err[256];
	struct cc *cc = cc_create(name, &path, params, 0, err, sizeof(err));

	if (!cc)
		fail_msg("%s", err);
	return cc;
}

/* An ACK of @pkts packets, @flight packets left in flight after it. */
static void ack(struct cc *cc, uint64_t *psn, uint32_t pkts, uint32_t flight, bool ce,
		qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_ACKED };

	*psn += pkts;
	ev.u.ack = (struct cc_ack){ .bytes = (uint64_t)pkts * MSS, .psn = *psn,
				    .snd_psn = *psn + flight, .ecn = ce ? CC_ECN_CE : CC_ECN_CLEAR };
	cc_event(cc, &ev, now);
}

static void loss(struct cc *cc, enum cc_event_type t, uint64_t psn, uint64_t snd,
		 uint32_t count, qp_time_ns now)
{
	struct cc_event ev = { .type = t };

	ev.u.loss = (struct cc_loss){ .psn = psn, .snd_psn = snd, .count = count };
	cc_event(cc, &ev, now);
}

static void test_tcp_slow_start_and_avoidance(void **state)
{
	struct cc *cc = make("tcp", "ssthresh=16000");
	uint64_t psn = 1000;
	(void)state;

	assert_int_equal(cc->cap_bytes, 2 * MSS);
	assert_int_equal(cc->rate_bps, path.line_bps);
	ack(cc, &psn, 2, 2, false, 1);            /* slow start: + the bytes */
	assert_int_equal(cc->cap_bytes, 4 * MSS);
	ack(cc, &psn, 4, 4, false, 2);
	ack(cc, &psn, 8, 8, false, 3);
	assert_int_equal(cc->cap_bytes, 16 * MSS);
	ack(cc, &psn, 16, 16, false, 4);          /* avoidance: one MSS per window */
	assert_int_equal(cc->cap_bytes, 17 * MSS);
	ack(cc, &psn, 1, 1, false, 5);            /* 2 in flight of 17: the sender limits */
	assert_int_equal(cc->cap_bytes, 17 * MSS);
	cc_destroy(cc);
}

static void test_tcp_one_halving_per_window(void **state)
{
	struct cc *cc = make("tcp", "iw=40");
	uint64_t psn = 1000;
	(void)state;

	loss(cc, CC_EV_NAK, 1010, 1040, 0, 1);
	assert_int_equal(cc->cap_bytes, 20 * MSS);
	loss(cc, CC_EV_NAK, 1020, 1040, 0, 2);     /* the same window: held */
	assert_int_equal(cc->cap_bytes, 20 * MSS);
	psn = 1020;
	ack(cc, &psn, 10, 10, false, 3);          /* recovery: no growth until 1040 */
	assert_int_equal(cc->cap_bytes, 20 * MSS);
	ack(cc, &psn, 10, 10, false, 4);          /* 1040 acknowledged: avoidance again */
	assert_int_equal(cc->cap_bytes, 20 * MSS + MSS * 10 * MSS / (20 * MSS));
	loss(cc, CC_EV_NAK, 1045, 1060, 0, 5);    /* a new window: halved again */
	assert_int_equal(cc->cap_bytes, 10 * MSS + MSS / 4);
	cc_destroy(cc);
}

static void test_tcp_timeouts(void **state)
{
	struct cc *cc = make("tcp", "iw=40");
	uint64_t psn = 1000;
	(void)state;

	loss(cc, CC_EV_TIMEOUT, 1000, 1040, 1, 1);
	assert_int_equal(cc->cap_bytes, MSS);     /* the loss window */
	loss(cc, CC_EV_TIMEOUT, 1000, 1040, 2, 2);  /* ssthresh held: 20 */
	loss(cc, CC_EV_NAK, 1000, 1040, 0, 3);    /* before the timeout's recover: no cut */
	ack(cc, &psn, 1, 0, false, 4);            /* slow start again */
	ack(cc, &psn, 2, 0, false, 5);
	assert_int_equal(cc->cap_bytes, 4 * MSS);
	ack(cc, &psn, 16, 16, false, 6);          /* to ssthresh 20 ... */
	assert_int_equal(cc->cap_bytes, 20 * MSS);
	ack(cc, &psn, 16, 16, false, 7);          /* ... then + 16/20 MSS */
	assert_int_equal(cc->cap_bytes, 20 * MSS + 16 * MSS / 20);
	cc_destroy(cc);
}

static void test_tcp_max_cwnd(void **state)
{
	char err[256];
	struct cc *cc = make("tcp", "iw=1,max_cwnd=1");
	uint64_t psn = 0;
	(void)state;

	for (int i = 0; i < 10; i++)
		ack(cc, &psn, 1, 1, false, (qp_time_ns)i);
	assert_int_equal(cc->cap_bytes, MSS);
	assert_null(cc_create("tcp", &path, "iw=4,max_cwnd=2", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "max_cwnd=2"));
	cc_destroy(cc);
}

static void test_dctcp_alpha_and_one_cut_per_window(void **state)
{
	struct cc *cc = make("dctcp", "iw=100,g=0.5");
	struct cc_dctcp_view v;
	uint64_t psn = 1000;
	(void)state;

	/* window 1 (no end yet: time), half the bytes echoed CE: one cut, alpha 1 -> cwnd/2 */
	ack(cc, &psn, 10, 90, true, 1);
	assert_int_equal(cc->cap_bytes, 50 * MSS);
	ack(cc, &psn, 10, 80, true, 2);           /* CWR: no second cut in the window */
	assert_int_equal(cc->cap_bytes, 50 * MSS);
	ack(cc, &psn, 20, 60, false, 3);
	/* the first ACK after the base RTT closes the time window: F = 20 of 50 */
	ack(cc, &psn, 10, 50, false, path.base_rtt_ns + 1);
	assert_int_equal(cc_dctcp_view(cc, &v), 0);
	assert_true(fabs(v.alpha - (0.5 * 1 + 0.5 * 20.0 / 50)) < 1e-9);
	assert_int_equal(v.stats.alpha_updates, 1);
	assert_int_equal(v.stats.ecn_cuts, 1);
	cc_destroy(cc);
}

static void rtt(struct cc *cc, qp_time_ns r, qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_RTT, .u.rtt.rtt_ns = r };

	cc_event(cc, &ev, now);
}

static void test_timely_rules(void **state)
{
	struct cc *cc = make("timely", "delta=10M,n_hai=2,t_low=20us,t_high=100us,min_rtt=10us");
	struct cc_timely_view v;
	qp_time_ns t = 0;
	(void)state;

	rtt(cc, 30000, t += 40000);               /* the first update only records */
	assert_int_equal(cc->rate_bps, path.line_bps);
	rtt(cc, 40000, t += 40000);               /* +10 us: gradient 0.875, cut */
	assert_int_equal(cc_timely_view(cc, &v), 0);
	assert_true(fabs(v.rate_bps - 10e9 * (1 - 0.8 * 0.875)) < 1);
	double r = v.rate_bps;
	rtt(cc, 15000, t += 40000);               /* below t_low: + delta */
	rtt(cc, 14000, t += 40000);
	rtt(cc, 13000, t += 40000);               /* third in a row: hyper (2 x delta) */
	assert_int_equal(cc_timely_view(cc, &v), 0);
	assert_true(fabs(v.rate_bps - (r + 10e6 + 10e6 + 20e6)) < 1);
	rtt(cc, 200000, t += 40000);              /* above t_high */
	assert_int_equal(cc_timely_view(cc, &v), 0);
	assert_true(v.rate_bps < (r + 40e6) * (1 - 0.8 * (1 - 0.5)) + 1);
	cc_destroy(cc);
}

/* An explicit first window outside [min_cwnd, max_cwnd] is refused, not clamped. */
static void test_swift_init_cwnd_in_range(void **state)
{
	char err[256] = "";
	(void)state;

	assert_null(cc_create("swift", &path, "init_cwnd=20,max_cwnd=10", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "init_cwnd=20 is outside"));
	assert_null(cc_create("swift", &path, "init_cwnd=0.5,min_cwnd=1", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "init_cwnd=0.5 is outside"));
	cc_destroy(make("swift", "init_cwnd=10,max_cwnd=10"));
}

static void test_swift_target_ai_md(void **state)
{
	struct cc *cc = make("swift", "init_cwnd=10");
	struct cc_swift_view v;
	uint64_t psn = 0;
	(void)state;

	assert_int_equal(cc_swift_view(cc, &v), 0);
	/* base 10 us + one hop of 10/6.55 us + flow scaling at 10 packets */
	double a = 50e3 / (1 / sqrt(0.1) - 1 / sqrt(100)), fs = a / sqrt(10) - a / 10;
	assert_true(fabs(v.target_ns - (10e3 + 1526 + fs)) < 2);
	assert_int_equal(cc->cap_bytes, 10 * MSS);
	ack(cc, &psn, 10, 0, false, 1);           /* below the target: + ai per window */
	rtt(cc, 15000, 1);
	assert_int_equal(cc_swift_view(cc, &v), 0);
	assert_true(fabs(v.fcwnd - 11) < 1e-9);
	ack(cc, &psn, 1, 0, false, 2);            /* far above: cut by at most max_mdf */
	rtt(cc, 1000000, 2);
	assert_int_equal(cc_swift_view(cc, &v), 0);
	assert_true(fabs(v.fcwnd - 5.5) < 1e-9);
	ack(cc, &psn, 1, 0, false, 3);            /* within the RTT: no second cut */
	rtt(cc, 1000000, 3);
	assert_int_equal(cc_swift_view(cc, &v), 0);
	assert_true(fabs(v.fcwnd - 5.5) < 1e-9);
	loss(cc, CC_EV_NAK, 0, 0, 0, 4);          /* a loss inside the RTT: none either */
	assert_int_equal(cc_swift_view(cc, &v), 0);
	assert_true(fabs(v.fcwnd - 5.5) < 1e-9);
	cc_destroy(cc);
}

/* The agent hands a controller only what it takes: hpcc no ACKs, tcp no RTT samples. */
static void test_agent_filters_by_needs(void **state)
{
	struct qp_ratetable *t;
	struct agent_params ap;
	struct agent *a;
	char err[256];
	struct agent_qp_reg r = { .qpn = 0x11, .peer_qpn = 0x22, .local_ip = 0x0a000001,
				  .peer_ip = 0x0a000002, .mtu_bytes = MSS,
				  .link_bps = path.line_bps, .base_rtt_ns = path.base_rtt_ns };
	struct agent_tp_event e = { .type = AGENT_TP_ACK, .flags = AGENT_TP_F_PSN | AGENT_TP_F_SND,
				    .psn = 100, .snd_psn = 104, .bytes = 4 * MSS, .rtt_ns = 12000 };
	(void)state;

	assert_int_equal(qp_ratetable_create_mem(4, &t, err, sizeof(err)), 0);
	agent_params_default(&ap);
	ap.max_qps = 4;
	a = agent_create(&ap, t, 0, err, sizeof(err));
	assert_non_null(a);
	memcpy(r.algo, "hpcc", 5);
	assert_int_equal(agent_register(a, &r, 0, 0, 0, err, sizeof(err)), 0);
	agent_qp_transport(a, 0x11, &e, 1);
	assert_int_equal(agent_qp_cc(a, 0x11)->stats.events[CC_EV_ACKED], 0);
	assert_int_equal(agent_counters(a)[AGENT_C_TP_ACKS], 1);
	assert_int_equal(agent_counters(a)[AGENT_C_TP_RTT], 1);
	assert_int_equal(agent_set_algo(a, 0x11, "tcp", "", 0, 2, err, sizeof(err)), 0);
	agent_qp_transport(a, 0x11, &e, 3);
	assert_int_equal(agent_qp_cc(a, 0x11)->stats.events[CC_EV_ACKED], 1);
	assert_int_equal(agent_qp_cc(a, 0x11)->stats.events[CC_EV_RTT], 0);
	e.type = AGENT_TP_NAK;
	agent_qp_transport(a, 0x11, &e, 4);
	assert_int_equal(agent_qp_cc(a, 0x11)->stats.events[CC_EV_NAK], 1);
	assert_int_equal(agent_qp_transport(a, 0x99, &e, 5), 0);
	assert_int_equal(agent_counters(a)[AGENT_C_TP_UNKNOWN], 1);
	agent_destroy(a);
	qp_ratetable_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_slow_start_and_avoidance),
		cmocka_unit_test(test_tcp_one_halving_per_window),
		cmocka_unit_test(test_tcp_timeouts),
		cmocka_unit_test(test_tcp_max_cwnd),
		cmocka_unit_test(test_dctcp_alpha_and_one_cut_per_window),
		cmocka_unit_test(test_timely_rules),
		cmocka_unit_test(test_swift_init_cwnd_in_range),
		cmocka_unit_test(test_swift_target_ai_md),
		cmocka_unit_test(test_agent_filters_by_needs),
	};
	return cmocka_run_group_tests_name("transport_cc", tests, NULL, NULL);
}
