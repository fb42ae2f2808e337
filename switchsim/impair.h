/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Impairments of the link out of a port: what happens to a frame after it leaves the
 * egress queue and before the next hop gets it. Pure: a frame, its leave time and the
 * port's seeded generators go in; a verdict comes out (time passed in, no I/O), so the
 * real-time switch and a virtual-time driver run the same decisions.
 *
 * Per frame, in this order (each kind draws from a generator of its own, seeded from the
 * port's seed, and draws for every frame, so one kind's pattern does not change when
 * another is switched on):
 *   loss     lost with probability `loss` (Bernoulli)
 *   ge       Gilbert-Elliott bursty loss (E. N. Gilbert, "Capacity of a burst-noise
 *            channel", BSTJ 39, 1960; E. O. Elliott, "Estimates of error rates for codes on
 *            burst-noise channels", BSTJ 42, 1963): a two-state Markov chain per port. The
 *            frame is lost with the loss probability of the state it finds (bad: H, good:
 *            K), then the chain moves (good -> bad with P, bad -> good with R). H and K
 *            are loss probabilities, i.e. 1-h and 1-k of Gilbert-Elliott's notation, in
 *            the order of netem's `loss gemodel p r 1-h 1-k`. With H = 100%, K = 0 (the
 *            defaults) losses come in bursts of mean length 1/R, at a mean rate
 *            P/(P+R).
 *   corrupt  one bit, uniform over the bytes after the Ethernet header of an IPv4 frame,
 *            is flipped: receivers must catch it (IPv4 header checksum, a UDP checksum,
 *            the ICRC), except in the few bits no check covers by design (counted apart:
 *            a RoCEv2 BTH's FECN/BECN/reserved byte, which the ICRC masks, and the
 *            payload of UDP sent without a checksum). Other frames (ARP) have no
 *            checksum above the Ethernet FCS, which the model has passed: left alone.
 *   dup      a second copy leaves right behind the frame
 *   jitter   extra delay uniform in [0, jitter]; FIFO is kept: a frame never leaves
 *            before the one ahead of it (its leave time is at least the previous one's)
 *   reorder  held back by reorder_ns beyond its (jittered) leave time, so the frames
 *            behind it pass it
 * A lost frame is not corrupted, duplicated or delayed. Delayed frames wait in one of two
 * FIFO delay lines (jitter, reorder) with their metadata; the caller takes them out when
 * their time comes (sw_impair_next_ns, sw_impair_take) and gives their room back
 * (sw_impair_release) once it has handed them on.
 */
#ifndef SW_IMPAIR_H
#define SW_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

#define SW_IMPAIR_DELAY_MAX QP_NS_PER_S          /* jitter and reorder delay: at most 1 s */
#define SW_IMPAIR_REORDER_NS (50 * QP_NS_PER_US) /* default hold-back of a reordered frame */

/* Probabilities are fractions 0..1 (written as percentages: 1% = 0.01). All zero: off. */
struct sw_impair_params {
	double loss;
	double ge_p, ge_r;          /* ge_p 0: no Gilbert-Elliott */
	double ge_bad, ge_good;     /* loss probability in the bad (H) and good (K) state */
	double corrupt;
	double dup;
	qp_time_ns jitter_ns;
	double reorder;
	qp_time_ns reorder_ns;
	uint64_t seed;
};

/* One counter per outcome, per port. */
struct sw_impair_stats {
	uint64_t impair_loss;        /* lost: random loss */
	uint64_t impair_ge_loss;     /* lost: Gilbert-Elliott */
	uint64_t impair_ge_bad;      /* frames that found the chain in its bad state */
	uint64_t impair_corrupt;     /* frames with a bit flipped (each copy of a dup counts) */
	uint64_t impair_corrupt_unchecked;  /* of those, flips in bits no receiver checks */
	uint64_t impair_dup;         /* second copies sent */
	uint64_t impair_jitter;      /* frames delayed by jitter */
	uint64_t impair_reorder;     /* frames held back so that later ones pass */
	uint64_t impair_delay_ns;    /* extra delay given, summed over frames */
	uint64_t impair_hold_drops;  /* a delay line was full: lost (sized so it cannot be) */
};

/* A held frame handed back by sw_impair_take: valid until sw_impair_release. */
struct sw_impair_out {
	uint8_t *frame;
	uint16_t len;
	const void *meta;          /* NULL when none was given */
	uint16_t meta_len;
	uint8_t copies;            /* 1, or 2 when duplicated */
	qp_time_ns leave_ns;
};

struct sw_impair;

/* True when @p impairs anything. */
bool sw_impair_on(const struct sw_impair_params *p);
/* 0, or -EINVAL with "what 'value': accepted range" in @err. */
int sw_impair_check(const struct sw_impair_params *p, char *err, size_t len);
/* The spec text of `--impair` and `impair=` (impair_spec.c): "off", or comma-separated
 * loss=P%, ge=P%:R%[:H%[:K%]], corrupt=P%, dup=P%, jitter=TIME, reorder=P%[:TIME],
 * seed=N. 0, or -EINVAL with "KEY 'VALUE': why, accepted ..." in @err; @out is written
 * only on success. */
int sw_impair_parse(struct sw_impair_params *out, const char *spec, char *err, size_t len);
/* The same text back ("off" when nothing is on); returns buf. */
const char *sw_impair_format(const struct sw_impair_params *p, char *buf, size_t len);

/* State for a port of @rate_bps whose frames carry up to @meta_max bytes of metadata:
 * generators, the Gilbert-Elliott state, delay lines sized for every frame the port can
 * send within the longest hold. NULL with a message when @p is bad or memory is short;
 * call only when sw_impair_on(p). */
struct sw_impair *sw_impair_create(const struct sw_impair_params *p, qp_rate_bps rate_bps,
				   size_t meta_max, char *err, size_t len);
void sw_impair_destroy(struct sw_impair *im);

/* A frame of @len bytes leaves at @leave_ns: returns how many copies to hand on now (1 or
 * 2), or 0 when it is lost or held (a copy of it and of @meta is kept and leaves later).
 * A corrupted frame has its bit flipped in @frame. */
unsigned sw_impair_frame(struct sw_impair *im, uint8_t *frame, uint16_t len, const void *meta,
			 uint16_t meta_len, qp_time_ns leave_ns);
/* When the next held frame leaves; QP_TIME_NEVER when none waits. */
qp_time_ns sw_impair_next_ns(const struct sw_impair *im);
/* Take the held frame that leaves next into @o: false when none waits. */
bool sw_impair_take(struct sw_impair *im, struct sw_impair_out *o);
/* Every frame taken so far has been handed on: give its room back. */
void sw_impair_release(struct sw_impair *im);
const struct sw_impair_stats *sw_impair_stats(const struct sw_impair *im);

#endif
