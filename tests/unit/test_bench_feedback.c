/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench's incast derives its switch and sender settings from each algorithm's ops
 * (incast_feedback). Pinned here against the table bench/incast.c held before the
 * algorithms declared their own feedback: every registered algorithm's run gets the same
 * switch options, CNP stand-in and sender parameters, to the byte. The bench's other
 * algorithm lists (the default --algos, help) come from the registry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc.h"
#include "../../bench/bench.h"
#include "../../bench/incast.h"

#define LINK_BPS (250 * QP_MBPS)
#define BDP_BYTES 15729   /* the demo network's: 250 Mb/s x its modelled base RTT */

/* The old table, verbatim: "--early bdp" stood for this network's BDP; INT algorithms
 * since on --int echo (HPCC's INT-on-ACK loop; --int direct below); dcqcn's row since
 * it runs on RED marking at the reference's thresholds scaled to 250 Mb/s (100 KB and
 * 400 KB at 25G: 1000 and 4000 bytes) and real CNPs instead of the 16 KiB notice; acc's
 * since its notices count flows that sent within 2 base RTTs (503 us here). */
static const struct {
	const char *cc;
	const char *args[8];
	bool cnp_from_notice;
	const char *hpcc_params;   /* NULL: the algorithm's defaults; else HPCC's + these */
} old_table[] = {
	{ "none", { "--int", "off", "--early", "off" }, false, NULL },
	{ "hpcc", { "--int", "echo", "--early", "off" }, false, "" },
	{ "acc", { "--int", "echo", "--early", "bdp", "--flow-idle", "1.007ms" }, false, "fair=1" },
	{ "dcqcn", { "--int", "off", "--ecn", "1000,4000,0.2", "--early", "off" }, false, NULL },
	{ "ffd", { "--int", "off", "--early", "off", "--levels", "8K,28K,48K" }, false, NULL },
	{ "idcc", { "--int", "echo", "--early", "off" }, false, NULL },
};
#define NOLD (sizeof(old_table) / sizeof(old_table[0]))

static void test_derived_equals_old_table(void **state)
{
	char bdp[32];
	(void)state;

	snprintf(bdp, sizeof(bdp), "%u", BDP_BYTES);
	for (size_t i = 0; i < NOLD; i++) {
		const struct cc_ops *ops = cc_find(old_table[i].cc);
		struct incast_feedback f;
		size_t n = 0;

		assert_non_null(ops);   /* every algorithm of the old table is still registered */
		incast_feedback(ops, LINK_BPS, BDP_BYTES, &f);
		for (; old_table[i].args[n]; n++) {
			const char *want = strcmp(old_table[i].args[n], "bdp") ? old_table[i].args[n] : bdp;
			if (!f.sw_args[n] || strcmp(f.sw_args[n], want))
				fail_msg("%s: switch argument %zu is \"%s\", was \"%s\"", ops->name, n,
					 f.sw_args[n] ? f.sw_args[n] : "(end)", want);
		}
		if (f.sw_args[n])
			fail_msg("%s: extra switch argument \"%s\"", ops->name, f.sw_args[n]);
		assert_int_equal(f.cnp_from_notice, old_table[i].cnp_from_notice);
		/* The senders' parameters: HPCC's settings plus the row's, or the defaults. */
		assert_int_equal(f.hpcc_settings, old_table[i].hpcc_params != NULL);
		if (old_table[i].hpcc_params && old_table[i].hpcc_params[0])
			assert_string_equal(f.params, old_table[i].hpcc_params);
		else
			assert_null(f.params);
	}
}

/* An algorithm the old table did not know (one added since) still gets the settings its
 * declaration asks for; the table above covers the rest. */
static void test_every_registered_algorithm_derives(void **state)
{
	(void)state;
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		unsigned needs = cc_needs(*o);
		struct incast_feedback f;
		bool levels = false;

		incast_feedback(*o, LINK_BPS, BDP_BYTES, &f);
		bool ecn = (needs & (CC_NEED_CNP | CC_NEED_ECN)) && (*o)->feedback.ecn_kmax_bytes;
		size_t e = ecn ? 4 : 2;

		assert_string_equal(f.sw_args[0], "--int");
		assert_string_equal(f.sw_args[1], needs & CC_NEED_INT ? "echo" : "off");
		if (ecn)
			assert_string_equal(f.sw_args[2], "--ecn");
		assert_int_equal(f.tos, ecn ? 2 : 0);
		assert_string_equal(f.sw_args[e], "--early");
		assert_int_equal(strcmp(f.sw_args[e + 1], "off") != 0,
				 (needs & CC_NEED_NOTICE) || ((needs & CC_NEED_CNP) && !ecn));
		for (size_t n = 0; f.sw_args[n]; n++) {
			assert_true(n < INCAST_SW_ARGS);
			levels |= !strcmp(f.sw_args[n], "--levels");
		}
		assert_int_equal(levels, (needs & CC_NEED_LEVEL) != 0);
		assert_int_equal(f.cnp_from_notice, (needs & CC_NEED_CNP) && !ecn);
		assert_int_equal(f.ecn_echo, ecn && (needs & CC_NEED_ECN));
	}
}

/* qpace-bench --int direct: the switch reports INT straight to the senders of INT
 * algorithms; the others stay off. */
static void test_int_direct_option(void **state)
{
	struct incast_feedback f;
	struct bench_conf c;
	(void)state;

	bench_conf_defaults(&c, CMD_COMPARE);
	assert_int_equal(c.int_mode, BENCH_INT_ECHO);
	incast_feedback(cc_find("hpcc"), LINK_BPS, BDP_BYTES, &f);
	incast_feedback_int(&f, c.int_mode);
	assert_string_equal(f.sw_args[1], "echo");
	incast_feedback_int(&f, BENCH_INT_DIRECT);
	assert_string_equal(f.sw_args[1], "direct");
	incast_feedback(cc_find("dcqcn"), LINK_BPS, BDP_BYTES, &f);
	incast_feedback_int(&f, BENCH_INT_DIRECT);
	assert_string_equal(f.sw_args[1], "off");
}

static void test_default_algos_from_registry(void **state)
{
	struct bench_conf c;
	(void)state;

	bench_conf_defaults(&c, CMD_COMPARE);
	assert_string_equal(c.algos, "none,dcqcn,hpcc,acc,ffd,idcc,tcp,dctcp,timely,swift,none+ia,"
				     "hpcc+ia");
	bench_conf_defaults(&c, CMD_SWEEP);
	assert_string_equal(c.algos, "none,dcqcn,hpcc,acc,ffd,idcc,tcp,dctcp,timely,swift,none+ia,"
				     "hpcc+ia");
}

static void test_help_lists_the_registry(void **state)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	assert_non_null(f);
	bench_cmd_usage(f, "qpace-bench", CMD_INCAST);
	bench_usage(f, "qpace-bench");
	fclose(f);
	assert_non_null(strstr(buf, "Algorithms: none, dcqcn, hpcc, acc, ffd, idcc, tcp, dctcp, "
				    "timely, swift.\n`qpace-bench --help-params ALGO|all` lists"));
	assert_null(strstr(buf, "timely, swift\n(default"));
	free(buf);
}

static void test_unknown_algorithm_names_the_registry(void **state)
{
	char cc[INCAST_ALGO_MAX], err[256];
	bool credits;
	(void)state;

	assert_int_equal(incast_algo_parse("reno+ia", cc, sizeof(cc), &credits, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "algorithm 'reno': not one of none, dcqcn, hpcc, acc, ffd, idcc, "
				 "tcp, dctcp, timely, swift");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derived_equals_old_table),
		cmocka_unit_test(test_every_registered_algorithm_derives),
		cmocka_unit_test(test_int_direct_option),
		cmocka_unit_test(test_default_algos_from_registry),
		cmocka_unit_test(test_help_lists_the_registry),
		cmocka_unit_test(test_unknown_algorithm_names_the_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
