/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Registration of connected QPs with the host's agent (qpaced): the QP layer's private
 * interface to verbs/qp_agent.c. See qp_agent.c for the rules. */
#ifndef QPACE_VERBS_QP_AGENT_H
#define QPACE_VERBS_QP_AGENT_H

#include "qpace/ctl.h"
#include "qpace/qp.h"

/* Retry connecting to an absent agent after 100 ms, doubling up to 1 s. */
#define QP_AGENT_RETRY_MIN_NS (100 * QP_NS_PER_MS)
#define QP_AGENT_RETRY_MAX_NS QP_NS_PER_S
/* A connected agent: replies and a lost connection are looked for, and the QPs' counters
 * reported (STATS, when they changed), this often. */
#define QP_AGENT_CHECK_NS (100 * QP_NS_PER_MS)
/* TXSTATE (the posted PSN, the enforcer) goes out at most once per the smallest base RTT
 * of the context's registered QPs, within these bounds, while they post. */
#define QP_AGENT_TXSTATE_MIN_NS (20 * QP_NS_PER_US)
#define QP_AGENT_TXSTATE_MAX_NS QP_AGENT_CHECK_NS
/* At connect, how long qp_connect waits for the agent's reply (so the first post already
 * runs at the agent's rate); never longer. */
#define QP_AGENT_REPLY_WAIT_NS (200 * QP_NS_PER_MS)

/* At qp_ctx_open, after the rate source: ctx->agent stays NULL when registration is off.
 * 0 or -errno (out of memory, a bad algorithm name or parameters). */
int qp_agent_open(struct qp_ctx *ctx, const struct qp_ctx_attr *attr, char *err, size_t errlen);
void qp_agent_close(struct qp_ctx *ctx);

/* At qp_create: copy and check the QP's registration parameters (qp->attr.agent). */
int qp_agent_qp_init(struct qp *qp, char *err, size_t errlen);
/* At connect: register (waits up to QP_AGENT_REPLY_WAIT_NS for the reply). */
void qp_agent_qp_connected(struct qp *qp);
/* At qp_destroy: unregister (not waiting) and free. */
void qp_agent_qp_fini(struct qp *qp);

/* When qp_agent_run has work next (QP_TIME_NEVER when off or idle). */
qp_time_ns qp_agent_next_ns(const struct qp_ctx *ctx);
/* Read replies, notice a lost agent, (re)connect with backoff, send REGISTER / STATS.
 * Never waits: every socket call is non-blocking. */
void qp_agent_run(struct qp_ctx *ctx, qp_time_ns now);
/* A QP's posted PSN or enforcer changed (verbs/psn.c, verbs/qp_enforce.c): the next
 * TXSTATE round is due at its time (never sooner); cheap. */
void qp_agent_posted(struct qp_ctx *ctx);
/* A signaled send WR (@wr_id, a message of @bytes) handed to the backend, its last piece
 * now; its successful completion (qp_poll): an RTT sample and bytes acknowledged for the
 * agent (qp_agent.c, "Completions"). No-ops for a QP not registered. */
void qp_agent_sent(struct qp *qp, uint64_t wr_id, uint64_t bytes);
void qp_agent_completed(struct qp *qp, uint64_t wr_id);
/* From progress and posting paths: cheap unless something is due (one comparison). */
static inline void qp_agent_tick(struct qp_ctx *ctx, qp_time_ns now)
{
	if (ctx->agent && now >= qp_agent_next_ns(ctx))
		qp_agent_run(ctx, now);
}

/* The registration a connected QP sends: false when it cannot be registered (no IPv4
 * address in a GID). Pure: fields from qp->local/remote, path MTU, the resolved params. */
bool qp_agent_reg_build(const struct qp *qp, struct agent_qp_reg *out);

#endif
