/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the control socket's stream and registration checks. The input is a
 * sequence of messages (u16 length, a connection, the bytes) sent over real SOCK_SEQPACKET
 * socket pairs, one per connection, and read by ctl_serve (qpace/ctl_server.h), as qpaced
 * reads them: oversized messages arrive cut (MSG_TRUNC), the rest are decoded and handed
 * to handlers that call the agent core's registration, ownership, override and event
 * checks (qpace/agent.h), the way agent/daemon_ctl.c does. fuzz_ctl covers the codec alone.
 *
 * Properties: no crash; every answer the server sends decodes; each request gets exactly
 * one REPLY (EVENT, STATS and TXSTATE none), a message too long or malformed one as well; the agent
 * holds at most its limit of QPs, every published rate within 1..link; a connection never
 * unregisters or reports for another's QP. `make fuzz` runs it. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "qpace/agent.h"
#include "qpace/ctl_server.h"
#include "qpace/ratetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_QPS 8u
#define NCONN 2

struct conn {
	struct agent *a;
	uint32_t id;                 /* the agent's owner id: 1, 2 */
	unsigned replies;            /* REPLY messages sent for the current request */
	qp_time_ns now;
};

static void deliver(void *io, const uint8_t *msg, size_t len)
{
	struct conn *c = io;
	struct ctl_msg m;
	char err[200];

	if (ctl_decode(&m, msg, len, err, sizeof(err)))
		abort();
	c->replies += m.type == CTL_T_REPLY;
}

static int owned(struct conn *c, uint32_t qpn)
{
	struct agent_qp_view v;

	if (agent_qp_view(c->a, qpn, &v))
		return -ENOENT;
	return v.owner == c->id ? 0 : -EPERM;
}

static void on_register(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	char err[CTL_TEXT_MAX] = "";
	int rc = agent_register(c->a, &m->u.reg, c->id, 4000 + c->id, c->now, err, sizeof(err));

	ctl_out_reply(o, rc, 0, err);
}

static void on_unregister(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	struct agent_qp_view before;
	bool had = agent_qp_view(c->a, m->u.qpn, &before) == 0;
	int rc = owned(c, m->u.qpn);

	if (!rc)
		rc = agent_unregister(c->a, m->u.qpn, c->now);
	if (had && before.owner != c->id && agent_qp_view(c->a, m->u.qpn, &before))
		abort();                                 /* another's QP went */
	ctl_out_reply(o, rc, 0, "");
}

static void on_event(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	struct cc_event ev = { .type = (enum cc_event_type)m->u.event.type };

	(void)o;
	if (owned(c, m->u.event.qpn))
		return;
	ev.u.rtt.rtt_ns = m->u.event.value;
	agent_qp_event(c->a, m->u.event.qpn, &ev, c->now);
}

static void on_stats(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;

	(void)o;
	if (!owned(c, m->u.stats.qpn))
		agent_qp_stats(c->a, m->u.stats.qpn, m->u.stats.tx_bytes,
			       m->u.stats.retransmissions);
}

static void on_txstate(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;

	(void)o;
	if (!owned(c, m->u.txstate.qpn) && agent_qp_txstate(c->a, &m->u.txstate))
		abort();   /* the decoder let through what the core refuses */
}

static void send_view(struct ctl_out *o, const struct agent_qp_view *v)
{
	struct ctl_msg q = { .type = CTL_T_QP };

	q.u.qp = *v;
	ctl_out_send(o, &q);
}

static void on_list(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	struct agent_qp_view v;
	uint32_t n = 0;

	(void)m;
	for (uint32_t i = 0; i < agent_max_qps(c->a); i++)
		if (agent_qp_view_at(c->a, i, &v) == 0) {
			send_view(o, &v);
			n++;
		}
	ctl_out_reply(o, 0, n, "");
}

static void on_show(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	struct agent_qp_view v;

	if (agent_qp_view(c->a, m->u.qpn, &v)) {
		ctl_out_reply(o, -ENOENT, 0, "no such qp");
		return;
	}
	send_view(o, &v);
	ctl_out_reply(o, 0, 1, "");
}

static void on_set(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	const struct ctl_set *s = &m->u.set;
	char err[CTL_TEXT_MAX] = "";
	int rc = s->what == CTL_SET_RATE
		 ? agent_set_rate(c->a, s->qpn, s->rate_bps, 4000 + c->id, c->now, err, sizeof(err))
		 : agent_set_algo(c->a, s->qpn, s->algo, s->params, 4000 + c->id, c->now, err,
				  sizeof(err));

	ctl_out_reply(o, rc, 0, err);
}

static void on_status(void *ctx, const struct ctl_msg *m, struct ctl_out *o)
{
	struct conn *c = ctx;
	struct ctl_msg a = { .type = CTL_T_AGENT };

	(void)m;
	a.u.agent.qps = agent_qp_count(c->a);
	a.u.agent.max_qps = agent_max_qps(c->a);
	memcpy(a.u.agent.counters, agent_counters(c->a), sizeof(a.u.agent.counters));
	ctl_out_send(o, &a);
	ctl_out_reply(o, 0, 1, "");
}

static const struct ctl_handlers handlers = {
	.fn = {
		[CTL_T_REGISTER] = on_register, [CTL_T_UNREGISTER] = on_unregister,
		[CTL_T_EVENT] = on_event, [CTL_T_STATS] = on_stats, [CTL_T_LIST] = on_list,
		[CTL_T_SHOW] = on_show, [CTL_T_SET] = on_set, [CTL_T_STATUS] = on_status,
		[CTL_T_TXSTATE] = on_txstate,
	},
};

/* How many REPLYs the server owes for @msg of @len bytes as sent (@cut: the bytes read). */
static unsigned replies_owed(const uint8_t *msg, size_t len)
{
	struct ctl_msg m;
	char err[200];

	if (len > CTL_MAX_LEN || ctl_decode(&m, msg, len, err, sizeof(err)))
		return 1;
	return m.type == CTL_T_EVENT || m.type == CTL_T_STATS || m.type == CTL_T_TXSTATE ? 0 : 1;
}

static void check(struct agent *a)
{
	if (agent_qp_count(a) > MAX_QPS)
		abort();
	for (uint32_t i = 0; i < agent_max_qps(a); i++) {
		struct agent_qp_view v;

		if (agent_qp_view_at(a, i, &v) == 0 && (!v.rate_bps || v.rate_bps > v.reg.link_bps))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[CTL_MAX_LEN + 256];
	struct fz f = { data, size };
	struct agent_params p;
	struct qp_ratetable *t;
	struct conn c[NCONN];
	int fds[NCONN][2];
	struct agent *a;
	char err[256];

	agent_params_default(&p);
	p.max_qps = MAX_QPS;
	if (qp_ratetable_create_mem(MAX_QPS, &t, err, sizeof(err)) ||
	    !(a = agent_create(&p, t, QP_NS_PER_S, err, sizeof(err))))
		abort();
	for (int i = 0; i < NCONN; i++) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, fds[i]))
			abort();
		c[i] = (struct conn){ .a = a, .id = (uint32_t)i + 1, .now = QP_NS_PER_S };
	}
	while (f.n) {
		struct conn *k = &c[fz_pick(&f, NCONN)];
		int *fd = fds[k - c];
		struct ctl_out out = { .send = deliver, .io = k };
		size_t len = fz_u16(&f) % sizeof(msg), got;
		const uint8_t *p2 = fz_bytes(&f, len, &got);
		unsigned owed;

		k->now += (uint64_t)fz_u8(&f) * QP_NS_PER_MS;
		memcpy(msg, p2, got);
		owed = replies_owed(msg, got);
		if (send(fd[0], msg, got, 0) != (ssize_t)got)
			abort();
		k->replies = 0;
		/* a zero-length datagram reads as an orderly close on SEQPACKET: 1 */
		if (ctl_serve(fd[1], 1, &handlers, k, &out) < 0)
			abort();
		if (got && k->replies != owed)
			abort();
		agent_poll(a, k->now);
		check(a);
	}
	for (int i = 0; i < NCONN; i++) {
		agent_unregister_owner(a, c[i].id, c[i].now);
		close(fds[i][0]);
		close(fds[i][1]);
	}
	if (agent_qp_count(a))
		abort();
	agent_destroy(a);
	qp_ratetable_close(t);
	return 0;
}
