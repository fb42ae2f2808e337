/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The data phases of the perftest-style commands (perf.h), as perftest runs them:
 *
 *   BW       each sending QP keeps -t WRs in flight until it has completed -n (or -D
 *            runs out); a SEND receiver keeps up to 512 receives posted, never more than
 *            the -n it will get, so none is left when the client's last one arrives (the
 *            next size's receives are posted fresh). BW over [first post, last
 *            completion], its peak over any -t consecutive completions (stats_bw).
 *   latency  one WR at a time. READ and atomics: the client's round trip, whole (perftest's
 *            rtt_factor 1). SEND: a ping-pong of SENDs, half the round trip. WRITE: the
 *            ping-pong perftest's ib_write_lat runs, through memory: each side writes the
 *            message into the peer's exposed area with its last byte the iteration's
 *            number, and waits for the peer's to land in its own (the client waits first);
 *            half the time between two of its posts.
 * Addresses: QP q's local buffer and the peer's exposed area of q at offset 0 (perftest
 * cycles within a page; one place serves the same). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"
#include "report.h"

#define PERF_POLL 32

struct perf_qstate {
	uint64_t posted, done;       /* sends */
	uint64_t rposted, rdone;     /* receives */
};

static int grow(struct perf *p, size_t n)
{
	if (p->cap >= n)
		return 0;
	free(p->done_ns);
	free(p->lat_ns);
	p->done_ns = calloc(n, sizeof(*p->done_ns));
	p->lat_ns = calloc(n, sizeof(*p->lat_ns));
	p->cap = n;
	return p->done_ns && p->lat_ns ? 0 : -ENOMEM;
}

static int post_data(struct perf *p, unsigned q, uint64_t wr_id)
{
	struct qp *qp = p->e.qp[q];
	struct qp_wr w = { .opcode = p->cmd->op, .wr_id = wr_id, .mr = p->e.mr,
			   .addr = perf_local(p, q), .length = (uint32_t)p->size,
			   .remote_addr = qp->remote.addr, .rkey = qp->remote.rkey,
			   .compare_add = 1, .flags = QP_WR_SIGNALED };

	return qp_post_send(qp, &w);
}

static int post_recv(struct perf *p, unsigned q)
{
	return qp_post_recv(p->e.qp[q], &(struct qp_recv_wr){ .wr_id = q, .mr = p->e.mr,
							      .addr = perf_local(p, q),
							      .length = (uint32_t)p->area });
}

int perf_post_recvs(struct perf *p)
{
	uint64_t want = p->c->duration_ns ? PERF_RX_DEPTH
		      : (p->c->iters < PERF_RX_DEPTH ? p->c->iters : PERF_RX_DEPTH);

	if (!p->receives)
		return 0;
	for (unsigned q = 0; q < p->nq; q++)
		for (uint64_t k = 0; k < want; k++) {
			int rc = post_recv(p, q);

			if (rc)
				return rc;
		}
	return 0;
}

static bool stalled(struct perf *p, uint64_t progress, uint64_t *last, qp_time_ns *at)
{
	qp_time_ns now = qp_now_ns();
	struct qp_stats st;

	if (progress != *last) {
		*last = progress;
		*at = now;
		return false;
	}
	if (now - *at <= PERF_STALL_NS)
		return false;
	qp_get_stats(p->e.qp[0], &st);
	fprintf(stderr, "qpace-bench: no completion for %llu s (retransmissions %" PRIu64
		", timeouts %" PRIu64 ")\n", (unsigned long long)(PERF_STALL_NS / QP_NS_PER_S),
		st.retransmissions, st.timeouts);
	return true;
}

/* This side's row from @n completion times since @start. */
static void bw_row(struct perf *p, size_t n, qp_time_ns start, bool print)
{
	const struct bench_conf *c = p->c;

	stats_bw(p->done_ns, n, start, p->size, (size_t)c->tx_depth, c->report_gbits, &p->bw);
	p->bw_iters = n;
	if (print)
		report_bw_row(stdout, p->size, n, &p->bw, c->report_gbits);
}

int perf_run_bw(struct perf *p)
{
	const struct bench_conf *c = p->c;
	uint64_t iters = c->iters, total = 0, last = 0;
	struct perf_qstate qs[EP_MAX_QPS];
	/* this side prints its own row unless -b (the sum, after the reports) or it only
	 * answers (a one-sided server prints the client's) */
	bool print = !c->duplex, count_sends = p->sends;
	qp_time_ns start = qp_now_ns(), end = start + c->duration_ns, at = start;
	struct qp_wc wc[PERF_POLL];
	int rc = grow(p, c->duration_ns ? PERF_MAX_SAMPLES : (size_t)(iters * p->nq));

	if (rc)
		return rc;
	memset(qs, 0, sizeof(qs));
	if (p->receives)   /* P posted them */
		for (unsigned q = 0; q < p->nq; q++)
			qs[q].rposted = c->duration_ns ? PERF_RX_DEPTH
				      : (iters < PERF_RX_DEPTH ? iters : PERF_RX_DEPTH);
	for (;;) {
		bool worked = false, finished = true;

		for (unsigned q = 0; q < p->nq && p->sends; q++)
			while (qs[q].posted - qs[q].done < c->tx_depth &&
			       (c->duration_ns || qs[q].posted < iters)) {
				rc = post_data(p, q, qs[q].posted);
				if (rc == -EAGAIN || rc == -ENOMEM)
					break;
				if (rc)
					return rc;
				qs[q].posted++;
				worked = true;
			}
		for (unsigned q = 0; q < p->nq; q++) {
			int n = qp_poll(p->e.qp[q], wc, PERF_POLL);

			for (int k = 0; k < n; k++) {
				bool recv = qp_wc_is_recv(wc[k].opcode);

				if (wc[k].status != QP_WC_SUCCESS) {
					fprintf(stderr, "qpace-bench: QP %u: completion with error: %s\n",
						q, qp_wc_status_str(wc[k].status));
					return -EIO;
				}
				if (recv) {
					qs[q].rdone++;
					if ((c->duration_ns || qs[q].rposted < iters) &&
					    (rc = post_recv(p, q)) == 0)
						qs[q].rposted++;
				} else {
					qs[q].done++;
				}
				if (recv != count_sends && total < p->cap)
					p->done_ns[total++] = qp_now_ns();
				else if (recv != count_sends)
					total++;
			}
			worked |= n > 0;
			if (p->sends && qs[q].done < iters)
				finished = false;
			if (p->receives && qs[q].rdone < iters)
				finished = false;
		}
		ep_service(&p->e);
		ep_idle(&p->e, worked);
		if (ep_stop)
			return -EINTR;
		if (c->duration_ns && qp_now_ns() >= end) {
			bw_row(p, total < p->cap ? (size_t)total : p->cap, start, print);
			if (!c->run_infinitely)
				return 0;
			total = 0;
			start = qp_now_ns();
			end = start + c->duration_ns;
			continue;
		}
		if (!c->duration_ns && finished)
			break;
		if (stalled(p, total, &last, &at))
			return -ETIMEDOUT;
	}
	bw_row(p, (size_t)total, start, print);
	if (print && p->sends && c->out_json)
		report_json_bw(c->out_json_file, &p->ri, p->size, total, &p->bw, c->report_gbits);
	return 0;
}

/* ---- latency ---- */

/* Wait until @sends of this side's WRs and @recvs receives of QP 0 have completed, in any
 * order (a SEND's answer may overtake its own completion). */
static int wait_done(struct perf *p, unsigned sends, unsigned recvs)
{
	struct qp_wc wc;

	while (sends || recvs) {
		int rc = ep_wait_wc(&p->e, p->e.qp[0], &wc, PERF_STALL_NS);

		if (rc)
			return rc;
		if (qp_wc_is_recv(wc.opcode))
			recvs -= recvs > 0;
		else
			sends -= sends > 0;
	}
	return 0;
}

/* Post one data WR on QP 0; while the send queue is full, take a completion of ours
 * (@unreaped: posted and not yet taken). */
static int post_one(struct perf *p, uint64_t wr_id, unsigned *unreaped)
{
	int rc;

	while ((rc = post_data(p, 0, wr_id)) == -EAGAIN || rc == -ENOMEM) {
		if (*unreaped) {
			if ((rc = wait_done(p, 1, 0)))
				return rc;
			(*unreaped)--;
		}
		ep_service(&p->e);
		if (ep_stop)
			return -EINTR;
	}
	*unreaped += rc == 0;
	return rc;
}

/* WRITE: perftest's memory ping-pong. */
static int lat_write(struct perf *p, uint64_t iters, qp_time_ns end, uint64_t *done)
{
	volatile uint8_t *poll = perf_exposed(p, 0) + p->size - 1;
	uint8_t *post = perf_local(p, 0) + p->size - 1;
	bool server = p->c->server == NULL;   /* it sends first, as perftest's */
	uint64_t scnt = 0, rcnt = 0;
	unsigned unreaped = 0;
	qp_time_ns prev = 0;

	while ((scnt < iters || rcnt < iters) && qp_now_ns() < end) {
		if (rcnt < iters && !(scnt < 1 && server)) {
			qp_time_ns give_up = qp_now_ns() + PERF_STALL_NS;
			struct qp_wc wc[PERF_POLL];

			rcnt++;
			while (*poll != (uint8_t)rcnt) {
				int n = qp_poll(p->e.qp[0], wc, PERF_POLL);

				if (n < 0 || ep_stop || qp_now_ns() > give_up)
					return ep_stop ? -EINTR : n < 0 ? n : -ETIMEDOUT;
				for (int k = 0; k < n; k++)
					if (wc[k].status != QP_WC_SUCCESS)
						return -EIO;
				unreaped -= (unsigned)n < unreaped ? (unsigned)n : unreaped;
				ep_service(&p->e);
				ep_idle(&p->e, n > 0);   /* the peer's WRITE lands when a frame comes */
			}
		}
		if (scnt < iters) {
			qp_time_ns now = qp_now_ns();
			int rc;

			if (prev && scnt - 1 < p->cap)
				p->lat_ns[scnt - 1] = (double)(now - prev) / 2;
			prev = now;
			*post = (uint8_t)++scnt;
			if ((rc = post_one(p, scnt, &unreaped)))
				return rc;
		}
	}
	*done = scnt;   /* its samples: the gaps between them, one fewer */
	return 0;
}

int perf_run_lat(struct perf *p)
{
	const struct bench_conf *c = p->c;
	uint64_t iters = c->duration_ns ? UINT64_MAX : c->iters, i = 0;
	qp_time_ns end = c->duration_ns ? qp_now_ns() + c->duration_ns : QP_TIME_NEVER;
	bool client = c->server != NULL, one_sided = qp_op_is_rd_atomic(p->cmd->op);
	unsigned unreaped = 0;
	qp_time_ns t_start = qp_now_ns();
	struct stats_lat l;
	size_t n;
	int rc = grow(p, c->duration_ns ? PERF_MAX_SAMPLES : (size_t)c->iters);

	if (rc)
		return rc;
	if (p->cmd->op == QP_OP_WRITE) {
		rc = lat_write(p, iters, end, &i);
	} else {
		for (i = 0; i < iters && !ep_stop && qp_now_ns() < end; i++) {
			qp_time_ns t0 = qp_now_ns();

			/* READ, atomics: the client's WR and its answer. SEND: the client's
			 * message and the server's back (the server waits for it first). */
			if (!client && !one_sided && (rc = wait_done(p, 0, 1)))
				break;
			if (!one_sided && (rc = post_recv(p, 0)))
				break;
			if ((rc = post_one(p, i, &unreaped)) ||
			    (rc = wait_done(p, 1, client && !one_sided ? 1 : 0)))
				break;
			unreaped--;
			if (i < p->cap)
				p->lat_ns[i] = (double)(qp_now_ns() - t0) / (one_sided ? 1 : 2);
		}
	}
	if (rc)
		return rc;
	if (!client && one_sided)   /* the ping-pongs' servers time their side too */
		return 0;
	n = i < p->cap ? (size_t)i : p->cap;
	if (p->cmd->op == QP_OP_WRITE && n == i)
		n -= n > 0;   /* lat_write: a sample per pair of posts */
	if (c->duration_ns) {
		double secs = (double)(qp_now_ns() - t_start) / 1e9, sum = 0;

		for (size_t k = 0; k < n; k++)
			sum += p->lat_ns[k];
		report_lat_dur_row(stdout, p->size, i, n ? sum / (double)n / 1e3 : 0,
				   secs > 0 ? (double)i / secs : 0);
	} else if (stats_lat_summary(p->lat_ns, n, &l) == 0) {
		report_lat_row(stdout, p->size, i, &l);
		if (c->out_json)
			report_json_lat(c->out_json_file, &p->ri, p->size, i, &l);
	}
	return 0;
}
