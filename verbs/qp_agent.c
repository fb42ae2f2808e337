/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Registration of connected QPs with the host's agent (qpaced) over its control socket
 * (qpace/ctl.h), for the QP layer (verbs/qp.c).
 *
 * - When: a QP is registered once connected: QPN, peer QPN, both IPv4 addresses (from the
 *   IPv4-mapped GIDs), the backend's UDP source port when it knows it, path MTU, link
 *   rate, base RTT, algorithm and parameters, receiver flag. qp_destroy unregisters it.
 *   The agent also drops every QP of a connection that closes, so a crash needs nothing.
 * - Off: agent_socket "", an in-process rate table (its embedded agent is fed directly), or
 *   rate_table "" (no table to read a rate from). A QP without IPv4 GIDs (InfiniBand) is
 *   not registered (one line).
 * - Never blocking a post: one non-blocking SEQPACKET connection per context. Requests go
 *   out without waiting; replies are read on later runs. Runs happen from qp_ctx_progress,
 *   posts and blocking waits, only when due (qp_agent_next_ns, which qp_ctx_deadline
 *   includes). Only qp_connect waits for its own reply, at most QP_AGENT_REPLY_WAIT_NS.
 * - No agent: one line "no agent at PATH: pacing at the fallback rate (...)", then quiet
 *   retries after 100 ms, doubling up to 1 s. The gate runs at its fallback rate (the QP
 *   has no slot) and never waits for the agent.
 * - Agent gone (EOF or an error on the socket; the kernel closes it when the agent dies):
 *   one line, every QP goes back to pending, retries as above. A new agent gets every QP
 *   registered again (one line); the gate maps the new agent's table by itself.
 * - A refused registration is logged with the agent's reason, once, and not retried until
 *   the next connection.
 * - STATS (tx bytes, retransmissions) for every registered QP each QP_AGENT_CHECK_NS when
 *   they changed: qpacectl and the metrics show them.
 * - TXSTATE (the PSN the QP's next posted packet takes, verbs/psn.h, and what enforces its
 *   rate) for every registered QP when either changed, at most once per the smallest base
 *   RTT of the context's QPs (QP_AGENT_TXSTATE_MIN_NS .. _MAX_NS): a post only moves the
 *   next run forward to that time (qp_agent_posted), so an idle QP costs no wakeups. The
 *   agent's HPCC takes its snd_nxt from it (qpace/agent.h). After a (re)registration the
 *   figure is sent again.
 * - Completions (qp_agent_sent, qp_agent_completed): what a backend's completions allow
 *   the agent to know of the transport. A signaled send WR's post time is kept (by wr_id,
 *   in posting order, QA_SIG_RING at most), and its successful completion gives an RTT
 *   sample, completion - post (the last piece's post: the gate hands pieces to the NIC
 *   when they may go, so this is the NIC's queue, the round trip of the message's last
 *   packet and the poll's lateness), and the bytes acknowledged (the message's). Both go
 *   as EVENTs (RTT, ACKED) at most once per the QP's base RTT (at least
 *   QP_AGENT_TXSTATE_MIN_NS): the latest sample, the bytes summed. A completion shows no
 *   PSN, no ECN echo, and neither NAKs nor timeouts (the NIC retransmits by itself; only
 *   a QP that gave up completes with an error): those reach the agent from the wire
 *   (qpaced --enforce, the tc programs) or not at all.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qp_agent.h"
#include "qpace/addr.h"
#include "qpace/ctl_client.h"
#include "qpace/errmsg.h"

enum qa_state {
	QA_OFF = 0,      /* not connected, or cannot be registered */
	QA_PENDING,      /* to send */
	QA_SENT,         /* REGISTER sent, reply awaited */
	QA_REGISTERED,
	QA_REFUSED,      /* the agent said no: not retried on this connection */
	QA_STATE_COUNT
};

static const char *const qa_state_names[QA_STATE_COUNT] = {
	[QA_OFF] = "off", [QA_PENDING] = "pending", [QA_SENT] = "pending",
	[QA_REGISTERED] = "registered", [QA_REFUSED] = "refused",
};

#define QA_SIG_RING 64               /* signaled send WRs awaiting their completion */

struct qp_agent_qp {
	struct agent_qp_reg reg;     /* the parameters; addresses filled at connect */
	enum qa_state state;
	uint16_t id;                 /* the REGISTER awaiting its reply */
	uint64_t tx_bytes, retx;     /* as last reported (STATS) */
	bool tx_sent;                /* a TXSTATE went to this agent: the two below */
	uint32_t tx_psn;
	uint8_t tx_enforce;
	/* completions: signaled WRs in posting order, what to report, when */
	struct { uint64_t wr_id, bytes; qp_time_ns post_ns; } sig[QA_SIG_RING];
	uint32_t sig_head, sig_n;
	uint64_t acked_bytes;        /* since the last ACKED event */
	qp_time_ns rtt_ns;           /* the latest sample, 0 once reported */
	qp_time_ns ev_ns;            /* the next EVENTs may go at */
};

struct qp_agent {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct agent_qp_reg tmpl;    /* the context's parameters */
	int fd;                      /* -1: not connected */
	uint16_t next_id;
	qp_time_ns next_ns;          /* qp_agent_run is due */
	qp_time_ns retry_ns;         /* next connect attempt */
	qp_time_ns backoff_ns;
	qp_time_ns stats_ns;         /* next STATS round */
	qp_time_ns txstate_ns;       /* next TXSTATE round may run at */
	bool said_absent;            /* the "no agent" / "gone" line was logged */
	bool said_no_ip;
};

static void say(struct qp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct qp_ctx *ctx, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ctx->rates.log(ctx->rates.log_arg, line);
}

/* ---- parameters ---- */

/* Apply the non-zero fields of @p over @r; -EINVAL naming the field and its range. */
static int reg_apply(struct agent_qp_reg *r, const struct qp_agent_params *p, char *err,
		     size_t errlen)
{
	struct agent_qp_reg t = *r;
	struct ctl_msg m = { .type = CTL_T_REGISTER };
	uint8_t buf[CTL_MAX_LEN];
	size_t la = p->algo ? strlen(p->algo) : 0, lp = p->params ? strlen(p->params) : 0;

	if (p->link_bps && (p->link_bps < AGENT_MIN_LINK_BPS || p->link_bps > AGENT_MAX_LINK_BPS))
		return qp_errmsg(-EINVAL, err, errlen, "agent: link_bps %llu, accepted %llu..%llu "
				 "(0 = default)", (unsigned long long)p->link_bps,
				 (unsigned long long)AGENT_MIN_LINK_BPS,
				 (unsigned long long)AGENT_MAX_LINK_BPS);
	if (p->base_rtt_ns && (p->base_rtt_ns < AGENT_MIN_RTT_NS ||
			       p->base_rtt_ns > AGENT_MAX_RTT_NS))
		return qp_errmsg(-EINVAL, err, errlen, "agent: base_rtt_ns %llu, accepted %llu..%llu "
				 "(0 = default)", (unsigned long long)p->base_rtt_ns,
				 (unsigned long long)AGENT_MIN_RTT_NS,
				 (unsigned long long)AGENT_MAX_RTT_NS);
	if (la >= sizeof(t.algo) || lp >= sizeof(t.params))
		return qp_errmsg(-EINVAL, err, errlen, "agent: algorithm name of %zu / parameters "
				 "of %zu characters, at most %zu / %zu", la, lp,
				 sizeof(t.algo) - 1, sizeof(t.params) - 1);
	t.link_bps = p->link_bps ? p->link_bps : t.link_bps;
	t.base_rtt_ns = p->base_rtt_ns ? p->base_rtt_ns : t.base_rtt_ns;
	if (la || lp) {
		/* A QP's algorithm comes with its own parameters, never another's. */
		memcpy(t.algo, la ? p->algo : "", la + 1);
		memcpy(t.params, lp ? p->params : "", lp + 1);
	}
	if (p->receiver)
		t.flags |= AGENT_QP_RECEIVER;
	/* The protocol's own rules decide what a name and parameters may hold. */
	m.u.reg = t;
	m.u.reg.local_ip = m.u.reg.peer_ip = 1;
	m.u.reg.mtu_bytes = AGENT_MIN_MTU;
	if (ctl_encode(buf, sizeof(buf), &m) < 0)
		return qp_errmsg(-EINVAL, err, errlen, "agent: algorithm \"%s\" or parameters \"%s\":"
				 " a name of a-z 0-9 _ -, parameters printable without spaces",
				 t.algo, t.params);
	*r = t;
	return 0;
}

int qp_agent_open(struct qp_ctx *ctx, const struct qp_ctx_attr *attr, char *err, size_t errlen)
{
	const char *path;
	struct qp_agent *a;
	int rc;

	if ((attr->agent_socket && !*attr->agent_socket) || attr->rate_table_mem ||
	    (attr->rate_table && !*attr->rate_table))
		return 0;
	path = ctl_client_path(attr->agent_socket);
	a = calloc(1, sizeof(*a));
	if (!a)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	if (strlen(path) >= sizeof(a->path)) {
		free(a);
		return qp_errmsg(-ENAMETOOLONG, err, errlen, "agent socket %s: longer than %zu",
				 path, sizeof(a->path) - 1);
	}
	strcpy(a->path, path);
	a->fd = -1;
	a->tmpl.link_bps = QP_AGENT_DEF_LINK_BPS;
	a->tmpl.base_rtt_ns = QP_AGENT_DEF_BASE_RTT_NS;
	rc = reg_apply(&a->tmpl, &attr->agent, err, errlen);
	if (rc) {
		free(a);
		return rc;
	}
	a->backoff_ns = QP_AGENT_RETRY_MIN_NS;
	a->next_ns = QP_TIME_NEVER;
	ctx->agent = a;
	return 0;
}

void qp_agent_close(struct qp_ctx *ctx)
{
	if (!ctx->agent)
		return;
	if (ctx->agent->fd >= 0)
		close(ctx->agent->fd);
	free(ctx->agent);
	ctx->agent = NULL;
}

int qp_agent_qp_init(struct qp *qp, char *err, size_t errlen)
{
	struct qp_agent_qp *q;
	int rc;

	if (!qp->ctx->agent)
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	q->reg = qp->ctx->agent->tmpl;
	rc = reg_apply(&q->reg, &qp->attr.agent, err, errlen);
	if (rc) {
		free(q);
		return rc;
	}
	/* The caller's strings are not kept. */
	qp->attr.agent.algo = qp->attr.agent.params = NULL;
	qp->agent = q;
	return 0;
}

/* ---- the registration message ---- */

static uint32_t gid_ipv4(const uint8_t gid[16])
{
	uint32_t ip;

	return qp_ipv6_v4mapped(gid, &ip) ? ip : 0;
}

bool qp_agent_reg_build(const struct qp *qp, struct agent_qp_reg *out)
{
	struct agent_qp_reg r = qp->agent ? qp->agent->reg : (struct agent_qp_reg){
		.link_bps = QP_AGENT_DEF_LINK_BPS, .base_rtt_ns = QP_AGENT_DEF_BASE_RTT_NS };

	r.qpn = qp->qpn;
	r.peer_qpn = qp->remote.qpn;
	r.local_ip = gid_ipv4(qp->local.gid);
	r.peer_ip = gid_ipv4(qp->remote.gid);
	r.sport = qp->ctx->ops->udp_sport(qp);
	r.mtu_bytes = qp->path_mtu_bytes ? qp->path_mtu_bytes : qp->local.mtu_bytes;
	if (!r.local_ip || !r.peer_ip)
		return false;
	*out = r;
	return true;
}

/* ---- the connection ---- */

static int agent_connect(struct qp_agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, a->path, strlen(a->path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	a->fd = fd;
	return 0;
}

/* Every QP that was (being) registered goes back to pending. */
static void agent_lost(struct qp_ctx *ctx, qp_time_ns now, const char *why)
{
	struct qp_agent *a = ctx->agent;

	close(a->fd);
	a->fd = -1;
	for (struct qp *qp = ctx->qps; qp; qp = qp->next)
		if (qp->agent && qp->agent->state != QA_OFF)
			qp->agent->state = QA_PENDING;
	say(ctx, "agent at %s gone (%s): pacing at the fallback rate; registering again when "
	    "it is back", a->path, why);
	a->said_absent = true;
	a->backoff_ns = QP_AGENT_RETRY_MIN_NS;
	a->retry_ns = now + a->backoff_ns;
}

static int agent_send(struct qp_agent *a, struct ctl_msg *m)
{
	uint8_t buf[CTL_MAX_LEN];
	int n;

	m->id = ++a->next_id ? a->next_id : ++a->next_id;  /* 0 is never an id */
	n = ctl_encode(buf, sizeof(buf), m);
	if (n < 0)
		return n;
	return send(a->fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n ? 0 : -errno;
}

static struct qp *qp_by_reply(struct qp_ctx *ctx, uint16_t id)
{
	for (struct qp *qp = ctx->qps; qp; qp = qp->next)
		if (qp->agent && qp->agent->state == QA_SENT && qp->agent->id == id)
			return qp;
	return NULL;
}

static void on_reply(struct qp_ctx *ctx, const struct ctl_msg *m)
{
	struct qp *qp = qp_by_reply(ctx, m->id);

	if (m->type != CTL_T_REPLY || !qp)
		return;  /* an UNREGISTER's reply, or a QP destroyed meanwhile */
	if (m->u.reply.status == 0) {
		qp->agent->state = QA_REGISTERED;
		qp->agent->tx_sent = false;  /* this agent has not heard it */
		qp_agent_posted(ctx);
		return;
	}
	qp->agent->state = QA_REFUSED;
	say(ctx, "qp 0x%06x: the agent at %s refused the registration: %s", qp->qpn,
	    ctx->agent->path, m->u.reply.text);
}

/* Read what the agent sent; false when the connection is gone. */
static bool read_replies(struct qp_ctx *ctx, qp_time_ns now)
{
	struct qp_agent *a = ctx->agent;
	uint8_t buf[CTL_MAX_LEN + 1];
	char err[200];

	for (;;) {
		ssize_t n = recv(a->fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct ctl_msg m;

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			agent_lost(ctx, now, n == 0 ? "connection closed" : strerror(errno));
			return false;
		}
		if (ctl_decode(&m, buf, (size_t)n, err, sizeof(err)) == 0)
			on_reply(ctx, &m);
	}
}

static unsigned count_state(const struct qp_ctx *ctx, enum qa_state s)
{
	unsigned n = 0;

	for (const struct qp *qp = ctx->qps; qp; qp = qp->next)
		n += qp->agent && qp->agent->state == s;
	return n;
}

/* (Re)connect when due; false while there is no agent. */
static bool ensure_connected(struct qp_ctx *ctx, qp_time_ns now)
{
	struct qp_agent *a = ctx->agent;
	int rc;

	if (a->fd >= 0)
		return true;
	if (now < a->retry_ns)
		return false;
	rc = agent_connect(a);
	if (rc) {
		if (!a->said_absent)
			say(ctx, "no agent at %s: pacing at the fallback rate (%s)", a->path,
			    strerror(-rc));
		a->said_absent = true;
		a->retry_ns = now + a->backoff_ns;
		a->backoff_ns = a->backoff_ns * 2 < QP_AGENT_RETRY_MAX_NS ? a->backoff_ns * 2
									: QP_AGENT_RETRY_MAX_NS;
		return false;
	}
	if (a->said_absent)
		say(ctx, "agent at %s: registering %u QPs", a->path, count_state(ctx, QA_PENDING));
	a->said_absent = false;
	a->backoff_ns = QP_AGENT_RETRY_MIN_NS;
	a->stats_ns = now + QP_AGENT_CHECK_NS;
	return true;
}

/* REGISTER every pending QP; false when the connection broke. */
static bool send_pending(struct qp_ctx *ctx, qp_time_ns now)
{
	for (struct qp *qp = ctx->qps; qp; qp = qp->next) {
		struct qp_agent_qp *q = qp->agent;
		struct ctl_msg m = { .type = CTL_T_REGISTER };
		int rc;

		if (!q || q->state != QA_PENDING)
			continue;
		m.u.reg = q->reg;
		rc = agent_send(ctx->agent, &m);
		if (rc == -EAGAIN || rc == -EWOULDBLOCK)
			return true;  /* the socket is full: the rest on the next run */
		if (rc == -EINVAL || rc == -EMSGSIZE) {
			q->state = QA_REFUSED;  /* checked at create: cannot happen */
			continue;
		}
		if (rc) {
			agent_lost(ctx, now, strerror(-rc));
			return false;
		}
		q->state = QA_SENT;
		q->id = ctx->agent->next_id;
	}
	return true;
}

static void send_stats(struct qp_ctx *ctx)
{
	for (struct qp *qp = ctx->qps; qp; qp = qp->next) {
		struct qp_agent_qp *q = qp->agent;
		struct ctl_msg m = { .type = CTL_T_STATS };
		struct qp_stats st;

		if (!q || q->state != QA_REGISTERED)
			continue;
		qp_get_stats(qp, &st);
		if (st.tx_bytes == q->tx_bytes && st.retransmissions == q->retx)
			continue;
		m.u.stats = (struct ctl_stats){ qp->qpn, st.tx_bytes, st.retransmissions };
		if (agent_send(ctx->agent, &m))
			return;  /* full or broken: the next run sees it */
		q->tx_bytes = st.tx_bytes;
		q->retx = st.retransmissions;
	}
}

/* TXSTATE for every registered QP whose figures changed; returns the round's interval:
 * the smallest base RTT among them, within the bounds. */
static qp_time_ns send_txstate(struct qp_ctx *ctx)
{
	qp_time_ns every = QP_AGENT_TXSTATE_MAX_NS;

	for (struct qp *qp = ctx->qps; qp; qp = qp->next) {
		struct qp_agent_qp *q = qp->agent;
		struct ctl_msg m = { .type = CTL_T_TXSTATE };

		if (q && q->reg.base_rtt_ns < every)
			every = q->reg.base_rtt_ns;  /* of every QP: one registering soon too */
		if (!q || q->state != QA_REGISTERED)
			continue;
		if (q->tx_sent && q->tx_psn == qp->snd_psn && q->tx_enforce == qp->enforce.which)
			continue;
		m.u.txstate = (struct ctl_txstate){ .qpn = qp->qpn, .psn = qp->snd_psn,
						    .enforce = (uint8_t)qp->enforce.which };
		if (agent_send(ctx->agent, &m))
			break;  /* full or broken: the next run sees it */
		q->tx_sent = true;
		q->tx_psn = qp->snd_psn;
		q->tx_enforce = (uint8_t)qp->enforce.which;
	}
	return every < QP_AGENT_TXSTATE_MIN_NS ? QP_AGENT_TXSTATE_MIN_NS : every;
}

/* EVENTs for every registered QP with completions to report, each at most once per its
 * base RTT (at least QP_AGENT_TXSTATE_MIN_NS); the earliest a QP may next report. */
static qp_time_ns send_completions(struct qp_ctx *ctx, qp_time_ns now)
{
	qp_time_ns next = QP_TIME_NEVER;

	for (struct qp *qp = ctx->qps; qp; qp = qp->next) {
		struct qp_agent_qp *q = qp->agent;
		struct ctl_msg m = { .type = CTL_T_EVENT };
		qp_time_ns every;

		if (!q || q->state != QA_REGISTERED || (!q->acked_bytes && !q->rtt_ns))
			continue;
		if (now < q->ev_ns) {
			next = q->ev_ns < next ? q->ev_ns : next;
			continue;
		}
		if (q->acked_bytes) {
			m.u.event = (struct ctl_event){ qp->qpn, CTL_EV_ACKED, q->acked_bytes };
			if (agent_send(ctx->agent, &m))
				break;   /* full or broken: the next run sees it */
			q->acked_bytes = 0;
		}
		if (q->rtt_ns) {
			m.u.event = (struct ctl_event){ qp->qpn, CTL_EV_RTT, q->rtt_ns };
			if (agent_send(ctx->agent, &m))
				break;
			q->rtt_ns = 0;
		}
		every = q->reg.base_rtt_ns > QP_AGENT_TXSTATE_MIN_NS ? q->reg.base_rtt_ns
								     : QP_AGENT_TXSTATE_MIN_NS;
		q->ev_ns = now + every;
	}
	return next;
}

void qp_agent_sent(struct qp *qp, uint64_t wr_id, uint64_t bytes)
{
	struct qp_agent_qp *q = qp->agent;
	uint32_t i;

	if (!q || q->state != QA_REGISTERED)
		return;
	if (q->sig_n == QA_SIG_RING) {   /* the oldest never completed in time: dropped */
		q->sig_head = (q->sig_head + 1) % QA_SIG_RING;
		q->sig_n--;
	}
	i = (q->sig_head + q->sig_n++) % QA_SIG_RING;
	q->sig[i].wr_id = wr_id;
	q->sig[i].bytes = bytes;
	q->sig[i].post_ns = qp_ctx_now(qp->ctx);
}

void qp_agent_completed(struct qp *qp, uint64_t wr_id)
{
	struct qp_agent_qp *q = qp->agent;
	struct qp_agent *a = qp->ctx->agent;
	qp_time_ns now;

	if (!q || !q->sig_n)
		return;
	/* the oldest of that wr_id: RC completes a QP's send WRs in posting order */
	for (uint32_t k = 0; k < q->sig_n; k++) {
		uint32_t i = (q->sig_head + k) % QA_SIG_RING;

		if (q->sig[i].wr_id != wr_id)
			continue;
		now = qp_ctx_now(qp->ctx);
		q->acked_bytes += q->sig[i].bytes;
		if (now > q->sig[i].post_ns)
			q->rtt_ns = now - q->sig[i].post_ns;
		q->sig_head = (i + 1) % QA_SIG_RING;
		q->sig_n -= k + 1;
		if (a && a->fd >= 0) {
			qp_time_ns due = q->ev_ns > now ? q->ev_ns : now;
			if (due < a->next_ns)
				a->next_ns = due;
		}
		return;
	}
}

void qp_agent_posted(struct qp_ctx *ctx)
{
	struct qp_agent *a = ctx->agent;

	if (a && a->fd >= 0 && a->txstate_ns < a->next_ns)
		a->next_ns = a->txstate_ns;
}

qp_time_ns qp_agent_next_ns(const struct qp_ctx *ctx)
{
	return ctx->agent ? ctx->agent->next_ns : QP_TIME_NEVER;
}

void qp_agent_run(struct qp_ctx *ctx, qp_time_ns now)
{
	struct qp_agent *a = ctx->agent;
	qp_time_ns ev_next;

	if (!a)
		return;
	if (a->fd >= 0)
		(void)read_replies(ctx, now);  /* lost: reconnected below when due */
	if (a->fd < 0 && !count_state(ctx, QA_PENDING)) {
		a->next_ns = QP_TIME_NEVER;  /* nothing to register: no reason to connect */
		return;
	}
	if (!ensure_connected(ctx, now)) {
		a->next_ns = a->retry_ns;
		return;
	}
	if (!send_pending(ctx, now)) {
		a->next_ns = a->retry_ns;
		return;
	}
	if (now >= a->stats_ns) {
		send_stats(ctx);
		a->stats_ns = now + QP_AGENT_CHECK_NS;
	}
	if (now >= a->txstate_ns)
		a->txstate_ns = now + send_txstate(ctx);
	ev_next = send_completions(ctx, now);
	/* Pending work (a full socket, a reply awaited) is looked at again soon. */
	a->next_ns = now + (count_state(ctx, QA_PENDING) || count_state(ctx, QA_SENT)
			    ? QP_AGENT_RETRY_MIN_NS / 10 : QP_AGENT_CHECK_NS);
	if (ev_next < a->next_ns)
		a->next_ns = ev_next;
}

/* ---- QP lifecycle ---- */

void qp_agent_qp_connected(struct qp *qp)
{
	struct qp_ctx *ctx = qp->ctx;
	struct qp_agent_qp *q = qp->agent;
	struct qp_agent *a = ctx->agent;
	qp_time_ns now, until;

	if (!q)
		return;   /* no registration (an in-process table): no clock read either */
	now = qp_now_ns();
	until = now + QP_AGENT_REPLY_WAIT_NS;
	if (!qp_agent_reg_build(qp, &q->reg)) {
		if (!a->said_no_ip)
			say(ctx, "qp 0x%06x: not registered with the agent: its GIDs carry no IPv4 "
			    "address (RoCEv2 only)", qp->qpn);
		a->said_no_ip = true;
		return;
	}
	q->state = QA_PENDING;
	a->retry_ns = a->fd < 0 ? 0 : a->retry_ns;  /* a new QP: try the agent now */
	qp_agent_run(ctx, now);
	while (q->state == QA_SENT && a->fd >= 0 && (now = qp_now_ns()) < until) {
		struct pollfd p = { a->fd, POLLIN, 0 };

		if (poll(&p, 1, (int)((until - now) / QP_NS_PER_MS) + 1) > 0)
			qp_agent_run(ctx, qp_now_ns());
	}
}

void qp_agent_qp_fini(struct qp *qp)
{
	struct qp_agent_qp *q = qp->agent;
	struct qp_agent *a = qp->ctx->agent;

	if (!q)
		return;
	if (a && a->fd >= 0 && (q->state == QA_SENT || q->state == QA_REGISTERED)) {
		struct ctl_msg m = { .type = CTL_T_UNREGISTER, .u.qpn = qp->qpn };

		(void)agent_send(a, &m);  /* the reply is not awaited */
	}
	free(q);
	qp->agent = NULL;
}

const char *qp_agent_state(const struct qp *qp)
{
	return qa_state_names[qp->agent ? qp->agent->state : QA_OFF];
}
