/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Flow-size distributions: a cumulative distribution of flow sizes read from a text file,
 * its mean, and sizes drawn from it by inverse transform (docs/workloads.md).
 *
 * File format, one point a line:
 *
 *   # WebSearch (DCTCP, SIGCOMM 2010), from HPCC's traffic_gen/WebSearch_distribution.txt
 *   0 0
 *   10000 0.15
 *   ...
 *   30000000 1
 *
 *   SIZE_BYTES CUMULATIVE_PROBABILITY: P(flow size <= SIZE_BYTES). Sizes are whole numbers
 *   of bytes in 0..2^40 and strictly increase; probabilities are in [0, 1], never
 *   decrease, and the last is 1. '#' starts a comment; blank lines are ignored.
 *   HPCC's files (alibaba-edu/High-Precision-Congestion-Control, the .txt files in
 *   traffic_gen/) have the same two columns, no third, with the probability in percent
 *   (0..100, the last 100): a file whose last probability is 100 is read as percent.
 *
 * The distribution between points is linear in the probability (sizes uniform within a
 * segment), as HPCC's traffic generator has it (traffic_gen/custom_rand.py: getAvg,
 * getValueFromPercentile). A first point with a probability above 0 is a point mass:
 * P(size = first size) = its probability.
 *
 * The parser is fed lines (cdf_init / cdf_line / cdf_finish) and opens no files; each
 * error is "FILE:LINE: what, the value, the accepted range" and -EINVAL.
 */
#ifndef QPACE_CDF_H
#define QPACE_CDF_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/rng.h"

#define CDF_MAX_POINTS 512
#define CDF_MAX_BYTES (1ULL << 40)

struct cdf {
	unsigned n;
	uint64_t bytes[CDF_MAX_POINTS];
	double p[CDF_MAX_POINTS];     /* cumulative probability, in [0, 1] once finished */
	int line[CDF_MAX_POINTS];     /* the file line of each point */
	/* parse state */
	const char *file;             /* for messages; not copied */
	int lineno;
	int finished;
};

void cdf_init(struct cdf *c, const char *file);
/* One line (without its newline), numbered in order from 1. 0 or -EINVAL. */
int cdf_line(struct cdf *c, const char *line, size_t len, char *err, size_t errlen);
/* After the last line: checks the last probability and scales percent to fractions. */
int cdf_finish(struct cdf *c, char *err, size_t errlen);
/* The three steps over a whole text; @file names it in messages. */
int cdf_parse(struct cdf *c, const char *text, size_t len, const char *file, char *err,
	      size_t errlen);
/* A file (at most 1 MiB) through cdf_parse; -errno with "PATH: why" when unreadable. */
int cdf_load(struct cdf *c, const char *path, char *err, size_t errlen);

/* Mean flow size in bytes: sum over segments of their mid size times their probability
 * (HPCC's getAvg), plus the first point's mass times its size. */
double cdf_mean(const struct cdf *c);
/* The size at cumulative probability @u in [0, 1): linear between points. */
double cdf_quantile(const struct cdf *c, double u);
/* One flow size: the quantile of a uniform draw, truncated to whole bytes, at least 1
 * (HPCC's traffic_gen.py: int(rand()), and 1 when that is 0). */
uint64_t cdf_sample(const struct cdf *c, struct qp_rng *r);

#endif
