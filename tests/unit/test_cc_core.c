/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The algorithm-independent layer: parameter tables, creation errors, event validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "qpace/units.h"

static const struct cc_path path = {
	.line_bps = 100 * QP_GBPS, .base_rtt_ns = 10 * QP_NS_PER_US, .mtu_bytes = 1000,
};

static void test_units(void **state)
{
	qp_rate_bps r;
	qp_time_ns t;
	uint64_t b;
	(void)state;

	assert_int_equal(qp_parse_rate("25G", &r), 0);
	assert_int_equal(r, 25 * QP_GBPS);
	assert_int_equal(qp_parse_rate("1.5Gbps", &r), 0);
	assert_int_equal(r, 1500 * QP_MBPS);
	assert_int_equal(qp_parse_rate("40000000", &r), 0);
	assert_int_equal(r, 40 * QP_MBPS);
	assert_int_not_equal(qp_parse_rate("-1G", &r), 0);
	assert_int_not_equal(qp_parse_rate("1X", &r), 0);
	assert_int_not_equal(qp_parse_rate("", &r), 0);
	assert_int_not_equal(qp_parse_rate("nan", &r), 0);
	assert_int_equal(qp_parse_time("10us", &t), 0);
	assert_int_equal(t, 10000);
	assert_int_equal(qp_parse_time("1.5ms", &t), 0);
	assert_int_equal(t, 1500000);
	assert_int_equal(qp_parse_time("900", &t), 0);
	assert_int_equal(t, 900);
	assert_int_not_equal(qp_parse_time("5 us", &t), 0);
	assert_int_equal(qp_parse_bytes("128K", &b), 0);
	assert_int_equal(b, 131072);
	assert_int_equal(qp_parse_bytes("1500", &b), 0);
	assert_int_equal(b, 1500);
	assert_int_not_equal(qp_parse_bytes("1e30", &b), 0);
	/* Above 2^63 (where llround stopped: it gave 2^63 for every such value). */
	assert_int_equal(qp_parse_rate("1e19", &r), 0);
	assert_true(r == 10000000000000000000ull);
	assert_int_equal(qp_parse_time("17000000000s", &t), 0);
	assert_true(t == 17000000000ull * QP_NS_PER_S);
}

/* The one double -> integer conversion for input-derived values: rounded, saturated. */
static void test_u64_round_sat(void **state)
{
	static const struct { double v; uint64_t want; } cases[] = {
		{ 0.0, 0 }, { -1.0, 0 }, { -1e300, 0 }, { 0.49, 0 }, { 0.5, 1 }, { 2.5, 3 },
		{ 1e3, 1000 }, { 9223372036854775808.0, 9223372036854775808ull },
		{ 1e19, 10000000000000000000ull }, { 18446744073709549568.0, 18446744073709549568ull },
		{ 18446744073709551616.0, UINT64_MAX }, { 3.2e19, UINT64_MAX },
		{ 1e300, UINT64_MAX },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(qp_u64_round_sat(cases[i].v) == cases[i].want);
	assert_true(qp_u64_round_sat(__builtin_nan("")) == 0);
	assert_true(qp_u64_round_sat(__builtin_inf()) == UINT64_MAX);
	assert_true(qp_u64_round_sat(-__builtin_inf()) == 0);
}

/* qp_fmt_bytes is exact, and qp_parse_bytes reads every form it writes back. */
static void test_fmt_bytes(void **state)
{
	static const struct { uint64_t v; const char *s; } cases[] = {
		{ 0, "0" },          { 1500, "1500" },       { 16384, "16K" },
		{ 49152, "48K" },    { 1536 * 1024, "1536K" }, { 3ULL << 20, "3M" },
		{ 2ULL << 30, "2G" }, { 4294967295ULL, "4294967295" }, { 1ULL << 40, "1024G" },
	};
	char buf[32];
	uint64_t b;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(qp_fmt_bytes(cases[i].v, buf, sizeof(buf)), cases[i].s);
		assert_int_equal(qp_parse_bytes(buf, &b), 0);
		assert_int_equal(b, cases[i].v);
	}
}

static void test_tx_time(void **state)
{
	(void)state;
	/* 1000 B at 1 Gb/s = 8000 ns exactly; 1 B at 3 b/s rounds up. */
	assert_int_equal(qp_tx_time_ns(1000, QP_GBPS), 8000);
	assert_int_equal(qp_tx_time_ns(1, 3), 2666666667ULL);
	assert_int_equal(qp_bytes_in(100 * QP_GBPS, 10000), 125000);
}

static void test_none_defaults_and_param(void **state)
{
	char err[256];
	struct cc *cc;
	(void)state;

	cc = cc_create_ops(&cc_none_ops, &path, NULL, 0, err, sizeof(err));
	assert_non_null(cc);
	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->cap_bytes, CC_CAP_NONE);
	cc_destroy(cc);

	cc = cc_create_ops(&cc_none_ops, &path, "rate=10G", 0, err, sizeof(err));
	assert_non_null(cc);
	assert_int_equal(cc->rate_bps, 10 * QP_GBPS);
	cc_destroy(cc);
}

static void test_bad_params_named(void **state)
{
	char err[256];
	struct cc_path p = path;
	(void)state;

	assert_null(cc_create_ops(&cc_none_ops, &path, "speed=1G", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "speed"));
	assert_null(cc_create_ops(&cc_none_ops, &path, "rate=fast", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "rate"));
	assert_null(cc_create_ops(&cc_none_ops, &path, "rate", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "key=value"));
	assert_null(cc_create_ops(&cc_none_ops, &path, "rate=1G,,", 0, err, sizeof(err)));

	p.line_bps = 0;
	assert_null(cc_create_ops(&cc_none_ops, &p, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "line rate"));
	p = path;
	p.base_rtt_ns = 0;
	assert_null(cc_create_ops(&cc_none_ops, &p, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "RTT"));
	p = path;
	p.mtu_bytes = 0;
	assert_null(cc_create_ops(&cc_none_ops, &p, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "MTU"));
}

static void test_malformed_events_counted(void **state)
{
	char err[256];
	struct qp_int_hop hops[QP_INT_MAX_HOPS + 1] = { 0 };
	struct cc_event ev = { .type = CC_EV_INT };
	struct cc *cc = cc_create_ops(&cc_none_ops, &path, NULL, 0, err, sizeof(err));
	(void)state;

	for (unsigned i = 0; i <= QP_INT_MAX_HOPS; i++)
		hops[i].link_bps = QP_GBPS;
	ev.u.int_report.hops = hops;
	ev.u.int_report.nhops = 0;
	assert_int_equal(cc_event(cc, &ev, 1), 0);
	ev.u.int_report.nhops = QP_INT_MAX_HOPS + 1;
	assert_int_equal(cc_event(cc, &ev, 2), 0);
	ev.u.int_report.nhops = 1;
	hops[0].link_bps = 0;
	assert_int_equal(cc_event(cc, &ev, 3), 0);
	assert_int_equal(cc->stats.rejected[CC_EV_INT], 3);
	assert_int_equal(cc->stats.events[CC_EV_INT], 0);

	ev.type = CC_EV_LEVEL;
	ev.u.level = CC_LEVEL_ACK;
	assert_int_equal(cc_event(cc, &ev, 4), 0);
	assert_int_equal(cc->stats.rejected[CC_EV_LEVEL], 1);
	assert_int_equal(cc->rate_bps, path.line_bps);
	cc_destroy(cc);
}

static void test_help_lists_params(void **state)
{
	char buf[1024];
	(void)state;
	assert_int_equal(cc_params_help(&cc_none_ops, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "rate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_u64_round_sat),
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_tx_time),
		cmocka_unit_test(test_none_defaults_and_param),
		cmocka_unit_test(test_bad_params_named),
		cmocka_unit_test(test_malformed_events_counted),
		cmocka_unit_test(test_help_lists_params),
	};
	return cmocka_run_group_tests_name("cc_core", tests, NULL, NULL);
}
