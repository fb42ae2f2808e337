/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sub-millisecond timers for libev loops: an ev_io watching a timerfd.
 *
 * Why: libev 4.33's epoll backend waits with epoll_wait's millisecond timeout, so an
 * ev_timer asked for 100 us fires about every millisecond on the machines qpace targets
 * (shared/notes/machine-facts.md). A timerfd armed at an absolute CLOCK_MONOTONIC deadline
 * is an hrtimer with nanosecond resolution; its expiry makes the fd readable and wakes
 * epoll_wait at once, whatever the loop's own timeout. This works with every libev backend
 * and every kernel since 2.6.25, where EVBACKEND_IOURING needs io_uring (often disabled in
 * containers and hardened kernels). tests/unit/test_evtimer.c measures both.
 *
 * One deadline per timer; arming an unchanged deadline costs no system call.
 */
#ifndef QPACE_EVTIMER_H
#define QPACE_EVTIMER_H

#include <stddef.h>
#include <stdint.h>
#include <ev.h>
#include "qpace/time.h"

struct qp_evtimer;
typedef void (*qp_evtimer_cb)(struct qp_evtimer *t, qp_time_ns now);

struct qp_evtimer {
	ev_io io;
	int fd;
	qp_time_ns armed_ns;       /* QP_TIME_NEVER when disarmed */
	qp_evtimer_cb cb;
	void *data;                /* the caller's */
	uint64_t fires;            /* callbacks run */
	uint64_t arms;             /* timerfd_settime calls */
};

/* Create the timerfd and start watching it on @loop. 0 or -errno with @err. */
int qp_evtimer_init(struct qp_evtimer *t, struct ev_loop *loop, qp_evtimer_cb cb,
		    char *err, size_t errlen);
/* Fire at @deadline_ns (CLOCK_MONOTONIC, qp_now_ns); QP_TIME_NEVER disarms. A deadline
 * already past fires on the next loop iteration. */
void qp_evtimer_arm(struct qp_evtimer *t, qp_time_ns deadline_ns);
void qp_evtimer_close(struct qp_evtimer *t, struct ev_loop *loop);

#endif
