/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The real-time incast's receiver thread (--rx-thread on): host 0, the receiving host, runs
 * its own loop in a second thread, so its datagram I/O (data in, ACKs and INT echoes out)
 * runs beside the senders' on another core instead of after them on one.
 *
 * Ownership: while the thread runs, host 0 (its context, QPs, agent, rate table, credits)
 * belongs to whoever holds rx->lock. The thread holds it for each pass of its loop (never
 * while it sleeps in epoll_wait); the main thread takes it, through incast_rx_enter and
 * incast_rx_leave, for every touch of host 0: the agent registrations of each round, a
 * flow's leaving, the monitor's answers (they read every agent). Entering raises a flag the
 * thread sees before its next pass, so it yields the lock instead of taking it again at
 * once (a mutex is not fair); leaving wakes the thread (an eventfd in its epoll set), so a
 * change to its deadlines counts at once. After incast_rx_stop (the thread joined) host 0
 * and the lateness figures are the main thread's again. With rx NULL (virtual time,
 * --rx-thread off) enter and leave do nothing. */
#ifndef BENCH_INCAST_RX_H
#define BENCH_INCAST_RX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include "qpace/time.h"

struct host;

struct incast_rx {
	struct host *h;              /* host 0 */
	pthread_t tid;
	pthread_mutex_t lock;        /* who owns host 0 now (above) */
	atomic_bool want;            /* the main thread waits for the lock */
	atomic_bool stop;            /* the thread ends its loop */
	atomic_bool round_on;        /* lateness counts (inside a round) */
	int ep, wake;                /* its epoll set: host 0's socket and an eventfd */
	qp_time_ns spin_ns;
	bool started, lock_init;
	/* The thread's own lateness, as incast_pass measures the main loop's: the thread
	 * writes them, the main thread reads them after the join. */
	qp_time_ns last_pass_ns, max_gap_ns, late_total_ns;
};

/* Start the thread on host @h (its context connected, its QPs created); it spins while
 * host 0's next deadline is within @spin_ns (--spin), else sleeps until it or an arrival.
 * 0, or a negative errno with @err (pthread_create's, epoll's, eventfd's). */
int incast_rx_start(struct incast_rx *rx, struct host *h, qp_time_ns spin_ns, char *err,
		    size_t errlen);
/* Stop and join it (no-op when not started); frees its descriptors. */
void incast_rx_stop(struct incast_rx *rx);
/* The main thread takes host 0 / gives it back (no-ops for rx NULL). */
void incast_rx_enter(struct incast_rx *rx);
void incast_rx_leave(struct incast_rx *rx);
/* Lateness counts from now (a round begins) or not (it ended); the thread restarts its
 * measure at each change, as the main loop does per round. */
void incast_rx_round(struct incast_rx *rx, bool on);

#endif
