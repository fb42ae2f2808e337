/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One end of a perftest-style connection for qpace-bench: a QP context (the soft backend
 * as an emulated host with its own agent core, or ibv), one registered buffer, QPs
 * accepted (server: no address) or dialled (client: the address last) over TCP, and the
 * blocking helpers the tests share. Used by write_bw/send_bw/write_lat (perf.c) and by the
 * networked incast (incast_net.c). */
#ifndef BENCH_ENDPOINT_H
#define BENCH_ENDPOINT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bench.h"
#include "qpace/host.h"

#define EP_MAX_QPS 64u
#define EP_ACCEPT_NS (3600 * QP_NS_PER_S)
#define EP_DIAL_NS (30 * QP_NS_PER_S)
#define EP_QP_TIMEOUT 12             /* local ACK timeout 4.096 us << 12 = 16.8 ms */
#define EP_QP_TIMEOUT_MAX 20         /* 4.3 s */
#define EP_IBV_STALE_NS QP_NS_PER_S  /* ibv QPs: agent heartbeat age that means "no agent" */

extern volatile sig_atomic_t ep_stop;   /* SIGINT/SIGTERM seen */

struct endpoint {
	const struct bench_conf *c;
	struct host host;      /* soft: the emulated host and its agent */
	struct qp_ctx *ctx;
	struct qp *qp[EP_MAX_QPS];
	unsigned nqps;
	struct qp_mr *mr;
	uint8_t *buf;
	size_t buf_bytes;
	bool soft;
	/* cooperative polling (ep_idle) */
	uint64_t seen_frames;  /* the soft context's datagrams in and out, last look */
	uint64_t blocks;       /* times ep_idle blocked */
};

/* Open the context (from --backend, --attach/--ip or -d/-i/-x) with a buffer of
 * @buf_bytes; installs the SIGINT/SIGTERM flag. 0 or -errno with @err. */
int ep_open(struct endpoint *e, const struct bench_conf *c, size_t buf_bytes, char *err,
	    size_t errlen);
/* The QPs' local ACK timeout exponent: incast's -u; else, ibv, the smallest from
 * EP_QP_TIMEOUT up that outlasts twice the buffer's drain at the link rate. */
uint8_t ep_ack_timeout(const struct bench_conf *c);
/* The smallest exponent from @from up (at most EP_QP_TIMEOUT_MAX) whose timeout outlasts
 * twice @buffer_bytes drained at @link_bps. */
uint8_t ep_timeout_for_drain(uint64_t buffer_bytes, uint64_t link_bps, uint8_t from);
/* Accept (no server address) or dial @nqps QPs on -p, one after the other; with the soft
 * backend each joins the host's agent (a server's QPs as receivers). */
int ep_connect(struct endpoint *e, unsigned nqps, uint32_t sq_depth, char *err,
	       size_t errlen);
void ep_close(struct endpoint *e);
/* One turn: paced pieces handed on, the backend run, the agent served. */
void ep_service(struct endpoint *e);
int ep_post_recv(struct endpoint *e, struct qp *qp, size_t off, uint32_t len);
/* Post one send WR, waiting while the gate or the send queue is full. */
int ep_post_send(struct endpoint *e, struct qp *qp, enum qp_opcode op, uint32_t len,
		 uint32_t imm, uint64_t wr_id);
/* After one turn of a loop that polls (@worked: it completed something): with the soft
 * backend, block in ppoll on the host's socket until it is readable or the host's next
 * due event (a gate opening, a retransmission timer, the agent's timers), unless that
 * event is within --spin, or this turn moved frames; then return at once. */
void ep_idle(struct endpoint *e, bool worked);
/* One completion of @qp: 0, -EIO (error status, in wc), -ETIMEDOUT or -EINTR. */
int ep_wait_wc(struct endpoint *e, struct qp *qp, struct qp_wc *wc, qp_time_ns limit_ns);

#endif
