/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Parsing and printing of quantities with units, shared by every command line and config
 * parser. Each parser reads the whole string (no trailing garbage), rejects negatives,
 * overflow and NaN, and returns 0 or -EINVAL.
 *
 *   rate:  "25G", "100M", "1.5Gbps", "40000000"  -> bits per second (SI: 1G = 1e9)
 *   time:  "10us", "1.5ms", "900ns", "2s", "0"     -> ns (a bare number is ns)
 *   bytes: "128K", "1M", "1500", "64KiB"          -> bytes (binary: 1K = 1024)
 */
#ifndef QPACE_UNITS_H
#define QPACE_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

int qp_parse_rate(const char *s, qp_rate_bps *out);
int qp_parse_time(const char *s, qp_time_ns *out);
int qp_parse_bytes(const char *s, uint64_t *out);
int qp_parse_double(const char *s, double *out);
int qp_parse_u64(const char *s, uint64_t *out);
/* INT sampling: "every=K,interval=TIME" (either or both, ',' or '/' between; a bare number
 * is every=K), K in 1..QP_INT_EVERY_MAX. Sets only what @s names. */
#define QP_INT_EVERY_MAX 1000000u
#define QP_INT_SAMPLE_ACCEPTED "every=K (1..1000000) and/or interval=TIME (at most one " \
	"per QP per TIME), e.g. every=4,interval=10us"
int qp_parse_int_sample(const char *s, uint32_t *every, qp_time_ns *interval_ns);

/* @v rounded to the nearest whole number, saturated to 0..UINT64_MAX (NaN and negatives:
 * 0). How a double derived from input becomes an integer: a plain cast of a value the
 * type cannot hold is undefined behaviour, and llround stops at 2^63. */
uint64_t qp_u64_round_sat(double v);

/* "1.25G", "800M"... into buf; returns buf. */
const char *qp_fmt_rate(qp_rate_bps bps, char *buf, size_t len);
/* "12.5us", "3ms"... into buf; returns buf. */
const char *qp_fmt_time(qp_time_ns ns, char *buf, size_t len);
/* "16K", "48M", "1500"... into buf, exactly: the largest binary unit that divides the
 * count (qp_parse_bytes reads it back); returns buf. */
const char *qp_fmt_bytes(uint64_t bytes, char *buf, size_t len);
/* Rates and times exactly, in the same way: "100G", "2500M", "1234" (SI, as qp_parse_rate
 * reads them); "10ms", "1500ns", "0" (qp_parse_time). For files that must read back. */
const char *qp_fmt_rate_exact(qp_rate_bps bps, char *buf, size_t len);
const char *qp_fmt_time_exact(qp_time_ns ns, char *buf, size_t len);
/* For display: "1500", "64K", "1.5M" — binary prefixes, one decimal below 10 (not
 * exact: qp_fmt_bytes is the form qp_parse_bytes reads back). */
const char *qp_fmt_bytes_short(uint64_t bytes, char *buf, size_t len);

#endif
