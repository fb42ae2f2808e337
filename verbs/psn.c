/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The sender's PSN as the requester numbers it (verbs/psn.h). */
#include "psn.h"
#include "qp_agent.h"

uint32_t qp_psn_count(enum qp_psn_op op, uint64_t len, uint32_t mtu)
{
	uint64_t n;

	if (op == QP_PSN_OP_ATOMIC)
		return 1;
	if (!mtu || len <= mtu)
		return 1;
	n = (len + mtu - 1) / mtu;
	/* RC messages are at most 2^31 bytes: 2^23 packets of 256 B, below 2^24 */
	return n > QP_PSN_MAX ? QP_PSN_MAX : (uint32_t)n;
}

uint32_t qp_psn_add(uint32_t psn, uint64_t n)
{
	return (uint32_t)((psn + n) & QP_PSN_MAX);
}

enum qp_psn_op qp_psn_op_of(enum qp_opcode op)
{
	static const uint8_t map[QP_OP_COUNT] = {
		[QP_OP_WRITE] = QP_PSN_OP_WRITE, [QP_OP_WRITE_IMM] = QP_PSN_OP_WRITE,
		[QP_OP_SEND] = QP_PSN_OP_SEND, [QP_OP_SEND_IMM] = QP_PSN_OP_SEND,
		[QP_OP_READ] = QP_PSN_OP_READ, [QP_OP_CMP_SWAP] = QP_PSN_OP_ATOMIC,
		[QP_OP_FETCH_ADD] = QP_PSN_OP_ATOMIC,
	};

	return (unsigned)op < QP_OP_COUNT ? (enum qp_psn_op)map[op] : QP_PSN_OP_SEND;
}

void qp_psn_start(struct qp *qp)
{
	qp->snd_psn = qp->local.psn & QP_PSN_MAX;
}

void qp_psn_posted(struct qp *qp, const struct qp_wr *wr)
{
	qp->snd_psn = qp_psn_add(qp->snd_psn, qp_psn_count(qp_psn_op_of(wr->opcode), wr->length,
							    qp->path_mtu_bytes));
	qp_agent_posted(qp->ctx);
}
