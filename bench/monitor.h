/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent's monitoring interface for the bench's emulated hosts: a unix SOCK_SEQPACKET
 * socket speaking the agent's control protocol (qpace/ctl.h), so `qpacectl top` (with
 * QPACE_SOCKET=PATH, or at the default path when no qpaced uses it) shows the QPs of every
 * host of a run. LIST, SHOW and STATUS span all hosts (STATUS sums their counters); SET
 * changes the first QP with that number (QPNs repeat across hosts: each is its own RNIC);
 * REGISTER and friends are refused: the bench's QPs are its own.
 *
 * Non-blocking, driven by the caller's loop (monitor_fds + monitor_serve); a reply that
 * does not fit the socket buffer is dropped (qpacectl asks again on its next refresh).
 */
#ifndef BENCH_MONITOR_H
#define BENCH_MONITOR_H

#include <limits.h>
#include <stddef.h>
#include "qpace/agent.h"

#define MONITOR_CLIENTS 4

struct monitor {
	int lfd;
	int cfd[MONITOR_CLIENTS];
	char path[108];
	struct agent *const *agents;
	unsigned nagents;
	qp_time_ns start_ns;
	uint64_t requests, dropped;
};

/* Listen on @path (NULL: the default agent socket when its directory is writable and no
 * agent answers there, else $XDG_RUNTIME_DIR or /tmp). 0, or -1 with @err. */
int monitor_open(struct monitor *m, const char *path, struct agent *const *agents,
		 unsigned nagents, char *err, size_t errlen);
/* Accept and answer whatever is pending (never blocks). */
void monitor_serve(struct monitor *m);
void monitor_close(struct monitor *m);

#endif
