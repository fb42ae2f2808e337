/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The queue model's PFC parts with injected time: a hold (PAUSE) delays every frame not
 * yet on the wire to the hold's end, an XON lets them go at once, frames already given to
 * an I/O batch keep their times; lossless frames pass a full buffer and only the store
 * bounds them; tagged frames are reported as they leave the queue. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/queue.h"

static uint8_t frame[2048];

static struct sw_queue *make(uint64_t buffer, uint64_t lossless)
{
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .delay_ns = 0, .buffer_bytes = buffer,
				     .flow_slots = 64, .seed = 1, .lossless_bytes = lossless };
	char err[200];
	struct sw_queue *q = sw_queue_create(&p, err, sizeof(err));

	assert_non_null(q);
	return q;
}

static int enq(struct sw_queue *q, qp_time_ns t, uint16_t len, bool lossless, uint16_t tag)
{
	struct sw_enq in = { .frame = frame, .frame_len = len, .lossless = lossless, .tag = tag };
	struct sw_enq_out out;

	return sw_queue_enqueue(q, t, &in, &out);
}

static qp_time_ns depart(const struct sw_queue *q, uint32_t i)
{
	const struct sw_qent *e = sw_queue_peek(q, i);

	assert_non_null(e);
	return e->depart_ns;
}

/* 1 Gb/s: 1000 bytes take 8000 ns. */
static void test_hold_and_release(void **state)
{
	struct sw_queue *q = make(128 * 1024, 0);
	struct qp_int_hop h;
	(void)state;

	for (int i = 0; i < 4; i++)
		assert_int_equal(enq(q, 0, 1000, false, 0), 0);
	assert_int_equal(depart(q, 3), 32000);
	/* PAUSE at 4000 until 100000: frame 0 is on the wire and finishes at 8000; 1..3 wait. */
	sw_queue_hold(q, 4000, 100000, 0);
	assert_int_equal(depart(q, 0), 8000);
	assert_int_equal(depart(q, 1), 108000);
	assert_int_equal(depart(q, 2), 116000);
	assert_int_equal(depart(q, 3), 124000);
	assert_int_equal(sw_queue_next_depart_ns(q), 8000);
	/* An arrival during the pause joins behind them. */
	assert_int_equal(enq(q, 50000, 1000, false, 0), 0);
	assert_int_equal(depart(q, 4), 132000);
	assert_int_equal(sw_queue_bytes(q, 50000), 4000);   /* frame 0 left, 4 wait */
	assert_int_equal(sw_queue_next_depart_ns(q), 108000);
	/* XON at 60000: they go from 60000, back to back. */
	sw_queue_hold(q, 60000, 60000, 0);
	assert_int_equal(depart(q, 1), 68000);
	assert_int_equal(depart(q, 4), 92000);
	sw_queue_hop(q, 1, &h);
	assert_int_equal(h.ts_ns, 60000);   /* INT sees the real dequeue */
	/* An arrival after the XON is not held. */
	assert_int_equal(enq(q, 200000, 1000, false, 0), 0);
	assert_int_equal(depart(q, 5), 208000);
	/* A pause that is never ended by XON: it runs to its end. */
	assert_int_equal(enq(q, 200000, 1000, false, 0), 0);
	sw_queue_hold(q, 203000, 250000, 0);   /* frame 5 on the wire */
	assert_int_equal(depart(q, 5), 208000);
	assert_int_equal(depart(q, 6), 258000);
	assert_int_equal(sw_queue_bytes(q, 257999), 1000);
	assert_int_equal(sw_queue_bytes(q, 258000), 0);
	sw_queue_destroy(q);
}

/* Frames already in an I/O port's batch (committed) keep their departures; the pause
 * starts after them. A hold on an empty queue holds the next arrival. */
static void test_hold_committed_and_empty(void **state)
{
	struct sw_queue *q = make(128 * 1024, 0);
	(void)state;

	sw_queue_hold(q, 1000, 50000, 0);
	assert_int_equal(enq(q, 2000, 1000, false, 0), 0);
	assert_int_equal(depart(q, 0), 58000);
	sw_queue_pop(q, 1);
	/* Three frames from 100000; the first two are committed at 100000 (not started). */
	for (int i = 0; i < 3; i++)
		assert_int_equal(enq(q, 100000, 1000, false, 0), 0);
	sw_queue_hold(q, 100000, 300000, 2);
	assert_int_equal(depart(q, 0), 108000);
	assert_int_equal(depart(q, 1), 116000);
	assert_int_equal(depart(q, 2), 308000);
	/* After the batch is popped, the last departure handed on still orders the wire. */
	sw_queue_pop(q, 2);
	sw_queue_hold(q, 101000, 101000, 0);   /* XON: the third follows the second */
	assert_int_equal(depart(q, 0), 124000);
	sw_queue_destroy(q);
}

static void test_lossless_admission(void **state)
{
	struct sw_queue *q = make(1514, 64 * 1024);
	const struct sw_queue_stats *st = sw_queue_stats(q);
	int ok = 0;
	(void)state;

	assert_int_equal(enq(q, 0, 1000, false, 0), 0);
	assert_int_equal(enq(q, 0, 1000, false, 0), -ENOBUFS);   /* B = 1514 */
	assert_int_equal(st->drop_tail, 1);
	for (int i = 0; i < 50; i++)
		ok += enq(q, 0, 1000, true, 0) == 0;
	assert_int_equal(ok, 50);                                 /* 51 KB in a 1.5 KB buffer */
	assert_int_equal(sw_queue_bytes(q, 0), 51000);
	assert_int_equal(st->max_qbytes, 51000);
	assert_int_equal(enq(q, 0, 100, false, 0), -ENOBUFS);    /* the rest still drop */
	assert_int_equal(st->drop_tail, 2);
	assert_int_equal(st->drop_store, 0);
	sw_queue_destroy(q);

	/* Without an allowance the store bounds lossless frames: dropped and counted, never
	 * written past the store. */
	q = make(1514, 0);
	st = sw_queue_stats(q);
	ok = 0;
	for (int i = 0; i < 200; i++)
		ok += enq(q, 0, 1000, true, 0) == 0;
	assert_true(ok >= 60 && ok < 200);
	assert_int_equal(st->drop_store, (uint64_t)(200 - ok));
	assert_int_equal(st->drop_tail, 0);
	sw_queue_destroy(q);
}

struct seen {
	int n;
	uint16_t tag[16];
	uint32_t len[16];
	qp_time_ns at[16];
};

static void on_depart(void *arg, const struct sw_qent *e)
{
	struct seen *s = arg;

	assert_true(s->n < 16);
	s->tag[s->n] = e->tag;
	s->len[s->n] = e->len;
	s->at[s->n++] = e->depart_ns;
}

static void test_depart_hook(void **state)
{
	struct sw_queue *q = make(128 * 1024, 0);
	struct seen s = { 0 };
	(void)state;

	sw_queue_on_depart(q, on_depart, &s);
	enq(q, 0, 1000, false, 7);
	enq(q, 0, 1000, false, 0);   /* untagged: not reported */
	enq(q, 0, 20, false, 9);     /* charged as 60 bytes */
	assert_int_equal(sw_queue_bytes(q, 7999), 1060 + 1000);
	assert_int_equal(s.n, 0);
	assert_int_equal(sw_queue_bytes(q, 8000), 1060);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.tag[0], 7);
	assert_int_equal(s.at[0], 8000);
	assert_int_equal(s.len[0], 1000);
	/* Handed on before the model reached its departure (an I/O port's early send): it
	 * leaves Q at the pop and is reported then. */
	sw_queue_pop(q, 3);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.tag[1], 9);
	assert_int_equal(s.len[1], 60);
	assert_int_equal(s.at[1], 16480);
	assert_int_equal(sw_queue_bytes(q, 100000), 0);
	sw_queue_destroy(q);
}

static void test_params(void **state)
{
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .buffer_bytes = 128 * 1024,
				     .flow_slots = 64, .lossless_bytes = (1ull << 30) + 1 };
	char err[200];
	(void)state;

	assert_int_equal(sw_queue_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "lossless"));
	p.lossless_bytes = 1ull << 30;
	p.buffer_bytes = 1ull << 30;
	assert_int_equal(sw_queue_check(&p, err, sizeof(err)), -EINVAL);   /* store > 4 GB */
	p.buffer_bytes = 128 * 1024;
	p.lossless_bytes = 16 << 20;
	assert_int_equal(sw_queue_check(&p, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_and_release),
		cmocka_unit_test(test_hold_committed_and_empty),
		cmocka_unit_test(test_lossless_admission),
		cmocka_unit_test(test_depart_hook),
		cmocka_unit_test(test_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
