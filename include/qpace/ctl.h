/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent's control protocol: applications register QPs, qpacectl asks and overrides.
 *
 * Carried over the agent's unix socket (SOCK_SEQPACKET, one message per packet, default
 * CTL_DEFAULT_SOCKET, mode 0660). Every message starts with an 8-byte header, all fields
 * network order:
 *
 *   0  magic    u16  0x5141 ("QA")
 *   2  version  u8   1
 *   3  type     u8   enum ctl_type
 *   4  length   u16  whole message, at most CTL_MAX_LEN
 *   6  id       u16  request id, echoed in the replies
 *
 * Bodies (offsets from the body start; "name" = 16 bytes, NUL-padded, [a-z0-9_-]; "params"
 * = a u8 length then that many bytes of printable ASCII without spaces, at most 191):
 *
 *   REGISTER   (57 + params [+ 32]) qpn u32, peer_qpn u32, local_ip u32, peer_ip u32,
 *              sport u16, flags u16, mtu u32, link_bps u64, base_rtt_ns u64, algo name,
 *              params; with flags' AGENT_QP_IPV6 (2) then local_ip6, peer_ip6 (16 bytes
 *              each; absent: all 0, which the agent refuses)
 *   UNREGISTER (4) qpn u32                      SHOW (4) qpn u32
 *   EVENT      (16) qpn u32, cc event type u8 (cnp 2, rtt 4, acked 5, flow start 6,
 *              flow finish 7), reserved 3, value u64 (ns or bytes)
 *   STATS      (24) qpn u32, reserved u32, tx_bytes u64, retransmissions u64
 *   LIST, STATUS (0)
 *   SET        (33 + params) qpn u32, what u8 (1 rate, 2 algorithm), reserved 3,
 *              rate_bps u64 (0 = back to the algorithm), algo name, params
 *   REPLY      (9 + text) status i32 (0 or -errno), count u32, text u8 length + bytes
 *   QP         (153 + params [+ 8 [+ 34]]) one QP's view (struct agent_qp_view; layout in
 *              lib/ctl.c); an optional tail, cap_bytes u64 (the in-flight cap; absent = 0),
 *              then the wire's figures: flags u16 (1 seen, 2 discovered), bytes u64, pkts
 *              u64, measured_bps u64, set_bps u64 (absent = not seen), then enforce u8
 *              (enum agent_qp_enforce; absent = gate), reserved u8, then with flags'
 *              AGENT_QP_IPV6 local_ip6, peer_ip6 (16 bytes each; absent = all 0)
 *   TXSTATE    (12) qpn u32, record version u8 (CTL_TXSTATE_VERSION), enforce u8 (enum
 *              agent_qp_enforce: gate 0 or nic 1), reserved u16, psn u32 (24 bits: the PSN
 *              the QP's next posted packet takes, counted by the verbs layer from every WR
 *              it handed the NIC and the initial sq_psn); not answered, as STATS
 *   AGENT      (24 + 8n [+ 32]) pid u32, qps u32, max_qps u32, n u16, reserved u16,
 *              uptime_ns u64, then n counters u64 in enum agent_counter order, then
 *              (when present) the feedback delay: samples u64, p50 ns u64, p99 ns u64,
 *              max ns u64 (kernel arrival to rate-table write)
 *
 * Conversation: each request gets exactly one REPLY, last, except EVENT, STATS and TXSTATE,
 * which are not answered (they may come often; failures are counted by the agent). LIST first
 * sends one QP per registered QP, SHOW one QP, STATUS one AGENT. REGISTER binds the QP to
 * the connection: only that connection may unregister it or report its events and stats,
 * and when it closes (the process exits or dies) its QPs are unregistered.
 *
 * A body may be longer than its fixed part (a later minor revision appends fields): the
 * extra bytes are ignored, and an AGENT with more counters than this build knows keeps the
 * known ones. ctl_decode rejects a wrong magic, another version, a length beyond the packet
 * or shorter than the body needs, a QPN above 24 bits, a bad name or params string and an
 * unknown type; it never reads past @len and writes *out only on success.
 */
#ifndef QPACE_CTL_H
#define QPACE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

#define CTL_MAGIC 0x5141
#define CTL_VERSION 1
#define CTL_HDR_LEN 8
#define CTL_MAX_LEN 1024
#define CTL_TEXT_MAX 240                 /* reply text bytes */
#define CTL_DEFAULT_SOCKET "/run/qpace/qpaced.sock"
#define CTL_SOCKET_ENV "QPACE_SOCKET"    /* overrides the default path in qpacectl */

/* ---- The agent's records: what the agent core takes (agent_register) and shows
 * (agent_qp_view), and what its clients (the verbs layer, qpacectl, the bench's monitor)
 * send and read. They are this protocol's, so both sides see them here. ---- */

/* Registration limits: string sizes, and field ranges the agent refuses a REGISTER outside. */
#define AGENT_ALGO_MAX 16u            /* algorithm name, NUL included */
#define AGENT_PARAMS_MAX 192u         /* algorithm parameters "k=v,...", NUL included */
#define AGENT_MIN_MTU 64u
#define AGENT_MAX_MTU 65536u
#define AGENT_MIN_RTT_NS 100u
#define AGENT_MAX_RTT_NS (10 * QP_NS_PER_S)
#define AGENT_MIN_LINK_BPS QP_KBPS
#define AGENT_MAX_LINK_BPS (10000 * QP_GBPS)

enum agent_qp_flags {
	AGENT_QP_RECEIVER = 1u << 0,  /* receives bulk data: pace credits to its peer */
	AGENT_QP_IPV6 = 1u << 1,      /* an IPv6 flow: local_ip6 and peer_ip6 name it,
				       * local_ip and peer_ip are 0 (docs/enforce.md, "IPv6") */
	AGENT_QP_READER = 1u << 2,    /* issues RDMA READs: the data comes to it, and it paces
				       * its own requests (qpace/agent.h, "reader") */
	AGENT_QP_FLAGS_ALL = AGENT_QP_RECEIVER | AGENT_QP_IPV6 | AGENT_QP_READER,
};

/* A QP as an application registers it. */
struct agent_qp_reg {
	uint32_t qpn;                /* local QPN, 24 bits */
	uint32_t peer_qpn;           /* the remote QPN it is connected to, 24 bits */
	uint32_t local_ip;           /* IPv4, host order, not 0 (0 with AGENT_QP_IPV6) */
	uint32_t peer_ip;            /* not 0 (0 with AGENT_QP_IPV6) */
	uint16_t sport;              /* UDP source port of its RoCEv2 frames; 0 = not known */
	uint16_t flags;              /* enum agent_qp_flags */
	uint32_t mtu_bytes;          /* payload bytes per packet, AGENT_MIN_MTU..AGENT_MAX_MTU */
	qp_rate_bps link_bps;        /* local link rate: the controller's line rate */
	qp_time_ns base_rtt_ns;      /* unloaded RTT to the peer */
	char algo[AGENT_ALGO_MAX];   /* "" = the agent's default (and its parameters) */
	char params[AGENT_PARAMS_MAX];
	/* AGENT_QP_IPV6: the flow's addresses, network order (as on the wire); neither the
	 * unspecified address nor an IPv4-mapped one (::ffff:0:0/96: that flow is IPv4's).
	 * All 0 without the flag. Feedback (INT, notices, levels: IPv4 flow keys) never
	 * names an IPv6 flow; CNPs from tc ingress do (agent_qp_find_flow6). */
	uint8_t local_ip6[16];
	uint8_t peer_ip6[16];
};

/* What enforces a QP's rate (qpacectl list: ENF). A program's QP reports gate or nic in
 * TXSTATE (verbs layer: the NIC's per-QP rate limit where the device has one, else the
 * pacing gate); a QP qpaced found on the wire is tc's (--enforce tc) or nobody's (observe). */
enum agent_qp_enforce {
	AGENT_ENF_GATE = 0,          /* qpace's pacing gate in the program (the default) */
	AGENT_ENF_NIC,               /* the NIC: ibv_modify_qp_rate_limit */
	AGENT_ENF_TC,                /* qpaced's tc egress program */
	AGENT_ENF_NONE,              /* measured only: nothing paces it */
	AGENT_ENF_COUNT
};

/* What the wire says of a QP: the tc egress program's counters of its frames (qpaced
 * --enforce tc|observe, docs/enforce.md), as the shell reports them (agent_qp_wire). */
struct agent_qp_wire {
	bool seen;                   /* its frames were seen on the wire: the rest is valid */
	bool discovered;             /* registered by qpaced from the wire, not by a program */
	uint64_t bytes;              /* Ethernet frame bytes sent */
	uint64_t pkts;
	qp_rate_bps measured_bps;    /* over the shell's last sample interval */
	qp_rate_bps set_bps;         /* the rate the program enforces; 0 = none (observe) */
	/* What guards rxe's ACK timer (docs/enforce.md, "No program fails because of qpaced"):
	 * the algorithm wants less than the floor (one frame per WIRE_ACK_SHARE of the ACK
	 * timeout), so the flow is paced at the floor instead; its go-back-N resends and the
	 * frames given AckReq, as counted. */
	bool floored;
	uint64_t resent, ackreqs;
};

/* What monitoring shows of one QP. */
struct agent_qp_view {
	struct agent_qp_reg reg;     /* as registered; algo/params: the ones in force */
	uint32_t owner;              /* agent_register's owner (not sent) */
	uint32_t pid;                /* the registering process (0 = embedded) */
	int32_t slot;                /* rate-table slot */
	qp_rate_bps rate_bps;        /* published: the override when set, else target */
	qp_rate_bps target_bps;      /* the algorithm's own decision */
	uint64_t cap_bytes;          /* published in-flight cap (a window algorithm's); 0 = none */
	bool override;               /* a manual rate is in force */
	bool credit_gated;           /* the gate spends credits for this QP */
	uint64_t credits_rx_bytes;   /* cumulative credits granted to this QP (sender) */
	uint64_t credits_tx_bytes;   /* cumulative credits this agent granted its peer */
	double utilization;          /* most congested hop of the last INT: tx/B + q/(B*T) */
	uint32_t queue_bytes;        /* largest queue in the last INT / notice / level */
	qp_time_ns rtt_ns;           /* base RTT + the queueing delay of that INT's hops */
	uint64_t tx_bytes;           /* reported by the application (agent_qp_stats) */
	uint64_t retransmissions;    /* reported by the application */
	uint64_t feedback;           /* messages that reached this QP */
	uint64_t psn64;              /* highest extended PSN seen */
	struct agent_qp_wire wire;
	uint8_t enforce;             /* enum agent_qp_enforce */
};

/* The agent's counters, one per outcome; AGENT carries them in this order, so a new one is
 * appended. Names and help: agent_counter_name/_help (qpace/agent.h). */
enum agent_counter {
	AGENT_C_FB_DATAGRAMS = 0,    /* feedback datagrams handed to the core */
	AGENT_C_FB_ACCEPTED,         /* from an allowed source, tag good, decoded */
	AGENT_C_FB_REJ_SOURCE,       /* source not on the allow-list */
	AGENT_C_FB_REJ_NOTAG,        /* key set, message carries no tag */
	AGENT_C_FB_REJ_TAG,          /* key set, tag wrong or malformed */
	AGENT_C_FB_MAL_PROTO,        /* wrong magic or version */
	AGENT_C_FB_MAL_TRUNC,        /* shorter than its header or body says */
	AGENT_C_FB_MAL_FIELD,        /* a field out of range */
	AGENT_C_FB_MAL_TYPE,         /* unknown message type */
	AGENT_C_FB_MAL_OVERSIZE,     /* datagram longer than any message (shell) */
	AGENT_C_FB_KERNEL_DROPS,     /* dropped by the kernel: socket buffer full (shell) */
	AGENT_C_FB_UNKNOWN_FLOW,     /* accepted, but no local QP has that flow */
	AGENT_C_FB_IGNORED,          /* accepted, nothing for this agent to do */
	AGENT_C_FB_CC_REJECTED,      /* the controller rejected the event */
	AGENT_C_FB_DUP_CREDIT,       /* credit grant with an old sequence number */
	AGENT_C_RATE_WRITES,         /* rate-table updates */
	AGENT_C_ECHOES,              /* INT reports echoed to the sender's agent */
	AGENT_C_GRANTS,              /* credit grants sent */
	AGENT_C_LEVEL_ACKS,          /* level acknowledgements sent */
	AGENT_C_TX_DROPPED,          /* datagrams dropped: the send queue was full */
	AGENT_C_CREDIT_EXPIRED,      /* credit gating ended: no grant for too long */
	AGENT_C_REG_OK,              /* QPs registered */
	AGENT_C_UNREG_OK,            /* QPs unregistered by request */
	AGENT_C_REAPED,              /* QPs removed because their process went away */
	AGENT_C_REG_BAD,             /* registration with a field out of range */
	AGENT_C_REG_DUP,             /* registration of a QPN already registered */
	AGENT_C_REG_FULL,            /* registration beyond max_qps or the rate table */
	AGENT_C_REG_ALGO,            /* registration with an unknown algorithm or bad params */
	AGENT_C_CTL_MALFORMED,       /* control messages that did not decode (shell) */
	AGENT_C_CTL_REJECTED,        /* control requests refused (unknown QP, bad value) */
	AGENT_C_OVERRIDES,           /* manual rate / algorithm changes */
	AGENT_C_HTTP_BAD,            /* metrics requests refused (shell) */
	AGENT_C_FB_REJ_REPLAY,       /* key set, signed message seen before or too old */
	AGENT_C_FB_REJ_FUTURE,       /* key set, sequence too far ahead of the agent's clock */
	AGENT_C_FB_SENDERS_EVICTED,  /* replay windows forgotten to make room for a sender */
	AGENT_C_WIRE_CREATED,        /* QPs created from flows seen on the wire (shell) */
	AGENT_C_WIRE_SKIPPED,        /* reported flows not made QPs: IPv6, ACK-only (shell) */
	AGENT_C_WIRE_IDLE,           /* QPs from the wire removed after going quiet (shell) */
	AGENT_C_WANTS_SENT,          /* INT wishes (and withdrawals) sent along flows' paths */
	AGENT_C_FB_WANT_SEEN,        /* a peer's INT wish that reached us: nothing to do */
	AGENT_C_TXPSN_STALE,         /* INT about a packet past the sender's last reported
				      * posted PSN (TXSTATE): the estimate was used */
	AGENT_C_TP_ACKS,             /* ACKs the QPs' transports reported (agent_qp_transport) */
	AGENT_C_TP_RTT,              /* RTT samples they reported */
	AGENT_C_TP_NAKS,             /* NAK sequence errors */
	AGENT_C_TP_TIMEOUTS,         /* retransmission timeouts */
	AGENT_C_TP_UNKNOWN,          /* transport events for no registered QP */
	AGENT_C_WIRE_FLOORED,        /* a QP from the wire whose algorithm asked for less than
				      * the no-timeout floor: paced at the floor (shell) */
	AGENT_C_COUNT
};

/* EVENT's event types: the values of enum cc_event_type (qpace/cc.h) an application may
 * report (the agent checks that the two agree). */
enum ctl_event_type {
	CTL_EV_CNP = 2,
	CTL_EV_RTT = 4,
	CTL_EV_ACKED = 5,
	CTL_EV_FLOW_START = 6,
	CTL_EV_FLOW_FINISH = 7,
};

enum ctl_type {
	CTL_T_REGISTER = 1,
	CTL_T_UNREGISTER = 2,
	CTL_T_EVENT = 3,
	CTL_T_STATS = 4,
	CTL_T_LIST = 5,
	CTL_T_SHOW = 6,
	CTL_T_SET = 7,
	CTL_T_STATUS = 8,
	CTL_T_REPLY = 9,
	CTL_T_QP = 10,
	CTL_T_AGENT = 11,
	CTL_T_TXSTATE = 12,
	CTL_T_COUNT
};

enum ctl_set_what {
	CTL_SET_RATE = 1,
	CTL_SET_ALGO = 2,
};

struct ctl_event {
	uint32_t qpn;
	uint8_t type;            /* enum ctl_event_type */
	uint64_t value;          /* RTT ns, acked bytes, flow bytes; 0 otherwise */
};

struct ctl_stats {
	uint32_t qpn;
	uint64_t tx_bytes;
	uint64_t retransmissions;
};

struct ctl_set {
	uint32_t qpn;
	uint8_t what;            /* enum ctl_set_what */
	qp_rate_bps rate_bps;
	char algo[AGENT_ALGO_MAX];
	char params[AGENT_PARAMS_MAX];
};

#define CTL_TXSTATE_VERSION 1

/* TXSTATE: what the sending program's verbs layer knows of its QP. */
struct ctl_txstate {
	uint32_t qpn;
	uint32_t psn;            /* 24 bits: the next PSN the QP will post */
	uint8_t enforce;         /* AGENT_ENF_GATE or AGENT_ENF_NIC */
};

struct ctl_reply {
	int32_t status;          /* 0 or -errno */
	uint32_t count;          /* messages sent before this reply (LIST) */
	char text[CTL_TEXT_MAX + 1];
};

struct ctl_agent {
	uint32_t pid, qps, max_qps;
	qp_time_ns uptime_ns;
	uint64_t counters[AGENT_C_COUNT];  /* counters the peer did not send are 0 */
	uint64_t delay_samples;            /* 0 when not measured */
	qp_time_ns delay_p50_ns, delay_p99_ns, delay_max_ns;
};

struct ctl_msg {
	uint8_t type;            /* enum ctl_type */
	uint16_t id;
	union {
		struct agent_qp_reg reg;        /* REGISTER */
		uint32_t qpn;                   /* UNREGISTER, SHOW */
		struct ctl_event event;
		struct ctl_stats stats;
		struct ctl_set set;
		struct ctl_reply reply;
		struct agent_qp_view qp;        /* QP */
		struct ctl_agent agent;
		struct ctl_txstate txstate;
	} u;
};

/* Decode one message. 0, or -EPROTO (magic or version), -EMSGSIZE (truncated), -EINVAL (a
 * field out of range), -ENOMSG (unknown type), with one line in @err naming what. */
int ctl_decode(struct ctl_msg *out, const uint8_t *buf, size_t len, char *err, size_t errlen);

/* Encode; returns the length, or -EMSGSIZE / -EINVAL (a field the decoder would refuse). */
int ctl_encode(uint8_t *buf, size_t cap, const struct ctl_msg *m);

/* "register", "list"...; "unknown" outside the table. */
const char *ctl_type_name(unsigned type);
/* The flow's local (@peer false) or peer address as text: "a.b.c.d", or an IPv6 flow's
 * "fe80::1" (AGENT_QP_IPV6); QP_IPV6_STRLEN (qpace/addr.h) bytes hold any. Returns @buf. */
const char *agent_qp_addr_fmt(const struct agent_qp_reg *r, bool peer, char *buf, size_t len);
/* enum agent_qp_enforce: "gate", "nic", "tc", "none"; "unknown" outside. */
const char *ctl_enforce_name(unsigned enforce);

#endif
