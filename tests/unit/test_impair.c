/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Link impairments (switchsim/impair.c) with injected time and fixed seeds: each rate
 * within 5 sigma of its binomial expectation over 1e5 frames, Gilbert-Elliott bursts of
 * mean length 1/R at a mean rate P/(P+R), one flipped bit per corrupted frame (and a
 * receiver refusing every one), duplicates, reordering that really reorders, jitter that
 * keeps FIFO, delay lines that keep metadata and give their room back, determinism by
 * seed, and the spec parser. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/bytes.h"
#include "qpace/frame.h"
#include "qpace/soft_host.h"
#include "impair.h"

#define N 100000
#define FLEN 1024
#define SEQ_OFF 100            /* where each test frame carries its number */
#define GAP_NS 1000            /* frames leave 1 us apart */

static struct sw_impair *mk(const char *spec, uint64_t seed)
{
	struct sw_impair_params p;
	struct sw_impair *im;
	char err[300];

	if (sw_impair_parse(&p, spec, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	p.seed = seed;
	im = sw_impair_create(&p, 10 * QP_GBPS, 64, err, sizeof(err));
	if (!im)
		fail_msg("%s: %s", spec, err);
	return im;
}

static void fill(uint8_t *f, uint32_t seq)
{
	for (int i = 0; i < FLEN; i++)
		f[i] = (uint8_t)(i * 7 + 3);
	qp_put16(f + 12, FRAME_ETHERTYPE_IPV4);   /* only IPv4 frames are corrupted */
	qp_put32(f + SEQ_OFF, seq);
}

/* What left the port: frame numbers in the order they left, with times and copies. */
struct out {
	uint32_t *seq;
	qp_time_ns *t;
	uint8_t *copies;
	size_t n;
	uint64_t corrupted, bit_min, bit_max, flips_ok;
	bool by_position;   /* nothing reorders or loses: frame i leaves i-th (a flip may
			     * hit the number it carries) */
};

static void out_add(struct out *o, const uint8_t *f, uint8_t copies, qp_time_ns t)
{
	uint8_t ref[FLEN];
	int bits = 0, at = -1;

	o->seq[o->n] = qp_get32(f + SEQ_OFF);
	fill(ref, o->by_position ? (uint32_t)o->n : o->seq[o->n]);
	for (int i = 0; i < FLEN; i++)
		for (int b = 0; b < 8; b++)
			if ((f[i] ^ ref[i]) & (1u << b)) {
				bits++;
				at = i * 8 + b;
			}
	if (bits) {
		o->corrupted++;
		o->flips_ok += bits == 1 && at >= 14 * 8;
		o->bit_min = (uint64_t)at < o->bit_min ? (uint64_t)at : o->bit_min;
		o->bit_max = (uint64_t)at > o->bit_max ? (uint64_t)at : o->bit_max;
	}
	o->t[o->n] = t;
	o->copies[o->n++] = copies;
}

/* Frames 0..n-1 leave @im's port GAP_NS apart; held frames go out when their time comes
 * (before a new frame of the same time, as the pipeline does). */
static void run(struct sw_impair *im, size_t n, struct out *o)
{
	uint8_t f[FLEN];
	struct sw_impair_out h;

	o->seq = calloc(n, sizeof(*o->seq));
	o->t = calloc(n, sizeof(*o->t));
	o->copies = calloc(n, 1);
	o->n = 0;
	o->corrupted = o->flips_ok = o->bit_max = 0;
	o->bit_min = UINT64_MAX;
	for (size_t i = 0; i <= n; i++) {
		qp_time_ns leave = i < n ? (qp_time_ns)(i + 1) * GAP_NS : QP_TIME_NEVER;
		unsigned c;

		while (sw_impair_next_ns(im) != QP_TIME_NEVER && sw_impair_next_ns(im) <= leave) {
			qp_time_ns due = sw_impair_next_ns(im);
			assert_true(sw_impair_take(im, &h));
			assert_int_equal(h.leave_ns, due);
			out_add(o, h.frame, h.copies, h.leave_ns);
			sw_impair_release(im);
		}
		if (i == n)
			break;
		fill(f, (uint32_t)i);
		c = sw_impair_frame(im, f, FLEN, NULL, 0, leave);
		if (c)
			out_add(o, f, (uint8_t)c, leave);
	}
}

static void out_free(struct out *o)
{
	free(o->seq);
	free(o->t);
	free(o->copies);
}

/* @k of @n within 5 sigma of n * p. */
static void near_binomial(const char *what, uint64_t k, double n, double p)
{
	double sigma = sqrt(n * p * (1 - p));

	print_message("%-22s %6llu of %.0f, expected %.0f +- %.0f (5 sigma)\n", what,
		      (unsigned long long)k, n, n * p, 5 * sigma);
	assert_true(fabs((double)k - n * p) <= 5 * sigma);
}

static void test_loss_rate(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct sw_impair *im = mk("loss=1%", seed);
		struct out o = { 0 };

		run(im, N, &o);
		near_binomial("loss=1%", N - o.n, N, 0.01);
		assert_int_equal(sw_impair_stats(im)->impair_loss, N - o.n);
		assert_int_equal(o.corrupted, 0);
		for (size_t i = 1; i < o.n; i++)   /* nothing else happens to the rest */
			assert_true(o.seq[i] > o.seq[i - 1] && o.copies[i] == 1);
		out_free(&o);
		sw_impair_destroy(im);
	}
}

/* One bit per corrupted frame, never in the Ethernet header, anywhere after it. */
static void test_corrupt_one_bit(void **state)
{
	struct sw_impair *im = mk("corrupt=1%", 5);
	struct out o = { .by_position = true };

	(void)state;
	run(im, N, &o);
	assert_int_equal(o.n, N);
	near_binomial("corrupt=1%", o.corrupted, N, 0.01);
	assert_int_equal(o.flips_ok, o.corrupted);
	assert_int_equal(sw_impair_stats(im)->impair_corrupt, o.corrupted);
	print_message("flipped bits between bit %llu and %llu of %d\n",
		      (unsigned long long)o.bit_min, (unsigned long long)o.bit_max, FLEN * 8);
	assert_true(o.bit_min < 40 * 8);           /* the IPv4 header is hit too */
	assert_true(o.bit_max > (FLEN - 40) * 8);  /* and the tail (the ICRC) */
	out_free(&o);
	sw_impair_destroy(im);
}

static void test_dup_rate(void **state)
{
	struct sw_impair *im = mk("dup=1%", 9);
	struct out o = { 0 };
	uint64_t twice = 0;

	(void)state;
	run(im, N, &o);
	assert_int_equal(o.n, N);
	for (size_t i = 0; i < o.n; i++)
		twice += o.copies[i] == 2;
	near_binomial("dup=1%", twice, N, 0.01);
	assert_int_equal(sw_impair_stats(im)->impair_dup, twice);
	out_free(&o);
	sw_impair_destroy(im);
}

/* reorder=1%:20us with frames 1 us apart: each held frame leaves 20 us late, the 19
 * frames behind it that are not held themselves pass it (the 20th leaves at the same
 * time, after it), everything else keeps its order. */
static void test_reorder_reorders(void **state)
{
	struct sw_impair *im = mk("reorder=1%:20us", 11);
	struct out o = { 0 };
	uint64_t held = 0, passed = 0;
	uint32_t last = 0;
	bool first = true;

	(void)state;
	run(im, N, &o);
	assert_int_equal(o.n, N);
	for (size_t i = 0; i < o.n; i++) {
		qp_time_ns leave = (qp_time_ns)(o.seq[i] + 1) * GAP_NS;
		if (o.t[i] == leave + 20 * QP_NS_PER_US) {
			held++;
			/* the frames that left between its own time and now all came after it */
			for (size_t k = i; k-- > 0 && o.t[k] > leave;)
				passed += o.seq[k] > o.seq[i];
			continue;
		}
		assert_int_equal(o.t[i], leave);
		assert_true(first || o.seq[i] > last);
		last = o.seq[i];
		first = false;
	}
	near_binomial("reorder=1%", held, N, 0.01);
	assert_int_equal(sw_impair_stats(im)->impair_reorder, held);
	print_message("%llu frames passed held ones (%.2f each)\n", (unsigned long long)passed,
		      (double)passed / (double)held);
	assert_true(passed >= 18 * held && passed <= 19 * held);
	out_free(&o);
	sw_impair_destroy(im);
}

/* jitter=10us, frames 1 us apart: FIFO, each frame delayed 0..10 us. */
static void test_jitter_fifo(void **state)
{
	struct sw_impair *im = mk("jitter=10us", 13);
	struct out o = { 0 };
	double sum = 0;

	(void)state;
	run(im, N, &o);
	assert_int_equal(o.n, N);
	for (size_t i = 0; i < o.n; i++) {
		qp_time_ns leave = (qp_time_ns)(o.seq[i] + 1) * GAP_NS;
		assert_int_equal(o.seq[i], i);
		assert_true(o.t[i] >= leave && o.t[i] <= leave + 10 * QP_NS_PER_US);
		sum += (double)(o.t[i] - leave);
	}
	print_message("jitter=10us: mean extra delay %.2f us, %llu of %d frames delayed\n",
		      sum / N / 1e3, (unsigned long long)sw_impair_stats(im)->impair_jitter, N);
	/* at least the uniform draw's mean (FIFO only adds), at most the bound */
	assert_true(sum / N >= 5000 && sum / N <= 10000);
	assert_int_equal(sw_impair_stats(im)->impair_delay_ns, (uint64_t)sum);
	out_free(&o);
	sw_impair_destroy(im);
}

/* Both: every frame out once, in time order; the frames not held back keep FIFO. */
static void test_jitter_and_reorder(void **state)
{
	struct sw_impair *im = mk("jitter=5us,reorder=2%:8us,dup=1%", 17);
	struct out o = { 0 };
	uint8_t *seen = calloc(N, 1);
	uint64_t inversions = 0;

	(void)state;
	run(im, N, &o);
	assert_int_equal(o.n, N);
	for (size_t i = 0; i < o.n; i++) {
		assert_int_equal(seen[o.seq[i]], 0);
		seen[o.seq[i]] = 1;
		if (i) {
			assert_true(o.t[i] >= o.t[i - 1]);
			inversions += o.seq[i] < o.seq[i - 1];
		}
	}
	print_message("%llu inversions, %llu held back\n", (unsigned long long)inversions,
		      (unsigned long long)sw_impair_stats(im)->impair_reorder);
	assert_true(inversions > 0 && inversions <= sw_impair_stats(im)->impair_reorder);
	assert_int_equal(sw_impair_stats(im)->impair_hold_drops, 0);
	free(seen);
	out_free(&o);
	sw_impair_destroy(im);
}

/* Losses per burst and bursts per frame under ge=P:R[:H:K]. */
static void ge_run(const char *spec, uint64_t seed, uint64_t *lost, uint64_t *bursts,
		   uint64_t *ones, uint64_t *bad)
{
	struct sw_impair *im = mk(spec, seed);
	uint8_t f[FLEN];
	bool prev = false;

	*lost = *bursts = *ones = 0;
	fill(f, 0);
	for (int i = 0, run_len = 0; i <= N; i++) {
		bool l = i < N && sw_impair_frame(im, f, FLEN, NULL, 0, (qp_time_ns)i) == 0;
		if (l) {
			*lost += 1;
			run_len++;
		} else if (prev) {
			*bursts += 1;
			*ones += run_len == 1;
			run_len = 0;
		}
		prev = l;
	}
	assert_int_equal(sw_impair_stats(im)->impair_ge_loss, *lost);
	*bad = sw_impair_stats(im)->impair_ge_bad;
	sw_impair_destroy(im);
}

static void test_gilbert_elliott(void **state)
{
	uint64_t lost, bursts, ones, bad;
	double mean;

	(void)state;
	/* P 1%, R 25%, H 100%, K 0%: bursts of mean 4 frames, mean loss 1/26 */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		ge_run("ge=1%:25%", seed, &lost, &bursts, &ones, &bad);
		mean = (double)lost / (double)bursts;
		print_message("ge=1%%:25%%: %llu lost of %d (expected %.0f), %llu bursts of mean "
			      "%.2f (expected 4), %.1f%% of length 1 (expected 25%%)\n",
			      (unsigned long long)lost, N, N / 26.0, (unsigned long long)bursts,
			      mean, 100.0 * (double)ones / (double)bursts);
		assert_true(lost == bad);
		assert_true(fabs(mean - 4) < 0.5);
		assert_true(fabs((double)lost - N / 26.0) < 0.2 * N / 26.0);
		near_binomial("bursts of length 1", ones, (double)bursts, 0.25);
	}
	/* H 50%, K 1%: mean loss (P H + R K) / (P + R) = (0.5 + 0.25) / 26 */
	ge_run("ge=1%:25%:50%:1%", 4, &lost, &bursts, &ones, &bad);
	print_message("ge=1%%:25%%:50%%:1%%: %llu lost (expected %.0f), %llu frames in the bad "
		      "state (expected %.0f)\n", (unsigned long long)lost, N * 0.75 / 26,
		      (unsigned long long)bad, N / 26.0);
	assert_true(fabs((double)lost - N * 0.75 / 26) < 0.2 * N * 0.75 / 26);
	assert_true(fabs((double)bad - N / 26.0) < 0.2 * N / 26.0);
}

/* The same seed gives the same frames, bits and times; another seed does not; and one
 * kind's pattern does not move when another kind is switched on. */
static void test_determinism(void **state)
{
	struct out a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 }, e = { 0 };
	struct sw_impair *ia = mk("loss=1%,corrupt=1%,dup=1%,reorder=1%,jitter=3us", 21);
	struct sw_impair *ib = mk("loss=1%,corrupt=1%,dup=1%,reorder=1%,jitter=3us", 21);
	struct sw_impair *ic = mk("loss=1%,corrupt=1%,dup=1%,reorder=1%,jitter=3us", 22);
	struct sw_impair *id = mk("loss=1%", 21), *ie = mk("loss=1%,dup=5%,jitter=2us", 21);

	(void)state;
	run(ia, N / 10, &a);
	run(ib, N / 10, &b);
	run(ic, N / 10, &c);
	run(id, N / 10, &d);
	run(ie, N / 10, &e);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.seq, b.seq, a.n * sizeof(*a.seq));
	assert_memory_equal(a.t, b.t, a.n * sizeof(*a.t));
	assert_memory_equal(a.copies, b.copies, a.n);
	assert_int_equal(a.corrupted, b.corrupted);
	assert_int_equal(a.bit_min, b.bit_min);
	assert_true(a.n != c.n || memcmp(a.seq, c.seq, a.n * sizeof(*a.seq)) ||
		    memcmp(a.t, c.t, a.n * sizeof(*a.t)));
	assert_int_equal(d.n, e.n);   /* the same frames lost */
	assert_memory_equal(d.seq, e.seq, d.n * sizeof(*d.seq));
	out_free(&a);
	out_free(&b);
	out_free(&c);
	out_free(&d);
	out_free(&e);
	sw_impair_destroy(ia);
	sw_impair_destroy(ib);
	sw_impair_destroy(ic);
	sw_impair_destroy(id);
	sw_impair_destroy(ie);
}

/* Held frames come back with their metadata, and the lines give their room back: a
 * million frames through a line sized for ~50 of them lose none. */
static void test_held_meta_and_room(void **state)
{
	struct sw_impair_params p;
	struct sw_impair *im;
	struct sw_impair_out o;
	uint8_t f[FLEN], meta[40];
	char err[200];

	(void)state;
	assert_int_equal(sw_impair_parse(&p, "reorder=100%:5us", err, sizeof(err)), 0);
	im = sw_impair_create(&p, 10 * QP_GBPS, sizeof(meta), err, sizeof(err));
	assert_non_null(im);
	for (uint32_t i = 0; i < 1000000; i++) {
		qp_time_ns leave = (qp_time_ns)i * 1000;   /* 1 KB at 10 Gb/s: 820 ns */
		while (sw_impair_next_ns(im) <= leave) {
			assert_true(sw_impair_take(im, &o));
			assert_int_equal(o.len, FLEN);
			assert_int_equal(o.meta_len, sizeof(meta));
			assert_int_equal(qp_get32(o.meta), qp_get32(o.frame + SEQ_OFF));
			assert_int_equal(o.leave_ns, (qp_time_ns)qp_get32(o.frame + SEQ_OFF) * 1000 +
							  5000);
			sw_impair_release(im);
		}
		fill(f, i);
		qp_put32(meta, i);
		assert_int_equal(sw_impair_frame(im, f, FLEN, meta, sizeof(meta), leave), 0);
	}
	assert_int_equal(sw_impair_stats(im)->impair_reorder, 1000000);
	assert_int_equal(sw_impair_stats(im)->impair_hold_drops, 0);
	sw_impair_destroy(im);
}

/* Frames offered far faster than the port's rate overflow a line: lost and counted,
 * never written over what it holds. */
static void test_line_full_counted(void **state)
{
	struct sw_impair_params p;
	struct sw_impair *im;
	struct sw_impair_out o;
	uint8_t f[FLEN];
	char err[200];
	uint64_t out = 0;

	(void)state;
	assert_int_equal(sw_impair_parse(&p, "reorder=100%:1ms", err, sizeof(err)), 0);
	im = sw_impair_create(&p, 1000000, 0, err, sizeof(err));   /* 1 Mb/s */
	assert_non_null(im);
	for (uint32_t i = 0; i < 5000; i++) {
		fill(f, i);
		sw_impair_frame(im, f, FLEN, NULL, 0, i);
	}
	while (sw_impair_take(im, &o)) {
		uint8_t ref[FLEN];
		fill(ref, qp_get32(o.frame + SEQ_OFF));
		assert_memory_equal(o.frame, ref, FLEN);
		out++;
	}
	sw_impair_release(im);
	print_message("%llu held, %llu lost to a full line\n", (unsigned long long)out,
		      (unsigned long long)sw_impair_stats(im)->impair_hold_drops);
	assert_true(sw_impair_stats(im)->impair_hold_drops > 0);
	assert_int_equal(out + sw_impair_stats(im)->impair_hold_drops, 5000);
	sw_impair_destroy(im);
}

/* Every single-bit flip after the Ethernet header is refused by a receiver, except the
 * ones counted as unchecked: a soft host with no QPs takes an intact frame as far as the
 * QP lookup (no-such-qp), and a corrupted one only when the flip is in the BTH's
 * FECN/BECN/reserved byte, which the ICRC masks by design. */
static void test_receiver_refuses_every_flip(void **state)
{
	struct soft_host_params hp = { .ip = 0x0a000002 };
	struct frame_roce_spec s = {
		.src = { .ip = 0x0a000001 }, .dst = { .ip = 0x0a000002 },
		.bth = { .opcode = FRAME_OP_RC_WRITE_ONLY, .dest_qp = 0x11, .psn = 7 },
		.reth = { .va = 0x1000, .rkey = 9, .dma_len = 256 }, .payload_len = 256,
	};
	struct sw_impair *im = mk("corrupt=100%", 23);
	struct soft_host *h;
	const struct soft_host_stats *st;
	uint8_t f[600];
	char err[200];
	uint64_t refused = 0;
	int n;

	(void)state;
	soft_mac_from_ip(hp.ip, hp.mac);
	soft_mac_from_ip(s.src.ip, s.src.mac);
	memcpy(s.dst.mac, hp.mac, 6);
	h = soft_host_create(&hp, err, sizeof(err));
	assert_non_null(h);
	st = soft_host_stats(h);
	n = frame_build_roce(f, sizeof(f), &s);
	assert_true(n > 0);
	soft_host_input(h, f, (size_t)n, 0);
	assert_int_equal(st->drops[SOFT_DROP_NO_QP], 1);
	for (int i = 0; i < 20000; i++) {
		n = frame_build_roce(f, sizeof(f), &s);
		assert_int_equal(sw_impair_frame(im, f, (uint16_t)n, NULL, 0, 0), 1);
		soft_host_input(h, f, (size_t)n, 0);
	}
	for (int d = 0; d < SOFT_DROP_COUNT; d++) {
		if (st->drops[d])
			print_message("  %-14s %llu\n", soft_drop_str((enum soft_drop)d),
				      (unsigned long long)st->drops[d]);
		refused += st->drops[d];
	}
	print_message("%llu of 20000 flips in unchecked bits (8 of %d)\n",
		      (unsigned long long)sw_impair_stats(im)->impair_corrupt_unchecked,
		      (n - FRAME_ETH_HLEN) * 8);
	assert_int_equal(sw_impair_stats(im)->impair_corrupt, 20000);
	assert_int_equal(st->drops[SOFT_DROP_NO_QP],
			 1 + sw_impair_stats(im)->impair_corrupt_unchecked);
	near_binomial("unchecked flips", sw_impair_stats(im)->impair_corrupt_unchecked, 20000,
		      8.0 / ((n - FRAME_ETH_HLEN) * 8));
	assert_int_equal(refused, 20001);
	assert_true(st->drops[SOFT_DROP_ICRC] > 0 && st->drops[SOFT_DROP_IP_CSUM] > 0 &&
		    st->drops[SOFT_DROP_UDP_CSUM] > 0);
	soft_host_destroy(h);
	sw_impair_destroy(im);
}

static void test_spec(void **state)
{
	struct sw_impair_params p;
	char err[400], buf[200];

	(void)state;
	assert_int_equal(sw_impair_parse(&p, "loss=1%,ge=2%:30%,corrupt=0.1%,dup=0.5%,"
					 "jitter=10us,reorder=1%:20us,seed=7", err, sizeof(err)), 0);
	assert_true(fabs(p.loss - 0.01) < 1e-12 && fabs(p.ge_p - 0.02) < 1e-12 &&
		    fabs(p.ge_r - 0.3) < 1e-12 && p.ge_bad == 1 && p.ge_good == 0 &&
		    fabs(p.corrupt - 0.001) < 1e-12 && fabs(p.dup - 0.005) < 1e-12 &&
		    p.jitter_ns == 10000 && fabs(p.reorder - 0.01) < 1e-12 &&
		    p.reorder_ns == 20000 && p.seed == 7);
	assert_string_equal(sw_impair_format(&p, buf, sizeof(buf)),
			    "loss=1%,ge=2%:30%:100%:0%,corrupt=0.1%,dup=0.5%,jitter=10us,"
			    "reorder=1%:20us,seed=7");
	assert_int_equal(sw_impair_parse(&p, "reorder=1%", err, sizeof(err)), 0);
	assert_int_equal(p.reorder_ns, SW_IMPAIR_REORDER_NS);
	assert_int_equal(sw_impair_parse(&p, "off", err, sizeof(err)), 0);
	assert_false(sw_impair_on(&p));
	assert_string_equal(sw_impair_format(&p, buf, sizeof(buf)), "off");
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "loss=1", "loss '1': a percentage in 0..100%" },
		{ "loss=101%", "loss '101%'" },
		{ "loss=-1%", "loss '-1%'" },
		{ "loss=nan%", "loss 'nan%'" },
		{ "ge=1%", "ge '1%': P%:R%" },
		{ "ge=0%:10%", "ge '0%:10%'" },
		{ "ge=1%:2%:3%:4%:5%", "ge '1%:2%:3%:4%:5%'" },
		{ "reorder=1%:0", "reorder '1%:0'" },
		{ "reorder=1%:2s", "reorder '1%:2s'" },
		{ "jitter=-1us", "jitter '-1us': a time in 0..1s" },
		{ "seed=x", "seed 'x': a whole number" },
		{ "wobble=1%", "unknown key 'wobble' (accepted: loss=P%" },
		{ "loss", "'loss': expected KEY=VALUE" },
		{ "=1%", "'=1%': expected KEY=VALUE" },
		{ "dup=1%,dup=2%", "dup: given twice" },
		{ "loss=1%,", "an empty item" },
		{ "", "empty" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p.loss = 0.5;
		err[0] = 0;
		assert_int_equal(sw_impair_parse(&p, bad[i].spec, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': got \"%s\", want \"%s\"", bad[i].spec, err, bad[i].msg);
		assert_true(p.loss == 0.5);   /* untouched on error */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_rate),
		cmocka_unit_test(test_corrupt_one_bit),
		cmocka_unit_test(test_dup_rate),
		cmocka_unit_test(test_reorder_reorders),
		cmocka_unit_test(test_jitter_fifo),
		cmocka_unit_test(test_jitter_and_reorder),
		cmocka_unit_test(test_gilbert_elliott),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_held_meta_and_room),
		cmocka_unit_test(test_line_full_counted),
		cmocka_unit_test(test_receiver_refuses_every_flip),
		cmocka_unit_test(test_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
