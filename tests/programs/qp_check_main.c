/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qp-check: a two-host smoke test of the QP API on a real backend (Soft-RoCE, a NIC, or the
 * soft backend): connect, move verified data, report the paced rate.
 *
 * The client WRITE_IMMs messages into a ring of slots in the server's exposed region (the
 * immediate is the message number; large messages are split and paced by the gate); the
 * server checks every byte of each message against its pattern and returns a SEND
 * carrying the number, which frees the slot. Region: SLOTS message slots, then SLOTS
 * receive buffers for acks, then SLOTS ack buffers to send from. Exit status 0 only when every message arrived
 * intact.
 *
 *   server: qp-check [options]
 *   client: qp-check [options] SERVER
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/opt.h"
#include "qpace/qp.h"
#include "qpace/soft.h"
#include "qpace/units.h"

#define SLOTS 8u

struct opts {
	const char *backend, *device, *port, *server, *options, *rate_table;
	uint64_t size_bytes, chunk_bytes, burst_bytes;
	qp_rate_bps rate_bps;
	uint32_t iters, sq_depth;
	int cm;
};

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "backend", 0, QP_OPT_STR, "NAME", AT(backend), .old_short = 'b',
	  .help = "QP backend", .def = "ibv" },
	{ "ib-dev", 'd', QP_OPT_STR, "DEV", AT(device), .help = "device (default: the first)" },
	{ "port", 'p', QP_OPT_STR, "PORT", AT(port), .help = "TCP / rdma_cm port", .def = "18515" },
	{ "size", 's', QP_OPT_BYTES, "BYTES", AT(size_bytes), .min = 1, .max = 64u << 20,
	  .help = "message size", .def = "256K" },
	{ "iters", 'n', QP_OPT_UINT, "N", AT(iters), .min = 1, .max = 1000000, .help = "messages",
	  .def = "200" },
	{ "rate", 0, QP_OPT_RATE, "RATE", AT(rate_bps), .min = QP_KBPS, .max = 10000 * QP_GBPS,
	  .old_short = 'r', .help = "pacing rate with no agent", .def = "200M" },
	{ "chunk", 0, QP_OPT_BYTES, "BYTES", AT(chunk_bytes), .min = 64, .max = 64u << 20,
	  .old_short = 'c', .help = "gate piece size", .def = "4K" },
	{ "burst", 'B', QP_OPT_BYTES, "BYTES", AT(burst_bytes), .min = 64, .max = 64u << 20,
	  .help = "gate burst beyond one piece (default 2 x MTU)" },
	{ "tx-depth", 't', QP_OPT_UINT, "N", AT(sq_depth), .min = 1, .max = 1000000,
	  .help = "send queue depth (the default forces queue reaping)", .def = "16" },
	{ "options", 0, QP_OPT_STR, "K=V,...", AT(options), .old_short = 'o',
	  .help = "backend options (ibv: gid=N)" },
	{ "rate-table", 'T', QP_OPT_STR, "NAME", AT(rate_table),
	  .help = "agent rate table (default: none, the -r rate)" },
	{ "rdma_cm", 0, QP_OPT_FLAG, NULL, AT(cm), .old_short = 'R',
	  .help = "connect through rdma_cm instead of TCP" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "qp-check",
	.head = "usage: qp-check [options] [SERVER]\n"
		"Moves verified, paced data between two hosts through the qpace QP API.\n\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 1,
};

/* The defaults, then the command line; 0, 1 (--help printed) or -EINVAL (printed). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	int first, rc;

	*o = (struct opts){ .rate_table = "" };
	rc = qp_opt_main(&prog, argc, argv, o, &first);
	if (rc)
		return rc;
	o->server = first < argc ? argv[first] : NULL;
	return 0;
}

/* The byte at offset @i of message @msg. */
static uint8_t pattern(uint32_t msg, uint64_t i)
{
	return (uint8_t)((i * 131u) ^ (i >> 9) ^ (msg * 29u));
}

/* Wait for one completion, keeping the backend running. */
static int wait_wc(struct qp *qp, struct qp_wc *wc)
{
	qp_time_ns deadline = qp_now_ns() + 30 * QP_NS_PER_S;
	int n;

	while ((n = qp_poll(qp, wc, 1)) == 0) {
		qp_ctx_progress(qp->ctx, qp_now_ns());
		if (qp_now_ns() > deadline)
			return -ETIMEDOUT;
	}
	if (n < 0)
		return n;
	if (wc->status != QP_WC_SUCCESS) {
		fprintf(stderr, "qp-check: completion wr_id %llu: %s (vendor 0x%x)\n",
			(unsigned long long)wc->wr_id, qp_wc_status_str(wc->status), wc->vendor_err);
		return -EIO;
	}
	return 0;
}

static int post_ack_recv(struct qp *qp, struct qp_mr *mr, uint32_t *slot)
{
	return qp_post_recv(qp, &(struct qp_recv_wr){ .wr_id = (uintptr_t)slot, .mr = mr,
		.addr = slot, .length = sizeof(*slot) });
}

static int run_server(const struct opts *o, struct qp *qp, struct qp_mr *mr, uint8_t *buf)
{
	uint32_t *ack = (uint32_t *)(buf + SLOTS * o->size_bytes);
	uint64_t bad_bytes = 0;
	struct qp_wc wc;
	int rc;

	for (uint32_t i = 0; i < SLOTS; i++)
		if ((rc = post_ack_recv(qp, mr, &ack[i])) != 0)
			return rc;
	for (uint32_t m = 0; m < o->iters; m++) {
		const uint8_t *slot;

		if ((rc = wait_wc(qp, &wc)) != 0)
			return rc;
		if (wc.opcode != QP_WC_RECV_WRITE_IMM || wc.imm != m) {
			fprintf(stderr, "qp-check: expected WRITE_IMM %u, got opcode %d imm %u\n", m,
				wc.opcode, wc.imm);
			return -EPROTO;
		}
		slot = buf + (m % SLOTS) * o->size_bytes;
		for (uint64_t i = 0; i < o->size_bytes; i++)
			bad_bytes += slot[i] != pattern(m, i);
		rc = post_ack_recv(qp, mr, (uint32_t *)(uintptr_t)wc.wr_id);
		/* Unsignaled: the client sends message m + SLOTS only after this ack, so the
		 * ack's buffer is free again by the time it is reused. */
		ack[SLOTS + m % SLOTS] = m;
		if (rc == 0)
			rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_SEND, .wr_id = m,
				.mr = mr, .addr = &ack[SLOTS + m % SLOTS],
				.length = sizeof(uint32_t) });
		if (rc)
			return rc;
	}
	printf("qp-check server: %u messages of %llu bytes, %llu bad bytes\n", o->iters,
	       (unsigned long long)o->size_bytes, (unsigned long long)bad_bytes);
	return bad_bytes ? -EIO : 0;
}

static int run_client(const struct opts *o, struct qp *qp, struct qp_mr *mr, uint8_t *buf)
{
	uint32_t *ack = (uint32_t *)(buf + SLOTS * o->size_bytes), in_flight = 0, acked = 0;
	qp_time_ns t0 = qp_now_ns(), took;
	struct qp_stats st;
	struct qp_wc wc;
	char rate[32], target[32];
	int rc;

	for (uint32_t i = 0; i < SLOTS; i++)
		if ((rc = post_ack_recv(qp, mr, &ack[i])) != 0)
			return rc;
	for (uint32_t m = 0; m < o->iters || acked < o->iters;) {
		if (m < o->iters && in_flight < SLOTS) {
			uint8_t *src = buf + (m % SLOTS) * o->size_bytes;

			for (uint64_t i = 0; i < o->size_bytes; i++)
				src[i] = pattern(m, i);
			rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_WRITE_IMM, .wr_id = m,
				.mr = mr, .addr = src, .length = (uint32_t)o->size_bytes,
				.remote_addr = qp->remote.addr + (m % SLOTS) * o->size_bytes,
				.rkey = qp->remote.rkey, .imm = m });
			if (rc)
				return rc;
			m++;
			in_flight++;
			continue;
		}
		if ((rc = wait_wc(qp, &wc)) != 0)
			return rc;
		if (wc.opcode == QP_WC_RECV) {
			uint32_t *slot = (uint32_t *)(uintptr_t)wc.wr_id;

			if (*slot != acked)
				return -EPROTO;
			acked++;
			in_flight--;
			if ((rc = post_ack_recv(qp, mr, slot)) != 0)
				return rc;
		}
	}
	took = qp_now_ns() - t0;
	qp_get_stats(qp, &st);
	qp_fmt_rate((qp_rate_bps)((double)o->iters * (double)o->size_bytes * 8e9 / (double)took),
		    rate, sizeof(rate));
	qp_fmt_rate(qp->pacer.gate.rate_bps, target, sizeof(target));
	printf("qp-check client: %u messages of %llu bytes in %.3f s: %sb/s (gate rate %sb/s); "
	       "%llu pieces, %llu token waits, %.1f ms waiting\n", o->iters,
	       (unsigned long long)o->size_bytes, (double)took / 1e9, rate, target,
	       (unsigned long long)st.tx_chunks, (unsigned long long)st.gate.token_waits,
	       (double)st.gate.wait_ns / 1e6);
	return 0;
}

/* Loss recovery as the backend saw it, one line each side: the QP's retransmissions
 * (where the backend counts them: not rdma-core), and for the soft backend the frames
 * its host refused, by reason (corrupted frames end there). */
static void print_recovery(const char *role, struct qp *qp)
{
	struct soft_host *h = qp_soft_host(qp->ctx);
	struct qp_stats st;

	qp_get_stats(qp, &st);
	if (st.have & QP_STAT_RETRANS)
		printf("qp-check %s rc: %llu retransmitted, %llu timeouts, %llu NAKs\n", role,
		       (unsigned long long)st.retransmissions, (unsigned long long)st.timeouts,
		       (unsigned long long)st.naks);
	if (!h)
		return;
	printf("qp-check %s host drops:", role);
	for (int d = 0; d < SOFT_DROP_COUNT; d++)
		if (soft_host_stats(h)->drops[d])
			printf(" %s %llu", soft_drop_str((enum soft_drop)d),
			       (unsigned long long)soft_host_stats(h)->drops[d]);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct qp_ctx_attr ca = { 0 };
	struct qp_attr qa = { 0 };
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	uint8_t *buf;
	size_t len;
	char err[300];
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	ca.device = o.device;
	ca.options = o.options;
	ca.rate_table = o.rate_table;
	rc = qp_ctx_open(o.backend, &ca, &ctx, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qp-check: %s\n", err);
		return 1;
	}
	len = SLOTS * o.size_bytes + 2 * SLOTS * sizeof(uint32_t);
	buf = calloc(1, len);
	if (!buf || qp_mr_reg(ctx, buf, len, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE,
			      &mr)) {
		fprintf(stderr, "qp-check: cannot register %zu bytes\n", len);
		return 1;
	}
	qa.sq_depth = o.sq_depth;
	qa.rq_depth = 2 * SLOTS;
	qa.gate.chunk_bytes = o.chunk_bytes;
	qa.gate.burst_bytes = o.burst_bytes;
	/* -r: the rate with no agent, so the safe rate is all of it (line_bps = -r) */
	qa.gate.line_bps = o.rate_bps;
	qa.gate.safe_permille = QP_GATE_MAX_PERMILLE;
	if (o.cm)
		rc = o.server ? qp_dial_cm(ctx, &qa, o.server, o.port, mr, &qp, err, sizeof(err))
			      : qp_accept_cm(ctx, &qa, NULL, o.port, mr, &qp, err, sizeof(err));
	else
		rc = o.server ? qp_dial(ctx, &qa, o.server, o.port, mr, 0, &qp, err, sizeof(err))
			      : qp_accept(ctx, &qa, NULL, o.port, mr, 0, &qp, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qp-check: %s\n", err);
		return 1;
	}
	{
		struct qp_conn_info local;

		qp_local_info(qp, mr, &local);
		printf("qp-check: connected%s: local %s\n", o.cm ? " (rdma_cm)" : "",
		       qp_conn_info_str(&local, err, sizeof(err)));
	}
	printf("qp-check: remote %s\n", qp_conn_info_str(&qp->remote, err, sizeof(err)));
	rc = o.server ? run_client(&o, qp, mr, buf) : run_server(&o, qp, mr, buf);
	print_recovery(o.server ? "client" : "server", qp);
	if (rc)
		fprintf(stderr, "qp-check: failed: %s\n", strerror(-rc));
	qp_ctx_close(ctx);
	free(buf);
	return rc ? 1 : 0;
}
