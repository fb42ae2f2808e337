/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace's one JSON reader: qpace-switch's stats dump (read by qpace-bench and the tests),
 * and the tests' checks of what the printer (qpace/out.h) writes.
 *
 * jsonr_walk parses a whole document and calls @fn once per scalar with its path: object
 * keys and array indexes joined by '.', e.g. "switches.0.ports.2.drop_tail". Numbers come as
 * double (and exact uint64 when they are whole and fit); strings are unescaped (every JSON
 * escape; \uXXXX, surrogate pairs included, as UTF-8; \u0000 is refused, a C string cannot
 * hold it) and cut to JSONR_MAX_PATH - 1 bytes. Depth and path length are bounded; input is
 * untrusted: any syntax error stops the walk with -EINVAL and the byte offset in @err.
 */
#ifndef QPACE_JSONR_H
#define QPACE_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONR_MAX_DEPTH 32
#define JSONR_MAX_PATH 256
#define JSONR_MAX_FILE (64 << 20)      /* jsonr_walk_file reads at most this */

enum jsonr_type { JSONR_NUM, JSONR_STR, JSONR_BOOL, JSONR_NULL };

struct jsonr_val {
	enum jsonr_type type;
	double num;
	uint64_t u64;                /* JSONR_NUM: exact when whole and 0..2^64-1 */
	bool is_u64;
	const char *str;             /* JSONR_STR: NUL-terminated, valid during the call */
	bool boolean;
};

typedef void (*jsonr_fn)(void *arg, const char *path, const struct jsonr_val *v);

/* 0, or -EINVAL with "JSON: why at byte N" in @err. */
int jsonr_walk(const char *text, size_t len, jsonr_fn fn, void *arg, char *err, size_t errlen);
/* The same over a whole file: 0, or -errno (-EFBIG over JSONR_MAX_FILE) with "PATH: why". */
int jsonr_walk_file(const char *path, jsonr_fn fn, void *arg, char *err, size_t errlen);

#endif
