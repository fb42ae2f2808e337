/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench reproduce NAME: a seed algorithm's source experiments, in virtual time at the
 * source's parameters (../shared/notes/reproductions.md), each checked against the figures
 * the source publishes.
 *
 *   repro_cmd.c     the command, the experiment table, the published | qpace | agrees table
 *                   (text, JSON, markdown)
 *   repro_run.c     running an experiment's sweep of incasts (a child process each, as
 *                   `sweep` does), runs.csv, the progress lines, figures read off the runs
 *   repro_*.c       one experiment each: its parameters, its runs, its plots, its checks
 *
 * An experiment never tunes a parameter toward a published figure: where the source is
 * silent it takes its baseline's reference value and says so in the check's note. */
#ifndef BENCH_REPRO_H
#define BENCH_REPRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bench.h"
#include "incast.h"

#define REPRO_MAX_CHECKS 24
#define REPRO_MAX_POINTS 256
#define REPRO_TEXT 240
#define REPRO_MEASURED 600         /* the measured figure's text */

enum repro_verdict { REPRO_NO = 0, REPRO_YES, REPRO_PARTLY, REPRO_NOT_RUN };

/* One row of the table: what the source publishes, what qpace measured, whether they
 * agree, and why (the substitution, or the cause of a disagreement). */
struct repro_check {
	char figure[96];             /* "A: TCP SACK timeouts" */
	char published[REPRO_TEXT];  /* the source's figure, as it states it */
	char qpace[REPRO_MEASURED];  /* the measured figure */
	enum repro_verdict verdict;
	char note[REPRO_TEXT];
};

/* One series of a sweep: an algorithm with its NIC window and buffer. */
struct repro_series {
	const char *label;           /* "IA-TCP~tcp+ia" */
	const char *algo;            /* incast's ALGO[+ia] */
	uint64_t window_pkts;        /* 0: the conf's */
	uint64_t buffer_bytes;       /* 0: the conf's */
	const char *params;          /* the algorithm's "k=v,..." (--cc-params); NULL: none */
};

/* One incast of a sweep and its result. */
struct repro_point {
	const struct repro_series *series;
	uint64_t senders, bytes;
	bool ok;
	struct incast_result r;
};

struct repro_ctx {
	const char *name;            /* the experiment */
	bool quick;
	bool plots;
	const char *dir;             /* results/reproduce/NAME */
	struct bench_conf base;      /* virtual time, the defaults, no plots per run */
	struct repro_point points[REPRO_MAX_POINTS];
	size_t npoints;
	unsigned runs_total, runs_done, runs_failed;
	double wall_s;
	struct repro_check checks[REPRO_MAX_CHECKS];
	size_t nchecks;
	FILE *runs_csv;
};

struct repro_exp {
	const char *name;
	const char *summary;         /* the source and what is run */
	/* Run everything into ctx->points, write plots, add checks. 0 or -1 (said on stderr). */
	int (*run)(struct repro_ctx *ctx);
};

extern const struct repro_exp repro_iatcp, repro_ffdtcp, repro_hpcc, repro_acc,
	repro_idcc;
/* IDCC's large-scale evaluation (repro_idcc_ls.c), after its motivation experiment. */
int repro_idcc_large(struct repro_ctx *ctx);

/* Run @c's incast for every series x size x sender count (in that nesting), a progress line
 * each, a row of runs.csv each. @c: the experiment's conf (ctx->base with its parameters);
 * a series' window/buffer override it. @dir_fmt: NULL, or a per-run output folder under
 * ctx->dir with "%s" for the series' algorithm (the incast's CSVs and plots). 0 or -1. */
int repro_sweep(struct repro_ctx *ctx, const struct bench_conf *c,
		const struct repro_series *series, size_t nseries, const uint64_t *sizes,
		size_t nsizes, const uint64_t *senders, size_t nsenders, const char *dir_fmt);
/* The point of @series (by label) at @senders, @bytes; NULL when it did not run. */
const struct repro_point *repro_find(const struct repro_ctx *ctx, const char *series,
				     uint64_t senders, uint64_t bytes);
/* Add a row; printf-style @qpace. The published figure and the note are copied. */
void repro_check(struct repro_ctx *ctx, const char *figure, const char *published,
		 enum repro_verdict v, const char *note, const char *qpace_fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* "N=24", or "never" for 0 (an onset that did not happen). */
const char *repro_fmt_n(uint64_t n, char *buf, size_t len);
/* Share of a point's rounds with a retransmission timeout (0..1). */
double repro_timeout_ratio(const struct repro_point *p);
/* A gnuplot "plot" clause list over runs.csv: one line per series (its rows at @bytes,
 * 0 = any), x = senders, y = @ycol (a gnuplot expression over runs.csv's columns). */
void repro_plot_clauses(char *buf, size_t len, const struct repro_series *series,
			size_t nseries, uint64_t bytes, uint64_t buffer, const char *ycol);

#endif
