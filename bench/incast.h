/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The incast runner: N senders write S bytes each to one receiver through a switch,
 * R rounds (a partition/aggregate query: a round starts when every flow of the last one
 * has completed). With the soft backend the N+1 hosts are emulated in this process on one
 * event loop, attached to switch ports 0..N (the receiver on port 0), each with its own
 * agent core (qpace/agent.h) and an in-process rate table.
 *
 * What is measured, per flow: its completion time (FCT: from the round's start, when the
 * sender posts, to the sender's completion of its last WRITE, which RC gives once the
 * receiver acknowledged every byte), retransmissions and timeouts (the QP's counters).
 * In total: goodput = bytes delivered / the sum of the rounds' durations; Jain's index
 * over the flows' throughputs (bytes / FCT); FCT p50/p99/max; from the switch: the peak
 * and the time-averaged queue of the receiver's port, drops and ECN marks.
 */
#ifndef BENCH_INCAST_H
#define BENCH_INCAST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/cc.h"
#include "qpace/rate.h"
#include "qpace/time.h"
#include "bench.h"
#include "stats.h"

#define INCAST_ALGO_MAX 24

/* "hpcc+ia" -> cc "hpcc", credits on. 0, or -EINVAL (not ALGO[+ia]) / -ENOENT (unknown
 * algorithm: the message names the known ones) with a message. */
int incast_algo_parse(const char *spec, char *cc, size_t cclen, bool *credits, char *err,
		      size_t errlen);

/* What an incast of one algorithm asks of its switch and hosts, derived from the feedback
 * the algorithm declares (qpace/cc.h: cc_needs and ops->feedback), so adding an algorithm
 * touches nothing here. */
#define INCAST_SW_ARGS 10
struct incast_feedback {
	const char *sw_args[INCAST_SW_ARGS + 1]; /* qpace-switch options, NULL-terminated */
	bool cnp_from_notice;        /* hosts take the switch's notices as CNPs (host.h) */
	bool ecn_echo;               /* hosts' ACKs echo CE marks (soft ecn_echo=on) */
	bool hpcc_settings;          /* senders take incast_hpcc_params (HPCC's parameters) */
	const char *params;          /* the algorithm's own, with this feedback; NULL: none */
	uint8_t tos;                 /* the QPs' traffic class (ECT(0) when the switch marks) */
	char early[24], interval[24], levels[72], ecn[72], idle[24];   /* what sw_args point into */
};

/* Fill @f for @ops on links of @link_bps; @bdp_bytes is this network's BDP (a notice
 * threshold of one BDP). */
void incast_feedback(const struct cc_ops *ops, qp_rate_bps link_bps, uint64_t bdp_bytes,
		     struct incast_feedback *f);
/* qpace-bench's --int (enum bench_int): direct puts INT algorithms on the switch's
 * direct reports instead of the receivers' echo; algorithms without INT keep --int off. */
void incast_feedback_int(struct incast_feedback *f, unsigned int_mode);

struct incast_flow {
	uint32_t round;
	uint32_t sender;             /* 1..N: the switch port */
	uint64_t bytes;
	qp_time_ns fct_ns;           /* 0 when it did not complete */
	uint64_t retransmits, timeouts;
	bool done;
};

struct incast_result {
	char algorithm[INCAST_ALGO_MAX];   /* "hpcc+ia" */
	char cc[INCAST_ALGO_MAX];
	char op[8];                  /* "write" or "read" (--op) */
	bool credits;
	uint64_t senders;
	uint64_t bytes_per_sender;
	qp_rate_bps link_bps;
	uint64_t mtu_bytes;
	uint64_t buffer_bytes;
	uint64_t qp_timeout;         /* the QPs' local ACK timeout exponent (-u) */
	uint64_t rounds;
	double payload_bps;          /* what the bottleneck carries in payload */
	double goodput_bps;
	double goodput_ratio;        /* goodput / payload_bps */
	double jain;
	struct stats_fct fct;
	uint64_t flows, flows_done;
	uint64_t retransmits, timeouts;
	uint64_t rounds_with_timeout; /* rounds in which some flow had a retransmission timeout */
	bool have_switch;            /* the figures below are from the switch */
	uint64_t drops, ecn_marks, max_queue_bytes;
	uint64_t impair_lost;          /* frames --impair lost on the receiver's link (p0) */
	double avg_queue_bytes;
	double elapsed_s;            /* sum of the rounds' durations */
	qp_time_ns base_rtt_ns;      /* unloaded RTT measured before the rounds (HPCC's T) */
	qp_time_ns loop_late_max_ns; /* the longest the loop ran late (a busy machine) */
	qp_time_ns loop_late_total_ns; /* the sum of the loop's lateness beyond 100 us */
	qp_time_ns switch_late_max_ns; /* the longest the switch's loop came back late for a
					* departure (its whole run; 0 in virtual time) */
	qp_time_ns switch_late_total_ns; /* the sum of its lateness beyond 100 us */
	char clock[8];               /* "real" or "virtual" (--clock) */
	/* virtual time only (JSON and text carry them only then): the engine's figures */
	uint64_t events;             /* events run */
	uint64_t packet_hops;        /* completed transmissions on any link */
	double sim_s;                /* simulated seconds (setup and RTT probes included) */
	double wall_s;               /* wall-clock seconds of the simulation */
};

struct incast_run {
	struct incast_result res;
	struct incast_flow *flows;   /* rounds * senders */
	size_t nflows;
};

/* Run one incast as @c says (cc, credits from @algo: "hpcc+ia"; the clock from
 * c->clock: real time here, virtual time in incast_vt.c). Writes CSVs into
 * @out_dir when not NULL. 0, or -errno with one line in @err. Fills @run (flows allocated:
 * incast_run_free). */
int incast_run(const struct bench_conf *c, const char *algo, uint64_t senders,
	       uint64_t bytes, const char *out_dir, struct incast_run *run, char *err,
	       size_t errlen);
void incast_run_free(struct incast_run *run);

/* The networked incast (incast_net.c): receiver (no address) or one sender. */
int incast_net(const struct bench_conf *c);

/* Totals from the flows (goodput, Jain, FCT): fills those fields of @r from @f
 * (link_bps, mtu_bytes, bytes_per_sender set). @round_ns: each round's duration. */
void incast_summarize(struct incast_result *r, const struct incast_flow *f, size_t n,
		      const qp_time_ns *round_ns, uint32_t rounds, qp_time_ns base_rtt_ns);

/* Reports. One field table drives the text and the JSON, so the two cannot drift. */
void incast_print_text(FILE *out, const struct incast_result *r, const struct incast_flow *f,
		       size_t nflows);
void incast_print_json(FILE *out, const struct incast_result *r, bool pretty);
/* A JSON array of results (summary.json). */
int incast_write_summary(const char *path, const struct incast_result *r, size_t n);
/* The comparison table: one row per result. */
void incast_print_compare(FILE *out, const struct incast_result *r, size_t n);
/* Per-flow CSV: round,sender,bytes,fct_us,slowdown,retransmits,timeouts,done. */
int incast_write_flows_csv(const char *path, const struct incast_run *run,
			   qp_time_ns standalone_ns);

#endif
