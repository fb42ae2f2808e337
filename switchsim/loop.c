/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The I/O shell: libev around the pure fabric.
 *
 * Per loop iteration: readable ports are drained with recvmmsg (frames stamped with one
 * clock read per batch and pushed through the pipeline); then, before libev polls again
 * (ev_prepare), every frame whose leave time has come is sent with sendmmsg. Departures
 * are timed by a timerfd (libev's own timers have a ~1 ms floor with poll and epoll, see
 * machine-facts); when the next departure is closer than --spin, an idle watcher keeps
 * the loop polling without sleeping, because a sleeping thread wakes ~40-80 us late; it
 * also keeps polling for --spin after the last frame arrived, so that a steady stream is
 * read in full batches instead of one wake-up per few frames.
 * The model's times never depend on this lateness: it only shifts when frames leave.
 */
#include <errno.h>
#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "capture.h"
#include "io.h"
#include "sw.h"

struct sw_loop {
	struct ev_loop *ev;
	struct sw_fabric *fab;
	const struct sw_conf *conf;
	ev_io *io_w;
	int tfd;
	ev_io timer_w;
	ev_prepare prep_w;
	ev_idle idle_w;
	ev_signal int_w, term_w, usr1_w;
	ev_timer dur_w, stats_w, flush_w;
	FILE *csv;
	qp_time_ns start_ns;
	qp_time_ns armed_ns;
	qp_time_ns last_rx_ns;   /* last time a port had frames */
	qp_time_ns expect_ns;    /* the next departure when the loop last looked */
	struct sw_port **ring;   /* the shm ports */
	int nring;
};

static void drain(struct sw_loop *l, struct sw_port *p)
{
	struct sw_rx_frame rx[SW_BATCH];

	for (int round = 0; round < 8; round++) {
		int n = p->io->ops->recv(p->io, rx, &p->st.rx_skipped);
		qp_time_ns now;

		if (n < 0)
			p->st.rx_errors++;
		if (n <= 0)
			break;
		now = qp_now_ns();
		l->last_rx_ns = now;
		p->st.rx_batches++;
		for (int i = 0; i < n; i++) {
			/* The kernel's copy left the next frame's headers out of the cache:
			 * fetch them while this one goes through the pipeline. */
			if (i + 1 < n) {
				__builtin_prefetch(rx[i + 1].data);
				__builtin_prefetch(rx[i + 1].data + 64);
			}
			sw_ingress(p, rx[i].data, rx[i].len, NULL,
				   rx[i].ts_ns && rx[i].ts_ns <= now ? rx[i].ts_ns : now);
		}
		if (n < SW_BATCH)
			break;
	}
}

static void on_readable(struct ev_loop *ev, ev_io *w, int revents)
{
	struct sw_port *p = w->data;
	(void)revents;

	if (p->io->ops->wake)
		p->io->ops->wake(p->io);
	drain(ev_userdata(ev), p);
}

/* shm ports: their rings, which no readable fd announces, on every turn; and before the
 * loop sleeps, each armed (false: frames came meanwhile, so do not sleep). */
static void drain_rings(struct sw_loop *l)
{
	for (int i = 0; i < l->nring; i++)
		if (l->ring[i]->io->ops->pending(l->ring[i]->io))
			drain(l, l->ring[i]);
}

static bool arm_rings(struct sw_loop *l)
{
	bool empty = true;

	for (int i = 0; i < l->nring; i++)
		empty &= l->ring[i]->io->ops->arm(l->ring[i]->io);
	return empty;
}

static void arm(struct sw_loop *l, qp_time_ns at)
{
	struct itimerspec its = { 0 };

	if (at == l->armed_ns)
		return;
	if (at != QP_TIME_NEVER) {
		its.it_value.tv_sec = (time_t)(at / QP_NS_PER_S);
		its.it_value.tv_nsec = (long)(at % QP_NS_PER_S);
	}
	timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	l->armed_ns = at;
}

static void on_prepare(struct ev_loop *ev, ev_prepare *w, int revents)
{
	struct sw_loop *l = w->data;
	qp_time_ns now = qp_now_ns(), next;
	(void)revents;

	/* How late the loop came back for a departure it knew of (a sleep that overran, or
	 * the machine running something else): frames then leave late and whatever waits
	 * for them (a receiver's arrival-clocked credits) waits too. */
	if (l->expect_ns <= now) {
		qp_time_ns late = now - l->expect_ns;

		if (late > l->fab->tx_late_max_ns)
			l->fab->tx_late_max_ns = late;
		if (late > SW_LATE_COUNTED_NS)
			l->fab->tx_late_total_ns += late;
	}
	if (l->nring) {
		drain_rings(l);
		now = qp_now_ns();
	}
	sw_fabric_emit(l->fab, now);
	next = sw_fabric_next_ns(l->fab);
	l->expect_ns = next;
	/* Poll without sleeping while a departure is close or frames are flowing: a wake-up
	 * costs ~40 us, more than a frame time at the rates this runs at. */
	if ((next != QP_TIME_NEVER && next <= now + l->conf->spin_ns) ||
	    now < l->last_rx_ns + l->conf->spin_ns) {
		ev_idle_start(ev, &l->idle_w);
		return;
	}
	if (l->nring && !arm_rings(l)) {   /* frames came while we looked: go round again */
		ev_idle_start(ev, &l->idle_w);
		return;
	}
	ev_idle_stop(ev, &l->idle_w);
	arm(l, next == QP_TIME_NEVER ? QP_TIME_NEVER : next - l->conf->spin_ns);
}

static void on_timer(struct ev_loop *ev, ev_io *w, int revents)
{
	struct sw_loop *l = w->data;
	uint64_t ticks;
	(void)ev, (void)revents;

	if (read(l->tfd, &ticks, sizeof(ticks)) < 0) {
		/* EAGAIN: nothing expired; the prepare watcher re-arms either way */
	}
	l->armed_ns = 0;
}

static void on_idle(struct ev_loop *ev, ev_idle *w, int revents)
{
	(void)ev, (void)w, (void)revents;
}

/* The kernel's drop counts are read from the sockets when counters are reported. */
static void refresh_kernel_drops(struct sw_fabric *f)
{
	for (int i = 0; i < f->nio; i++)
		f->io_ports[i]->st.rx_kernel_drops = sw_io_kernel_drops(f->io_ports[i]->io);
}

static void dump_json(struct sw_loop *l)
{
	const char *path = l->conf->stats_json_path;
	FILE *f = path ? fopen(path, "w") : stderr;

	if (!f) {
		perror(path);
		return;
	}
	refresh_kernel_drops(l->fab);
	sw_stats_json(l->fab, f, qp_now_ns());
	if (path)
		fclose(f);
}

static void on_stop(struct ev_loop *ev, ev_signal *w, int revents)
{
	(void)w, (void)revents;
	ev_break(ev, EVBREAK_ALL);
}

static void on_usr1(struct ev_loop *ev, ev_signal *w, int revents)
{
	(void)ev, (void)revents;
	dump_json(w->data);
}

static void on_duration(struct ev_loop *ev, ev_timer *w, int revents)
{
	(void)w, (void)revents;
	ev_break(ev, EVBREAK_ALL);
}

static void on_stats(struct ev_loop *ev, ev_timer *w, int revents)
{
	struct sw_loop *l = w->data;
	(void)ev, (void)revents;
	refresh_kernel_drops(l->fab);
	sw_stats_csv_row(l->fab, l->csv, qp_now_ns(), l->start_ns);
}

static void on_flush(struct ev_loop *ev, ev_timer *w, int revents)
{
	struct sw_loop *l = w->data;
	(void)ev, (void)revents;
	sw_capture_flush(l->fab->cap);
	if (l->csv)
		fflush(l->csv);
}

/* poll(2) for a few I/O ports, epoll beyond. An epoll set keeps an entry on each socket's
 * wait queue for good, so the kernel runs epoll's callback for every datagram a port
 * sends (its buffer space coming back) and for every datagram a sender delivers to it,
 * while the loop is busy-polling and needs none of it: 6.6% of the switch's CPU, against
 * 1.2% with poll, whose entries exist only while it sleeps (and not at all for the
 * zero-timeout polls of busy-polling). poll scans every descriptor on each call, which
 * stays cheaper than that up to a few dozen of them. */
#define SW_LOOP_POLL_MAX_PORTS 16

static unsigned loop_backend(const struct sw_fabric *f)
{
	return f->nio <= SW_LOOP_POLL_MAX_PORTS ? EVBACKEND_POLL : EVBACKEND_EPOLL;
}

static int setup(struct sw_loop *l, char *err, size_t len)
{
	const struct sw_conf *c = l->conf;

	errno = 0;
	l->ev = ev_loop_new(loop_backend(l->fab) | EVFLAG_NOSIGMASK);
	if (l->ev)
		ev_set_userdata(l->ev, l);
	l->expect_ns = QP_TIME_NEVER;
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	l->io_w = calloc((size_t)l->fab->nio + 1, sizeof(*l->io_w));
	l->ring = calloc((size_t)l->fab->nio + 1, sizeof(*l->ring));
	if (!l->ev || l->tfd < 0 || !l->io_w || !l->ring)
		return qp_errmsg(errno ? -errno : -ENOMEM, err, len,
				 "event loop: cannot create (poll/epoll, timerfd or memory)");
	if (c->stats_path) {
		l->csv = fopen(c->stats_path, "w");
		if (!l->csv)
			return qp_errmsg(-errno, err, len, "--stats %s: %s",
					 c->stats_path, strerror(errno));
		sw_stats_csv_header(l->csv);
	}
	for (int i = 0; i < l->fab->nio; i++) {
		ev_io_init(&l->io_w[i], on_readable, l->fab->io_ports[i]->io->fd, EV_READ);
		l->io_w[i].data = l->fab->io_ports[i];
		ev_io_start(l->ev, &l->io_w[i]);
		if (l->fab->io_ports[i]->io->ops->pending)
			l->ring[l->nring++] = l->fab->io_ports[i];
	}
	ev_io_init(&l->timer_w, on_timer, l->tfd, EV_READ);
	ev_prepare_init(&l->prep_w, on_prepare);
	ev_idle_init(&l->idle_w, on_idle);
	ev_signal_init(&l->int_w, on_stop, SIGINT);
	ev_signal_init(&l->term_w, on_stop, SIGTERM);
	ev_signal_init(&l->usr1_w, on_usr1, SIGUSR1);
	l->timer_w.data = l->prep_w.data = l->usr1_w.data = l;
	ev_io_start(l->ev, &l->timer_w);
	ev_prepare_start(l->ev, &l->prep_w);
	ev_signal_start(l->ev, &l->int_w);
	ev_signal_start(l->ev, &l->term_w);
	ev_signal_start(l->ev, &l->usr1_w);
	if (c->duration_ns) {
		ev_timer_init(&l->dur_w, on_duration, (double)c->duration_ns / 1e9, 0);
		ev_timer_start(l->ev, &l->dur_w);
	}
	if (l->csv) {
		double s = (double)c->stats_interval_ns / 1e9;
		ev_timer_init(&l->stats_w, on_stats, s, s);
		l->stats_w.data = l;
		ev_timer_start(l->ev, &l->stats_w);
	}
	ev_timer_init(&l->flush_w, on_flush, 0.2, 0.2);
	l->flush_w.data = l;
	ev_timer_start(l->ev, &l->flush_w);
	return 0;
}

int sw_loop_run(struct sw_fabric *f, const struct sw_conf *c, char *err, size_t len)
{
	struct sw_loop l = { .fab = f, .conf = c, .tfd = -1, .start_ns = qp_now_ns() };
	int rc;

	signal(SIGPIPE, SIG_IGN);
	rc = setup(&l, err, len);
	if (!rc) {
		ev_run(l.ev, 0);
		sw_fabric_emit(f, qp_now_ns());   /* what is due now still leaves */
		refresh_kernel_drops(f);
		if (l.csv)
			sw_stats_csv_row(f, l.csv, qp_now_ns(), l.start_ns);
		sw_capture_flush(f->cap);
		if (c->stats_json_path)
			dump_json(&l);
	}
	if (l.csv)
		fclose(l.csv);
	if (l.tfd >= 0)
		close(l.tfd);
	if (l.ev)
		ev_loop_destroy(l.ev);
	free(l.io_w);
	free(l.ring);
	return rc;
}
