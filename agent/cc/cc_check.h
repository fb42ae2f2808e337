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

#endif
