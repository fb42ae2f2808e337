/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Quantity parsing for command lines and config files (see qpace/units.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qpace/units.h"

struct unit {
	const char *suffix;
	double mult;
};

/* Longest suffixes first within a family so "ms" wins over "s". */
static const struct unit rate_units[] = {
	{ "Tbps", 1e12 }, { "Gbps", 1e9 }, { "Mbps", 1e6 }, { "Kbps", 1e3 }, { "bps", 1 },
	{ "T", 1e12 }, { "G", 1e9 }, { "M", 1e6 }, { "K", 1e3 }, { "", 1 },
	{ NULL, 0 },
};
static const struct unit time_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	{ NULL, 0 },
};
static const struct unit byte_units[] = {
	{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
	{ "KB", 1024.0 }, { "MB", 1048576.0 }, { "GB", 1073741824.0 },
	{ "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 }, { "B", 1 }, { "", 1 },
	{ NULL, 0 },
};

/* A non-negative finite number followed by exactly one suffix from @units. */
static int parse_scaled(const char *s, const struct unit *units, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcasecmp(end, u->suffix) == 0 && (u->suffix[0] || !*end)) {
			v *= u->mult;
			if (!(v <= max))
				return -EINVAL;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

uint64_t qp_u64_round_sat(double v)
{
	uint64_t u;

	if (!(v > 0))                          /* NaN, negatives, 0 */
		return 0;
	if (v >= 18446744073709551616.0)       /* 2^64 */
		return UINT64_MAX;
	u = (uint64_t)v;                       /* in range: truncates */
	if (v - (double)u >= 0.5 && u != UINT64_MAX)
		u++;
	return u;
}

/* Case-sensitive for the one-letter byte and rate suffixes would be friendlier to "m" vs
 * "M", but nobody means milli-bits: accept either case. */
int qp_parse_rate(const char *s, qp_rate_bps *out)
{
	double v;
	if (parse_scaled(s, rate_units, 1.8e19, &v))
		return -EINVAL;
	*out = qp_u64_round_sat(v);
	return 0;
}

int qp_parse_time(const char *s, qp_time_ns *out)
{
	double v;
	if (parse_scaled(s, time_units, 1.8e19, &v))
		return -EINVAL;
	*out = qp_u64_round_sat(v);
	return 0;
}

int qp_parse_bytes(const char *s, uint64_t *out)
{
	double v;
	if (parse_scaled(s, byte_units, 1.8e19, &v))
		return -EINVAL;
	*out = qp_u64_round_sat(v);
	return 0;
}

int qp_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

int qp_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_every(const char *s, uint32_t *every)
{
	uint64_t k;

	if (qp_parse_u64(s, &k) || k < 1 || k > QP_INT_EVERY_MAX)
		return -EINVAL;
	*every = (uint32_t)k;
	return 0;
}

int qp_parse_int_sample(const char *s, uint32_t *every, qp_time_ns *interval_ns)
{
	char buf[128], *save = NULL, *tok;
	uint32_t e = *every;
	qp_time_ns iv = *interval_ns;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	if (!parse_every(s, every))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	tok = strtok_r(buf, ",/", &save);
	if (!tok)
		return -EINVAL;
	for (; tok; tok = strtok_r(NULL, ",/", &save)) {
		if (!strncmp(tok, "every=", 6) ? parse_every(tok + 6, &e)
					       : strncmp(tok, "interval=", 9) ||
							 qp_parse_time(tok + 9, &iv))
			return -EINVAL;
	}
	*every = e;
	*interval_ns = iv;
	return 0;
}

static const char *fmt_scaled(double v, const struct unit *units, size_t n, char *buf, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (v >= units[i].mult || i + 1 == n) {
			snprintf(buf, len, "%.4g%s", v / units[i].mult, units[i].suffix);
			return buf;
		}
	}
	return buf;
}

const char *qp_fmt_rate(qp_rate_bps bps, char *buf, size_t len)
{
	static const struct unit u[] = { { "T", 1e12 }, { "G", 1e9 }, { "M", 1e6 }, { "K", 1e3 }, { "", 1 } };
	return fmt_scaled((double)bps, u, sizeof(u) / sizeof(u[0]), buf, len);
}

const char *qp_fmt_time(qp_time_ns ns, char *buf, size_t len)
{
	static const struct unit u[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 } };
	return fmt_scaled((double)ns, u, sizeof(u) / sizeof(u[0]), buf, len);
}

/* Exactly: @v in the largest unit of @u (largest first) that divides it, else plain. */
struct exact_unit {
	const char *suffix;
	uint64_t mult;
};

static const char *fmt_exact(uint64_t v, const struct exact_unit *u, size_t n, char *buf,
			     size_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (v && v % u[i].mult == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(v / u[i].mult), u[i].suffix);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

const char *qp_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const struct exact_unit u[] = { { "G", 1ULL << 30 }, { "M", 1ULL << 20 },
					       { "K", 1ULL << 10 } };
	return fmt_exact(bytes, u, sizeof(u) / sizeof(u[0]), buf, len);
}

const char *qp_fmt_rate_exact(qp_rate_bps bps, char *buf, size_t len)
{
	static const struct exact_unit u[] = { { "T", 1000000000000ULL }, { "G", 1000000000ULL },
					       { "M", 1000000ULL }, { "K", 1000ULL } };
	return fmt_exact(bps, u, sizeof(u) / sizeof(u[0]), buf, len);
}

const char *qp_fmt_time_exact(qp_time_ns ns, char *buf, size_t len)
{
	static const struct exact_unit u[] = { { "s", QP_NS_PER_S }, { "ms", QP_NS_PER_MS },
					       { "us", QP_NS_PER_US }, { "ns", 1 } };
	return fmt_exact(ns, u, sizeof(u) / sizeof(u[0]), buf, len);
}

const char *qp_fmt_bytes_short(uint64_t b, char *buf, size_t len)
{
	static const char units[] = " KMGTP";
	double v = (double)b;
	unsigned u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64, b);
	else
		snprintf(buf, len, "%.*f%c", v < 10 ? 1 : 0, v, units[u]);
	return buf;
}
