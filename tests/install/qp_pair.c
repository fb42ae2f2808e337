/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qp-pair: a program outside the tree, built against an installed libqpace with
 * `pkg-config --cflags --libs qpace` alone (tests/install/run.sh, deb.sh). It uses only
 * the installed API: two soft-backend hosts in this process wired to each other over
 * loopback UDP (no switch, no agent, no kernel RDMA), one RC QP each, a 256 KiB RDMA WRITE
 * with immediate from A into B's region, paced by the gate at its no-agent rate. Exit
 * status 0 only when the completion arrived on both sides and every byte is the same.
 *
 *   qp-pair [PORT]      UDP ports PORT and PORT+1 on 127.0.0.1 (default: from the pid)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qpace/qp.h>

#define LEN (256u << 10)
#define IMM 0x51ace

struct side {
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	unsigned char *buf;
};

static int fail(const char *what, int rc, const char *err)
{
	fprintf(stderr, "qp-pair: %s: %s%s%s\n", what, strerror(rc < 0 ? -rc : rc),
		err && *err ? ": " : "", err ? err : "");
	return 1;
}

static int side_open(struct side *s, unsigned bind, unsigned peer, int host, unsigned access,
		     char *err, size_t errlen)
{
	static const struct qp_attr attr = { .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL };
	char opts[128];
	int rc;

	snprintf(opts, sizeof(opts), "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.%d", bind, peer, host);
	/* no rate table and no agent: the gate paces at its safe rate */
	rc = qp_ctx_open("soft", &(struct qp_ctx_attr){ .options = opts, .rate_table = "",
							.agent_socket = "" },
			 &s->ctx, err, errlen);
	if (rc)
		return rc;
	s->buf = calloc(1, LEN);
	if (!s->buf)
		return -ENOMEM;
	rc = qp_mr_reg(s->ctx, s->buf, LEN, access, &s->mr);
	if (rc)
		return rc;
	return qp_create(s->ctx, &attr, &s->qp, err, errlen);
}

static void side_close(struct side *s)
{
	qp_ctx_close(s->ctx);   /* its QP and region too */
	free(s->buf);
}

/* Progress both hosts until @s has a completion or 20 s pass. */
static int wait_wc(struct side *s, struct qp_ctx *both[2], struct qp_wc *wc)
{
	qp_time_ns end = qp_now_ns() + 20ull * 1000000000u;

	for (;;) {
		int n = qp_poll(s->qp, wc, 1);

		if (n != 0)
			return n < 0 ? n : 0;
		if (qp_now_ns() > end)
			return -ETIMEDOUT;
		for (int i = 0; i < 2; i++) {
			int rc = qp_ctx_progress(both[i], qp_now_ns());

			if (rc < 0)
				return rc;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned port = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10)
				 : 30000u + (unsigned)getpid() % 15000u * 2u;
	struct side a = { 0 }, b = { 0 };
	struct qp_conn_info ia, ib;
	struct qp_wc wa, wb;
	char err[256] = "";
	int rc;

	printf("backends:");
	for (const struct qp_backend_ops *const *o = qp_backend_all(); *o; o++)
		printf(" %s", (*o)->name);
	printf("\n");
	if ((rc = side_open(&a, port, port + 1, 1, QP_ACCESS_LOCAL_WRITE, err, sizeof(err))) ||
	    (rc = side_open(&b, port + 1, port, 2, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE,
			    err, sizeof(err))))
		return fail("open", rc, err);
	qp_local_info(a.qp, NULL, &ia);
	qp_local_info(b.qp, b.mr, &ib);
	if ((rc = qp_connect(a.qp, &ib, err, sizeof(err))) ||
	    (rc = qp_connect(b.qp, &ia, err, sizeof(err))))
		return fail("connect", rc, err);
	printf("connected: %s\n", qp_conn_info_str(&ib, err, sizeof(err)));

	for (unsigned i = 0; i < LEN; i++)
		a.buf[i] = (unsigned char)(i * 7u + (i >> 10));
	rc = qp_post_recv(b.qp, &(struct qp_recv_wr){ .wr_id = 2 });
	if (rc)
		return fail("post_recv", rc, NULL);
	rc = qp_post_send(a.qp, &(struct qp_wr){ .opcode = QP_OP_WRITE_IMM, .wr_id = 1,
						 .mr = a.mr, .addr = a.buf, .length = LEN,
						 .remote_addr = ib.addr,
						 .rkey = ib.rkey, .imm = IMM,
						 .flags = QP_WR_SIGNALED });
	if (rc)
		return fail("post_send", rc, NULL);
	struct qp_ctx *both[2] = { a.ctx, b.ctx };
	if ((rc = wait_wc(&a, both, &wa)) || (rc = wait_wc(&b, both, &wb)))
		return fail("completion", rc, NULL);
	if (wa.status != QP_WC_SUCCESS || wb.status != QP_WC_SUCCESS || !wb.has_imm ||
	    wb.imm != IMM || wb.opcode != QP_WC_RECV_WRITE_IMM) {
		fprintf(stderr, "qp-pair: completions: sender %s, receiver %s opcode %d imm %#x\n",
			qp_wc_status_str(wa.status), qp_wc_status_str(wb.status), wb.opcode,
			wb.imm);
		return 1;
	}
	if (memcmp(a.buf, b.buf, LEN)) {
		fprintf(stderr, "qp-pair: the %u bytes differ\n", LEN);
		return 1;
	}
	struct qp_stats st;
	qp_get_stats(a.qp, &st);
	printf("write: %u bytes intact, %llu pieces through the gate, immediate %#x\n", LEN,
	       (unsigned long long)st.tx_chunks, wb.imm);
	side_close(&a);
	side_close(&b);
	return 0;
}
