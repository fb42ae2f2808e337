/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the workload file parser (wl_parse: text in, no files), and for a file
 * it accepts, the flows it generates on eight hosts in two sites with a fixed CDF: the list
 * must be sorted as workload.h says, every flow between two different hosts of the
 * topology, and no longer than the cap. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ordered(const struct wl_flow *a, const struct wl_flow *b)
{
	if (a->chained != b->chained)
		return !a->chained;
	if (!a->chained)
		return a->start_ns < b->start_ns ||
		       (a->start_ns == b->start_ns && (a->group < b->group ||
						       (a->group == b->group && a->id < b->id)));
	return a->group < b->group || (a->group == b->group && (a->round < b->round ||
			(a->round == b->round && a->id < b->id)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t site[8] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	static const char sizes[] = "0 0\n1000 0.5\n100000 1\n";
	static struct wl_spec s;
	static struct cdf c;
	struct wl_env env = { .hosts = 8, .host_bps = 1000000000ULL, .site = site,
			      .seed = size, .max_flows = 2000 };
	struct wl_flows f;
	char err[600];

	if (wl_parse(&s, (const char *)data, size, "fuzz", err, sizeof(err)))
		return 0;
	if (!s.ngroups || s.ngroups > WL_MAX_GROUPS)
		abort();
	if (cdf_parse(&c, sizes, strlen(sizes), "sizes", err, sizeof(err)))
		abort();
	for (unsigned i = 0; i < s.ngroups; i++)
		s.g[i].cdf = &c;
	if (wl_generate(&s, &env, &f, err, sizeof(err))) {
		if (f.f || f.n)   /* a failed generation leaves nothing behind */
			abort();
		return 0;
	}
	if (f.n > env.max_flows)
		abort();
	for (size_t i = 0; i < f.n; i++) {
		const struct wl_flow *x = &f.f[i];
		if (x->src >= env.hosts || x->dst >= env.hosts || x->src == x->dst ||
		    x->group >= s.ngroups || !x->bytes || (i && !ordered(&f.f[i - 1], x)))
			abort();
	}
	wl_flows_free(&f);
	return 0;
}
