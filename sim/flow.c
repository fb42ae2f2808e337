/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The flow runner (qpace/sim.h, "Flows"): a QP pair per flow, made at its start time,
 * driven as the engine's application on every turn of its sender, gone when it ends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/rc.h"
#include "qpace/soft.h"
#include "sim_priv.h"

#define FLOW_BUF_BYTES (64u * 1024)
#define FLOW_SQ_DEPTH 64u
/* Send-queue slots for a sender's gated pieces (one MTU each): twice the default window
 * of 128 packets, against the soft backend's 1024, whose slots (48 bytes each, and a
 * completion slot of 24 beside each) made a flow's two QPs 160 KB; a piece that finds them
 * full waits, pending, for the ACK that frees one. The receiver's QP sends nothing. */
#define FLOW_SQ_PIECES 256u
#define FLOW_QP_TIMEOUT 14             /* as the incast: 67 ms, beyond a full buffer */
#define FLOW_QP_TIMEOUT_MAX 20          /* 4.3 s */

/* The QP's local ACK timeout: the incast's 67 ms, or on a longer path (a WAN's) the
 * smallest 4.096 us << EXP at least twice the base RTT, as an operator sets it there:
 * a timeout below the RTT expires on every window (TCP's RTO is never below the RTT). */
static uint8_t flow_qp_timeout(qp_time_ns rtt)
{
	uint8_t e = FLOW_QP_TIMEOUT;

	while (e < FLOW_QP_TIMEOUT_MAX && (4096ull << e) < 2 * rtt)
		e++;
	return e;
}
#define FLOW_OVERHEAD 58u              /* Ethernet, IPv4, UDP, BTH, ICRC per packet */

struct flow_state {
	struct qp *qp, *rqp;
	uint64_t posted, acked;
	uint32_t next_active;          /* the sender's list of running flows */
	bool running;
};

struct host_bufs {
	uint8_t *sbuf, *rbuf;
	struct qp_mr *smr, *rmr;
	uint32_t active;               /* first running flow it sends, UINT32_MAX none */
};

/* A held flow's start: the timer's argument. */
struct flow_rel {
	struct sim_flows *fl;
	uint32_t k;
	bool released;
};

struct sim_flows {
	struct sim *s;
	struct sim_flow *f;
	struct flow_state *st;
	size_t n, ntimed, next, finished;   /* [0, ntimed) start on time, the rest held */
	struct flow_rel *rel;               /* [n - ntimed] */
	struct sim_flow_conf c;
	struct host_bufs *hb;
};

static int host_bufs(struct sim_flows *fl, uint32_t i)
{
	struct host_bufs *b = &fl->hb[i];
	struct host *h = sim_host(fl->s, i);

	if (b->smr)
		return 0;
	b->sbuf = calloc(1, FLOW_BUF_BYTES);
	b->rbuf = calloc(1, FLOW_BUF_BYTES);
	if (!b->sbuf || !b->rbuf)
		return -ENOMEM;
	if (qp_mr_reg(h->ctx, b->rbuf, FLOW_BUF_BYTES,
		      QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, &b->rmr) ||
	    qp_mr_reg(h->ctx, b->sbuf, FLOW_BUF_BYTES, QP_ACCESS_LOCAL_WRITE, &b->smr))
		return -ENOMEM;
	return 0;
}

/* The flow ends (done or lost): its ends leave their agents, its QPs go. */
static void flow_end(struct sim_flows *fl, size_t k, qp_time_ns now, bool lost)
{
	struct sim_flow *f = &fl->f[k];
	struct flow_state *st = &fl->st[k];
	struct qp_stats qs;

	if (st->qp) {
		qp_get_stats(st->qp, &qs);
		f->retransmits = qs.retransmissions;
		f->timeouts = qs.timeouts;
		host_unregister(sim_host(fl->s, f->src), st->qp->qpn, now);
	}
	const struct rc_stats *rs = st->rqp ? qp_soft_rc_stats(st->rqp) : NULL;
	f->delivered_bytes = lost ? (rs ? rs->rx_bytes : 0) : f->bytes;
	if (st->rqp)
		host_unregister(sim_host(fl->s, f->dst), st->rqp->qpn, now);
	qp_destroy(st->qp);
	qp_destroy(st->rqp);
	st->qp = st->rqp = NULL;
	st->running = false;
	f->lost = lost;
	f->done = !lost;
	f->fct_ns = lost ? 0 : now - (SIM_START_NS + f->start_ns);
	fl->finished++;
	sim_wake(fl->s, f->dst, now);     /* its agent lost a QP: deadlines moved */
	if (fl->c.done)
		fl->c.done(fl->c.arg, f, now);
}

static int flow_open(struct sim_flows *fl, size_t k, qp_time_ns now)
{
	struct sim_flow *f = &fl->f[k];
	struct flow_state *st = &fl->st[k];
	struct host *sh = sim_host(fl->s, f->src), *rh = sim_host(fl->s, f->dst);
	struct qp_attr qa = {
		.sq_depth = FLOW_SQ_DEPTH, .rq_depth = 16, .mtu_bytes = fl->c.mtu_bytes,
		.timeout = FLOW_QP_TIMEOUT, .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL,
		.psn_fixed = true, .traffic_class = fl->c.tos,
		.gate = { .chunk_bytes = fl->c.mtu_bytes, .burst_bytes = fl->c.mtu_bytes,
			  .credit_poll_ns = QP_NS_PER_S },   /* nothing polls: qp_ctx_retry */
		/* the flows WRITE: one READ/atomic slot each way keeps a flow's memory */
		.max_rd_atomic = 1, .max_dest_rd_atomic = 1,
	};
	struct qp_attr ra = qa;
	struct qp_conn_info li, ri;
	char e[300];
	qp_rate_bps line = fl->c.line_bps;
	qp_time_ns rtt = f->base_rtt_ns ? f->base_rtt_ns : fl->c.base_rtt_ns;

	/* a window of packets in flight holds as many slots until its ACKs: room for two
	 * windows, at least FLOW_SQ_PIECES (a WAN flow's 4096-packet window needs 8192) */
	uint64_t win = sim_host_window(fl->s, f->src);
	qa.sq_pieces = win * 2 > FLOW_SQ_PIECES ? (uint32_t)(win < (1u << 20) ? win * 2 : 1u << 21)
						 : FLOW_SQ_PIECES;
	ra.sq_depth = 1;
	ra.sq_pieces = 1;
	qa.timeout = ra.timeout = flow_qp_timeout(rtt);

	if (host_bufs(fl, f->src) || host_bufs(fl, f->dst))
		return -ENOMEM;
	qa.psn = (uint32_t)((fl->c.seed * 2654435761u + 2 * k) & 0xffffff);
	ra.psn = (uint32_t)((fl->c.seed * 2654435761u + 2 * k + 1) & 0xffffff);
	ra.traffic_class = 0;   /* the receiver's frames (ACKs, CNPs) are not ECN-capable */
	if (!line)
		line = fl->s->hosts[f->src].nic_bps / (fl->c.mtu_bytes + FLOW_OVERHEAD) *
		       fl->c.mtu_bytes;
	if (qp_create(rh->ctx, &ra, &st->rqp, e, sizeof(e)) ||
	    qp_create(sh->ctx, &qa, &st->qp, e, sizeof(e)) ||
	    qp_local_info(st->rqp, fl->hb[f->dst].rmr, &ri) || qp_local_info(st->qp, NULL, &li) ||
	    qp_connect(st->rqp, &li, e, sizeof(e)) || qp_connect(st->qp, &ri, e, sizeof(e)) ||
	    host_register(sh, st->qp, line, rtt, false, fl->c.algo,
			  fl->c.algo ? fl->c.params : NULL, now, e, sizeof(e)) ||
	    host_register(rh, st->rqp, line, rtt, true, "none", NULL, now, e, sizeof(e)))
		return -ENOSPC;   /* the host's QPs or its agent's are all in use */
	/* its size, to an algorithm that takes it (0: a flow without end) */
	host_flow_start(sh, st->qp->qpn, f->bytes == UINT64_MAX ? 0 : f->bytes, now);
	st->running = true;
	st->next_active = fl->hb[f->src].active;
	fl->hb[f->src].active = (uint32_t)k;
	sim_wake(fl->s, f->src, now);
	sim_wake(fl->s, f->dst, now);
	return 0;
}

static void starts(void *arg, qp_time_ns now)
{
	struct sim_flows *fl = arg;

	while (fl->next < fl->ntimed && SIM_START_NS + fl->f[fl->next].start_ns <= now) {
		size_t k = fl->next++;
		if (flow_open(fl, k, now))
			flow_end(fl, k, now, true);
	}
	if (fl->next < fl->ntimed &&
	    sim_at(fl->s, SIM_START_NS + fl->f[fl->next].start_ns, starts, fl))
		sim_stop(fl->s);     /* out of memory: sim_run says so */
}

static void release_start(void *arg, qp_time_ns now)
{
	struct flow_rel *r = arg;

	if (flow_open(r->fl, r->k, now))
		flow_end(r->fl, r->k, now, true);
}

int sim_flows_release(struct sim_flows *fl, size_t k, qp_time_ns t)
{
	struct flow_rel *r;

	if (k < fl->ntimed || k >= fl->n || fl->rel[k - fl->ntimed].released)
		return -EINVAL;
	r = &fl->rel[k - fl->ntimed];
	if (t < sim_now(fl->s))
		t = sim_now(fl->s);
	r->released = true;
	fl->f[k].start_ns = t - SIM_START_NS;
	return sim_at(fl->s, t, release_start, r);
}

/* One flow's turn on its sender: completions, then posts; when it must run again. */
static qp_time_ns flow_turn(struct sim_flows *fl, size_t k, qp_time_ns now, bool *ended)
{
	struct sim_flow *f = &fl->f[k];
	struct flow_state *st = &fl->st[k];
	struct qp_wc wc[32];
	int n = qp_poll(st->qp, wc, 32), rc = 0;

	*ended = false;
	for (int i = 0; i < n; i++) {
		if (wc[i].status != QP_WC_SUCCESS) {
			*ended = true;
			flow_end(fl, k, now, true);
			return QP_TIME_NEVER;
		}
		st->acked += wc[i].wr_id;
	}
	if (st->acked >= f->bytes) {
		*ended = true;
		flow_end(fl, k, now, false);
		return QP_TIME_NEVER;
	}
	while (st->posted < f->bytes) {
		uint64_t left = f->bytes - st->posted;
		/* Still handing on the last WR: a post would be -EAGAIN (this flow's WRs have one
		 * shape, the host's buffer and at most wr_bytes, so they pass qp_post_send's
		 * checks as the last one did), so it is not asked at every turn of the host. */
		if (qp_send_busy(st->qp)) {
			rc = -EAGAIN;
			break;
		}
		uint32_t len = (uint32_t)(left < fl->c.wr_bytes ? left : fl->c.wr_bytes);
		struct qp_wr w = { .opcode = QP_OP_WRITE, .wr_id = len,
				   .mr = fl->hb[f->src].smr, .addr = fl->hb[f->src].sbuf,
				   .length = len, .remote_addr = st->qp->remote.addr,
				   .rkey = st->qp->remote.rkey, .flags = QP_WR_SIGNALED };
		rc = qp_post_send(st->qp, &w);
		if (rc)
			break;
		st->posted += len;
	}
	if (rc && rc != -EAGAIN && rc != -ENOMEM && rc != -ENOSPC) {
		*ended = true;
		flow_end(fl, k, now, true);
		return QP_TIME_NEVER;
	}
	return rc == -EAGAIN && !st->qp->pend.active ? qp_send_deadline(st->qp, now)
						      : QP_TIME_NEVER;
}

static qp_time_ns flows_app(void *arg, size_t host, qp_time_ns now)
{
	struct sim_flows *fl = arg;
	uint32_t *link = &fl->hb[host].active;
	qp_time_ns next = QP_TIME_NEVER;

	while (*link != UINT32_MAX) {
		uint32_t k = *link;
		bool ended;
		qp_time_ns t = flow_turn(fl, k, now, &ended);

		if (ended) {
			*link = fl->st[k].next_active;   /* off the sender's list */
			continue;
		}
		next = qp_time_min(next, t);
		link = &fl->st[k].next_active;
	}
	return next;
}

int sim_flows_start(struct sim *s, struct sim_flow *flows, size_t n,
		    const struct sim_flow_conf *c, struct sim_flows **out, char *err,
		    size_t errlen)
{
	struct sim_flows *fl = calloc(1, sizeof(*fl));

	*out = NULL;
	if (fl)
		fl->s = s;
	if (!fl || !(fl->st = calloc(n ? n : 1, sizeof(*fl->st))) ||
	    !(fl->hb = calloc(s->nhosts ? s->nhosts : 1, sizeof(*fl->hb)))) {
		sim_flows_free(fl);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	fl->s = s;
	fl->f = flows;
	fl->n = n;
	fl->c = *c;
	if (!fl->c.mtu_bytes)
		fl->c.mtu_bytes = 1024;
	if (!fl->c.wr_bytes || fl->c.wr_bytes > FLOW_BUF_BYTES)
		fl->c.wr_bytes = FLOW_BUF_BYTES;
	if (!fl->c.base_rtt_ns)
		fl->c.base_rtt_ns = 100 * QP_NS_PER_US;
	for (size_t h = 0; h < s->nhosts; h++)
		fl->hb[h].active = UINT32_MAX;
	for (size_t k = 0; k < n; k++) {
		const struct sim_flow *f = &flows[k];
		if (f->src >= s->nhosts || f->dst >= s->nhosts || f->src == f->dst || !f->bytes) {
			sim_flows_free(fl);
			return qp_errmsg(-EINVAL, err, errlen, "flow %zu: %u -> %u, %llu bytes: "
					 "hosts 0..%zu, two different ones, at least 1 byte", k,
					 f->src, f->dst, (unsigned long long)f->bytes, s->nhosts - 1);
		}
		if (k && f->held < flows[k - 1].held) {
			sim_flows_free(fl);
			return qp_errmsg(-EINVAL, err, errlen, "flow %zu is not held, flow %zu is: "
					 "held flows come after every other", k, k - 1);
		}
		if (k && !f->held && f->start_ns < flows[k - 1].start_ns) {
			sim_flows_free(fl);
			return qp_errmsg(-EINVAL, err, errlen, "flow %zu starts before flow %zu: "
					 "flows are taken sorted by start time", k, k - 1);
		}
		flows[k].done = flows[k].lost = false;
		fl->ntimed += !f->held;
	}
	if (!(fl->rel = calloc(n - fl->ntimed + 1, sizeof(*fl->rel)))) {
		sim_flows_free(fl);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	for (size_t k = fl->ntimed; k < n; k++)
		fl->rel[k - fl->ntimed] = (struct flow_rel){ .fl = fl, .k = (uint32_t)k };
	sim_set_app(s, flows_app, fl);
	if (fl->ntimed && sim_at(s, SIM_START_NS + flows[0].start_ns, starts, fl)) {
		sim_flows_free(fl);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	*out = fl;
	return 0;
}

size_t sim_flows_finished(const struct sim_flows *fl)
{
	return fl->finished;
}

void sim_flows_now(const struct sim_flows *fl, size_t k, struct sim_flow_now *out)
{
	const struct sim_flow *f = &fl->f[k];
	const struct flow_state *st = &fl->st[k];
	const struct rc_stats *rs;

	*out = (struct sim_flow_now){ .running = st->running };
	if (!st->rqp || !(rs = qp_soft_rc_stats(st->rqp))) {
		out->delivered_bytes = f->done ? f->bytes : 0;
		return;
	}
	out->delivered_bytes = rs->rx_bytes;
	out->rate_bps = host_rate(sim_host(fl->s, f->src), st->qp->qpn);
	out->cc = agent_qp_cc(sim_host(fl->s, f->src)->agent, st->qp->qpn);
}

void sim_flows_free(struct sim_flows *fl)
{
	if (!fl)
		return;
	for (size_t k = 0; fl->st && k < fl->n; k++) {
		qp_destroy(fl->st[k].qp);
		qp_destroy(fl->st[k].rqp);
	}
	for (size_t h = 0; fl->hb && fl->s && h < fl->s->nhosts; h++) {
		qp_mr_dereg(fl->hb[h].smr);
		qp_mr_dereg(fl->hb[h].rmr);
		free(fl->hb[h].sbuf);
		free(fl->hb[h].rbuf);
	}
	if (fl->s && fl->s->app_arg == fl)
		sim_set_app(fl->s, NULL, NULL);
	free(fl->st);
	free(fl->hb);
	free(fl->rel);
	free(fl);
}
