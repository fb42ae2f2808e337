/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workloads: the file format (every kind, every error message), Poisson arrivals whose
 * inter-arrival mean and offered load match HPCC's formula within four standard errors,
 * incast rounds closed and open loop, long and staged flows, inter-site fractions, and
 * determinism by seed. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/workload.h"

static struct wl_spec spec;
static struct cdf cdfs[4];
static char err[600];

static int parse(const char *text)
{
	err[0] = 0;
	return wl_parse(&spec, text, strlen(text), "t.wl", err, sizeof(err));
}

static void load_cdf(struct cdf *c, const char *text)
{
	assert_int_equal(cdf_parse(c, text, strlen(text), "c", err, sizeof(err)), 0);
}

static int gen(const struct wl_env *env, struct wl_flows *f)
{
	err[0] = 0;
	return wl_generate(&spec, env, f, err, sizeof(err));
}

static void test_parse_every_kind(void **state)
{
	const char *text =
		"# background and an incast\n"
		"poisson cdf=websearch load=0.3 duration=50ms   # HPCC's mix\n"
		"intersite cdf=sim/cdf/fb_hadoop.cdf load=0.5 duration=1ms cross=0.25 hosts=0-7,9\n"
		"incast bytes=500K senders=1-60 receiver=0 rounds=20 gap=10us start=1ms\n"
		"incast bytes=64K every=2ms rounds=3\n"
		"long senders=1,2 receiver=3\n"
		"staged step=10ms senders=4-7 bytes=1M\n";
	const struct wl_group *g = spec.g;
	(void)state;

	assert_int_equal(parse(text), 0);
	assert_int_equal(spec.ngroups, 6);
	assert_int_equal(g[0].kind, WL_POISSON);
	assert_string_equal(g[0].cdf_name, "websearch");
	assert_true(g[0].load == 0.3);
	assert_int_equal(g[0].duration_ns, 50 * QP_NS_PER_MS);
	assert_int_equal(g[0].hosts.n, 0);                 /* all */
	assert_int_equal(g[0].line, 2);
	assert_int_equal(g[1].kind, WL_INTERSITE);
	assert_true(g[1].cross == 0.25);
	assert_int_equal(g[1].hosts.n, 2);
	assert_int_equal(g[1].hosts.r[0].hi, 7);
	assert_int_equal(g[1].hosts.r[1].lo, 9);
	assert_int_equal(g[2].bytes, 500 * 1024);
	assert_int_equal(g[2].rounds, 20);
	assert_int_equal(g[2].gap_ns, 10000);
	assert_int_equal(g[2].start_ns, QP_NS_PER_MS);
	assert_int_equal(g[3].every_ns, 2 * QP_NS_PER_MS);
	assert_int_equal(g[3].rounds, 3);
	assert_int_equal(g[4].kind, WL_LONG);
	assert_int_equal(g[4].bytes, WL_BYTES_FOREVER);    /* the default for long */
	assert_int_equal(g[4].receiver, 3);
	assert_int_equal(g[5].kind, WL_STAGED);
	assert_int_equal(g[5].step_ns, 10 * QP_NS_PER_MS);
	assert_int_equal(g[5].bytes, 1 << 20);
}

static void test_each_error(void **state)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "\nburst bytes=1K\n",
		  "t.wl:2: kind 'burst': accepted poisson, intersite, incast, long, staged" },
		{ "incast 500K\n", "t.wl:1: incast: expected KEY=VALUE, got '500K'" },
		{ "incast =5\n", "t.wl:1: incast: expected KEY=VALUE, got '=5'" },
		{ "incast bytes=1K load=0.5\n",
		  "t.wl:1: incast: unknown key 'load' (accepted: senders, receiver, bytes, rounds, "
		  "gap, every, start)" },
		{ "poisson cdf=x load=0.5 duration=1ms load=0.4\n",
		  "t.wl:1: poisson: load given twice" },
		{ "poisson cdf=x load=1.5 duration=1ms\n",
		  "t.wl:1: load '1.5': not a fraction in (0, 1]" },
		{ "poisson cdf=x load=0 duration=1ms\n", "t.wl:1: load '0': not a fraction in (0, 1]" },
		{ "intersite cdf=x load=0.5 duration=1ms cross=-1\n",
		  "t.wl:1: cross '-1': not a fraction in [0, 1]" },
		{ "poisson cdf=x load=0.5 duration=0\n",
		  "t.wl:1: duration '0': not a time in 1ns..1000s (e.g. 50ms)" },
		{ "poisson cdf=x load=0.5 duration=2000s\n",
		  "t.wl:1: duration '2000s': not a time in 1ns..1000s (e.g. 50ms)" },
		{ "poisson cdf= load=0.5 duration=1ms\n",
		  "t.wl:1: cdf '': not a CDF name (websearch, fb_hadoop) or a path, 1..127 characters" },
		{ "poisson load=0.5 duration=1ms\n",
		  "t.wl:1: poisson: cdf= is required (a CDF name (websearch, fb_hadoop) or a path, "
		  "1..127 characters)" },
		{ "intersite cdf=x load=0.5 duration=1ms\n",
		  "t.wl:1: intersite: cross= is required (a fraction in [0, 1])" },
		{ "incast senders=1-3\n",
		  "t.wl:1: incast: bytes= is required (a size in 1..1024G bytes (e.g. 500K, 1M))" },
		{ "incast bytes=forever\n",
		  "t.wl:1: bytes 'forever': not a size in 1..1024G bytes (e.g. 500K, 1M)" },
		{ "long bytes=2048G\n",
		  "t.wl:1: bytes '2048G': not a size in 1..1024G bytes (e.g. 500K, 1M), or forever" },
		{ "incast bytes=1K senders=5-2\n",
		  "t.wl:1: senders '5-2': not all, or host numbers and ranges like 0-15,20 (hosts "
		  "0..65535, at most 32 items)" },
		{ "incast bytes=1K senders=1,,2\n",
		  "t.wl:1: senders '1,,2': not all, or host numbers and ranges like 0-15,20 (hosts "
		  "0..65535, at most 32 items)" },
		{ "incast bytes=1K senders=1-70000\n",
		  "t.wl:1: senders '1-70000': not all, or host numbers and ranges like 0-15,20 "
		  "(hosts 0..65535, at most 32 items)" },
		{ "incast bytes=1K receiver=x\n",
		  "t.wl:1: receiver 'x': not a host number in 0..65535" },
		{ "incast bytes=1K rounds=0\n",
		  "t.wl:1: rounds '0': not a whole number in 1..1000000" },
		{ "incast bytes=1K gap=5us every=1ms\n",
		  "t.wl:1: incast: gap= and every= exclude each other (gap: each round that long "
		  "after the last one completed; every: rounds at a fixed period)" },
		{ "incast bytes=1K senders=0-3 receiver=2\n",
		  "t.wl:1: incast: senders include the receiver 2" },
		{ "staged senders=1-3\n",
		  "t.wl:1: staged: step= is required (a time in 0..1000s (e.g. 10ms))" },
		{ "staged step=1ms start=soon\n",
		  "t.wl:1: start 'soon': not a time in 0..1000s (e.g. 10ms)" },
		{ "# only comments\n\n", "t.wl:2: no flow groups: expected lines 'KIND KEY=VALUE...' "
		  "(KIND: poisson, intersite, incast, long, staged)" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i].text) != -EINVAL)
			fail_msg("case %zu accepted", i);
		assert_string_equal(err, bad[i].msg);
	}
}

static void test_limits(void **state)
{
	static char text[(WL_MAX_GROUPS + 1) * 24];
	size_t n = 0;
	(void)state;

	for (int i = 0; i <= WL_MAX_GROUPS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "long receiver=%d\n", i);
	assert_int_equal(parse(text), -EINVAL);
	assert_string_equal(err, "t.wl:257: more than 256 flow groups");
	assert_int_equal(parse("long a=1 a=2 a=3 a=4 a=5 a=6 a=7 a=8 a=9 a=10 a=11 a=12 a=13 "
			       "a=14 a=15 a=16 a=17 a=18 a=19 a=20 a=21 a=22 a=23 a=24\n"), -EINVAL);
	assert_string_equal(err, "t.wl:1: more than 24 words on a line");
	assert_int_equal(wl_load(&spec, "no/such.wl", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no/such.wl: No such file or directory");
}

/* Poisson on 16 hosts at 10G: per-host inter-arrival mean and the offered load, each
 * within four standard errors of HPCC's formula. */
static void test_poisson_rate_and_load(void **state)
{
	static const struct { const char *cdf; double sizes_m2; } c[] = {
		/* uniform 1000..3000 bytes: mean 2000, E[X^2] = (a^2 + ab + b^2) / 3 */
		{ "1000 0\n3000 1\n", (1e6 + 3e6 + 9e6) / 3 },
	};
	const struct wl_env env = { .hosts = 16, .host_bps = 10 * QP_GBPS, .seed = 1 };
	const double load = 0.5, dur_ns = 10e6;
	struct wl_flows f;
	(void)state;

	load_cdf(&cdfs[0], c[0].cdf);
	assert_int_equal(parse("poisson cdf=u load=0.5 duration=10ms start=1ms\n"), 0);
	wl_attach_cdf(&spec, "u", &cdfs[0]);
	assert_int_equal(gen(&env, &f), 0);
	/* HPCC: 1 / (bandwidth * load / 8 / avg) = 8 * 2000 / (0.5 * 10e9) s = 3.2 us */
	const double gap_ns = 8.0 * 2000 * 1e9 / (load * 10e9);
	const double expected = 16 * dur_ns / gap_ns;     /* 50000 flows */
	double bytes = 0, gaps = 0;
	unsigned ngaps = 0;
	qp_time_ns last[16] = { 0 };
	for (size_t i = 0; i < f.n; i++) {
		const struct wl_flow *x = &f.f[i];
		assert_true(x->start_ns >= QP_NS_PER_MS && x->start_ns < 11 * QP_NS_PER_MS);
		assert_true(x->src < 16 && x->dst < 16 && x->src != x->dst);
		assert_true(x->bytes >= 1000 && x->bytes <= 3000);
		assert_false(x->chained);
		if (i)
			assert_true(f.f[i - 1].start_ns <= x->start_ns);
		if (last[x->src]) {
			gaps += (double)(x->start_ns - last[x->src]);
			ngaps++;
		}
		last[x->src] = x->start_ns;
		bytes += (double)x->bytes;
	}
	/* the count is Poisson: sd sqrt(50000) = 224, 4 sd = 0.9% */
	assert_true(fabs((double)f.n - expected) < 4 * sqrt(expected));
	/* gaps are exponential: the mean's sd is gap / sqrt(n) */
	print_message("flows %zu (expected %.0f), mean gap %.1f ns (HPCC %.1f)\n", f.n, expected,
		      gaps / ngaps, gap_ns);
	assert_true(fabs(gaps / ngaps - gap_ns) < 4 * gap_ns / sqrt(ngaps));
	/* offered load: a compound Poisson sum, sd = sqrt(expected * E[X^2]) */
	double offered = bytes * 8 / (16 * 10e9 * dur_ns / 1e9);
	double sd = sqrt(expected * c[0].sizes_m2) * 8 / (16 * 10e9 * dur_ns / 1e9);
	print_message("offered load %.4f (target %.2f, 4 sd = %.4f)\n", offered, load, 4 * sd);
	assert_true(4 * sd < 0.01);
	assert_true(fabs(offered - load) < 4 * sd);
	wl_flows_free(&f);
}

/* The same with WebSearch: a heavy tail, so a wider (stated) tolerance. */
static void test_poisson_websearch_load(void **state)
{
	const struct wl_env env = { .hosts = 32, .host_bps = 100 * QP_GBPS, .seed = 7 };
	struct wl_flows f;
	double bytes = 0;
	(void)state;

	assert_int_equal(cdf_load(&cdfs[1], "sim/cdf/websearch.cdf", err, sizeof(err)), 0);
	assert_int_equal(parse("poisson cdf=websearch load=0.5 duration=100ms\n"), 0);
	wl_attach_cdf(&spec, "websearch", &cdfs[1]);
	assert_int_equal(gen(&env, &f), 0);
	for (size_t i = 0; i < f.n; i++)
		bytes += (double)f.f[i].bytes;
	/* expected flows: 32 x 0.1 s x 0.5 x 100e9 / (8 x 1711250) = 11687; E[X^2] of
	 * WebSearch = 1.866e13 B^2, so the offered load's sd is 0.0146 */
	const double expected = 32 * 0.1 * 0.5 * 100e9 / (8 * 1711250.0);
	double offered = bytes * 8 / (32 * 100e9 * 0.1);
	double sd = sqrt(expected * 1.8660e13) * 8 / (32 * 100e9 * 0.1);
	print_message("websearch: %zu flows (expected %.0f), offered load %.4f (4 sd = %.4f)\n",
		      f.n, expected, offered, 4 * sd);
	assert_true(fabs(offered - 0.5) < 4 * sd);
	assert_true(fabs((double)f.n - expected) < 4 * sqrt(expected));
	wl_flows_free(&f);
}

static void test_determinism(void **state)
{
	struct wl_env env = { .hosts = 8, .host_bps = 10 * QP_GBPS, .seed = 42 };
	struct wl_flows a, b, c;
	(void)state;

	load_cdf(&cdfs[0], "0 0\n10000 0.5\n1000000 1\n");
	assert_int_equal(parse("poisson cdf=u load=0.4 duration=50ms\n"), 0);
	wl_attach_cdf(&spec, "u", &cdfs[0]);
	assert_int_equal(gen(&env, &a), 0);
	assert_int_equal(gen(&env, &b), 0);
	assert_true(a.n > 100);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.f, b.f, a.n * sizeof(*a.f));
	wl_flows_free(&b);
	env.seed = 43;
	assert_int_equal(gen(&env, &b), 0);
	assert_true(a.n != b.n || memcmp(a.f, b.f, a.n * sizeof(*a.f)));
	wl_flows_free(&b);
	/* a second group leaves the first one's flows as they were */
	env.seed = 42;
	assert_int_equal(parse("poisson cdf=u load=0.4 duration=50ms\n"
			       "incast bytes=4K senders=1-3 start=1ms\n"), 0);
	wl_attach_cdf(&spec, "u", &cdfs[0]);
	assert_int_equal(gen(&env, &c), 0);
	assert_int_equal(c.n, a.n + 3);
	size_t k = 0;
	for (size_t i = 0; i < c.n; i++) {
		if (c.f[i].group)
			continue;
		assert_true(c.f[i].start_ns == a.f[k].start_ns && c.f[i].src == a.f[k].src &&
			    c.f[i].dst == a.f[k].dst && c.f[i].bytes == a.f[k].bytes);
		k++;
	}
	assert_int_equal(k, a.n);
	wl_flows_free(&a);
	wl_flows_free(&c);
}

static void test_incast_rounds(void **state)
{
	const struct wl_env env = { .hosts = 9, .host_bps = QP_GBPS, .seed = 1 };
	struct wl_flows f;
	(void)state;

	/* closed loop: round 0 at start, later rounds chained, a gap after the last ended */
	assert_int_equal(parse("incast bytes=256K rounds=3 gap=20us start=5us\n"), 0);
	assert_int_equal(gen(&env, &f), 0);
	assert_int_equal(f.n, 8 * 3);
	for (size_t i = 0; i < f.n; i++) {
		const struct wl_flow *x = &f.f[i];
		assert_int_equal(x->round, i / 8);
		assert_int_equal(x->src, 1 + i % 8);           /* every host but the receiver */
		assert_int_equal(x->dst, 0);
		assert_int_equal(x->bytes, 256 * 1024);
		assert_int_equal(x->chained, x->round > 0);
		assert_int_equal(x->start_ns, x->round ? 20000 : 5000);
	}
	wl_flows_free(&f);
	/* open loop: every 1 ms */
	assert_int_equal(parse("incast bytes=1K rounds=4 every=1ms senders=2,4 receiver=8\n"), 0);
	assert_int_equal(gen(&env, &f), 0);
	assert_int_equal(f.n, 8);
	for (size_t i = 0; i < f.n; i++) {
		assert_false(f.f[i].chained);
		assert_int_equal(f.f[i].start_ns, (i / 2) * QP_NS_PER_MS);
		assert_int_equal(f.f[i].src, i % 2 ? 4 : 2);
		assert_int_equal(f.f[i].dst, 8);
	}
	wl_flows_free(&f);
}

static void test_long_and_staged(void **state)
{
	const struct wl_env env = { .hosts = 8, .host_bps = QP_GBPS, .seed = 1 };
	struct wl_flows f;
	(void)state;

	assert_int_equal(parse("staged step=10ms senders=4,1,2 receiver=0 start=1ms\n"
			       "long senders=5-6 receiver=7 bytes=1M start=2ms\n"), 0);
	assert_int_equal(gen(&env, &f), 0);
	assert_int_equal(f.n, 5);
	/* by start: staged 4 at 1ms, long 5, 6 at 2ms, staged 1 at 11ms, 2 at 21ms */
	static const struct { uint32_t src, dst; qp_time_ns t; uint64_t bytes; } want[] = {
		{ 4, 0, 1 * QP_NS_PER_MS, WL_BYTES_FOREVER }, { 5, 7, 2 * QP_NS_PER_MS, 1 << 20 },
		{ 6, 7, 2 * QP_NS_PER_MS, 1 << 20 }, { 1, 0, 11 * QP_NS_PER_MS, WL_BYTES_FOREVER },
		{ 2, 0, 21 * QP_NS_PER_MS, WL_BYTES_FOREVER },
	};
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.f[i].src, want[i].src);
		assert_int_equal(f.f[i].dst, want[i].dst);
		assert_int_equal(f.f[i].start_ns, want[i].t);
		assert_int_equal(f.f[i].bytes, want[i].bytes);
	}
	wl_flows_free(&f);
}

static void test_intersite_fraction(void **state)
{
	static const uint8_t site[12] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1 };
	const struct wl_env env = { .hosts = 12, .host_bps = 10 * QP_GBPS, .site = site,
				    .seed = 3 };
	static const double cross[] = { 0, 0.2, 1 };
	struct wl_flows f;
	char text[128];
	(void)state;

	load_cdf(&cdfs[0], "1000 0\n3000 1\n");
	for (size_t c = 0; c < 3; c++) {
		snprintf(text, sizeof(text), "intersite cdf=u load=0.5 duration=5ms cross=%g\n",
			 cross[c]);
		assert_int_equal(parse(text), 0);
		wl_attach_cdf(&spec, "u", &cdfs[0]);
		assert_int_equal(gen(&env, &f), 0);
		size_t away = 0;
		for (size_t i = 0; i < f.n; i++) {
			assert_true(f.f[i].src != f.f[i].dst);
			away += site[f.f[i].src] != site[f.f[i].dst];
		}
		double frac = (double)away / (double)f.n;
		double sd = sqrt(cross[c] * (1 - cross[c]) / (double)f.n);
		print_message("cross=%g: %zu of %zu flows cross (%.4f)\n", cross[c], away, f.n, frac);
		assert_true(f.n > 10000);
		assert_true(fabs(frac - cross[c]) <= 4 * sd);   /* exact at 0 and 1 */
		wl_flows_free(&f);
	}
}

static void test_generation_errors(void **state)
{
	static const uint8_t site[4] = { 0, 0, 0, 1 };
	static const struct { const char *text, *msg; const uint8_t *site; } bad[] = {
		{ "incast bytes=1K senders=1-70\n",
		  "t.wl:1: incast: senders: host 8 is not in the topology (hosts 0..7)", NULL },
		{ "incast bytes=1K senders=1,2,1\n", "t.wl:1: incast: senders: host 1 listed twice",
		  NULL },
		{ "long receiver=9\n",
		  "t.wl:1: long: receiver 9 is not in the topology (hosts 0..7)", NULL },
		{ "poisson cdf=u load=0.5 duration=1ms hosts=3\n",
		  "t.wl:1: poisson: hosts has 1 host, accepted at least 2", NULL },
		{ "poisson cdf=v load=0.5 duration=1ms\n",
		  "t.wl:1: poisson: cdf 'v' is not loaded", NULL },
		{ "poisson cdf=u load=1 duration=1000s\n",
		  "t.wl:1: poisson: 4000000000 flows, accepted at most 1000 (a shorter duration=, a "
		  "lower load=, fewer rounds= or senders=)", NULL },
		{ "incast bytes=1K rounds=1000\n",
		  "t.wl:1: incast: 7000 flows, accepted at most 1000 (a shorter duration=, a lower "
		  "load=, fewer rounds= or senders=)", NULL },
		{ "intersite cdf=u load=0.5 duration=1ms cross=0.5\n",
		  "t.wl:1: intersite: the topology has one site (intersite needs two: qpace-bench "
		  "topo two-site)", NULL },
		{ "intersite cdf=u load=0.5 duration=1ms cross=0.5 hosts=0-3\n",
		  "t.wl:1: intersite: hosts has one host in site 1: its flows within the site have "
		  "nowhere to go (cross=1, or more hosts)", site },
		{ "intersite cdf=u load=0.5 duration=1ms cross=0.5 hosts=0-2\n",
		  "t.wl:1: intersite: hosts has none in site 1: cross=0.5 needs both sites", site },
	};
	struct wl_flows f;
	(void)state;

	load_cdf(&cdfs[0], "1000 0\n3000 1\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wl_env env = { .hosts = 8, .host_bps = 8 * QP_GBPS, .seed = 1,
				      .max_flows = 1000, .site = bad[i].site };
		if (bad[i].site)
			env.hosts = 4;
		assert_int_equal(parse(bad[i].text), 0);
		wl_attach_cdf(&spec, "u", &cdfs[0]);
		assert_int_equal(gen(&env, &f), -EINVAL);
		assert_string_equal(err, bad[i].msg);
		assert_null(f.f);
		assert_int_equal(f.n, 0);
	}
}

static void test_cdf_files_by_name(void **state)
{
	static const char *const dirs[] = { "no/such/dir", "sim/cdf" };
	struct wl_flows f;
	const struct wl_env env = { .hosts = 4, .host_bps = QP_GBPS, .seed = 1 };
	(void)state;

	/* names from the folders in order; a path relative to the workload file's folder */
	assert_int_equal(parse("poisson cdf=websearch load=0.1 duration=10ms\n"
			       "poisson cdf=../sim/cdf/fb_hadoop.cdf load=0.1 duration=10ms\n"
			       "poisson cdf=websearch load=0.2 duration=1ms\n"), 0);
	spec.file = "tests/t.wl";
	assert_int_equal(wl_load_cdfs(&spec, cdfs, 4, dirs, 2, err, sizeof(err)), 0);
	assert_ptr_equal(spec.g[0].cdf, &cdfs[0]);
	assert_ptr_equal(spec.g[1].cdf, &cdfs[1]);
	assert_ptr_equal(spec.g[2].cdf, &cdfs[0]);      /* loaded once */
	assert_int_equal(cdfs[0].n, 12);
	assert_int_equal(cdfs[1].n, 20);
	assert_int_equal(gen(&env, &f), 0);
	wl_flows_free(&f);
	assert_int_equal(parse("\npoisson cdf=datamining load=0.1 duration=10ms\n"), 0);
	assert_int_equal(wl_load_cdfs(&spec, cdfs, 4, dirs, 2, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "t.wl:2: cdf 'datamining': no file datamining.cdf in "
			    "no/such/dir, sim/cdf");
	assert_int_equal(parse("poisson cdf=a.cdf load=0.1 duration=10ms\n"
			       "poisson cdf=b.cdf load=0.1 duration=10ms\n"), 0);
	assert_int_equal(wl_load_cdfs(&spec, cdfs, 1, dirs, 2, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "t.wl:1: cdf 'a.cdf': a.cdf: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_every_kind),
		cmocka_unit_test(test_each_error),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_poisson_rate_and_load),
		cmocka_unit_test(test_poisson_websearch_load),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_incast_rounds),
		cmocka_unit_test(test_long_and_staged),
		cmocka_unit_test(test_intersite_fraction),
		cmocka_unit_test(test_generation_errors),
		cmocka_unit_test(test_cdf_files_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
