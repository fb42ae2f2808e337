/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PNG plots drawn by gnuplot (Debian's gnuplot-nox; `make demo` installs it). Each
 * function writes a gnuplot script next to its PNG (so a user can restyle and rerun it)
 * and runs gnuplot on it. -ENOENT when gnuplot is not installed: callers say so once and
 * keep the CSVs. */
#ifndef BENCH_PLOT_H
#define BENCH_PLOT_H

#include <stddef.h>

/* True when `gnuplot` is on PATH. */
int plot_available(void);

/* Write @dir/@name.gp (a PNG terminal, CSV separator, then the format) and run gnuplot on
 * it in @dir: the script names its own output. 0, -ENOENT (no gnuplot) or -EIO. */
int plot_script(const char *dir, const char *name, char *err, size_t errlen,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* rates.csv (time_s, then one column per sender in Mb/s) -> rates.png */
int plot_rates(const char *dir, const char *title, unsigned senders, char *err, size_t errlen);
/* queue.csv (time_s,port,queue_bytes of every port) -> queue.png: the receiver's port p0 */
int plot_queue(const char *dir, const char *title, unsigned ports, char *err, size_t errlen);
/* fct_bins.csv (qpace/fct.h fct_csv_bins) -> slowdown.png: p50, p95, p99 per size bin */
int plot_slowdown(const char *dir, const char *title, char *err, size_t errlen);
/* compare.csv -> compare.png: goodput, peak queue and p99 FCT per algorithm */
int plot_compare(const char *dir, char *err, size_t errlen);
/* sweep.csv -> sweep_goodput.png, sweep_timeouts.png, sweep_fct_p99.png against N, one
 * line per algorithm and size. @algos/@sizes: what the sweep ran. */
int plot_sweep(const char *dir, const char *const *algos, size_t nalgos,
	       const unsigned long long *sizes, size_t nsizes, char *err, size_t errlen);

#endif
