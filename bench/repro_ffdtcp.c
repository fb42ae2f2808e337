/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce ffdtcp: FFDTCP's incast (seed 004, NS-2; notes/reproductions.md).
 *
 * The source (its Fig. 1): many servers answer one client through one switch, 1 Gb/s
 * links, a server request unit (SRU) of 256 KB, a switch buffer of 64 KB or 128 KB, TCP,
 * DCTCP or FFDTCP senders, each run 100 s; goodput against the number of servers.
 * Here: SRU 256 KB per sender per round, 20 rounds a point (the source's 100 s would be
 * 400 rounds at 48 servers: the rounds, not the seconds, make the figure; --quick 3).
 * The source gives no delay: each link 25 us, the 100 us round trip of the incast studies
 * it follows (IA-TCP's, DCTCP's). RoCE MTU 1024. The source's senders on the RC: TCP ->
 * `tcp` (NewReno from 2 packets on the RC's go-back-N), DCTCP -> `dctcp` (its K, 20 packets
 * at 1 Gb/s, the receivers echoing CE in their ACKs), FFDTCP -> `ffd` (its TCP window
 * steered by its declared levels, 8/28/48 KiB; the source's thresholds were in a missing
 * table). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro.h"

#define B64 (64 * 1024)
#define B128 (128 * 1024)
#define SRU (256 * 1024)

static const struct repro_series series[] = {
	{ "TCP~tcp-64K", "tcp", 0, B64, NULL },
	{ "DCTCP~dctcp-64K", "dctcp", 0, B64, NULL },
	{ "FFDTCP~ffd-64K", "ffd", 0, B64, NULL },
	{ "TCP~tcp-128K", "tcp", 0, B128, NULL },
	{ "DCTCP~dctcp-128K", "dctcp", 0, B128, NULL },
	{ "FFDTCP~ffd-128K", "ffd", 0, B128, NULL },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const uint64_t senders_full[] = { 1, 4, 8, 16, 24, 32, 36, 40, 48 };
static const uint64_t senders_quick[] = { 4, 24 };
static const uint64_t sizes[] = { SRU };

static const char note_sub[] = "~900: within 10% (810 Mb/s or more). On the RC: tcp for TCP, "
			       "dctcp (K 20 packets, echoed in ACKs) for DCTCP, ffd for FFDTCP; "
			       "20 rounds of 256 KB for 100 s";

static double mbps(const struct repro_ctx *ctx, const char *label, uint64_t n)
{
	const struct repro_point *p = repro_find(ctx, label, n, SRU);

	return p ? p->r.goodput_bps / 1e6 : NAN;
}

/* The smallest N from which @label's goodput stays below half its best; 0 if never. */
static uint64_t collapse(const struct repro_ctx *ctx, const char *label, const uint64_t *ns,
			 size_t nn)
{
	double best = 0;
	uint64_t onset = 0;

	for (size_t k = 0; k < nn; k++)
		best = fmax(best, mbps(ctx, label, ns[k]));
	for (size_t k = nn; k-- > 0;) {
		if (!(mbps(ctx, label, ns[k]) < best / 2))
			break;
		onset = ns[k];
	}
	return onset;
}

static void check_128(struct repro_ctx *ctx, const uint64_t *ns, size_t nn)
{
	double low = INFINITY;
	uint64_t at = 0;

	for (size_t k = 0; k < nn; k++)
		if (mbps(ctx, "FFDTCP~ffd-128K", ns[k]) < low) {
			low = mbps(ctx, "FFDTCP~ffd-128K", ns[k]);
			at = ns[k];
		}
	repro_check(ctx, "128 KB: FFDTCP", "FFDTCP holds ~900 Mb/s for every server count (to 40+)",
		    low >= 810 ? REPRO_YES : REPRO_NO, note_sub,
		    "ffd: lowest %.0f Mb/s (N=%" PRIu64 "), %.0f Mb/s at N=%" PRIu64, low, at,
		    mbps(ctx, "FFDTCP~ffd-128K", ns[nn - 1]), ns[nn - 1]);
	uint64_t tcp = collapse(ctx, "TCP~tcp-128K", ns, nn);
	uint64_t dctcp = collapse(ctx, "DCTCP~dctcp-128K", ns, nn);
	bool order = tcp && (!dctcp || dctcp > tcp);
	char t[32], d[32];
	repro_check(ctx, "128 KB: TCP, DCTCP", "DCTCP collapses past 36 servers, TCP past 16",
		    order && tcp <= 32 && dctcp > 24 ? REPRO_YES : order ? REPRO_PARTLY : REPRO_NO,
		    "collapse: below half of the series' best from that N on; the "
		    "substitution as above",
		    "tcp collapses from %s on, dctcp from %s on (at N=%" PRIu64
		    ": %.0f and %.0f Mb/s)", repro_fmt_n(tcp, t, sizeof(t)),
		    repro_fmt_n(dctcp, d, sizeof(d)), ns[nn - 1],
		    mbps(ctx, "TCP~tcp-128K", ns[nn - 1]), mbps(ctx, "DCTCP~dctcp-128K", ns[nn - 1]));
}

static void check_64(struct repro_ctx *ctx, const uint64_t *ns, size_t nn)
{
	uint64_t last = ns[nn - 1];
	double ffd = mbps(ctx, "FFDTCP~ffd-64K", last), dc = mbps(ctx, "DCTCP~dctcp-64K", last);
	double tcp = mbps(ctx, "TCP~tcp-64K", last);
	bool order = ffd > dc && dc > tcp;
	char at[32];
	bool levels = ffd >= 300 && ffd <= 400 && dc >= 200 && dc <= 300 && tcp >= 100 && tcp <= 200;

	repro_check(ctx, "64 KB: at the most servers", "FFDTCP falls past 40 servers to 300-400 "
		    "Mb/s; DCTCP ~250, TCP 100-200",
		    order && levels ? REPRO_YES : order ? REPRO_PARTLY : REPRO_NO,
		    "yes: the order and the three levels; partly: the order only",
		    "N=%" PRIu64 ": ffd %.0f, dctcp %.0f, tcp %.0f Mb/s; ffd collapses from %s "
		    "on", last, ffd, dc, tcp,
		    repro_fmt_n(collapse(ctx, "FFDTCP~ffd-64K", ns, nn), at, sizeof(at)));
}

static void check_small_and_buffers(struct repro_ctx *ctx, const uint64_t *ns, size_t nn)
{
	double lo = INFINITY, hi = 0, worst = INFINITY;
	uint64_t worst_n = 0;

	for (size_t k = 0; k < nn && ns[k] < 8; k++)
		for (size_t a = 0; a < NSERIES; a++) {
			lo = fmin(lo, mbps(ctx, series[a].label, ns[k]));
			hi = fmax(hi, mbps(ctx, series[a].label, ns[k]));
		}
	if (isfinite(lo))
		repro_check(ctx, "below 8 servers", "the three do not differ below 8 servers",
			    hi <= lo * 1.1 ? REPRO_YES : REPRO_NO, "within 10% of each other",
			    "N < 8, every series and buffer: %.0f to %.0f Mb/s", lo, hi);
	for (size_t k = 0; k < nn; k++) {
		double d = mbps(ctx, "FFDTCP~ffd-128K", ns[k]) - mbps(ctx, "FFDTCP~ffd-64K", ns[k]);
		if (d < worst) {
			worst = d;
			worst_n = ns[k];
		}
	}
	repro_check(ctx, "buffers", "FFDTCP with 128 KB buffers at least as good as with 64 KB",
		    worst >= -0.02 * mbps(ctx, "FFDTCP~ffd-128K", worst_n) ? REPRO_YES : REPRO_NO,
		    "at every N, within 2%", "128 KB minus 64 KB: at worst %+.0f Mb/s (N=%" PRIu64 ")",
		    worst, worst_n);
}

/* Figs. 2-3 of the source's shape: goodput against the server count, a panel a buffer. */
static void plots(struct repro_ctx *ctx)
{
	char c64[2048], c128[2048], err[256];

	repro_plot_clauses(c64, sizeof(c64), series, 3, SRU, B64, "$7");
	repro_plot_clauses(c128, sizeof(c128), series + 3, 3, SRU, B128, "$7");
	if (plot_script(ctx->dir, "goodput", err, sizeof(err),
			"set output 'goodput.png'\nset multiplot layout 1,2 title 'FFDTCP incast: "
			"goodput against the number of servers (SRU 256 KB, 1 Gb/s)'\n"
			"set xlabel 'servers N'\nset ylabel 'goodput [Mb/s]'\nset yrange [0:1000]\n"
			"set key bottom left\nset title '64 KB buffer'\nplot %s\n"
			"set title '128 KB buffer'\nplot %s\nunset multiplot\n", c64, c128))
		fprintf(stderr, "qpace-bench reproduce ffdtcp: plots skipped: %s\n", err);
}

static int run(struct repro_ctx *ctx)
{
	struct bench_conf c = ctx->base;
	const uint64_t *ns = ctx->quick ? senders_quick : senders_full;
	size_t nn = ctx->quick ? N(senders_quick) : N(senders_full);

	c.link_bps = QP_GBPS;
	c.delay_ns = 25 * QP_NS_PER_US;
	c.mtu_bytes = 1024;
	c.rounds = ctx->quick ? 3 : 20;
	if (repro_sweep(ctx, &c, series, NSERIES, sizes, 1, ns, nn, NULL))
		return -1;
	check_128(ctx, ns, nn);
	check_64(ctx, ns, nn);
	check_small_and_buffers(ctx, ns, nn);
	if (ctx->plots)
		plots(ctx);
	return 0;
}

const struct repro_exp repro_ffdtcp = {
	.name = "ffdtcp",
	.summary = "FFDTCP (seed 004): N servers x 256 KB -> 1 client, 1 Gb/s, 64 KB and 128 KB "
		   "buffers; TCP, DCTCP, FFDTCP as tcp, dctcp, ffd",
	.run = run,
};
