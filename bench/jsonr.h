/* A small JSON reader for qpace-switch's stats dump (and tests of qpace-bench's own JSON).
 *
 * jsonr_walk parses a whole document and calls @fn once per scalar with its path: object
 * keys and array indexes joined by '.', e.g. "switches.0.ports.2.drop_tail". Numbers come as
 * double (and exact uint64 when they are whole and fit), strings unescaped for \" \\ \n \t
 * only (others kept as written). Depth and path length are bounded; input is untrusted: any
 * syntax error stops the walk with -1 and the byte offset in @err.
 */
#ifndef BENCH_JSONR_H
#define BENCH_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONR_MAX_DEPTH 32
#define JSONR_MAX_PATH 256

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

int jsonr_walk(const char *text, size_t len, jsonr_fn fn, void *arg, char *err, size_t errlen);

#endif
