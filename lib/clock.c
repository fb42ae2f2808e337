/* The one clock read in qpace: shells call this once per callback and pass it down. */
#include <stdio.h>
#include <stdlib.h>
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
