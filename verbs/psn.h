/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The sender's PSN, as the verbs layer counts it (qpace/agent.h says what the agent does
 * with it): every QP's next PSN starts at its initial sq_psn (qp->local.psn, what RTS got)
 * and moves on by the packets of each WR handed to the backend, as the requester numbers
 * them: WRITE / SEND take ceil(length / path MTU) PSNs, at least one (a zero-length one
 * too); a READ request takes as many PSNs as its response has packets; an atomic one.
 * PSNs are 24 bits and wrap. Private to verbs/. */
#ifndef QPACE_VERBS_PSN_H
#define QPACE_VERBS_PSN_H

#include <stdint.h>
#include "qpace/qp.h"

enum qp_psn_op {
	QP_PSN_OP_WRITE = 0,     /* RDMA WRITE (with or without immediate) */
	QP_PSN_OP_SEND,          /* SEND (with or without immediate) */
	QP_PSN_OP_READ,          /* RDMA READ: the response's packets */
	QP_PSN_OP_ATOMIC,        /* compare-and-swap, fetch-and-add */
	QP_PSN_OP_COUNT
};

/* PSNs a WR of @len bytes takes on a path of @mtu bytes (mtu 0 = one packet). */
uint32_t qp_psn_count(enum qp_psn_op op, uint64_t len, uint32_t mtu);
/* (@psn + @n) mod 2^24. */
uint32_t qp_psn_add(uint32_t psn, uint64_t n);
/* The PSN class of a QP API opcode. */
enum qp_psn_op qp_psn_op_of(enum qp_opcode op);

/* At connect: the next PSN is the initial one. */
void qp_psn_start(struct qp *qp);
/* A piece @wr was handed to the backend: move the QP's next PSN on, and tell the agent
 * registration there is a new figure to report (verbs/qp_agent.c). */
void qp_psn_posted(struct qp *qp, const struct qp_wr *wr);

#endif
