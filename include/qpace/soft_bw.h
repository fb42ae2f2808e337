/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A WRITE transfer between two soft-backend hosts driven by one loop in this process,
 * through the QP API (the gate included): what qpace-soft-bw measures and what the soft
 * backend's tests check. Host A WRITEs `bytes` into a region of host B in WRs of
 * `msg_bytes`, keeping `sq_depth` WRs in flight; the loop progresses both contexts and
 * polls A's completions until every byte is acknowledged. */
#ifndef QPACE_SOFT_BW_H
#define QPACE_SOFT_BW_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/qp.h"
#include "qpace/soft.h"

struct soft_bw_params {
	const char *opts_a, *opts_b;   /* the two contexts' options (qpace/soft.h) */
	uint64_t bytes;                /* to WRITE; default 64 MiB */
	uint64_t buf_bytes;            /* B's region (WRs wrap around it); default = bytes */
	uint32_t msg_bytes;            /* per WR; default 1 MiB */
	uint32_t sq_depth;             /* WRs in flight; default 16 */
	uint32_t chunk_bytes;          /* gate piece; default 64 KiB */
	uint32_t mtu_bytes;            /* 0 = the contexts' mtu= */
	uint8_t timeout;               /* local ACK timeout exponent; default 14 (67 ms) */
	qp_rate_bps rate_bps;          /* the gate's rate (no agent: fallback); default 10 Tb/s */
	qp_time_ns limit_ns;           /* give up after; default 60 s */
	bool quiet;                    /* no log lines from the contexts */
	const struct qp_soft_arg *arg_a, *arg_b;   /* telemetry hooks (may be NULL) */
};

struct soft_bw_result {
	uint64_t bytes;
	qp_time_ns elapsed_ns;
	double gbps;                   /* payload bits per second / 1e9 */
	uint32_t crc_src, crc_dst;     /* CRC-32 of A's source and B's region */
	bool exact;                    /* B's region equals what A wrote */
	struct qp_stats qa;            /* A's QP (common and backend counters) */
	struct rc_stats ra, rb;        /* both RC cores */
	struct soft_host_stats ha, hb;
	struct qp_soft_io_stats ia, ib;
	uint32_t qpn_a, qpn_b;
	char err[200];                 /* why it failed */
};

/* 0 when every byte was acknowledged in time (compare r->exact for the data), or -errno
 * with r->err set. */
int soft_bw_run(const struct soft_bw_params *p, struct soft_bw_result *r);

#endif
