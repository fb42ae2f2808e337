/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qp-check: a two-host smoke test of the QP API on a real backend (Soft-RoCE, a NIC, or the
 * soft backend): connect, move verified data, report the paced rate.
 *
 * 1. WRITE: the client WRITE_IMMs messages into a ring of slots in the server's exposed
 *    region (the immediate is the message number; large messages are split and paced by
 *    the gate); the server checks every byte of each message against its pattern and
 *    returns a SEND carrying the number, which frees the slot.
 * 2. READ: the client READs -n messages of -s bytes from the server's read area (filled
 *    with another pattern at start), SLOTS at a time, and checks every byte.
 * 3. Atomics: the client runs FETCH_ADDs on a counter in the server's region (each result
 *    must be the sum of the adds before it) and a chain of COMPARE_SWAPs (each must find
 *    the value the last one swapped in), then READs the counter: its value proves every
 *    atomic ran exactly once.
 * 4. The client SENDs "done"; the server, which only answered since step 1, ends.
 * Region (both sides): SLOTS message slots, the read area (SLOTS slots), then 2 x SLOTS
 * ack words, the counter and SLOTS result words. Exit status 0 only when every byte and
 * every result was right.
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
#define DONE_MSG 0xd0e0d0e0u
#define ATOMIC_ADD 0x10001u   /* FETCH_ADD k adds k * this */

/* Where each part of the region lies (8-byte aligned after the data). */
struct layout {
	size_t read_area, acks, counter, results, len;
};

static void layout_of(uint64_t size, struct layout *l)
{
	l->read_area = SLOTS * size;
	l->acks = (2 * SLOTS * size + 7) & ~(size_t)7;
	l->counter = l->acks + 2 * SLOTS * sizeof(uint32_t);
	l->results = l->counter + sizeof(uint64_t);
	l->len = l->results + SLOTS * sizeof(uint64_t);
}

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

/* The server's read area, byte @i. */
static uint8_t read_pattern(uint64_t i)
{
	return (uint8_t)((i * 7u) ^ (i >> 11) ^ 0xa5u);
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
	struct layout l;
	uint32_t *ack;
	uint64_t bad_bytes = 0;
	struct qp_wc wc;
	int rc;

	layout_of(o->size_bytes, &l);
	ack = (uint32_t *)(void *)(buf + l.acks);
	for (uint64_t i = 0; i < SLOTS * o->size_bytes; i++)
		buf[l.read_area + i] = read_pattern(i);
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
	/* The client READs and runs atomics now (this side only answers), then says done. */
	do {
		if ((rc = wait_wc(qp, &wc)) != 0)
			return rc;
	} while (wc.opcode != QP_WC_RECV);
	if (((uint32_t *)(uintptr_t)wc.wr_id)[0] != DONE_MSG) {
		fprintf(stderr, "qp-check: expected the client's done message, got 0x%08x\n",
			((uint32_t *)(uintptr_t)wc.wr_id)[0]);
		return -EPROTO;
	}
	printf("qp-check server: the client's READs and atomics done\n");
	return bad_bytes ? -EIO : 0;
}

/* Step 2: -n READs of -s bytes from the server's read area, SLOTS at a time. */
static int client_reads(const struct opts *o, struct qp *qp, struct qp_mr *mr, uint8_t *buf,
			const struct layout *l)
{
	uint64_t bad = 0;
	uint32_t posted = 0, done = 0;
	qp_time_ns t0 = qp_now_ns();
	struct qp_wc wc;
	int rc;

	while (done < o->iters) {
		if (posted < o->iters && posted - done < SLOTS) {
			uint32_t slot = posted % SLOTS;

			memset(buf + slot * o->size_bytes, 0, o->size_bytes);
			rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_READ, .wr_id = posted,
				.mr = mr, .addr = buf + slot * o->size_bytes,
				.length = (uint32_t)o->size_bytes,
				.remote_addr = qp->remote.addr + l->read_area + slot * o->size_bytes,
				.rkey = qp->remote.rkey, .flags = QP_WR_SIGNALED });
			if (rc)
				return rc;
			posted++;
			continue;
		}
		if ((rc = wait_wc(qp, &wc)) != 0)
			return rc;
		if (wc.opcode != QP_WC_READ || wc.wr_id != done) {
			fprintf(stderr, "qp-check: expected READ %u, got opcode %d wr_id %llu\n", done,
				wc.opcode, (unsigned long long)wc.wr_id);
			return -EPROTO;
		}
		for (uint64_t i = 0; i < o->size_bytes; i++)
			bad += buf[(done % SLOTS) * o->size_bytes + i] !=
			       read_pattern((done % SLOTS) * o->size_bytes + i);
		done++;
	}
	printf("qp-check client: %u READs of %llu bytes in %.3f s, %llu bad bytes\n", o->iters,
	       (unsigned long long)o->size_bytes, (double)(qp_now_ns() - t0) / 1e9,
	       (unsigned long long)bad);
	return bad ? -EIO : 0;
}

/* One atomic, waited for; the old value it returns. */
static int atomic1(struct qp *qp, struct qp_mr *mr, uint64_t *res, enum qp_opcode op,
		   uint64_t remote, uint64_t compare_add, uint64_t swap, uint64_t *old)
{
	struct qp_wc wc;
	int rc;

	*res = 0x5a5a5a5a5a5a5a5aull;
	rc = qp_post_send(qp, &(struct qp_wr){ .opcode = op, .wr_id = 1, .mr = mr, .addr = res,
		.length = 8, .remote_addr = remote, .rkey = qp->remote.rkey,
		.compare_add = compare_add, .swap = swap, .flags = QP_WR_SIGNALED });
	if (rc == 0)
		rc = wait_wc(qp, &wc);
	if (rc == 0 && wc.opcode != (op == QP_OP_FETCH_ADD ? QP_WC_FETCH_ADD : QP_WC_COMP_SWAP))
		rc = -EPROTO;
	*old = *res;
	return rc;
}

/* Step 3: FETCH_ADDs then a COMPARE_SWAP chain on the server's counter, then a READ of it.
 * Each result proves the ones before ran once; the last value proves the lot did. */
static int client_atomics(const struct opts *o, struct qp *qp, struct qp_mr *mr, uint8_t *buf,
			  const struct layout *l)
{
	uint64_t *res = (uint64_t *)(void *)(buf + l->results), sum = 0, old, final;
	uint64_t remote = qp->remote.addr + l->counter;
	uint32_t n = o->iters * 4, bad = 0;
	struct qp_wc wc;
	int rc;

	for (uint32_t k = 1; k <= n; k++) {
		if ((rc = atomic1(qp, mr, res, QP_OP_FETCH_ADD, remote, k * ATOMIC_ADD, 0, &old)))
			return rc;
		bad += old != sum;
		sum += k * ATOMIC_ADD;
	}
	for (uint32_t k = 0; k < n; k++) {
		if ((rc = atomic1(qp, mr, res, QP_OP_CMP_SWAP, remote, sum, sum ^ (k + 1), &old)))
			return rc;
		bad += old != sum;
		sum ^= k + 1;
	}
	/* a COMPARE_SWAP that must not swap: the value stays */
	if ((rc = atomic1(qp, mr, res, QP_OP_CMP_SWAP, remote, ~sum, 1, &old)))
		return rc;
	bad += old != sum;
	rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_READ, .wr_id = 2, .mr = mr,
		.addr = &res[1], .length = 8, .remote_addr = remote, .rkey = qp->remote.rkey,
		.flags = QP_WR_SIGNALED });
	if (rc == 0)
		rc = wait_wc(qp, &wc);
	if (rc)
		return rc;
	final = res[1];
	printf("qp-check client: %u FETCH_ADDs and %u COMPARE_SWAPs, %u results wrong; the "
	       "counter 0x%016llx, expected 0x%016llx\n", n, n + 1, bad,
	       (unsigned long long)final, (unsigned long long)sum);
	return bad || final != sum ? -EIO : 0;
}

static int run_client(const struct opts *o, struct qp *qp, struct qp_mr *mr, uint8_t *buf)
{
	struct layout l;
	uint32_t *ack, in_flight = 0, acked = 0;
	qp_time_ns t0 = qp_now_ns(), took;
	struct qp_stats st;
	struct qp_wc wc;
	char rate[32], target[32];
	int rc;

	layout_of(o->size_bytes, &l);
	ack = (uint32_t *)(void *)(buf + l.acks);
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
	if ((rc = client_reads(o, qp, mr, buf, &l)) != 0 ||
	    (rc = client_atomics(o, qp, mr, buf, &l)) != 0)
		return rc;
	ack[SLOTS] = DONE_MSG;
	rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_SEND, .wr_id = 3, .mr = mr,
		.addr = &ack[SLOTS], .length = sizeof(uint32_t), .flags = QP_WR_SIGNALED });
	while (rc == 0 && (rc = wait_wc(qp, &wc)) == 0 && wc.opcode != QP_WC_SEND)
		;
	return rc;
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
	if (qp_soft_rc_stats(qp)) {
		const struct rc_stats *r = qp_soft_rc_stats(qp);

		printf("qp-check %s rc reads: %llu READ requests sent, %llu implicit NAKs; "
		       "%llu READs served, %llu again; %llu atomics served, %llu answered again\n",
		       role, (unsigned long long)r->reads_tx, (unsigned long long)r->implicit_naks,
		       (unsigned long long)r->reads_rx, (unsigned long long)r->reads_replayed,
		       (unsigned long long)r->atomics_rx, (unsigned long long)r->atomics_replayed);
	}
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
	{
		struct layout l;

		layout_of(o.size_bytes, &l);
		len = l.len;
	}
	buf = aligned_alloc(8, (len + 7) & ~(size_t)7);
	if (buf)
		memset(buf, 0, len);
	if (!buf || qp_mr_reg(ctx, buf, len, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE |
			      QP_ACCESS_REMOTE_READ | QP_ACCESS_REMOTE_ATOMIC, &mr)) {
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
