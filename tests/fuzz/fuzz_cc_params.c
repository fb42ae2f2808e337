/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: congestion-control parameter strings ("key=value,...", agent/cc/cc.c),
 * which come from qpaced --cc-params, registrations and qpacectl set: parsed for the
 * algorithm the first byte picks, then a controller created with them on a path from the
 * next bytes. Properties: no crash, no undefined behaviour; every value stored is within
 * its table range (open or closed ends as the table says); a refusal names the algorithm;
 * a controller that is created starts within [1, line rate]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "qpace/cc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double stored(const struct cc_param *p, const void *params)
{
	const char *field = (const char *)params + p->offset;
	double d;
	uint64_t u;
	uint32_t w;

	switch (p->type) {
	case CC_P_DOUBLE:
		memcpy(&d, field, sizeof(d));
		return d;
	case CC_P_U32:
		memcpy(&w, field, sizeof(w));
		return (double)w;
	default:
		memcpy(&u, field, sizeof(u));
		return (double)u;
	}
}

static void check_ranges(const struct cc_ops *ops, const void *params)
{
	for (const struct cc_param *p = ops->params; p && p->name; p++) {
		double v = stored(p, params);
		int lo = (p->flags & CC_P_MIN_OPEN) ? v > p->min : v >= p->min;
		int hi = (p->flags & CC_P_MAX_OPEN) ? v < p->max : v <= p->max;

		if (!lo || !hi)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const qp_rate_bps lines[] = { QP_KBPS, 400 * QP_MBPS, 10 * QP_GBPS,
					     10000 * QP_GBPS };
	const struct cc_ops *const *all = cc_all();
	struct fz f = { data, size };
	const struct cc_ops *ops;
	struct cc_path path;
	char text[300], err[400];
	size_t nops = 0, got;
	const uint8_t *s;
	void *params;
	struct cc *cc;

	while (all[nops])
		nops++;
	ops = all[fz_pick(&f, (unsigned)nops)];
	path = (struct cc_path){ lines[fz_pick(&f, 4)], 1 + fz_u32(&f) % (10 * QP_NS_PER_S),
				 1 + fz_u16(&f) };
	s = fz_bytes(&f, sizeof(text) - 1, &got);
	memcpy(text, s, got);
	text[got] = 0;
	params = calloc(1, ops->params_size ? ops->params_size : 1);
	if (!params)
		return 0;
	if (cc_params_parse(ops, params, text, err, sizeof(err)) == 0)
		check_ranges(ops, params);
	else if (!strstr(err, ops->name))
		abort();
	free(params);
	cc = cc_create_ops(ops, &path, text, QP_NS_PER_S, err, sizeof(err));
	if (cc) {
		if (!cc->rate_bps || cc->rate_bps > path.line_bps)
			abort();
		cc_destroy(cc);
	}
	return 0;
}
