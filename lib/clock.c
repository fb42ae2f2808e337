/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The one clock read in qpace: shells call this once per callback and pass it down. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "qpace/time.h"

static const char *forbidden;

void qp_clock_forbid(const char *why)
{
	forbidden = why;
}

qp_time_ns qp_now_ns(void)
{
	struct timespec ts;

	if (forbidden) {
		fprintf(stderr, "qpace: qp_now_ns() called while %s\n", forbidden);
		abort();
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (qp_time_ns)ts.tv_sec * QP_NS_PER_S + (qp_time_ns)ts.tv_nsec;
}

qp_time_ns qp_wall_offset_ns(void)
{
	struct timespec rt;
	qp_time_ns mono = qp_now_ns(), real;

	clock_gettime(CLOCK_REALTIME, &rt);
	real = (qp_time_ns)rt.tv_sec * QP_NS_PER_S + (qp_time_ns)rt.tv_nsec;
	return qp_time_since(real, mono);
}

bool qp_block_until(int fd, qp_time_ns until, qp_time_ns now)
{
	static _Thread_local bool slack_set;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	qp_time_ns left = qp_time_since(until, now);
	struct timespec ts = { .tv_sec = (time_t)(left / QP_NS_PER_S),
			       .tv_nsec = (long)(left % QP_NS_PER_S) };
	int n;

	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		slack_set = true;
	}
	n = ppoll(&pfd, fd >= 0 ? 1 : 0, until == QP_TIME_NEVER ? NULL : &ts, NULL);
	return n > 0 && (pfd.revents & POLLIN);
}
