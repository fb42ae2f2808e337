/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend: a userspace RoCEv2 RC endpoint, so qpace runs with no kernel RDMA.
 *
 *     qp_ctx_open("soft", &(struct qp_ctx_attr){ .options =
 *                 "attach=127.0.0.1:7000,ip=10.0.0.1" }, &ctx, err, sizeof(err));
 *
 * A context is one emulated host (qpace/soft_host.h): a MAC and an IPv4 address whose
 * Ethernet frames travel one per UDP datagram (QEMU's -netdev dgram format) to a switch
 * port. Its QPs speak RoCEv2 RC (qpace/rc.h) byte-compatibly with kernel rxe. Many
 * contexts fit in one process and one event loop: each exposes its socket (qp_ctx_fd) and
 * its next timer (qp_ctx_deadline); qp_ctx_progress moves frames in batches
 * (recvmmsg/sendmmsg) and runs the timers. qp_poll also makes progress when it finds no
 * completion, so a simple post-then-poll program works without a loop.
 *
 * Options (qp_ctx_attr.options, "key=value,..."):
 *   attach=HOST:P      send frames to HOST:P, receive on P+1 (qpace-switch --star N
 *                      --base-port B: switch port i is attach=127.0.0.1:(B+2i))
 *   peer=HOST:PORT, bind=[ADDR:]PORT
 *                      instead of attach: two hosts wired to each other directly
 *   ip=A.B.C.D         the host's address (required)
 *   mac=xx:..:xx       default 02:00:A:B:C:D from the IP
 *   mtu=1024           the port's active RoCE MTU (256..4096); a QP's attr.mtu_bytes may
 *                      ask for another
 *   window=128         unacknowledged packets per QP
 *   max_qps=1024, telemetry_port=4792
 *   link_rate=1G       the switch port's rate: PFC PAUSE times are in 512-bit quanta of it
 *   icrc=on            off: frames out carry no ICRC (0), frames in are not checked
 *                      (virtual time's --icrc off; never on a real wire)
 *   shm=PATH           frames through a qpace-switch shm port's shared-memory rings
 *                      (qpace-switch --star N --shm PREFIX: port i is PREFIX.pI), with
 *                      attach= for the doorbells; a loop that blocks on qp_ctx_fd calls
 *                      qp_soft_wait_arm first
 *
 * QP attributes map to the RC core: timeout (4.096 us << timeout, doubled up to 8x on
 * repeated expiries), retry_cnt, rnr_retry, min_rnr_timer, traffic_class (the IPv4 TOS of
 * every frame, as rxe), max_inline <= 1024. The send queue holds sq_depth WRs plus
 * SOFT_SQ_PIECES more (qp_attr.sq_pieces: fewer), because the common layer splits large
 * WRITEs into gated pieces; a piece that finds them full waits, pending, for an ACK.
 * When it is full anyway a blocking QP drives this context until a slot frees (10 s at
 * most, then -ETIMEDOUT); a non-blocking QP gets -EAGAIN.
 *
 * Telemetry (UDP 4792) addressed to the host is handed to qp_soft_arg.telemetry, given as
 * qp_ctx_attr.backend_arg.
 *
 * Virtual time (qp_soft_arg.tx_ready set): the context opens no socket and its options
 * take no attach/peer/bind. A driver moves the frames: it hands frames in to
 * soft_host_input (on qp_soft_host) and pulls frames out with soft_host_output when its
 * NIC model is free; tx_ready says that frames may be waiting (after a post, a timer,
 * progress). Progress runs the host's timers; qp_ctx_fd is -1. Frames the host drops are counted by reason and the first of
 * each reason is logged once.
 */
#ifndef QPACE_SOFT_H
#define QPACE_SOFT_H

#include "qpace/qp.h"
#include "qpace/rc.h"
#include "qpace/soft_host.h"

#define SOFT_SQ_PIECES 1024u
#define SOFT_IO_BATCH 32

extern const struct qp_backend_ops qp_soft_ops;

/* qp_ctx_attr.backend_arg for the soft backend (optional; copied at open). */
struct qp_soft_arg {
	soft_telemetry_fn telemetry;
	void *telemetry_arg;
	soft_rx_data_fn rx_data;       /* payload a QP accepted (qpace/soft_host.h); NULL: none */
	void *rx_data_arg;
	void (*tx_ready)(void *arg);   /* virtual time: see above; NULL = the UDP socket */
	void *tx_ready_arg;
	soft_cnp_fn cnp;               /* CNPs the host's QPs receive (soft_host.h) */
	void *cnp_arg;
};

struct qp_soft_io_stats {
	uint64_t rx_datagrams, rx_batches, rx_oversize, rx_errors;
	uint64_t tx_datagrams, tx_batches, tx_errors;   /* tx_errors: frames not sent */
	uint64_t sq_full_waits;                          /* posts that found the SQ full */
	uint64_t rx_folded;   /* empty CQ polls that left the receive to a progress just run,
			       * or to the caller's readiness wait (qp_soft_rx_idle) */
	uint64_t rx_idle_skips;   /* receives not made: qp_soft_rx_idle said none at that time */
	/* shm=: rx_ and tx_datagrams count frames through the rings */
	uint64_t doorbells_rx, doorbells_tx;   /* woken by the switch; woke it */
	uint64_t shm_full;    /* sends held back in the host: the ring to the switch was full */
	uint64_t shm_bad;     /* slots or indices of the switch's the rings refused */
};

/* For a context opened on the soft backend (NULL otherwise). */
struct soft_host *qp_soft_host(struct qp_ctx *ctx);
const struct qp_soft_io_stats *qp_soft_io_stats(struct qp_ctx *ctx);
/* How its frames move: "shm" (a switch port's rings: shm=PATH, or offered ones taken by
 * shm=auto), "udp" (a datagram each), "driver" (virtual time); NULL for another backend. */
const char *qp_soft_transport(struct qp_ctx *ctx);
/* For a loop that waits for many contexts' sockets at once (epoll): the wait found this
 * context's socket empty at @now. A progress at the same @now does not receive, and the
 * next empty CQ poll (before any receive) makes no progress of its own; the loop's next
 * wait sees what arrives meanwhile. Real time only (virtual time: a no-op). */
void qp_soft_rx_idle(struct qp_ctx *ctx, qp_time_ns now);
/* For a loop about to block on qp_ctx_fd (epoll, ppoll): with shm= arms the doorbell
 * (qpace/shm_ring.h) and returns false when frames already wait, or sends are held back,
 * so the loop must not block; true otherwise (udp: always). Each progress disarms. */
bool qp_soft_wait_arm(struct qp_ctx *ctx);
/* The RC core's full counters of a soft QP (NULL for another backend). */
const struct rc_stats *qp_soft_rc_stats(struct qp *qp);

#endif
