/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The option engine (qpace/opt.h) on its own table: each type's parse and the range in its
 * error, callback rows, subcommand masks, repeated, missing and unknown options, --help,
 * rows applied first, the config-line feed and key=value, defaults, --help's layout,
 * tables the engine refuses, on/off and the other spellings it refuses, --version, and the
 * manual page (qp_opt_man) against --help. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/opt.h"
#include "qpace/units.h"

#define ARGV(...) ((char *[]){ "prog", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "prog", __VA_ARGS__ }) / sizeof(char *)))

enum { CMD_A = 1, CMD_B = 2 };

struct conf {
	bool flag, help;
	int iflag;
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;
	uint64_t bytes;
	qp_rate_bps rate;
	qp_time_ns t, secs;
	const char *str;
	char buf[8];
	unsigned choice;
	uint32_t pair[2];
	int order[4], norder;
	const char *pos_a;
};

static const char *const colours[] = { "red", "green", "blue", NULL };
static const char *const off_ia[] = { "off", "ia", NULL };

/* "A,B": two numbers, the first below the second. */
static int parse_pair(const struct qp_opt *o, void *conf, const char *arg, char *err,
		      size_t len)
{
	struct conf *c = conf;
	unsigned a, b;
	char tail;

	(void)o;
	if (sscanf(arg, "%u,%u%c", &a, &b, &tail) != 2 || a >= b)
		return snprintf(err, len, "not A,B with A < B"), -EINVAL;
	c->pair[0] = a;
	c->pair[1] = b;
	return 0;
}

/* Records the order rows are applied in. */
static int note(const struct qp_opt *o, void *conf, const char *arg, char *err, size_t len)
{
	struct conf *c = conf;

	(void)arg, (void)err, (void)len;
	c->order[c->norder++] = o->short_name;
	return 0;
}

/* A parser shared with other callers: its message quotes the whole value. */
static int quoting(const struct qp_opt *o, void *conf, const char *arg, char *err, size_t len)
{
	(void)o, (void)conf;
	return snprintf(err, len, "\"%s\" is not a colour we know", arg), -EINVAL;
}

static int own_msg(const struct qp_opt *o, void *conf, const char *arg, char *err, size_t len)
{
	(void)conf;
	return snprintf(err, len, "--%s '%s': said the callback", o->name, arg), -EINVAL;
}

#define AT(f) QP_OPT_AT(struct conf, f)

static const struct qp_opt rows[] = {
	{ "flag", 'f', QP_OPT_FLAG, NULL, AT(flag), .help = "a flag" },
	{ "iflag", 0, QP_OPT_FLAG, NULL, AT(iflag), .help = "an int flag" },
	{ "count", 'n', QP_OPT_UINT, "N", AT(u64), .min = 1, .max = 100, .help = "a count",
	  .def = "7" },
	{ "wide", 0, QP_OPT_UINT, "N", AT(u32), .max = UINT32_MAX, .help = "32 bits" },
	{ "port", 'p', QP_OPT_UINT, "PORT", AT(u16), .min = 1, .max = 65535, .cmds = CMD_A,
	  .help = "16 bits, command A" },
	{ "small", 0, QP_OPT_UINT, "N", AT(u8), .max = 200, .cmds = CMD_B, .help = "8 bits, B" },
	{ "qpn", 0, QP_OPT_UINT, "QPN", AT(u32), .max = 0xffffff, .flags = QP_OPT_F_HEX,
	  .cmds = CMD_B, .help = "decimal or hex" },
	{ "size", 's', QP_OPT_BYTES, "SIZE", AT(bytes), .min = 64, .max = 1u << 20,
	  .help = "a size" },
	{ "rate", 'r', QP_OPT_RATE, "RATE", AT(rate), .min = QP_MBPS, .max = 10 * QP_GBPS,
	  .help = "a rate\nover two lines" },
	{ "time", 't', QP_OPT_TIME, "TIME", AT(t), .min = QP_NS_PER_US, .max = QP_NS_PER_S,
	  .help = "a time" },
	{ "secs", 0, QP_OPT_TIME, "S", AT(secs), .max = 60 * QP_NS_PER_S, .unit_ns = QP_NS_PER_S,
	  .help = "a bare number is seconds" },
	{ "name", 'N', QP_OPT_STR, "NAME", AT(str), .help = "kept as given" },
	{ "buf", 0, QP_OPT_STRBUF, "TEXT", AT(buf), .help = "copied", .def = "abc" },
	{ "colour", 'c', QP_OPT_CHOICE, "C", AT(choice), .choices = colours, .help = "a choice" },
	{ "mode", 0, QP_OPT_CHOICE, "off|ia", AT(choice), .choices = off_ia, .cmds = CMD_B,
	  .help = "off or a word" },
	{ "pair", 0, QP_OPT_FN, "A,B", .fn = parse_pair, .help = "a callback" },
	{ "quoting", 0, QP_OPT_FN, "X", .fn = quoting, .help = "quotes the value" },
	{ "own", 0, QP_OPT_FN, "X", .fn = own_msg, .flags = QP_OPT_F_OWN_MSG, .help = "own" },
	{ "first", '1', QP_OPT_FN, "X", .fn = note, .flags = QP_OPT_F_FIRST, .help = "first" },
	{ "second", '2', QP_OPT_FN, "X", .fn = note, .help = "in order" },
	{ "retired", 0, QP_OPT_FLAG, NULL, AT(flag), .old_short = 'R', .help = "was -R" },
	{ "help", 'h', QP_OPT_HELP, NULL, AT(help), .help = "this text" },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static int parse_cmd(struct conf *c, unsigned cmd, int argc, char **argv, char *err, size_t len,
		     uint64_t *seen)
{
	const struct qp_opt_spec spec = { rows, NROWS, cmd, false };

	memset(c, 0, sizeof(*c));
	err[0] = 0;
	return qp_opt_parse(&spec, argc, argv, c, seen, err, len);
}

#define PARSE(c, cmd, err, ...) parse_cmd(c, cmd, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), err, \
					  sizeof(err), NULL)

static void test_types_parse(void **state)
{
	struct conf c;
	char err[300];
	char **argv = ARGV("-f", "--iflag", "-n", "42", "--wide", "4000000000", "-p", "65535",
			   "-s", "64K", "-r", "2.5G", "-t", "10ms", "--secs", "1.5", "-N", "x y",
			   "--buf", "1234567", "-c", "blue", "--pair", "3,9");
	int argc = 0;
	(void)state;

	while (argv[argc])
		argc++;
	assert_int_equal(parse_cmd(&c, CMD_A, argc, argv, err, sizeof(err), NULL), argc);
	assert_true(c.flag);
	assert_int_equal(c.iflag, 1);
	assert_int_equal(c.u64, 42);
	assert_int_equal(c.u32, 4000000000u);
	assert_int_equal(c.u16, 65535);
	assert_int_equal(c.bytes, 65536);
	assert_int_equal(c.rate, 2500 * QP_MBPS);
	assert_int_equal(c.t, 10 * QP_NS_PER_MS);
	assert_int_equal(c.secs, 1500 * QP_NS_PER_MS);
	assert_string_equal(c.str, "x y");
	assert_string_equal(c.buf, "1234567");
	assert_int_equal(c.choice, 2);
	assert_int_equal(c.pair[0], 3);
	assert_int_equal(c.pair[1], 9);
	/* 8-bit field, hex (command B) */
	assert_int_equal(PARSE(&c, CMD_B, err, "--small", "200", "--qpn", "0xABcd12"), 5);
	assert_int_equal(c.u8, 200);
	assert_int_equal(c.u32, 0xabcd12);
	assert_int_equal(PARSE(&c, CMD_B, err, "--qpn", "77"), 3);
	assert_int_equal(c.u32, 77);
	/* --name=value and clustered short flags */
	assert_int_equal(PARSE(&c, CMD_A, err, "--count=5", "-fn9"), 3);
	assert_int_equal(c.u64, 9);
	assert_true(c.flag);
	/* more options than arguments (found by fuzz_opt) */
	assert_int_equal(PARSE(&c, CMD_A, err, "-ffffffffffff"), 2);
	assert_true(c.flag);
}

struct bad {
	unsigned cmd;
	const char *flag, *value;
	const char *want;
};

static void test_range_errors(void **state)
{
	static const struct bad bad[] = {
		{ CMD_A, "-n", "0", "-n/--count '0': not a whole number in 1..100" },
		{ CMD_A, "-n", "101", "-n/--count '101': not a whole number in 1..100" },
		{ CMD_A, "-n", "12x", "-n/--count '12x': not a whole number in 1..100" },
		{ CMD_A, "-n", "-1", "-n/--count '-1': not a whole number" },
		{ CMD_A, "--wide", "4294967296", "--wide '4294967296': not a whole number in "
		  "0..4294967295" },
		{ CMD_A, "-p", "0", "-p/--port '0': not a whole number in 1..65535" },
		{ CMD_B, "--small", "201", "--small '201': not a whole number in 0..200" },
		{ CMD_B, "--qpn", "0x1000000", "--qpn '0x1000000': not a whole number in "
		  "0..0xffffff (decimal or 0x hex)" },
		{ CMD_B, "--qpn", "0x", "--qpn '0x': not a whole number" },
		{ CMD_A, "-s", "9G", "-s/--size '9G': not a size in 64..1048576 bytes (e.g. 64K, 1M)" },
		{ CMD_A, "-s", "63", "-s/--size '63': not a size in 64..1048576 bytes" },
		{ CMD_A, "-r", "fast", "-r/--rate 'fast': not a rate in 1M..10G bits/s (e.g. 100M, 1G)" },
		{ CMD_A, "-t", "2s", "-t/--time '2s': not a time in 1us..1s (e.g. 5us, 10ms, 2s)" },
		{ CMD_A, "-t", "500ns", "-t/--time '500ns': not a time in 1us..1s" },
		{ CMD_A, "--secs", "61", "--secs '61': not a time in 0..60s" },
		{ CMD_A, "--secs", "-1", "--secs '-1': not a time in 0..60s" },
		{ CMD_A, "-N", "", "-N/--name '': an empty value" },
		{ CMD_A, "--buf", "12345678", "--buf '12345678': not 1..7 characters" },
		{ CMD_A, "--buf", "", "--buf '': not 1..7 characters" },
		{ CMD_A, "-c", "pink", "-c/--colour 'pink': one of: red, green, blue" },
		{ CMD_A, "--pair", "9,3", "--pair '9,3': not A,B with A < B" },
		/* a callback's own quote of the value is not repeated */
		{ CMD_A, "--quoting", "mauve", "--quoting 'mauve': not a colour we know" },
		{ CMD_A, "--own", "x", "--own 'x': said the callback" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "prog", (char *)bad[i].flag, (char *)bad[i].value, NULL };
		struct conf c;
		char err[300];

		assert_int_equal(parse_cmd(&c, bad[i].cmd, 3, argv, err, sizeof(err), NULL), -EINVAL);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("%s %s: \"%s\", want \"%s\"", bad[i].flag, bad[i].value, err,
				 bad[i].want);
		print_message("%s\n", err);
	}
}

static void test_scan_errors(void **state)
{
	const struct {
		unsigned cmd;
		int argc;
		char **argv;
		const char *want;
	} bad[] = {
		{ CMD_A, ARGC("--bogus"), ARGV("--bogus"), "unknown option '--bogus'" },
		{ CMD_A, ARGC("-z"), ARGV("-z"), "unknown option '-z'" },
		/* a short flag a row no longer has: refused with the long one named */
		{ CMD_A, ARGC("-R"), ARGV("-R"), "unknown option '-R' (it is written --retired)" },
		{ CMD_A, ARGC("-s"), ARGV("-s"), "option '-s' needs a value" },
		{ CMD_A, ARGC("-f", "--size"), ARGV("-f", "--size"), "option '--size' needs a value" },
		{ CMD_A, ARGC("--flag=yes"), ARGV("--flag=yes"), "option '--flag' takes no value" },
		/* a row of another command */
		{ CMD_A, ARGC("--small", "3"), ARGV("--small", "3"),
		  "option '--small' does not apply to this command" },
		{ CMD_B, ARGC("-p", "3"), ARGV("-p", "3"), "option '-p' does not apply to this command" },
		{ CMD_B, ARGC("--port=3"), ARGV("--port=3"),
		  "option '--port' does not apply to this command" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct conf c;
		char err[300];

		assert_int_equal(parse_cmd(&c, bad[i].cmd, bad[i].argc, bad[i].argv, err, sizeof(err),
					   NULL), -EINVAL);
		assert_string_equal(err, bad[i].want);
	}
}

static void test_repeat_positional_seen(void **state)
{
	struct conf c;
	char err[300];
	uint64_t seen;
	char **argv = ARGV("a", "-n", "3", "b", "--count", "4", "c");
	(void)state;

	/* a repeated option: the last one wins; positional arguments permute to the end */
	assert_int_equal(parse_cmd(&c, CMD_A, ARGC("a", "-n", "3", "b", "--count", "4", "c"), argv,
				   err, sizeof(err), &seen), 5);
	assert_int_equal(c.u64, 4);
	assert_string_equal(argv[5], "a");
	assert_string_equal(argv[6], "b");
	assert_string_equal(argv[7], "c");
	assert_true(qp_opt_seen(rows, NROWS, seen, "count"));
	assert_false(qp_opt_seen(rows, NROWS, seen, "size"));
	/* in order: options end at the first positional argument (a COMMAND) */
	const struct qp_opt_spec spec = { rows, NROWS, CMD_A, true };
	char **argv2 = ARGV("-f", "cmd", "-n", "3");
	memset(&c, 0, sizeof(c));
	assert_int_equal(qp_opt_parse(&spec, ARGC("-f", "cmd", "-n", "3"), argv2, &c, NULL, err,
				      sizeof(err)), 2);
	assert_true(c.flag);
	assert_int_equal(c.u64, 0);
	/* "--" ends the options */
	assert_int_equal(PARSE(&c, CMD_A, err, "--", "-f"), 2);
	assert_false(c.flag);
}

static void test_first_and_help(void **state)
{
	struct conf c;
	char err[300];
	uint64_t seen;
	(void)state;

	/* -1 rows before the others, each group in command-line order */
	assert_int_equal(PARSE(&c, CMD_A, err, "-2", "a", "-1", "b", "-2", "c", "-1", "d"), 9);
	assert_int_equal(c.norder, 4);
	assert_int_equal(c.order[0], '1');
	assert_int_equal(c.order[1], '1');
	assert_int_equal(c.order[2], '2');
	assert_int_equal(c.order[3], '2');
	/* --help: the other values are not looked at, its field is set */
	assert_int_equal(parse_cmd(&c, CMD_A, ARGC("-n", "0", "--help"), ARGV("-n", "0", "--help"),
				   err, sizeof(err), &seen), 4);
	assert_true(c.help);
	assert_int_equal(c.u64, 0);
	assert_true(qp_opt_seen(rows, NROWS, seen, "help"));
	/* but an unknown option is still an error */
	assert_int_equal(PARSE(&c, CMD_A, err, "--bogus", "-h"), -EINVAL);
}

static void test_defaults(void **state)
{
	struct conf c = { 0 };
	char err[300];
	static const struct qp_opt bad_def[] = {
		{ "n", 0, QP_OPT_UINT, "N", AT(u64), .max = 5, .help = "", .def = "6" },
	};
	(void)state;

	assert_int_equal(qp_opt_defaults(rows, NROWS, CMD_A, &c, err, sizeof(err)), 0);
	assert_int_equal(c.u64, 7);
	assert_string_equal(c.buf, "abc");
	assert_int_equal(qp_opt_defaults(bad_def, 1, 0, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option table: --n: default '6': not a whole number in 0..5");
}

static void test_config_lines(void **state)
{
	struct conf c = { 0 };
	struct qp_opt_reader r;
	char err[400], line[QP_OPT_LINE_MAX + 10];
	static const char *const good[] = {
		"# a comment", "", "   ", "count = 12   # trailing comment", "  size=128K",
		"flag = on", "iflag = on", "colour = green\r\n", "pair = 1,2", "buf = x",
	};
	static const struct {
		const char *line, *want;
	} bad[] = {
		{ "count = 0", "t.conf:1: count: \"0\": not a whole number in 1..100" },
		{ "flag = maybe", "t.conf:1: flag: \"maybe\": not on or off" },
		{ "flag = yes", "t.conf:1: flag: \"yes\": not on or off ('yes' is written 'on')" },
		{ "flag = 0", "t.conf:1: flag: \"0\": not on or off ('0' is written 'off')" },
		{ "quoting = mauve", "t.conf:1: quoting: \"mauve\": not a colour we know" },
		{ "own = x", "t.conf:1: --own 'x': said the callback" },
		{ "colour", "t.conf:1: \"colour\": expected key = value" },
		{ "help = yes", "t.conf:1: unknown key \"help\" (known: flag, iflag, count, wide, port," },
		{ "small = 1", "t.conf:1: unknown key \"small\"" },
	};
	(void)state;

	qp_opt_reader_init(&r, rows, NROWS, CMD_A, &c, "t.conf");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (qp_opt_line(&r, good[i], err, sizeof(err)))
			fail_msg("\"%s\": %s", good[i], err);
	assert_int_equal(r.line, sizeof(good) / sizeof(good[0]));
	assert_int_equal(c.u64, 12);
	assert_int_equal(c.bytes, 128 * 1024);
	assert_true(c.flag);
	assert_int_equal(c.iflag, 1);
	assert_int_equal(c.choice, 1);
	assert_int_equal(c.pair[1], 2);
	assert_string_equal(c.buf, "x");
	/* each key once per file */
	assert_int_equal(qp_opt_line(&r, "count = 13", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:11: count: given twice in this file");
	memset(line, 'k', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	assert_int_equal(qp_opt_line(&r, line, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:12: line longer than 1024 characters");
	/* a flag's value in a file; another file may set a key again */
	qp_opt_reader_init(&r, rows, NROWS, CMD_A, &c, "u.conf");
	assert_int_equal(qp_opt_line(&r, "flag = off", err, sizeof(err)), 0);
	assert_false(c.flag);
	assert_int_equal(qp_opt_line(&r, "count = 13", err, sizeof(err)), 0);
	assert_int_equal(c.u64, 13);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		qp_opt_reader_init(&r, rows, NROWS, CMD_A, &c, "t.conf");
		assert_int_equal(qp_opt_line(&r, bad[i].line, err, sizeof(err)), -EINVAL);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("\"%s\": \"%s\", want \"%s\"", bad[i].line, err, bad[i].want);
	}
	/* one key=value */
	assert_int_equal(qp_opt_set(rows, NROWS, CMD_B, &c, "small", "9", err, sizeof(err)), 0);
	assert_int_equal(c.u8, 9);
	assert_int_equal(qp_opt_set(rows, NROWS, CMD_B, &c, "port", "9", err, sizeof(err)), -ENOENT);
	assert_int_equal(qp_opt_set(rows, NROWS, CMD_B, &c, "small", "x", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "small: \"x\": not a whole number in 0..200");
	/* another spelling of off, where off is one of the words */
	assert_int_equal(qp_opt_set(rows, NROWS, CMD_B, &c, "mode", "none", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "mode: \"none\": one of: off, ia ('none' is written 'off')");
	assert_int_equal(qp_opt_set(rows, NROWS, CMD_B, &c, "colour", "no", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "colour: \"no\": one of: red, green, blue");
}

static void test_onoff(void **state)
{
	char why[100];
	bool on = false;
	(void)state;

	assert_int_equal(qp_onoff_parse("on", &on, why, sizeof(why)), 0);
	assert_true(on);
	assert_int_equal(qp_onoff_parse("off", &on, why, sizeof(why)), 0);
	assert_false(on);
	assert_int_equal(qp_onoff_parse("skip", &on, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "not on or off ('skip' is written 'off')");
	assert_int_equal(qp_onoff_parse("yes", &on, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "not on or off ('yes' is written 'on')");
	assert_int_equal(qp_onoff_parse("On", &on, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "not on or off");
}

static char *capture(const struct qp_opt *t, size_t n, unsigned cmd, bool keys)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (keys)
		qp_opt_usage_keys(f, t, n, cmd);
	else
		qp_opt_usage(f, t, n, cmd);
	fclose(f);
	return text;
}

static void test_usage(void **state)
{
	char *text = capture(rows, NROWS, CMD_A, false);
	(void)state;

	print_message("%s", text);
	assert_non_null(strstr(text, "  -n, --count N               a count (default 7)\n"));
	assert_non_null(strstr(text, "      --iflag                 an int flag\n"));
	assert_non_null(strstr(text, "  -r, --rate RATE             a rate\n"
				     "                              over two lines\n"));
	assert_non_null(strstr(text, "-p, --port PORT"));
	assert_null(strstr(text, "--small"));          /* command B's */
	free(text);
	text = capture(rows, NROWS, CMD_B, true);
	assert_non_null(strstr(text, "  count=N                     a count (default 7)\n"));
	assert_non_null(strstr(text, "small=N"));
	assert_null(strstr(text, "help"));
	free(text);
}

static void test_bad_tables(void **state)
{
	struct conf c;
	char err[300];
	static const struct qp_opt narrow[] = {
		{ "n", 0, QP_OPT_UINT, "N", AT(u8), .max = 256, .help = "" },
	};
	static const struct qp_opt twice[] = {
		{ "n", 0, QP_OPT_FLAG, NULL, AT(flag), .help = "" },
		{ "n", 0, QP_OPT_FLAG, NULL, AT(flag), .cmds = CMD_B, .help = "" },
	};
	static const struct qp_opt disjoint[] = {
		{ "n", 0, QP_OPT_FLAG, NULL, AT(flag), .cmds = CMD_A, .help = "" },
		{ "n", 0, QP_OPT_FLAG, NULL, AT(flag), .cmds = CMD_B, .help = "" },
	};
	static const struct qp_opt no_fn[] = { { "x", 0, QP_OPT_FN, "X", .help = "" } };
	const struct qp_opt_spec s1 = { narrow, 1, 0, false }, s2 = { twice, 2, CMD_B, false },
				 s3 = { disjoint, 2, CMD_B, false }, s4 = { no_fn, 1, 0, false };
	(void)state;

	assert_int_equal(qp_opt_parse(&s1, 1, ARGV(NULL), &c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option table: --n: its range does not fit its field");
	assert_int_equal(qp_opt_parse(&s2, 1, ARGV(NULL), &c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option table: --n: given twice for one command");
	assert_int_equal(qp_opt_parse(&s3, 1, ARGV(NULL), &c, NULL, err, sizeof(err)), 1);
	assert_int_equal(qp_opt_parse(&s4, 1, ARGV(NULL), &c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option table: --x: no callback");
}

static void test_main(void **state)
{
	static const struct qp_opt t[] = {
		{ "count", 'n', QP_OPT_UINT, "N", AT(u64), .min = 1, .max = 9, .help = "n",
		  .def = "2" },
		{ "help", 'h', QP_OPT_HELP, NULL, .help = "this text" },
	};
	const struct qp_opt_prog p = { .name = "prog", .head = "usage: prog\n", .t = t, .n = 2,
				       .max_args = 1 };
	struct conf c = { 0 };
	int first = -1;
	(void)state;

	assert_int_equal(qp_opt_main(&p, ARGC("x"), ARGV("x"), &c, &first), 0);
	assert_int_equal(c.u64, 2);                  /* the default */
	assert_int_equal(first, 1);
	assert_int_equal(qp_opt_main(&p, ARGC("-n", "3"), ARGV("-n", "3"), &c, &first), 0);
	assert_int_equal(c.u64, 3);
	assert_int_equal(first, 3);
	assert_int_equal(qp_opt_main(&p, ARGC("x", "y"), ARGV("x", "y"), &c, NULL), -EINVAL);
	assert_int_equal(qp_opt_main(&p, ARGC("-n", "0"), ARGV("-n", "0"), &c, NULL), -EINVAL);
	assert_int_equal(qp_opt_main(&p, ARGC("-h"), ARGV("-h"), &c, NULL), 1);
}

/* --version stops the parse like --help; the prog prints "NAME VERSION". */
static void test_version(void **state)
{
	static const struct qp_opt t[] = {
		{ "count", 'n', QP_OPT_UINT, "N", AT(u64), .min = 1, .max = 9, .help = "n" },
		QP_OPT_STD_ROWS,
	};
	const struct qp_opt_prog p = { .name = "prog", .t = t, .n = 4 };
	struct conf c = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	(void)state;

	assert_int_equal(qp_opt_main(&p, ARGC("-n", "0", "--version"),
				     ARGV("-n", "0", "--version"), &c, NULL), 1);
	assert_int_equal(qp_opt_main(&p, ARGC("--version", "x"), ARGV("--version", "x"), &c,
				     NULL), 1);
	qp_opt_version(f, "prog");
	fclose(f);
	assert_true(len > strlen("prog 0"));
	assert_memory_equal(text, "prog ", 5);
	assert_int_equal(text[len - 1], '\n');
	free(text);
}

/* The manual page of a table: every row that --help prints has its tag, with metavar,
 * range and default; hidden rows neither; roff's special characters escaped. */
static void test_man(void **state)
{
	static const struct qp_opt_cmd cmds[] = {
		{ "go", "[options] WHERE", "go somewhere.\nIn two lines", rows, NROWS, CMD_B },
	};
	static const struct qp_opt std[] = { QP_OPT_STD_ROWS };
	const struct qp_opt_prog p = {
		.name = "prog", .purpose = "a test of the page",
		.head = "usage: prog [-c FILE] [options]\n       prog go WHERE\n\n"
			"Does things.\n.starts with a dot and a \\ backslash\n\n"
			"Example:\n  prog -n 3\n\nOptions:\n",
		.t = std, .n = 3, .cmds = cmds, .ncmds = 1, .tail = "\nSignals: none.\n",
		.files = "/etc/prog.conf\tthe file", .see_also = "other(1)",
	};
	char *page = NULL, *help = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&page, &len);
	(void)state;

	qp_opt_man(f, &p);
	fclose(f);
	print_message("%s", page);
	assert_non_null(strstr(page, ".SH NAME\nprog \\- a test of the page\n"));
	assert_non_null(strstr(page, ".SH SYNOPSIS\n.nf\n\\fBprog\\fR [\\-c FILE] [options]\n"
				     "\\fBprog\\fR go WHERE\n.fi\n"));
	assert_non_null(strstr(page, "\\&.starts with a dot and a \\e backslash\n"));
	assert_non_null(strstr(page, ".RS 4\n.nf\nprog \\-n 3\n.fi\n.RE\n"));
	assert_null(strstr(page, "Options:"));
	assert_non_null(strstr(page, ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n"));
	assert_non_null(strstr(page, "\\fB\\-\\-version\\fR\n"));
	assert_null(strstr(page, "help\\-man"));                /* hidden */
	assert_non_null(strstr(page, ".SS \"go\"\n"));
	assert_non_null(strstr(page, ".TP\n\\fB\\-n\\fR, \\fB\\-\\-count\\fR \\fIN\\fR\n"
				     "a count\n.br\nAccepted: 1..100.\n.br\nDefault: 7.\n"));
	assert_non_null(strstr(page, "\\fB\\-\\-small\\fR"));          /* command B's */
	assert_null(strstr(page, "\\fB\\-\\-port\\fR"));               /* A's only */
	assert_non_null(strstr(page, ".SH EXIT STATUS\n"));
	assert_non_null(strstr(page, ".SH FILES\n.TP\n.I /etc/prog.conf\nthe file\n"));
	assert_non_null(strstr(page, ".SH SEE ALSO\nother(1)\n"));
	/* every row command B's --help prints is on the page */
	len = 0;
	f = open_memstream(&help, &len);
	qp_opt_usage(f, rows, NROWS, CMD_B);
	fclose(f);
	for (size_t i = 0; i < NROWS; i++) {
		char tag[64];
		bool in_help, on_page;

		snprintf(tag, sizeof(tag), "--%s", rows[i].name);
		in_help = strstr(help, tag) != NULL;
		snprintf(tag, sizeof(tag), "\\fB\\-\\-%s\\fR", rows[i].name);
		on_page = strstr(page, tag) != NULL;
		if (in_help != on_page)
			fail_msg("--%s: in --help %d, on the page %d", rows[i].name, in_help,
				 on_page);
	}
	free(help);
	free(page);
}

/* A file's page (section 5): rows as keys, a flag's value on|off, no --help. */
static void test_man_keys(void **state)
{
	const struct qp_opt_prog p = { .name = "prog.conf", .purpose = "its file", .section = 5,
				       .head = "KEY = VALUE lines.\n", .t = rows, .n = NROWS };
	char *page = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&page, &len);
	(void)state;

	qp_opt_man(f, &p);
	fclose(f);
	assert_non_null(strstr(page, ".TH \"PROG.CONF\" \"5\""));
	assert_non_null(strstr(page, ".SH KEYS\n"));
	assert_non_null(strstr(page, ".TP\n\\fBflag\\fR = \\fIon|off\\fR\n"));
	assert_non_null(strstr(page, ".TP\n\\fBcount\\fR = \\fIN\\fR\n"));
	assert_null(strstr(page, "\\fBhelp\\fR"));
	assert_null(strstr(page, "SYNOPSIS"));
	assert_null(strstr(page, "EXIT STATUS"));
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types_parse),
		cmocka_unit_test(test_range_errors),
		cmocka_unit_test(test_scan_errors),
		cmocka_unit_test(test_repeat_positional_seen),
		cmocka_unit_test(test_first_and_help),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_config_lines),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_main),
		cmocka_unit_test(test_onoff),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_man),
		cmocka_unit_test(test_man_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
