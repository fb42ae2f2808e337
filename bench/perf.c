/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* write_bw, send_bw, write_lat: perftest's tests over the QP API, either backend.
 *
 * As perftest: the server runs with the same options and no address, the client names the
 * server last; the exchange of connection data runs over TCP (-p). The client measures
 * BW (a table row, or one every -D seconds with --run_infinitely); write_lat's client
 * measures half the round trip of a WRITE-with-immediate ping-pong. The end of a test is
 * signalled in band: the client's last message carries an immediate (PERF_IMM_END).
 * With the soft backend this process is an emulated host (--attach, --ip) with its own
 * agent core running --cc, so pacing and feedback are the same as in an incast.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/soft.h"
#include "bench.h"
#include "endpoint.h"
#include "report.h"
#include "stats.h"

#define PERF_TX_DEPTH 128u
#define PERF_IMM_END 0xffffffffu
#define PERF_END_NS (10 * QP_NS_PER_S)
#define PERF_STALL_NS (10 * QP_NS_PER_S)   /* no completion for this long: give up */
#define PERF_MAX_SAMPLES (1u << 20)   /* kept per period in duration mode */

struct perf {
	const struct bench_conf *c;
	struct endpoint e;
	struct qp **qp;              /* e.qp */
	qp_time_ns *done_ns;         /* completion times (BW) */
	double *lat_ns;              /* half round trips (latency) */
	uint64_t ndone;
};

static void perf_info(const struct perf *p, struct report_info *ri)
{
	const struct bench_conf *c = p->c;

	*ri = (struct report_info){
		.verb = c->cmd == CMD_SEND_BW ? "Send" : "RDMA_Write",
		.lat = c->cmd == CMD_WRITE_LAT, .duration = c->duration_ns != 0,
		.device = p->e.soft ? c->ip : (c->ib_dev ? c->ib_dev : "first found"),
		.backend = p->e.soft ? "soft" : "ibv", .cc = c->cc,
		.frames = p->e.soft ? qp_soft_transport(p->e.ctx) : NULL,
		.credits = c->credits == CREDITS_IA, .qps = (unsigned)c->qps,
		.mtu_bytes = p->qp[0] ? p->qp[0]->path_mtu_bytes : 1024, .link_type = "Ethernet",
		.gid_index = p->e.soft ? -1 : (int)c->gid_index, .tx_depth = PERF_TX_DEPTH,
	};
}

/* Client of write_bw/send_bw: keep tx_depth WRs in flight over the QPs until -n are done
 * or -D elapses; one row (or one per period with --run_infinitely). */
static int bw_client(struct perf *p)
{
	const struct bench_conf *c = p->c;
	enum qp_opcode op = c->cmd == CMD_SEND_BW ? QP_OP_SEND : QP_OP_WRITE;
	uint64_t want = c->duration_ns ? UINT64_MAX : c->iters, posted = 0, inflight = 0;
	unsigned nq = (unsigned)c->qps;
	qp_time_ns start = qp_now_ns(), period_end = start + c->duration_ns, last_progress = start;
	uint64_t last_done = 0;
	struct qp_wc wc[32];

	size_t cap = c->duration_ns ? PERF_MAX_SAMPLES : (size_t)c->iters;

	p->done_ns = calloc(cap, sizeof(*p->done_ns));
	if (!p->done_ns)
		return -ENOMEM;
	report_bw_header(stdout, c->report_gbits);
	while (!ep_stop && p->ndone < want) {
		uint64_t turn_done = p->ndone, turn_posted = posted;

		for (unsigned q = 0; q < nq && posted < want && inflight < PERF_TX_DEPTH; q++) {
			struct qp_wr w = { .opcode = op, .wr_id = posted, .mr = p->e.mr, .addr = p->e.buf,
					   .length = (uint32_t)c->size_bytes,
					   .remote_addr = p->qp[q]->remote.addr,
					   .rkey = p->qp[q]->remote.rkey, .flags = QP_WR_SIGNALED };
			int rc = qp_post_send(p->qp[q], &w);
			if (rc == 0) {
				posted++;
				inflight++;
			} else if (rc != -EAGAIN && rc != -ENOMEM) {
				fprintf(stderr, "qpace-bench: post: %s\n", strerror(-rc));
				return rc;
			}
		}
		for (unsigned q = 0; q < nq; q++) {
			int n = qp_poll(p->qp[q], wc, 32);
			for (int k = 0; k < n; k++) {
				if (wc[k].status != QP_WC_SUCCESS) {
					fprintf(stderr, "qpace-bench: completion with error: %s\n",
						qp_wc_status_str(wc[k].status));
					return -EIO;
				}
				inflight--;
				if (p->ndone < cap)
					p->done_ns[p->ndone] = qp_now_ns();
				p->ndone++;
			}
		}
		ep_service(&p->e);
		ep_idle(&p->e, p->ndone != turn_done || posted != turn_posted);
		qp_time_ns now = qp_now_ns();
		if (p->ndone != last_done) {
			last_done = p->ndone;
			last_progress = now;
		} else if (now - last_progress > PERF_STALL_NS) {
			struct qp_stats st;
			qp_get_stats(p->qp[0], &st);
			fprintf(stderr, "qpace-bench: no completion for %llu s (%" PRIu64 " of %" PRIu64
				" posted done; retransmissions %" PRIu64 ", timeouts %" PRIu64 ")\n",
				(unsigned long long)(PERF_STALL_NS / QP_NS_PER_S), p->ndone, posted,
				st.retransmissions, st.timeouts);
			return -ETIMEDOUT;
		}
		if (c->duration_ns && now >= period_end) {
			struct stats_bw bw;
			size_t n = p->ndone < cap ? (size_t)p->ndone : cap;
			stats_bw(p->done_ns, n, start, c->size_bytes, PERF_TX_DEPTH,
				 c->report_gbits, &bw);
			report_bw_row(stdout, c->size_bytes, p->ndone, &bw, c->report_gbits);
			if (!c->run_infinitely)
				break;
			p->ndone = 0;
			start = now;
			period_end = now + c->duration_ns;
		}
	}
	while (inflight && !ep_stop) {               /* drain, then tell the server */
		uint64_t before = inflight;

		for (unsigned q = 0; q < nq; q++)
			inflight -= (uint64_t)(qp_poll(p->qp[q], wc, 32) > 0 ? 1 : 0);
		ep_service(&p->e);
		ep_idle(&p->e, inflight != before);
	}
	if (!c->duration_ns) {
		struct stats_bw bw;
		stats_bw(p->done_ns, (size_t)p->ndone, start, c->size_bytes, PERF_TX_DEPTH,
			 c->report_gbits, &bw);
		report_bw_row(stdout, c->size_bytes, p->ndone, &bw, c->report_gbits);
		if (c->out_json) {
			struct report_info ri;
			perf_info(p, &ri);
			report_json_bw(c->out_json_file, &ri, c->size_bytes, p->ndone, &bw,
				       c->report_gbits);
		}
	}
	for (unsigned q = 0; q < nq; q++) {
		enum qp_opcode end = op == QP_OP_SEND ? QP_OP_SEND_IMM : QP_OP_WRITE_IMM;
		if (ep_post_send(&p->e, p->qp[q], end, 0, PERF_IMM_END, UINT64_MAX) == 0)
			ep_wait_wc(&p->e, p->qp[q], wc, PERF_END_NS);
	}
	return 0;
}

/* Server of write_bw/send_bw: receive until each QP's end marker. */
static int bw_server(struct perf *p)
{
	const struct bench_conf *c = p->c;
	unsigned nq = (unsigned)c->qps, ended = 0;
	struct qp_wc wc[32];

	for (unsigned q = 0; q < nq; q++)
		for (unsigned k = 0; k < (c->cmd == CMD_SEND_BW ? PERF_TX_DEPTH : 1); k++)
			ep_post_recv(&p->e, p->qp[q], c->cmd == CMD_SEND_BW ? k * c->size_bytes : 0,
				     (uint32_t)c->size_bytes);
	report_bw_header(stdout, c->report_gbits);
	while (ended < nq && !ep_stop) {
		bool worked = false;

		for (unsigned q = 0; q < nq; q++) {
			int n = qp_poll(p->qp[q], wc, 32);
			worked |= n > 0;
			for (int k = 0; k < n; k++) {
				if (wc[k].status != QP_WC_SUCCESS) {
					fprintf(stderr, "qpace-bench: client %u lost: %s; the others go "
						"on\n", q, qp_wc_status_str(wc[k].status));
					ended++;
					continue;
				}
				if (wc[k].has_imm && wc[k].imm == PERF_IMM_END)
					ended++;
				else if (wc[k].opcode == QP_WC_RECV)
					ep_post_recv(&p->e, p->qp[q], wc[k].wr_id,
						     (uint32_t)c->size_bytes);
			}
		}
		ep_service(&p->e);
		ep_idle(&p->e, worked);
	}
	return 0;
}

/* write_lat: ping-pong of WRITE with immediate; the client keeps half round trips. */
static int lat_run(struct perf *p)
{
	const struct bench_conf *c = p->c;
	struct qp *qp = p->qp[0];
	uint64_t iters = c->duration_ns ? UINT64_MAX : c->iters;
	qp_time_ns end = c->duration_ns ? qp_now_ns() + c->duration_ns : QP_TIME_NEVER;
	struct qp_wc wc;
	bool client = c->server != NULL;

	size_t cap = c->duration_ns ? PERF_MAX_SAMPLES : (size_t)c->iters;

	p->lat_ns = calloc(cap, sizeof(*p->lat_ns));
	if (!p->lat_ns)
		return -ENOMEM;
	for (unsigned k = 0; k < 8; k++)
		ep_post_recv(&p->e, qp, 0, (uint32_t)c->size_bytes);
	uint64_t i;
	for (i = 0; i < iters && !ep_stop && qp_now_ns() < end; i++) {
		qp_time_ns t0 = qp_now_ns();
		if (client && ep_post_send(&p->e, qp, QP_OP_WRITE_IMM, (uint32_t)c->size_bytes, (uint32_t)i, i))
			break;
		/* Our own send completion and the peer's message, in either order. */
		int got = 0;
		while (got == 0 && !ep_stop) {
			if (ep_wait_wc(&p->e, qp, &wc, PERF_END_NS))
				return -EIO;
			if (wc.opcode == QP_WC_RECV_WRITE_IMM) {
				got = 1;
				ep_post_recv(&p->e, qp, 0, (uint32_t)c->size_bytes);
				if (wc.imm == PERF_IMM_END)
					return 0;
			}
		}
		if (!client &&
		    ep_post_send(&p->e, qp, QP_OP_WRITE_IMM, (uint32_t)c->size_bytes, (uint32_t)i, i))
			break;
		if (client && i < cap)
			p->lat_ns[i] = (double)(qp_now_ns() - t0) / 2;
	}
	if (!client)
		return 0;
	ep_post_send(&p->e, qp, QP_OP_WRITE_IMM, 0, PERF_IMM_END, UINT64_MAX);
	struct stats_lat l;
	size_t n = i < cap ? (size_t)i : cap;
	report_lat_header(stdout, c->duration_ns != 0);
	if (c->duration_ns) {
		double sum = 0;
		for (size_t k = 0; k < n; k++)
			sum += p->lat_ns[k];
		report_lat_dur_row(stdout, c->size_bytes, i, n ? sum / (double)n / 1e3 : 0,
				   (double)i / ((double)c->duration_ns / 1e9));
	} else if (stats_lat_summary(p->lat_ns, n, &l) == 0) {
		report_lat_row(stdout, c->size_bytes, i, &l);
		if (c->out_json) {
			struct report_info ri;
			perf_info(p, &ri);
			report_json_lat(c->out_json_file, &ri, c->size_bytes, i, &l);
		}
	}
	return 0;
}

int bench_perf(const struct bench_conf *c)
{
	struct perf p = { .c = c };
	struct report_info ri;
	size_t buf = (size_t)c->size_bytes * (c->cmd == CMD_SEND_BW ? PERF_TX_DEPTH : 1);
	unsigned nq = c->cmd & CMD_BW ? (unsigned)c->qps : 1;
	char err[512];
	int rc = -1;

	p.qp = p.e.qp;
	if (ep_open(&p.e, c, buf, err, sizeof(err)) ||
	    ep_connect(&p.e, nq, PERF_TX_DEPTH + 1, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench %s: %s\n", bench_cmd_name(c->cmd), err);
		goto out;
	}
	perf_info(&p, &ri);
	report_banner(stdout, &ri);
	report_addresses(stdout, &p.qp[0]->local, &p.qp[0]->remote);
	if (c->cmd == CMD_WRITE_LAT)
		rc = lat_run(&p);
	else
		rc = c->server ? bw_client(&p) : bw_server(&p);
	fputs(REPORT_LINE, stdout);
out:
	free(p.done_ns);
	free(p.lat_ns);
	ep_close(&p.e);
	return rc;
}
