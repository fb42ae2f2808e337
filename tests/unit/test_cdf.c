/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Flow-size CDFs: the shipped files and HPCC's own text parse to the same points, every
 * error message, quantiles on hand-computed cases, and the sample mean of 1e5 draws
 * within four standard errors of the CDF's mean. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cdf.h"

static struct cdf c, d;
static char err[512];

static int parse(struct cdf *x, const char *text)
{
	err[0] = 0;
	return cdf_parse(x, text, strlen(text), "t.cdf", err, sizeof(err));
}

/* HPCC's traffic_gen/WebSearch_distribution.txt and FbHdp_distribution.txt, verbatim. */
static const char hpcc_websearch[] =
	"0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n"
	"2000000 80\n5000000 90\n10000000 97\n30000000 100\n";
static const char hpcc_fbhdp[] =
	"0 0\n100 1\n200 2\n300 5\n350 15\n400 20\n500 30\n600 40\n700 50\n1000 60\n2000 67\n"
	"7000 70\n30000 72\n50000 82\n80000 87\n120000 90\n300000 95\n1000000 97.5\n2000000 99\n"
	"10000000 100\n";

static void test_shipped_files_are_hpccs(void **state)
{
	static const struct { const char *path, *hpcc; double mean; unsigned n; } f[] = {
		{ "sim/cdf/websearch.cdf", hpcc_websearch, 1711250.0, 12 },
		{ "sim/cdf/fb_hadoop.cdf", hpcc_fbhdp, 120420.75, 20 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		int rc = cdf_load(&c, f[i].path, err, sizeof(err));
		if (rc)
			print_message("%s\n", err);
		assert_int_equal(rc, 0);
		assert_int_equal(parse(&d, f[i].hpcc), 0);   /* percent form */
		assert_int_equal(c.n, f[i].n);
		assert_int_equal(d.n, f[i].n);
		for (unsigned k = 0; k < c.n; k++) {
			assert_int_equal(c.bytes[k], d.bytes[k]);
			assert_true(fabs(c.p[k] - d.p[k]) < 1e-15);
		}
		/* the means stated in the files' headers and docs/workloads.md */
		assert_true(fabs(cdf_mean(&c) - f[i].mean) < 1e-6);
		assert_true(fabs(cdf_mean(&d) - f[i].mean) < 1e-6);
	}
}

static void test_good_lines(void **state)
{
	(void)state;

	/* comments, blank lines, tabs, CRLF, a last line without a newline */
	assert_int_equal(parse(&c, "# sizes\n\n  0\t0  # start\r\n1000 0.5\r\n\n2000 1"), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.bytes[2], 2000);
	assert_int_equal(c.line[1], 4);
	assert_true(c.p[1] == 0.5 && c.p[2] == 1);
	/* equal probabilities are allowed (no flows between those sizes) */
	assert_int_equal(parse(&c, "0 0\n100 0.5\n200 0.5\n300 1\n"), 0);
	/* one point: every flow is that size */
	assert_int_equal(parse(&c, "1500 1\n"), 0);
	assert_int_equal(c.n, 1);
}

static void test_each_error(void **state)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "0 0\n100 0.5 x\n",
		  "t.cdf:2: expected two columns 'SIZE_BYTES CUMULATIVE_PROBABILITY', got three or "
		  "more (HPCC's files have two)" },
		{ "100\n", "t.cdf:1: expected two columns 'SIZE_BYTES CUMULATIVE_PROBABILITY', got one" },
		{ "abc 0\n", "t.cdf:1: size 'abc': not a whole number of bytes in 0..1099511627776" },
		{ "-5 0\n", "t.cdf:1: size '-5': not a whole number of bytes in 0..1099511627776" },
		{ "1.5 0\n", "t.cdf:1: size '1.5': not a whole number of bytes in 0..1099511627776" },
		{ "1099511627777 1\n",
		  "t.cdf:1: size '1099511627777': not a whole number of bytes in 0..1099511627776" },
		{ "0 0.5x\n", "t.cdf:1: probability '0.5x': not a number in 0..1 (or 0..100, HPCC's "
		  "percent form)" },
		{ "0 101\n", "t.cdf:1: probability '101': not a number in 0..1 (or 0..100, HPCC's "
		  "percent form)" },
		{ "0 -0.1\n", "t.cdf:1: probability '-0.1': not a number in 0..1 (or 0..100, HPCC's "
		  "percent form)" },
		{ "0 nan\n", "t.cdf:1: probability 'nan': not a number in 0..1 (or 0..100, HPCC's "
		  "percent form)" },
		{ "0 0\n200 0.5\n# x\n100 1\n",
		  "t.cdf:4: size 100 after 200 (line 2): sizes must increase, accepted "
		  "201..1099511627776" },
		{ "0 0\n0 1\n", "t.cdf:2: size 0 after 0 (line 1): sizes must increase, accepted "
		  "1..1099511627776" },
		{ "10 0.5\n20 0.1\n", "t.cdf:2: probability 0.1 after 0.5 (line 1): probabilities "
		  "must not decrease, accepted at least 0.5" },
		{ "0 0\n10 0.97\n\n", "t.cdf:2: last probability 0.97: accepted 1 (or 100 in HPCC's "
		  "percent form)" },
		{ "0 0\n10 50\n20 99.9\n", "t.cdf:3: last probability 99.9: accepted 1 (or 100 in "
		  "HPCC's percent form)" },
		{ "# nothing\n\n", "t.cdf:2: no points: expected lines 'SIZE_BYTES "
		  "CUMULATIVE_PROBABILITY'" },
		{ "", "t.cdf:0: no points: expected lines 'SIZE_BYTES CUMULATIVE_PROBABILITY'" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&c, bad[i].text), -EINVAL);
		assert_string_equal(err, bad[i].msg);
	}
}

static void test_limits(void **state)
{
	static char text[CDF_MAX_POINTS * 24 + 2048];
	size_t n = 0;
	(void)state;

	for (unsigned i = 0; i <= CDF_MAX_POINTS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u %.6f\n", i + 1,
				      (double)i / CDF_MAX_POINTS);
	assert_int_equal(parse(&c, text), -EINVAL);
	assert_string_equal(err, "t.cdf:513: more than 512 points");
	memset(text, ' ', 1100);
	memcpy(text + 1100, "1 1\n", 5);
	assert_int_equal(parse(&c, text), -EINVAL);
	assert_string_equal(err, "t.cdf:1: line of 1103 characters, accepted at most 1024");
	assert_int_equal(cdf_load(&c, "no/such/file.cdf", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no/such/file.cdf: No such file or directory");
}

static void test_quantiles_by_hand(void **state)
{
	(void)state;

	assert_int_equal(parse(&c, hpcc_websearch), 0);
	assert_true(cdf_quantile(&c, 0) == 0);
	assert_true(cdf_quantile(&c, 0.075) == 5000);       /* half of the first segment */
	assert_true(fabs(cdf_quantile(&c, 0.15) - 10000) < 1e-6);
	assert_true(fabs(cdf_quantile(&c, 0.25) - 25000) < 1e-6);
	assert_true(fabs(cdf_quantile(&c, 0.985) - 20000000) < 1e-3);
	assert_true(cdf_quantile(&c, 1 - 0x1.0p-53) < 30000000);
	/* a point mass first: half the flows are 100 bytes; the mean is 0.5 x 100 + 0.5 x 150 */
	assert_int_equal(parse(&c, "100 0.5\n200 1\n"), 0);
	assert_true(cdf_quantile(&c, 0.2) == 100);
	assert_true(cdf_quantile(&c, 0.75) == 150);
	assert_true(cdf_mean(&c) == 125);
	/* a flat step: nothing between 100 and 200 */
	assert_int_equal(parse(&c, "0 0\n100 0.5\n200 0.5\n300 1\n"), 0);
	assert_true(cdf_quantile(&c, 0.5) == 200);
	assert_true(cdf_quantile(&c, 0.4999) < 100);
	assert_true(cdf_mean(&c) == 0.5 * 50 + 0.5 * 250);
}

/* E[X^2] of the piecewise-uniform distribution: (a^2 + ab + b^2) / 3 per segment. */
static double second_moment(const struct cdf *x)
{
	double m2 = (double)x->bytes[0] * (double)x->bytes[0] * x->p[0];
	for (unsigned i = 1; i < x->n; i++) {
		double a = (double)x->bytes[i - 1], b = (double)x->bytes[i];
		m2 += (a * a + a * b + b * b) / 3 * (x->p[i] - x->p[i - 1]);
	}
	return m2;
}

static void test_sample_mean(void **state)
{
	static const struct { const char *path; double max_rel_tol; } f[] = {
		{ "sim/cdf/websearch.cdf", 0.030 },   /* 4 standard errors = 2.9% of the mean */
		{ "sim/cdf/fb_hadoop.cdf", 0.071 },   /* 7.0%: a heavier tail for its mean */
	};
	const int n = 100000;
	(void)state;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct qp_rng r;
		double sum = 0, mean, sd, tol;

		assert_int_equal(cdf_load(&c, f[i].path, err, sizeof(err)), 0);
		mean = cdf_mean(&c);
		sd = sqrt(second_moment(&c) - mean * mean);
		tol = 4 * sd / sqrt(n) + 1;   /* + 1: truncation to whole bytes */
		assert_true(tol / mean < f[i].max_rel_tol);
		qp_rng_seed(&r, 2024);
		for (int k = 0; k < n; k++) {
			uint64_t s = cdf_sample(&c, &r);
			assert_true(s >= 1 && s <= c.bytes[c.n - 1]);
			sum += (double)s;
		}
		print_message("%s: sample mean %.0f, CDF mean %.0f, tolerance %.0f (%.1f%%)\n",
			      f[i].path, sum / n, mean, tol, 100 * tol / mean);
		assert_true(fabs(sum / n - mean) < tol);
	}
}

static void test_sampling_is_seeded(void **state)
{
	struct qp_rng a, b;
	int same = 0;
	(void)state;

	assert_int_equal(parse(&c, hpcc_fbhdp), 0);
	qp_rng_seed(&a, 11);
	qp_rng_seed(&b, 11);
	for (int k = 0; k < 1000; k++)
		assert_int_equal(cdf_sample(&c, &a), cdf_sample(&c, &b));
	qp_rng_seed(&b, 12);
	for (int k = 0; k < 1000; k++)
		same += cdf_sample(&c, &a) == cdf_sample(&c, &b);
	assert_true(same < 200);   /* other seed, other sizes (ties happen inside segments) */
	/* a one-point CDF gives that size; a zero size becomes 1 byte (HPCC's rule) */
	assert_int_equal(parse(&c, "1500 1\n"), 0);
	assert_int_equal(cdf_sample(&c, &a), 1500);
	assert_int_equal(parse(&c, "0 1\n"), 0);
	assert_int_equal(cdf_sample(&c, &a), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_files_are_hpccs),
		cmocka_unit_test(test_good_lines),
		cmocka_unit_test(test_each_error),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_quantiles_by_hand),
		cmocka_unit_test(test_sample_mean),
		cmocka_unit_test(test_sampling_is_seeded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
