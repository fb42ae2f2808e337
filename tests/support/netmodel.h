/* A closed-loop network model for testing congestion control in injected time.
 *
 * Packet-level and event-driven, deterministic for a given seed. Flows are paced senders
 * driven by a real struct cc; packets cross a path of links (each an egress queue with a
 * rate, a propagation delay and a drop-tail buffer) and are acknowledged one by one. Every
 * ACK carries the INT hop records the packet collected at each dequeue, so the sender's
 * controller sees what a switch running HPCC's INT would show it. Links can also send an
 * early congestion notice straight back to the sender at enqueue (ACC / Bolt SRC), and
 * mark ECN with RED at dequeue (DCQCN: a marked packet's ACK brings a CNP).
 *
 * Timing, for a path of links l1..lk:
 *   a packet sent at t reaches l1's queue at t; it leaves link li at its departure time
 *   d = max(arrival, previous departure) + size/rate_i, and reaches the next queue (or the
 *   receiver) prop_i later. The ACK needs sum(prop_i) to come back (no queueing on the
 *   reverse path). Unloaded RTT = sum(size/rate_i + prop_i) + sum(prop_i): nm_path_rtt().
 *   A notice from li reaches the sender prop_1 + ... + prop_(i-1) after the enqueue.
 *   A dropped packet is known lost at the sender one unloaded RTT after it was sent and is
 *   sent again.
 *
 * Queue bytes include the packet being serialised; an INT hop's qlen_bytes is the queue
 * left behind the departing packet and tx_bytes the bytes the link sent before it (as
 * HPCC's switch code records them).
 */
#ifndef QPACE_TEST_NETMODEL_H
#define QPACE_TEST_NETMODEL_H

#include <stdint.h>
#include "qpace/cc.h"

#define NM_MAX_LINKS 80
#define NM_MAX_FLOWS 64
#define NM_MAX_PATH QP_INT_MAX_HOPS

struct nm_link {
	qp_rate_bps rate_bps;
	qp_time_ns prop_ns;             /* propagation delay after the queue */
	uint64_t buffer_bytes;          /* 0 = unlimited */
	uint32_t switch_id;
	uint16_t port;
	uint64_t early_threshold_bytes; /* 0 = no early notices */
	qp_time_ns notice_interval_ns;  /* per flow; 0 = one per enqueue above threshold */
	uint64_t ecn_kmin_bytes;        /* RED at dequeue; ecn_kmax_bytes 0 = no marking */
	uint64_t ecn_kmax_bytes;
	double ecn_pmax;
};

struct nm;

struct nm *nm_create(const struct nm_link *links, unsigned nlinks, uint32_t mtu_bytes,
		     uint64_t seed);
void nm_destroy(struct nm *nm);

/* Unloaded RTT of one full-size packet along @path. */
qp_time_ns nm_path_rtt(const struct nm *nm, const unsigned *path, unsigned nhops);

/* Add a flow driven by @cc (the model does not own it). @bytes 0 = never ends. Returns the
 * flow index, or -1 when the path is invalid or NM_MAX_FLOWS is reached. */
int nm_add_flow(struct nm *nm, struct cc *cc, const unsigned *path, unsigned nhops,
		uint64_t bytes, qp_time_ns start_ns);

/* Process every event up to and including @t; afterwards nm_now() == t. */
void nm_run_until(struct nm *nm, qp_time_ns t);
qp_time_ns nm_now(const struct nm *nm);

/* Observers. */
uint64_t nm_queue_bytes(const struct nm *nm, unsigned link);
uint64_t nm_max_queue_bytes(const struct nm *nm, unsigned link);
void nm_reset_max_queue(struct nm *nm, unsigned link);
uint64_t nm_link_drops(const struct nm *nm, unsigned link);
uint64_t nm_link_marks(const struct nm *nm, unsigned link);
uint64_t nm_link_notices(const struct nm *nm, unsigned link);
uint64_t nm_link_tx_bytes(const struct nm *nm, unsigned link);
uint64_t nm_flow_delivered(const struct nm *nm, unsigned flow); /* bytes at the receiver */
qp_time_ns nm_flow_fct(const struct nm *nm, unsigned flow);     /* QP_TIME_NEVER until done */
uint64_t nm_flow_retransmits(const struct nm *nm, unsigned flow);

#endif
