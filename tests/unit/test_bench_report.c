/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench reports: perftest's exact table headers and row formats, and the incast JSON
 * carrying every key the issue lists. (The JSON writer and reader: test_out.c, test_jsonr.c.) */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "../../bench/endpoint.h"
#include "../../bench/incast.h"
#include "../../bench/report.h"

/* Capture what @fn prints. */
#define CAPTURE(text, ...)                                                          \
	do {                                                                        \
		size_t len_;                                                        \
		FILE *out = open_memstream(&(text), &len_);                         \
		__VA_ARGS__;                                                        \
		fclose(out);                                                        \
	} while (0)

static void test_bw_table_is_perftests(void **state)
{
	char *text = NULL;
	struct stats_bw bw = { .peak = 1084.68, .avg = 1084.57, .msg_rate_mpps = 0.017353 };
	(void)state;

	CAPTURE(text, report_bw_header(out, false); report_bw_row(out, 65536, 5000, &bw, false));
	/* perftest's RESULT_FMT and REPORT_FMT, byte for byte. */
	assert_string_equal(text,
		" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
		" 65536      5000             1084.68            1084.57\t\t     0.017353\n");
	free(text);
	CAPTURE(text, report_bw_header(out, true));
	assert_string_equal(text,
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
	free(text);
	/* Tiny Gb/s figures switch to six decimals, as perftest's REPORT_FMT_EXT. */
	struct stats_bw tiny = { .peak = 0.05, .avg = 0.04, .msg_rate_mpps = 0.000076 };
	CAPTURE(text, report_bw_row(out, 65536, 5000, &tiny, true));
	assert_non_null(strstr(text, "0.040000"));
	free(text);
}

static void test_lat_table_is_perftests(void **state)
{
	char *text = NULL;
	struct stats_lat l = { .min_us = 1.5, .max_us = 9.25, .typical_us = 2, .avg_us = 2.5,
			       .stdev_us = 0.5, .p99_us = 5, .p999_us = 9 };
	(void)state;

	/* perftest's REPORT_FMT_LAT (src/perftest_parameters.h), copied from its source. */
	char want[512];
	snprintf(want, sizeof(want), " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
		 "    t_avg[usec]    t_stdev[usec]   99""%%"" percentile[usec]   99.9""%%"" percentile[usec] \n"
		 " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     "
		 "\t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", 2ul, (uint64_t)1000, 1.5, 9.25, 2.0, 2.5, 0.5,
		 5.0, 9.0);
	CAPTURE(text, report_lat_header(out, false); report_lat_row(out, 2, 1000, &l));
	assert_string_equal(text, want);
	free(text);
	CAPTURE(text, report_lat_header(out, true));
	assert_string_equal(text, " #bytes        #iterations       t_avg[usec]    tps average\n");
	free(text);
}

#define KEYS_MAX 64

struct keys {
	char seen[KEYS_MAX][64];
	int n;
	int nulls;
	double jain;
};

static void collect(void *arg, const char *path, const struct jsonr_val *v)
{
	struct keys *k = arg;
	if (k->n < KEYS_MAX)
		snprintf(k->seen[k->n++], sizeof(k->seen[0]), "%s", path);
	k->nulls += v->type == JSONR_NULL;
	if (!strcmp(path, "jain"))
		k->jain = v->num;
}

static bool has(const struct keys *k, const char *path)
{
	for (int i = 0; i < k->n; i++)
		if (!strcmp(k->seen[i], path))
			return true;
	return false;
}

static void test_incast_json_keys(void **state)
{
	struct incast_result r = { .algorithm = "hpcc+ia", .cc = "hpcc", .credits = true,
				   .senders = 16, .bytes_per_sender = 262144, .link_bps = QP_GBPS,
				   .jain = 0.9987, .have_switch = true, .max_queue_bytes = 4096 };
	const char *required[] = { "algorithm", "senders", "bytes_per_sender", "link_bps",
				   "goodput_bps", "jain", "fct_us.p50", "fct_us.p99", "fct_us.max",
				   "drops", "retransmits", "timeouts", "max_queue_bytes",
				   "avg_queue_bytes", "ecn_marks", "impair_lost" };
	char *text = NULL, err[128];
	struct keys k = { .n = 0 };
	(void)state;

	CAPTURE(text, incast_print_json(out, &r, false));
	assert_int_equal(jsonr_walk(text, strlen(text), collect, &k, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!has(&k, required[i]))
			fail_msg("incast -j lacks %s: %s", required[i], text);
	assert_int_equal(k.nulls, 0);
	assert_true(fabs(k.jain - 0.9987) < 1e-9);
	free(text);

	/* Without the switch's figures those keys are null, never a made-up 0. */
	r.have_switch = false;
	memset(&k, 0, sizeof(k));
	CAPTURE(text, incast_print_json(out, &r, true));
	assert_int_equal(jsonr_walk(text, strlen(text), collect, &k, err, sizeof(err)), 0);
	/* drops, ecn_marks, impair_lost, max and mean queue, the switch loop's lateness (max,
	 * total) */
	assert_int_equal(k.nulls, 7);
	free(text);
}

/* The clocks: every result names its clock; the engine's figures (the names agreed with
 * the ns-3 comparison) are in a virtual-time result only, and its text has them on one
 * line. */
static void test_incast_clock_keys(void **state)
{
	static const char *const vt[] = { "events", "packet_hops", "sim_s", "wall_s" };
	struct incast_result r = { .algorithm = "hpcc", .cc = "hpcc", .clock = "real",
				   .senders = 2, .have_switch = true, .events = 7,
				   .packet_hops = 5, .sim_s = 0.25, .wall_s = 0.5 };
	char *text = NULL, err[128];
	struct keys k = { .n = 0 };
	(void)state;

	CAPTURE(text, incast_print_json(out, &r, false));
	assert_int_equal(jsonr_walk(text, strlen(text), collect, &k, err, sizeof(err)), 0);
	assert_true(has(&k, "clock"));
	assert_non_null(strstr(text, "\"clock\":\"real\""));
	for (size_t i = 0; i < 4; i++)
		if (has(&k, vt[i]))
			fail_msg("a real-time result carries %s: %s", vt[i], text);
	free(text);
	snprintf(r.clock, sizeof(r.clock), "virtual");
	memset(&k, 0, sizeof(k));
	CAPTURE(text, incast_print_json(out, &r, false));
	assert_int_equal(jsonr_walk(text, strlen(text), collect, &k, err, sizeof(err)), 0);
	for (size_t i = 0; i < 4; i++)
		if (!has(&k, vt[i]))
			fail_msg("a virtual-time result lacks %s: %s", vt[i], text);
	assert_non_null(strstr(text, "\"events\":7,\"packet_hops\":5,\"sim_s\":0.250000,"
				     "\"wall_s\":0.500"));
	free(text);
	CAPTURE(text, incast_print_text(out, &r, NULL, 0));
	assert_non_null(strstr(text, "virtual time              : 0.250000 s simulated in "
				     "0.500 s wall, 7 events, 5 packet-hops (10 per wall second)"));
	free(text);
}

/* The exponent whose timeout outlasts twice a full buffer's drain, and the note the text
 * report gives when flows waited out a longer one. */
static void test_timeout_hint(void **state)
{
	struct incast_result r = { .algorithm = "hpcc", .cc = "hpcc", .clock = "real",
				   .senders = 16, .link_bps = 1000000000, .buffer_bytes = 524288,
				   .qp_timeout = 14, .timeouts = 5 };
	char *text = NULL;
	(void)state;

	/* 512 KiB at 1G drains in 4.19 ms: 2 x that is 8.39 ms = 4.096 us << 11 exactly */
	assert_int_equal(ep_timeout_for_drain(524288, 1000000000, 1), 11);
	assert_int_equal(ep_timeout_for_drain(524289, 1000000000, 1), 12);
	assert_int_equal(ep_timeout_for_drain(131072, 20000000, 12), 15);   /* 52 ms: 134 ms */
	assert_int_equal(ep_timeout_for_drain(1500, 400000000000, 12), 12); /* the floor */
	assert_int_equal(ep_timeout_for_drain(1ull << 30, 1000, 1), EP_QP_TIMEOUT_MAX);

	CAPTURE(text, incast_print_text(out, &r, NULL, 0));
	assert_non_null(strstr(text, " note: 5 timeouts of 67.1 ms (-u 14); a full 524288-byte "
				     "buffer drains in 4.2 ms here, so -u 11 (8.4 ms)"));
	free(text);
	r.qp_timeout = 11;   /* already short enough: no note */
	CAPTURE(text, incast_print_text(out, &r, NULL, 0));
	assert_null(strstr(text, "note:"));
	free(text);
	r.qp_timeout = 14;
	r.timeouts = 0;      /* nothing waited: no note */
	CAPTURE(text, incast_print_text(out, &r, NULL, 0));
	assert_null(strstr(text, "note:"));
	free(text);
}

static void count_top(void *arg, const char *path, const struct jsonr_val *v)
{
	(void)v;
	if (!strcmp(path + strspn(path, "0123456789"), ".algorithm"))
		(*(int *)arg)++;
}

static void test_summary_and_compare(void **state)
{
	struct incast_result r[2] = {
		{ .algorithm = "none", .goodput_ratio = 0.5, .drops = 900, .have_switch = true },
		{ .algorithm = "hpcc", .goodput_ratio = 0.95, .have_switch = true },
	};
	char path[] = "/tmp/qpace-summary-XXXXXX", err[128], *text = NULL;
	int fd = mkstemp(path), objs = 0;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(incast_write_summary(path, r, 2), 0);
	FILE *f = fdopen(fd, "r");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	unlink(path);
	assert_int_equal(jsonr_walk(buf, n, count_top, &objs, err, sizeof(err)), 0);
	assert_int_equal(objs, 2);
	assert_true(buf[0] == '[');

	CAPTURE(text, incast_print_compare(out, r, 2));
	assert_non_null(strstr(text, "goodput[Mb/s]"));
	assert_non_null(strstr(text, "\n none "));
	assert_non_null(strstr(text, "900"));
	print_message("%s", text);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_table_is_perftests),
		cmocka_unit_test(test_lat_table_is_perftests),
		cmocka_unit_test(test_incast_json_keys),
		cmocka_unit_test(test_incast_clock_keys),
		cmocka_unit_test(test_summary_and_compare),
		cmocka_unit_test(test_timeout_hint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
