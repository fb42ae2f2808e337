/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology + workload runs in virtual time (`qpace-bench run`, docs/workloads.md "Runs"):
 * a topology (a file qpace-switch -c loads, or a generator's parameters), a workload file
 * (qpace/workload.h), an algorithm, a seed -> the flows run on the engine (qpace/sim.h)
 * with the switch and hosts qpace runs in real time, and the figures: FCT slowdown by
 * size (HPCC's definition), per-link utilisation, PFC pauses, drops, the engine's speed.
 *
 * A library call, so other commands (reproductions) run the same thing:
 *
 *     struct netrun_conf c; netrun_conf_defaults(&c);
 *     c.gen = &params (or c.topo_file = "ls.topo"); c.workload_file = "mix.wl";
 *     struct netrun_result r;
 *     netrun_run(&c, &r, err, sizeof(err));      then netrun_print(stdout, &r, json)
 *     netrun_result_free(&r);
 *
 * Hosts: every I/O port of the topology, in the configuration's order (switch by switch,
 * port by port), is a host; host i has IPv4 10.0.0.0 + i + 1 and the soft backend's MAC
 * for it, as the generators number them (qpace/topogen.h), so a generated file and its
 * parameters give the same run. NICs run at their port's rate, host links have its delay.
 *
 * The run ends when every flow has finished (done, or lost: a QP that failed, a host out
 * of QPs), at until_ns of simulated time (the flows still running are counted and the
 * first of them named), when interrupted (SIGINT/SIGTERM: what ran is reported), or when
 * the engine ran out of memory. Closed-loop incast rounds (wl_flow.chained) start their
 * gap after every flow of the round before has finished.
 *
 * Files in out_dir (when set): flows.csv, fct_bins.csv, links.csv, pfc.csv, rates.csv
 * (each host's sending rate over each sample), queue.csv (every port's queue at each
 * sample), switch.csv and switch.json (qpace-switch's --stats/--stats-json), report.json,
 * topology.topo (a generated topology, for qpace-switch -c), plots with gnuplot.
 */
#ifndef BENCH_NETRUN_H
#define BENCH_NETRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/fct.h"
#include "qpace/sim.h"
#include "qpace/topogen.h"
#include "qpace/workload.h"
#include "incast.h"

#define NETRUN_DEFAULT_UNTIL_NS (10 * QP_NS_PER_S)
#define NETRUN_DEFAULT_SAMPLE_NS QP_NS_PER_MS
#define NETRUN_MAX_CDF_DIRS 4
/* Where an installed qpace-bench finds its CDFs: DATADIR/qpace/cdf, which `make install`
 * fills; the Makefile gives it for the objects that use it. */
#ifndef QPACE_CDF_DIR
#define QPACE_CDF_DIR "/usr/local/share/qpace/cdf"
#endif
#define NETRUN_MAX_CDFS 16            /* distinct CDFs a workload names */
#define NETRUN_NAME 48                /* "SWITCH:PORT" */

struct netrun_conf {
	const char *topo_file;        /* a topology file; or, when NULL: */
	const struct topogen_params *gen;   /* a generated one */
	const char *workload_file;
	const char *cdf_dirs[NETRUN_MAX_CDF_DIRS];   /* where CDF names are looked up */
	size_t ncdf_dirs;
	const char *algo;             /* "hpcc", "none+ia" (incast_algo_parse) */
	const char *cc_params;        /* more "k=v,..." for the senders' algorithm; NULL none */
	const char *pfc;              /* qpace-switch --pfc SPEC for every port; NULL: the
				       * topology's own settings */
	uint64_t seed;                /* the workload's, the agents', the switch's RED */
	qp_time_ns until_ns;          /* simulated-time limit */
	qp_time_ns sample_ns;         /* rates.csv, queue.csv, switch.csv period */
	uint32_t mtu_bytes;
	uint64_t window_pkts;
	unsigned bin_step_pct;        /* FCT bins: step% of the flows each (0: 5) */
	const char *out_dir;          /* NULL: no files */
	bool no_plots, progress, verbose;
	bool end_with_finite;         /* stop when every flow that can finish has finished:
				       * bytes=forever flows (background) end there, unfinished */
	bool icrc_skip;               /* --icrc off (sim_conf.icrc_skip): named in the report */
	unsigned lanes, threads;      /* sim_conf.split (lanes 2) and .threads; 0: 1 */
};

void netrun_conf_defaults(struct netrun_conf *c);

struct netrun_link {
	char name[NETRUN_NAME];
};

struct netrun_result {
	/* what ran */
	char algorithm[INCAST_ALGO_MAX], cc[INCAST_ALGO_MAX];
	bool credits;
	bool icrc_skip;               /* the run computed and checked no ICRC */
	unsigned lanes, threads;      /* as asked (lanes 2: named in the report) */
	char topology[128];           /* the file, or "leaf-spine (generated)" */
	char workload[256];
	uint64_t seed;
	size_t hosts, switches, ports;
	qp_rate_bps host_bps;         /* host 0's NIC rate */
	qp_time_ns base_rtt_ns;       /* the longest path's, registered with the agents */
	/* flows */
	size_t nflows;
	struct sim_flow *flow;        /* [nflows], in the workload's order */
	struct wl_flow *wl;           /* [nflows]: group, round */
	struct fct_flow *fct;         /* [nflows]: bytes, FCT, ideal */
	size_t done, lost, unfinished;  /* unfinished: neither done nor lost */
	size_t not_started;           /* of the unfinished, those whose start was not reached */
	uint64_t retransmits, timeouts;
	struct stats_fct fct_us;      /* FCT p50/p99/max and slowdown p50/p99 of finished */
	struct fct_summary bins;
	/* the network */
	struct netrun_link *port_name;   /* [ports] */
	struct fct_link *links;       /* [ports]: bytes sent, rate */
	struct fct_pfc_port *pfc;     /* [ports] */
	uint64_t drops, ecn_marks, max_queue_bytes;
	char max_queue_port[NETRUN_NAME];
	/* the end */
	enum sim_end end;
	bool all_finished, interrupted;
	char end_reason[320];
	/* the engine */
	qp_time_ns sim_ns;
	double wall_s;
	uint64_t events, packet_hops, max_pending, pool_bytes;
	uint64_t windows;             /* two lanes: windows run */
	double lane_busy_s[2];        /* two lanes: the hosts' and the switches' wall s in them */
	uint64_t peak_rss_bytes;      /* the process's (VmHWM), at the end */
	uint64_t huge_page_bytes;     /* of its memory on transparent huge pages, at the end */
};

/* Run @c. 0 with @r filled (netrun_result_free), or -errno with one line in @err: a bad
 * file ("FILE:LINE: what, the value, the accepted range"), a bad combination, no memory.
 * A run stopped by until_ns or a signal returns 0: r->all_finished says. */
int netrun_run(const struct netrun_conf *c, struct netrun_result *r, char *err,
	       size_t errlen);
void netrun_result_free(struct netrun_result *r);

/* The report through the shared printer (text, or JSON with @json): the incast's keys
 * where they apply (algorithm, cc, credits, flows, flows_done, retransmits, timeouts,
 * drops, ecn_marks, max_queue_bytes, fct_us, slowdown, clock, events, packet_hops, sim_s,
 * wall_s) and fct_bins, links, pfc, end, memory. */
void netrun_print(FILE *out, const struct netrun_result *r, bool json);
/* flows.csv, fct_bins.csv, links.csv, pfc.csv, report.json into @dir, and with @plots
 * (and gnuplot) slowdown.png and rates.png; 0 or -errno. */
int netrun_write_files(const struct netrun_result *r, const char *dir, bool plots,
		       char *err, size_t errlen);

#endif
