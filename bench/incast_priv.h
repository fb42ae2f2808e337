/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the two incast runners share (incast_flows.c): the flows' state, their QPs and
 * agent registrations, posting and polling, the rate samples, the per-round record and
 * the CSV and plot outputs. The real-time runner (incast.c) drives them from its event
 * loop on the machine's clock; the virtual-time runner (incast_vt.c) from the engine's
 * events (qpace/sim.h). Same calls, same order, so both measure the same thing. */
#ifndef BENCH_INCAST_PRIV_H
#define BENCH_INCAST_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/host.h"
#include "incast.h"
#include "incast_rx.h"
#include "monitor.h"
#include "series.h"

#define INCAST_WR_BYTES (64u * 1024)       /* per WRITE, as perftest's default size */
#define INCAST_SQ_DEPTH 64u
#define INCAST_QP_TIMEOUT 14               /* local ACK timeout 4.096 us << 14 = 67 ms:
					     * perftest's default (-u), beyond a full 512 KiB queue */
#define INCAST_GAP_NS (2 * QP_NS_PER_MS)   /* between rounds: queues drain */
#define INCAST_SAMPLE_NS QP_NS_PER_MS
#define INCAST_SPIN_NS QP_NS_PER_MS      /* real time: a loop spins while a deadline is this near */
#define INCAST_LATE_COUNTED_NS (100 * QP_NS_PER_US)   /* lateness summed: beyond a wake-up's */
/* The emulated QPs' local ACK timeout exponent: -u, else INCAST_QP_TIMEOUT. */
static inline uint8_t incast_qp_timeout(const struct bench_conf *c)
{
	return c->qp_timeout ? (uint8_t)c->qp_timeout : INCAST_QP_TIMEOUT;
}

/* A loop's pass at @now after one at @last (0: none yet) that asked to sleep @timeout_ms:
 * the time beyond that is lateness (the machine did not run the loop); into the maximum
 * and, beyond INCAST_LATE_COUNTED_NS, the sum. */
static inline void incast_late_note(qp_time_ns last, qp_time_ns now, int timeout_ms,
				    qp_time_ns *max, qp_time_ns *total)
{
	qp_time_ns late = qp_time_since(now, last) - (qp_time_ns)timeout_ms * QP_NS_PER_MS;

	if (!last || late >= QP_TIME_NEVER / 2)
		return;
	if (late > *max)
		*max = late;
	if (late > INCAST_LATE_COUNTED_NS)
		*total += late;
}
/* The sample period: c->sample_ns (virtual time's finer samples), else INCAST_SAMPLE_NS. */
static inline qp_time_ns incast_sample_ns(const struct bench_conf *c)
{
	return c->sample_ns ? c->sample_ns : INCAST_SAMPLE_NS;
}
#define INCAST_SERIES_CAP 60000u           /* 1 ms samples: a minute of rounds */
#define INCAST_HPCC_ETA 0.95               /* HPCC's and ACC's eta, given to them and used
					     * for their W_AI (it is their default too) */
#define INCAST_RTT_PROBES 3                /* one-packet WRITEs per sender; the first
					     * resolves ARP and is not counted */
#define INCAST_RTT_LIMIT_NS (100 * QP_NS_PER_MS)

struct flow_state {
	struct qp *qp;               /* sender's QP */
	struct qp *rqp;              /* the receiver's QP for it */
	uint64_t posted, acked;
	qp_time_ns done_ns;
	bool active, lost;
	bool registered;             /* both ends known to their agents (this round) */
	struct qp_stats base;        /* counters at the round's start */
};

struct incast {
	const struct bench_conf *c;
	uint64_t senders, bytes;
	struct host *hosts;          /* real time: the hosts ([0] receives) */
	struct host **h;             /* every host, [0] the receiver: in either clock */
	struct flow_state *fl;       /* [1..N] */
	uint8_t *rbuf, *sbuf;
	struct qp_mr *rmr;
	struct qp_mr **smr;
	int ep;
	qp_time_ns base_rtt_ns;
	const char *cc;              /* the senders' algorithm */
	struct incast_feedback fb;   /* what it asks of the switch and the senders */
	struct series rates;
	qp_rate_bps *row;
	qp_time_ns next_sample_ns;
	bool registered;             /* the agents know the QPs (after the RTT probe) */
	qp_time_ns last_pass_ns, max_gap_ns;   /* the loop's lateness (a busy machine) */
	qp_time_ns late_total_ns;              /* its sum, passes late by > 100 us */
	struct monitor mon;          /* qpacectl's view of the hosts' agents */
	struct agent **agents;
	bool virtual_time;           /* PSNs from the seed, no credit polls (incast_connect) */
	struct incast_rx *rx;        /* real time, --rx-thread on: host 0's thread, whose lock
				      * guards every touch of host 0 here (incast_rx.h); NULL:
				      * host 0 is this thread's */
};

/* --op read: host 0 READs from each host i; every WR of the flow is posted on host 0's QP
 * (f->rqp), whose agent paces it. --op write: host i WRITEs to host 0 (f->qp). */
static inline bool incast_reads(const struct incast *x)
{
	return x->c->op == BENCH_OP_READ;
}

/* The QP that posts flow @f's WRs, and the host it is on (i: the flow's sender). */
static inline struct qp *flow_qp(const struct incast *x, const struct flow_state *f)
{
	return incast_reads(x) ? f->rqp : f->qp;
}

static inline uint64_t flow_host(const struct incast *x, uint64_t i)
{
	return incast_reads(x) ? 0 : i;
}

/* The RTT probe's WR for flow @i: a one-packet WRITE to host 0, or a one-packet READ of
 * host i (a request and its response: the same round trip). */
static inline void incast_probe_wr(const struct incast *x, uint64_t i, struct qp_wr *w)
{
	const struct qp *qp = flow_qp(x, &x->fl[i]);
	bool rd = incast_reads(x);

	*w = (struct qp_wr){ .opcode = rd ? QP_OP_READ : QP_OP_WRITE, .wr_id = 0,
			     .mr = rd ? x->rmr : x->smr[i], .addr = rd ? x->rbuf : x->sbuf,
			     .length = 64, .remote_addr = qp->remote.addr,
			     .rkey = qp->remote.rkey, .flags = QP_WR_SIGNALED };
}

/* The result's header fields from the configuration (algorithm, senders, link ...), the
 * modelled base RTT and the switch's feedback for the algorithm. 0 or -EINVAL/-ENOENT. */
int incast_setup(struct incast *x, struct incast_run *run, const char *algo, bool *credits,
		 char *cc, size_t cclen, char *err, size_t errlen);
/* Buffers, flows and the rate series for @senders (one series row per 1 ms sample). */
int incast_alloc(struct incast *x, struct incast_run *run, const char *out_dir, char *err,
		 size_t errlen);
/* The host configuration every real-time host of the incast takes (its options string:
 * the socket and address part). */
void incast_host_conf(const struct incast *x, struct host_conf *hc, const char *opts,
		      bool credits, bool cnp);
/* Create and connect each sender's QP with its receiver QP, in process. */
int incast_connect(struct incast *x, char *err, size_t errlen);
/* Register both ends of every flow still alive with their agents (each round). */
int incast_register(struct incast *x, qp_time_ns now, char *err, size_t errlen);
/* Post the flow's next WRs while the gate and the send queue allow: the last post's
 * result (-EAGAIN: the gate, then qp_send_deadline says when; -ENOMEM/-ENOSPC: the send
 * queue, until completions; 0: all posted or the flow is not active). */
int flow_post(struct incast *x, struct flow_state *f, uint64_t i);
/* Completions of the flow's QP; the flow ends when every byte is acknowledged. */
void flow_poll(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now);
/* The flow ended (done, lost or out of time): both ends leave their agents. */
void flow_leave(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now);
/* A rate sample of every sender's agent, at most one per INCAST_SAMPLE_NS. */
void incast_sample(struct incast *x, qp_time_ns now);
bool incast_round_busy(const struct incast *x);
/* A round begins at @now: counters saved, every live flow active. */
void incast_round_begin(struct incast *x, qp_time_ns now);
/* The round that began at @start ends at @now: its flows into @out, both ends of each flow
 * leave their agents; the round's duration. */
qp_time_ns incast_round_end(struct incast *x, uint32_t r, qp_time_ns start, qp_time_ns now,
			    struct incast_flow *out);
/* A probe's round trip from post to completion; rtt[] of @n, the median at least the
 * modelled RTT. */
qp_time_ns incast_rtt_median(const struct incast *x, qp_time_ns *rtt, uint64_t n);
/* -v: what the agents saw, summed over the hosts. */
void incast_agent_counters(const struct incast *x);
/* flows.csv, rates.csv and the plots into @dir. */
void incast_outputs(const struct incast *x, struct incast_run *run, const char *dir,
		    qp_time_ns t0, bool have_sw);
/* Everything but the hosts (their owner closes them). */
void incast_free(struct incast *x);

/* The virtual-time runner (incast_vt.c): incast_run with --clock virtual. */
int incast_run_vt(const struct bench_conf *c, const char *algo, uint64_t senders,
		  uint64_t bytes, const char *out_dir, struct incast_run *run, char *err,
		  size_t errlen);

#endif
