/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The sender's PSN as the verbs layer counts it (verbs/psn.h): packets per WR for each
 * opcode class, the 24-bit wrap, and a QP's next PSN over the pieces the common layer
 * hands a backend (split WRITEs, zero-length and multi-packet SENDs). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "psn.h"
#include "qpace/qp.h"

static void test_packets_per_wr(void **state)
{
	(void)state;
	/* WRITE / SEND: ceil(len / mtu), at least one */
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 0, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_SEND, 0, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 1, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 1024, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 1025, 1024), 2);
	assert_int_equal(qp_psn_count(QP_PSN_OP_SEND, 4096, 1024), 4);
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 1u << 20, 4096), 256);
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, (1u << 20) + 1, 4096), 257);
	/* the largest RC message on the smallest MTU: 2^23 packets, within 24 bits */
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 1ull << 31, 256), 1u << 23);
	/* READ: the request takes the response's packets */
	assert_int_equal(qp_psn_count(QP_PSN_OP_READ, 0, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_READ, 4097, 1024), 5);
	assert_int_equal(qp_psn_count(QP_PSN_OP_READ, 65536, 4096), 16);
	/* atomics: one, whatever the length says */
	assert_int_equal(qp_psn_count(QP_PSN_OP_ATOMIC, 8, 1024), 1);
	assert_int_equal(qp_psn_count(QP_PSN_OP_ATOMIC, 65536, 256), 1);
	/* no MTU known: one packet */
	assert_int_equal(qp_psn_count(QP_PSN_OP_WRITE, 65536, 0), 1);
	/* the QP API's opcodes */
	assert_int_equal(qp_psn_op_of(QP_OP_WRITE_IMM), QP_PSN_OP_WRITE);
	assert_int_equal(qp_psn_op_of(QP_OP_SEND_IMM), QP_PSN_OP_SEND);
}

static void test_wrap(void **state)
{
	(void)state;
	assert_int_equal(qp_psn_add(0, 1), 1);
	assert_int_equal(qp_psn_add(0xfffffe, 1), 0xffffff);
	assert_int_equal(qp_psn_add(0xfffffe, 2), 0);
	assert_int_equal(qp_psn_add(0xfffffe, 3), 1);
	assert_int_equal(qp_psn_add(0xfffff0, 1u << 24), 0xfffff0);
	assert_int_equal(qp_psn_add(5, (1ull << 24) * 3 + 7), 12);
}

/* ---- through the QP layer: a backend that takes every piece ---- */

static unsigned pieces;

static int sink_qp_init(struct qp *qp, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	qp->qpn = 0x77;
	qp->local = (struct qp_conn_info){ .qpn = 0x77, .psn = qp_initial_psn(qp),
					   .mtu_bytes = 1024 };
	return 0;
}
static int sink_connect(struct qp *qp, char *err, size_t errlen)
{
	(void)qp; (void)err; (void)errlen;
	return 0;
}
static int sink_post(struct qp *qp, const struct qp_wr *wr)
{
	(void)qp; (void)wr;
	pieces++;
	return 0;
}
static int sink_mr(struct qp_mr *mr)
{
	mr->lkey = mr->rkey = 1;
	return 0;
}

static const struct qp_backend_ops sink_ops = {
	.name = "sink", .qp_init = sink_qp_init, .qp_connect = sink_connect,
	.post_send = sink_post, .mr_init = sink_mr,
};

static void test_qp_next_psn(void **state)
{
	static uint8_t buf[1 << 20];
	struct qp_ctx_attr ca = { .rate_table = "", .agent_socket = "" };
	struct qp_attr qa = { .psn_fixed = true, .psn = 0xfffff0, .mtu_bytes = 1024,
			      .gate = { .line_bps = QP_GATE_MAX_BPS,
					.safe_permille = QP_GATE_MAX_PERMILLE,
					.chunk_bytes = 65536 } };
	struct qp_conn_info peer = { .qpn = 0x78, .psn = 1, .mtu_bytes = 512 };
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	char err[200];
	(void)state;

	assert_int_equal(qp_ctx_open_ops(&sink_ops, &ca, &ctx, err, sizeof(err)), 0);
	assert_int_equal(qp_mr_reg(ctx, buf, sizeof(buf), QP_ACCESS_LOCAL_WRITE, &mr), 0);
	assert_int_equal(qp_create(ctx, &qa, &qp, err, sizeof(err)), 0);
	assert_int_equal(qp_connect(qp, &peer, err, sizeof(err)), 0);
	assert_int_equal(qp->path_mtu_bytes, 512);   /* the peer's smaller MTU */
	assert_int_equal(qp->snd_psn, 0xfffff0);     /* the initial sq_psn */
	/* 1 MiB WRITE in 16 pieces of 64 KiB: 128 packets of 512 B each, 2048 in all */
	assert_int_equal(qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_WRITE, .mr = mr,
		.addr = buf, .length = sizeof(buf) }), 0);
	assert_int_equal(pieces, 16);
	assert_int_equal(qp->snd_psn, (0xfffff0 + 2048) & 0xffffff);
	/* a zero-length SEND: one PSN; a 1500-byte SEND_IMM: three (512 B MTU) */
	assert_int_equal(qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_SEND }), 0);
	assert_int_equal(qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_SEND_IMM, .mr = mr,
		.addr = buf, .length = 1500 }), 0);
	assert_int_equal(qp->snd_psn, (0xfffff0 + 2048 + 1 + 3) & 0xffffff);
	/* a WRITE_IMM of 100 KiB: pieces of 64 + 36 KiB, 128 + 72 packets */
	assert_int_equal(qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_WRITE_IMM, .mr = mr,
		.addr = buf, .length = 100 << 10 }), 0);
	assert_int_equal(qp->snd_psn, (0xfffff0 + 2048 + 4 + 200) & 0xffffff);
	print_message("next PSN 0xfffff0 -> 0x%06x over %u pieces (wrapped)\n", qp->snd_psn,
		      pieces);
	qp_ctx_close(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packets_per_wr),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_qp_next_psn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
