/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's out-of-band exchange (qpace/pt_wire.h) on a TCP stream, for qpace-bench's
 * perftest-style commands (perf.c): with it, a qpace-bench client connects to an
 * ib_read_bw server (or any ib_*_{bw,lat} of perftest 4.5) and the reverse.
 *
 * Each exchange is a fixed-size message both ways, the client writing first. While a side
 * waits for its peer, its endpoint keeps running (ep_service: a soft host answers ARP,
 * serves READs, ACKs; its agent keeps its heartbeat), and SIGINT ends the wait. */
#ifndef BENCH_PT_CONN_H
#define BENCH_PT_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/pt_wire.h"
#include "qpace/time.h"
#include "endpoint.h"

#define PT_SETUP_NS (30 * QP_NS_PER_S)   /* an exchange before the test */

struct pt_conn {
	struct endpoint *e;
	int fd;
	bool client;
	unsigned peer_version;       /* x100: 606 for perftest 4.5 */
	uint32_t cycle_buffer;       /* page size: the larger of both sides' */
	uint32_t cache_line;         /* the larger of both sides' */
	uint32_t mtu_bytes;          /* the smaller of both sides' active MTU */
};

/* Connect (client: the server's address is e->c->server) or accept one client on -p. */
int pt_conn_open(struct pt_conn *c, struct endpoint *e, char *err, size_t errlen);
/* Version, system data and MTU (@mtu_bytes: this side's active MTU). A peer older than
 * perftest 5.70 is refused, as perftest refuses it. */
int pt_conn_setup(struct pt_conn *c, uint32_t mtu_bytes, char *err, size_t errlen);
/* One key exchange ("hand shake"): ours out, the peer's in. @wait_ns: how long the peer
 * may take (QP_TIME_NEVER: until it answers, hangs up or SIGINT). */
int pt_conn_keys(struct pt_conn *c, const struct pt_key *mine, struct pt_key *theirs,
		 qp_time_ns wait_ns, char *err, size_t errlen);
/* The client's BW report to the server (both send one; the server prints the client's). */
int pt_conn_report(struct pt_conn *c, const struct pt_bw_report *mine,
		   struct pt_bw_report *theirs, char *err, size_t errlen);
/* perftest's close: a hand shake (the end), "done", and the socket closed. */
int pt_conn_close(struct pt_conn *c, const struct pt_key *mine, char *err, size_t errlen);
/* The socket closed without ceremony (an error path). */
void pt_conn_drop(struct pt_conn *c);

#endif
