/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target for the connection-message decoder (qpace/qp_wire.h).
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude \
 *         tests/fuzz/fuzz_qp_wire.c verbs/qp_wire.c -o build/fuzz-qp-wire
 *   build/fuzz-qp-wire -max_total_time=60
 * Property: whatever decodes re-encodes to the same 52 bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/qp_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qp_conn_info ci;
	uint8_t again[QP_WIRE_CONN_BYTES];
	char err[160];

	if (qp_wire_conn_decode(&ci, data, size, err, sizeof(err)) != 0)
		return 0;
	if (qp_wire_conn_encode(&ci, again, sizeof(again)) != QP_WIRE_CONN_BYTES ||
	    memcmp(again, data, sizeof(again)) != 0)
		abort();
	return 0;
}
