/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A deterministic generator for tests (splitmix64): fixed seeds, same sequence everywhere. */
#ifndef QPACE_TEST_RNG_H
#define QPACE_TEST_RNG_H

#include <stdint.h>

static inline uint64_t test_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
