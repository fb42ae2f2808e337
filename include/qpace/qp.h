/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace QP API: reliable-connected queue pairs for applications and qpace-bench.
 *
 *     qp_ctx_open("ibv" | "soft", &ctx_attr, &ctx, err)   a backend instance (device / host)
 *     qp_mr_reg(ctx, buf, len, access, &mr)              register memory
 *     qp_dial / qp_accept                                 create + connect over TCP (perftest)
 *     qp_dial_cm / qp_accept_cm                           the same through librdmacm (ibv)
 *       or qp_create + qp_local_info + (your exchange) + qp_connect
 *     qp_post_send(qp, &wr)        RDMA WRITE, WRITE with immediate, SEND, RDMA READ,
 *                                  COMPARE_SWAP, FETCH_ADD — paced by the gate
 *     qp_post_recv(qp, &rwr)       a receive buffer for SEND / WRITE_IMM
 *     qp_poll(qp, wc, n)           completions
 *     qp_get_stats(qp, &st)        bytes, messages, retransmissions, timeouts, NAKs, RNRs
 *     qp_destroy / qp_mr_dereg / qp_ctx_close
 *
 * Every call returns 0 (or a count) on success and -errno on failure; nothing returns a
 * positive errno (the ibv backend converts rdma-core's at the edge).
 *
 * Pacing. Every send WR passes the QP's pacing gate (qpace/gate.h): a token bucket at the
 * rate the agent publishes for this QPN in the host's rate table (qpace/ratetable.h),
 * optionally gated by receiver credits, with a safe fallback rate when no agent is alive.
 * A WRITE or WRITE_IMM longer than the gate's chunk size is split into chunk-sized WRITEs
 * at increasing offsets (the immediate rides on the last one), each passing the gate on its
 * own, so pacing stays fine-grained on backends that send a whole post at once. A READ is
 * split the same way into chunk-sized READs, and each is charged the bytes it asks for:
 * the gate paces the data the responder will send, its response, not the 1-packet request
 * (a requester's agent paces what converges on its own port). A SEND is never split; it is
 * charged whole (the bucket may go into debt by one message); an atomic is charged the 8
 * bytes of its answer. On a
 * device with per-QP rate limits (backend slots rate_caps / rate_limit: mlx5, bnxt_re) the
 * NIC enforces the rate the gate decides instead of the bucket (verbs/qp_enforce.c); the
 * gate keeps credits and the window. Every piece posted moves the QP's next PSN on
 * (qp->snd_psn), which registration reports to the agent (TXSTATE).
 *
 * Blocking and progress. By default qp_post_send returns once the whole WR is handed to the
 * backend, waiting (sleep, then spin; qpace/gate.h) while the gate is closed. A QP created
 * with QP_F_NONBLOCK never waits: a post the gate cannot pass now returns -EAGAIN; a post
 * whose first chunk passes is accepted and its remaining chunks are handed on by
 * qp_ctx_progress(). One accepted-but-unfinished WR per QP at most: the next post returns
 * -EAGAIN until it is done.
 *
 * Event-loop integration (the soft backend runs many endpoints on one loop): a context
 * exposes a file descriptor (qp_ctx_fd, readable when progress has input) and the next
 * deadline (qp_ctx_deadline: backend timers and paced chunks). A loop watches the fd, arms
 * a timer at the deadline, and calls qp_ctx_progress(ctx, now) on either.
 *
 * Threads: a context and its QPs are used by one thread at a time.
 *
 * Buffer lifetime (as ibv_post_send(3)): a posted buffer must stay valid and registered
 * until its completion is polled; struct qp_wr itself may be reused on return.
 */
#ifndef QPACE_QP_H
#define QPACE_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/gate.h"
#include "qpace/qp_wire.h"
#include "qpace/ratetable.h"
#include "qpace/time.h"

/* ---- objects: the public part; each backend embeds it first in its private struct and
 * reaches its own with container_of (qp_container_of below). ---- */

struct qp_backend_ops;

/* Log hook: one line, no newline. Default: "qpace: <line>" on stderr. */
typedef void (*qp_log_fn)(void *arg, const char *line);

/* Registration with the host's agent (qpaced, qpace/ctl.h), done by the common layer when
 * a QP connects (verbs/qp_agent.c). Zero fields take the context's value, then the
 * defaults below; the strings are copied at qp_ctx_open / qp_create. */
struct qp_agent_params {
	qp_rate_bps link_bps;      /* the local link's rate: the algorithm's line rate */
	qp_time_ns base_rtt_ns;    /* unloaded RTT to the peer */
	const char *algo;          /* NULL or "" = the agent's default (--cc) and its params */
	const char *params;        /* the algorithm's "k=v,..." (with algo) */
	bool receiver;             /* receives bulk data: the agent paces credits to the peer */
};

#define QP_AGENT_DEF_LINK_BPS (10 * QP_GBPS)
#define QP_AGENT_DEF_BASE_RTT_NS (100 * QP_NS_PER_US)

/* Strings are read during qp_ctx_open only (the rate table name is copied). */
struct qp_ctx_attr {
	const char *device;      /* ibv: device name (NULL = first); soft: backend-specific */
	uint8_t port;            /* ibv: port number, 0 = 1 */
	const char *rate_table;  /* "/name" = POSIX shm, a path with another '/' = file;
				  * NULL = QP_RATETABLE_DEFAULT; "" = none (fallback rate) */
	struct qp_ratetable *rate_table_mem; /* instead: an in-process table (not owned) */
	void *backend_arg;       /* backend-specific object (soft: its event loop / agent) */
	const char *options;     /* backend-specific "key=value,...": ibv: gid=N (GID index;
				  * default: the first RoCEv2 IPv4-mapped GID, 0 on IB);
				  * soft: attach, ip, mac */
	qp_log_fn log;           /* NULL = stderr */
	void *log_arg;
	const char *agent_socket;/* the agent's control socket: NULL = $QPACE_SOCKET, else
				  * /run/qpace/qpaced.sock; "" = do not register. QPs are
				  * never registered with rate_table_mem or rate_table "" */
	struct qp_agent_params agent; /* defaults for this context's QPs */
	/* The clock of this context's QP API (posts, the pacing gate, backend progress):
	 * NULL = qp_now_ns (CLOCK_MONOTONIC). A virtual-time driver installs its own; then
	 * nothing may wait on it: qp_create refuses QPs without QP_F_NONBLOCK and
	 * qp_dial/qp_accept refuse (connect in process: qp_local_info + qp_connect). */
	qp_time_ns (*clock)(void *arg);
	void *clock_arg;
};

struct qp_agent;
struct qp_agent_qp;

/* What enforces a QP's rate (docs/verbs.md#hardware-rate-limits): qpace's pacing gate, or
 * the NIC's per-QP rate limit (ibv_modify_qp_rate_limit) where the device has one. The
 * values are the control protocol's (qpace/ctl.h: AGENT_ENF_GATE, AGENT_ENF_NIC). */
enum qp_enforcer {
	QP_ENF_GATE = 0,
	QP_ENF_NIC = 1,
};

/* A device's per-QP rate limits (ibv: ibv_query_device_ex's packet_pacing_caps), kbit/s. */
struct qp_rate_caps {
	uint32_t min_kbps;
	uint32_t max_kbps;
};

/* A context's view of its device's rate limits, queried once, at the first connect. */
struct qp_enforce_dev {
	bool queried;
	int rc;                            /* 0: caps valid; else -errno (none: the gate) */
	struct qp_rate_caps caps;
	char why[160];                     /* the one line that said which paces, and why */
	bool said_refused;                 /* a refused limit was logged */
};

/* A QP's enforcement state (verbs/qp_enforce.c). */
struct qp_enforce {
	enum qp_enforcer which;
	uint32_t kbps;                     /* the NIC's limit as last set; 0 = none yet */
	uint64_t sets;                     /* limits set on the NIC */
	uint64_t clamped;                  /* of which outside the caps, clamped */
	uint64_t failures;                 /* a refused limit: back to the gate (once) */
};

struct qp_ctx {
	const struct qp_backend_ops *ops;  /* resolved copy (qp_ctx_open): every slot non-NULL */
	struct qp_ctx_attr attr;
	struct qp_rate_src rates;          /* the agent's rate table, (re)opened lazily */
	struct qp *qps;                    /* this context's QPs (intrusive list) */
	struct qp_mr *mrs;                 /* registered regions (freed at close) */
	struct qp_agent *agent;            /* registration with qpaced; NULL = off */
	struct qp *pend_head;              /* the QPs with a WR pending, in the order of qps
					    * (newest first), so the walks over them skip the
					    * idle ones (verbs/qp.c keeps it) */
	uint64_t births;                   /* QPs linked so far: each one's place in qps */
	bool progressing;                  /* qp_ctx_progress is handing pieces on; the
					    * backend's ctx_progress follows in the same call, so a
					    * backend may send their frames there in one batch */
	struct qp_enforce_dev enforce;     /* the device's rate limits */
};

/* Memory access rights, as IBV_ACCESS_*. */
enum qp_access {
	QP_ACCESS_LOCAL_WRITE = 1u << 0,
	QP_ACCESS_REMOTE_WRITE = 1u << 1,
	QP_ACCESS_REMOTE_READ = 1u << 2,
	QP_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

struct qp_mr {
	struct qp_ctx *ctx;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	unsigned access;
	struct qp_mr *next;
};

enum qp_flags {
	QP_F_NONBLOCK = 1u << 0,   /* posts never wait: -EAGAIN when the gate is closed */
	QP_F_SIGNAL_ALL = 1u << 1, /* every WR completes (as if QP_WR_SIGNALED were set) */
};

struct qp_attr {
	uint32_t sq_depth;         /* send WRs the caller keeps in flight; 0 = 128 */
	uint32_t rq_depth;         /* posted receives; 0 = 512 */
	uint32_t sq_pieces;        /* soft: send-queue slots beyond sq_depth for the pieces
				    * of gated WRITEs; 0 = SOFT_SQ_PIECES (qpace/soft.h) */
	uint32_t max_inline;       /* inline data bytes; 0 = none */
	uint32_t mtu_bytes;        /* 256..4096, power of two; 0 = the port's active MTU */
	uint32_t psn;              /* initial send PSN (24 bits) when psn_fixed */
	bool psn_fixed;            /* false: a random PSN, as perftest */
	uint8_t timeout;           /* local ACK timeout, 4.096 µs * 2^timeout; 0 = 14 */
	uint8_t retry_cnt;         /* 0..7; 0 = 7 */
	uint8_t rnr_retry;         /* 0..7 (7 = infinite); 0 = 7 */
	uint8_t min_rnr_timer;     /* IB encoding; 0 = 12 (0.64 ms) */
	uint8_t traffic_class;     /* GRH traffic class (DSCP/ECN) */
	uint8_t max_rd_atomic;     /* READs and atomics this QP has outstanding at the peer,
				    * 1..QP_RD_ATOMIC_MAX; 0 = QP_RD_ATOMIC_DEF. qp_connect
				    * takes it from qp->attr: lower it there before (to the
				    * peer's max_dest_rd_atomic, as verbs do at RTS) */
	uint8_t max_dest_rd_atomic;/* the peer's READs and atomics this QP serves at once (its
				    * saved requests), 1..QP_RD_ATOMIC_MAX; 0 = the default */
	unsigned flags;            /* enum qp_flags */
	struct qp_gate_params gate;/* zero fields take the gate defaults */
	struct qp_wait wait;       /* how a blocking post waits; zero = defaults */
	struct qp_agent_params agent; /* registration; zero fields: the context's */
};

#define QP_RD_ATOMIC_DEF 16u
#define QP_RD_ATOMIC_MAX 128u           /* rxe's max_qp_rd_atom */

/* The local ACK timeout of exponent @timeout (struct qp_attr's, IB's): 4.096 us << it. */
static inline qp_time_ns qp_ack_timeout_ns(uint8_t timeout)
{
	return (qp_time_ns)4096 << timeout;
}

/* A WR that is accepted but not fully handed to the backend (non-blocking mode). */
struct qp_pending {
	bool active;
	uint64_t offset;           /* bytes already handed on */
};

enum qp_opcode {
	QP_OP_WRITE = 0,
	QP_OP_WRITE_IMM,
	QP_OP_SEND,
	QP_OP_SEND_IMM,
	QP_OP_READ,                /* RDMA READ: the peer's [remote_addr, + length) into addr */
	QP_OP_CMP_SWAP,            /* 8 bytes at the peer's remote_addr (8-byte aligned): set
				    * to swap when equal to compare_add; the old value into addr */
	QP_OP_FETCH_ADD,           /* the same 8 bytes += compare_add; the old value into addr */
	QP_OP_COUNT
};

/* READ and the atomics ask for data back (the peer answers with a response). */
static inline bool qp_op_is_rd_atomic(enum qp_opcode op)
{
	return op == QP_OP_READ || op == QP_OP_CMP_SWAP || op == QP_OP_FETCH_ADD;
}

static inline bool qp_op_is_atomic(enum qp_opcode op)
{
	return op == QP_OP_CMP_SWAP || op == QP_OP_FETCH_ADD;
}

enum qp_wr_flags {
	QP_WR_SIGNALED = 1u << 0,  /* produce a completion */
	QP_WR_INLINE = 1u << 1,    /* copy the data into the WR (length <= max_inline) */
};

/* One send work request: one local buffer (one SGE). */
struct qp_wr {
	enum qp_opcode opcode;
	uint64_t wr_id;
	const struct qp_mr *mr;    /* covers [addr, addr + length); NULL only with QP_WR_INLINE;
				    * READ and atomics write there: local write access */
	void *addr;
	uint32_t length;           /* atomics: 8 */
	uint64_t remote_addr;      /* WRITE*, READ, atomics: the address in the peer's region */
	uint32_t rkey;             /* WRITE*, READ, atomics: the peer's rkey */
	uint32_t imm;              /* *_IMM: immediate data, host order */
	unsigned flags;            /* enum qp_wr_flags */
	uint64_t compare_add;      /* CMP_SWAP: the compare value; FETCH_ADD: the addend */
	uint64_t swap;             /* CMP_SWAP: the value swapped in */
};

struct qp_recv_wr {
	uint64_t wr_id;
	const struct qp_mr *mr;
	void *addr;
	uint32_t length;
};

/* Completion status, as enum ibv_wc_status (names from qp_wc_status_str). */
enum qp_wc_status {
	QP_WC_SUCCESS = 0,
	QP_WC_LOC_LEN_ERR,
	QP_WC_LOC_QP_OP_ERR,
	QP_WC_LOC_PROT_ERR,
	QP_WC_WR_FLUSH_ERR,
	QP_WC_BAD_RESP_ERR,
	QP_WC_LOC_ACCESS_ERR,
	QP_WC_REM_INV_REQ_ERR,
	QP_WC_REM_ACCESS_ERR,
	QP_WC_REM_OP_ERR,
	QP_WC_RETRY_EXC_ERR,
	QP_WC_RNR_RETRY_EXC_ERR,
	QP_WC_GENERAL_ERR,
	QP_WC_STATUS_COUNT
};

enum qp_wc_opcode {
	QP_WC_SEND = 0,            /* a SEND / SEND_IMM finished */
	QP_WC_WRITE,               /* a WRITE / WRITE_IMM finished */
	QP_WC_RECV,                /* a SEND arrived in a posted receive */
	QP_WC_RECV_WRITE_IMM,      /* a WRITE_IMM arrived (consumes a posted receive) */
	QP_WC_READ,                /* a READ finished: its data is in the local buffer */
	QP_WC_COMP_SWAP,           /* a COMPARE_SWAP finished: the old value (host order) too */
	QP_WC_FETCH_ADD,           /* a FETCH_ADD finished: the same */
	QP_WC_OPCODE_COUNT
};

/* A completion of a receive (the peer's SEND or WRITE_IMM), not of a local send WR. */
static inline bool qp_wc_is_recv(enum qp_wc_opcode op)
{
	return op == QP_WC_RECV || op == QP_WC_RECV_WRITE_IMM;
}

struct qp_wc {
	uint64_t wr_id;
	enum qp_wc_status status;
	enum qp_wc_opcode opcode;
	uint32_t byte_len;         /* receives: bytes received; READ: bytes read; atomics: 8 */
	/* As in verbs, opcode, byte_len and imm are valid only when status is success. After an
	 * error the QP is in error: later WRs complete flushed, possibly one completion per
	 * piece of a split WRITE, each with the WR's wr_id. */
	uint32_t imm;              /* with has_imm, host order */
	bool has_imm;
	uint32_t vendor_err;
};

/* Per-QP counters. The common layer fills tx_* and gate; a backend fills what it can and
 * says which in `have` (QP_STAT_*): rdma-core has no per-QP retransmission counters. */
enum qp_stat_have {
	QP_STAT_RX = 1u << 0,
	QP_STAT_RETRANS = 1u << 1,
	QP_STAT_TIMEOUTS = 1u << 2,
	QP_STAT_NAKS = 1u << 3,
	QP_STAT_RNRS = 1u << 4,
};

struct qp_stats {
	uint64_t tx_bytes;         /* payload bytes of completed-or-posted send WRs, handed on */
	uint64_t tx_msgs;          /* send WRs fully handed to the backend */
	uint64_t tx_chunks;        /* backend posts (a split WRITE counts each chunk) */
	uint64_t rx_bytes;
	uint64_t rx_msgs;
	uint64_t retransmissions;  /* packets sent again */
	uint64_t timeouts;         /* retransmission timer expiries */
	uint64_t naks;             /* sequence-error NAKs received */
	uint64_t rnrs;             /* RNR NAKs received */
	uint64_t errors;           /* completions with an error status */
	uint64_t backend_busy;     /* pieces the backend refused for a full queue (retried) */
	unsigned have;             /* QP_STAT_* the backend filled */
	struct qp_gate_stats gate;
};

struct qp {
	struct qp_ctx *ctx;
	struct qp_attr attr;       /* defaults resolved */
	uint32_t qpn;              /* set by the backend at create */
	struct qp_conn_info local; /* after qp_local_info / connect */
	struct qp_conn_info remote;/* the peer's, after connect */
	uint32_t path_mtu_bytes;   /* min(local, remote) after connect */
	bool connected;
	bool broken;               /* an error completion was seen: posts return -ENOTCONN */
	struct qp_pacer pacer;
	struct qp_wr pend_wr;      /* with pend.active */
	struct qp_pending pend;
	qp_time_ns retry_ns;       /* when the gate may next open (after an -EAGAIN) */
	struct qp_stats stats;
	struct qp_agent_qp *agent; /* registration state (verbs/qp_agent.c); NULL = none */
	uint32_t snd_psn;          /* the PSN the next posted packet takes (verbs/psn.h) */
	struct qp_enforce enforce; /* gate or NIC (verbs/qp_enforce.c) */
	struct qp *next;           /* in ctx->qps */
	uint64_t birth;            /* its place in ctx->qps: a newer QP is nearer the head */
	struct qp *pnext, **pref;  /* in ctx->pend_head's list, while pend.active */
};

/* How long a piece the backend refused (-EAGAIN: send queue full) waits before it is
 * offered again; the backend makes progress meanwhile. */
#define QP_BACKEND_BUSY_RETRY_NS (20 * QP_NS_PER_US)

#define qp_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- the backend interface ----
 * One const table per backend, designated initializers, static functions. The common layer
 * allocates each object with the backend's size (public part first, zeroed), fills the
 * public part, then calls the backend's init; NULL slots take an EOPNOTSUPP default, so
 * callers never NULL-check. Every int-returning op returns 0 / -errno, and writes a one-line
 * message to err on failure where it takes one. */
struct qp_backend_ops {
	const char *name;
	const char *summary;       /* one line for --help */
	size_t ctx_size, qp_size, mr_size;

	int (*ctx_init)(struct qp_ctx *ctx, char *err, size_t errlen);
	void (*ctx_fini)(struct qp_ctx *ctx);
	/* A fd readable when progress has input; -EOPNOTSUPP when the backend has none. */
	int (*ctx_fd)(struct qp_ctx *ctx);
	/* The backend's next timer; QP_TIME_NEVER when none. */
	qp_time_ns (*ctx_deadline)(struct qp_ctx *ctx);
	/* Receive, run timers due at now; returns work done (>= 0) or -errno. */
	int (*ctx_progress)(struct qp_ctx *ctx, qp_time_ns now);

	int (*mr_init)(struct qp_mr *mr);
	void (*mr_fini)(struct qp_mr *mr);

	/* Create the QP (qp->attr resolved); set qp->qpn and qp->local (qpn, psn, gid, mtu). */
	int (*qp_init)(struct qp *qp, char *err, size_t errlen);
	void (*qp_fini)(struct qp *qp);
	/* Move to RTS towards qp->remote (already decoded and checked). */
	int (*qp_connect)(struct qp *qp, char *err, size_t errlen);
	/* rdma_cm: create and connect in one step. */
	int (*cm_dial)(struct qp *qp, const char *host, const char *port,
		       const struct qp_mr *expose, char *err, size_t errlen);
	int (*cm_accept)(struct qp *qp, const char *bind, const char *port,
			 const struct qp_mr *expose, char *err, size_t errlen);

	/* One gated piece of a send WR: the common layer splits and paces; the backend posts. */
	int (*post_send)(struct qp *qp, const struct qp_wr *wr);
	/* Would post_send refuse a piece for a full send queue (-EAGAIN)? Then the common
	 * layer does not ask the gate (no tokens spent on it) and offers it again later.
	 * NULL: never known before the post. */
	bool (*send_full)(const struct qp *qp);
	int (*post_recv)(struct qp *qp, const struct qp_recv_wr *wr);
	/* Up to n completions; returns the count (>= 0) or -errno. */
	int (*poll)(struct qp *qp, struct qp_wc *wc, int n);
	/* Fill the backend's counters (retrans, timeouts, naks, rnrs, rx_*) and st->have. */
	void (*get_stats)(struct qp *qp, struct qp_stats *st);
	/* The UDP source port of the QP's RoCEv2 frames once connected; 0 = not known. */
	uint16_t (*udp_sport)(const struct qp *qp);
	/* Payload bytes handed on and not yet acknowledged by the peer, for a window
	 * algorithm's in-flight cap; NULL when the backend cannot tell (rxe does not). */
	uint64_t (*unacked_bytes)(const struct qp *qp);
	/* The device's per-QP rate limits for RC QPs: 0 with @caps, or -EOPNOTSUPP when it
	 * has none (rxe, the soft backend: the default), which leaves pacing to the gate. */
	int (*rate_caps)(struct qp_ctx *ctx, struct qp_rate_caps *caps);
	/* Limit the connected QP's rate to @kbps (within the caps): 0 or -errno. */
	int (*rate_limit)(struct qp *qp, uint32_t kbps);
};

/* For backends: the initial send PSN, attr.psn when psn_fixed, else random (24 bits). */
uint32_t qp_initial_psn(const struct qp *qp);

/* The backends built into this library, by name ("ibv", "soft"); NULL when unknown. */
const struct qp_backend_ops *qp_backend_find(const char *name);
/* NULL-terminated list, for --help. */
const struct qp_backend_ops *const *qp_backend_all(void);
extern const struct qp_backend_ops qp_ibv_ops;

/* ---- contexts ---- */

/* Open a backend instance; -errno with one line in err (ibv with no device names the soft
 * backend and docs/soft-roce.md). */
int qp_ctx_open(const char *backend, const struct qp_ctx_attr *attr, struct qp_ctx **out,
		char *err, size_t errlen);
/* The same with an explicit ops table (tests, out-of-tree backends). */
int qp_ctx_open_ops(const struct qp_backend_ops *ops, const struct qp_ctx_attr *attr,
		    struct qp_ctx **out, char *err, size_t errlen);
/* Destroy remaining QPs and regions, close. NULL is a no-op. */
void qp_ctx_close(struct qp_ctx *ctx);
/* Fd for an event loop, readable when qp_ctx_progress has input; -EOPNOTSUPP if none. */
int qp_ctx_fd(struct qp_ctx *ctx);
/* Earliest time qp_ctx_progress must run: backend timers and paced chunks. */
qp_time_ns qp_ctx_deadline(struct qp_ctx *ctx);
/* Hand on paced chunks that are due and run the backend; returns work done or -errno. */
int qp_ctx_progress(struct qp_ctx *ctx, qp_time_ns now);
/* Offer every QP's pending piece to its gate now, whatever its retry time: for a driver
 * that knows when a gate may have opened (virtual time: a frame in, an agent timer), so
 * nothing has to poll for credits or the window (qp_gate_params.credit_poll_ns). Returns
 * the QPs tried, or -errno. */
int qp_ctx_retry(struct qp_ctx *ctx, qp_time_ns now);

/* The context's clock: attr.clock when installed, else qp_now_ns(). */
static inline qp_time_ns qp_ctx_now(const struct qp_ctx *ctx)
{
	return ctx->attr.clock ? ctx->attr.clock(ctx->attr.clock_arg) : qp_now_ns();
}

/* ---- memory ---- */

/* Register [addr, addr+len) with QP_ACCESS_* rights. */
int qp_mr_reg(struct qp_ctx *ctx, void *addr, size_t len, unsigned access,
	      struct qp_mr **out);
/* Deregister; NULL is a no-op. */
int qp_mr_dereg(struct qp_mr *mr);

/* ---- QPs ---- */

/* Create an RC QP (not yet connected). @attr may be NULL for defaults. */
int qp_create(struct qp_ctx *ctx, const struct qp_attr *attr, struct qp **out,
	      char *err, size_t errlen);
/* Destroy; NULL is a no-op. */
int qp_destroy(struct qp *qp);
/* This side's connection data; @expose (may be NULL) is the region the peer may write. */
int qp_local_info(struct qp *qp, const struct qp_mr *expose, struct qp_conn_info *out);
/* Connect to the peer's data (checked: MTU, QPN and PSN ranges); the path MTU is the
 * smaller of the two. */
int qp_connect(struct qp *qp, const struct qp_conn_info *remote, char *err, size_t errlen);

/* Create, exchange connection data over TCP (perftest without -R) and connect.
 * Client: connects to host:port, retrying for up to timeout_ns (0 = 30 s). */
int qp_dial(struct qp_ctx *ctx, const struct qp_attr *attr, const char *host,
	    const char *port, const struct qp_mr *expose, qp_time_ns timeout_ns,
	    struct qp **out, char *err, size_t errlen);
/* Server: accepts one client on [bind]:port (bind NULL = any). */
int qp_accept(struct qp_ctx *ctx, const struct qp_attr *attr, const char *bind,
	      const char *port, const struct qp_mr *expose, qp_time_ns timeout_ns,
	      struct qp **out, char *err, size_t errlen);
/* The TCP part of qp_dial / qp_accept alone, for exchanges in another format (qpace-bench
 * speaks perftest's): a connected stream socket (close it), or -errno with @err. The
 * client retries a refused connection until @timeout_ns (0 = 30 s) passes; the server
 * accepts one client on [bind]:port. */
int qp_tcp_dial(const char *host, const char *port, qp_time_ns timeout_ns, char *err,
		size_t errlen);
int qp_tcp_accept(const char *bind, const char *port, qp_time_ns timeout_ns, char *err,
		  size_t errlen);
/* Send (@out) or receive exactly @len bytes on the socket @fd before @deadline;
 * @wait(@arg, fd, events, deadline) returns 0 once the socket is ready for @events (the
 * caller's own work running meanwhile), or -errno (-ETIMEDOUT past the deadline). 0, or
 * -ECONNRESET when the peer hangs up first, or the wait's or the socket's -errno. */
int qp_tcp_io(int fd, void *buf, size_t len, bool out, qp_time_ns deadline,
	      int (*wait)(void *arg, int fd, short events, qp_time_ns deadline), void *arg);
/* The exchange alone, on a connected stream socket: send ours, read and check theirs. */
int qp_exchange_fd(int fd, const struct qp_conn_info *local, struct qp_conn_info *remote,
		   qp_time_ns timeout_ns, char *err, size_t errlen);
/* The same through librdmacm (perftest -R); the message rides in the CM private data.
 * -EOPNOTSUPP on backends without a CM. */
int qp_dial_cm(struct qp_ctx *ctx, const struct qp_attr *attr, const char *host,
	       const char *port, const struct qp_mr *expose, struct qp **out,
	       char *err, size_t errlen);
int qp_accept_cm(struct qp_ctx *ctx, const struct qp_attr *attr, const char *bind,
		 const char *port, const struct qp_mr *expose, struct qp **out,
		 char *err, size_t errlen);

/* Post a send WR through the pacing gate (see the top of this file for blocking rules).
 * -EINVAL: bad opcode, length or region; -ENOTCONN: not connected; -EAGAIN: non-blocking
 * and the gate is closed or a WR is still pending. */
int qp_post_send(struct qp *qp, const struct qp_wr *wr);
/* A non-blocking QP still handing on its last WR, with no qpaced client for a post to
 * tick: a qp_post_send of a WR that passes its checks would return -EAGAIN and change
 * nothing, so a caller whose WRs have passed them before may wait for the completion or
 * for qp_send_deadline instead of asking. */
bool qp_send_busy(const struct qp *qp);
/* Post a receive buffer (not paced). */
int qp_post_recv(struct qp *qp, const struct qp_recv_wr *wr);
/* Poll up to n completions; returns how many (>= 0) or -errno. */
int qp_poll(struct qp *qp, struct qp_wc *wc, int n);
/* When a post could next pass the gate (now when open; QP_TIME_NEVER for no QP). */
qp_time_ns qp_send_deadline(struct qp *qp, qp_time_ns now);
/* Counters: common (tx, gate) and backend (rx, retransmissions...) in one struct. */
void qp_get_stats(struct qp *qp, struct qp_stats *out);

/* Registration with the agent: one of "off" (not registered: no agent socket, an
 * in-process table, not connected, or no IPv4 GID), "pending", "registered", "refused". */
const char *qp_agent_state(const struct qp *qp);

/* Names for printing; "UNKNOWN" when out of range. */
const char *qp_wc_status_str(enum qp_wc_status s);
const char *qp_opcode_str(enum qp_opcode op);

#endif
