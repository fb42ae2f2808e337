/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading a fuzz input as a script: fixed-width numbers and byte strings taken from the
 * front, zeros once it runs out (so every input is a complete script). For the targets
 * that drive a state machine (tests/fuzz/fuzz_*.c). */
#ifndef QPACE_FUZZ_INPUT_H
#define QPACE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fz_num(struct fz *f, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (f->n ? *f->p : 0);
		if (f->n) {
			f->p++;
			f->n--;
		}
	}
	return v;
}

static inline uint8_t fz_u8(struct fz *f) { return (uint8_t)fz_num(f, 1); }
static inline uint16_t fz_u16(struct fz *f) { return (uint16_t)fz_num(f, 2); }
static inline uint32_t fz_u32(struct fz *f) { return (uint32_t)fz_num(f, 4); }
static inline uint64_t fz_u64(struct fz *f) { return fz_num(f, 8); }

/* Up to @want bytes (fewer at the end): a pointer into the input, the count in *got. */
static inline const uint8_t *fz_bytes(struct fz *f, size_t want, size_t *got)
{
	const uint8_t *p = f->p;

	*got = want < f->n ? want : f->n;
	f->p += *got;
	f->n -= *got;
	return p;
}

/* One of @n choices. */
static inline unsigned fz_pick(struct fz *f, unsigned n)
{
	return n ? fz_u8(f) % n : 0;
}

#endif
