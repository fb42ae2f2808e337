/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* none: no congestion control. The QP sends at line rate (or a fixed rate), the way
 * Soft-RoCE behaves on its own. The baseline every other algorithm is compared against.
 *
 *   R = rate (default: the line rate)
 *
 * Parameters:
 *   rate  fixed sending rate, bits/s; 0 = line rate (default 0)
 */
#include <stddef.h>

#include "cc_algs.h"

struct none_params {
	qp_rate_bps rate;
};

static const struct cc_param none_params_table[] = {
	{ "rate", CC_P_RATE, offsetof(struct none_params, rate), 0, 0, 1e13, 0,
	  "fixed rate in bits/s; 0 = line rate" },
	{ .name = NULL },
};

static void none_init(struct cc *cc, const void *params, qp_time_ns now)
{
	const struct none_params *p = params;
	(void)now;
	if (p->rate && p->rate < cc->path.line_bps)
		cc->rate_bps = p->rate;
}

const struct cc_ops cc_none_ops = {
	.name = "none",
	.summary = "no congestion control: send at line rate (or a fixed rate=R)",
	.params = none_params_table,
	.params_size = sizeof(struct none_params),
	.state_size = sizeof(struct cc),
	.init = none_init,
};
