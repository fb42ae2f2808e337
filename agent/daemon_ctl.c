/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's control socket (protocol in qpace/ctl.h): a unix SOCK_SEQPACKET listener, one
 * watcher per connection, a handler per request type (the server shape of
 * qpace/ctl_server.h), a bounded output queue per connection, and reaping: a connection's
 * QPs go when it closes, or when its process (from SO_PEERCRED) no longer exists. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "qpace/ctl_server.h"
#include "qpace/errmsg.h"
#include "daemon_priv.h"

#define CTL_OUTQ_MAX (32u << 20)   /* a LIST of 65536 QPs is ~23 MB */
#define CTL_READS 64               /* requests per wakeup per connection */

struct qpaced_conn {
	struct qpaced_conn *next;
	struct qpaced *d;
	ev_io io;
	int fd;
	uint32_t id;
	pid_t pid;
	unsigned qps;                  /* registered through this connection */
	uint8_t *q;                    /* records: u16 length, message */
	size_t qlen, qcap, qoff;
};

/* ---- connections ---- */

static void conn_close(struct qpaced_conn *c, const char *why)
{
	struct qpaced *d = c->d;
	struct qpaced_conn **pp;
	unsigned n = 0;

	if (c->qps)
		n = agent_unregister_owner(d->agent, c->id, qp_now_ns());
	if (n)
		qpaced_log(AGENT_LOG_INFO, "pid %d %s: %u QPs unregistered", (int)c->pid, why, n);
	ev_io_stop(d->loop, &c->io);
	close(c->fd);
	for (pp = &d->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	d->nconns--;
	free(c->q);
	free(c);
	qpaced_after(d);
}

/* Send queued records; false when the connection was closed. */
static bool conn_flush(struct qpaced_conn *c)
{
	while (c->qoff < c->qlen) {
		size_t len = (size_t)c->q[c->qoff] << 8 | c->q[c->qoff + 1];
		ssize_t n = send(c->fd, c->q + c->qoff + 2, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_stop(c->d->loop, &c->io);
			ev_io_set(&c->io, c->fd, EV_READ | EV_WRITE);
			ev_io_start(c->d->loop, &c->io);
			return true;
		}
		if (n < 0) {
			conn_close(c, "went away");
			return false;
		}
		c->qoff += 2 + len;
	}
	c->qlen = c->qoff = 0;
	if (c->io.events & EV_WRITE) {
		ev_io_stop(c->d->loop, &c->io);
		ev_io_set(&c->io, c->fd, EV_READ);
		ev_io_start(c->d->loop, &c->io);
	}
	return true;
}

/* ctl_out's send: one encoded message onto the connection's queue. */
static void conn_queue(void *io, const uint8_t *msg, size_t n)
{
	struct qpaced_conn *c = io;

	if (c->qlen + 2 + n > c->qcap) {
		size_t cap = c->qcap ? c->qcap : 8192;
		uint8_t *q;

		while (cap < c->qlen + 2 + n)
			cap *= 2;
		q = cap <= CTL_OUTQ_MAX ? realloc(c->q, cap) : NULL;
		if (!q) {
			agent_note(c->d->agent, AGENT_C_CTL_REJECTED, "pid %d: control output queue "
				   "over %u bytes, replies dropped", (int)c->pid, CTL_OUTQ_MAX);
			return;
		}
		c->q = q;
		c->qcap = cap;
	}
	c->q[c->qlen] = (uint8_t)(n >> 8);
	c->q[c->qlen + 1] = (uint8_t)n;
	memcpy(c->q + c->qlen + 2, msg, n);
	c->qlen += 2 + n;
}

/* ---- requests ---- */

static int owned(struct qpaced_conn *c, uint32_t qpn, char *err, size_t errlen)
{
	struct agent_qp_view v;

	if (agent_qp_view(c->d->agent, qpn, &v))
		return qp_errmsg(-ENOENT, err, errlen, "no qp 0x%06x registered", qpn);
	if (v.owner != c->id)
		return qp_errmsg(-EPERM, err, errlen, "qp 0x%06x was registered by pid %u, not "
				 "by this connection", qpn, v.pid);
	return 0;
}

static void req_register(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	char err[CTL_TEXT_MAX] = "";
	int rc = agent_register(c->d->agent, &m->u.reg, c->id, (uint32_t)c->pid, qp_now_ns(),
				err, sizeof(err));

	c->qps += rc == 0;
	ctl_out_reply(o, rc, 0, err);
}

static void req_unregister(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	char err[CTL_TEXT_MAX] = "";
	int rc = owned(c, m->u.qpn, err, sizeof(err));

	if (!rc)
		rc = agent_unregister(c->d->agent, m->u.qpn, qp_now_ns());
	ctl_out_reply(o, rc, 0, err);
}

static void req_event(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	const struct ctl_event *e = &m->u.event;
	struct cc_event ev = { .type = (enum cc_event_type)e->type };
	char err[CTL_TEXT_MAX];

	(void)o;                       /* never answered */
	if (owned(c, e->qpn, err, sizeof(err))) {
		agent_note(c->d->agent, AGENT_C_CTL_REJECTED, "event from pid %d: %s", (int)c->pid,
			   err);
		return;
	}
	/* a program's completions (verbs/qp_agent.c): transport events, counted and given to
	 * the QP's algorithm when it declares them (agent_qp_transport) */
	if (ev.type == CC_EV_RTT || ev.type == CC_EV_ACKED) {
		struct agent_tp_event t = { .type = ev.type == CC_EV_RTT ? AGENT_TP_RTT
									 : AGENT_TP_ACK };

		if (ev.type == CC_EV_RTT)
			t.rtt_ns = e->value;
		else
			t.bytes = e->value;
		agent_qp_transport(c->d->agent, e->qpn, &t, qp_now_ns());
		return;
	}
	if (ev.type == CC_EV_FLOW_START)
		ev.u.flow_bytes = e->value;
	agent_qp_event(c->d->agent, e->qpn, &ev, qp_now_ns());
}

static void req_stats(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	char err[CTL_TEXT_MAX];

	(void)o;                       /* never answered */
	if (owned(c, m->u.stats.qpn, err, sizeof(err))) {
		agent_note(c->d->agent, AGENT_C_CTL_REJECTED, "stats from pid %d: %s", (int)c->pid,
			   err);
		return;
	}
	agent_qp_stats(c->d->agent, m->u.stats.qpn, m->u.stats.tx_bytes,
		       m->u.stats.retransmissions);
}

static void req_txstate(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	char err[CTL_TEXT_MAX];

	(void)o;                       /* never answered */
	if (owned(c, m->u.txstate.qpn, err, sizeof(err))) {
		agent_note(c->d->agent, AGENT_C_CTL_REJECTED, "txstate from pid %d: %s",
			   (int)c->pid, err);
		return;
	}
	agent_qp_txstate(c->d->agent, &m->u.txstate);
}

static void send_view(struct ctl_out *o, const struct agent_qp_view *v)
{
	struct ctl_msg q = { .type = CTL_T_QP };

	q.u.qp = *v;
	ctl_out_send(o, &q);
}

static void req_list(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	uint32_t n = 0;

	(void)m;
	for (uint32_t i = 0; i < agent_max_qps(c->d->agent); i++) {
		struct agent_qp_view v;

		if (agent_qp_view_at(c->d->agent, i, &v) == 0) {
			send_view(o, &v);
			n++;
		}
	}
	ctl_out_reply(o, 0, n, "");
}

static void req_show(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	struct agent_qp_view v;
	char err[CTL_TEXT_MAX] = "";

	if (agent_qp_view(c->d->agent, m->u.qpn, &v)) {
		snprintf(err, sizeof(err), "no qp 0x%06x registered", m->u.qpn);
		ctl_out_reply(o, -ENOENT, 0, err);
		return;
	}
	send_view(o, &v);
	ctl_out_reply(o, 0, 1, "");
}

static void req_set(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	const struct ctl_set *s = &m->u.set;
	char err[CTL_TEXT_MAX] = "";
	int rc;

	if (s->what == CTL_SET_RATE)
		rc = agent_set_rate(c->d->agent, s->qpn, s->rate_bps, (uint32_t)c->pid,
				    qp_now_ns(), err, sizeof(err));
	else
		rc = agent_set_algo(c->d->agent, s->qpn, s->algo, s->params, (uint32_t)c->pid,
				    qp_now_ns(), err, sizeof(err));
	ctl_out_reply(o, rc, 0, err);
}

static void req_status(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct qpaced_conn *c = ctx;
	struct ctl_msg a = { .type = CTL_T_AGENT };

	(void)m;
	qpaced_status(c->d, &a.u.agent);
	ctl_out_send(o, &a);
	ctl_out_reply(o, 0, 1, "");
}

/* ctl_server's report of a message that does not decode or is no request. */
static void req_malformed(void *ctx, const char *why)
{
	struct qpaced_conn *c = ctx;

	agent_note(c->d->agent, AGENT_C_CTL_MALFORMED, "pid %d: %s", (int)c->pid, why);
}

static const struct ctl_handlers handlers = {
	.fn = {
		[CTL_T_REGISTER] = req_register,
		[CTL_T_UNREGISTER] = req_unregister,
		[CTL_T_EVENT] = req_event,
		[CTL_T_STATS] = req_stats,
		[CTL_T_LIST] = req_list,
		[CTL_T_SHOW] = req_show,
		[CTL_T_SET] = req_set,
		[CTL_T_STATUS] = req_status,
		[CTL_T_TXSTATE] = req_txstate,
	},
	.malformed = req_malformed,
};

static void conn_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced_conn *c = w->data;
	struct ctl_out out = { .send = conn_queue, .io = c };
	int rc;

	(void)loop;
	if ((revents & EV_WRITE) && !conn_flush(c))
		return;
	if (!(revents & EV_READ))
		return;
	rc = ctl_serve(c->fd, CTL_READS, &handlers, c, &out);
	if (rc) {
		conn_close(c, rc > 0 ? "closed its connection" : "lost its connection");
		return;
	}
	if (conn_flush(c))
		qpaced_after(c->d);
}

static void ctl_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced *d = w->data;

	(void)revents;
	for (;;) {
		int fd = accept4(d->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct qpaced_conn *c;
		struct ucred cred = { 0 };
		socklen_t cl = sizeof(cred);

		if (fd < 0)
			return;
		c = d->nconns < QPACED_MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			agent_note(d->agent, AGENT_C_CTL_REJECTED, "control connection refused: %u "
				   "connections open (the limit)", d->nconns);
			close(fd);
			continue;
		}
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
		*c = (struct qpaced_conn){ .next = d->conns, .d = d, .fd = fd,
					   .id = ++d->next_conn_id ? d->next_conn_id
								   : ++d->next_conn_id,
					   .pid = cred.pid };
		ev_io_init(&c->io, conn_ready, fd, EV_READ);
		c->io.data = c;
		ev_io_start(loop, &c->io);
		d->conns = c;
		d->nconns++;
	}
}

void qpaced_ctl_reap_dead(struct qpaced *d)
{
	struct qpaced_conn *c = d->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->qps && c->pid > 0 && kill(c->pid, 0) < 0 && errno == ESRCH)
			conn_close(c, "no longer exists");
	}
}

/* ---- the listening socket ---- */

static int ctl_bind(struct qpaced *d, struct sockaddr_un *sa, char *err, size_t errlen)
{
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	mode_t old;
	int rc;

	/* a socket file left by a dead agent is removed; a live agent's is not taken over */
	if (probe >= 0 && connect(probe, (struct sockaddr *)sa, sizeof(*sa)) == 0) {
		close(probe);
		return qp_errmsg(-EADDRINUSE, err, errlen, "control socket %s: another qpaced is "
				 "running there (use --socket for a second one)", sa->sun_path);
	}
	if (probe >= 0)
		close(probe);
	unlink(sa->sun_path);
	old = umask(0117);
	rc = bind(d->ctl_fd, (struct sockaddr *)sa, sizeof(*sa));
	umask(old);
	if (rc < 0)
		return qp_errmsg(-errno, err, errlen, "control socket %s: bind: %s%s", sa->sun_path,
				 strerror(errno), errno == EACCES || errno == ENOENT
				 ? " (run as root, or choose a writable --socket path)" : "");
	d->ctl_bound = true;
	chmod(sa->sun_path, 0660);
	return 0;
}

int qpaced_ctl_open(struct qpaced *d, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	int rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->cfg.socket);
	snprintf(dir, sizeof(dir), "%s", d->cfg.socket);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) == 0)
			qpaced_log(AGENT_LOG_INFO, "created %s", dir);
	}
	d->ctl_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->ctl_fd < 0)
		return qp_errmsg(-errno, err, errlen, "control socket: %s", strerror(errno));
	if ((rc = ctl_bind(d, &sa, err, errlen)))
		return rc;
	if (listen(d->ctl_fd, 64) < 0)
		return qp_errmsg(-errno, err, errlen, "control socket %s: listen: %s", sa.sun_path,
				 strerror(errno));
	ev_io_init(&d->ctl_io, ctl_accept, d->ctl_fd, EV_READ);
	d->ctl_io.data = d;
	ev_io_start(d->loop, &d->ctl_io);
	return 0;
}

void qpaced_ctl_close(struct qpaced *d)
{
	while (d->conns)
		conn_close(d->conns, "was disconnected: the agent stops");
	if (d->ctl_fd >= 0) {
		ev_io_stop(d->loop, &d->ctl_io);
		close(d->ctl_fd);
		d->ctl_fd = -1;
	}
	if (d->ctl_bound)
		unlink(d->cfg.socket);
}
