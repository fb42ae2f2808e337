/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Checks shared by algorithms' check() functions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cc_check.h"
#include "qpace/units.h"

int cc_check_rates_le_line(const char *alg, const void *params,
			   const struct cc_rate_field *fields, size_t nfields,
			   const struct cc_path *path, char *err, size_t errlen)
{
	for (size_t i = 0; i < nfields; i++) {
		qp_rate_bps v;
		char vs[32], ls[32];

		memcpy(&v, (const char *)params + fields[i].offset, sizeof(v));
		if (v <= path->line_bps)
			continue;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s=%s exceeds the line rate %s (must be <= %s)",
				 alg, fields[i].name, qp_fmt_rate(v, vs, sizeof(vs)),
				 qp_fmt_rate(path->line_bps, ls, sizeof(ls)), ls);
		return -EINVAL;
	}
	return 0;
}

int cc_check_init_rate(const char *alg, qp_rate_bps init, qp_rate_bps min,
		       uint64_t min_divisor, const struct cc_path *path, char *err,
		       size_t errlen)
{
	qp_rate_bps floor = min ? min : path->line_bps / min_divisor;
	char is[32], fs[32];

	if (!floor)
		floor = 1;
	if (!init || init >= floor)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s: init_rate=%s is below min_rate %s%s (a start below the "
			 "floor: lower min_rate too, or raise init_rate)", alg,
			 qp_fmt_rate(init, is, sizeof(is)), qp_fmt_rate(floor, fs, sizeof(fs)),
			 min ? "" : " (the default, the line rate / this algorithm's divisor)");
	return -EINVAL;
}
