/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced, the agent daemon: the agent core (qpace/agent.h) in a libev loop.
 *
 *   feedback   UDP socket (default 0.0.0.0:4792), drained with recvmmsg(64), replies and
 *              grants sent with sendmmsg; kernel arrival timestamps (SO_TIMESTAMPNS) give
 *              the arrival-to-rate-table delay; kernel drops counted (SO_RXQ_OVFL)
 *   control    unix SOCK_SEQPACKET socket, mode 0660 (qpace/ctl.h): registrations, events,
 *              qpacectl; a connection's QPs are reaped when it closes
 *   metrics    Prometheus text over HTTP (qpace/agent_metrics.h)
 *   timers     the core's deadlines on a timerfd (qpace/evtimer.h): sub-millisecond
 *   rate table shared memory (qpace/ratetable.h), heartbeat every --heartbeat; on a clean
 *              exit the heartbeat is zeroed and the name removed, so gates fall back at once
 *   signals    SIGTERM / SIGINT: clean exit; SIGPIPE ignored
 */
#ifndef QPACE_QPACED_H
#define QPACE_QPACED_H

#include <stddef.h>
#include "agent_config.h"

struct qpaced;

/* Open every socket and the rate table (the key file, if any, is read here). */
int qpaced_open(const struct qpaced_config *c, struct qpaced **out, char *err, size_t errlen);
/* Run until SIGTERM/SIGINT. 0 on a clean stop. */
int qpaced_run(struct qpaced *d);
/* Close everything, zero the heartbeat, remove the socket and table names. */
void qpaced_close(struct qpaced *d);

#endif
