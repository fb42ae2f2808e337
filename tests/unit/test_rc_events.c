/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RC's transport events (qpace/rc.h, verbs/rc_ev.c), two QPs back to back on an
 * in-memory wire in injected time: every acknowledged byte reported once, in order, with
 * an RTT sample near the wire's round trip; NAKs under loss, and no sample from a PSN
 * sent twice; timeouts counted in a row; the ECN echo holding for every packet an ACK
 * acknowledges (a split ACK at each change of CE state), and nothing of it without
 * ecn_echo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/rc.h"
#include "rc_pair.h"

#define MSG (64u * 1024)

struct log {
	uint64_t acks, bytes, naks, timeouts, samples, ce_acks, ce_bytes;
	qp_time_ns rtt_min, rtt_max;
	uint32_t last_psn, last_count;
	bool order_bad;
	bool have_psn;
};

static void on_event(void *arg, uint32_t qpn, const struct rc_event *ev, qp_time_ns now)
{
	struct log *l = arg;

	(void)now;
	assert_int_equal(qpn, 0x11);
	switch (ev->type) {
	case RC_EV_ACK:
		l->acks++;
		l->bytes += ev->bytes;
		if (ev->ce) {
			l->ce_acks++;
			l->ce_bytes += ev->bytes;
		}
		if (l->have_psn && rc_psn_diff(ev->psn, l->last_psn) <= 0)
			l->order_bad = true;
		if (rc_psn_diff(ev->snd_psn, ev->psn) < 0)
			l->order_bad = true;
		l->last_psn = ev->psn;
		l->have_psn = true;
		if (ev->rtt_ns) {
			l->samples++;
			if (!l->rtt_min || ev->rtt_ns < l->rtt_min)
				l->rtt_min = ev->rtt_ns;
			if (ev->rtt_ns > l->rtt_max)
				l->rtt_max = ev->rtt_ns;
		}
		break;
	case RC_EV_NAK:
		l->naks++;
		break;
	case RC_EV_TIMEOUT:
		l->timeouts++;
		l->last_count = ev->count;
		break;
	default:
		fail_msg("event type %u", ev->type);
	}
}

struct xfer {
	struct rc_pair *pr;
	uint32_t rkey;
	uint8_t *src;
	uint64_t total, posted, done;
};

static bool xfer_step(void *arg)
{
	struct xfer *x = arg;
	struct qp_wc wc;

	while (rc_pair_poll1(x->pr, 0, &wc)) {
		assert_int_equal(wc.status, QP_WC_SUCCESS);
		x->done += wc.byte_len;
	}
	while (x->posted < x->total && rc_sq_outstanding(x->pr->s[0].qp) < 8) {
		uint32_t len = (uint32_t)(x->total - x->posted < MSG ? x->total - x->posted : MSG);

		rc_pair_post(x->pr, 0, QP_OP_WRITE, x->posted, x->src + x->posted % MSG, len,
			     rc_pair_va(x->pr, 1, x->rkey) + x->posted % MSG, x->rkey, 0);
		x->posted += len;
	}
	return x->done == x->total;
}

static void run(struct rc_pair *pr, struct log *l, const struct rc_wire_params *wp,
		uint64_t total, bool echo, uint8_t tos)
{
	struct rc_params p;
	struct xfer x = { .pr = pr, .total = total };

	rc_params_init(&p);
	p.rto_ns = 4096ULL << 9;
	p.on_event = on_event;
	p.event_arg = l;
	p.ecn_echo = echo;
	rc_pair_open(pr, &p, 1024, wp);
	pr->w.tos[0] = tos;
	x.rkey = rc_pair_mem(pr, 1, MSG, true);
	x.src = calloc(1, MSG);
	assert_non_null(x.src);
	assert_true(rc_wire_run(&pr->w, xfer_step, &x, pr->w.now + 60 * QP_NS_PER_S));
	free(x.src);
	assert_int_equal(pr->w.bad, 0);
}

/* Every byte once, PSNs in order; samples between the wire's round trip and that plus
 * the time a window takes at the link's rate. */
static void test_acks_bytes_and_rtt(void **state)
{
	struct rc_wire_params wp = { .delay_ns = 5 * QP_NS_PER_US, .rate_bps = 10 * QP_GBPS };
	struct rc_pair pr;
	struct log l = { 0 };
	qp_time_ns window_ns = qp_tx_time_ns(128ull * (1024 + 60), wp.rate_bps);

	(void)state;
	run(&pr, &l, &wp, 4ull << 20, false, 0);
	assert_int_equal(l.bytes, 4ull << 20);
	assert_false(l.order_bad);
	assert_int_equal(l.naks, 0);
	assert_int_equal(l.timeouts, 0);
	assert_true(l.acks >= (4ull << 20) / MSG);
	assert_int_equal(l.samples, l.acks);
	assert_true(l.rtt_min >= 2 * wp.delay_ns);
	assert_true(l.rtt_max <= 2 * wp.delay_ns + window_ns + 2 * QP_NS_PER_US);
	assert_int_equal(l.ce_acks, 0);
	rc_pair_close(&pr);
}

/* Loss: NAKs go back; a PSN sent twice gives no sample, so no sample is as long as a
 * retransmission's wait (the wire's round trip, a window and the go-back's round trip). */
static void test_loss_naks_no_retrans_sample(void **state)
{
	struct rc_wire_params wp = { .delay_ns = 5 * QP_NS_PER_US, .rate_bps = 10 * QP_GBPS,
				     .loss = 0.002, .seed = 7 };
	struct rc_pair pr;
	struct log l = { 0 };
	qp_time_ns window_ns = qp_tx_time_ns(128ull * (1024 + 60), wp.rate_bps);

	(void)state;
	run(&pr, &l, &wp, 8ull << 20, false, 0);
	assert_int_equal(l.bytes, 8ull << 20);
	assert_false(l.order_bad);
	assert_true(l.naks > 0);
	assert_true(l.naks <= rc_stats(pr.s[0].qp)->naks_rx);   /* duplicates: not again */
	assert_true(l.samples > 0 && l.samples < l.acks);
	assert_true(l.rtt_max <= 2 * wp.delay_ns + window_ns + 2 * QP_NS_PER_US);
	assert_int_equal(l.timeouts, rc_stats(pr.s[0].qp)->timeouts);
	rc_pair_close(&pr);
}

/* Everything from B lost for a while: timeouts, counted in a row, then progress. */
static bool drop_acks(void *arg, int from, const struct frame_parsed *p)
{
	const struct rc_wire *w = arg;

	(void)p;
	return from == 1 && w->now < QP_NS_PER_S + 20 * QP_NS_PER_MS;
}

static void test_timeouts(void **state)
{
	struct rc_wire_params wp = { .delay_ns = 5 * QP_NS_PER_US };
	struct rc_params p;
	struct rc_pair pr;
	struct log l = { 0 };
	struct xfer x = { .pr = &pr, .total = MSG };

	(void)state;
	rc_params_init(&p);
	p.rto_ns = 2 * QP_NS_PER_MS;
	p.on_event = on_event;
	p.event_arg = &l;
	rc_pair_open(&pr, &p, 1024, &wp);
	pr.w.filter = drop_acks;
	pr.w.filter_arg = &pr.w;
	x.rkey = rc_pair_mem(&pr, 1, MSG, true);
	x.src = calloc(1, MSG);
	assert_true(rc_wire_run(&pr.w, xfer_step, &x, pr.w.now + QP_NS_PER_S));
	free(x.src);
	/* 2, 4, 8, 16 ms: three expiries before 20 ms (at 2, 6, 14), the fourth after it */
	assert_int_equal(l.timeouts, 4);
	assert_int_equal(l.last_count, 4);
	assert_int_equal(l.bytes, MSG);
	rc_pair_close(&pr);
}

/* CE on every data frame: every ACK echoes it, and every byte is counted as marked. (The
 * NP's CNPs are the soft backend's to turn off: rc_params.cnp_interval_ns.) */
static void test_ecn_echo_all(void **state)
{
	struct rc_wire_params wp = { 0 };
	struct rc_pair pr;
	struct log l = { 0 };

	(void)state;
	run(&pr, &l, &wp, 1ull << 20, true, FRAME_ECN_CE);
	assert_int_equal(l.ce_bytes, 1ull << 20);
	rc_pair_close(&pr);
}

/* Without ecn_echo: no BECN (and the NP's CNPs as before). */
static void test_ecn_echo_off(void **state)
{
	struct rc_wire_params wp = { 0 };
	struct rc_pair pr;
	struct log l = { 0 };

	(void)state;
	run(&pr, &l, &wp, 1ull << 20, false, FRAME_ECN_CE);
	assert_int_equal(l.ce_acks, 0);
	assert_true(rc_stats(pr.s[1].qp)->cnp_tx > 0);
	rc_pair_close(&pr);
}

/* Every other data frame marked (a filter flips A's TOS per frame): each ACK holds for
 * packets of one state, so the marked bytes are half the bytes to a packet a message. */
static bool alternate(void *arg, int from, const struct frame_parsed *p)
{
	struct rc_wire *w = arg;

	(void)p;
	if (from == 0)
		w->tos[0] = w->tos[0] == FRAME_ECN_CE ? FRAME_ECN_ECT0 : FRAME_ECN_CE;
	return false;
}

static void test_ecn_echo_split(void **state)
{
	struct rc_wire_params wp = { 0 };
	struct rc_params p;
	struct rc_pair pr;
	struct log l = { 0 };
	struct xfer x = { .pr = &pr, .total = 1ull << 20 };
	uint64_t pkts = (1ull << 20) / 1024;

	(void)state;
	rc_params_init(&p);
	p.on_event = on_event;
	p.event_arg = &l;
	p.ecn_echo = true;
	rc_pair_open(&pr, &p, 1024, &wp);
	pr.w.filter = alternate;
	pr.w.filter_arg = &pr.w;
	x.rkey = rc_pair_mem(&pr, 1, MSG, true);
	x.src = calloc(1, MSG);
	assert_true(rc_wire_run(&pr.w, xfer_step, &x, pr.w.now + QP_NS_PER_S));
	free(x.src);
	assert_int_equal(l.bytes, 1ull << 20);
	/* the filter runs after the frame is built: the k-th frame has the state the (k-1)-th
	 * flip set, so half of them, give or take one, are CE */
	assert_true(l.ce_bytes >= (pkts / 2 - 1) * 1024 && l.ce_bytes <= (pkts / 2 + 1) * 1024);
	rc_pair_close(&pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acks_bytes_and_rtt),
		cmocka_unit_test(test_loss_naks_no_retrans_sample),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_ecn_echo_all),
		cmocka_unit_test(test_ecn_echo_off),
		cmocka_unit_test(test_ecn_echo_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
