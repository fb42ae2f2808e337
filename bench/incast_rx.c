/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The real-time incast's receiver thread: see incast_rx.h. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/host.h"
#include "qpace/soft.h"
#include "qpace/units.h"
#include "incast_priv.h"
#include "incast_rx.h"

#define RX_EV_SOCKET 0u
#define RX_EV_WAKE 1u

/* One pass: as incast_pass does for each host, for host 0 alone. Its work comes from
 * arrivals and its own deadlines, so unlike the senders' loop it sleeps (without the
 * lock) until the next deadline or an arrival whenever that deadline is beyond --spin
 * (endpoint.c's policy): a third busy loop beside the switch's and the senders' on two
 * cores would take its turns from them. */
static void rx_pass(struct incast_rx *rx)
{
	struct host *h = rx->h;
	struct epoll_event ev[2];
	bool input = false;

	while (atomic_load_explicit(&rx->want, memory_order_acquire))
		sched_yield();   /* the main thread is about to take host 0: let it */
	pthread_mutex_lock(&rx->lock);
	qp_time_ns now = qp_now_ns();
	qp_time_ns next = qp_time_min(now + INCAST_SAMPLE_NS, host_deadline(h));
	bool may_block = next > now + rx->spin_ns && qp_soft_wait_arm(h->ctx);
	pthread_mutex_unlock(&rx->lock);
	qp_time_ns asked = 0;   /* how long it asked to sleep */
	if (may_block) {
		asked = next - now;
		qp_block_until(rx->ep, next, now);
	}
	int n = epoll_wait(rx->ep, ev, 2, 0);
	for (int k = 0; k < n; k++) {
		if (ev[k].data.u32 == RX_EV_WAKE) {
			uint64_t v;
			if (read(rx->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		} else {
			input = true;
		}
	}
	while (atomic_load_explicit(&rx->want, memory_order_acquire))
		sched_yield();
	pthread_mutex_lock(&rx->lock);
	now = qp_now_ns();
	if (atomic_load_explicit(&rx->round_on, memory_order_relaxed)) {
		incast_late_note(rx->last_pass_ns ? rx->last_pass_ns + asked : 0, now, 0, &rx->max_gap_ns,
				 &rx->late_total_ns);
		rx->last_pass_ns = now;
	} else {
		rx->last_pass_ns = 0;
	}
	if (input)
		qp_ctx_progress(h->ctx, now);
	else
		qp_soft_rx_idle(h->ctx, now);
	if (qp_ctx_deadline(h->ctx) <= now)
		qp_ctx_progress(h->ctx, now);
	host_service(h, now);
	pthread_mutex_unlock(&rx->lock);
}

static void *rx_main(void *arg)
{
	struct incast_rx *rx = arg;

	while (!atomic_load_explicit(&rx->stop, memory_order_acquire))
		rx_pass(rx);
	return NULL;
}

int incast_rx_start(struct incast_rx *rx, struct host *h, qp_time_ns spin_ns, char *err,
		    size_t errlen)
{
	struct epoll_event sev = { .events = EPOLLIN, .data.u32 = RX_EV_SOCKET };
	struct epoll_event wev = { .events = EPOLLIN, .data.u32 = RX_EV_WAKE };
	int fd = qp_ctx_fd(h->ctx), rc;

	memset(rx, 0, sizeof(*rx));
	rx->h = h;
	rx->spin_ns = spin_ns;
	rx->ep = rx->wake = -1;
	atomic_init(&rx->want, false);
	atomic_init(&rx->stop, false);
	atomic_init(&rx->round_on, false);
	if ((rc = pthread_mutex_init(&rx->lock, NULL)))
		return qp_errmsg(-rc, err, errlen, "--rx-thread on: pthread_mutex_init: %s",
				 strerror(rc));
	rx->lock_init = true;
	rx->ep = epoll_create1(EPOLL_CLOEXEC);
	rx->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rx->ep < 0 || rx->wake < 0 || fd < 0 ||
	    epoll_ctl(rx->ep, EPOLL_CTL_ADD, fd, &sev) ||
	    epoll_ctl(rx->ep, EPOLL_CTL_ADD, rx->wake, &wev)) {
		rc = fd < 0 ? EINVAL : errno;
		return qp_errmsg(-rc, err, errlen, "--rx-thread on: the receiver's epoll set: %s%s",
				 strerror(rc), fd < 0 ? " (its context has no socket)" : "");
	}
	/* The main thread may be pinned to one CPU (beside the switch's): the receiver may
	 * run on any. */
	pthread_attr_t attr;
	cpu_set_t all;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	CPU_ZERO(&all);
	for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, &all);
	if ((rc = pthread_attr_init(&attr)))
		return qp_errmsg(-rc, err, errlen, "--rx-thread on: pthread_attr_init: %s",
				 strerror(rc));
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	rc = pthread_create(&rx->tid, &attr, rx_main, rx);
	pthread_attr_destroy(&attr);
	if (rc)
		return qp_errmsg(-rc, err, errlen, "--rx-thread on: pthread_create: %s "
				 "(--rx-thread off runs the receiver in the main loop)",
				 strerror(rc));
	rx->started = true;
	return 0;
}

void incast_rx_stop(struct incast_rx *rx)
{
	if (rx->started) {
		atomic_store_explicit(&rx->stop, true, memory_order_release);
		uint64_t one = 1;
		if (write(rx->wake, &one, sizeof(one)) < 0) {
			/* the thread wakes within a millisecond anyway */
		}
		pthread_join(rx->tid, NULL);
		rx->started = false;
	}
	if (rx->ep >= 0)
		close(rx->ep);
	if (rx->wake >= 0)
		close(rx->wake);
	rx->ep = rx->wake = -1;
	if (rx->lock_init)
		pthread_mutex_destroy(&rx->lock);
	rx->lock_init = false;
}

void incast_rx_enter(struct incast_rx *rx)
{
	if (!rx || !rx->started)
		return;
	atomic_store_explicit(&rx->want, true, memory_order_release);
	pthread_mutex_lock(&rx->lock);
	atomic_store_explicit(&rx->want, false, memory_order_release);
}

void incast_rx_leave(struct incast_rx *rx)
{
	uint64_t one = 1;

	if (!rx || !rx->started)
		return;
	pthread_mutex_unlock(&rx->lock);
	if (write(rx->wake, &one, sizeof(one)) < 0) {
		/* a full counter (never: the thread reads it each pass) wakes it as well */
	}
}

void incast_rx_round(struct incast_rx *rx, bool on)
{
	if (rx && rx->started)
		atomic_store_explicit(&rx->round_on, on, memory_order_relaxed);
}
