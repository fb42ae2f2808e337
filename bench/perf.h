/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What perf.c (the perftest-style commands: the table, the connection, the steps) and
 * perf_run.c (their data phases) share. */
#ifndef BENCH_PERF_H
#define BENCH_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/pt_wire.h"
#include "bench.h"
#include "endpoint.h"
#include "pt_conn.h"
#include "report.h"
#include "stats.h"

#define PERF_MAX_SAMPLES (1u << 20)   /* completion times kept per period (duration mode) */
#define PERF_STALL_NS (10 * QP_NS_PER_S)   /* no completion for this long: give up */
#define PERF_ALL_MAX_LOG2 23          /* -a: sizes 2^1 .. 2^23, as perftest */
#define PERF_RX_DEPTH 512u           /* receives a SEND test keeps: perftest's DEF_RX_SEND */

/* One perftest-style command. The steps are the exchanges perftest's program of the same
 * name runs (src/<name>.c), one character each: K the keys of every QP, C connect the QPs,
 * H one hand shake, P post the receives, * the data phase (every size with -a), R the BW
 * report exchange, X perftest's close (a hand shake and "done"). */
struct perf_cmd {
	unsigned cmd;
	const char *verb;            /* the banner's: RDMA_Write, Send, RDMA_Read, Atomic */
	enum qp_opcode op;           /* what the sending side posts */
	bool lat;
	const char *setup;           /* both sides, after the version, system data and MTU */
	const char *server, *client; /* then each side's */
	const char *duplex;          /* -b: both sides' */
	const char *before, *after;  /* -a: before each size but the first, after each */
};

struct perf {
	const struct bench_conf *c;
	const struct perf_cmd *cmd;
	struct endpoint e;
	struct pt_conn pt;
	struct pt_key mine[EP_MAX_QPS], theirs[EP_MAX_QPS];
	unsigned nq;
	uint64_t area;               /* bytes of each QP's local and of its exposed area */
	uint64_t size;               /* this row's message size */
	bool sends, receives;        /* this side posts the data WRs / takes SENDs */
	bool headed;                 /* a one-way server printed the BW table's header */
	qp_time_ns *done_ns;         /* completion times (BW) */
	double *lat_ns;              /* one sample per iteration (latency) */
	size_t cap;                  /* of either */
	struct report_info ri;       /* the banner's, for --out_json */
	struct stats_bw bw;          /* this side's last BW row */
	uint64_t bw_iters;
};

/* QP @q's local buffer and its exposed area (the peer's target), in the endpoint's region:
 * perftest's layout, [local 0 .. local n-1][exposed 0 .. exposed n-1]. */
static inline uint8_t *perf_local(const struct perf *p, unsigned q)
{
	return p->e.buf + (size_t)q * p->area;
}

static inline uint8_t *perf_exposed(const struct perf *p, unsigned q)
{
	return p->e.buf + (size_t)(p->nq + q) * p->area;
}

/* perf_run.c: the data phase of one row (p->size), this side's role (p->sends,
 * p->receives); prints this side's row. 0 or -errno (printed). */
int perf_run_bw(struct perf *p);
int perf_run_lat(struct perf *p);
/* The receives a SEND test keeps posted (step P). */
int perf_post_recvs(struct perf *p);

#endif
