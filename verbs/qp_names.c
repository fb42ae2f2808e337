/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Names of the QP API's enums for printing (qpace/qp.h). */
#include "qpace/qp.h"

const char *qp_wc_status_str(enum qp_wc_status s)
{
	static const char *const names[QP_WC_STATUS_COUNT] = {
		[QP_WC_SUCCESS] = "success",
		[QP_WC_LOC_LEN_ERR] = "local length error",
		[QP_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[QP_WC_LOC_PROT_ERR] = "local protection error",
		[QP_WC_WR_FLUSH_ERR] = "WR flushed",
		[QP_WC_BAD_RESP_ERR] = "bad response",
		[QP_WC_LOC_ACCESS_ERR] = "local access error",
		[QP_WC_REM_INV_REQ_ERR] = "remote invalid request",
		[QP_WC_REM_ACCESS_ERR] = "remote access error",
		[QP_WC_REM_OP_ERR] = "remote operation error",
		[QP_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[QP_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[QP_WC_GENERAL_ERR] = "general error",
	};

	return (unsigned)s < QP_WC_STATUS_COUNT ? names[s] : "UNKNOWN";
}

const char *qp_opcode_str(enum qp_opcode op)
{
	static const char *const names[QP_OP_COUNT] = {
		[QP_OP_WRITE] = "WRITE",
		[QP_OP_WRITE_IMM] = "WRITE_IMM",
		[QP_OP_SEND] = "SEND",
		[QP_OP_SEND_IMM] = "SEND_IMM",
		[QP_OP_READ] = "READ",
		[QP_OP_CMP_SWAP] = "CMP_SWAP",
		[QP_OP_FETCH_ADD] = "FETCH_ADD",
	};

	return (unsigned)op < QP_OP_COUNT ? names[op] : "UNKNOWN";
}
