/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench's command line: perftest's flags parse as perftest's, bad values are refused
 * with the flag, the value and the range named, and --help comes from the same table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../bench/bench.h"

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *)))

static int parse(struct bench_conf *c, unsigned cmd, int argc, char **argv, char *err,
		 size_t len)
{
	bench_conf_defaults(c, cmd);
	err[0] = '\0';
	return bench_conf_parse(c, cmd, argc, argv, err, len);
}

#define PARSE(c, cmd, err, ...) parse(c, cmd, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, sizeof(err))

static void test_perftest_flags(void **state)
{
	struct bench_conf c;
	char err[512];
	(void)state;

	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "ibv", "-d", "rxe0",
			       "-i", "1", "-s", "65536", "-n", "100", "-q", "2", "-p", "18600",
			       "-x", "1", "-F", "--report_gbits", "--out_json", "10.0.0.1"), 0);
	assert_string_equal(c.ib_dev, "rxe0");
	assert_int_equal(c.size_bytes, 65536);
	assert_int_equal(c.iters, 100);
	assert_int_equal(c.qps, 2);
	assert_int_equal(c.tcp_port, 18600);
	assert_int_equal(c.gid_index, 1);
	assert_true(c.cpu_freq && c.report_gbits && c.out_json);
	assert_string_equal(c.server, "10.0.0.1");
	assert_int_equal(c.backend, BACKEND_IBV);

	/* Server side: the same options, no address. */
	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "ibv", "-s", "64K"), 0);
	assert_null(c.server);
	assert_int_equal(c.size_bytes, 65536);

	/* perftest's defaults. */
	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "ibv"), 0);
	assert_int_equal(c.size_bytes, 65536);
	assert_int_equal(c.iters, 5000);
	assert_int_equal(c.tcp_port, 18515);
	assert_string_equal(c.out_json_file, "perftest_out.json");
	assert_int_equal(PARSE(&c, CMD_WRITE_LAT, err, "write_lat", "--backend", "ibv"), 0);
	assert_int_equal(c.size_bytes, 2);
	assert_int_equal(c.iters, 1000);

	/* The soft backend as the issue shows it. */
	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "soft", "--attach",
			       "127.0.0.1:20002", "--ip", "10.0.0.2", "127.0.0.1"), 0);
	assert_string_equal(c.attach, "127.0.0.1:20002");
	assert_string_equal(c.server, "127.0.0.1");

	/* -D in seconds, and --run_infinitely's default period. */
	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "ibv", "-D", "3"), 0);
	assert_int_equal(c.duration_ns, 3 * QP_NS_PER_S);
	assert_int_equal(PARSE(&c, CMD_WRITE_BW, err, "write_bw", "--backend", "ibv",
			       "--run_infinitely"), 0);
	assert_int_equal(c.duration_ns, 5 * QP_NS_PER_S);
}

static void test_incast_flags(void **state)
{
	struct bench_conf c;
	char err[512];
	(void)state;

	assert_int_equal(PARSE(&c, CMD_INCAST, err, "incast", "-N", "16", "-s", "256K", "--cc",
			       "hpcc", "--credits", "ia", "--switch", "127.0.0.1:7000", "-R", "10",
			       "-j"), 0);
	assert_int_equal(c.senders, 16);
	assert_int_equal(c.size_bytes, 256 * 1024);
	assert_string_equal(c.cc, "hpcc");
	assert_int_equal(c.credits, CREDITS_IA);
	assert_string_equal(c.switch_addr, "127.0.0.1:7000");
	assert_int_equal(c.rounds, 10);
	assert_true(c.json);
	/* Defaults: a 250 Mb/s star, 512 KiB buffers, 100 us links, rxe's 128-packet window. */
	assert_int_equal(PARSE(&c, CMD_INCAST, err, "incast"), 0);
	assert_int_equal(c.link_bps, 250 * QP_MBPS);
	assert_int_equal(c.buffer_bytes, 512 * 1024);
	assert_int_equal(c.window_pkts, 128);
	assert_int_equal(c.delay_ns, 100000);
	assert_int_equal(c.senders, 16);
	/* -u/--qp-timeout: 0 = the default (14 for emulated hosts), 1..31 */
	assert_int_equal(c.qp_timeout, 0);
	assert_int_equal(PARSE(&c, CMD_INCAST, err, "incast", "-u", "11"), 0);
	assert_int_equal(c.qp_timeout, 11);
	assert_int_not_equal(PARSE(&c, CMD_INCAST, err, "incast", "--qp-timeout", "0"), 0);
	assert_non_null(strstr(err, "--qp-timeout"));
	assert_int_not_equal(PARSE(&c, CMD_INCAST, err, "incast", "-u", "32"), 0);
}

struct bad_case {
	unsigned cmd;
	int argc;
	char **argv;
	const char *want[3];         /* substrings the message must contain */
};

static void test_bad_input(void **state)
{
	const struct bad_case cases[] = {
		{ CMD_WRITE_BW, ARGC("write_bw", "-s", "9G"), ARGV("write_bw", "-s", "9G"),
		  { "-s/--size", "'9G'", "1..8388608" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "-n", "2"), ARGV("write_bw", "-n", "2"),
		  { "-n/--iters", "'2'", "5..100000000" } },
		{ CMD_INCAST, ARGC("incast", "-N", "64"), ARGV("incast", "-N", "64"),
		  { "-N/--senders", "'64'", "1..63" } },
		{ CMD_INCAST, ARGC("incast", "--credits", "yes"), ARGV("incast", "--credits", "yes"),
		  { "--credits", "'yes'", "off, ia" } },
		{ CMD_INCAST, ARGC("incast", "--rate", "fast"), ARGV("incast", "--rate", "fast"),
		  { "--rate", "'fast'", "bits/s" } },
		{ CMD_INCAST, ARGC("incast", "--mtu", "1000"), ARGV("incast", "--mtu", "1000"),
		  { "--mtu", "'1000'", "2048" } },
		{ CMD_INCAST, ARGC("incast", "--cc", "reno"), ARGV("incast", "--cc", "reno"),
		  { "--cc 'reno'", "hpcc", "dcqcn" } },
		{ CMD_INCAST, ARGC("incast", "--bogus"), ARGV("incast", "--bogus"),
		  { "unknown option", "--bogus", "" } },
		{ CMD_INCAST, ARGC("incast", "-s"), ARGV("incast", "-s"),
		  { "needs a value", "-s", "" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "-n", "10", "-D", "2"),
		  ARGV("write_bw", "-n", "10", "-D", "2"), { "-n/--iters", "-D/--duration", "" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "--backend", "soft"),
		  ARGV("write_bw", "--backend", "soft"), { "--attach", "--ip", "" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "--backend", "ibv", "a", "b"),
		  ARGV("write_bw", "--backend", "ibv", "a", "b"), { "unexpected argument", "'b'", "" } },
		/* --run_infinitely is for write_bw only, as in perftest (not SEND). */
		{ CMD_SEND_BW, ARGC("send_bw", "--run_infinitely"), ARGV("send_bw", "--run_infinitely"),
		  { "does not apply", "--run_infinitely", "" } },
		{ CMD_INCAST, ARGC("incast", "10.0.0.1"), ARGV("incast", "10.0.0.1"),
		  { "takes no server", "10.0.0.1", "" } },
		{ CMD_INCAST, ARGC("incast", "--transport", "pipe"),
		  ARGV("incast", "--transport", "pipe"), { "--transport", "'pipe'", "udp, shm" } },
		{ CMD_INCAST, ARGC("incast", "--transport", "shm", "--clock", "virtual"),
		  ARGV("incast", "--transport", "shm", "--clock", "virtual"),
		  { "--transport shm", "real time", "" } },
		{ CMD_INCAST, ARGC("incast", "--transport", "shm", "--switch", "127.0.0.1:7000"),
		  ARGV("incast", "--transport", "shm", "--switch", "127.0.0.1:7000"),
		  { "--transport shm", "own switch", "" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "--attach", "127.0.0.1:7000", "--ip", "10.0.0.1",
				     "--transport", "shm"),
		  ARGV("write_bw", "--attach", "127.0.0.1:7000", "--ip", "10.0.0.1", "--transport",
		       "shm"), { "--shm PATH", "", "" } },
		{ CMD_WRITE_BW, ARGC("write_bw", "--attach", "127.0.0.1:7000", "--ip", "10.0.0.1",
				     "--shm", "/dev/shm/q.p0"),
		  ARGV("write_bw", "--attach", "127.0.0.1:7000", "--ip", "10.0.0.1", "--shm",
		       "/dev/shm/q.p0"), { "--transport shm", "", "" } },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bench_conf c;
		char err[512];
		assert_int_equal(parse(&c, cases[i].cmd, cases[i].argc, cases[i].argv, err,
				       sizeof(err)), -EINVAL);
		print_message("%-10s -> %s\n", cases[i].argv[1], err);
		for (int k = 0; k < 3; k++)
			if (cases[i].want[k] && *cases[i].want[k] && !strstr(err, cases[i].want[k]))
				fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want[k]);
	}
}

static void test_usage_from_table(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	(void)state;

	bench_cmd_usage(f, "qpace-bench", CMD_WRITE_BW);
	fclose(f);
	const char *want[] = { "-d, --ib-dev", "-s, --size", "-n, --iters", "-D, --duration",
			       "-q, --qp", "-p, --port", "-x, --gid-index", "-F, --CPU-freq",
			       "--report_gbits", "--run_infinitely", "--out_json", "--backend",
			       "--cc", "--credits", "--attach", "--ip" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("write_bw --help lacks %s", want[i]);
	assert_null(strstr(text, "--senders"));      /* incast's, not write_bw's */
	free(text);

	f = open_memstream(&text, &len);
	bench_usage(f, "qpace-bench");
	fclose(f);
	assert_non_null(strstr(text, "incast"));
	assert_non_null(strstr(text, "write_lat"));
	free(text);
	assert_int_equal(bench_cmd_find("incast"), CMD_INCAST);
	assert_int_equal(bench_cmd_find("inc"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perftest_flags),
		cmocka_unit_test(test_incast_flags),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_usage_from_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
