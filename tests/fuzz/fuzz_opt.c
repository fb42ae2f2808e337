/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target for the option engine (qpace/opt.h) on a table with a row of every type:
 * the input, one item per line, is fed to the config reader (qp_opt_line) and, as argv, to
 * the command-line parser (qp_opt_parse, twice: permuting and in order). `make fuzz` runs it.
 * Properties: no crash; every line error starts with "fuzz:LINE:"; a refused command line
 * says why; a value stored is within its row's range. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/opt.h"
#include "qpace/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct conf {
	bool flag;
	uint64_t n;
	uint16_t port;
	uint32_t qpn;
	uint64_t bytes;
	qp_rate_bps rate;
	qp_time_ns t, secs;
	const char *str;
	char buf[16];
	unsigned choice;
	unsigned calls;
};

static const char *const choices[] = { "a", "bb", "ccc", NULL };

static int count_calls(const struct qp_opt *o, void *conf, const char *arg, char *err,
		       size_t len)
{
	(void)o, (void)err, (void)len;
	((struct conf *)conf)->calls++;
	return arg && arg[0] == 'x' ? -EINVAL : 0;
}

#define AT(f) QP_OPT_AT(struct conf, f)

static const struct qp_opt rows[] = {
	{ "flag", 'f', QP_OPT_FLAG, NULL, AT(flag), .help = "" },
	{ "n", 'n', QP_OPT_UINT, "N", AT(n), .min = 1, .max = 1000, .def = "5", .help = "" },
	{ "port", 'p', QP_OPT_UINT, "P", AT(port), .min = 1, .max = 65535, .cmds = 1, .help = "" },
	{ "qpn", 'q', QP_OPT_UINT, "Q", AT(qpn), .max = 0xffffff, .flags = QP_OPT_F_HEX,
	  .cmds = 2, .help = "" },
	{ "bytes", 'b', QP_OPT_BYTES, "B", AT(bytes), .min = 64, .max = 1u << 30, .help = "" },
	{ "rate", 'r', QP_OPT_RATE, "R", AT(rate), .min = 1000, .max = 10000000000000ull,
	  .help = "" },
	{ "time", 't', QP_OPT_TIME, "T", AT(t), .max = 10000000000ull, .help = "" },
	{ "secs", 0, QP_OPT_TIME, "S", AT(secs), .min = 1000000, .max = 3600000000000ull,
	  .unit_ns = 1000000000ull, .help = "" },
	{ "str", 's', QP_OPT_STR, "S", AT(str), .help = "" },
	{ "buf", 0, QP_OPT_STRBUF, "B", AT(buf), .help = "" },
	{ "choice", 'c', QP_OPT_CHOICE, "C", AT(choice), .choices = choices, .help = "" },
	{ "fn", 0, QP_OPT_FN, "X", .fn = count_calls, .flags = QP_OPT_F_FIRST, .help = "" },
	{ "help", 'h', QP_OPT_HELP, NULL, .help = "" },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void check_ranges(const struct conf *c)
{
	if (c->n < 1 || c->n > 1000 || c->bytes > (1u << 30) || c->t > 10000000000ull ||
	    c->secs > 3600000000000ull || c->choice > 2 || strlen(c->buf) >= sizeof(c->buf) ||
	    (c->bytes && c->bytes < 64) || (c->rate && c->rate < 1000) || c->qpn > 0xffffff)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[4096], err[600], *argv[34], *save = NULL, *tok;
	struct conf c = { 0 };
	struct qp_opt_reader r;
	size_t len = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	int argc = 1;

	for (size_t i = 0; i < len; i++)
		text[i] = data[i] ? (char)data[i] : ' ';
	text[len] = 0;
	if (qp_opt_defaults(rows, NROWS, 1, &c, err, sizeof(err)))
		abort();
	qp_opt_reader_init(&r, rows, NROWS, 1, &c, "fuzz");
	{
		char lines[4096];

		memcpy(lines, text, len + 1);
		for (tok = strtok_r(lines, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
			if (qp_opt_line(&r, tok, err, sizeof(err)) && strncmp(err, "fuzz:", 5))
				abort();
	}
	check_ranges(&c);
	argv[0] = "fuzz";
	save = NULL;
	for (tok = strtok_r(text, "\n", &save); tok && argc < 33; tok = strtok_r(NULL, "\n", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	for (unsigned cmd = 1; cmd <= 2; cmd++) {
		const struct qp_opt_spec spec = { rows, NROWS, cmd, cmd == 2 };
		char *copy[34];
		int first;

		memcpy(copy, argv, sizeof(copy));
		memset(&c, 0, sizeof(c));
		c.n = 5;
		first = qp_opt_parse(&spec, argc, copy, &c, NULL, err, sizeof(err));
		if (first < 0 ? !err[0] : first > argc)
			abort();
		check_ranges(&c);
	}
	return 0;
}
