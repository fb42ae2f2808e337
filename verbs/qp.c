/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP API's common layer (qpace/qp.h): objects, argument checks, the pacing of every
 * send WR (split into gated pieces, blocking or not), progress and deadlines for event
 * loops, and per-QP counters. Backends (verbs/ibv.c, the soft backend) only post pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "qpace/errmsg.h"
#include "qpace/qp.h"
#include "psn.h"
#include "qp_agent.h"
#include "qp_enforce.h"

#define QP_DEF_SQ_DEPTH 128u
#define QP_DEF_RQ_DEPTH 512u
#define QP_MAX_DEPTH 16384u
#define QP_MAX_MSG_BYTES (1u << 31)  /* RC: 2^31 bytes per message */

/* ---- the default table: every slot a caller may reach is non-NULL ---- */

static int dflt_ctx_init(struct qp_ctx *c, char *err, size_t errlen)
{
	(void)c; (void)err; (void)errlen;
	return 0;
}
static void dflt_ctx_fini(struct qp_ctx *c) { (void)c; }
static int dflt_ctx_fd(struct qp_ctx *c) { (void)c; return -EOPNOTSUPP; }
static qp_time_ns dflt_ctx_deadline(struct qp_ctx *c) { (void)c; return QP_TIME_NEVER; }
static int dflt_ctx_progress(struct qp_ctx *c, qp_time_ns now)
{
	(void)c; (void)now;
	return 0;
}
static int dflt_mr_init(struct qp_mr *mr) { (void)mr; return -EOPNOTSUPP; }
static void dflt_mr_fini(struct qp_mr *mr) { (void)mr; }
static int dflt_qp_init(struct qp *qp, char *err, size_t errlen)
{
	(void)qp;
	return qp_errmsg(-EOPNOTSUPP, err, errlen, "this backend cannot create QPs");
}
static void dflt_qp_fini(struct qp *qp) { (void)qp; }
static int dflt_qp_connect(struct qp *qp, char *err, size_t errlen)
{
	(void)qp;
	return qp_errmsg(-EOPNOTSUPP, err, errlen, "this backend cannot connect QPs");
}
static int dflt_cm(struct qp *qp, const char *host, const char *port,
		   const struct qp_mr *expose, char *err, size_t errlen)
{
	(void)qp; (void)host; (void)port; (void)expose;
	return qp_errmsg(-EOPNOTSUPP, err, errlen,
			 "backend '%s' has no connection manager: use the TCP exchange",
			 qp->ctx->ops->name);
}
static int dflt_post_send(struct qp *qp, const struct qp_wr *wr)
{
	(void)qp; (void)wr;
	return -EOPNOTSUPP;
}
static int dflt_post_recv(struct qp *qp, const struct qp_recv_wr *wr)
{
	(void)qp; (void)wr;
	return -EOPNOTSUPP;
}
static int dflt_poll(struct qp *qp, struct qp_wc *wc, int n)
{
	(void)qp; (void)wc; (void)n;
	return -EOPNOTSUPP;
}
static bool dflt_send_full(const struct qp *qp) { (void)qp; return false; }
static void dflt_get_stats(struct qp *qp, struct qp_stats *st) { (void)qp; (void)st; }
static uint16_t dflt_udp_sport(const struct qp *qp) { (void)qp; return 0; }
static int dflt_rate_caps(struct qp_ctx *c, struct qp_rate_caps *caps)
{
	(void)c; (void)caps;
	return -EOPNOTSUPP;
}
static int dflt_rate_limit(struct qp *qp, uint32_t kbps)
{
	(void)qp; (void)kbps;
	return -EOPNOTSUPP;
}

static const struct qp_backend_ops qp_default_ops = {
	.name = "default",
	.ctx_init = dflt_ctx_init,
	.ctx_fini = dflt_ctx_fini,
	.ctx_fd = dflt_ctx_fd,
	.ctx_deadline = dflt_ctx_deadline,
	.ctx_progress = dflt_ctx_progress,
	.mr_init = dflt_mr_init,
	.mr_fini = dflt_mr_fini,
	.qp_init = dflt_qp_init,
	.qp_fini = dflt_qp_fini,
	.qp_connect = dflt_qp_connect,
	.cm_dial = dflt_cm,
	.cm_accept = dflt_cm,
	.post_send = dflt_post_send,
	.send_full = dflt_send_full,
	.post_recv = dflt_post_recv,
	.poll = dflt_poll,
	.get_stats = dflt_get_stats,
	.udp_sport = dflt_udp_sport,
	.rate_caps = dflt_rate_caps,
	.rate_limit = dflt_rate_limit,
};

/* Copy @in over the defaults, slot by slot (as rdma-core's verbs_set_ops). */
static void ops_overlay(struct qp_backend_ops *out, const struct qp_backend_ops *in)
{
#define OVERLAY(f) out->f = in->f ? in->f : qp_default_ops.f
	*out = *in;
	OVERLAY(ctx_init); OVERLAY(ctx_fini); OVERLAY(ctx_fd); OVERLAY(ctx_deadline);
	OVERLAY(ctx_progress); OVERLAY(mr_init); OVERLAY(mr_fini); OVERLAY(qp_init);
	OVERLAY(qp_fini); OVERLAY(qp_connect); OVERLAY(cm_dial); OVERLAY(cm_accept);
	OVERLAY(post_send); OVERLAY(send_full); OVERLAY(post_recv); OVERLAY(poll); OVERLAY(get_stats);
	OVERLAY(udp_sport); OVERLAY(rate_caps); OVERLAY(rate_limit);
#undef OVERLAY
	out->ctx_size = in->ctx_size > sizeof(struct qp_ctx) ? in->ctx_size : sizeof(struct qp_ctx);
	out->qp_size = in->qp_size > sizeof(struct qp) ? in->qp_size : sizeof(struct qp);
	out->mr_size = in->mr_size > sizeof(struct qp_mr) ? in->mr_size : sizeof(struct qp_mr);
}

/* ---- contexts ---- */

static void ctx_log(void *arg, const char *line)
{
	struct qp_ctx *ctx = arg;

	if (ctx->attr.log)
		ctx->attr.log(ctx->attr.log_arg, line);
	else
		fprintf(stderr, "qpace: %s\n", line);
}

int qp_ctx_open(const char *backend, const struct qp_ctx_attr *attr, struct qp_ctx **out,
		char *err, size_t errlen)
{
	const struct qp_backend_ops *ops = qp_backend_find(backend ? backend : "ibv");

	if (!ops) {
		char names[128] = "";
		const struct qp_backend_ops *const *all = qp_backend_all();

		for (size_t i = 0; all[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", all[i]->name);
		return qp_errmsg(-ENOENT, err, errlen, "unknown backend '%s'; built in: %s",
				 backend, names);
	}
	return qp_ctx_open_ops(ops, attr, out, err, errlen);
}

int qp_ctx_open_ops(const struct qp_backend_ops *ops, const struct qp_ctx_attr *attr,
		    struct qp_ctx **out, char *err, size_t errlen)
{
	static const struct qp_ctx_attr none;
	struct qp_backend_ops *resolved = malloc(sizeof(*resolved));
	struct qp_ctx *ctx;
	int rc;

	if (!resolved)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	ops_overlay(resolved, ops);
	ctx = calloc(1, resolved->ctx_size);
	if (!ctx) {
		free(resolved);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	ctx->ops = resolved;
	ctx->attr = attr ? *attr : none;
	rc = qp_agent_open(ctx, &ctx->attr, err, errlen);
	if (rc == 0 && (rc = resolved->ctx_init(ctx, err, errlen)) != 0)
		qp_agent_close(ctx);
	if (rc) {
		free(ctx);
		free(resolved);
		return rc < 0 ? rc : -rc;
	}
	if (ctx->attr.rate_table_mem)
		qp_rate_src_init_table(&ctx->rates, ctx->attr.rate_table_mem, 0, ctx_log, ctx);
	else
		qp_rate_src_init(&ctx->rates, ctx->attr.rate_table, 0, ctx_log, ctx);
	/* The strings were for open only. */
	ctx->attr.device = ctx->attr.rate_table = ctx->attr.options = NULL;
	ctx->attr.agent_socket = ctx->attr.agent.algo = ctx->attr.agent.params = NULL;
	*out = ctx;
	return 0;
}

void qp_ctx_close(struct qp_ctx *ctx)
{
	if (!ctx)
		return;
	while (ctx->qps)
		qp_destroy(ctx->qps);
	while (ctx->mrs)
		qp_mr_dereg(ctx->mrs);
	qp_agent_close(ctx);
	ctx->ops->ctx_fini(ctx);
	qp_rate_src_fini(&ctx->rates);
	free((void *)ctx->ops);
	free(ctx);
}

int qp_ctx_fd(struct qp_ctx *ctx)
{
	return ctx->ops->ctx_fd(ctx);
}

qp_time_ns qp_ctx_deadline(struct qp_ctx *ctx)
{
	qp_time_ns t = ctx->ops->ctx_deadline(ctx);

	for (struct qp *qp = ctx->pend_head; qp; qp = qp->pnext)
		t = qp_time_min(t, qp->retry_ns);
	return qp_time_min(t, qp_agent_next_ns(ctx));
}

static int push_pieces(struct qp *qp, qp_time_ns now);

/* Every change of a QP's pending state goes through here: the context keeps the pending
 * QPs in a list of their own, in the order of ctx->qps (newest first), so that its
 * deadline and progress visit the pending QPs only, in the order a walk of every QP
 * would (a receiver of many QPs, a sender whose finished flows left theirs). */
static void pend_set(struct qp *qp, bool on)
{
	struct qp **pp;

	if (qp->pend.active == on)
		return;
	qp->pend.active = on;
	if (!on) {
		*qp->pref = qp->pnext;
		if (qp->pnext)
			qp->pnext->pref = qp->pref;
		qp->pnext = NULL;
		qp->pref = NULL;
		return;
	}
	for (pp = &qp->ctx->pend_head; *pp && (*pp)->birth > qp->birth; pp = &(*pp)->pnext)
		;
	qp->pnext = *pp;
	if (*pp)
		(*pp)->pref = &qp->pnext;
	*pp = qp;
	qp->pref = pp;
}

/* The pending QP that a walk of ctx->qps meets next after one born at @birth (which may
 * have left the list meanwhile); NULL when none. */
static struct qp *pend_after(const struct qp_ctx *ctx, struct qp *qp, uint64_t birth)
{
	if (qp->pend.active)
		return qp->pnext;
	for (qp = ctx->pend_head; qp && qp->birth > birth; qp = qp->pnext)
		;
	return qp;
}

int qp_ctx_progress(struct qp_ctx *ctx, qp_time_ns now)
{
	int done = 0, rc = 0, prc;

	qp_agent_tick(ctx, now);
	ctx->progressing = true;   /* the backend may send the pieces below in one batch */
	for (struct qp *qp = ctx->pend_head, *next; qp; qp = next) {
		uint64_t birth = qp->birth;
		if (qp->retry_ns > now) {
			next = qp->pnext;
			continue;
		}
		rc = push_pieces(qp, now);
		if (rc < 0 && rc != -EAGAIN)
			break;
		rc = 0;
		done++;
		next = pend_after(ctx, qp, birth);
	}
	ctx->progressing = false;
	prc = ctx->ops->ctx_progress(ctx, now);   /* also after an error: what went on goes */
	if (rc < 0)
		return rc;
	return prc < 0 ? prc : done + prc;
}

int qp_ctx_retry(struct qp_ctx *ctx, qp_time_ns now)
{
	int done = 0, rc;

	for (struct qp *qp = ctx->pend_head, *next; qp; qp = next) {
		uint64_t birth = qp->birth;
		rc = push_pieces(qp, now);
		if (rc < 0 && rc != -EAGAIN)
			return rc;
		done++;
		next = pend_after(ctx, qp, birth);
	}
	return done;
}

/* ---- memory ---- */

int qp_mr_reg(struct qp_ctx *ctx, void *addr, size_t len, unsigned access,
	      struct qp_mr **out)
{
	const unsigned known = QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE |
			       QP_ACCESS_REMOTE_READ | QP_ACCESS_REMOTE_ATOMIC;
	struct qp_mr *mr;
	int rc;

	if (!addr || !len || (access & ~known))
		return -EINVAL;
	mr = calloc(1, ctx->ops->mr_size);
	if (!mr)
		return -ENOMEM;
	mr->ctx = ctx;
	mr->addr = addr;
	mr->length = len;
	mr->access = access;
	rc = ctx->ops->mr_init(mr);
	if (rc) {
		free(mr);
		return rc < 0 ? rc : -rc;
	}
	mr->next = ctx->mrs;
	ctx->mrs = mr;
	*out = mr;
	return 0;
}

int qp_mr_dereg(struct qp_mr *mr)
{
	struct qp_mr **pp;

	if (!mr)
		return 0;
	for (pp = &mr->ctx->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mr->next;
	mr->ctx->ops->mr_fini(mr);
	free(mr);
	return 0;
}

/* ---- QPs ---- */

uint32_t qp_initial_psn(const struct qp *qp)
{
	uint32_t r;

	if (qp->attr.psn_fixed)
		return qp->attr.psn;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)qp_now_ns() ^ (uint32_t)(uintptr_t)qp;
	return r & QP_PSN_MAX;
}

static int resolve_attr(struct qp_attr *a, char *err, size_t errlen)
{
	if (!a->sq_depth)
		a->sq_depth = QP_DEF_SQ_DEPTH;
	if (!a->rq_depth)
		a->rq_depth = QP_DEF_RQ_DEPTH;
	if (a->sq_depth > QP_MAX_DEPTH || a->rq_depth > QP_MAX_DEPTH)
		return qp_errmsg(-EINVAL, err, errlen, "qp: sq_depth %u / rq_depth %u, accepted 1..%u",
				 a->sq_depth, a->rq_depth, QP_MAX_DEPTH);
	if (a->mtu_bytes && (a->mtu_bytes < QP_MTU_MIN || a->mtu_bytes > QP_MTU_MAX ||
			     (a->mtu_bytes & (a->mtu_bytes - 1))))
		return qp_errmsg(-EINVAL, err, errlen,
				 "qp: mtu %u bytes, accepted 256, 512, 1024, 2048, 4096 (or 0 = port MTU)",
				 a->mtu_bytes);
	if (a->psn_fixed && a->psn > QP_PSN_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "qp: psn 0x%x, accepted 0..0xffffff", a->psn);
	if (a->retry_cnt > 7 || a->rnr_retry > 7 || a->timeout > 31 || a->min_rnr_timer > 31)
		return qp_errmsg(-EINVAL, err, errlen,
				 "qp: retry_cnt %u / rnr_retry %u (0..7), timeout %u / min_rnr_timer %u (0..31)",
				 a->retry_cnt, a->rnr_retry, a->timeout, a->min_rnr_timer);
	if (!a->timeout)
		a->timeout = 14;
	if (!a->retry_cnt)
		a->retry_cnt = 7;
	if (!a->rnr_retry)
		a->rnr_retry = 7;
	if (!a->min_rnr_timer)
		a->min_rnr_timer = 12;
	if (a->max_rd_atomic > QP_RD_ATOMIC_MAX || a->max_dest_rd_atomic > QP_RD_ATOMIC_MAX)
		return qp_errmsg(-EINVAL, err, errlen,
				 "qp: max_rd_atomic %u / max_dest_rd_atomic %u, accepted 1..%u "
				 "(0 = %u)", a->max_rd_atomic, a->max_dest_rd_atomic,
				 QP_RD_ATOMIC_MAX, QP_RD_ATOMIC_DEF);
	if (!a->max_rd_atomic)
		a->max_rd_atomic = QP_RD_ATOMIC_DEF;
	if (!a->max_dest_rd_atomic)
		a->max_dest_rd_atomic = QP_RD_ATOMIC_DEF;
	if ((unsigned)a->wait.mode >= QP_WAIT_MODE_COUNT)
		return qp_errmsg(-EINVAL, err, errlen, "qp: wait mode %u, accepted 0..%u",
				 (unsigned)a->wait.mode, QP_WAIT_MODE_COUNT - 1);
	return 0;
}

static void qp_unlink(struct qp *qp)
{
	struct qp **pp;

	for (pp = &qp->ctx->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = qp->next;
}

/* Allocate and check; the backend's init (plain or CM) runs after. */
static int qp_alloc(struct qp_ctx *ctx, const struct qp_attr *attr, struct qp **out,
		    char *err, size_t errlen)
{
	static const struct qp_attr none;
	struct qp *qp = calloc(1, ctx->ops->qp_size);
	int rc;

	if (!qp)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	qp->ctx = ctx;
	qp->attr = attr ? *attr : none;
	rc = resolve_attr(&qp->attr, err, errlen);
	if (rc) {
		free(qp);
		return rc;
	}
	*out = qp;
	return 0;
}

/* For the gate's in-flight cap: what the backend has not had acknowledged, in path MTUs. */
static int qp_inflight(void *arg, uint64_t *bytes, uint32_t *unit_bytes)
{
	const struct qp *qp = arg;

	if (!qp->connected || !qp->path_mtu_bytes)
		return -ENOTCONN;
	*bytes = qp->ctx->ops->unacked_bytes(qp);
	*unit_bytes = qp->path_mtu_bytes;
	return 0;
}

/* After the backend set qpn and the MTU: the gate (burst default 2 x MTU; line rate, the
 * base of its fallback, default the link rate the QP registers with) and the list. */
static int qp_finish(struct qp *qp, char *err, size_t errlen)
{
	struct qp_gate_params gp = qp->attr.gate;
	uint32_t mtu = qp->attr.mtu_bytes ? qp->attr.mtu_bytes : qp->local.mtu_bytes;
	int rc;

	if (!gp.burst_bytes && mtu)
		gp.burst_bytes = 2ull * mtu;
	if (!gp.line_bps)
		gp.line_bps = qp->attr.agent.link_bps ? qp->attr.agent.link_bps
			      : qp->ctx->attr.agent.link_bps ? qp->ctx->attr.agent.link_bps
			      : QP_AGENT_DEF_LINK_BPS;
	/* The registration's parameters first: a bad link rate is named as such. */
	rc = qp_agent_qp_init(qp, err, errlen);
	if (rc)
		return rc;
	rc = qp_gate_params_resolve(&gp, err, errlen);
	if (rc) {
		qp_agent_qp_fini(qp);
		return rc;
	}
	qp->attr.gate = gp;
	qp_pacer_init(&qp->pacer, &gp, &qp->attr.wait, &qp->ctx->rates, qp->qpn,
		      qp_ctx_now(qp->ctx));
	if (qp->ctx->ops->unacked_bytes) {
		qp->pacer.inflight = qp_inflight;
		qp->pacer.inflight_arg = qp;
	}
	qp->next = qp->ctx->qps;
	qp->birth = qp->ctx->births++;
	qp->ctx->qps = qp;
	return 0;
}

int qp_create(struct qp_ctx *ctx, const struct qp_attr *attr, struct qp **out,
	      char *err, size_t errlen)
{
	struct qp *qp;
	int rc = qp_alloc(ctx, attr, &qp, err, errlen);

	if (rc)
		return rc;
	if (ctx->attr.clock && !(qp->attr.flags & QP_F_NONBLOCK)) {
		free(qp);
		return qp_errmsg(-EINVAL, err, errlen, "qp: this context runs on an injected clock "
				 "(virtual time), where nothing may wait: create QPs with "
				 "QP_F_NONBLOCK");
	}
	rc = ctx->ops->qp_init(qp, err, errlen);
	if (rc == 0 && (rc = qp_finish(qp, err, errlen)) != 0)
		ctx->ops->qp_fini(qp);
	if (rc) {
		free(qp);
		return rc < 0 ? rc : -rc;
	}
	*out = qp;
	return 0;
}

int qp_destroy(struct qp *qp)
{
	if (!qp)
		return 0;
	pend_set(qp, false);
	qp_unlink(qp);
	qp_agent_qp_fini(qp);
	qp->ctx->ops->qp_fini(qp);
	free(qp);
	return 0;
}

int qp_local_info(struct qp *qp, const struct qp_mr *expose, struct qp_conn_info *out)
{
	*out = qp->local;
	out->rkey = expose ? expose->rkey : 0;
	out->addr = expose ? (uint64_t)(uintptr_t)expose->addr : 0;
	out->len = expose ? expose->length : 0;
	return 0;
}

static int check_remote(const struct qp_conn_info *r, char *err, size_t errlen)
{
	uint8_t buf[QP_WIRE_CONN_BYTES];

	/* The encoder's checks are the wire's: one definition of a valid peer. */
	if (qp_wire_conn_encode(r, buf, sizeof(buf)) < 0)
		return qp_errmsg(-EINVAL, err, errlen,
				 "peer: qpn 0x%x, psn 0x%x (24 bits each), mtu %u (256..4096)",
				 r->qpn, r->psn, r->mtu_bytes);
	return 0;
}

/* Connected: the sender's PSN starts, its enforcer is chosen, it registers. */
static void qp_connected(struct qp *qp)
{
	qp->connected = true;
	qp_psn_start(qp);
	qp_enforce_select(qp);
	qp_agent_qp_connected(qp);
}

int qp_connect(struct qp *qp, const struct qp_conn_info *remote, char *err, size_t errlen)
{
	int rc = check_remote(remote, err, errlen);

	if (rc)
		return rc;
	if (qp->connected)
		return qp_errmsg(-EISCONN, err, errlen, "qp 0x%06x: already connected", qp->qpn);
	qp->remote = *remote;
	qp->path_mtu_bytes = remote->mtu_bytes < qp->local.mtu_bytes ? remote->mtu_bytes
								   : qp->local.mtu_bytes;
	rc = qp->ctx->ops->qp_connect(qp, err, errlen);
	if (rc)
		return rc < 0 ? rc : -rc;
	qp_connected(qp);
	return 0;
}

static int cm_run(bool dial, struct qp_ctx *ctx, const struct qp_attr *attr, const char *host,
		  const char *port, const struct qp_mr *expose, struct qp **out,
		  char *err, size_t errlen)
{
	struct qp *qp;
	int rc = qp_alloc(ctx, attr, &qp, err, errlen);

	if (rc)
		return rc;
	rc = dial ? ctx->ops->cm_dial(qp, host, port, expose, err, errlen)
		  : ctx->ops->cm_accept(qp, host, port, expose, err, errlen);
	if (rc == 0 && (rc = qp_finish(qp, err, errlen)) != 0)
		ctx->ops->qp_fini(qp);
	if (rc) {
		free(qp);
		return rc < 0 ? rc : -rc;
	}
	qp_connected(qp);
	*out = qp;
	return 0;
}

int qp_dial_cm(struct qp_ctx *ctx, const struct qp_attr *attr, const char *host,
	       const char *port, const struct qp_mr *expose, struct qp **out,
	       char *err, size_t errlen)
{
	return cm_run(true, ctx, attr, host, port, expose, out, err, errlen);
}

int qp_accept_cm(struct qp_ctx *ctx, const struct qp_attr *attr, const char *bind,
		 const char *port, const struct qp_mr *expose, struct qp **out,
		 char *err, size_t errlen)
{
	return cm_run(false, ctx, attr, bind, port, expose, out, err, errlen);
}

/* ---- posting through the gate ---- */

static bool mr_covers(const struct qp *qp, const struct qp_mr *mr, const void *addr,
		      uint64_t len)
{
	uintptr_t a = (uintptr_t)addr, base;

	if (!mr || mr->ctx != qp->ctx)
		return false;
	base = (uintptr_t)mr->addr;
	return a >= base && len <= mr->length && a - base <= mr->length - len;
}

static int check_send_wr(const struct qp *qp, const struct qp_wr *wr)
{
	bool is_inline = wr->flags & QP_WR_INLINE;

	if ((unsigned)wr->opcode >= QP_OP_COUNT ||
	    (wr->flags & ~(unsigned)(QP_WR_SIGNALED | QP_WR_INLINE)) ||
	    wr->length > QP_MAX_MSG_BYTES)
		return -EINVAL;
	/* READ and atomics write the local buffer: no inline data, local write access; an
	 * atomic is 8 bytes at an 8-byte aligned remote address. */
	if (qp_op_is_rd_atomic(wr->opcode))
		return !is_inline && (!qp_op_is_atomic(wr->opcode) ||
				      (wr->length == 8 && !(wr->remote_addr & 7))) &&
		       (wr->length == 0 || (mr_covers(qp, wr->mr, wr->addr, wr->length) &&
					    (wr->mr->access & QP_ACCESS_LOCAL_WRITE)))
			       ? 0 : -EINVAL;
	if (is_inline)
		return wr->length <= qp->attr.max_inline && (wr->addr || !wr->length) ? 0
											 : -EINVAL;
	return wr->length == 0 || mr_covers(qp, wr->mr, wr->addr, wr->length) ? 0 : -EINVAL;
}

static bool splittable(enum qp_opcode op)
{
	return op == QP_OP_WRITE || op == QP_OP_WRITE_IMM || op == QP_OP_READ;
}

/* Hand the pending WR's next @n bytes to the backend. */
static int post_piece(struct qp *qp, uint64_t n)
{
	const struct qp_wr *wr = &qp->pend_wr;
	uint64_t off = qp->pend.offset;
	bool last = off + n == wr->length;
	struct qp_wr piece = *wr;
	int rc;

	piece.addr = wr->addr ? (char *)wr->addr + off : NULL;  /* zero-length: may be NULL */
	piece.length = (uint32_t)n;
	piece.remote_addr = wr->remote_addr + off;
	if (!last) {
		/* The immediate and the completion belong to the message's last piece. */
		if (piece.opcode == QP_OP_WRITE_IMM)
			piece.opcode = QP_OP_WRITE;
		piece.flags &= ~(unsigned)QP_WR_SIGNALED;
	} else if (qp->attr.flags & QP_F_SIGNAL_ALL) {
		piece.flags |= QP_WR_SIGNALED;
	}
	rc = qp->ctx->ops->post_send(qp, &piece);
	if (rc == -EAGAIN || rc == EAGAIN) {
		/* The backend's send queue is full: the piece stays pending and is offered
		 * again after progress. Its tokens are spent; the WR is not lost. */
		qp->stats.backend_busy++;
		return -EAGAIN;
	}
	if (rc) {
		pend_set(qp, false);
		return rc < 0 ? rc : -rc;
	}
	qp_psn_posted(qp, &piece);
	qp->pend.offset += n;
	qp->stats.tx_bytes += n;
	qp->stats.tx_chunks++;
	if (last) {
		pend_set(qp, false);
		qp->stats.tx_msgs++;
		if (piece.flags & QP_WR_SIGNALED)
			qp_agent_sent(qp, wr->wr_id, wr->length);
	}
	return 0;
}

static unsigned gate_flags(const struct qp *qp)
{
	return (splittable(qp->pend_wr.opcode) ? 0 : QP_GATE_WHOLE) | qp_enforce_gate_flags(qp);
}

/* Non-blocking: hand on every piece the gate passes at @now. -EAGAIN when it closes. */
static int push_pieces(struct qp *qp, qp_time_ns now)
{
	struct qp_gate_verdict v;
	int rc;

	while (qp->pend.active) {
		uint64_t left = qp->pend_wr.length - qp->pend.offset;

		/* The backend has no room: the piece waits as for the window (credit_poll_ns),
		 * without asking the gate, whose tokens it would spend in vain. A driver that
		 * offers pending pieces at every event (virtual time: qp_ctx_retry) gives it
		 * the ACK that frees a slot; nothing polls there. */
		if (qp->ctx->ops->send_full(qp)) {
			qp->stats.backend_busy++;
			qp->retry_ns = now + qp->pacer.gate.p.credit_poll_ns;
			return -EAGAIN;
		}
		rc = qp_pacer_try(&qp->pacer, left, gate_flags(qp), now, &v);
		qp_enforce_apply(qp, v.rate_bps);
		if (rc < 0) {
			qp->retry_ns = v.retry_ns;
			return -EAGAIN;
		}
		rc = post_piece(qp, v.bytes);
		if (rc == -EAGAIN) {
			qp->retry_ns = now + QP_BACKEND_BUSY_RETRY_NS;
			return rc;
		}
		if (rc)
			return rc;
	}
	qp->retry_ns = now;
	return 0;
}

static void progress_cb(void *arg, qp_time_ns now)
{
	struct qp_ctx *ctx = arg;

	qp_agent_tick(ctx, now);
	ctx->ops->ctx_progress(ctx, now);
}

/* Blocking: wait for each piece (running the backend meanwhile) until the WR is handed on. */
static int drain_blocking(struct qp *qp)
{
	struct qp_ctx *ctx = qp->ctx;
	int fd = ctx->ops->ctx_fd(ctx);
	struct qp_gate_verdict v;
	int rc;

	while (qp->pend.active) {
		uint64_t left = qp->pend_wr.length - qp->pend.offset;

		qp_pacer_take(&qp->pacer, left, gate_flags(qp), fd < 0 ? -1 : fd,
			      progress_cb, ctx, &v);
		qp_enforce_apply(qp, v.rate_bps);
		while ((rc = post_piece(qp, v.bytes)) == -EAGAIN) {
			/* Backend busy: let it make progress (ACKs free its queue), then retry. */
			qp_wait_until(&qp->attr.wait, qp_now_ns() + QP_BACKEND_BUSY_RETRY_NS,
				      fd < 0 ? -1 : fd, &qp->stats.gate);
			ctx->ops->ctx_progress(ctx, qp_now_ns());
		}
		if (rc)
			return rc;
	}
	return 0;
}

int qp_post_send(struct qp *qp, const struct qp_wr *wr)
{
	bool nonblock = qp->attr.flags & QP_F_NONBLOCK;
	int rc = check_send_wr(qp, wr);

	if (rc)
		return rc;
	if (qp->ctx->agent)
		qp_agent_tick(qp->ctx, qp_ctx_now(qp->ctx));
	if (!qp->connected || qp->broken)
		return -ENOTCONN;
	if (qp->pend.active) {
		if (nonblock)
			return -EAGAIN;
		rc = drain_blocking(qp);
		if (rc)
			return rc;
	}
	qp->pend_wr = *wr;
	pend_set(qp, true);
	qp->pend.offset = 0;
	if (!nonblock)
		return drain_blocking(qp);
	rc = push_pieces(qp, qp_ctx_now(qp->ctx));
	if (rc == -EAGAIN && qp->pend.offset == 0) {
		pend_set(qp, false); /* not accepted: the caller posts it again */
		return -EAGAIN;
	}
	return rc == -EAGAIN ? 0 : rc;
}

/* The conditions on which qp_post_send returns -EAGAIN after check_send_wr and nothing
 * else: kept beside it, in its order. */
bool qp_send_busy(const struct qp *qp)
{
	return !qp->ctx->agent && qp->connected && !qp->broken && qp->pend.active &&
	       (qp->attr.flags & QP_F_NONBLOCK);
}

int qp_post_recv(struct qp *qp, const struct qp_recv_wr *wr)
{
	int rc;

	if (wr->length > QP_MAX_MSG_BYTES ||
	    (wr->length && !mr_covers(qp, wr->mr, wr->addr, wr->length)))
		return -EINVAL;
	rc = qp->ctx->ops->post_recv(qp, wr);
	return rc < 0 ? rc : -rc;
}

int qp_poll(struct qp *qp, struct qp_wc *wc, int n)
{
	int got;

	if (n <= 0)
		return n < 0 ? -EINVAL : 0;
	got = qp->ctx->ops->poll(qp, wc, n);
	for (int i = 0; i < got; i++) {
		if (wc[i].status != QP_WC_SUCCESS) {
			qp->stats.errors++;
			qp->broken = true;
			continue;
		}
		if (wc[i].opcode == QP_WC_RECV || wc[i].opcode == QP_WC_RECV_WRITE_IMM) {
			qp->stats.rx_msgs++;
			qp->stats.rx_bytes += wc[i].byte_len;
		} else {
			qp_agent_completed(qp, wc[i].wr_id);
		}
	}
	return got;
}

qp_time_ns qp_send_deadline(struct qp *qp, qp_time_ns now)
{
	return qp->retry_ns > now ? qp->retry_ns : now;
}

void qp_get_stats(struct qp *qp, struct qp_stats *out)
{
	*out = qp->stats;
	out->gate = qp->pacer.gate.stats;
	out->have = QP_STAT_RX;
	qp->ctx->ops->get_stats(qp, out);
}
