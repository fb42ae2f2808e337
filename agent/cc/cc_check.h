/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Checks shared by algorithms' check() functions (agent/cc/cc_check.c). */
#ifndef QPACE_CC_CHECK_H
#define QPACE_CC_CHECK_H

#include <stddef.h>
#include "qpace/cc.h"

/* A qp_rate_bps field of an algorithm's params struct that may not exceed the line rate. */
struct cc_rate_field {
	const char *name;
	size_t offset;
};

/* 0 when every listed rate in @params is <= the path's line rate; otherwise -EINVAL and
 * "<alg>: <name>=<value> exceeds the line rate <line> (must be <= <line>)" in @err. */
int cc_check_rates_le_line(const char *alg, const void *params,
			   const struct cc_rate_field *fields, size_t nfields,
			   const struct cc_path *path, char *err, size_t errlen);

/* 0 unless @init (0 = none) is below the floor: @min, or when it is 0 the line rate /
 * @min_divisor (the algorithm's default floor). Nothing raises a start to the floor
 * unsaid: -EINVAL and "<alg>: init_rate=<v> is below min_rate <floor> ..." in @err. */
int cc_check_init_rate(const char *alg, qp_rate_bps init, qp_rate_bps min,
		       uint64_t min_divisor, const struct cc_path *path, char *err,
		       size_t errlen);

#endif
