/* The one clock read in qpace: shells call this once per callback and pass it down. */
#include <time.h>

#include "qpace/time.h"

qp_time_ns qp_now_ns(void)
{
	struct timespec ts;
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
