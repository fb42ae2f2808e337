/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace time: one type, nanoseconds.
 *
 * Every core (congestion control, credit pacer, queue model, RC state machine) takes
 * the current time as an argument; none reads a clock. The shells read CLOCK_MONOTONIC
 * once per callback with qp_now_ns() and pass it down.
 */
#ifndef QPACE_TIME_H
#define QPACE_TIME_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t qp_time_ns;

#define QP_TIME_NEVER UINT64_MAX
#define QP_NS_PER_US 1000ULL
#define QP_NS_PER_MS 1000000ULL
#define QP_NS_PER_S  1000000000ULL

/* Earlier of two deadlines; QP_TIME_NEVER is later than any time. */
static inline qp_time_ns qp_time_min(qp_time_ns a, qp_time_ns b)
{
	return a < b ? a : b;
}

static inline qp_time_ns qp_time_max(qp_time_ns a, qp_time_ns b)
{
	return a > b ? a : b;
}

/* a - b, or 0 when b is not before a. */
static inline qp_time_ns qp_time_since(qp_time_ns a, qp_time_ns b)
{
	return a > b ? a - b : 0;
}

/* CLOCK_MONOTONIC in ns. Only shells call this (lib/clock.c). */
qp_time_ns qp_now_ns(void);
/* One turn of a busy-wait: a hint to the CPU (PAUSE on x86) that the thread spins. */
static inline void qp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Block until @fd (-1: none) is readable or @until (CLOCK_MONOTONIC ns; QP_TIME_NEVER: no
 * limit) passes, whichever is first; the thread's timer slack is 1 ns from its first call
 * (the default 50 us would be added to every sleep). True when @fd became readable. */
bool qp_block_until(int fd, qp_time_ns until, qp_time_ns now);
/* CLOCK_REALTIME - CLOCK_MONOTONIC now (0 if the wall clock reads earlier): a qp_now_ns()
 * time plus this is the wall clock in ns since 1970, the clock signed feedback's sequence
 * numbers come from (qpace/fb_auth.h). Read once by a shell: later steps of the wall clock
 * then do not make the sequence jump. */
qp_time_ns qp_wall_offset_ns(void);
/* Virtual time's guard: while @why is set (NULL clears it), qp_now_ns() prints
 * "qpace: qp_now_ns() called while WHY" and aborts, so no code run by a virtual-time
 * driver can read the real clock unnoticed. */
void qp_clock_forbid(const char *why);

#endif
