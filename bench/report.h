/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest-compatible reports: the banner, the BW and latency result tables with
 * perftest's exact header lines and column formats (src/perftest_parameters.h RESULT_FMT*,
 * REPORT_FMT*), and perftest's --out_json file. Scripts that parse ib_write_bw output
 * parse qpace-bench's. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/qp_wire.h"
#include "stats.h"

#define REPORT_LINE \
	"---------------------------------------------------------------------------------------\n"

struct report_info {
	const char *verb;            /* "RDMA_Write", "Send" */
	bool lat;                    /* a latency test */
	bool duration;               /* -D given: duration mode */
	const char *device;          /* "soft" host or the ibv device */
	const char *backend;         /* "soft", "ibv" */
	const char *frames;          /* soft: how frames move, "udp" or "shm"; else NULL */
	const char *cc;              /* algorithm or "none" */
	bool credits;
	unsigned qps;
	uint32_t mtu_bytes;
	const char *link_type;       /* "Ethernet" */
	int gid_index;               /* -1: n/a */
	unsigned tx_depth;
	unsigned outs;               /* READ/atomic tests: out_reads (-o); 0: not printed */
};

/* The test banner and the local/remote address lines, as perftest prints them (each
 * side's out_reads as OUT for READ and atomic tests; 0: none). */
void report_banner(FILE *out, const struct report_info *ri);
void report_addresses(FILE *out, const struct qp_conn_info *local, unsigned local_outs,
		      const struct qp_conn_info *remote, unsigned remote_outs);

void report_bw_header(FILE *out, bool gbits);
void report_bw_row(FILE *out, uint64_t size, uint64_t iters, const struct stats_bw *bw,
		   bool gbits);
void report_lat_header(FILE *out, bool duration);
void report_lat_row(FILE *out, uint64_t size, uint64_t iters, const struct stats_lat *l);
void report_lat_dur_row(FILE *out, uint64_t size, uint64_t iters, double t_avg_us,
			double tps);

/* perftest's --out_json file: {"test_info": {...}, "results": {...}}. 0 or -errno. */
int report_json_bw(const char *path, const struct report_info *ri, uint64_t size,
		   uint64_t iters, const struct stats_bw *bw, bool gbits);
int report_json_lat(const char *path, const struct report_info *ri, uint64_t size,
		    uint64_t iters, const struct stats_lat *l);

#endif
