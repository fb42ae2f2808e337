/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace congestion control: one small interface for every algorithm.
 *
 * A controller governs one sending QP. It is a pure state machine:
 *
 *     cc_create(name, path, "key=value,...")   parameters checked, state allocated
 *     cc_event(cc, &ev, now_ns)                 feedback in
 *     cc_timer(cc, now_ns)                      expired timers run, up to now_ns
 *     cc->rate_bps, cc->cap_bytes               decision out
 *     cc->timer_ns                              when cc_timer wants to run next
 *     cc_destroy(cc)
 *
 * No call reads a clock, sleeps, prints or does I/O; create is the only one that
 * allocates. Every call takes the current time, so the agent (real time, libev), the
 * emulated hosts and the unit tests (injected time) run exactly the same code.
 *
 * Adding an algorithm is one file in agent/cc/ exporting a `const struct cc_ops`, its
 * tests, and one line in the registry table (agent/cc/registry.c). Everything else about
 * it is read from its ops: the feedback the network must give it (cc_needs and
 * ops->feedback, from which qpace-bench sets up its switch), the transport events it
 * takes (cc_needs again: its handlers), its parameter table (parsing, --help-params, the
 * parameter tables in the docs), its counters (reports) and the lists of algorithms in
 * help.
 *
 * Two kinds of events reach a controller. The switch's: INT reports, early notices,
 * congestion levels, CNPs. The transport's, from whatever carries the QP's packets
 * (docs/algorithms.md, "Transport events", says which source gives which):
 *   CC_EV_ACKED    an ACK that acknowledged something new: bytes, the cumulative PSN, the
 *                  sender's highest PSN, the ECN echo where the transport carries one
 *   CC_EV_RTT      an RTT sample: the send time of the acknowledged PSN to the ACK's
 *                  arrival (never of a retransmitted PSN: Karn), after its CC_EV_ACKED
 *   CC_EV_NAK      a NAK sequence error: the receiver saw a gap (a packet was lost)
 *   CC_EV_TIMEOUT  the transport's retransmission timer expired
 * PSNs are 64-bit: the source extends the transport's 24-bit ones, so they never wrap.
 */
#ifndef QPACE_CC_H
#define QPACE_CC_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"
#include "qpace/rate.h"
#include "qpace/int.h"

/* The path a controller governs; fixed for the controller's life. */
struct cc_path {
	qp_rate_bps line_bps;    /* sender line rate: the ceiling of every algorithm */
	qp_time_ns base_rtt_ns;  /* T: the unloaded round-trip time */
	uint32_t mtu_bytes;      /* payload bytes per packet */
};

enum cc_event_type {
	CC_EV_INT = 0,      /* INT report: the hops the data crossed */
	CC_EV_NOTICE,       /* early congestion notice, sent by a switch at enqueue */
	CC_EV_CNP,          /* RoCEv2 CNP (or ECN echo) for this QP */
	CC_EV_LEVEL,        /* FFD congestion level, 0..3 */
	CC_EV_RTT,          /* an RTT sample (struct cc_rtt) */
	CC_EV_ACKED,        /* an ACK: bytes newly acknowledged (struct cc_ack) */
	CC_EV_FLOW_START,   /* the QP starts sending a message/flow */
	CC_EV_FLOW_FINISH,  /* the QP has nothing more to send */
	CC_EV_NAK,          /* a NAK sequence error (struct cc_loss) */
	CC_EV_TIMEOUT,      /* a retransmission timeout (struct cc_loss) */
	CC_EV_COUNT
};

struct cc_int_report {
	/* Sequences are 64-bit byte counts that never wrap; the caller extends PSNs. */
	uint64_t seq;      /* sequence of the data that carried this INT */
	uint64_t snd_nxt;  /* the sender's next sequence when the report is handled */
	const struct qp_int_hop *hops;  /* nhops records, first hop first */
	unsigned nhops;    /* 1..QP_INT_MAX_HOPS, else the report is rejected unread */
};

struct cc_notice {
	uint32_t switch_id;
	uint32_t queue_bytes;       /* egress queue at the enqueue that triggered it */
	qp_rate_bps link_bps;       /* that egress link's rate */
	uint16_t flows;             /* flows with bytes in that queue; 0 = not known */
	qp_time_ns reflected_ts_ns; /* switch clock at that enqueue */
};

/* The ECN echo an ACK carries. */
enum cc_ecn {
	CC_ECN_NONE = 0,   /* the transport carries no echo (rxe's ACKs, completions) */
	CC_ECN_CLEAR,      /* echoed: none of the packets it acknowledges was marked CE */
	CC_ECN_CE,         /* echoed: they were marked CE (the soft RC: BTH BECN) */
};

struct cc_ack {
	uint64_t bytes;    /* payload bytes newly acknowledged, > 0 */
	uint64_t psn;      /* every PSN before this one is acknowledged; 0 = not known */
	uint64_t snd_psn;  /* one past the highest PSN sent when the ACK came; 0 = not known */
	uint8_t ecn;       /* enum cc_ecn */
};

struct cc_rtt {
	qp_time_ns rtt_ns;   /* the sample, > 0 */
	qp_time_ns host_ns;  /* of it, the time spent in the end hosts (Swift's endpoint
			      * delay: the receiver's ACK delay, the sender's NIC queue);
			      * 0 = none or not known (no qpace source tells it apart yet) */
};

struct cc_loss {
	uint64_t psn;      /* NAK: the PSN the receiver expected; timeout: the oldest
			    * unacknowledged PSN (0 = not known) */
	uint64_t snd_psn;  /* one past the highest PSN sent (0 = not known) */
	uint32_t count;    /* timeout: expiries in a row without progress (1, 2, ...) */
};

/* FFD levels. 7 is what a sender sends back; it is never an input. */
enum cc_level {
	CC_LEVEL_FREE = 0,      /* below min: increase */
	CC_LEVEL_HOLD = 1,      /* min..mid: hold */
	CC_LEVEL_DOWN = 2,      /* mid..max: x0.75 */
	CC_LEVEL_SEVERE = 3,    /* above max: x0.5 */
	CC_LEVEL_ACK = 7,
};

struct cc_event {
	enum cc_event_type type;
	union {
		struct cc_int_report int_report;
		struct cc_notice notice;
		uint8_t level;        /* CC_EV_LEVEL */
		struct cc_rtt rtt;    /* CC_EV_RTT */
		struct cc_ack ack;    /* CC_EV_ACKED */
		uint64_t flow_bytes;  /* CC_EV_FLOW_START: message size, 0 = unknown */
		struct cc_loss loss;  /* CC_EV_NAK, CC_EV_TIMEOUT */
	} u;
};

/* What a call changed; the caller acts on these bits. */
enum cc_action {
	CC_ACT_RATE = 1u << 0,       /* rate_bps or cap_bytes changed */
	CC_ACT_ACK_LEVEL = 1u << 1,  /* send level 7 for cc->level_to_ack to the switch */
	CC_ACT_LAST_WINDOW = 1u << 2,/* tell the switches on the path that the flow's last
				      * window is on its way (ACC's ramp-up in advance) */
};

#define CC_CAP_NONE UINT64_MAX

struct cc_stats {
	uint64_t events[CC_EV_COUNT];   /* accepted, by type */
	uint64_t rejected[CC_EV_COUNT]; /* malformed, by type (bad hop count, zero link rate…) */
	uint64_t timers;                /* cc_timer calls that ran something */
	uint64_t rate_changes;
};

struct cc_ops;

/* The public part of every controller; each algorithm embeds it first in its state. */
struct cc {
	const struct cc_ops *ops;
	struct cc_path path;
	qp_rate_bps rate_bps;     /* the pacing rate, [min rate, line rate] */
	/* In-flight cap, CC_CAP_NONE when the algorithm sets none. A sender may start a
	 * packet while bytes in flight + that packet <= cap_bytes (or nothing is in
	 * flight); the gate and the test model both follow this rule. */
	uint64_t cap_bytes;
	qp_time_ns timer_ns;      /* next cc_timer deadline, QP_TIME_NEVER for none */
	uint8_t level_to_ack;     /* with CC_ACT_ACK_LEVEL */
	struct cc_stats stats;
};

/* ---- parameters: one table per algorithm drives parsing, checking and help ---- */

enum cc_param_type {
	CC_P_DOUBLE,  /* plain number */
	CC_P_RATE,    /* qp_rate_bps; "25G", "100M", "40000000" */
	CC_P_TIME,    /* qp_time_ns;  "10us", "1.5ms", "900ns" */
	CC_P_U32,     /* unsigned count */
	CC_P_BYTES,   /* uint64_t bytes; "64K" = 65536 */
};

enum {
	CC_P_MIN_OPEN = 1u << 0, /* value must be > min, not >= */
	CC_P_MAX_OPEN = 1u << 1, /* value must be < max, not <= */
};

struct cc_param {
	const char *name;
	enum cc_param_type type;
	size_t offset;       /* into the algorithm's params struct */
	double def, min, max;
	unsigned flags;
	const char *doc;     /* one line: meaning and unit */
};

typedef unsigned (*cc_event_fn)(struct cc *cc, const struct cc_event *ev, qp_time_ns now);

/* ---- the feedback an algorithm needs ----
 *
 * Which kinds of feedback an algorithm needs is what it has handlers for (cc_needs: a
 * handler in ops->on[] for INT reports, notices, CNPs, levels, RTT samples, ACKs, losses
 * or flow starts). The values a switch produces them at are declared beside the handlers,
 * in ops->feedback (and there the ECN echo, which no handler names: it rides on the
 * ACKs); a driver that sets up the network (qpace-bench's incast) derives the switch's
 * and the hosts' settings from the two, so no table outside the algorithm's file knows
 * what it needs. A source of transport events hands a controller only the events it
 * needs, so one that takes none runs as if there were no such source. */
enum cc_need {
	CC_NEED_INT = 1u << 0,     /* INT reports from every hop (CC_EV_INT) */
	CC_NEED_NOTICE = 1u << 1,  /* early congestion notices at enqueue (CC_EV_NOTICE) */
	CC_NEED_CNP = 1u << 2,     /* CNPs or ECN echoes (CC_EV_CNP) */
	CC_NEED_LEVEL = 1u << 3,   /* congestion levels 0..3 (CC_EV_LEVEL) */
	CC_NEED_RTT = 1u << 4,     /* RTT samples (CC_EV_RTT) */
	CC_NEED_ACK = 1u << 5,     /* ACKs (CC_EV_ACKED) */
	CC_NEED_LOSS = 1u << 6,    /* NAKs and retransmission timeouts (CC_EV_NAK, _TIMEOUT) */
	CC_NEED_ECN = 1u << 7,     /* ACKs that echo CE marks: the switch marks (RED at
				    * ecn_kmin..kmax) and the receivers echo them (feedback.ecn_echo) */
	CC_NEED_FLOW = 1u << 8,    /* message sizes at their start (CC_EV_FLOW_START) */
};

struct cc_feedback {
	/* CC_NEED_NOTICE or CC_NEED_CNP: the queue (bytes) at which the switch sends an early
	 * notice; for CNP the notice is the CNP's stand-in (one per flow per interval above a
	 * step threshold: DCQCN's NP rule). 0 = one BDP of the path, the switch's default. */
	uint64_t notice_bytes;
	/* at most one notice per flow per this; 0 = the switch's default */
	qp_time_ns notice_interval_ns;
	/* CC_NEED_CNP: RED/ECN marking at the switch (at dequeue: p = 0 up to Kmin, rising
	 * to Pmax at Kmax, 1 above) and CNPs from the receivers' NP, with Kmin and Kmax
	 * given for a link of ecn_at_bps and scaled with the link's rate (HPCC's run.py:
	 * 100*bw/25 KB, 400*bw/25 KB). ecn_kmax_bytes 0: no marking; the notice above
	 * stands in for the CNP. */
	uint64_t ecn_kmin_bytes, ecn_kmax_bytes;
	double ecn_pmax;
	qp_rate_bps ecn_at_bps;
	/* CC_NEED_LEVEL: the queue (bytes) of levels 1, 2 and 3 (min <= mid <= max) */
	uint64_t level_bytes[3];
	/* "key=value,..." the algorithm is run with when the network gives the feedback above
	 * (a cut rule that needs the threshold it was designed for); NULL = none */
	const char *params;
	/* The ACKs must echo CE (CC_NEED_ECN): the switch marks at ecn_kmin..kmax as above,
	 * and the receivers echo the marks in their ACKs instead of sending CNPs. */
	bool ecn_echo;
	/* The path's T is the fabric's longest base RTT, for every flow (HPCC's reference:
	 * GLOBAL_T 1); false: each flow's own (sources that say nothing of a global T). */
	bool global_rtt;
};

/* A counter an algorithm keeps in its state (a uint64_t at @offset), summed over its QPs
 * in reports: IDCC's samples and steps per loop, a window's halvings. */
struct cc_counter {
	const char *name;    /* snake_case, unique within the algorithm */
	size_t offset;       /* into the algorithm's state */
	const char *doc;     /* one line */
};

struct cc_ops {
	const char *name;
	const char *summary;              /* one line for --help */
	const struct cc_param *params;    /* ends with a { .name = NULL } entry */
	size_t params_size;
	size_t state_size;                /* the algorithm's state; struct cc first */
	/* Cross-field checks after each value is in range; NULL when none.
	 * Returns 0, or -EINVAL with a message naming the parameter. */
	int (*check)(const void *params, const struct cc_path *path, char *err, size_t errlen);
	/* Set the initial rate, cap and timer. */
	void (*init)(struct cc *cc, const void *params, qp_time_ns now);
	/* One handler per event type; NULL ignores that event. Return CC_ACT_* bits. */
	cc_event_fn on[CC_EV_COUNT];
	/* Run every timer due at or before now; NULL when the algorithm has none. */
	unsigned (*on_timer)(struct cc *cc, qp_time_ns now);
	/* The values the switch produces the feedback of cc_needs(ops) at. */
	struct cc_feedback feedback;
	/* Its counters, ending with a { .name = NULL } entry; NULL = none. */
	const struct cc_counter *counters;
};

/* CC_NEED_* bits: the kinds of feedback @ops has handlers for (and CC_NEED_ECN when it
 * declares feedback.ecn_echo). */
unsigned cc_needs(const struct cc_ops *ops);
/* The CC_NEED_* bit an event of @type is delivered under; 0 for a type no source filters
 * (CNPs, flow finishes). */
unsigned cc_event_need(enum cc_event_type type);
/* The value of @ops's counter @i of @cc (i below the table's length). */
uint64_t cc_counter_value(const struct cc *cc, size_t i);
/* The number of counters @ops declares. */
size_t cc_counter_count(const struct cc_ops *ops);

/* Registry. */
const struct cc_ops *cc_find(const char *name);
const struct cc_ops *const *cc_all(void); /* NULL-terminated, in the order help lists them */
/* The registered names joined by @sep ("none, dcqcn, ..."). 0, or -ENOSPC when @len is
 * too short (@buf then holds as many whole names as fit); @buf is always terminated. */
int cc_names(char *buf, size_t len, const char *sep);

/* Create a controller. @params is "key=value[,key=value...]" or NULL/"" for defaults.
 * Returns NULL with a message in @err (naming the algorithm or parameter, the value and
 * the accepted range) on any error. */
struct cc *cc_create(const char *name, const struct cc_path *path, const char *params,
		     qp_time_ns now, char *err, size_t errlen);
struct cc *cc_create_ops(const struct cc_ops *ops, const struct cc_path *path,
			 const char *params, qp_time_ns now, char *err, size_t errlen);
void cc_destroy(struct cc *cc);

/* Feed one event. Malformed input (hop count 0 or above QP_INT_MAX_HOPS, a zero link rate
 * in a hop or notice, a level outside 0..3, an RTT of 0 or an end-host part above the
 * RTT, an ACK of 0 bytes or an ECN value outside enum cc_ecn, an unknown type) is counted
 * in stats.rejected and changes nothing: returns 0. */
unsigned cc_event(struct cc *cc, const struct cc_event *ev, qp_time_ns now);

/* Run timers due at or before now. */
unsigned cc_timer(struct cc *cc, qp_time_ns now);

/* Write the parameter table of @ops as help text: a "name: summary" line, then one line
 * per parameter (name, type, default, range, meaning). 0, or -ENOSPC. */
int cc_params_help(const struct cc_ops *ops, char *buf, size_t len);
/* The same table in Markdown (| parameter | type | default | range | meaning |), as the
 * docs carry it (scripts/docs-params.sh). 0, or -ENOSPC. */
int cc_params_help_md(const struct cc_ops *ops, char *buf, size_t len);
/* The parameter @name of @ops, or NULL. */
const struct cc_param *cc_param_find(const struct cc_ops *ops, const char *name);

/* Parse "key=value,..." into @params of @ops (defaults first). 0 or -EINVAL with @err. */
int cc_params_parse(const struct cc_ops *ops, void *params, const char *text,
		    char *err, size_t errlen);

/* Helpers for algorithms. */
static inline qp_rate_bps cc_clamp_rate(double bps, qp_rate_bps min_bps, qp_rate_bps max_bps)
{
	if (!(bps > (double)min_bps)) /* also catches NaN */
		return min_bps;
	if (bps >= (double)max_bps)
		return max_bps;
	return (qp_rate_bps)bps;
}

/* Bytes in flight at @bps over @ns (the window that matches a rate): rate * T. */
static inline uint64_t cc_rate_window(qp_rate_bps bps, qp_time_ns ns)
{
	return qp_bytes_in(bps, ns);
}

#endif
