/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* timerfd-driven libev timers (see qpace/evtimer.h). */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "evtimer.h"

static void evtimer_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qp_evtimer *t = (struct qp_evtimer *)((char *)w - offsetof(struct qp_evtimer, io));
	uint64_t expirations;

	(void)loop;
	(void)revents;
	if (read(t->fd, &expirations, sizeof(expirations)) < 0)
		return; /* EAGAIN: re-armed after the expiry was queued; nothing is due */
	t->armed_ns = QP_TIME_NEVER;
	t->fires++;
	t->cb(t, qp_now_ns());
}

int qp_evtimer_init(struct qp_evtimer *t, struct ev_loop *loop, qp_evtimer_cb cb,
		    char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0)
		return qp_errmsg(-errno, err, errlen, "timerfd_create: %s", strerror(errno));
	t->armed_ns = QP_TIME_NEVER;
	t->cb = cb;
	ev_io_init(&t->io, evtimer_ready, t->fd, EV_READ);
	ev_io_start(loop, &t->io);
	return 0;
}

void qp_evtimer_arm(struct qp_evtimer *t, qp_time_ns deadline_ns)
{
	struct itimerspec its;

	if (deadline_ns == t->armed_ns)
		return;
	memset(&its, 0, sizeof(its));
	if (deadline_ns != QP_TIME_NEVER) {
		/* 0 would disarm: a deadline at time 0 is simply "now" */
		qp_time_ns d = deadline_ns ? deadline_ns : 1;

		its.it_value.tv_sec = (time_t)(d / QP_NS_PER_S);
		its.it_value.tv_nsec = (long)(d % QP_NS_PER_S);
	}
	timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL);
	t->armed_ns = deadline_ns;
	t->arms++;
}

void qp_evtimer_close(struct qp_evtimer *t, struct ev_loop *loop)
{
	if (t->fd < 0)
		return;
	ev_io_stop(loop, &t->io);
	close(t->fd);
	t->fd = -1;
}
