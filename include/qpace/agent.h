/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The qpace agent core: per-QP congestion control, receiver credits and echoes for one host.
 *
 * Sans-I/O, shared by the daemon (qpaced: libev, real sockets, shared-memory rate table)
 * and by qpace-bench's emulated hosts (no daemon, an in-process rate table):
 *
 *     agent_create(&params, table, now)     limits fixed, memory for max_qps allocated
 *     agent_register(a, &reg, owner, now)   a local QP: its controller and rate-table slot
 *     agent_feed_datagram(a, buf, len, src) one feedback datagram: allow-list, tag, replay
 *                                           window, decode, then agent_feed_msg
 *     agent_feed_msg(a, &msg, src, now)     one decoded message -> the QP's controller
 *     agent_poll(a, now)                    controller timers, credit grants, credit expiry
 *     agent_next_ns(a)                      when agent_poll must run next
 *     agent_tx_take(a, out, max)            datagrams to send (echoes, grants, level acks)
 *     agent_unregister / _owner             a QP goes (or every QP of a dead process)
 *
 * No call reads a clock, sleeps or does I/O; time is passed in. Memory is allocated by
 * create and by the calls that create objects: register (the QP's controller) and the
 * first receiving QP of a local link (that link's credit pacer). Feeding feedback and
 * polling never allocate. Outputs: rate-table writes (qpace/ratetable.h: shared memory or
 * an in-process table), queued datagrams, the log hook, and per-QP views for monitoring.
 *
 * Roles, per feedback message (qpace/feedback.h). The data flow key is the sender's:
 * src IP, dst IP, UDP source port, destination QP.
 *   sender    INT / ECHO / NOTICE / LEVEL / CREDIT about data this host sends: the flow
 *             (src = local IP, dst = peer IP, dest QP = peer QPN) names a local QP; the
 *             message becomes a cc event, and a changed rate goes to the rate table. A
 *             LEVEL the algorithm acknowledges draws a level-7 reply to the switch that
 *             sent it. CREDIT adds to the QP's cumulative credits and turns credit gating
 *             on; with no grant for 4 grant intervals (at least 1 ms) it is turned off again,
 *             so a dead receiver agent cannot stall the sender.
 *   echo      INT flagged FB_F_TO_RECEIVER about data this host receives (dst = local IP,
 *             dest QP = a local QPN) is forwarded as ECHO to the sender's agent at
 *             src IP : peer_port.
 *   receiver  with credits on (--credits ia), every QP registered with AGENT_QP_RECEIVER
 *             is a sender of its local link's IA pacer (qpace/credit.h; one pacer per local
 *             IP, n = its receiving QPs): each grant goes as CREDIT to the peer's agent.
 *             Its arrivals come from the shell (agent_qp_arrived, agent_params.arrivals)
 *             or else from echo INT about the QP's data.
 *   reader    a QP registered with AGENT_QP_READER issues RDMA READs: its data flows from
 *             the peer to it (src = peer IP, dst = local IP, dest QP = its own QPN), and
 *             its requests are what can be paced (the gate charges a READ the bytes it
 *             asks for). What the switch says about READ responses goes to their receiver
 *             (FB_F_TO_RECEIVER): INT, notices and levels about a reader's data feed its
 *             own controller (and are not echoed); its INT wish and level acknowledgements
 *             name that data flow. With credits on it is its link's pacer's sender as a
 *             receiver is, and each grant is its own credit (its slot, as a sender's
 *             CREDIT would be), never a datagram: requests as grants.
 *
 * HPCC needs byte sequences (cc_int_report.seq, snd_nxt); the rate table carries no
 * transmit counter, so the agent derives them from the PSN in the report:
 *   psn64   the 24-bit PSN extended per QP (the nearest value to the highest seen)
 *   seq     = psn64 * MTU
 *   snd_nxt = (highest psn64 + 1) * MTU + window, window = the controller's cap_bytes when
 *             it sets one, else rate * base RTT
 * so a full update (seq > the snd_nxt of the previous one) comes once per window of data,
 * about once per RTT, as in HPCC. When the QP's owner can tell the sender's real
 * sequence (agent_params.snd_psn: the PSN one past the highest its QP has sent; the
 * in-process soft host reads its RC QP), snd_nxt is that instead:
 *   snd_nxt = (psn64 + (snd_psn - psn, 24-bit signed, at least 1)) * MTU
 * For QPs a program registers over the control socket (qpace's verbs layer, ibv or soft),
 * the program reports its QP's posted PSN (TXSTATE, qpace/ctl.h; agent_qp_txstate): the
 * PSN its next posted packet takes, counted from the initial sq_psn and every WR it handed
 * the NIC (WRITE / SEND: ceil(length / path MTU) PSNs, at least one; a READ request as
 * many as its response packets; an atomic one). That is what the NIC has been given, not
 * what it has put on the wire: the pacing gate holds WRs back, so behind the gate the NIC
 * has at most a piece or two queued and the figure is close to the wire's; with the NIC
 * enforcing the rate itself (AGENT_ENF_NIC) the NIC may hold up to the send queue's WRs,
 * and the figure runs ahead of the wire by those. It is also as old as the last report
 * (the verbs layer sends one at most every base RTT while the QP posts), so it lags what
 * is posted now by up to that interval's data. An INT report about a packet at or past it proves it stale:
 * counted (txpsn_stale) and the estimate used for that report. Otherwise
 *   snd_nxt = (psn64 + (posted psn - psn, 24-bit signed)) * MTU
 * The in-process callback (agent_params.snd_psn) wins when it answers.
 */
#ifndef QPACE_AGENT_H
#define QPACE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/cc.h"
#include "qpace/ctl.h"
#include "qpace/feedback.h"
#include "qpace/ratetable.h"
#include "qpace/siphash.h"

/* The records the agent takes and shows (struct agent_qp_reg, struct agent_qp_view, enum
 * agent_counter) and their limits are the control protocol's: qpace/ctl.h. Its event
 * types are cc's: */
_Static_assert((int)CTL_EV_CNP == (int)CC_EV_CNP && (int)CTL_EV_RTT == (int)CC_EV_RTT &&
	       (int)CTL_EV_ACKED == (int)CC_EV_ACKED &&
	       (int)CTL_EV_FLOW_START == (int)CC_EV_FLOW_START &&
	       (int)CTL_EV_FLOW_FINISH == (int)CC_EV_FLOW_FINISH, "ctl's event types are cc's");
/* A LEVEL message's levels are cc's (qpace/feedback.h). */
_Static_assert(FB_LEVEL_MAX == CC_LEVEL_SEVERE && FB_LEVEL_ACK == CC_LEVEL_ACK,
	       "feedback's levels are cc's");

#define AGENT_DEF_MAX_QPS 1024u
#define AGENT_MAX_QPS QP_RATETABLE_MAX_SLOTS
#define AGENT_MAX_LINKS 16u           /* local IPs with a credit pacer */
#define AGENT_MAX_ALLOW 32u           /* allow-list entries */
#define AGENT_DEF_TX_QUEUE 1024u      /* datagrams queued for the shell */
#define AGENT_MAX_TX_QUEUE 65536u
#define AGENT_MAX_INT_EVERY 1000000u
#define AGENT_WANT_REFRESH_NS QP_NS_PER_S  /* a QP's INT wish is repeated this often */
#define AGENT_DEF_SENDERS 256u        /* signers whose replay windows are kept */
/* Credit gating ends after 4 silent grant intervals, and never sooner than 100 ms: the
 * gate's own "dead agent" age (QP_GATE_DEF_STALE_NS). A 1 ms floor ended gating whenever
 * a busy machine held the receiver's agent up for a few ms, and the ungated senders'
 * burst overflowed the port the credits were pacing. */
#define AGENT_CREDIT_EXPIRY_GRANTS 4u
#define AGENT_CREDIT_EXPIRY_MIN_NS (100 * QP_NS_PER_MS)

/* One allow-list entry: a source network, host order. */
struct agent_net {
	uint32_t addr;
	uint8_t prefix;              /* 0..32 */
};

enum agent_log_kind {
	AGENT_LOG_INFO = 0,          /* lifecycle, manual overrides */
	AGENT_LOG_WARN,              /* bad input, first of its kind */
};

struct agent_params {
	uint32_t max_qps;            /* 1..AGENT_MAX_QPS; bounds memory */
	const char *cc;              /* default algorithm (the registry's name) */
	const char *cc_params;       /* its parameters "k=v,..."; NULL or "" = defaults */
	bool credits;                /* receiver role: IA credit pacing on */
	bool arrivals;               /* the shell reports the data each receiving QP accepts
				      * (agent_qp_arrived): that clocks the credits from the
				      * start, and echo INT then does not (one source of
				      * arrivals). false (qpaced, which cannot see the NIC's
				      * receives): echo INT about received data is the arrival */
	bool rtt_floor;              /* a link's credit pacer takes the base RTT registered
				      * with its first receiving QP as the least RTT it may
				      * measure (credit_params.rtt_floor_ns): the shell's RTT is
				      * a model's that its real path may undercut (qpace-bench's
				      * hosts in real time); false (qpaced): the measured one */
	uint16_t peer_port;          /* where peer agents listen: FB_PORT */
	uint32_t tx_queue;           /* 1..AGENT_MAX_TX_QUEUE datagrams */
	uint64_t seed;               /* credit pacers' first-grant phases */
	struct agent_net allow[AGENT_MAX_ALLOW];
	unsigned nallow;             /* 0 = no source is accepted */
	bool have_key;               /* feedback must be signed (qpace/fb_auth.h) */
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	uint32_t sender_id;          /* with a key: who this agent signs as, unique in the
				      * deployment (qpaced: random at start) */
	uint32_t max_senders;        /* with a key: replay windows kept (qpace/fb_replay.h) */
	/* INT sampling each QP whose algorithm takes INT reports asks the switches on its
	 * path for (FB_T_WANT): at most one report per int_every data frames (0 = 1) and per
	 * int_interval_ns (0: no time limit). QPs whose algorithm takes none ask for none. */
	uint32_t int_every;          /* 0..AGENT_MAX_INT_EVERY */
	qp_time_ns int_interval_ns;
	qp_time_ns clock_offset_ns;  /* now + this = the clock of sequence numbers, signed
				      * and checked (qpaced: qp_wall_offset_ns(); 0 when every
				      * party shares one clock) */
	void (*log)(void *arg, enum agent_log_kind kind, const char *line);
	void *log_arg;
	/* The sender's real sequence for QP @qpn: true with *psn = the PSN one past the
	 * highest it has sent (24 bits); false or NULL = the estimate (above). */
	bool (*snd_psn)(void *arg, uint32_t qpn, uint32_t *psn);
	void *snd_psn_arg;
};

/* Fill @p with the defaults: 1024 QPs, cc "hpcc", no credits, peer port 4792, tx queue
 * 1024, allow 127.0.0.0/8, no key (256 senders' windows with one), no log. */
void agent_params_default(struct agent_params *p);

const char *agent_counter_name(enum agent_counter c);  /* "feedback_accepted"... */
const char *agent_counter_help(enum agent_counter c);

/* What agent_feed_* did: bits. */
enum agent_rx_result {
	AGENT_RX_ACCEPTED = 1u << 0,   /* the message was valid and from an allowed source */
	AGENT_RX_MATCHED = 1u << 1,    /* it reached a local QP */
	AGENT_RX_RATE = 1u << 2,       /* a rate-table slot was written */
	AGENT_RX_TX = 1u << 3,         /* a datagram was queued */
};

/* A datagram for the shell to send. */
struct agent_dgram {
	uint32_t dst_ip;             /* host order */
	uint16_t dst_port;
	uint16_t len;
	uint8_t buf[FB_MAX_LEN];
};

struct agent;

/* Create. Checks every parameter (message names it and its range), the default algorithm
 * and its parameters, and that @table has a slot for every QP; NULL with @err on error.
 * @table (not owned) receives every rate write. */
struct agent *agent_create(const struct agent_params *p, struct qp_ratetable *table,
			   qp_time_ns now, char *err, size_t errlen);
void agent_destroy(struct agent *a);

/* Register a QP for @owner (an opaque id: the shell's connection; 0 = embedded) and
 * process @pid. The QP gets a rate-table slot and a controller; its first rate is
 * published at once. 0, or -EINVAL (a field out of range), -EEXIST (QPN, or the flow,
 * already registered), -ENOSPC (max_qps or the table), -ENOENT (unknown algorithm) with
 * one line in @err; counted, the first of each kind logged. */
int agent_register(struct agent *a, const struct agent_qp_reg *r, uint32_t owner,
		   uint32_t pid, qp_time_ns now, char *err, size_t errlen);
/* Remove one QP (its slot freed, its receiving credit sender removed). 0 or -ENOENT. */
int agent_unregister(struct agent *a, uint32_t qpn, qp_time_ns now);
/* Remove every QP of @owner (reaping a dead process); returns how many. */
unsigned agent_unregister_owner(struct agent *a, uint32_t owner, qp_time_ns now);

/* One feedback datagram from @src_ip:@src_port: allow-list; when a key is set, each
 * message's tag and its sender's replay window (qpace/fb_replay.h, at @now +
 * clock_offset_ns); decode, then agent_feed_msg. Returns enum agent_rx_result bits
 * (0 = dropped, counted). */
unsigned agent_feed_datagram(struct agent *a, const uint8_t *buf, size_t len,
			     uint32_t src_ip, uint16_t src_port, qp_time_ns now);
/* One decoded message (already trusted). Returns enum agent_rx_result bits. */
unsigned agent_feed_msg(struct agent *a, const struct fb_msg *m, uint32_t src_ip,
			uint16_t src_port, qp_time_ns now);

/* Map a decoded feedback message onto the congestion-control event it carries (the agent's
 * translation; the wire codec knows nothing of cc). INT/ECHO -> CC_EV_INT (seq = the PSN;
 * the caller sets seq and snd_nxt in its own byte space; hops point into @m), NOTICE ->
 * CC_EV_NOTICE, LEVEL 0..3 -> CC_EV_LEVEL. Returns 0, or -ENOENT for messages that are no
 * cc event (acks, credits). */
int fb_to_cc_event(const struct fb_msg *m, struct cc_event *ev);

/* An event the application reports for its QP (CNP, RTT sample, bytes acked, flow start /
 * finish): straight to the controller. 0, -ENOENT (no such QP) or -EINVAL (bad event). */
int agent_qp_event(struct agent *a, uint32_t qpn, const struct cc_event *ev, qp_time_ns now);
/* A transport event of a local sending QP as its source saw it (the soft RC, qpaced's tc
 * ingress program, the verbs layer's completions): 24-bit PSNs, extended here per QP. */
enum agent_tp_type {
	AGENT_TP_ACK = 1,            /* an ACK that acknowledged @bytes (and maybe an RTT) */
	AGENT_TP_RTT,                /* an RTT sample alone (a source that sees no bytes) */
	AGENT_TP_NAK,                /* a NAK sequence error for @psn */
	AGENT_TP_TIMEOUT,            /* a retransmission timeout, @count in a row */
};
enum {
	AGENT_TP_F_PSN = 1u << 0,    /* @psn is known */
	AGENT_TP_F_SND = 1u << 1,    /* @snd_psn is known */
};
struct agent_tp_event {
	uint8_t type;                /* enum agent_tp_type */
	uint8_t ecn;                 /* ACK: enum cc_ecn */
	uint8_t flags;               /* AGENT_TP_F_* */
	uint32_t psn;                /* ACK: the first PSN not acknowledged; NAK: the PSN the
				      * receiver expected; timeout: the oldest unacknowledged */
	uint32_t snd_psn;            /* one past the highest PSN sent */
	uint64_t bytes;              /* ACK: newly acknowledged payload bytes */
	qp_time_ns rtt_ns;           /* ACK, RTT: the sample (0 = none with an ACK) */
	qp_time_ns host_ns;          /* of the sample, the end hosts' part (0 = not known) */
	uint32_t count;              /* timeout */
};
/* Hand @e of QP @qpn to its controller as the cc events it takes (qpace/cc.h: an ACK as
 * CC_EV_ACKED and its sample as CC_EV_RTT, a NAK as CC_EV_NAK, a timeout as
 * CC_EV_TIMEOUT; only those its algorithm has handlers for, so a controller that takes
 * none runs as without them), publish a changed rate, and count it (transport_* counters;
 * the QP's view shows the last RTT sample). Returns enum agent_rx_result bits (0: no such
 * QP, counted in transport_unknown_qp, or a malformed event, counted as the controller's
 * rejection). */
unsigned agent_qp_transport(struct agent *a, uint32_t qpn, const struct agent_tp_event *e,
			    qp_time_ns now);
/* The CC_NEED_* bits of QP @qpn's algorithm (0 when no such QP). */
unsigned agent_qp_needs(const struct agent *a, uint32_t qpn);
/* QP @qpn's controller, to read (its counters); NULL when no such QP. */
const struct cc *agent_qp_cc(const struct agent *a, uint32_t qpn);

/* @bytes of data arrived on receiving QP @qpn at @now (agent_params.arrivals, or qpaced's
 * tc ingress counts): its link's credit pacer counts them against the sender's window and
 * answers with a grant (qpace/credit.h); from the first call on, echo INT about the QP's
 * data is no arrival (one source). 0 (also when the QP paces no credits), or -ENOENT (no
 * such QP: not counted, data may arrive before a QP registers). */
int agent_qp_arrived(struct agent *a, uint32_t qpn, uint64_t bytes, qp_time_ns now);
/* A sender QP's IA credits as a shell that enforces them itself needs them (qpaced's tc
 * egress program): gating on, its generation (+1 each time gating turns on, so credits
 * count afresh), the credit bytes granted in it, the last grant's time and interval, and
 * when gating ends without another (QP_TIME_NEVER when off). 0 or -ENOENT. */
struct agent_qp_credit {
	bool gated;
	uint32_t gen;
	uint64_t gen_bytes;
	qp_time_ns last_ns, interval_ns, expiry_ns;
};
int agent_qp_credit(const struct agent *a, uint32_t qpn, struct agent_qp_credit *out);
/* Counters the application reports for its QP (shown by monitoring). */
int agent_qp_stats(struct agent *a, uint32_t qpn, uint64_t tx_bytes, uint64_t retransmissions);

/* What the QP's program reports of its sender (TXSTATE): the PSN its next posted packet
 * takes, and what enforces its rate (shown by monitoring). 0, -ENOENT, -EINVAL (a PSN over
 * 24 bits, an unknown enforcer). */
int agent_qp_txstate(struct agent *a, const struct ctl_txstate *t);

/* What the wire says of the QP (the shell's tc egress counters): shown by monitoring. */
int agent_qp_wire(struct agent *a, uint32_t qpn, const struct agent_qp_wire *w);
/* The slowest egress link (INT's per-hop link rate) the data of a QP to IPv4 @peer_ip
 * crossed, of all such QPs; with @peer_ip 0, of every QP. 0 when no INT report said. */
qp_rate_bps agent_path_link_bps(const struct agent *a, uint32_t peer_ip);
/* The QP that sends the flow (local IP, peer IP, peer QPN), as feedback finds it: 0 with
 * *@qpn, or -ENOENT. */
int agent_qp_find_flow(const struct agent *a, uint32_t local_ip, uint32_t peer_ip,
		       uint32_t peer_qpn, uint32_t *qpn);
/* The same for an IPv6 flow (AGENT_QP_IPV6; addresses network order, 16 bytes): only an
 * IPv6 QP matches, never an IPv4 one whose IPv4-mapped address these would be. */
int agent_qp_find_flow6(const struct agent *a, const uint8_t local[16], const uint8_t peer[16],
			uint32_t peer_qpn, uint32_t *qpn);

/* Manual overrides (logged). Rate: 0 = back to the algorithm; else AGENT_MIN_LINK_BPS ..
 * the QP's link rate. Algorithm: a new controller replaces the old one ("" = default). */
int agent_set_rate(struct agent *a, uint32_t qpn, qp_rate_bps bps, uint32_t who_pid,
		   qp_time_ns now, char *err, size_t errlen);
int agent_set_algo(struct agent *a, uint32_t qpn, const char *algo, const char *params,
		   uint32_t who_pid, qp_time_ns now, char *err, size_t errlen);

/* Run controller timers, credit grants and credit expiry due at or before @now. */
void agent_poll(struct agent *a, qp_time_ns now);
/* When agent_poll must run next; QP_TIME_NEVER when nothing is pending. */
qp_time_ns agent_next_ns(const struct agent *a);

/* Move up to @max queued datagrams into @out (oldest first); returns how many. */
unsigned agent_tx_take(struct agent *a, struct agent_dgram *out, unsigned max);
unsigned agent_tx_pending(const struct agent *a);

/* Add @n to counter @c without logging (the shell's bulk counts: kernel drops). */
void agent_count(struct agent *a, enum agent_counter c, uint64_t n);
/* Count one event of @c (the shell's kinds too) and log @fmt the first time only. */
void agent_note(struct agent *a, enum agent_counter c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Monitoring. */
const uint64_t *agent_counters(const struct agent *a);   /* AGENT_C_COUNT values */
uint32_t agent_qp_count(const struct agent *a);
uint32_t agent_max_qps(const struct agent *a);
/* The view of QP @qpn: 0 or -ENOENT. */
int agent_qp_view(const struct agent *a, uint32_t qpn, struct agent_qp_view *v);
/* Iterate: the view at table index @idx (0..max_qps-1): 0, -ENOENT (empty), -ERANGE. */
int agent_qp_view_at(const struct agent *a, uint32_t idx, struct agent_qp_view *v);
/* The local link of @local_ip, for tests and monitoring: senders n, W, Δ, period. */
int agent_link_view(const struct agent *a, uint32_t local_ip, uint32_t *n, uint32_t *w,
		    qp_time_ns *delta_ns, qp_time_ns *period_ns);

/* Parse "a.b.c.d[/prefix]" (the address as qpace/addr.h reads it) or "any" (0.0.0.0/0).
 * 0 or -EINVAL. */
int agent_net_parse(const char *s, struct agent_net *out);
bool agent_net_match(const struct agent_net *n, uint32_t ip);

#endif
