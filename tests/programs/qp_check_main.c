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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/optable.h"
#include "qpace/qp.h"
#include "qpace/units.h"

#define SLOTS 8u

struct opts {
	const char *backend, *device, *port, *server, *options, *rate_table;
	uint64_t size_bytes, chunk_bytes, burst_bytes;
	qp_rate_bps rate_bps;
	uint32_t iters, sq_depth;
	int cm;
};

static const struct qp_optdoc option_docs[] = {
	{ "backend", 'b', "NAME", "QP backend (default ibv)" },
	{ "ib-dev", 'd', "DEV", "device (default: the first)" },
	{ "port", 'p', "PORT", "TCP / rdma_cm port (default 18515)" },
	{ "size", 's', "BYTES", "message size (default 256K)" },
	{ "iters", 'n', "N", "messages (default 200)" },
	{ "rate", 'r', "RATE", "pacing rate with no agent (default 200M)" },
	{ "chunk", 'c', "BYTES", "gate piece size (default 4K)" },
	{ "burst", 'B', "BYTES", "gate burst beyond one piece (default 2 x MTU)" },
	{ "tx-depth", 't', "N", "send queue depth (default 16: forces queue reaping)" },
	{ "options", 'o', "K=V,...", "backend options (ibv: gid=N)" },
	{ "rate-table", 'T', "NAME", "agent rate table (default: none, the -r rate)" },
	{ "rdma_cm", 'R', NULL, "connect through rdma_cm instead of TCP" },
	{ "help", 'h', NULL, "this text" },
};
#define NOPTS (sizeof(option_docs) / sizeof(option_docs[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: qp-check [options] [SERVER]\n"
		   "Moves verified, paced data between two hosts through the qpace QP API.\n\n");
	qp_optable_usage(f, option_docs, NOPTS);
}

static int bad(const char *what, const char *val, const char *range)
{
	fprintf(stderr, "qp-check: %s '%s': %s\n", what, val, range);
	return -EINVAL;
}

static int parse_arg(struct opts *o, int c, const char *v)
{
	uint64_t n;

	switch (c) {
	case 'b': o->backend = v; return 0;
	case 'd': o->device = v; return 0;
	case 'p': o->port = v; return 0;
	case 'o': o->options = v; return 0;
	case 'T': o->rate_table = v; return 0;
	case 'R': o->cm = 1; return 0;
	case 's':
		return qp_parse_bytes(v, &o->size_bytes) || !o->size_bytes ||
		       o->size_bytes > (64u << 20) ? bad("size", v, "1 byte to 64M") : 0;
	case 'c':
	case 'B':
		if (qp_parse_bytes(v, &n) || n < 64 || n > (64u << 20))
			return bad(c == 'c' ? "chunk" : "burst", v, "64 bytes to 64M");
		*(c == 'c' ? &o->chunk_bytes : &o->burst_bytes) = n;
		return 0;
	case 'r':
		return qp_parse_rate(v, &o->rate_bps) || o->rate_bps < QP_KBPS ||
		       o->rate_bps > 10000 * QP_GBPS ? bad("rate", v, "1K to 10T") : 0;
	case 'n':
	case 't':
		if (qp_parse_u64(v, &n) || n < 1 || n > 1000000)
			return bad(c == 'n' ? "iters" : "tx-depth", v, "1 to 1000000");
		*(c == 'n' ? &o->iters : &o->sq_depth) = (uint32_t)n;
		return 0;
	}
	usage(stderr);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	struct option longopts[NOPTS + 1];
	char shortopts[2 * NOPTS + 1];
	int c;

	qp_optable_build(option_docs, NOPTS, longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (parse_arg(o, c, optarg))
			return -EINVAL;
	}
	if (optind + 1 < argc)
		return bad("argument", argv[optind + 1], "at most one SERVER");
	o->server = optind < argc ? argv[optind] : NULL;
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

int main(int argc, char **argv)
{
	struct opts o = { .backend = "ibv", .port = "18515", .size_bytes = 256 << 10,
			  .chunk_bytes = 4096, .rate_bps = 200 * QP_MBPS, .iters = 200,
			  .sq_depth = 16, .rate_table = "" };
	struct qp_ctx_attr ca = { 0 };
	struct qp_attr qa = { 0 };
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	uint8_t *buf;
	size_t len;
	char err[300];
	int rc;

	if (parse_args(argc, argv, &o))
		return 1;
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
	qa.gate.fallback_bps = o.rate_bps;
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
	if (rc)
		fprintf(stderr, "qp-check: failed: %s\n", strerror(-rc));
	qp_ctx_close(ctx);
	free(buf);
	return rc ? 1 : 0;
}
