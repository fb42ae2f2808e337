/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The networked incast: the receiver and its N senders in separate processes, perftest
 * style (the receiver with no address accepts N clients on -p; each sender names it last).
 * For ibv (Soft-RoCE guests, NICs) and for soft hosts attached to a running switch.
 *
 * Round r: the receiver SENDs each live sender an immediate "go r"; the sender WRITEs its
 * S bytes, the last WRITE carrying the immediate r | its retransmissions << 16 | its
 * timeouts << 24 (each clamped to 255); the receiver's FCT for that flow is from its "go"
 * to that immediate. A sender whose QP fails is reported by address and dropped; the
 * others go on. No switch figures (null in -j): the switch is someone else's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/bytes.h"
#include "endpoint.h"
#include "incast.h"

#define NET_WR_BYTES (64u * 1024)
#define NET_SQ_DEPTH 64u
#define NET_IMM_ROUND 0xffffu

static uint32_t clamp8(uint64_t v)
{
	return v > 255 ? 255 : (uint32_t)v;
}

static void peer_str(const struct qp *qp, char *buf, size_t len)
{
	char ip[QP_IPV4_STRLEN];

	snprintf(buf, len, "%s qpn %#x", qp_ipv4_fmt(qp_get32(qp->remote.gid + 12), ip, sizeof(ip)),
		 qp->remote.qpn);
}

/* Sender: wait for each round's "go", write, report through the immediate. */
static int net_sender(struct endpoint *e, const struct bench_conf *c)
{
	struct qp *qp = e->qp[0];
	uint32_t wr = (uint32_t)(c->size_bytes < NET_WR_BYTES ? c->size_bytes : NET_WR_BYTES);
	struct qp_stats base, st;
	struct qp_wc wc;
	uint64_t posted = 0, completed = 0;   /* our WRITEs (each signals its completion) */

	for (int k = 0; k < 4; k++)
		ep_post_recv(e, qp, 0, 0);
	for (uint64_t r = 0; r < c->rounds && !ep_stop; r++) {
		int rc;
		do {                                  /* the go (count our own completions) */
			rc = ep_wait_wc(e, qp, &wc, c->round_timeout_ns + 30 * QP_NS_PER_S);
			completed += rc == 0 && wc.opcode != QP_WC_RECV;
		} while (rc == 0 && wc.opcode != QP_WC_RECV);
		if (rc)
			return fprintf(stderr, "qpace-bench incast: no go from the receiver for round "
				       "%" PRIu64 " (%s)\n", r, strerror(-rc)), -1;
		ep_post_recv(e, qp, 0, 0);
		qp_get_stats(qp, &base);
		uint64_t left = c->size_bytes;
		while (left > wr && !ep_stop) {
			if ((rc = ep_post_send(e, qp, QP_OP_WRITE, wr, 0, 0)) < 0)
				return fprintf(stderr, "qpace-bench incast: post: %s\n", strerror(-rc)), -1;
			left -= wr;
			posted++;
		}
		qp_get_stats(qp, &st);   /* retransmissions so far this round */
		uint32_t imm = (uint32_t)(r & NET_IMM_ROUND) |
			       clamp8(st.retransmissions - base.retransmissions) << 16 |
			       clamp8(st.timeouts - base.timeouts) << 24;
		if ((rc = ep_post_send(e, qp, QP_OP_WRITE_IMM, (uint32_t)left, imm, 1)) < 0)
			return fprintf(stderr, "qpace-bench incast: post: %s\n", strerror(-rc)), -1;
		posted++;
	}
	/* Every WRITE must complete before the QP goes away: the last one may still be in the
	 * gate or waiting for a retry (an ACK timeout can exceed any fixed quiet time). */
	while (completed < posted && ep_wait_wc(e, qp, &wc, c->round_timeout_ns) == 0)
		completed += wc.opcode != QP_WC_RECV;
	if (completed < posted && !ep_stop)
		fprintf(stderr, "qpace-bench incast: %" PRIu64 " of %" PRIu64 " WRITEs did not "
			"complete\n", posted - completed, posted);
	return 0;
}

/* Receiver: one "go" per round, FCT per sender, the totals. */
static int net_receiver(struct endpoint *e, const struct bench_conf *c)
{
	uint64_t n = e->nqps;
	struct incast_run run = { 0 };
	qp_time_ns *round_ns = calloc(c->rounds, sizeof(*round_ns));
	bool *lost = calloc(n, sizeof(*lost));
	struct incast_result *res = &run.res;
	char who[64];

	run.flows = calloc(n * c->rounds, sizeof(*run.flows));
	if (!round_ns || !lost || !run.flows) {
		free(round_ns);
		free(lost);
		free(run.flows);
		return fprintf(stderr, "qpace-bench incast: out of memory\n"), -1;
	}
	*res = (struct incast_result){ .credits = c->credits == CREDITS_IA, .senders = n,
				       .bytes_per_sender = c->size_bytes, .link_bps = c->link_bps,
				       .mtu_bytes = e->qp[0]->path_mtu_bytes,
				       .buffer_bytes = c->buffer_bytes,
				       .qp_timeout = ep_ack_timeout(c) };
	snprintf(res->algorithm, sizeof(res->algorithm), "%s%s", c->cc,
		 c->credits == CREDITS_IA ? "+ia" : "");
	snprintf(res->cc, sizeof(res->cc), "%s", c->cc);
	for (uint64_t q = 0; q < n; q++)
		for (int k = 0; k < 4; k++)
			ep_post_recv(e, e->qp[q], 0, 0);
	uint64_t r;
	for (r = 0; r < c->rounds && !ep_stop; r++) {
		struct incast_flow *f = &run.flows[r * n];
		qp_time_ns start = qp_now_ns(), limit = start + c->round_timeout_ns, end = start;
		uint64_t pending = 0;
		for (uint64_t q = 0; q < n; q++) {
			f[q] = (struct incast_flow){ .round = (uint32_t)r, .sender = (uint32_t)q + 1,
						     .bytes = c->size_bytes };
			if (!lost[q] && ep_post_send(e, e->qp[q], QP_OP_SEND_IMM, 0, (uint32_t)r, r) == 0)
				pending++;
		}
		while (pending && !ep_stop && qp_now_ns() < limit) {
			for (uint64_t q = 0; q < n; q++) {
				struct qp_wc wc[8];
				int got = lost[q] ? 0 : qp_poll(e->qp[q], wc, 8);
				for (int k = 0; k < got; k++) {
					if (wc[k].status != QP_WC_SUCCESS) {
						peer_str(e->qp[q], who, sizeof(who));
						fprintf(stderr, "qpace-bench incast: lost sender %" PRIu64
							" (%s): %s; the others go on\n", q + 1, who,
							qp_wc_status_str(wc[k].status));
						lost[q] = true;
						pending -= !f[q].done;
						break;
					}
					if (wc[k].opcode != QP_WC_RECV_WRITE_IMM ||
					    (wc[k].imm & NET_IMM_ROUND) != (r & NET_IMM_ROUND))
						continue;
					ep_post_recv(e, e->qp[q], 0, 0);
					end = qp_now_ns();
					f[q].done = true;
					f[q].fct_ns = end - start;
					f[q].retransmits = wc[k].imm >> 16 & 0xff;
					f[q].timeouts = wc[k].imm >> 24;
					pending--;
				}
			}
			ep_service(e);
			ep_idle(e, false);   /* the host's frames tell it whether work moved */
		}
		round_ns[r] = (pending ? qp_now_ns() : end) - start;
	}
	res->rounds = r;
	run.nflows = (size_t)(r * n);
	incast_summarize(res, run.flows, run.nflows, round_ns, (uint32_t)r, 0);
	if (c->json)
		incast_print_json(stdout, res, false);
	else
		incast_print_text(stdout, res, run.flows, run.nflows);
	free(round_ns);
	free(lost);
	incast_run_free(&run);
	return 0;
}

int incast_net(const struct bench_conf *c)
{
	struct endpoint e;
	size_t wr = c->size_bytes < NET_WR_BYTES ? (size_t)c->size_bytes : NET_WR_BYTES;
	char err[512];
	int rc = -1;

	if (ep_open(&e, c, wr, err, sizeof(err)) ||
	    ep_connect(&e, c->server ? 1 : (unsigned)c->senders, NET_SQ_DEPTH, err, sizeof(err)))
		fprintf(stderr, "qpace-bench incast: %s\n", err);
	else
		rc = c->server ? net_sender(&e, c) : net_receiver(&e, c);
	ep_close(&e);
	return rc;
}
