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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "host.h"
#include "report.h"
#include "stats.h"

#define PERF_TX_DEPTH 128u
#define PERF_IMM_END 0xffffffffu
#define PERF_ACCEPT_NS (3600 * QP_NS_PER_S)
#define PERF_DIAL_NS (30 * QP_NS_PER_S)
#define PERF_END_NS (10 * QP_NS_PER_S)
#define PERF_STALL_NS (10 * QP_NS_PER_S)   /* no completion for this long: give up */
#define PERF_MAX_SAMPLES (1u << 20)   /* kept per period in duration mode */

static volatile sig_atomic_t perf_stop;

static void perf_on_sigint(int sig)
{
	(void)sig;
	perf_stop = 1;
}

struct perf {
	const struct bench_conf *c;
	struct bench_host host;      /* soft: the emulated host and its agent */
	struct qp_ctx *ctx;
	struct qp *qp[64];
	struct qp_mr *mr;
	uint8_t *buf;
	size_t buf_bytes;
	bool soft;
	qp_time_ns *done_ns;         /* completion times (BW) */
	double *lat_ns;              /* half round trips (latency) */
	uint64_t ndone;
};

/* One turn of the loop: paced pieces handed on, the backend run, the agent served. */
static void perf_service(struct perf *p)
{
	qp_time_ns now = qp_now_ns();

	if (qp_ctx_deadline(p->ctx) <= now)
		qp_ctx_progress(p->ctx, now);
	if (p->soft)
		bench_host_service(&p->host, now);
}

static int perf_open(struct perf *p, char *err, size_t errlen)
{
	const struct bench_conf *c = p->c;
	qp_time_ns now = qp_now_ns();

	p->soft = c->backend == BACKEND_SOFT;
	if (p->soft) {
		char opts[256];
		snprintf(opts, sizeof(opts), "attach=%s,ip=%s", c->attach, c->ip);
		struct bench_host_conf hc = { .options = opts, .cc = c->cc,
					      .credits = c->credits == CREDITS_IA, .seed = c->seed };
		if (bench_host_open(&p->host, &hc, now, err, errlen))
			return -1;
		p->ctx = p->host.ctx;
	} else {
		char opts[32] = "";
		if (c->gid_given)
			snprintf(opts, sizeof(opts), "gid=%" PRIu64, c->gid_index);
		struct qp_ctx_attr a = { .device = c->ib_dev, .port = (uint8_t)c->ib_port,
					 .options = *opts ? opts : NULL };
		if (qp_ctx_open("ibv", &a, &p->ctx, err, errlen) < 0)
			return -1;
	}
	p->buf_bytes = (size_t)c->size_bytes * (c->cmd == CMD_SEND_BW ? PERF_TX_DEPTH : 1);
	p->buf = calloc(1, p->buf_bytes + 64);
	if (!p->buf || qp_mr_reg(p->ctx, p->buf, p->buf_bytes + 64, QP_ACCESS_LOCAL_WRITE |
				 QP_ACCESS_REMOTE_WRITE, &p->mr) < 0)
		return snprintf(err, errlen, "cannot register %zu bytes", p->buf_bytes), -1;
	return 0;
}

static int perf_connect(struct perf *p, char *err, size_t errlen)
{
	const struct bench_conf *c = p->c;
	struct qp_attr qa = { .sq_depth = PERF_TX_DEPTH + 1, .rq_depth = 2 * PERF_TX_DEPTH,
			      .timeout = 12, .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL };
	char port[8];
	unsigned nq = c->cmd & (CMD_WRITE_BW | CMD_SEND_BW) ? (unsigned)c->qps : 1;

	snprintf(port, sizeof(port), "%" PRIu64, c->tcp_port);
	for (unsigned q = 0; q < nq; q++) {
		int rc = c->server ? qp_dial(p->ctx, &qa, c->server, port, p->mr, PERF_DIAL_NS,
					     &p->qp[q], err, errlen)
				   : qp_accept(p->ctx, &qa, NULL, port, p->mr, PERF_ACCEPT_NS,
					       &p->qp[q], err, errlen);
		if (rc < 0)
			return -1;
		if (p->soft && bench_host_register(&p->host, p->qp[q], QP_GBPS, 50 * QP_NS_PER_US,
						   !c->server, NULL, qp_now_ns(), err, errlen))
			return -1;
	}
	return 0;
}

static int post_recv(struct perf *p, struct qp *qp, size_t off)
{
	struct qp_recv_wr r = { .wr_id = off, .mr = p->mr, .addr = p->buf + off,
				.length = (uint32_t)p->c->size_bytes };
	return qp_post_recv(qp, &r);
}

/* Post one send WR (retrying while the gate or the send queue is full). */
static int post_send(struct perf *p, struct qp *qp, enum qp_opcode op, uint32_t len,
		     uint32_t imm, uint64_t wr_id)
{
	struct qp_wr w = { .opcode = op, .wr_id = wr_id, .mr = p->mr, .addr = p->buf,
			   .length = len, .remote_addr = qp->remote.addr, .rkey = qp->remote.rkey,
			   .imm = imm, .flags = QP_WR_SIGNALED };
	for (;;) {
		int rc = qp_post_send(qp, &w);
		if (rc != -EAGAIN && rc != -ENOMEM)
			return rc;
		perf_service(p);
		if (perf_stop)
			return -EINTR;
	}
}

/* Wait for one completion on @qp; its status (or -ETIMEDOUT). */
static int wait_wc(struct perf *p, struct qp *qp, struct qp_wc *wc, qp_time_ns limit_ns)
{
	qp_time_ns end = qp_now_ns() + limit_ns;

	while (!perf_stop && qp_now_ns() < end) {
		int n = qp_poll(qp, wc, 1);
		if (n < 0)
			return n;
		if (n == 1)
			return wc->status == QP_WC_SUCCESS ? 0 : -EIO;
		perf_service(p);
	}
	return -ETIMEDOUT;
}

static void perf_info(const struct perf *p, struct report_info *ri)
{
	const struct bench_conf *c = p->c;

	*ri = (struct report_info){
		.verb = c->cmd == CMD_SEND_BW ? "Send" : "RDMA_Write",
		.lat = c->cmd == CMD_WRITE_LAT, .duration = c->duration_ns != 0,
		.device = p->soft ? c->ip : (c->ib_dev ? c->ib_dev : "first found"),
		.backend = p->soft ? "soft" : "ibv", .cc = c->cc,
		.credits = c->credits == CREDITS_IA, .qps = (unsigned)c->qps,
		.mtu_bytes = p->qp[0] ? p->qp[0]->path_mtu_bytes : 1024, .link_type = "Ethernet",
		.gid_index = p->soft ? -1 : (int)c->gid_index, .tx_depth = PERF_TX_DEPTH,
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
	while (!perf_stop && p->ndone < want) {
		for (unsigned q = 0; q < nq && posted < want && inflight < PERF_TX_DEPTH; q++) {
			struct qp_wr w = { .opcode = op, .wr_id = posted, .mr = p->mr, .addr = p->buf,
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
		perf_service(p);
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
	while (inflight && !perf_stop) {               /* drain, then tell the server */
		for (unsigned q = 0; q < nq; q++)
			inflight -= (uint64_t)(qp_poll(p->qp[q], wc, 32) > 0 ? 1 : 0);
		perf_service(p);
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
		if (post_send(p, p->qp[q], end, 0, PERF_IMM_END, UINT64_MAX) == 0)
			wait_wc(p, p->qp[q], wc, PERF_END_NS);
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
			post_recv(p, p->qp[q], c->cmd == CMD_SEND_BW ? k * c->size_bytes : 0);
	report_bw_header(stdout, c->report_gbits);
	while (ended < nq && !perf_stop) {
		for (unsigned q = 0; q < nq; q++) {
			int n = qp_poll(p->qp[q], wc, 32);
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
					post_recv(p, p->qp[q], wc[k].wr_id);
			}
		}
		perf_service(p);
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
		post_recv(p, qp, 0);
	uint64_t i;
	for (i = 0; i < iters && !perf_stop && qp_now_ns() < end; i++) {
		qp_time_ns t0 = qp_now_ns();
		if (client && post_send(p, qp, QP_OP_WRITE_IMM, (uint32_t)c->size_bytes, (uint32_t)i, i))
			break;
		/* Our own send completion and the peer's message, in either order. */
		int got = 0;
		while (got == 0 && !perf_stop) {
			if (wait_wc(p, qp, &wc, PERF_END_NS))
				return -EIO;
			if (wc.opcode == QP_WC_RECV_WRITE_IMM) {
				got = 1;
				post_recv(p, qp, 0);
				if (wc.imm == PERF_IMM_END)
					return 0;
			}
		}
		if (!client &&
		    post_send(p, qp, QP_OP_WRITE_IMM, (uint32_t)c->size_bytes, (uint32_t)i, i))
			break;
		if (client && i < cap)
			p->lat_ns[i] = (double)(qp_now_ns() - t0) / 2;
	}
	if (!client)
		return 0;
	post_send(p, qp, QP_OP_WRITE_IMM, 0, PERF_IMM_END, UINT64_MAX);
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
	char err[512];
	int rc = -1;

	signal(SIGINT, perf_on_sigint);
	if (perf_open(&p, err, sizeof(err)) || perf_connect(&p, err, sizeof(err))) {
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
	for (unsigned q = 0; q < 64; q++)
		qp_destroy(p.qp[q]);
	qp_mr_dereg(p.mr);
	if (p.soft)
		bench_host_close(&p.host);
	else
		qp_ctx_close(p.ctx);
	free(p.buf);
	return rc;
}
