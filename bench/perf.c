/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The perftest-style commands: write_bw, send_bw, read_bw, atomic_bw, write_lat, send_lat,
 * read_lat, atomic_lat. One table (perf_cmds) says what each posts and which exchanges
 * perftest's program of the same name runs; one driver runs them, so each command pairs
 * with its perftest counterpart both ways (qpace-bench client to an ib_read_bw server and
 * the reverse) and with itself.
 *
 * As perftest: the server runs with the same options and no address, the client names the
 * server last; the exchange runs over TCP (-p) in perftest's format (pt_conn.c). The
 * client measures; a one-sided BW test's server prints the client's report. The data
 * phases are perf_run.c's. With the soft backend this process is an emulated host
 * (--attach, --ip) with its own agent core running --cc, so pacing and feedback are the
 * same as in an incast.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/soft.h"
#include "perf.h"
#include "report.h"

static const struct perf_cmd perf_cmds[] = {
	{ CMD_WRITE_BW, "RDMA_Write", QP_OP_WRITE, false, "KCKH", "HRX", "*HRX", "H*RX", "", "" },
	{ CMD_READ_BW, "RDMA_Read", QP_OP_READ, false, "KCKH", "HRX", "*HRX", "H*RX", "", "" },
	{ CMD_ATOMIC_BW, "Atomic FETCH_AND_ADD", QP_OP_FETCH_ADD, false, "KCKH", "HRX", "*HRX", "H*RX", "", "" },
	{ CMD_SEND_BW, "Send", QP_OP_SEND, false, "KCHK", "PH*X", "H*X", "PH*RX", "PH", "H" },
	{ CMD_WRITE_LAT, "RDMA_Write", QP_OP_WRITE, true, "HKCKH", "*X", "*X", NULL, "", "" },
	{ CMD_READ_LAT, "RDMA_Read", QP_OP_READ, true, "HKCKH", "X", "*X", NULL, "", "" },
	{ CMD_ATOMIC_LAT, "Atomic FETCH_AND_ADD", QP_OP_FETCH_ADD, true, "HKCKH", "X", "*X", NULL, "", "" },
	{ CMD_SEND_LAT, "Send", QP_OP_SEND, true, "KCHK", "PH*X", "PH*X", NULL, "PH", "" },
};

static const struct perf_cmd *cmd_of(unsigned cmd)
{
	for (size_t i = 0; i < sizeof(perf_cmds) / sizeof(perf_cmds[0]); i++)
		if (perf_cmds[i].cmd == cmd)
			return &perf_cmds[i];
	return NULL;
}

static void perf_info(const struct perf *p, struct report_info *ri)
{
	const struct bench_conf *c = p->c;

	*ri = (struct report_info){
		.verb = p->cmd->verb, .lat = p->cmd->lat, .duration = c->duration_ns != 0,
		.device = p->e.soft ? c->ip : (c->ib_dev ? c->ib_dev : "first found"),
		.backend = p->e.soft ? "soft" : "ibv", .cc = c->cc,
		.frames = p->e.soft ? qp_soft_transport(p->e.ctx) : NULL,
		.credits = c->credits == CREDITS_IA, .qps = p->nq,
		.mtu_bytes = p->pt.mtu_bytes,
		.link_type = "Ethernet", .gid_index = p->e.soft ? -1 : (int)c->gid_index,
		.tx_depth = (unsigned)c->tx_depth,
		.outs = (c->cmd & CMD_RD) ? (unsigned)c->outs : 0,
	};
}

/* ---- the connection ---- */

static struct qp_attr perf_qp_attr(const struct perf *p)
{
	const struct bench_conf *c = p->c;
	struct qp_attr qa = { .sq_depth = (uint32_t)c->tx_depth + 1,
			      .rq_depth = p->cmd->op == QP_OP_SEND ? PERF_RX_DEPTH + 2
								   : (uint32_t)c->tx_depth + 1,
			      .timeout = ep_ack_timeout(c),
			      .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL,
			      .max_dest_rd_atomic = (uint8_t)c->outs,
			      .max_rd_atomic = QP_RD_ATOMIC_MAX };   /* lowered at connect */

	if (c->backend == BACKEND_IBV) {
		qa.gate.stale_ns = EP_IBV_STALE_NS;   /* see ep_connect */
		qa.max_rd_atomic = (uint8_t)c->outs;  /* the device's limits apply */
	}
	qa.gate.safe_permille = c->fallback_safe_permille;
	return qa;
}

/* QP @q's key: what perftest's set_up_connection fills. */
static void perf_key(struct perf *p, unsigned q)
{
	const struct qp *qp = p->e.qp[q];

	p->mine[q] = (struct pt_key){
		.lid = qp->local.lid,
		.out_reads = (p->c->cmd & CMD_RD) ? (uint16_t)p->c->outs : 1,
		.qpn = qp->local.qpn, .psn = qp->local.psn, .rkey = p->e.mr->rkey,
		.vaddr = (uint64_t)(uintptr_t)perf_exposed(p, q),
	};
	memcpy(p->mine[q].gid, qp->local.gid, sizeof(p->mine[q].gid));
}

static int create_qps(struct perf *p, char *err, size_t errlen)
{
	const struct bench_conf *c = p->c;
	struct qp_attr qa = perf_qp_attr(p);
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%" PRIu64, c->tcp_port);
	for (unsigned q = 0; q < p->nq; q++) {
		if (c->rdma_cm)   /* connected here already: C is then a no-op */
			rc = c->server ? qp_dial_cm(p->e.ctx, &qa, c->server, port, p->e.mr,
						    &p->e.qp[q], err, errlen)
				       : qp_accept_cm(p->e.ctx, &qa, NULL, port, p->e.mr,
						      &p->e.qp[q], err, errlen);
		else
			rc = qp_create(p->e.ctx, &qa, &p->e.qp[q], err, errlen);
		if (rc)
			return rc;
		p->e.nqps = q + 1;
		perf_key(p, q);
	}
	return 0;
}

/* Step C: each QP to RTS towards the peer's key, and into the host's agent. */
static int connect_qps(struct perf *p, char *err, size_t errlen)
{
	const struct bench_conf *c = p->c;

	for (unsigned q = 0; q < p->nq; q++) {
		struct qp *qp = p->e.qp[q];
		const struct pt_key *k = &p->theirs[q];
		struct qp_conn_info r = { .qpn = k->qpn, .psn = k->psn, .lid = k->lid,
					  .mtu_bytes = p->pt.mtu_bytes, .rkey = k->rkey,
					  .addr = k->vaddr, .len = p->area };
		int rc;

		memcpy(r.gid, k->gid, sizeof(r.gid));
		if (!c->rdma_cm) {
			/* the peer serves out_reads of ours at once (perftest's max_rd_atomic) */
			unsigned outs = k->out_reads ? k->out_reads : 1;

			if (outs < qp->attr.max_rd_atomic)
				qp->attr.max_rd_atomic = (uint8_t)outs;
			if ((rc = qp_connect(qp, &r, err, errlen)))
				return rc;
		} else {
			qp->remote.rkey = r.rkey;
			qp->remote.addr = r.addr;
		}
		if (p->e.soft) {
			qp_rate_bps line = (qp_rate_bps)stats_payload_bps(
				c->link_bps, qp->path_mtu_bytes, STATS_ROCE_PKT_OVERHEAD);

			if ((rc = host_register(&p->e.host, qp, line, 50 * QP_NS_PER_US,
						!p->sends, NULL, NULL, qp_now_ns(), err, errlen)))
				return rc;
		}
	}
	return 0;
}

/* ---- the steps ---- */

/* The row a one-sided BW server prints: the client's report (perftest prints the remote
 * report there), or with -b the sum of both sides'. */
static void print_report_row(const struct perf *p, const struct pt_bw_report *r, bool sum)
{
	struct stats_bw bw = { .peak = r->bw_peak, .avg = r->bw_avg, .msg_rate_mpps = r->msg_rate };

	if (sum) {
		bw.peak += p->bw.peak;
		bw.avg += p->bw.avg;
		bw.msg_rate_mpps += p->bw.msg_rate_mpps;
	}
	report_bw_row(stdout, r->size, r->iters, &bw, p->c->report_gbits);
}

static int step_report(struct perf *p, char *err, size_t errlen)
{
	struct pt_bw_report mine = { .size = p->size, .iters = p->bw_iters,
				     .bw_peak = p->bw.peak, .bw_avg = p->bw.avg,
				     .msg_rate = p->bw.msg_rate_mpps }, theirs;
	int rc = pt_conn_report(&p->pt, &mine, &theirs, err, errlen);

	if (rc)
		return rc;
	if (p->c->duplex) {
		print_report_row(p, &theirs, true);
	} else if (!p->sends) {   /* the server of a one-way test: the client's row */
		if (!p->headed)
			report_bw_header(stdout, p->c->report_gbits);
		p->headed = true;
		print_report_row(p, &theirs, false);
	}
	return 0;
}

static int run_steps(struct perf *p, const char *steps, char *err, size_t errlen);

/* Step *: the data phase; with -a every size, with the command's steps between them. */
static int step_run(struct perf *p, char *err, size_t errlen)
{
	const struct bench_conf *c = p->c;
	int lo = c->all_sizes ? 1 : 0, hi = c->all_sizes ? PERF_ALL_MAX_LOG2 : 0, rc = 0;

	if (p->cmd->lat)
		report_lat_header(stdout, c->duration_ns != 0);
	else
		report_bw_header(stdout, c->report_gbits);
	for (int k = lo; k <= hi && rc == 0 && !ep_stop; k++) {
		if (k > lo && (rc = run_steps(p, p->cmd->before, err, errlen)))
			return rc;
		p->size = c->all_sizes ? 1ull << k : c->size_bytes;
		rc = p->cmd->lat ? perf_run_lat(p) : perf_run_bw(p);
		if (rc)
			snprintf(err, errlen, "the test failed: %s", strerror(-rc));
		else if (c->all_sizes)
			rc = run_steps(p, p->cmd->after, err, errlen);
	}
	return rc;
}

static int run_steps(struct perf *p, const char *steps, char *err, size_t errlen)
{
	struct pt_key dummy;
	int rc = 0;

	for (const char *s = steps; *s && rc == 0; s++) {
		switch (*s) {
		case 'K':
			for (unsigned q = 0; q < p->nq && rc == 0; q++)
				rc = pt_conn_keys(&p->pt, &p->mine[q], &p->theirs[q], PT_SETUP_NS,
						  err, errlen);
			break;
		case 'C':
			rc = connect_qps(p, err, errlen);
			if (rc == 0) {
				struct qp_conn_info me = p->e.qp[0]->local;

				me.rkey = p->mine[0].rkey;
				me.addr = p->mine[0].vaddr;
				bool rd = p->c->cmd & CMD_RD;

				report_addresses(stdout, &me, rd ? p->mine[0].out_reads : 0,
						 &p->e.qp[0]->remote, rd ? p->theirs[0].out_reads : 0);
			}
			break;
		case 'H':   /* a barrier: the peer may be running its test meanwhile */
			rc = pt_conn_keys(&p->pt, &p->mine[0], &dummy, QP_TIME_NEVER, err, errlen);
			break;
		case 'P':
			rc = perf_post_recvs(p);
			if (rc)
				snprintf(err, errlen, "posting receives: %s", strerror(-rc));
			break;
		case '*':
			rc = step_run(p, err, errlen);
			break;
		case 'R':
			rc = step_report(p, err, errlen);
			break;
		case 'X':
			rc = pt_conn_close(&p->pt, &p->mine[0], err, errlen);
			break;
		}
	}
	return rc;
}

int bench_perf(const struct bench_conf *c)
{
	struct perf p = { .c = c, .cmd = cmd_of(c->cmd) };
	uint64_t biggest = c->all_sizes ? 1ull << PERF_ALL_MAX_LOG2 : c->size_bytes;
	const char *role;
	char err[512];
	int rc = -1;

	p.pt.fd = -1;
	if (!p.cmd)
		return -1;
	if (c->all_sizes && c->duplex) {
		fprintf(stderr, "qpace-bench %s: -a with -b is not supported\n", bench_cmd_name(c->cmd));
		return -1;
	}
	p.nq = c->cmd & CMD_BW ? (unsigned)c->qps : 1;
	/* who posts the data: the client; both with -b and in the ping-pongs */
	p.sends = c->server || c->duplex ||
		  (p.cmd->lat && (p.cmd->op == QP_OP_WRITE || p.cmd->op == QP_OP_SEND));
	p.receives = p.cmd->op == QP_OP_SEND && (!c->server || c->duplex || p.cmd->lat);
	/* each area holds the largest message and a page (perftest cycles addresses in it) */
	p.area = ((biggest > 65536 ? biggest : 65536) + 63) & ~63ull;
	role = c->duplex ? p.cmd->duplex : c->server ? p.cmd->client : p.cmd->server;
	if (ep_open(&p.e, c, (size_t)(2 * p.nq * p.area), err, sizeof(err)) ||
	    pt_conn_open(&p.pt, &p.e, err, sizeof(err)) || create_qps(&p, err, sizeof(err)) ||
	    pt_conn_setup(&p.pt, p.e.qp[0]->local.mtu_bytes, err, sizeof(err)))
		goto fail;
	if (p.pt.cycle_buffer > p.area) {
		snprintf(err, sizeof(err), "the peer's page (%u bytes) exceeds this side's areas "
			 "(%" PRIu64 " bytes)", p.pt.cycle_buffer, p.area);
		goto fail;
	}
	perf_info(&p, &p.ri);
	report_banner(stdout, &p.ri);
	if (run_steps(&p, p.cmd->setup, err, sizeof(err)) ||
	    run_steps(&p, role, err, sizeof(err)))
		goto fail;
	fputs(REPORT_LINE, stdout);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "qpace-bench %s: %s\n", bench_cmd_name(c->cmd), err);
out:
	pt_conn_drop(&p.pt);
	free(p.done_ns);
	free(p.lat_ns);
	ep_close(&p.e);
	return rc;
}
