/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IA credit pacing, receiver side (agent/credit/credit.c).
 *
 * One pacer per receiving link: it shares the link's capacity C among the n senders (QPs)
 * that send to it. Each may have W messages of one MTU outstanding; each arrival the shell
 * reports (credit_arrived) is answered, Δ later, by a grant that tops the sender's
 * outstanding credit back up to W·MTU:
 *
 *     W = max(1, floor(C·RTT / (MTU·n)))     Δ = max(0, n·W·MTU/C − RTT)
 *
 * RTT is the smallest grant-to-data time measured (rtt_ns until the first sample), never
 * below rtt_floor_ns when one is given. A shell
 * that reports no arrivals gets W·MTU per sender every RTT + Δ instead (not bounded by W).
 *
 * Pure: no clock, no I/O; time is passed in, randomness comes from a seeded generator in
 * the pacer, and credit_create is the only call that allocates. The shell calls
 * credit_poll(now) at (or after) credit_next_ns() and sends each grant to its sender.
 * Calls return 0 or a negative errno; nothing here asserts on input.
 */
#ifndef QPACE_CREDIT_H
#define QPACE_CREDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

/* Upper bound on credit_params.max_senders (the sender table is allocated at create). */
#define CREDIT_MAX_SENDERS (1u << 20)

struct credit_params {
	qp_rate_bps link_bps;   /* C: capacity of the receiving link, bits/s, > 0 */
	qp_time_ns rtt_ns;      /* RTT until the first measured one, ns, > 0 */
	uint32_t mtu_bytes;     /* bytes per message (one MTU), > 0 */
	uint32_t max_senders;   /* senders the pacer can hold, 1..CREDIT_MAX_SENDERS */
	uint64_t seed;          /* seeds the first-grant phases; same seed, same schedule */
	bool arrivals;          /* the shell reports arrivals: clocked by them from the start
				 * (false: the timer schedule until the first credit_arrived) */
	qp_time_ns rtt_floor_ns; /* 0, or the RTT in use is never below this (a measured
				  * sample below it counts as it): the shell knows the path's
				  * RTT is at least this; <= rtt_ns */
};

struct credit_grant {
	uint32_t sender_id;
	uint64_t bytes;         /* up to W·MTU */
	qp_time_ns due_ns;      /* when it was due (<= the poll's now) */
};

struct credit_stats {
	uint64_t adds, removes;
	uint64_t grants, granted_bytes;
	uint64_t skipped;          /* grants dropped because a poll came a period or more late */
	uint64_t recomputes;       /* W, Δ, period recomputed (each change of n) */
	uint64_t rejected_full;    /* credit_add beyond max_senders: -ENOSPC */
	uint64_t rejected_dup;     /* credit_add of a sender already there: -EEXIST */
	uint64_t rejected_unknown; /* credit_remove/credit_arrived of an unknown sender */
	uint64_t arrivals, arrived_bytes; /* credit_arrived calls and their bytes */
	uint64_t window_full;      /* arrivals answered by nothing: outstanding >= W·MTU */
	uint64_t rtt_samples;      /* grant-to-data times measured */
	uint64_t rtt_idle_probes;  /* probes open > 16 RTTs (an idle sender): no sample */
};

struct credit_pacer;

/* W and Δ for @n senders. 0; -EINVAL when any argument is 0, or -ERANGE when W or the
 * period does not fit; the message in @err (may be NULL) names the argument. */
int credit_window(qp_rate_bps link_bps, qp_time_ns rtt_ns, uint32_t mtu_bytes, uint32_t n,
		  uint32_t *w, qp_time_ns *delta_ns, char *err, size_t errlen);

/* Validate @p: 0, or -EINVAL/-ERANGE with a message naming the field and its range. */
int credit_check(const struct credit_params *p, char *err, size_t errlen);

/* A pacer with no senders, or NULL with a message in @err. */
struct credit_pacer *credit_create(const struct credit_params *p, char *err, size_t errlen);
void credit_destroy(struct credit_pacer *cp);

/* Add a sender at @now: W, Δ and the period are recomputed for the new n, and its first
 * grant falls at a uniformly random time in [now, now + RTT + Δ]. Senders already there
 * keep their next grant time. 0, -EEXIST (already there) or -ENOSPC (max_senders). */
int credit_add(struct credit_pacer *cp, uint32_t sender_id, qp_time_ns now);

/* Remove a sender (its pending grant is dropped) and recompute for the new n. @now is
 * accepted for symmetry; removal takes effect at once. 0 or -ENOENT. */
int credit_remove(struct credit_pacer *cp, uint32_t sender_id, qp_time_ns now);

/* Earliest grant due, QP_TIME_NEVER with no senders. */
qp_time_ns credit_next_ns(const struct credit_pacer *cp);

/* Up to @max grants due at or before @now into @out; returns how many. Each sender gets at
 * most one grant per call. Arrival clocking: the grant is the room left in the window at
 * poll time (none when it is full), and the next comes after the next arrival. Timer
 * schedule: a sender whose grants are a period or more overdue gets the latest one (its
 * due_ns on the sender's grid) and the older ones are counted in stats.skipped, so a late
 * shell never bursts credits; each grant is W·MTU bytes with the W at poll time and the
 * next is one current period later. When @max cuts a poll short, the next poll starts with
 * the sender that was left out. */
unsigned credit_poll(struct credit_pacer *cp, qp_time_ns now, struct credit_grant *out,
		     unsigned max);

/* The receiver saw @bytes of data from @sender_id at @now: its grant (all the room left
 * in its window) falls due Δ later, and an open RTT probe may close. The first call
 * switches the pacer to arrival clocking for good. 0 or -ENOENT. */
int credit_arrived(struct credit_pacer *cp, uint32_t sender_id, uint64_t bytes, qp_time_ns now);

/* Bytes granted to @sender_id and not arrived yet (<= W·MTU with arrival clocking). */
int credit_sender_outstanding(const struct credit_pacer *cp, uint32_t sender_id,
			      uint64_t *bytes);

qp_time_ns credit_rtt_ns(const struct credit_pacer *cp);      /* the RTT in use */
bool credit_arrival_clocked(const struct credit_pacer *cp);

/* Sender @sender_id's next grant time in @next_ns. 0 or -ENOENT. */
int credit_sender_next_ns(const struct credit_pacer *cp, uint32_t sender_id,
			  qp_time_ns *next_ns);

uint32_t credit_senders(const struct credit_pacer *cp);       /* n */
uint32_t credit_w(const struct credit_pacer *cp);             /* W messages, 0 when n = 0 */
qp_time_ns credit_delta_ns(const struct credit_pacer *cp);    /* Δ, 0 when n = 0 */
qp_time_ns credit_period_ns(const struct credit_pacer *cp);   /* RTT + Δ, 0 when n = 0 */
uint64_t credit_grant_bytes(const struct credit_pacer *cp);   /* W·MTU */
const struct credit_stats *credit_get_stats(const struct credit_pacer *cp);

#endif
