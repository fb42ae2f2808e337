/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An emulated host (host/): one QP context (soft backend: a userspace RoCEv2 host on a
 * switch port) with its own agent core (qpace/agent.h) and in-process rate table, so
 * qpace-bench (and anything else that emulates many hosts in one process) runs the same
 * congestion-control code as qpaced, with no daemon.
 *
 * Wiring: telemetry frames (UDP 4792) that reach the host go to the agent
 * (agent_feed_datagram); the agent's rate-table writes are read by the QPs' pacing gates;
 * the agent's datagrams (credit grants, echoes, level acknowledgements) leave through the
 * host's own port, so they cross the switch like any frame.
 *
 * DCQCN: CNPs the host's QPs receive (a receiver's soft RC makes them from CE-marked data,
 * at most one per QP per 50 us: rc.h's notification point) go to the agent as CC_EV_CNP
 * for that QP. With cnp_from_notice the switch's early congestion notice (queue above a
 * threshold at enqueue, at most one per flow per interval) also counts as a CNP: a
 * stand-in for networks without ECN marking. cnps counts both.
 */
#ifndef QPACE_HOST_H
#define QPACE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/agent.h"
#include "qpace/qp.h"

#define HOST_MAX_QPS 128u
#define HOST_CC_COUNTERS 16u         /* an algorithm's counters host_cc_counters sums */

struct host_reg {
	uint32_t qpn, peer_qpn, peer_ip;
};

/* What a QP is to its host's agent (host_register). */
enum host_role {
	HOST_SENDER = 0,     /* sends the data (WRITE, SEND): its controller paces it */
	HOST_RECEIVER = 1,   /* receives it: with credits on, its agent grants the sender */
	HOST_READER = 2,     /* READs it: its own controller, and with credits on its own
			      * grants, pace its requests (AGENT_QP_READER) */
};

struct host {
	struct qp_ctx *ctx;
	struct qp_ratetable *table;
	struct agent *agent;
	uint32_t ip;                 /* host order */
	bool cnp_from_notice;
	bool ecn_echo;               /* options ecn_echo=on: ACKs carry the ECN echo */
	bool credits;                /* senders start gated (IA); arrivals to the agent */
	bool socket_io;              /* real time: host_service sends what it queued */
	qp_time_ns next_heartbeat_ns;
	uint64_t tx_sent, tx_failed; /* agent datagrams */
	uint64_t cnps;
	struct host_reg qps[HOST_MAX_QPS];
	unsigned nqps;
	/* the counters (qpace/cc.h) of the QPs that left, for the first algorithm that left */
	const struct cc_ops *cc_sum_ops;
	uint64_t cc_sum[HOST_CC_COUNTERS];
};

struct host_conf {
	const char *options;         /* soft: "attach=H:P,ip=A.B.C.D,mtu=M" */
	const char *cc;              /* the agent's default algorithm */
	bool credits;
	bool cnp_from_notice;
	uint64_t seed;
	bool quiet;                  /* no log lines from the context */
	const uint8_t *key;          /* NULL, or the shared key (QP_SIPHASH_KEY_BYTES): the
				      * agent signs what it sends, as itself (its IP), and takes
				      * only signed, new telemetry (qpace/fb_auth.h) */
	qp_time_ns clock_offset_ns;  /* with a key: now + this = the sequences' clock */
	/* Virtual time: the context's clock and its frames' driver (qp_ctx_attr.clock,
	 * qp_soft_arg.tx_ready; options then carry no attach=). NULL: real time, a socket. */
	qp_time_ns (*clock)(void *arg);
	void *clock_arg;
	void (*tx_ready)(void *arg);
	void *tx_ready_arg;
};

int host_open(struct host *h, const struct host_conf *c, qp_time_ns now,
		    char *err, size_t errlen);
void host_close(struct host *h);
/* Register a connected QP with the agent. @algo NULL = the default (@params then ignored);
 * @params "k=v,..." or NULL for the algorithm's defaults; @role: enum host_role (false and
 * true are a sender and a receiver). */
int host_register(struct host *h, struct qp *qp, qp_rate_bps link_bps,
			qp_time_ns base_rtt_ns, enum host_role role, const char *algo,
			const char *params, qp_time_ns now, char *err, size_t errlen);
/* QP @qpn starts a message (a flow) of @bytes: CC_EV_FLOW_START for an algorithm that
 * takes it (CC_NEED_FLOW; ACC's last window). 0, or agent_qp_event's error. */
int host_flow_start(struct host *h, uint32_t qpn, uint64_t bytes, qp_time_ns now);
/* The counters of @ops summed over this host's QPs that run it, those that left and those
 * still registered, added into @sum[cc_counter_count(ops)] (at most HOST_CC_COUNTERS). */
void host_cc_counters(const struct host *h, const struct cc_ops *ops, uint64_t *sum);
/* The QP leaves the agent (its flow ended): slot freed, credits and controller state gone. */
int host_unregister(struct host *h, uint32_t qpn, qp_time_ns now);
/* Run agent timers that are due, the heartbeat, and send the agent's datagrams. */
void host_service(struct host *h, qp_time_ns now);
/* The earliest of the context's and the agent's deadlines. */
qp_time_ns host_deadline(struct host *h);
/* The rate the agent publishes for @qpn (0 when none). */
qp_rate_bps host_rate(const struct host *h, uint32_t qpn);

#endif
