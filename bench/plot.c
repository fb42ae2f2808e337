/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* gnuplot scripts for qpace-bench's CSVs: see plot.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "plot.h"

#define PLOT_TERM "set terminal pngcairo size 960,540 font 'sans,10'\n" \
	"set datafile separator ','\nset key outside right\nset grid\n"

int plot_available(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

int plot_script(const char *dir, const char *name, char *err, size_t errlen,
		       const char *fmt, ...)
{
	char path[4096], cmd[4200];
	va_list ap;
	FILE *f;

	if (!plot_available())
		return qp_errmsg(-ENOENT, err, errlen,
				 "gnuplot not found (Debian: apt-get install gnuplot-nox)");
	snprintf(path, sizeof(path), "%s/%s.gp", dir, name);
	f = fopen(path, "w");
	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	fputs(PLOT_TERM, f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f))
		return qp_errmsg(-EIO, err, errlen, "%s: %s", path, strerror(errno));
	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s.gp' 2>&1", dir, name);
	int rc = system(cmd);
	if (rc != 0)
		return qp_errmsg(-EIO, err, errlen, "gnuplot %s: exit status %d",
				 path, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	return 0;
}

int plot_rates(const char *dir, const char *title, unsigned senders, char *err, size_t errlen)
{
	return plot_script(dir, "rates", err, errlen,
			   "set output 'rates.png'\nset title '%s: sending rate per QP'\n"
			   "set xlabel 'time [ms]'\nset ylabel 'rate [Mb/s]'\n"
			   "set key off\n"
			   "plot for [i=2:%u] 'rates.csv' using ($1*1000):i with lines lw 1\n",
			   title, senders + 1);
}

int plot_queue(const char *dir, const char *title, unsigned ports, char *err, size_t errlen)
{
	/* queue.csv holds one row per port per sample, p0 first: every ports-th row is p0's. */
	return plot_script(dir, "queue", err, errlen,
			   "set output 'queue.png'\nset title '%s: receiver port queue'\n"
			   "set xlabel 'time [ms]'\nset ylabel 'queue [KiB]'\nset key off\n"
			   "plot 'queue.csv' skip 1 every %u using ($1*1000):($3/1024) "
			   "with steps lw 2\n", title, ports ? ports : 1);
}

int plot_compare(const char *dir, char *err, size_t errlen)
{
	return plot_script(dir, "compare", err, errlen,
			   "set output 'compare.png'\nset multiplot layout 1,3 title "
			   "'incast: one run per algorithm'\n"
			   "set style data histograms\nset style fill solid 0.7\nset boxwidth 0.8\n"
			   "set key off\nset xtics rotate by -45\n"
			   "set title 'goodput [%% of payload rate]'\nset yrange [0:110]\n"
			   "plot 'compare.csv' using 3:xtic(1) skip 1\n"
			   "set title 'peak queue [KiB]'\nset yrange [0:*]\n"
			   "plot 'compare.csv' using 6:xtic(1) skip 1\n"
			   "set title 'FCT p99 [ms]'\n"
			   "plot 'compare.csv' using ($5/1000):xtic(1) skip 1\n"
			   "unset multiplot\n");
}

/* One `plot` clause list: a line per (algorithm, size) selecting its rows of sweep.csv. */
static void sweep_clauses(char *buf, size_t len, const char *const *algos, size_t nalgos,
			  const unsigned long long *sizes, size_t nsizes, const char *ycol)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t a = 0; a < nalgos; a++) {
		for (size_t s = 0; s < nsizes && used < len; s++) {
			used += (size_t)snprintf(buf + used, len - used,
				"%s'sweep.csv' using 2:((strcol(1) eq '%s' && $3 == %llu) ? %s : 1/0) "
				"with linespoints title '%s %lluK'", used ? ", \\\n  " : "",
				algos[a], sizes[s], ycol, algos[a], sizes[s] / 1024);
		}
	}
}

int plot_sweep(const char *dir, const char *const *algos, size_t nalgos,
	       const unsigned long long *sizes, size_t nsizes, char *err, size_t errlen)
{
	static const struct {
		const char *name, *ylabel, *ycol;
	} figs[] = {
		{ "sweep_goodput", "goodput [% of payload rate]", "($5*100)" },
		{ "sweep_timeouts", "timeouts per flow", "$8" },
		{ "sweep_fct_p99", "FCT p99 [ms]", "($7/1000)" },
	};
	size_t len = 256 * (nalgos * nsizes + 1);
	char *clauses = malloc(len);
	int rc = 0;

	if (!clauses)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]) && rc == 0; i++) {
		sweep_clauses(clauses, len, algos, nalgos, sizes, nsizes, figs[i].ycol);
		rc = plot_script(dir, figs[i].name, err, errlen,
				 "set output '%s.png'\nset title 'incast sweep: %s'\n"
				 "set xlabel 'senders N'\nset ylabel '%s'\nset logscale x 2\n"
				 "plot %s\n", figs[i].name, figs[i].ylabel, figs[i].ylabel, clauses);
	}
	free(clauses);
	return rc;
}

int plot_slowdown(const char *dir, const char *title, char *err, size_t errlen)
{
	/* fct_bins.csv: pct_lo,pct_hi,min_bytes,max_bytes,flows,mean,p50,p95,p99 */
	return plot_script(dir, "slowdown", err, errlen,
			   "set output 'slowdown.png'\nset title '%s: FCT slowdown by flow size'\n"
			   "set xlabel 'flow size [bytes], bins of equal flow counts'\n"
			   "set ylabel 'slowdown'\nset logscale xy\n"
			   "plot 'fct_bins.csv' skip 1 using 4:7 with linespoints title 'p50', \\\n"
			   "  '' skip 1 using 4:8 with linespoints title 'p95', \\\n"
			   "  '' skip 1 using 4:9 with linespoints title 'p99'\n", title);
}
