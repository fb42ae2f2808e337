/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Virtual time: a discrete-event engine that runs, in one process with no sockets and no
 * sleeping, the code qpace's users run — the switch fabric of qpace-switch (switchsim:
 * pipeline, queue model, RED, telemetry), the emulated hosts of qpace-bench (qpace/host.h:
 * a soft RoCEv2 context with its RC cores and pacing gates, its own agent core with every
 * cc algorithm and IA credits) — on virtual nanoseconds. Same inputs and seed, same
 * events in the same order, byte for byte, whatever the machine is doing.
 *
 *     struct sw_conf *sw = sim_sw_conf_args(argc, argv, err, len);   qpace-switch's words
 *     sim_create(&(struct sim_conf){ .sw = sw, .hosts = h, .nhosts = n }, &s, err, len);
 *     sim_set_app(s, app_fn, arg);              what runs on the hosts (flows, the incast)
 *     sim_at(s, t, fn, arg);                    timers: rounds, samples
 *     sim_run(s, until);                        events until a time or sim_stop
 *
 * The network. A topology is a switchsim configuration (struct sw_conf: a topology file,
 * a generator's output, or --star N): switches, their ports, the links between switches
 * (in-process, as in qpace-switch). Every I/O port of it (udp, vxlan, packet) becomes a
 * sim port that one host attaches to. A host's frames leave through its NIC, one after
 * the other at nic_bps (serialisation: max(len, 60) bytes * 8 / rate, the sub-ns rest
 * carried within a busy period, as the switch's queue model does), cross the host's link
 * (propagation link_delay_ns), and enter the switch port (sw_ingress) when their last bit
 * arrives. Frames the switch sends out of the port reach the host at the model's leave
 * time (departure + the port's propagation delay: the switch already models that
 * direction, so nothing is counted twice). PAUSE and every other frame travel alike.
 *
 * Clocks. Each host's QP context runs on the engine's clock (qp_ctx_attr.clock), so its
 * gates, RC timers and agent see virtual time; during sim_run qp_now_ns() aborts
 * (qp_clock_forbid): nothing in virtual time reads the real clock. QPs must be
 * non-blocking and connected in process (qp_local_info + qp_connect).
 *
 * The application. sim_set_app's function runs on every wake-up of a host, after its
 * context's progress (timers, paced pieces) and before its agent's service, exactly as
 * the real-time incast loop orders them; it returns when it must run again (the time a
 * gate opens, QP_TIME_NEVER to wait for frames). A host wakes at its deadlines (RC
 * timers, the agent, a 1 ms heartbeat, the app's) and when a frame reaches it. Nothing
 * needs to poll: every turn offers the host's pending pieces to their gates
 * (qp_ctx_retry), so a gate waiting for credits or its window opens at the event that
 * opens it (QPs may take the longest qp_gate_params.credit_poll_ns).
 *
 * Events (sim.c): a host wake-up, a NIC done, a frame arriving at a switch port, the
 * fabric's next departure, a timer. The queue is evq.h's heap (time, then insertion
 * order); the hosts' and the fabric's wake-ups, one each, are moved in wakeq.h's heap
 * beside it, in the same order. Memory: frames in flight on host links are pooled by size (64-byte classes), so
 * a run in steady state allocates nothing.
 *
 * Two lanes (sim_conf.split, qpace-bench run --lanes 2). The hosts' events (their turns,
 * NICs, timers, frames reaching them) in one lane, the switches' (frames reaching their
 * ports, the fabric's departures) in another, each with its own queue and clock, run in
 * windows as long as the lookahead L, the smallest host-link delay: a frame a host sends
 * reaches its switch L or more later, and the switches hand a frame for a host on when it
 * departs (tx_early_ns = L: its leave time less L, at or after its dequeue, so RED and
 * the INT hop see every arrival up to it, as at leave time), L or more before it arrives.
 * So nothing one lane makes in a window is due in it: each lane runs the window alone
 * (on a thread of its own, or one after the other: the same bytes), then takes what the
 * other made, in the order it was made. Deterministic, and another order of the same
 * events than one lane's where a host's frame and one of its own events fall on the same
 * nanosecond — its own bytes. A timer that reads the switches runs between windows
 * (sim_at_sync). Links between switches stay inside the switches' lane.
 *
 * Figures: events, packet-hops (every completed transmission on any link: host NIC ->
 * switch, switch -> host, switch -> switch, data and control), simulated and wall time.
 */
#ifndef QPACE_SIM_H
#define QPACE_SIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/fct.h"
#include "qpace/host.h"
#include "qpace/rate.h"
#include "qpace/time.h"

struct sim;
struct sw_conf;               /* switchsim's configuration (opaque here) */

#define SIM_START_NS QP_NS_PER_S      /* virtual time starts here (not at 0) */
#define SIM_PORT_DELAY QP_TIME_NEVER  /* sim_host_conf.link_delay_ns: the port's delay */

/* A switchsim configuration from qpace-switch's own command-line words (argv[0] first:
 * "--star N --rate R ..." or "-c FILE ..."), parsed by qpace-switch's parser, so the same
 * words make the same fabric in both clocks. NULL with a message in @err (the parser's
 * own line goes to stderr). */
struct sw_conf *sim_sw_conf_args(int argc, char **argv, char *err, size_t errlen);
void sim_sw_conf_free(struct sw_conf *c);

struct sim_host_conf {
	uint32_t ip;                  /* host order; the MAC follows from it */
	int sw, port;                 /* the switch (index in the conf) and its I/O port */
	qp_rate_bps nic_bps;          /* NIC line rate; 0 = the port's rate */
	qp_time_ns link_delay_ns;     /* host -> switch propagation; SIM_PORT_DELAY = the port's */
	uint64_t window_pkts;         /* RC: unacknowledged packets per QP (0 = 128) */
	uint64_t mtu_bytes;           /* the host's RoCE MTU (0 = 1024) */
	const char *cc;               /* the agent's default algorithm */
	bool credits, cnp_from_notice;/* as struct host_conf */
	const uint8_t *key;           /* as struct host_conf (sequences from virtual time) */
};

/* The hosts of a configuration: one on each I/O port, in its order (switch by switch,
 * port by port), host i at IPv4 10.0.0.0 + i + 1 (as qpace/topogen.h numbers them), its
 * NIC at the port's rate, the link's delay the port's. Fills .ip .sw .port .nic_bps
 * .link_delay_ns of at most @max; returns how many there are. */
size_t sim_sw_conf_hosts(const struct sw_conf *c, struct sim_host_conf *hosts, size_t max);
/* The links a frame from @src to @dst crosses, in order, read from the switches' static
 * forwarding entries: the source's own link (its NIC rate and delay), then each switch's
 * egress port (rate, delay). How many (at most @max stored); 0 when @src is @dst or a
 * switch on the way has no static entry for @dst (it would flood). */
size_t sim_sw_conf_path(const struct sw_conf *c, const struct sim_host_conf *src,
			const struct sim_host_conf *dst, struct fct_hop *hops, size_t max);

struct sim_conf {
	const struct sw_conf *sw;     /* copied: the caller may free it after sim_create */
	const struct sim_host_conf *hosts;
	size_t nhosts;
	uint64_t seed;                /* the agents' (and through them IA's first grants) */
	bool verbose;                 /* the hosts' log lines */
	bool progress;                /* a progress line on stderr once a run passes 2 s */
	/* No ICRC computed or checked (--icrc off): the hosts build frames without one and
	 * check none (soft icrc=off), the switches check none (--icrc-check 0). Refused
	 * when a port's link corrupts frames: the ICRC is what finds those. */
	bool icrc_skip;
	/* When set (a signal handler's flag), sim_run stops within 65536 events: as sim_stop.
	 * NULL: none. */
	const volatile sig_atomic_t *interrupt;
	/* Two lanes (sim_priv.h): the hosts in one, the switches in the other, meeting every
	 * lookahead (the smallest host-link delay; refused when one is 0). Another order of
	 * the same model's events than one lane's, so other outputs, and the same ones for
	 * @threads 1 (the lanes one after the other) and 2 (each on its own thread). A
	 * timer that reads the switches must be sim_at_sync's. @threads 2 implies @split. */
	bool split;
	unsigned threads;             /* 0 or 1: one; 2: two */
};

/* Build the fabric (no sockets) and open the hosts, at SIM_START_NS. 0, or -errno with
 * one line in @err (a host on a port that is no I/O port, or taken twice: named). */
int sim_create(const struct sim_conf *c, struct sim **out, char *err, size_t errlen);
void sim_destroy(struct sim *s);

size_t sim_nhosts(const struct sim *s);
struct host *sim_host(struct sim *s, size_t i);
qp_time_ns sim_now(const struct sim *s);

/* The application (see above): @fn(arg, host, now) -> when it must run again. */
typedef qp_time_ns (*sim_app_fn)(void *arg, size_t host, qp_time_ns now);
void sim_set_app(struct sim *s, sim_app_fn fn, void *arg);
/* Wake host @i at @t (not before now). */
void sim_wake(struct sim *s, size_t i, qp_time_ns t);

/* @fn(arg, now) at @t (not before now). 0 or -ENOMEM. */
typedef void (*sim_timer_fn)(void *arg, qp_time_ns now);
int sim_at(struct sim *s, qp_time_ns t, sim_timer_fn fn, void *arg);
/* A timer that reads the switches as well as the hosts (a sample of the ports): in a
 * split run it runs between two windows, both lanes at @t (their events at @t after it);
 * otherwise it is sim_at. 0 or -ENOMEM. */
int sim_at_sync(struct sim *s, qp_time_ns t, sim_timer_fn fn, void *arg);

enum sim_end {
	SIM_END_TIME = 0,             /* reached @until */
	SIM_END_STOPPED,              /* sim_stop was called */
	SIM_END_IDLE,                 /* no event left */
	SIM_END_NOMEM,                /* an event could not be queued */
};
/* Run events with times <= @until (the clock ends at @until unless stopped sooner). The
 * progress line, when on, names @eta_end_ns as the expected end (QP_TIME_NEVER: none). */
enum sim_end sim_run(struct sim *s, qp_time_ns until, qp_time_ns eta_end_ns);
void sim_stop(struct sim *s);
const char *sim_end_str(enum sim_end e);

struct sim_stats {
	uint64_t events;              /* run (a wake-up moved earlier is run once) */
	uint64_t packet_hops;         /* completed transmissions on any link */
	uint64_t host_frames;         /* of those, sent by host NICs */
	uint64_t max_pending;         /* events and wake-ups queued, at the peak */
	uint64_t pool_bytes;          /* frame buffers allocated (the peak in flight) */
	qp_time_ns sim_ns;            /* simulated time since SIM_START_NS */
	double wall_s;                /* wall-clock seconds inside sim_run */
	/* two lanes: windows run, and each lane's wall seconds in them (the hosts', the
	 * switches'): how well the two balance */
	uint64_t windows;
	double lane_busy_s[2];
};
void sim_stats(const struct sim *s, struct sim_stats *out);

/* Flows: the general workload (qpace/workload.h makes the lists). Each flow is a WRITE of
 * @bytes from host @src to host @dst at @start_ns (after SIM_START_NS), over a QP pair
 * made for it at that time (connected in process, both ends registered with their hosts'
 * agents: the sender with @algo, the receiver with "none" as a credit receiver), posted in
 * WRs of wr_bytes as the gate allows, one MTU per gated piece; its completion time runs
 * from its start to the sender's completion of its last WRITE. When a flow ends (done or
 * lost) both ends leave their agents, its QPs are destroyed and @done is called. The flow
 * runner is the engine's application (sim_set_app). Flows must be sorted by start time,
 * except held ones, which come after every other: a held flow starts only when
 * sim_flows_release says when (a closed loop: the next round once one has ended).
 * A host's agent holds HOST_MAX_QPS QPs: a flow beyond that is lost (counted). */
struct sim_flow {
	uint32_t src, dst;            /* host indexes */
	uint64_t bytes;
	qp_time_ns start_ns;          /* after SIM_START_NS; held: set by sim_flows_release */
	bool held;                    /* starts at sim_flows_release */
	qp_time_ns base_rtt_ns;       /* registered base RTT; 0 = sim_flow_conf's */
	/* results */
	qp_time_ns fct_ns;
	uint64_t retransmits, timeouts;
	bool done, lost;
};

struct sim_flow_conf {
	const char *algo;             /* the senders' algorithm; NULL = the hosts' default */
	const char *params;           /* its "k=v,..." (with algo) */
	qp_rate_bps line_bps;         /* registered line rate; 0 = the sender NIC's payload rate */
	qp_time_ns base_rtt_ns;       /* registered base RTT; 0 = 100 us */
	uint32_t mtu_bytes;           /* 0 = 1024 */
	uint32_t wr_bytes;            /* 0 = 64 KiB per WRITE */
	uint64_t seed;                /* PSNs */
	uint8_t tos;                  /* the senders' traffic class (ECT(0) = 2: RED may mark) */
	void (*done)(void *arg, const struct sim_flow *f, qp_time_ns now);
	void *arg;
};

struct sim_flows;
/* Schedule @n flows (kept by the caller, results written into them). 0, or -errno with one
 * line in @err (unsorted, a host out of range, out of memory). */
int sim_flows_start(struct sim *s, struct sim_flow *flows, size_t n,
		    const struct sim_flow_conf *c, struct sim_flows **out, char *err,
		    size_t errlen);
/* Start held flow @k at @t (not before now; e.g. from @done). 0, or -EINVAL (not a held
 * flow, or released already), -ENOMEM. */
int sim_flows_release(struct sim_flows *fl, size_t k, qp_time_ns t);
/* Flows done or lost so far. */
size_t sim_flows_finished(const struct sim_flows *fl);
/* Flow @k now: the payload its receiver has taken in order (its final byte count once it
 * ended) and the rate its sender's agent publishes (0 unless it is running). */
struct sim_flow_now {
	uint64_t delivered_bytes;
	qp_rate_bps rate_bps;
	bool running;
};
void sim_flows_now(const struct sim_flows *fl, size_t k, struct sim_flow_now *out);
/* Before sim_destroy (the flows' QPs and regions are the hosts'). */
void sim_flows_free(struct sim_flows *fl);

/* A switchsim configuration from a topology file's text (qpace-switch -c's grammar; @name
 * for messages): NULL with "NAME:LINE: ..." in @err. */
struct sw_conf *sim_sw_conf_text(const char *text, const char *name, char *err,
				 size_t errlen);

/* Switch ports: every port of every switch, in the configuration's order. */
struct sim_port_info {
	const char *sw_name, *name;
	uint64_t queue_bytes;         /* the model's queue now */
	uint64_t drops;               /* drop-tail + store */
	uint64_t ecn_marks, max_queue_bytes, tx_frames;
	uint64_t impair_lost;         /* frames the link's impairments lost (random + bursty) */
	uint64_t tx_bytes, rx_bytes;  /* frames sent out of the port / received, bytes */
	uint64_t link_bytes;          /* of those, what its queue serialised onto the link (the
				       * switch's telemetry to a host is out of band: not here) */
	qp_rate_bps rate_bps;         /* its egress rate */
	bool link;                    /* a link between switches (else a host's port) */
	uint64_t pauses_sent;         /* PFC: PAUSEs sent upstream (out of this port) */
	uint64_t pauses_received;     /* PFC: PAUSEs obeyed by its egress */
	qp_time_ns paused_ns;         /* PFC: time its egress has been paused */
};
size_t sim_nports(const struct sim *s);
/* Host @i's RC window: unacknowledged packets per QP (sim_host_conf.window_pkts). */
uint64_t sim_host_window(const struct sim *s, size_t i);
/* The port (its index for sim_port_info) host @i attaches to. */
size_t sim_host_port(const struct sim *s, size_t i);
void sim_port_info(const struct sim *s, size_t i, struct sim_port_info *out);
/* The switch's own outputs (qpace-switch --stats / --stats-json), times from @start. */
void sim_switch_csv_header(FILE *out);
void sim_switch_csv_row(struct sim *s, FILE *out, qp_time_ns start);
void sim_switch_json(const struct sim *s, FILE *out);

#endif
