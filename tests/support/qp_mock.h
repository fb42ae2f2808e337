/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An in-memory RC backend for the QP API's tests ("mock"): WRITEs copy into the peer's
 * registered memory, SENDs and WRITE_IMMs consume its posted receives; every piece the
 * common layer offers is logged. Thread-safe between QPs (the TCP exchange's two sides). */
#ifndef QPACE_TEST_QP_MOCK_H
#define QPACE_TEST_QP_MOCK_H

#include <stdint.h>
#include "qpace/qp.h"

#define MOCK_MAX_QPS 16
#define MOCK_CQ 4096
#define MOCK_RQ 64
#define MOCK_LOG 1024

struct mock_piece {
	enum qp_opcode opcode;
	uint32_t length;
	uint64_t remote_addr;
	unsigned flags;
	qp_time_ns at;
};

struct mock_qp {
	struct qp pub;
	struct mock_qp *peer;
	struct qp_wc cq[MOCK_CQ];
	unsigned cq_head, cq_count;
	struct qp_recv_wr rq[MOCK_RQ];
	unsigned rq_head, rq_count;
	struct mock_piece log[MOCK_LOG];
	unsigned nlog;
	unsigned busy_every;   /* refuse every Nth piece once with -EAGAIN (queue full) */
	unsigned offered;
};

extern const struct qp_backend_ops mock_ops;

static inline struct mock_qp *to_mock(struct qp *qp)
{
	return qp_container_of(qp, struct mock_qp, pub);
}

#endif
