/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Flow-size CDF files: the line parser, the mean, inverse-transform sampling (cdf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cdf.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "textfile.h"

#define FAIL(c, ...) cdf_fail((c), err, errlen, __VA_ARGS__)

static int cdf_fail(const struct cdf *c, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int cdf_fail(const struct cdf *c, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_errmsg(-EINVAL, err, errlen, "%s:%d: %s", c->file, c->lineno, msg);
}

void cdf_init(struct cdf *c, const char *file)
{
	memset(c, 0, sizeof(*c));
	c->file = file ? file : "cdf";
}

int cdf_line(struct cdf *c, const char *line, size_t len, char *err, size_t errlen)
{
	char buf[SIM_LINE_MAX + 1], *w[3];
	uint64_t bytes;
	double p;
	int n;

	c->lineno++;
	if (len > SIM_LINE_MAX)
		return FAIL(c, "line of %zu characters, accepted at most %u", len, SIM_LINE_MAX);
	memcpy(buf, line, len);
	buf[len] = 0;
	n = sim_words(buf, w, 2);
	if (n == 0)
		return 0;
	if (n != 2)
		return FAIL(c, "expected two columns 'SIZE_BYTES CUMULATIVE_PROBABILITY', got %s",
			    n < 0 ? "three or more (HPCC's files have two)" : "one");
	if (qp_parse_u64(w[0], &bytes) || bytes > CDF_MAX_BYTES)
		return FAIL(c, "size '%s': not a whole number of bytes in 0..%llu", w[0],
			    (unsigned long long)CDF_MAX_BYTES);
	if (qp_parse_double(w[1], &p) || p < 0 || p > 100)
		return FAIL(c, "probability '%s': not a number in 0..1 (or 0..100, HPCC's percent "
			    "form)", w[1]);
	if (c->n == CDF_MAX_POINTS)
		return FAIL(c, "more than %u points", CDF_MAX_POINTS);
	if (c->n && bytes <= c->bytes[c->n - 1])
		return FAIL(c, "size %llu after %llu (line %d): sizes must increase, accepted "
			    "%llu..%llu", (unsigned long long)bytes,
			    (unsigned long long)c->bytes[c->n - 1], c->line[c->n - 1],
			    (unsigned long long)c->bytes[c->n - 1] + 1,
			    (unsigned long long)CDF_MAX_BYTES);
	if (c->n && p < c->p[c->n - 1])
		return FAIL(c, "probability %s after %.10g (line %d): probabilities must not "
			    "decrease, accepted at least %.10g", w[1], c->p[c->n - 1],
			    c->line[c->n - 1], c->p[c->n - 1]);
	c->bytes[c->n] = bytes;
	c->p[c->n] = p;
	c->line[c->n] = c->lineno;
	c->n++;
	return 0;
}

int cdf_finish(struct cdf *c, char *err, size_t errlen)
{
	double last, scale;

	if (!c->n)
		return FAIL(c, "no points: expected lines 'SIZE_BYTES CUMULATIVE_PROBABILITY'");
	last = c->p[c->n - 1];
	if (last != 1 && last != 100) {
		c->lineno = c->line[c->n - 1];
		return FAIL(c, "last probability %.10g: accepted 1 (or 100 in HPCC's percent form)",
			    last);
	}
	/* Non-decreasing up to 1 means every point is in [0, 1]; up to 100, in percent. */
	scale = last;
	for (unsigned i = 0; i < c->n; i++)
		c->p[i] = scale == 1 ? c->p[i] : c->p[i] / scale;
	c->p[c->n - 1] = 1;
	c->finished = 1;
	return 0;
}

static int line_step(void *c, const char *line, size_t len, char *err, size_t errlen)
{
	return cdf_line(c, line, len, err, errlen);
}

int cdf_parse(struct cdf *c, const char *text, size_t len, const char *file, char *err,
	      size_t errlen)
{
	int rc;

	cdf_init(c, file);
	rc = sim_each_line(text, len, line_step, c, err, errlen);
	return rc ? rc : cdf_finish(c, err, errlen);
}

static int text_step(void *c, const char *text, size_t len, const char *file, char *err,
		     size_t errlen)
{
	return cdf_parse(c, text, len, file, err, errlen);
}

int cdf_load(struct cdf *c, const char *path, char *err, size_t errlen)
{
	return sim_load_file(path, text_step, c, err, errlen);
}

double cdf_mean(const struct cdf *c)
{
	double sum = (double)c->bytes[0] * c->p[0];

	for (unsigned i = 1; i < c->n; i++)
		sum += ((double)c->bytes[i - 1] + (double)c->bytes[i]) / 2 * (c->p[i] - c->p[i - 1]);
	return sum;
}

double cdf_quantile(const struct cdf *c, double u)
{
	unsigned lo = 0, hi = c->n - 1;

	if (u < c->p[0])
		return (double)c->bytes[0];
	/* The first point i with u < p[i]: p[lo] <= u < p[hi] from here on. */
	if (!(u < c->p[hi]))
		return (double)c->bytes[hi];
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		if (u < c->p[mid])
			hi = mid;
		else
			lo = mid;
	}
	return (double)c->bytes[lo] + ((double)c->bytes[hi] - (double)c->bytes[lo]) *
	       (u - c->p[lo]) / (c->p[hi] - c->p[lo]);
}

uint64_t cdf_sample(const struct cdf *c, struct qp_rng *r)
{
	uint64_t size = (uint64_t)cdf_quantile(c, qp_rng_unit(r));
	return size ? size : 1;
}
