/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The registry and what each algorithm declares about itself: the listing every help
 * text uses, the feedback each needs (cc_needs, ops->feedback), and the parameter tables
 * --help-params prints (text and Markdown) with its command line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc_help.h"

static const struct cc_path path = {
	.line_bps = 100 * QP_GBPS, .base_rtt_ns = 10 * QP_NS_PER_US, .mtu_bytes = 1000,
};

/* An algorithm by name: tests reach them through the registry, as every program does. */
static const struct cc_ops *alg(const char *name)
{
	const struct cc_ops *ops = cc_find(name);

	if (!ops)
		fail_msg("%s is not registered", name);
	return ops;
}

/* ---- the listing ---- */

static void test_listing_order_and_lookup(void **state)
{
	static const char *const want[] = { "none", "dcqcn", "hpcc", "acc", "ffd", "idcc",
					    "tcp", "dctcp", "timely", "swift" };
	const struct cc_ops *const *all = cc_all();
	size_t n = 0;
	(void)state;

	for (; all[n]; n++) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(all[n]->name, want[n]);
		assert_ptr_equal(cc_find(all[n]->name), all[n]);
		/* names the command lines reserve, and a summary for --help-params */
		assert_string_not_equal(all[n]->name, "all");
		assert_string_not_equal(all[n]->name, "list");
		assert_non_null(all[n]->summary);
		for (size_t k = 0; k < n; k++)
			assert_string_not_equal(all[k]->name, all[n]->name);
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_null(cc_find("reno"));
	assert_null(cc_find(NULL));
}

static void test_names(void **state)
{
	char buf[96];
	(void)state;

	assert_int_equal(cc_names(buf, sizeof(buf), ", "), 0);
	assert_string_equal(buf, "none, dcqcn, hpcc, acc, ffd, idcc, tcp, dctcp, timely, swift");
	assert_int_equal(cc_names(buf, sizeof(buf), ","), 0);
	assert_string_equal(buf, "none,dcqcn,hpcc,acc,ffd,idcc,tcp,dctcp,timely,swift");
	/* too short: whole names only, always terminated */
	assert_int_equal(cc_names(buf, 12, ","), -ENOSPC);
	assert_string_equal(buf, "none,dcqcn");
	assert_int_equal(cc_names(buf, 4, ","), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(cc_names(buf, 0, ","), -ENOSPC);
}

static void test_unknown_algorithm_lists_the_registry(void **state)
{
	char err[256];
	(void)state;

	assert_null(cc_create("reno", &path, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "unknown algorithm \"reno\" (known: none, dcqcn, hpcc, acc, ffd, "
				 "idcc, tcp, dctcp, timely, swift)");
}

/* ---- the feedback each algorithm needs ---- */

static void test_needs_pinned(void **state)
{
	(void)state;
	assert_int_equal(cc_needs(alg("none")), 0);
	assert_int_equal(cc_needs(alg("hpcc")), CC_NEED_INT);
	assert_int_equal(cc_needs(alg("acc")), CC_NEED_INT | CC_NEED_NOTICE | CC_NEED_ACK |
						CC_NEED_FLOW);
	assert_int_equal(cc_needs(alg("dcqcn")), CC_NEED_CNP);
	assert_int_equal(cc_needs(alg("ffd")), CC_NEED_LEVEL | CC_NEED_ACK | CC_NEED_LOSS);
	assert_int_equal(cc_needs(alg("idcc")), CC_NEED_INT | CC_NEED_RTT);
	assert_int_equal(cc_needs(alg("tcp")), CC_NEED_ACK | CC_NEED_LOSS);
	assert_int_equal(cc_needs(alg("dctcp")), CC_NEED_ACK | CC_NEED_LOSS | CC_NEED_ECN);
	assert_int_equal(cc_needs(alg("timely")), CC_NEED_ACK | CC_NEED_RTT);
	assert_int_equal(cc_needs(alg("swift")), CC_NEED_ACK | CC_NEED_RTT | CC_NEED_LOSS);

	assert_int_equal(alg("acc")->feedback.notice_bytes, 0);   /* one BDP */
	assert_string_equal(alg("acc")->feedback.params, "fair=1");
	assert_int_equal(alg("dcqcn")->feedback.notice_bytes, 16384);
	assert_int_equal(alg("dcqcn")->feedback.notice_interval_ns, 50 * QP_NS_PER_US);
	assert_int_equal(alg("ffd")->feedback.level_bytes[0], 8192);
	assert_int_equal(alg("ffd")->feedback.level_bytes[1], 28672);
	assert_int_equal(alg("ffd")->feedback.level_bytes[2], 49152);
}

/* For every registered algorithm: each declared value belongs to a kind of feedback it
 * needs, levels are ordered, and the parameters it runs with are its own and valid. */
static void test_needs_consistent(void **state)
{
	(void)state;
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		const struct cc_ops *ops = *o;
		const struct cc_feedback *f = &ops->feedback;
		unsigned needs = cc_needs(ops);

		if (!(needs & (CC_NEED_NOTICE | CC_NEED_CNP))) {
			assert_int_equal(f->notice_bytes, 0);
			assert_int_equal(f->notice_interval_ns, 0);
		}
		if (needs & CC_NEED_LEVEL) {
			assert_true(f->level_bytes[0] > 0);
			assert_true(f->level_bytes[0] <= f->level_bytes[1]);
			assert_true(f->level_bytes[1] <= f->level_bytes[2]);
		} else {
			for (int i = 0; i < 3; i++)
				assert_int_equal(f->level_bytes[i], 0);
		}
		if (f->params) {
			char err[256];
			struct cc *cc = cc_create_ops(ops, &path, f->params, 0, err, sizeof(err));
			if (!cc)
				fail_msg("%s: feedback params \"%s\": %s", ops->name, f->params, err);
			cc_destroy(cc);
		}
	}
}

static void test_feedback_describe(void **state)
{
	char buf[256];
	(void)state;

	assert_int_equal(cc_feedback_describe(alg("none"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "none");
	assert_int_equal(cc_feedback_describe(alg("acc"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "INT reports, early notices at a queue of one BDP, ACKs, message "
				 "sizes; run with fair=1");
	assert_int_equal(cc_feedback_describe(alg("dcqcn"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "CNPs from ECN marks at dequeue, Kmin 100000, Kmax 400000, "
				 "Pmax 0.2 at 25G (scaled with the rate)");
	assert_int_equal(cc_feedback_describe(alg("ffd"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "congestion levels at a queue of 8K, 28K, 48K, ACKs, NAKs and timeouts");
	assert_int_equal(cc_feedback_describe(alg("idcc"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "INT reports, RTT samples");
	assert_int_equal(cc_feedback_describe(alg("dctcp"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "the ACKs' ECN echo from ECN marks at dequeue, Kmin 30000, Kmax "
				 "30000, Pmax 1 at 1G (scaled with the rate), ACKs, NAKs and timeouts");
	assert_int_equal(cc_feedback_describe(alg("swift"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ACKs, RTT samples, NAKs and timeouts");
	assert_int_equal(cc_feedback_describe(alg("acc"), buf, 10), -ENOSPC);
}

/* ---- parameter tables ---- */

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_tables_fit_and_list_every_parameter(void **state)
{
	(void)state;
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		char text[CC_HELP_MAX], md[CC_HELP_MAX];
		size_t nparams = 0;

		assert_int_equal(cc_params_help(*o, text, sizeof(text)), 0);
		assert_int_equal(cc_params_help_md(*o, md, sizeof(md)), 0);
		for (const struct cc_param *p = (*o)->params; p->name; p++, nparams++) {
			char cell[64];
			snprintf(cell, sizeof(cell), "| `%s` |", p->name);
			assert_non_null(strstr(text, p->name));
			assert_non_null(strstr(md, cell));
		}
		/* text: the name line and one per parameter; md: header, rule, one row each */
		assert_int_equal(count_lines(text), 1 + nparams);
		assert_int_equal(count_lines(md), 2 + nparams);
		assert_int_equal(strncmp(text, (*o)->name, strlen((*o)->name)), 0);
		assert_int_equal(cc_params_help(*o, text, 20), -ENOSPC);
		assert_int_equal(cc_params_help_md(*o, md, 20), -ENOSPC);
	}
}

/* Values as a command line gives them, ranges with their open ends, '|' escaped. */
static void test_md_rows(void **state)
{
	char md[CC_HELP_MAX];
	(void)state;

	assert_int_equal(cc_params_help_md(alg("hpcc"), md, sizeof(md)), 0);
	assert_non_null(strstr(md, "| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n"));
	assert_non_null(strstr(md, "| `eta` | number | 0.95 | (0, 1] | target utilization eta, "
				   "fraction of the bottleneck link |\n"));
	assert_non_null(strstr(md, "| `rate_ai` | rate | 0 | [0, 10T] |"));
	assert_non_null(strstr(md, "| `window` | 0/1 | 1 | [0, 1] |"));
	assert_int_equal(cc_params_help_md(alg("dcqcn"), md, sizeof(md)), 0);
	assert_non_null(strstr(md, "| `t_alpha` | time | 1us | [1ns, 1s] |"));
	assert_non_null(strstr(md, "| `g` | number | 0.00390625 | (0, 1] |"));
	assert_int_equal(cc_params_help_md(alg("ffd"), md, sizeof(md)), 0);
	assert_non_null(strstr(md, "| `down` | number | 0.75 | (0, 1) |"));
	assert_int_equal(cc_params_help_md(alg("idcc"), md, sizeof(md)), 0);
	assert_non_null(strstr(md, "| `q_target` | bytes | 0 | [0, 4294967295] |"));
	assert_non_null(strstr(md, "| `i_tau` | number | 40 | [0, 1000000] |"));
	assert_non_null(strstr(md, "while \\|error\\| is"));
}

/* ---- the command line ---- */

struct run {
	int rc;
	char *out, *err;
};

static struct run run_help(int argc, char **argv)
{
	struct run r;
	size_t olen, elen;
	FILE *out = open_memstream(&r.out, &olen), *err = open_memstream(&r.err, &elen);

	assert_non_null(out);
	assert_non_null(err);
	r.rc = cc_help_params_main("prog", argc, argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* run_args("--help-params", "acc", NULL): prog and the arguments given. */
static struct run run_args(const char *arg, ...)
{
	char *argv[8] = { "prog" };
	int argc = 1;
	va_list ap;

	va_start(ap, arg);
	for (const char *a = arg; a && argc < 7; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	return run_help(argc, argv);
}

static void test_cli_requests(void **state)
{
	char md[CC_HELP_MAX], text[CC_HELP_MAX];
	struct run r;
	(void)state;

	r = run_args("--help-params", "list", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "none\ndcqcn\nhpcc\nacc\nffd\nidcc\ntcp\ndctcp\ntimely\n"
				   "swift\n");
	run_free(&r);

	assert_int_equal(cc_params_help_md(alg("acc"), md, sizeof(md)), 0);
	r = run_args("--help-params", "acc", "--format", "md", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, md);   /* exactly the table the docs carry */
	assert_string_equal(r.err, "");
	run_free(&r);
	r = run_args("--help-params=acc", "--format=md", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, md);
	run_free(&r);

	assert_int_equal(cc_params_help(alg("ffd"), text, sizeof(text)), 0);
	r = run_args("--help-params", "ffd", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(strncmp(r.out, text, strlen(text)), 0);
	assert_string_equal(r.out + strlen(text),
			    "  feedback it needs: congestion levels at a queue of 8K, 28K, 48K, ACKs, "
			    "NAKs and timeouts\n");
	run_free(&r);

	r = run_args("--help-params", "all", "--format", "md", NULL);
	assert_int_equal(r.rc, 0);
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		char head[64];
		snprintf(head, sizeof(head), "### %s\n\n", (*o)->name);
		assert_non_null(strstr(r.out, head));
		assert_int_equal(cc_params_help_md(*o, md, sizeof(md)), 0);
		assert_non_null(strstr(r.out, md));
	}
	run_free(&r);
	r = run_args("--help-params", "all", NULL);
	assert_int_equal(r.rc, 0);
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		assert_int_equal(cc_params_help(*o, text, sizeof(text)), 0);
		assert_non_null(strstr(r.out, text));
	}
	run_free(&r);
}

static void test_cli_errors(void **state)
{
	static const struct {
		const char *argv[4];
		const char *err;
	} cases[] = {
		{ { "--help-params", "reno" },
		  "prog: --help-params 'reno': not an algorithm; one of none, dcqcn, hpcc, acc, ffd, "
		  "idcc, tcp, dctcp, timely, swift, all, list\n" },
		{ { "--help-params" },
		  "prog: --help-params: needs ALGO, all or list (algorithms: none, dcqcn, hpcc, acc, "
		  "ffd, idcc, tcp, dctcp, timely, swift)\n" },
		{ { "--help-params=" }, "prog: --help-params: needs ALGO, all or list" },
		{ { "--help-params", "hpcc", "--format", "xml" }, "prog: --format 'xml': one of text, md\n" },
		{ { "--help-params", "hpcc", "--format" }, "prog: --format: needs text or md\n" },
		{ { "--help-params", "hpcc", "-v" }, "prog: '-v': --help-params takes only --format" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[6] = { "prog" };
		int argc = 1;
		struct run r;

		for (int k = 0; k < 4 && cases[i].argv[k]; k++)
			argv[argc++] = (char *)cases[i].argv[k];
		r = run_help(argc, argv);
		assert_int_equal(r.rc, 1);
		assert_string_equal(r.out, "");
		if (strncmp(r.err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, r.err, cases[i].err);
		run_free(&r);
	}
}

static void test_cli_other_command_lines(void **state)
{
	char *none[] = { "prog", NULL };
	char *help[] = { "prog", "--help", NULL };
	char *later[] = { "prog", "-c", "f", "--help-params", "hpcc", NULL };
	struct run r;
	(void)state;

	r = run_help(1, none);
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.out, "");
	run_free(&r);
	r = run_help(2, help);
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.err, "");
	run_free(&r);
	r = run_help(5, later);   /* --help-params comes first or not at all */
	assert_int_equal(r.rc, -1);
	run_free(&r);
}

static void test_help_algorithms_line(void **state)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	assert_non_null(f);
	cc_help_algorithms(f, "qpaced");
	fclose(f);
	assert_string_equal(buf, "\nAlgorithms: none, dcqcn, hpcc, acc, ffd, idcc, tcp, dctcp, "
				 "timely, swift.\n"
				 "`qpaced --help-params ALGO|all` lists their parameters (--format md: "
				 "as the docs' tables).\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_order_and_lookup),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unknown_algorithm_lists_the_registry),
		cmocka_unit_test(test_needs_pinned),
		cmocka_unit_test(test_needs_consistent),
		cmocka_unit_test(test_feedback_describe),
		cmocka_unit_test(test_tables_fit_and_list_every_parameter),
		cmocka_unit_test(test_md_rows),
		cmocka_unit_test(test_cli_requests),
		cmocka_unit_test(test_cli_errors),
		cmocka_unit_test(test_cli_other_command_lines),
		cmocka_unit_test(test_help_algorithms_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
