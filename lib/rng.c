/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* xoshiro256** seeded by splitmix64, and draws from it (see qpace/rng.h). */
#include <math.h>

#include "qpace/rng.h"

#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

uint64_t qp_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t qp_splitmix64(uint64_t *state)
{
	return qp_mix64(*state += GOLDEN_GAMMA);
}

void qp_rng_seed(struct qp_rng *r, uint64_t seed)
{
	uint64_t sm = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = qp_splitmix64(&sm);
	/* All-zero is xoshiro's one fixed point; splitmix64 cannot give four zero words in a
	 * row (its outputs are a bijection of distinct states), but say so in code. */
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = GOLDEN_GAMMA;
}

void qp_rng_seed_stream(struct qp_rng *r, uint64_t seed, uint64_t stream)
{
	qp_rng_seed(r, seed ^ qp_mix64(stream + GOLDEN_GAMMA));
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t qp_rng_next(struct qp_rng *r)
{
	uint64_t *s = r->s;
	const uint64_t out = rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double qp_rng_unit(struct qp_rng *r)
{
	return (double)(qp_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t qp_rng_below(struct qp_rng *r, uint64_t n)
{
	__extension__ typedef unsigned __int128 u128;
	u128 m;
	uint64_t low;

	if (!n)
		return 0;
	m = (u128)qp_rng_next(r) * n;
	low = (uint64_t)m;
	if (low < n) {
		const uint64_t threshold = -n % n;   /* 2^64 mod n */
		while (low < threshold) {
			m = (u128)qp_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double qp_ln(double x)
{
	static const double ln2 = 0x1.62e42fefa39efp-1;
	double m, z, z2, sum;
	int e;

	if (!(x > 0))
		return x == 0 ? -INFINITY : NAN;
	if (isinf(x))
		return x;
	m = frexp(x, &e);                 /* x = m * 2^e, m in [0.5, 1): exact */
	if (m < 0x1.6a09e667f3bcdp-1) {  /* sqrt(1/2): keep m in [0.707, 1.414) */
		m *= 2;
		e--;
	}
	z = (m - 1) / (m + 1);            /* |z| <= 0.1716 */
	z2 = z * z;
	/* ln m = 2 atanh z = 2 (z + z^3/3 + ... + z^23/23); the next term is below 1e-19 */
	sum = 1.0 / 23;
	for (int k = 21; k >= 1; k -= 2)
		sum = sum * z2 + 1.0 / k;
	return 2 * z * sum + e * ln2;
}

double qp_rng_exp(struct qp_rng *r, double mean)
{
	/* 1 - u is in (0, 1]: the logarithm is finite */
	return -mean * qp_ln(1.0 - qp_rng_unit(r));
}
