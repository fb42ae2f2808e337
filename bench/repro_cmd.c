/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench reproduce NAME [--quick] [-o DIR]: one of the seeds' source experiments (see
 * repro.h), then its table of published figure | qpace | agrees?, printed and written as
 * results/reproduce/NAME/table.{txt,json,md} (table.md is what docs/reproductions.md
 * holds between its markers: scripts/repro_docs.sh pastes it). Its own option table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/time.h"
#include "repro.h"
#include "runs.h"

static const struct repro_exp *const repro_exps[] = { &repro_iatcp, &repro_ffdtcp, &repro_hpcc,
							&repro_acc, &repro_idcc };
#define NEXPS (sizeof(repro_exps) / sizeof(repro_exps[0]))

static const char *const verdict_names[] = {
	[REPRO_NO] = "no", [REPRO_YES] = "yes", [REPRO_PARTLY] = "partly",
	[REPRO_NOT_RUN] = "not run",
};

struct repro_cli {
	bool quick, no_plots, verbose, help;
	const char *out;
};

#define AT(field) QP_OPT_AT(struct repro_cli, field)
static const struct qp_opt repro_opts[] = {
	{ "quick", 0, QP_OPT_FLAG, NULL, AT(quick),
	  .help = "the small variant (a few seconds: make test checks its shapes)" },
	{ "out", 'o', QP_OPT_STR, "DIR", AT(out),
	  .help = "results folder (default results/reproduce/NAME, quick:\n"
		  "results/reproduce-quick/NAME)" },
	{ "no-plots", 0, QP_OPT_FLAG, NULL, AT(no_plots), .help = "CSVs and tables only, no gnuplot" },
	{ "verbose", 'v', QP_OPT_FLAG, NULL, AT(verbose), .help = "the runs' progress on stderr" },
	{ "help", 'h', QP_OPT_HELP, NULL, AT(help), .help = "this text" },
};
#define NOPTS (sizeof(repro_opts) / sizeof(repro_opts[0]))

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s reproduce NAME [--quick] [-o DIR]\n"
		"A seed's source experiment in virtual time at the source's parameters, and a\n"
		"table: published figure | qpace | agrees? (docs/reproductions.md).\n\n", prog);
	for (size_t i = 0; i < NEXPS; i++)
		fprintf(f, "  %-8s %s\n", repro_exps[i]->name, repro_exps[i]->summary);
	fputs("\noptions:\n", f);
	qp_opt_usage(f, repro_opts, NOPTS, 0);
}

/* The text table: one block per row (the columns are sentences). */
static void print_text(FILE *f, const struct repro_ctx *ctx)
{
	fprintf(f, "\n%s%s: published figure | qpace | agrees?\n", ctx->name,
		ctx->quick ? " (--quick)" : "");
	for (size_t i = 0; i < ctx->nchecks; i++) {
		const struct repro_check *k = &ctx->checks[i];

		fprintf(f, "\n  %-7s %s\n    published: %s\n    qpace:     %s\n", verdict_names[k->verdict],
			k->figure, k->published, k->qpace);
		if (k->note[0])
			fprintf(f, "    why:       %s\n", k->note);
	}
	fprintf(f, "\n%u runs (%u failed), %.1f s\n", ctx->runs_done, ctx->runs_failed,
		ctx->wall_s);
}

static void print_json(FILE *f, const struct repro_ctx *ctx)
{
	struct qp_out o;

	qp_out_init(&o, f, QP_OUT_JSON_PRETTY);
	qp_out_obj(&o, NULL);
	qp_out_str(&o, "experiment", ctx->name);
	qp_out_bool(&o, "quick", ctx->quick);
	qp_out_u64(&o, "runs", ctx->runs_done);
	qp_out_u64(&o, "runs_failed", ctx->runs_failed);
	qp_out_double(&o, "wall_s", ctx->wall_s, "%.1f");
	qp_out_arr(&o, "checks");
	for (size_t i = 0; i < ctx->nchecks; i++) {
		const struct repro_check *k = &ctx->checks[i];

		qp_out_obj(&o, NULL);
		qp_out_str(&o, "figure", k->figure);
		qp_out_str(&o, "published", k->published);
		qp_out_str(&o, "qpace", k->qpace);
		qp_out_str(&o, "agrees", verdict_names[k->verdict]);
		qp_out_str(&o, "note", k->note);
		qp_out_end(&o);
	}
	qp_out_end(&o);
	qp_out_end(&o);
}

/* A markdown cell: '|' would end it. */
static void md_cell(FILE *f, const char *s)
{
	fputs("| ", f);
	for (; *s; s++)
		fputs(*s == '|' ? "\\|" : (char[]){ *s, 0 }, f);
	fputc(' ', f);
}

static void print_md(FILE *f, const struct repro_ctx *ctx)
{
	fputs("| figure | published | qpace | agrees? | why |\n|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < ctx->nchecks; i++) {
		const struct repro_check *k = &ctx->checks[i];

		md_cell(f, k->figure);
		md_cell(f, k->published);
		md_cell(f, k->qpace);
		md_cell(f, verdict_names[k->verdict]);
		md_cell(f, k->note);
		fputs("|\n", f);
	}
	fprintf(f, "\n`qpace-bench reproduce %s%s`: %u runs in virtual time, %.0f s on this "
		"machine.\n", ctx->name, ctx->quick ? " --quick" : "", ctx->runs_done, ctx->wall_s);
}

static int write_table(const struct repro_ctx *ctx, const char *ext,
		       void (*fn)(FILE *, const struct repro_ctx *))
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/table.%s", ctx->dir, ext);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "qpace-bench reproduce: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fn(f, ctx);
	if (fclose(f)) {
		fprintf(stderr, "qpace-bench reproduce: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_runs_csv(struct repro_ctx *ctx)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/mix.csv", ctx->dir);
	remove(path);                /* repro_mix.c appends: a run's rows only */
	snprintf(path, sizeof(path), "%s/runs.csv", ctx->dir);
	ctx->runs_csv = fopen(path, "w");
	if (!ctx->runs_csv) {
		fprintf(stderr, "qpace-bench reproduce: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("series,algorithm,senders,bytes,buffer_bytes,window,goodput_mbps,goodput_pct,"
	      "rounds,rounds_with_timeout,timeout_pct,timeouts,drops,peak_queue_kib,"
	      "mean_queue_kib,fct_p50_us,fct_p99_us,fct_max_us,jain,retransmits,ecn_marks,"
	      "sim_s,wall_s\n", ctx->runs_csv);
	return 0;
}

static int run_exp(const struct repro_exp *e, const struct repro_cli *cli)
{
	static struct repro_ctx ctx;   /* 256 results: not on the stack */
	char dir[4096], err[512];
	qp_time_ns t0 = qp_now_ns();

	memset(&ctx, 0, sizeof(ctx));
	if (cli->out)
		snprintf(dir, sizeof(dir), "%s", cli->out);
	else
		snprintf(dir, sizeof(dir), "results/reproduce%s/%s", cli->quick ? "-quick" : "",
			 e->name);
	ctx.name = e->name;
	ctx.quick = cli->quick;
	ctx.plots = !cli->no_plots;
	ctx.dir = dir;
	bench_conf_defaults(&ctx.base, CMD_SWEEP);
	ctx.base.clock = BENCH_CLOCK_VIRTUAL;
	ctx.base.model_rtt = true;   /* the source's network has no loopback path */
	ctx.base.verbose = cli->verbose;
	ctx.base.no_plots = cli->no_plots;
	if (runs_mkdirs(dir, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench reproduce: %s\n", err);
		return -1;
	}
	if (open_runs_csv(&ctx))
		return -1;
	printf("qpace-bench reproduce %s%s: %s\n", e->name, cli->quick ? " --quick" : "",
	       e->summary);
	fflush(stdout);
	int rc = e->run(&ctx);
	fclose(ctx.runs_csv);
	ctx.wall_s = (double)(qp_now_ns() - t0) / 1e9;
	if (rc)
		return -1;
	print_text(stdout, &ctx);
	if (write_table(&ctx, "txt", print_text) || write_table(&ctx, "json", print_json) ||
	    write_table(&ctx, "md", print_md))
		return -1;
	printf("results in %s/: runs.csv, table.txt, table.json, table.md%s\n", dir,
	       ctx.plots ? " and the plots (*.png, each with its gnuplot script)" : "");
	return ctx.runs_failed ? -1 : 0;
}

int bench_reproduce(const char *prog, int argc, char **argv)
{
	const struct qp_opt_spec spec = { repro_opts, NOPTS, 0, false };
	struct repro_cli cli = { 0 };
	char where[64], err[512];
	int first;

	snprintf(where, sizeof(where), "%s reproduce", prog);
	first = qp_opt_parse(&spec, argc, argv, &cli, NULL, err, sizeof(err));
	if (first < 0)
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	if (cli.help) {
		usage(stdout, prog);
		return QP_EXIT_OK;
	}
	if (first != argc - 1) {
		if (first >= argc)
			snprintf(err, sizeof(err), "NAME missing");
		else
			snprintf(err, sizeof(err), "unexpected argument '%s' after NAME '%s'",
				 argv[first + 1], argv[first]);
		qp_opt_fail(where, err);
		usage(stderr, prog);
		return QP_EXIT_USAGE;
	}
	for (size_t i = 0; i < NEXPS; i++)
		if (!strcmp(argv[first], repro_exps[i]->name))
			return run_exp(repro_exps[i], &cli) ? QP_EXIT_FAIL : QP_EXIT_OK;
	int used = snprintf(err, sizeof(err), "NAME '%s': not one of", argv[first]);
	for (size_t i = 0; i < NEXPS && used > 0 && (size_t)used < sizeof(err); i++)
		used += snprintf(err + used, sizeof(err) - (size_t)used, "%s %s", i ? "," : "",
				 repro_exps[i]->name);
	qp_opt_fail(where, err);
	return QP_EXIT_USAGE;
}

const struct qp_opt *bench_repro_opts(size_t *n)
{
	*n = NOPTS;
	return repro_opts;
}
