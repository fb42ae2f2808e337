/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ECN marking, RED-style, on the instantaneous egress queue, as DCQCN switches do it.
 *
 * Floyd & Jacobson, "Random Early Detection Gateways" (1993), without the average: data-
 * centre ECN (DCQCN, Zhu et al. SIGCOMM 2015; HPCC's ns-3 switch-mmu.cc ShouldSendCN,
 * called from switch-node.cc SwitchNotifyDequeue) marks at dequeue, on the egress bytes
 * the frame leaves behind (sw_queue_mark: its INT hop's qlen):
 *
 *     q <= Kmin           p = 0
 *     Kmin < q < Kmax     p = Pmax * (q - Kmin) / (Kmax - Kmin)
 *     q >= Kmax           p = 1
 *
 * Only ECN-capable frames (ECT(0), ECT(1)) are marked, by setting CE; frames that are not
 * ECN-capable are never dropped by RED (drop-tail alone bounds the queue).
 *
 * Parameters (--ecn KMIN,KMAX,PMAX): Kmin, Kmax in bytes, 0 <= Kmin < Kmax <= buffer;
 * Pmax in (0, 1]. Default: off. HPCC's setup at 25G: 100 KB, 400 KB, 0.2 (run.py scales
 * Kmin and Kmax with the link rate: 100*bw/25 KB and 400*bw/25 KB).
 *
 * Deviation: in real time an I/O port hands frames to the OS up to --tx-early before
 * their model departure, and the decision is made then, so frames that arrive in that
 * last window before the frame starts are not counted in its queue (links and virtual
 * time decide at the exact departure).
 *
 * The random numbers come from an injected, seeded generator (splitmix64), so tests and
 * runs are repeatable.
 */
#ifndef SW_RED_H
#define SW_RED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

struct sw_red_params {
	uint64_t kmin_bytes;
	uint64_t kmax_bytes;   /* 0: marking off */
	double pmax;
};

struct sw_rng {
	uint64_t s;
};

static inline uint64_t sw_rng_next(struct sw_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0, or -EINVAL with a message naming the field, its value and the accepted range. */
int sw_red_check(const struct sw_red_params *p, uint64_t buffer_bytes, char *err, size_t len);

/* Marking probability at queue @qbytes, scaled to 2^32 (so 1.0 = 2^32). */
uint64_t sw_red_prob32(const struct sw_red_params *p, uint64_t qbytes);

/* Decide whether to mark a frame leaving a queue of @qbytes behind it. Draws from @rng only when
 * Kmin < q < Kmax. */
bool sw_red_mark(const struct sw_red_params *p, uint64_t qbytes, struct sw_rng *rng);

/* RED's average queue (Floyd & Jacobson 1993, section 4), for FFD's congestion levels: at
 * each arrival
 *     avg <- (1 - w) avg + w q
 * with q the queue the frame joins; an arrival that finds the queue idle since the last
 * departure first decays avg as if m frames had arrived to an empty queue, avg <-
 * (1 - w)^m avg, m = idle time / the frame's transmission time. FFDTCP's seed uses RED's
 * avq with RED's weight (w = 0.002). w = 1 is the instantaneous queue. */
struct sw_red_avg {
	double avg;
	qp_time_ns busy_until;     /* the last admitted frame's departure */
};

/* A frame of @tx_ns on the wire joins a queue of @q bytes at @arrival and departs at
 * @depart: the new average, rounded to bytes. */
uint64_t sw_red_avg_update(struct sw_red_avg *a, double w, uint64_t q, qp_time_ns arrival,
			   qp_time_ns depart, qp_time_ns tx_ns);

#endif
