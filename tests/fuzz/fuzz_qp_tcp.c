/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the TCP connection exchange (verbs/qp_tcp.c, qp_exchange_fd) as a peer
 * on the other end of the stream drives it: the input is every byte the peer sends before
 * it closes, over a real stream socket pair, so the exchange reads the header, checks it
 * (qp_wire_conn_peek) before reading the rest, and decodes. fuzz_qp_wire covers the
 * decoder alone. Properties: no crash, no hang (the peer's close ends every read); the
 * exchange succeeds exactly when the first 52 bytes are a valid connection message, and
 * then yields what they say; the local message went out whole, as encoded. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qpace/qp.h"
#include "qpace/qp_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct qp_conn_info local = { .qpn = 0x11, .psn = 0x1234, .mtu_bytes = 1024,
					    .rkey = 7, .addr = 0x1000, .len = 4096,
					    .gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 } };
	struct qp_conn_info remote, want;
	uint8_t sent[QP_WIRE_CONN_BYTES], mine[QP_WIRE_CONN_BYTES];
	char err[300];
	int sv[2], rc, expect;

	if (size > 4096 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	if (write(sv[1], data, size) != (ssize_t)size || shutdown(sv[1], SHUT_WR))
		abort();
	rc = qp_exchange_fd(sv[0], &local, &remote, QP_NS_PER_S, err, sizeof(err));
	expect = size >= QP_WIRE_CONN_BYTES &&
		 qp_wire_conn_decode(&want, data, QP_WIRE_CONN_BYTES, err, sizeof(err)) == 0;
	if ((rc == 0) != expect || (rc == 0 && memcmp(&remote, &want, sizeof(want))))
		abort();
	if (read(sv[1], sent, sizeof(sent)) != (ssize_t)sizeof(sent) ||
	    qp_wire_conn_encode(&local, mine, sizeof(mine)) != QP_WIRE_CONN_BYTES ||
	    memcmp(sent, mine, sizeof(mine)))
		abort();
	close(sv[0]);
	close(sv[1]);
	return 0;
}
