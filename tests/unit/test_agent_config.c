/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's option table, config-file reader and --help: defaults, a full file, one error per
 * bad line naming file, line and key, precedence of the command line, and fuzzed lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_config.h"
#include "test_rng.h"

static void test_defaults_and_file(void **state)
{
	static const char *const file[] = {
		"# qpaced test config",
		"",
		"feedback = 10.0.0.1:5000   # trailing comment",
		"  allow=10.0.0.254 , 10.1.0.0/16,192.168.1.7",
		"metrics = off",
		"cc = ffd",
		"cc-params = down=0.8,severe=0.4",
		"credits = ia",
		"key = /etc/qpace/key",
		"socket = /tmp/q.sock",
		"rate-table = /qpace-test",
		"max-qps = 4096",
		"peer-port = 4800",
		"heartbeat = 5ms\r\n",
		"fallback-hold = 250ms",
		"fallback-safe = 50",
	};
	struct qpaced_config c;
	struct qp_opt_reader r;
	char err[300];
	(void)state;

	qpaced_config_init(&c);
	assert_int_equal(c.fb_ip, 0);
	assert_int_equal(c.fb_port, 4792);
	assert_int_equal(c.metrics_ip, 0x7f000001);
	assert_int_equal(c.metrics_port, 9477);
	assert_int_equal(c.agent.nallow, 1);
	assert_int_equal(c.agent.allow[0].addr, 0x7f000000);
	assert_int_equal(c.agent.max_qps, 1024);
	assert_string_equal(c.cc, "hpcc");
	assert_false(c.agent.credits);
	assert_string_equal(c.key_file, "");
	assert_int_equal(c.fb_hold_ns, QP_NS_PER_S);
	assert_int_equal(c.fb_safe_permille, 100);
	qpaced_config_reader_init(&r, &c, "test.conf");
	for (size_t i = 0; i < sizeof(file) / sizeof(file[0]); i++)
		if (qp_opt_line(&r, file[i], err, sizeof(err)))
			fail_msg("%s", err);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.fb_ip, 0x0a000001);
	assert_int_equal(c.fb_port, 5000);
	assert_int_equal(c.agent.nallow, 3);
	assert_int_equal(c.agent.allow[1].addr, 0x0a010000);
	assert_int_equal(c.agent.allow[1].prefix, 16);
	assert_int_equal(c.metrics_port, 0);
	assert_string_equal(c.agent.cc, "ffd");
	assert_string_equal(c.agent.cc_params, "down=0.8,severe=0.4");
	assert_true(c.agent.credits);
	assert_string_equal(c.key_file, "/etc/qpace/key");
	assert_string_equal(c.socket, "/tmp/q.sock");
	assert_string_equal(c.rate_table, "/qpace-test");
	assert_int_equal(c.agent.max_qps, 4096);
	assert_int_equal(c.agent.peer_port, 4800);
	assert_int_equal(c.heartbeat_ns, 5 * QP_NS_PER_MS);
	assert_int_equal(c.fb_hold_ns, 250 * QP_NS_PER_MS);
	assert_int_equal(c.fb_safe_permille, 50);
	/* the command line comes after the file and wins */
	assert_int_equal(qpaced_config_set(&c, "max-qps", "8", err, sizeof(err)), 0);
	assert_int_equal(c.agent.max_qps, 8);
}

static void test_errors_name_file_line_key(void **state)
{
	static const struct {
		const char *line, *named;
	} bad[] = {
		{ "max-qps = 0", "max-qps" },
		{ "max-qps = 70000", "1..65536" },
		{ "max-qps = 12x", "\"12x\"" },
		{ "feedback = 1.2.3:4", "feedback" },
		{ "feedback = 1.2.3.4", "ADDRESS:PORT" },
		{ "feedback = 1.2.3.4:0", "port" },
		{ "metrics = localhost:9477", "IPv4" },
		{ "allow = 10.0.0.1,,10.0.0.2", "allow" },
		{ "allow = 10.0.0.0/40", "PREFIX" },
		{ "credits = maybe", "one of: off, ia" },
		{ "credits = none", "'none' is written 'off'" },
		{ "cnp = yes", "'yes' is written 'on'" },
		{ "cc = reno", "unknown algorithm \"reno\"" },
		{ "cc-params = eta = 1", "without spaces" },
		{ "heartbeat = 5ns", "100us..10s" },
		{ "fallback-safe = 0", "1..1000" },
		{ "fallback-safe = 1001", "fallback-safe" },
		{ "fallback-hold = 61s", "1ms..60s" },
		{ "socket = ", "socket" },
		{ "colour = blue", "unknown key \"colour\"" },
		{ "just words", "expected key = value" },
	};
	struct qpaced_config c;
	struct qp_opt_reader r;
	char err[300], line[QPACED_LINE_MAX + 10];
	(void)state;

	qpaced_config_init(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char where[32];

		qpaced_config_reader_init(&r, &c, "q.conf");
		qp_opt_line(&r, "# first line", err, sizeof(err));
		assert_int_equal(qp_opt_line(&r, bad[i].line, err, sizeof(err)), -EINVAL);
		snprintf(where, sizeof(where), "q.conf:2: ");
		assert_memory_equal(err, where, strlen(where));
		if (!strstr(err, bad[i].named))
			fail_msg("\"%s\" gave \"%s\", which does not name %s", bad[i].line, err,
				 bad[i].named);
		print_message("%s\n", err);
	}
	/* twice in one file; an overlong line */
	qpaced_config_reader_init(&r, &c, "q.conf");
	assert_int_equal(qp_opt_line(&r, "cc = ffd", err, sizeof(err)), 0);
	assert_int_equal(qp_opt_line(&r, "cc = dcqcn", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "q.conf:2: cc: given twice"));
	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	assert_int_equal(qp_opt_line(&r, line, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "q.conf:3: line longer"));
	/* parameters are checked against the algorithm once everything is read */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "cc", "ffd", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_set(&c, "cc-params", "down=7", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cc-params: ffd: down=7"));
	print_message("%s\n", err);
	/* the gates' hold is published in whole milliseconds */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "fallback-hold", "1500us", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "fallback-hold: 1500000 ns: whole milliseconds"));
	/* --wire-start: 0 (a quarter of the line) or a rate a link can have */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "wire-start", "10", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wire-start: 10 bit/s: 0 (a quarter of the line) or"));
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "wire-start", "6.7M", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.wire_start_bps, 6700000);
	/* --wire-catchup: 0 (off) or 120..1000 percent */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "wire-catchup", "110", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wire-catchup: 110%: 0 (off) or 120..1000"));
	assert_int_not_equal(qpaced_config_set(&c, "wire-catchup", "1001", err, sizeof(err)), 0);
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "wire-catchup", "150", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.wire_catchup_pct, 150);
	/* --wire-used: 200 by default, 0 (off) or 110..1000 percent */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.wire_used_pct, 200);
	assert_int_equal(qpaced_config_set(&c, "wire-used", "100", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wire-used: 100%: 0 (off) or 110..1000"));
	assert_int_not_equal(qpaced_config_set(&c, "wire-used", "1001", err, sizeof(err)), 0);
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "wire-used", "0", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.wire_used_pct, 0);
	/* --ecn-mark: the egress program marks, so it needs --enforce observe or tc; found
	 * by --check as well as at start */
	qpaced_config_init(&c);
	assert_int_equal(qpaced_config_set(&c, "ecn-mark", "on", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ecn-mark: the egress program marks: needs enforce observe or tc"));
	assert_int_equal(qpaced_config_set(&c, "enforce", "observe", err, sizeof(err)), 0);
	assert_int_equal(qpaced_config_finish(&c, err, sizeof(err)), 0);
}

static void test_help_lists_every_option(void **state)
{
	char help[8192];
	(void)state;

	assert_int_equal(qpaced_config_help(help, sizeof(help)), 0);
	for (const struct qp_opt *o = qpaced_options(); o->name; o++) {
		char flag[64];

		snprintf(flag, sizeof(flag), "--%s %s", o->name, o->arg);
		assert_non_null(strstr(help, flag));
		snprintf(flag, sizeof(flag), "(default %s)", o->def[0] ? o->def : "the algorithm's own");
		assert_non_null(strstr(help, flag));
	}
	printf("%s", help);
}

/* Random and mutated lines (fixed seed): never a crash, every error says where. */
static void test_fuzz_lines(void **state)
{
	static const char *const seeds[] = {
		"feedback = 10.0.0.1:5000", "allow = 10.0.0.0/24, any", "cc-params = eta=0.9",
		"max-qps = 64", "metrics = 127.0.0.1:9", "heartbeat = 1.5ms", "credits = ia",
	};
	struct qpaced_config c;
	struct qp_opt_reader r;
	char err[300], line[200];
	uint64_t seed = 99;
	unsigned ok = 0, bad = 0;
	(void)state;

	for (unsigned i = 0; i < 50000; i++) {
		size_t len;

		if (i % 500 == 0) {
			qpaced_config_init(&c);
			qpaced_config_reader_init(&r, &c, "fuzz");
		}
		if (i % 2) {
			len = test_rng(&seed) % sizeof(line);
			for (size_t k = 0; k < len; k++)
				line[k] = (char)(1 + test_rng(&seed) % 255);
			line[len] = 0;
		} else {
			snprintf(line, sizeof(line), "%s", seeds[test_rng(&seed) % 7]);
			len = strlen(line);
			for (unsigned k = 1 + test_rng(&seed) % 3; k; k--)
				line[test_rng(&seed) % len] = (char)(32 + test_rng(&seed) % 95);
		}
		r.seen = 0;
		if (qp_opt_line(&r, line, err, sizeof(err)) == 0) {
			ok++;
			continue;
		}
		bad++;
		assert_memory_equal(err, "fuzz:", 5);
	}
	assert_true(c.agent.nallow >= 1 && c.agent.nallow <= AGENT_MAX_ALLOW);
	assert_true(c.agent.max_qps >= 1 && c.agent.max_qps <= AGENT_MAX_QPS);
	print_message("fuzzed lines: %u accepted, %u refused with file:line\n", ok, bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_file),
		cmocka_unit_test(test_errors_name_file_line_key),
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_fuzz_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
