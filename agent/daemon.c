/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's loop: the feedback socket, the core's timers, heartbeat, signals; open and close.
 * The control socket is in daemon_ctl.c, the metrics endpoint in daemon_http.c.
 *
 * Event-loop choice: libev's default backend (epoll here) for sockets, and every deadline of
 * the core on one timerfd (qpace/evtimer.h), because epoll_wait's timeout cannot time below
 * a millisecond. Each callback reads the clock once and passes it down.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/ctl.h"
#include "qpace/errmsg.h"
#include "qpace/keyfile.h"
#include "daemon_priv.h"

#define FB_RCVBUF_BYTES (4 << 20)
#define FB_ROUNDS 16             /* recvmmsg batches per wakeup before other watchers run */

void qpaced_log(enum agent_log_kind kind, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "qpaced: %s", kind == AGENT_LOG_WARN ? "warning: " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void core_log(void *arg, enum agent_log_kind kind, const char *line)
{
	(void)arg;
	qpaced_log(kind, "%s", line);
}

/* ---- feedback: receive a batch, feed the core, send what it queued ---- */

static void fb_flush(struct qpaced *d)
{
	struct mmsghdr m[QPACED_BATCH];
	struct iovec iov[QPACED_BATCH];
	struct sockaddr_in sa[QPACED_BATCH];
	unsigned n;

	while ((n = agent_tx_take(d->agent, d->tx, QPACED_BATCH))) {
		int sent;

		for (unsigned i = 0; i < n; i++) {
			sa[i] = qp_sockaddr_in(d->tx[i].dst_ip, d->tx[i].dst_port);
			iov[i] = (struct iovec){ d->tx[i].buf, d->tx[i].len };
			m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &sa[i],
							      .msg_namelen = sizeof(sa[i]),
							      .msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		sent = sendmmsg(d->fb_fd, m, n, MSG_DONTWAIT);
		if (sent < (int)n) {
			unsigned lost = n - (unsigned)(sent < 0 ? 0 : sent);

			agent_count(d->agent, AGENT_C_TX_DROPPED, lost - 1);
			agent_note(d->agent, AGENT_C_TX_DROPPED, "sendmmsg: %s: %u datagrams dropped",
				   sent < 0 ? strerror(errno) : "partial send", lost);
		}
	}
}

void qpaced_after(struct qpaced *d)
{
	qp_time_ns next;

	fb_flush(d);
	qpaced_tc_sync(d);
	/* An earlier wake than needed is harmless (the poll finds nothing); a later one is not:
	 * re-arm only when the deadline moved earlier. The timer callback re-arms exactly. */
	next = agent_next_ns(d->agent);
	if (next < d->timer.armed_ns)
		qp_evtimer_arm(&d->timer, next);
}

static void fb_cmsgs(struct qpaced *d, struct msghdr *h, const struct timespec **ts)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_TIMESTAMPNS)
			*ts = (const struct timespec *)(void *)CMSG_DATA(c);
		if (c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t drops, delta;

			memcpy(&drops, CMSG_DATA(c), sizeof(drops));
			delta = drops - d->rx_drops;
			if (delta) {
				d->rx_drops = drops;
				agent_count(d->agent, AGENT_C_FB_KERNEL_DROPS, delta - 1);
				agent_note(d->agent, AGENT_C_FB_KERNEL_DROPS, "the kernel dropped %u "
					   "feedback datagrams: the agent fell behind (socket buffer "
					   "full)", delta);
			}
		}
	}
}

static void fb_one(struct qpaced *d, unsigned i, qp_time_ns now)
{
	struct msghdr *h = &d->rx_msgs[i].msg_hdr;
	const struct sockaddr_in *sa = &d->rx_addr[i];
	size_t len = d->rx_msgs[i].msg_len;
	const struct timespec *ts = NULL;
	struct timespec rt;
	unsigned res;

	fb_cmsgs(d, h, &ts);
	if (h->msg_flags & MSG_TRUNC) {
		agent_count(d->agent, AGENT_C_FB_DATAGRAMS, 1);
		char from[QP_HOSTPORT_STRLEN];

		agent_note(d->agent, AGENT_C_FB_MAL_OVERSIZE, "feedback datagram from %s longer "
			   "than the agent reads (%d bytes at most)",
			   qp_sockaddr_fmt(sa, from, sizeof(from)), QPACED_RX_BUF);
		return;
	}
	res = agent_feed_datagram(d->agent, d->rx_buf[i], len, ntohl(sa->sin_addr.s_addr),
				  ntohs(sa->sin_port), now);
	if ((res & AGENT_RX_RATE) && ts && clock_gettime(CLOCK_REALTIME, &rt) == 0) {
		int64_t ns = (int64_t)(rt.tv_sec - ts->tv_sec) * (int64_t)QP_NS_PER_S +
			     (rt.tv_nsec - ts->tv_nsec);

		qp_hist_add(&d->delay, ns > 0 ? (uint64_t)ns : 0);
	}
}

/* Drain the feedback socket (bounded); returns how many datagrams were read. */
static unsigned fb_drain(struct qpaced *d)
{
	unsigned total = 0;

	for (int round = 0; round < FB_ROUNDS; round++) {
		qp_time_ns now;
		int n;

		for (unsigned i = 0; i < QPACED_BATCH; i++) {
			d->rx_msgs[i].msg_hdr.msg_controllen = sizeof(d->rx_ctrl[i]);
			d->rx_msgs[i].msg_hdr.msg_namelen = sizeof(d->rx_addr[i]);
			d->rx_msgs[i].msg_hdr.msg_flags = 0;
		}
		n = recvmmsg(d->fb_fd, d->rx_msgs, QPACED_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		total += (unsigned)n;
		now = qp_now_ns();
		for (int i = 0; i < n; i++)
			fb_one(d, (unsigned)i, now);
		if (agent_next_ns(d->agent) <= now)
			agent_poll(d->agent, now);
		fb_flush(d);
		if (n < QPACED_BATCH)
			break;
	}
	qpaced_after(d);
	return total;
}

static void fb_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced *d = w->data;

	(void)revents;
	if (fb_drain(d) && d->cfg.busy_poll_ns) {
		d->spin_until = qp_now_ns() + d->cfg.busy_poll_ns;
		if (!ev_is_active(&d->spin))
			ev_idle_start(loop, &d->spin);
	}
}

/* --busy-poll: while traffic is recent the loop never sleeps; each turn reads the socket
 * directly, so a datagram waits for no wakeup. */
static void fb_spin(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct qpaced *d = w->data;
	qp_time_ns now;

	(void)revents;
	if (fb_drain(d))
		d->spin_until = qp_now_ns() + d->cfg.busy_poll_ns;
	now = qp_now_ns();
	if (now >= d->spin_until)
		ev_idle_stop(loop, w);
}

static int fb_open(struct qpaced *d, char *err, size_t errlen)
{
	struct sockaddr_in sa = qp_sockaddr_in(d->cfg.fb_ip, d->cfg.fb_port);
	int one = 1, buf = FB_RCVBUF_BYTES;
	char at[QP_HOSTPORT_STRLEN];

	d->fb_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->fb_fd < 0)
		return qp_errmsg(-errno, err, errlen, "feedback socket: %s", strerror(errno));
	if (setsockopt(d->fb_fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
		setsockopt(d->fb_fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(d->fb_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	setsockopt(d->fb_fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(d->fb_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return qp_errmsg(-errno, err, errlen, "feedback socket: bind %s: %s",
				 qp_sockaddr_fmt(&sa, at, sizeof(at)), strerror(errno));
	for (unsigned i = 0; i < QPACED_BATCH; i++) {
		d->rx_iov[i] = (struct iovec){ d->rx_buf[i], sizeof(d->rx_buf[i]) };
		d->rx_msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &d->rx_addr[i], .msg_namelen = sizeof(d->rx_addr[i]),
			.msg_iov = &d->rx_iov[i], .msg_iovlen = 1, .msg_control = d->rx_ctrl[i],
			.msg_controllen = sizeof(d->rx_ctrl[i]),
		};
	}
	ev_io_init(&d->fb_io, fb_ready, d->fb_fd, EV_READ);
	d->fb_io.data = d;
	ev_io_start(d->loop, &d->fb_io);
	ev_idle_init(&d->spin, fb_spin);
	d->spin.data = d;
	return 0;
}

/* ---- timers, signals ---- */

static void on_deadline(struct qp_evtimer *t, qp_time_ns now)
{
	struct qpaced *d = t->data;

	agent_poll(d->agent, now);
	fb_flush(d);
	qp_evtimer_arm(&d->timer, agent_next_ns(d->agent));
}

static void on_heartbeat(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct qpaced *d = w->data;

	(void)loop;
	(void)revents;
	qp_ratetable_heartbeat(d->table, qp_now_ns());
}

static void on_reap(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	qpaced_ctl_reap_dead(w->data);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	qpaced_log(AGENT_LOG_INFO, "stopping on %s", strsignal(w->signum));
	ev_break(loop, EVBREAK_ALL);
}

void qpaced_status(struct qpaced *d, struct ctl_agent *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = (uint32_t)getpid();
	out->qps = agent_qp_count(d->agent);
	out->max_qps = agent_max_qps(d->agent);
	out->uptime_ns = qp_now_ns() - d->start_ns;
	memcpy(out->counters, agent_counters(d->agent), sizeof(out->counters));
	out->delay_samples = d->delay.count;
	out->delay_p50_ns = qp_hist_quantile(&d->delay, 0.5);
	out->delay_p99_ns = qp_hist_quantile(&d->delay, 0.99);
	out->delay_max_ns = d->delay.max;
}

static void warn_line(const char *line)
{
	qpaced_log(AGENT_LOG_WARN, "%s", line);
}

/* ---- open, run, close ---- */

int qpaced_open(const struct qpaced_config *c, struct qpaced **out, char *err, size_t errlen)
{
	struct qpaced *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	d->cfg = *c;
	d->cfg.agent.cc = d->cfg.cc;
	d->cfg.agent.cc_params = d->cfg.cc_params;
	d->cfg.agent.log = core_log;
	/* credit pacers' first-grant phases differ from run to run (and agent to agent) */
	if (getrandom(&d->cfg.agent.seed, sizeof(d->cfg.agent.seed), GRND_NONBLOCK) < 0)
		d->cfg.agent.seed = qp_now_ns() ^ (uint64_t)getpid();
	d->fb_fd = d->ctl_fd = d->http_fd = d->timer.fd = -1;
	d->start_ns = qp_now_ns();
	signal(SIGPIPE, SIG_IGN);
	if (c->key_file[0] && (rc = qp_keyfile_read(c->key_file, d->cfg.agent.key, warn_line,
						    err, errlen)))
		goto fail;
	d->cfg.agent.have_key = c->key_file[0] != 0;
	/* signed messages name this agent: a new id per run, a sequence from the wall clock */
	if (getrandom(&d->cfg.agent.sender_id, sizeof(d->cfg.agent.sender_id), GRND_NONBLOCK) < 0)
		d->cfg.agent.sender_id = (uint32_t)(qp_now_ns() ^ (uint64_t)getpid());
	d->cfg.agent.clock_offset_ns = qp_wall_offset_ns();
	d->loop = ev_loop_new(EVFLAG_AUTO);
	if (!d->loop) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "libev: no event loop");
		goto fail;
	}
	if ((rc = qp_ratetable_create(c->rate_table, d->cfg.agent.max_qps, &d->table, err,
				      errlen)))
		goto fail;
	if (qp_ratetable_set_fallback(d->table, c->fb_hold_ns, (uint32_t)c->fb_safe_permille)) {
		rc = qp_errmsg(-EINVAL, err, errlen, "fallback-hold %llu ns / fallback-safe %llu: "
			       "accepted 1ms..60s in whole ms / 1..1000",
			       (unsigned long long)c->fb_hold_ns,
			       (unsigned long long)c->fb_safe_permille);
		goto fail;
	}
	qp_ratetable_heartbeat(d->table, qp_now_ns());
	d->agent = agent_create(&d->cfg.agent, d->table, qp_now_ns(), err, errlen);
	if (!d->agent) {
		rc = -EINVAL;
		goto fail;
	}
	if ((rc = qp_evtimer_init(&d->timer, d->loop, on_deadline, err, errlen)) ||
	    (rc = fb_open(d, err, errlen)) || (rc = qpaced_ctl_open(d, err, errlen)) ||
	    (rc = qpaced_http_open(d, err, errlen)) || (rc = qpaced_tc_open(d, err, errlen)) ||
	    (rc = qpaced_ecn_open(d, err, errlen)))
		goto fail;
	d->timer.data = d;
	ev_timer_init(&d->heartbeat, on_heartbeat, 0, d->cfg.heartbeat_ns / 1e9);
	d->heartbeat.data = d;
	ev_timer_again(d->loop, &d->heartbeat);
	ev_timer_init(&d->reap, on_reap, 1.0, 1.0);
	d->reap.data = d;
	ev_timer_start(d->loop, &d->reap);
	ev_signal_init(&d->sig_term, on_signal, SIGTERM);
	ev_signal_init(&d->sig_int, on_signal, SIGINT);
	ev_signal_start(d->loop, &d->sig_term);
	ev_signal_start(d->loop, &d->sig_int);
	*out = d;
	return 0;
fail:
	qpaced_close(d);
	return rc;
}

int qpaced_run(struct qpaced *d)
{
	char fb[QP_HOSTPORT_STRLEN], m[QP_HOSTPORT_STRLEN];

	qp_hostport_fmt(d->cfg.fb_ip, d->cfg.fb_port, fb, sizeof(fb));
	qp_hostport_fmt(d->cfg.metrics_ip, d->cfg.metrics_port, m, sizeof(m));
	qpaced_log(AGENT_LOG_INFO, "pid %d: feedback %s, control %s, metrics %s, rate "
		   "table %s, cc %s, credits %s, auth %s (sender 0x%08x), max %u QPs",
		   (int)getpid(), fb, d->cfg.socket, d->cfg.metrics_port ? m : "off",
		   d->cfg.rate_table, d->cfg.cc, d->cfg.agent.credits ? "ia" : "off",
		   d->cfg.agent.have_key ? "siphash" : "off", d->cfg.agent.sender_id,
		   d->cfg.agent.max_qps);
	/* What paces an unmodified program's QP (docs/enforce.md): in observe mode, nothing. */
	if (d->cfg.enforce == QPACED_ENFORCE_OBSERVE)
		qpaced_log(AGENT_LOG_INFO, "--enforce observe: QPs of unmodified programs found on "
			   "the wire are measured, not paced: qpace's gate runs only in programs on "
			   "its QP API, and a NIC's per-QP rate limit (ibv_modify_qp_rate_limit) can "
			   "be set only by the process that owns the QP; --enforce tc paces them");
	ev_run(d->loop, 0);
	return 0;
}

void qpaced_close(struct qpaced *d)
{
	if (!d)
		return;
	qpaced_ecn_close(d);
	qpaced_tc_close(d);
	if (d->loop) {
		qpaced_ctl_close(d);
		qpaced_http_close(d);
		qp_evtimer_close(&d->timer, d->loop);
		if (d->fb_fd >= 0) {
			ev_io_stop(d->loop, &d->fb_io);
			ev_idle_stop(d->loop, &d->spin);
			close(d->fb_fd);
		}
		ev_timer_stop(d->loop, &d->heartbeat);
		ev_timer_stop(d->loop, &d->reap);
		ev_signal_stop(d->loop, &d->sig_term);
		ev_signal_stop(d->loop, &d->sig_int);
	}
	agent_destroy(d->agent);
	if (d->table) {
		/* gates see "no agent" at once, not after the stale time */
		qp_ratetable_heartbeat(d->table, 0);
		qp_ratetable_unlink(d->cfg.rate_table);
		qp_ratetable_close(d->table);
	}
	if (d->loop)
		ev_loop_destroy(d->loop);
	free(d);
}
