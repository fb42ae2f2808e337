/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The memory a qpace-bench run will take, estimated before it starts from what it is made
 * of, and the limit it is held to (docs/workloads.md, "Scale and memory"). Private to
 * bench/netrun.c. */
#ifndef BENCH_NETRUN_MEM_H
#define BENCH_NETRUN_MEM_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/workload.h"

/* Measured (RSS, VmHWM) on generated fabrics from 4 to 8,192 hosts, this engine. An
 * estimate, not a bound: the k = 8 fat-tree's 127 -> 1 incast with PFC peaks at 1.05x it,
 * the 128-host leaf-spine's WebSearch 0.5 (1 ms of arrivals, to 2 ms) at 1.25x (its busiest
 * queues keep what they held at most). */
#define NR_MEM_BASE (8u << 20)        /* the program, its tables, a run's fixed part */
#define NR_MEM_HOST (270u << 10)      /* a host: soft context, agent, rate table, QP slots */
#define NR_MEM_PORT (17u << 10)       /* a switch port at start: its queue, rings, struct */
#define NR_MEM_FWD_SLOT 40u           /* a switch's learned tables, a slot (MAC + IPv4) */
#define NR_MEM_FLOW 400u              /* a flow in the lists (workload, results, state) */
#define NR_MEM_RUNNING (512u << 10)   /* a flow running: its two QPs and their rings, and
				       * its window of frames in the switches' queues, whose
				       * rings grow in powers of two and keep their size */

struct nr_mem {
	size_t hosts, switches, ports, flows, running;
	uint32_t fwd_slots;           /* each switch's */
	uint64_t routes_bytes;        /* the route table, held twice (configuration, copy) */
	uint64_t bytes;               /* the estimate */
};

/* How many of @flows may run at once: the timed ones whose [start, start + 4 x (bytes at
 * @host_bps + @rtt_ns)] overlap at the worst instant (a flow that never ends, from its
 * start on), plus the held ones (they start as others end: all of them, at most). */
size_t nr_mem_running(const struct wl_flow *flows, size_t n, uint64_t host_bps,
		      uint64_t rtt_ns);
/* The estimate of @m's counts into m->bytes. */
void nr_mem_estimate(struct nr_mem *m);
/* One line that says what the estimate is made of, into @buf. */
void nr_mem_describe(const struct nr_mem *m, char *buf, size_t len);
/* @b bytes as "123 MB" (or "12.5 GB" from 10 GB), into @buf. */
const char *nr_mem_fmt(uint64_t b, char *buf, size_t len);
/* The machine's available memory (/proc/meminfo MemAvailable), 0 when unknown. */
uint64_t nr_mem_available(void);

#endif
