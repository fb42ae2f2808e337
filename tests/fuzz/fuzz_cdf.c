/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the flow-size CDF parser (cdf_parse: text in, no files). A file it
 * accepts must be a distribution: sizes increasing, probabilities non-decreasing in [0, 1]
 * ending at 1, a mean within the sizes, and every quantile and sample within them. */
#include <stdint.h>
#include <stdlib.h>

#include "qpace/cdf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cdf c;
	struct qp_rng r;
	char err[512];
	double lo, hi, m;

	if (cdf_parse(&c, (const char *)data, size, "fuzz", err, sizeof(err)))
		return 0;
	if (!c.n || c.n > CDF_MAX_POINTS || c.p[c.n - 1] != 1)
		abort();
	for (unsigned i = 0; i < c.n; i++)
		if (c.p[i] < 0 || c.p[i] > 1 || (i && (c.bytes[i] <= c.bytes[i - 1] ||
						       c.p[i] < c.p[i - 1])))
			abort();
	lo = (double)c.bytes[0];
	hi = (double)c.bytes[c.n - 1];
	m = cdf_mean(&c);
	if (!(m >= lo * (1 - 1e-12) && m <= hi * (1 + 1e-12)))
		abort();
	qp_rng_seed(&r, size);
	for (int k = 0; k < 64; k++) {
		double q = cdf_quantile(&c, k / 64.0);
		uint64_t s = cdf_sample(&c, &r);
		if (!(q >= lo && q <= hi) || s < 1 || (double)s > (hi < 1 ? 1 : hi))
			abort();
	}
	return 0;
}
