/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* SipHash-2-4: a keyed 64-bit pseudorandom function, used as the MAC of feedback messages.
 *
 * Aumasson and Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012
 * (https://131002.net/siphash/siphash.pdf). Written from the paper's definition (§2):
 * four 64-bit words v0..v3 initialised from the 128-bit key, c = 2 SipRounds per 8-byte
 * little-endian message word, the last word carrying the length mod 256 in its top byte,
 * then d = 4 finalisation rounds after v2 ^= 0xff; the output is v0 ^ v1 ^ v2 ^ v3.
 * Checked against the paper's appendix vectors and the reference implementation's 64.
 */
#ifndef QPACE_SIPHASH_H
#define QPACE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define QP_SIPHASH_KEY_BYTES 16

/* The key as the paper splits it: k0 = bytes 0..7, k1 = bytes 8..15, little-endian. */
struct qp_siphash_key {
	uint64_t k0, k1;
};

/* Load a 16-byte key. */
void qp_siphash_key_load(struct qp_siphash_key *k, const uint8_t bytes[QP_SIPHASH_KEY_BYTES]);

/* SipHash-2-4 of @len bytes at @msg. */
uint64_t qp_siphash24(const struct qp_siphash_key *k, const void *msg, size_t len);

#endif
