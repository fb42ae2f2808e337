/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A seeded, deterministic random number generator with a fixed algorithm, for workloads
 * and anything else whose output must repeat byte for byte from a seed.
 *
 *   state    xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
 *            generators", ACM TOMS 2021; prng.di.unimi.it): four 64-bit words, period
 *            2^256 - 1, every output bit passes BigCrush.
 *   seeding  the four words are the next four outputs of splitmix64 (Steele, Lea and
 *            Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) started
 *            at the seed, as the xoshiro authors recommend; a stream number is folded into
 *            the seed first through splitmix64's output function, so (seed, stream) pairs
 *            give unrelated sequences (one stream per flow group: adding a group does not
 *            change the others' draws).
 *   unit     53 high bits of one output times 2^-53: uniform on [0, 1), every double a
 *            multiple of 2^-53.
 *   below    Lemire's multiply-shift with rejection ("Fast random integer generation in an
 *            interval", ACM TOMACS 2019): exactly uniform on [0, n).
 *   exp      -mean * ln(1 - unit), the logarithm computed here with + - * / only (frexp,
 *            then the atanh series to z^23), so the draws do not depend on the C library's
 *            log and are the same on every IEEE-754 machine.
 *
 * The same seed gives the same sequence on every machine and build: nothing here reads a
 * clock, an address or the environment.
 */
#ifndef QPACE_RNG_H
#define QPACE_RNG_H

#include <stdint.h>

struct qp_rng {
	uint64_t s[4];
};

/* splitmix64: advance *state by the golden gamma and return its mixed value. */
uint64_t qp_splitmix64(uint64_t *state);
/* splitmix64's output function alone: a bijection of 64-bit words (a good hash). */
uint64_t qp_mix64(uint64_t x);

void qp_rng_seed(struct qp_rng *r, uint64_t seed);
/* Stream @stream of @seed (stream 0 is not the same as qp_rng_seed(seed)). */
void qp_rng_seed_stream(struct qp_rng *r, uint64_t seed, uint64_t stream);
uint64_t qp_rng_next(struct qp_rng *r);
double qp_rng_unit(struct qp_rng *r);                  /* [0, 1) */
uint64_t qp_rng_below(struct qp_rng *r, uint64_t n);   /* [0, n); 0 when n is 0 */
double qp_rng_exp(struct qp_rng *r, double mean);      /* exponential, mean @mean */
/* ln(x) for finite x > 0 with + - * / only (|error| below 1e-15 relative); -inf for 0. */
double qp_ln(double x);

#endif
