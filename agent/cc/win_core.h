/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A TCP congestion window on the transport's events, shared by tcp.c, dctcp.c and ffd.c
 * (internal to agent/cc/; the algorithm and its sources are described in tcp.c).
 *
 * The window is in bytes (cwnd, ssthresh); the controller publishes it as the in-flight
 * cap (cc->cap_bytes) and sends at the line rate, as TCP does without pacing. The loss
 * reactions follow NewReno (RFC 5681, 6582) on the RC's go-back-N:
 *   ACK      slow start (cwnd < ssthresh): cwnd += bytes acknowledged (RFC 3465's byte
 *            counting, with no per-ACK limit: one ACK acknowledges up to 16 packets);
 *            congestion avoidance: cwnd += MSS * bytes / cwnd (one MSS per window);
 *            nothing during a recovery, nor while less than half the window is in flight
 *            (the sender, not the window, limits: RFC 7661's idea);
 *   NAK      outside a recovery: ssthresh = max(cwnd / 2, 2 MSS), cwnd = ssthresh, and a
 *            recovery until the ACK of the highest PSN sent at the NAK (one halving per
 *            window of losses);
 *   timeout  ssthresh = max(cwnd / 2, 2 MSS) on the first expiry of a row (RFC 5681 holds
 *            it on repeated ones), cwnd = one MSS (the loss window), and slow start again;
 *            NAKs about data sent before it cut nothing (RFC 6582's recover).
 * A source that does not know the PSNs (0 in the events) ends a recovery one base RTT
 * after it began instead. Every function is O(1), allocates nothing and reads no clock. */
#ifndef QPACE_AGENT_WIN_CORE_H
#define QPACE_AGENT_WIN_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qpace/cc.h"

struct win_params {
	uint32_t iw_pkts;          /* initial window, packets (MSS) */
	uint32_t max_pkts;         /* largest window, packets; 0 = none */
	uint64_t ssthresh_bytes;   /* initial slow-start threshold; 0 = none (infinite) */
};

/* Parameter entries for a params struct that holds struct win_params at byte offset
 * @base, with the initial window's default @iw. */
#define WIN_PARAM_ENTRIES(base, iw)                                                        \
	{ "iw", CC_P_U32, (base) + offsetof(struct win_params, iw_pkts), iw, 1, 4096, 0,       \
	  "initial window in packets (MSS = the path MTU)" },                                 \
	{ "max_cwnd", CC_P_U32, (base) + offsetof(struct win_params, max_pkts), 0, 0,         \
	  1048576, 0, "largest window in packets, at least iw; 0 = none (1 with iw=1: "      \
	  "a 1-packet window)" },                                                             \
	{ "ssthresh", CC_P_BYTES, (base) + offsetof(struct win_params, ssthresh_bytes), 0, 0, \
	  1099511627776.0, 0, "initial slow-start threshold in bytes; 0 = none" }

struct win_stats {
	uint64_t halvings;        /* NAKs that halved the window (one per window of losses) */
	uint64_t naks_held;       /* NAKs inside a recovery: no further cut */
	uint64_t timeouts;        /* retransmission timeouts (cwnd to one MSS) */
	uint64_t ss_exits;        /* slow start ended by a loss or a cut */
	uint64_t cuts;            /* multiplicative cuts by the algorithm (win_cut) */
};

struct win {
	double cwnd, ssthresh;    /* bytes */
	double mss, max_cwnd;     /* bytes; max_cwnd 0 = none */
	bool recovery;            /* NAKs cut nothing until it ends */
	bool grow;                /* ... and ACKs grow the window (after a timeout) */
	uint64_t recover_psn;     /* the recovery ends at an ACK of this PSN (0: by time) */
	qp_time_ns recover_until; /* ... or then, when the source gives no PSNs */
	qp_time_ns t_ns;          /* the path's base RTT */
	struct win_stats stats;
};

/* @p checked: iw <= max_cwnd when max_cwnd is set. 0, or -EINVAL with @err. */
int win_check(const char *alg, const struct win_params *p, char *err, size_t errlen);
void win_init(struct win *w, const struct win_params *p, const struct cc_path *path);
/* An ACK: grow by its bytes unless @hold (the algorithm holds the window: FFD's level 1).
 * Ends a recovery it acknowledges the end of. */
void win_on_ack(struct win *w, const struct cc_ack *a, bool hold, qp_time_ns now);
void win_on_nak(struct win *w, const struct cc_loss *l, qp_time_ns now);
void win_on_timeout(struct win *w, const struct cc_loss *l, qp_time_ns now);
/* cwnd *= @factor (at least one MSS), ssthresh = the new cwnd: DCTCP's and FFD's cuts. */
void win_cut(struct win *w, double factor);
/* true while slow start runs (cwnd below ssthresh). */
bool win_slow_start(const struct win *w);
/* Publish: the cap is the window (whole bytes), the rate the line rate. CC_ACT_RATE. */
unsigned win_publish(const struct win *w, struct cc *cc);

#endif
