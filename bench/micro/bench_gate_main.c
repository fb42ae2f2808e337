/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bench-gate: how precisely the pacing gate holds a rate on this machine, and what it costs.
 *
 * For each target rate and each wait mode (sleep only, sleep then spin, spin only) a
 * greedy sender pushes fixed-size pieces through a pacer (gate + in-memory rate table, the
 * same code a QP posts through) for a set duration; the post itself is a no-op, so the
 * figures are the gate's alone. Printed per run: achieved rate and its error against the
 * target, CPU used by the pacing thread (user + system time / wall time), the median and
 * 99th percentile of the gap between pieces against the ideal gap, and sleeps taken.
 *
 *   bench-gate [-r 10M,100M,1G,2G,5G] [-m sleep,hybrid] [-c 4K] [-d 1s] [-s 80us] [-a N] [-j]
 *
 * On a shared machine the scheduler may take the CPU away for milliseconds; the gate does
 * not turn such a stall into a burst, so the rate is lost. stall_ms shows it per run, and
 * -a N repeats a run stalled for more than 1% of its time (up to N times; the attempt that
 * is printed is numbered).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/gate.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/units.h"

#define MAX_LIST 16

struct opts {
	qp_rate_bps rates[MAX_LIST];
	unsigned nrates;
	enum qp_wait_mode modes[QP_WAIT_MODE_COUNT];
	unsigned nmodes;
	uint64_t chunk_bytes;
	qp_time_ns duration_ns;
	qp_time_ns spin_ns;
	uint64_t attempts;
	int json;
};

struct result {
	double achieved_bps, err_pct, cpu_pct, gap_p50_us, gap_p99_us, ideal_gap_us, stall_ms;
	uint64_t pieces, sleeps, attempt;
};

/* A gap this much longer than the ideal one is the scheduler taking the CPU away, not
 * the pacer; stall_ms adds up such gaps beyond the ideal. */
#define STALL_GAP_NS QP_NS_PER_MS

/* ---- command line: one table (qpace/opt.h) drives parsing, checks and usage ---- */

static int parse_rates(const struct qp_opt *opt, void *conf, const char *s, char *err,
		       size_t len)
{
	struct opts *o = conf;
	char buf[256], *save = NULL, *tok;

	(void)opt;
	snprintf(buf, sizeof(buf), "%s", s);
	o->nrates = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		qp_rate_bps r;

		if (o->nrates == MAX_LIST)
			return qp_errmsg(-EINVAL, err, len, "at most %d rates", MAX_LIST);
		if (qp_parse_rate(tok, &r) || r < QP_GATE_MIN_BPS || r > 100 * QP_GBPS)
			return qp_errmsg(-EINVAL, err, len, "'%s' is not a rate from 1K to 100G, such "
					 "as 100M or 5G", tok);
		o->rates[o->nrates++] = r;
	}
	return o->nrates ? 0 : qp_errmsg(-EINVAL, err, len, "give at least one rate");
}

static int parse_modes(const struct qp_opt *opt, void *conf, const char *s, char *err,
		       size_t len)
{
	struct opts *o = conf;
	char buf[128], *save = NULL, *tok;

	(void)opt;
	snprintf(buf, sizeof(buf), "%s", s);
	o->nmodes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nmodes == QP_WAIT_MODE_COUNT ||
		    qp_wait_mode_parse(tok, &o->modes[o->nmodes]))
			return qp_errmsg(-EINVAL, err, len, "'%s': modes are sleep, hybrid, spin, each "
					 "at most once", tok);
		o->nmodes++;
	}
	return o->nmodes ? 0 : qp_errmsg(-EINVAL, err, len, "give at least one mode");
}

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "rates", 0, QP_OPT_FN, "LIST", .fn = parse_rates,
	  .old_short = 'r',
	  .help = "target rates, comma-separated", .def = "10M,100M,1G,2G,5G" },
	{ "modes", 0, QP_OPT_FN, "LIST", .fn = parse_modes,
	  .old_short = 'm', .help = "wait modes: sleep, hybrid, spin", .def = "sleep,hybrid" },
	{ "chunk", 0, QP_OPT_BYTES, "BYTES", AT(chunk_bytes), .min = QP_GATE_MIN_BYTES,
	  .max = QP_GATE_MAX_BYTES, .old_short = 'c', .help = "piece size", .def = "4K" },
	{ "duration", 0, QP_OPT_TIME, "TIME", AT(duration_ns), .min = 10 * QP_NS_PER_MS,
	  .max = 600 * QP_NS_PER_S, .old_short = 'd',
	  .help = "length of each run", .def = "1s" },
	{ "spin", 0, QP_OPT_TIME, "TIME", AT(spin_ns), .min = QP_NS_PER_US,
	  .max = 10 * QP_NS_PER_MS, .old_short = 's',
	  .help = "hybrid: spin this long before each deadline",
	  .def = "80us" },
	{ "attempts", 0, QP_OPT_UINT, "N", AT(attempts), .min = 1, .max = 100,
	  .old_short = 'a',
	  .help = "repeat a run the machine stalled (stall_ms over 1% of it) up to N times",
	  .def = "1" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object per run instead of the table" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "bench-gate",
	.head = "usage: bench-gate [options]\n"
		"Achieved vs configured rate and CPU cost of the pacing gate, sleep-only vs "
		"sleep+spin.\n\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

/* ---- measurement ---- */

static double thread_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int run_one(const struct opts *o, qp_rate_bps rate, enum qp_wait_mode mode,
		   struct result *r)
{
	/* The safe rate is the target too (all of a line of that rate), and the heartbeat
	 * never goes stale: a stall of the machine must not change the rate under test. */
	struct qp_gate_params gp = { .chunk_bytes = o->chunk_bytes, .line_bps = rate,
				     .safe_permille = QP_GATE_MAX_PERMILLE,
				     .stale_ns = QP_GATE_MAX_STALE_NS };
	struct qp_wait w = { .mode = mode, .spin_ns = o->spin_ns };
	struct qp_ratetable *t;
	struct qp_rate_src src;
	struct qp_pacer p;
	struct qp_gate_verdict v;
	uint64_t *gaps, max_pieces, n = 0;
	qp_time_ns t0, prev, now, ideal_ns;
	double cpu0, wall_s;
	char err[200];
	int slot;

	if (qp_gate_params_resolve(&gp, err, sizeof(err)) ||
	    qp_ratetable_create_mem(1, &t, err, sizeof(err))) {
		fprintf(stderr, "bench-gate: %s\n", err);
		return -EINVAL;
	}
	/* This thread plays the agent as well: one slot at the target rate, kept beating. */
	slot = qp_ratetable_assign(t, 1);
	now = qp_now_ns();
	qp_ratetable_set(t, (uint32_t)slot, rate, 0, 0, now);
	qp_ratetable_heartbeat(t, now);
	qp_rate_src_init_table(&src, t, QP_GATE_MAX_STALE_NS, NULL, NULL);
	qp_pacer_init(&p, &gp, &w, &src, 1, now);
	ideal_ns = qp_tx_time_ns(gp.chunk_bytes, rate);
	max_pieces = qp_bytes_in(rate, o->duration_ns) / gp.chunk_bytes + 16;
	gaps = calloc(max_pieces, sizeof(*gaps));
	if (!gaps) {
		qp_ratetable_close(t);
		return -ENOMEM;
	}
	/* Empty the initial bucket, so the run measures the steady rate only. */
	while (qp_pacer_try(&p, gp.chunk_bytes, 0, qp_now_ns(), &v) == 0)
		;
	qp_pacer_take(&p, gp.chunk_bytes, 0, -1, NULL, NULL, &v);
	t0 = prev = qp_now_ns();
	memset(&p.gate.stats, 0, sizeof(p.gate.stats));
	cpu0 = thread_cpu_s();
	while (n < max_pieces && prev - t0 < o->duration_ns) {
		qp_ratetable_heartbeat(t, prev);
		qp_pacer_take(&p, gp.chunk_bytes, 0, -1, NULL, NULL, &v);
		now = qp_now_ns();
		gaps[n++] = now - prev;
		prev = now;
	}
	wall_s = (double)(prev - t0) / 1e9;
	r->pieces = n;
	r->achieved_bps = (double)n * (double)gp.chunk_bytes * 8.0 / wall_s;
	r->err_pct = (r->achieved_bps - (double)rate) * 100.0 / (double)rate;
	r->cpu_pct = (thread_cpu_s() - cpu0) * 100.0 / wall_s;
	r->sleeps = p.gate.stats.sleeps;
	r->ideal_gap_us = (double)ideal_ns / 1e3;
	r->stall_ms = 0;
	for (uint64_t i = 0; i < n; i++)
		if (gaps[i] > ideal_ns + STALL_GAP_NS)
			r->stall_ms += (double)(gaps[i] - ideal_ns) / 1e6;
	qsort(gaps, n, sizeof(*gaps), cmp_u64);
	r->gap_p50_us = n ? (double)gaps[n / 2] / 1e3 : 0;
	r->gap_p99_us = n ? (double)gaps[(n * 99) / 100] / 1e3 : 0;
	free(gaps);
	qp_rate_src_fini(&src);
	qp_ratetable_close(t);
	return 0;
}

/* How late a sleep-mode wait returns (timer slack 1 ns, as the pacer sets it): the figure
 * that sizes the hybrid's spin. */
static void measure_wakeups(const struct opts *o)
{
	enum { N = 2000 };
	static uint64_t late[N];
	struct qp_wait w = { .mode = QP_WAIT_SLEEP };

	for (unsigned i = 0; i < N; i++) {
		qp_time_ns deadline = qp_now_ns() + 200 * QP_NS_PER_US;

		late[i] = qp_wait_until(&w, deadline, -1, NULL) - deadline;
	}
	qsort(late, N, sizeof(late[0]), cmp_u64);
	if (o->json) {
		struct qp_out j;

		qp_out_init(&j, stdout, QP_OUT_JSON);
		qp_out_obj(&j, NULL);
		qp_out_double(&j, "wakeup_late_p50_us", (double)late[N / 2] / 1e3, "%.1f");
		qp_out_double(&j, "wakeup_late_p99_us", (double)late[N * 99 / 100] / 1e3, "%.1f");
		qp_out_double(&j, "wakeup_late_max_us", (double)late[N - 1] / 1e3, "%.1f");
		qp_out_end(&j);
	} else {
		printf("# sleep wakeups (2000 x 200 us): late by p50 %.1f us, p99 %.1f us, max "
		       "%.1f us; hybrid spins the last %.0f us\n", (double)late[N / 2] / 1e3,
		       (double)late[N * 99 / 100] / 1e3, (double)late[N - 1] / 1e3,
		       (double)(o->spin_ns ? o->spin_ns : QP_WAIT_DEF_SPIN_NS) / 1e3);
	}
}

static void print_result(const struct opts *o, qp_rate_bps rate, enum qp_wait_mode mode,
			 const struct result *r)
{
	char target[32], achieved[32];

	qp_fmt_rate(rate, target, sizeof(target));
	qp_fmt_rate((qp_rate_bps)r->achieved_bps, achieved, sizeof(achieved));
	if (o->json) {
		struct qp_out j;

		qp_out_init(&j, stdout, QP_OUT_JSON);
		qp_out_obj(&j, NULL);
		qp_out_u64(&j, "target_bps", rate);
		qp_out_str(&j, "mode", qp_wait_mode_str(mode));
		qp_out_u64(&j, "chunk_bytes", o->chunk_bytes);
		qp_out_double(&j, "achieved_bps", r->achieved_bps, "%.0f");
		qp_out_double(&j, "error_pct", r->err_pct, "%.3f");
		qp_out_double(&j, "cpu_pct", r->cpu_pct, "%.1f");
		qp_out_double(&j, "ideal_gap_us", r->ideal_gap_us, "%.2f");
		qp_out_double(&j, "gap_p50_us", r->gap_p50_us, "%.2f");
		qp_out_double(&j, "gap_p99_us", r->gap_p99_us, "%.2f");
		qp_out_u64(&j, "pieces", r->pieces);
		qp_out_u64(&j, "sleeps", r->sleeps);
		qp_out_double(&j, "stall_ms", r->stall_ms, "%.1f");
		qp_out_u64(&j, "attempt", r->attempt);
		qp_out_end(&j);
		return;
	}
	printf("%-8s %-7s %-10s %+8.2f%% %6.1f%% %9.2f %9.2f %9.2f %9llu %9llu %9.1f %7llu\n",
	       target, qp_wait_mode_str(mode), achieved, r->err_pct, r->cpu_pct, r->ideal_gap_us,
	       r->gap_p50_us, r->gap_p99_us, (unsigned long long)r->pieces,
	       (unsigned long long)r->sleeps, r->stall_ms, (unsigned long long)r->attempt);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int rc = qp_opt_main(&prog, argc, argv, &o, NULL);

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	if (!o.json) {
		double load[3] = { 0 };

		getloadavg(load, 3);
		printf("# chunk %llu B, %.1f s per run, %ld CPUs, load average %.2f (stall_ms: gaps "
		       "over 1 ms beyond the ideal: the machine's, not the pacer's)\n",
		       (unsigned long long)o.chunk_bytes, (double)o.duration_ns / 1e9,
		       sysconf(_SC_NPROCESSORS_ONLN), load[0]);
		measure_wakeups(&o);
		printf("%-8s %-7s %-10s %9s %7s %9s %9s %9s %9s %9s %9s %7s\n", "target", "mode",
		       "achieved", "error", "cpu", "ideal_us", "gap_p50", "gap_p99", "pieces",
		       "sleeps", "stall_ms", "attempt");
	}
	for (unsigned i = 0; i < o.nrates; i++) {
		for (unsigned m = 0; m < o.nmodes; m++) {
			struct result r;

			/* A run the scheduler stalled measures the machine: say so, or repeat. */
			for (r.attempt = 1;; r.attempt++) {
				if (run_one(&o, o.rates[i], o.modes[m], &r))
					return 1;
				if (r.attempt >= o.attempts ||
				    r.stall_ms * 1e6 * 100 <= (double)o.duration_ns)
					break;
			}
			print_result(&o, o.rates[i], o.modes[m], &r);
			fflush(stdout);
		}
	}
	return 0;
}
