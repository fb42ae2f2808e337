/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench compare (the engine of `make demo`) and sweep: see runs.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "runs.h"

/* Parse and check every algorithm before running anything. */
static int algos_parse(const char *list, char *buf, size_t buflen, const char **algos)
{
	char err[256], cc[INCAST_ALGO_MAX];
	bool credits;
	int n = runs_split(list, buf, buflen, algos, BENCH_MAX_ALGOS, "--algos", err, sizeof(err));

	if (n < 0) {
		fprintf(stderr, "qpace-bench: %s\n", err);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (incast_algo_parse(algos[i], cc, sizeof(cc), &credits, err, sizeof(err))) {
			fprintf(stderr, "qpace-bench: --algos: %s\n", err);
			return -1;
		}
	}
	return n;
}

static void run_line(FILE *out, const struct incast_result *r, double wall_s)
{
	fprintf(out, "  %-9s goodput %5.1f%% of payload rate, jain %.3f, drops %" PRIu64
		", timeouts %" PRIu64 ", peak queue %.1f KiB ", r->algorithm,
		r->goodput_ratio * 100, r->jain, r->drops, r->timeouts,
		(double)r->max_queue_bytes / 1024);
	if (!strcmp(r->clock, "virtual"))
		fprintf(out, "(%.3f s simulated in %.1f s)\n", r->sim_s, wall_s);
	else
		fprintf(out, "(%.1f s; loop late <= %.1f ms)\n", wall_s,
			(double)r->loop_late_max_ns / 1e6);
}

/* 0 or -errno (the caller names the file). */
static int compare_csv(const char *path, const struct incast_result *r, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs("algorithm,goodput_mbps,goodput_pct,jain,fct_p99_us,peak_queue_kib,mean_queue_kib,"
	      "drops,timeouts,retransmits,fct_p50_us,fct_max_us,ecn_marks\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,%.3f,%.3f,%.5f,%.1f,%.2f,%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%.1f,%.1f,%" PRIu64 "\n", r[i].algorithm, r[i].goodput_bps / 1e6,
			r[i].goodput_ratio * 100, r[i].jain, r[i].fct.p99_us,
			(double)r[i].max_queue_bytes / 1024, r[i].avg_queue_bytes / 1024, r[i].drops,
			r[i].timeouts, r[i].retransmits, r[i].fct.p50_us, r[i].fct.max_us,
			r[i].ecn_marks);
	return fclose(f) ? -errno : 0;
}

static void conf_line(FILE *out, const char *what, const struct bench_conf *c, uint64_t senders,
		      uint64_t bytes)
{
	char rate[32], delay[32];

	fprintf(out, "qpace-bench %s: %" PRIu64 " -> 1 incast, %" PRIu64 " KiB per sender, %" PRIu64
		" rounds; link %s b/s, buffer %" PRIu64 " KiB, delay %s, MTU %" PRIu64 "\n", what,
		senders, bytes / 1024, c->rounds, qp_fmt_rate(c->link_bps, rate, sizeof(rate)),
		c->buffer_bytes / 1024, qp_fmt_time(c->delay_ns, delay, sizeof(delay)), c->mtu_bytes);
}

/* A run whose event loop the machine held up for more than a millisecond measured the
 * machine as much as the network: say so under the table, with the load average. */
static void compare_late_note(FILE *out, const struct incast_result *r, size_t n)
{
	qp_time_ns worst = 0;
	double load = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	for (size_t i = 0; i < n; i++)
		worst = r[i].loop_late_max_ns > worst ? r[i].loop_late_max_ns : worst;
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	if (worst > QP_NS_PER_MS && n > 0)
		fprintf(out, "\nnote: the machine held the event loops up for as long as %.1f ms "
			"(load average %.2f),\nwhile a packet takes %.1f us on this link: these "
			"figures are the machine's as much as\nthe algorithms'. Run again on an idle "
			"machine.\n", (double)worst / 1e6, load,
			(double)qp_tx_time_ns(r[0].mtu_bytes + STATS_ROCE_PKT_OVERHEAD,
					      r[0].link_bps) / 1e3);
}

int bench_compare(const struct bench_conf *c)
{
	const char *algos[BENCH_MAX_ALGOS];
	char buf[512], err[512], dir[4096], path[4200];
	struct incast_result res[BENCH_MAX_ALGOS];
	size_t nres = 0;
	int n = algos_parse(c->algos, buf, sizeof(buf), algos), failed = 0;

	if (n < 0 || runs_mkdirs(c->out_dir, err, sizeof(err)) < 0) {
		if (n >= 0)
			fprintf(stderr, "qpace-bench: %s\n", err);
		return -1;
	}
	conf_line(stdout, "compare", c, c->senders, c->size_bytes);
	for (int i = 0; i < n; i++) {
		qp_time_ns t0 = qp_now_ns();
		snprintf(dir, sizeof(dir), "%s/%s", c->out_dir, algos[i]);
		if (runs_mkdirs(dir, err, sizeof(err)) ||
		    runs_incast_isolated(c, algos[i], c->senders, c->size_bytes, dir, &res[nres],
					 err, sizeof(err))) {
			fprintf(stderr, "qpace-bench: %s: %s\n", algos[i], err);
			failed++;
			continue;
		}
		run_line(stdout, &res[nres++], (double)(qp_now_ns() - t0) / 1e9);
		fflush(stdout);      /* a progress line per run, also through a pipe */
	}
	fputc('\n', stdout);
	incast_print_compare(stdout, res, nres);
	compare_late_note(stdout, res, nres);
	snprintf(path, sizeof(path), "%s/summary.json", c->out_dir);
	if (incast_write_summary(path, res, nres))
		fprintf(stderr, "qpace-bench: %s: cannot write\n", path);
	snprintf(path, sizeof(path), "%s/compare.csv", c->out_dir);
	if (compare_csv(path, res, nres))
		fprintf(stderr, "qpace-bench: %s: cannot write\n", path);
	bool plots = !c->no_plots && nres && plot_compare(c->out_dir, err, sizeof(err)) == 0;
	if (!c->no_plots && !plots && nres)
		fprintf(stderr, "qpace-bench: plots skipped: %s\n", err);
	printf("\nresults in %s/: summary.json (one object per algorithm), compare.csv%s;\n"
	       "per algorithm in %s/ALGO/: flows.csv (FCT per flow), rates.csv (rate per QP over "
	       "time),\nqueue.csv (receiver port queue over time)%s\n", c->out_dir,
	       plots ? ", compare.png" : "", c->out_dir, plots ? ", rates.png, queue.png" : "");
	if (failed)
		fprintf(stderr, "qpace-bench: %d of %d runs failed\n", failed, n);
	return failed ? -1 : 0;
}

int bench_sweep(const struct bench_conf *c)
{
	const char *algos[BENCH_MAX_ALGOS], *ns_s[32], *sizes_s[16];
	char abuf[512], nbuf[256], sbuf[256], err[512], path[4200];
	unsigned long long sizes[16], ns[32];
	int na = algos_parse(c->algos, abuf, sizeof(abuf), algos), failed = 0;
	int nn = runs_split(c->senders_list, nbuf, sizeof(nbuf), ns_s, 32, "--senders-list", err,
			    sizeof(err));
	int nsz = nn < 0 ? -1 : runs_split(c->sizes, sbuf, sizeof(sbuf), sizes_s, 16, "--sizes",
					   err, sizeof(err));

	if (na < 0)
		return -1;
	if (nn < 0 || nsz < 0) {
		fprintf(stderr, "qpace-bench sweep: %s\n", err);
		return -1;
	}
	unsigned max_n = c->clock == BENCH_CLOCK_VIRTUAL ? BENCH_MAX_SENDERS_VT : BENCH_MAX_SENDERS;
	for (int i = 0; i < nn; i++) {
		uint64_t v;
		if (qp_parse_u64(ns_s[i], &v) || v < 1 || v > max_n) {
			fprintf(stderr, "qpace-bench sweep: --senders-list '%s': not a count in 1..%u\n",
				ns_s[i], max_n);
			return -1;
		}
		ns[i] = v;
	}
	for (int i = 0; i < nsz; i++) {
		uint64_t v;
		if (qp_parse_bytes(sizes_s[i], &v) || v < 1 || v > (1ULL << 30)) {
			fprintf(stderr, "qpace-bench sweep: --sizes '%s': not a size in 1..1G bytes\n",
				sizes_s[i]);
			return -1;
		}
		sizes[i] = v;
	}
	if (runs_mkdirs(c->out_dir, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench: %s\n", err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/sweep.csv", c->out_dir);
	FILE *csv = fopen(path, "w");
	if (!csv) {
		fprintf(stderr, "qpace-bench: %s: cannot write\n", path);
		return -1;
	}
	fputs("algorithm,senders,bytes,goodput_bps,goodput_ratio,jain,fct_p99_us,"
	      "timeouts_per_flow,timeouts,drops,max_queue_bytes,fct_p50_us,fct_max_us\n", csv);
	for (int a = 0; a < na; a++) {
		for (int s = 0; s < nsz; s++) {
			for (int k = 0; k < nn; k++) {
				struct incast_result r;
				conf_line(stdout, algos[a], c, ns[k], sizes[s]);
				if (runs_incast_isolated(c, algos[a], ns[k], sizes[s], NULL, &r, err,
							 sizeof(err))) {
					fprintf(stderr, "qpace-bench: %s N=%llu: %s\n", algos[a], ns[k], err);
					failed++;
					continue;
				}
				run_line(stdout, &r, r.elapsed_s);
				fprintf(csv, "%s,%llu,%llu,%.0f,%.5f,%.5f,%.1f,%.4f,%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",%.1f,%.1f\n", algos[a], ns[k], sizes[s],
					r.goodput_bps, r.goodput_ratio, r.jain, r.fct.p99_us,
					r.flows ? (double)r.timeouts / (double)r.flows : NAN, r.timeouts,
					r.drops, r.max_queue_bytes, r.fct.p50_us, r.fct.max_us);
				fflush(csv);
			}
		}
	}
	fclose(csv);
	if (!c->no_plots && plot_sweep(c->out_dir, algos, (size_t)na, sizes, (size_t)nsz, err,
				       sizeof(err)))
		fprintf(stderr, "qpace-bench: plots skipped: %s\n", err);
	printf("results in %s/: sweep.csv, sweep_goodput.png, sweep_timeouts.png, "
	       "sweep_fct_p99.png\n", c->out_dir);
	return failed ? -1 : 0;
}
