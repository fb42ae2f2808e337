/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench run's flows from an htsim connection matrix (qpace/connmatrix.h): the
 * matrix's connections as the run's flow list, and its triggers, which start waiting flows
 * as others end. Private to bench/netrun.c. */
#ifndef BENCH_NETRUN_CM_H
#define BENCH_NETRUN_CM_H

#include <stdbool.h>
#include <stddef.h>
#include "qpace/sim.h"
#include "qpace/workload.h"

struct nr_cm;

/* Is the file @path a connection matrix (its first word Nodes)? false when it cannot be
 * read (the workload reader then says why). */
bool nr_cm_is_matrix(const char *path);
/* The matrix at @path as flows on @hosts hosts into @wf, sorted as workload.h sorts (the
 * flows with a start time by it, file order among equals; then those waiting on a
 * trigger, held, in file order): 0, or -errno with "FILE:LINE: ..." in @err (Nodes past
 * the topology's hosts named with both). */
int nr_cm_flows(const char *path, uint32_t hosts, struct nr_cm **out, struct wl_flows *wf,
		char *err, size_t errlen);
/* The flow @w (of the list) ended at @now, @done or lost: the triggers a done one
 * activates, and the flows they start (sim_flows_release). -ENOMEM when one could not be
 * started. */
int nr_cm_done(struct nr_cm *cm, const struct wl_flow *w, bool done, struct sim_flows *fl,
	       qp_time_ns now);
void nr_cm_free(struct nr_cm *cm);

#endif
