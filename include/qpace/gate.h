/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate: every send WR of a qpace QP passes it.
 *
 * Core (verbs/gate.c, pure: time passed in, no clock, no I/O, no allocation)
 *
 *   A token bucket in bytes, refilled at rate R (bits/s), holding at most
 *       cap = chunk_bytes + burst_bytes
 *   (burst_bytes is how far ahead of the rate a sender may get after idling, and the slack
 *   that absorbs a late wakeup without losing rate.) A message of L bytes is handed on in pieces of n = min(L - sent, chunk_bytes) bytes
 *   (a SEND is one piece of L: it cannot be split). A piece may go when
 *       tokens >= min(n, cap)
 *   and then costs n tokens (the bucket goes into debt for a SEND longer than cap).
 *
 *   Catch-up. A sender told to wait for tokens ("retry at t") that comes back late (the
 *   scheduler, its own event loop) would lose every slot past the bucket's depth for good.
 *   For the time since such a verdict the bucket may fill beyond cap, up to
 *       cap + A,   A = max(chunk_bytes, R x catchup_ns)   (default 100 us at the rate),
 *   so the late sender catches up in one bounded burst (like sch_fq's time_next_packet: a
 *   late dequeue keeps its slot, an idle flow earns no credit). An idle sender (its last
 *   verdict let a piece through) still fills to cap only; a sender back on time never sees
 *   the difference. So over any window of T the bytes handed on are at most cap + A + R·T
 *   plus one message's debt, and at least R·T − cap − A while the sender has data.
 *
 *   R is the rate the agent publishes for this QPN in the rate table (qpace/ratetable.h),
 *   capped by max_bps. It is read at every piece: a rate change takes effect at the next
 *   piece (tokens earned before it at the old rate are kept).
 *
 *   Fallback. With no table, no slot for this QPN, a rate of 0 or a heartbeat older than
 *   stale_ns there is no agent rate in force, and the gate never raises the rate on its own:
 *     hold  for hold_ns after the agent's rate was last in force: the last rate, window cap
 *           and credits that agent published (the rate capped at line_bps), all enforced as
 *           before — a sender that spends its last credits waits, at most until the hold ends;
 *     safe  afterwards (and from the start when no agent rate was ever in force):
 *               R = min(line_bps * safe_permille / 1000, the last agent rate, max_bps),
 *           credits and the window off (no one grants or acknowledges for a dead agent), so
 *           the gate never stalls.
 *   hold_ns and safe_permille are the QP's own when set, else the policy the agent last
 *   published in the table header (qpaced --fallback-hold / --fallback-safe), else 1 s and
 *   100 (1/10 of the line rate). Entering fallback, its reason changing, the hold ending and
 *   the agent's rate returning are each reported once (QP_GATE_EV_* in the verdict, and
 *   counted). A restarted agent takes over at its first published rate.
 *
 *   Credits (slot flag QP_RATE_F_CREDITS, the receiver paces): a piece also needs credits;
 *   available = credit_bytes granted (cumulative, from the table) − bytes spent in the
 *   slot's generation. A splittable piece is cut to the available credits; a SEND needs
 *   available > 0 and may overdraw by one message. With none available the verdict is
 *   "wait for credits", retry after credit_poll_ns.
 *
 *   In-flight cap (the slot's cap_bytes > 0, a window algorithm's W: HPCC's R*T + MTU - 1),
 *   when the shell knows the QP's unacknowledged bytes U (backends that count them; rxe
 *   does not tell, so with ibv only the rate applies): a packet may start while
 *   U + packet <= cap. A splittable piece is cut to whole units (the path MTU) that fit;
 *   when none fits the verdict is "wait for the window", retry after credit_poll_ns (an
 *   ACK frees it). A SEND waits until it fits whole. With nothing in flight one unit
 *   always goes, so a cap below one packet slows a flow to one packet per round trip and
 *   never stalls it. Like credits, the cap is enforced in hold and off in safe.
 *
 * Shell (verbs/pace.c): the rate source (maps the table, reopens it when it goes stale),
 * the wait (sleep, spin or sleep-then-spin until a deadline), and the pacer, which turns a
 * table slot into gate input, logs fallback once, and loops until the gate opens.
 */
#ifndef QPACE_GATE_H
#define QPACE_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/ratetable.h"
#include "qpace/time.h"

/* Defaults and limits; a zero field in qp_gate_params takes the default. */
#define QP_GATE_DEF_BURST_BYTES 8192u          /* two 4 KiB MTUs; the QP layer uses 2 x MTU */
#define QP_GATE_DEF_CHUNK_BYTES 4096u
#define QP_GATE_DEF_LINE_BPS (10 * QP_GBPS)     /* as the QP layer's default link rate */
#define QP_GATE_DEF_HOLD_NS QP_NS_PER_S
#define QP_GATE_DEF_SAFE_PERMILLE 100u         /* 1/10 of the line rate */
#define QP_GATE_DEF_STALE_NS (100 * QP_NS_PER_MS)
#define QP_GATE_DEF_CREDIT_POLL_NS (20 * QP_NS_PER_US)
#define QP_GATE_DEF_CATCHUP_NS (100 * QP_NS_PER_US)
#define QP_GATE_MIN_CATCHUP_NS QP_NS_PER_US    /* catch-up: 1 us .. 1 s at the rate */
#define QP_GATE_MAX_CATCHUP_NS QP_NS_PER_S
#define QP_GATE_MIN_BYTES 64u                  /* burst and chunk: 64 B .. 64 MiB */
#define QP_GATE_MAX_BYTES (64u << 20)
#define QP_GATE_MIN_BPS QP_KBPS                /* rates: 1 kb/s .. 10 Tb/s */
#define QP_GATE_MAX_BPS (10000 * QP_GBPS)
#define QP_GATE_MIN_STALE_NS QP_NS_PER_MS      /* 1 ms .. 60 s */
#define QP_GATE_MAX_STALE_NS (60 * QP_NS_PER_S)
#define QP_GATE_MIN_HOLD_NS QP_NS_PER_MS       /* 1 ms .. 60 s, whole ms */
#define QP_GATE_MAX_HOLD_NS (60 * QP_NS_PER_S)
#define QP_GATE_MAX_PERMILLE 1000u             /* 1000 = the line rate: never a default */

struct qp_gate_params {
	uint64_t burst_bytes;       /* bytes that may gather beyond one piece */
	uint64_t chunk_bytes;       /* largest piece of a splittable message, bytes */
	qp_rate_bps line_bps;       /* the QP's line rate: ceiling of the held rate, base of
				     * the safe rate, bits/s */
	qp_rate_bps max_bps;        /* ceiling on any table rate, bits/s; 0 = none */
	qp_time_ns stale_ns;        /* heartbeat age that means "no agent" */
	qp_time_ns hold_ns;         /* hold the last agent rate this long; 0 = the agent's
				     * policy, else QP_GATE_DEF_HOLD_NS */
	uint64_t safe_permille;     /* then this share of line_bps, 1/1000; 0 = the agent's
				     * policy, else QP_GATE_DEF_SAFE_PERMILLE */
	qp_time_ns credit_poll_ns;  /* retry interval while waiting for credits or the window */
	qp_time_ns catchup_ns;      /* a sender that comes back late for tokens keeps what it
				     * earned meanwhile up to this long at the rate (at least one
				     * chunk) beyond the bucket; QP_GATE_DEF_CATCHUP_NS */
};

/* Why no agent rate is in force (the gate holds or runs safe). */
enum qp_gate_fallback {
	QP_GATE_FB_NONE = 0,        /* the agent's rate is in force */
	QP_GATE_FB_NO_TABLE,        /* no rate table mapped */
	QP_GATE_FB_NO_SLOT,         /* the table has no slot for this QPN (or it is busy) */
	QP_GATE_FB_STALE,           /* heartbeat older than stale_ns */
	QP_GATE_FB_NO_RATE,         /* the slot's rate is 0 */
	QP_GATE_FB_COUNT
};

/* Where the rate in force comes from. */
enum qp_gate_mode {
	QP_GATE_AGENT = 0,          /* the agent's rate, window and credits */
	QP_GATE_HOLD,               /* agent lost: its last rate, window and credits */
	QP_GATE_SAFE,               /* hold over (or never an agent): the safe rate only */
	QP_GATE_MODE_COUNT
};

/* What the shell read for this QP: filled by qp_pacer_input or by a test. */
struct qp_gate_input {
	bool have_table;
	bool have_slot;
	qp_time_ns heartbeat_ns;
	qp_time_ns policy_hold_ns;  /* the table's fallback policy; 0 = none */
	uint32_t policy_safe_permille;
	struct qp_rate_entry slot;  /* with have_slot */
	bool have_inflight;         /* the backend counts unacknowledged bytes */
	uint64_t inflight_bytes;    /* with have_inflight: sent or queued, not yet acknowledged */
	uint32_t unit_bytes;        /* the packet size the cap counts in (path MTU); 0 = 1 */
};

enum qp_gate_take_flags {
	QP_GATE_WHOLE = 1u << 0,    /* the message cannot be split (SEND) */
	QP_GATE_NO_TOKENS = 1u << 1,/* the rate is enforced elsewhere (the NIC's rate limit):
				     * the bucket neither waits nor is charged; the rate in
				     * force (fallback included), credits and the window are
				     * decided as ever, and v->rate_bps is what the NIC gets */
};

enum qp_gate_wait_reason {
	QP_GATE_OPEN = 0,
	QP_GATE_WAIT_TOKENS,
	QP_GATE_WAIT_CREDITS,
	QP_GATE_WAIT_WINDOW,
};

enum qp_gate_events {
	QP_GATE_EV_FALLBACK = 1u << 0,   /* entered fallback, or its reason changed: log once */
	QP_GATE_EV_RECOVERED = 1u << 1,  /* the agent's rate is in force again */
	QP_GATE_EV_RATE = 1u << 2,       /* the rate in force changed */
	QP_GATE_EV_SAFE = 1u << 3,       /* the hold ended: the safe rate from now on */
};

struct qp_gate_verdict {
	uint64_t bytes;                  /* open: bytes of this piece (charged) */
	qp_time_ns retry_ns;             /* closed: ask again at this time */
	enum qp_gate_wait_reason wait;
	unsigned events;                 /* QP_GATE_EV_* */
	enum qp_gate_fallback fallback;  /* the state after this call */
	enum qp_gate_mode mode;
	qp_rate_bps rate_bps;            /* the rate in force after this call */
};

struct qp_gate_stats {
	uint64_t pieces;                 /* pieces let through */
	uint64_t bytes;                  /* bytes let through */
	uint64_t token_waits;            /* closed verdicts: tokens */
	uint64_t credit_waits;           /* closed verdicts: credits */
	uint64_t window_waits;           /* closed verdicts: in-flight cap */
	uint64_t debt_pieces;            /* whole messages larger than the bucket */
	uint64_t nic_pieces;             /* of pieces, let through for the NIC to pace */
	uint64_t fallback_entries;       /* times fallback began (or changed reason) */
	uint64_t fallback_bytes;         /* bytes let through without an agent (hold, safe) */
	uint64_t safe_entries;           /* times a hold ended */
	uint64_t safe_bytes;             /* of fallback_bytes, at the safe rate */
	uint64_t recoveries;
	uint64_t rate_changes;
	uint64_t credit_resets;          /* the slot's generation changed */
	uint64_t late_takes;             /* came back for tokens after their time */
	uint64_t catchup_bytes;          /* tokens kept beyond the bucket for a late sender */
	uint64_t wait_ns;                /* shell: time spent waiting for the gate */
	uint64_t spin_ns;                /* shell: of which spinning */
	uint64_t sleeps;                 /* shell: sleeps taken */
};

struct qp_gate {
	struct qp_gate_params p;         /* resolved */
	int64_t tokens_bytes;            /* may be negative (debt) */
	uint64_t tokens_frac;            /* fraction of a byte, in 1/(8e9) bytes */
	qp_time_ns last_ns;              /* tokens are counted up to here */
	qp_rate_bps rate_bps;            /* the rate in force */
	enum qp_gate_fallback fallback;
	enum qp_gate_mode mode;
	bool have_last;                  /* an agent rate was in force once */
	struct qp_rate_entry last;       /* the slot as it was when last in force */
	qp_rate_bps last_bps;            /* the rate that was in force then */
	qp_time_ns lost_ns;              /* when it stopped being in force */
	qp_time_ns policy_hold_ns;       /* the agent's policy as last seen; 0 = none */
	uint32_t policy_safe_permille;
	uint32_t credit_gen;             /* slot generation the spent count belongs to */
	bool credit_gen_known;
	uint64_t credit_spent_bytes;
	bool behind;                     /* the last verdict was a wait for tokens */
	qp_time_ns due_ns;               /* with behind: the time it named */
	enum qp_gate_wait_reason closed; /* the last verdict's wait, given in agent mode;
					  * QP_GATE_OPEN after any other verdict */
	qp_time_ns closed_retry_ns;      /* with closed: the time it named */
	struct qp_gate_stats stats;
};

/* Fill zero fields with defaults, then check ranges. 0, or -EINVAL with one line naming the
 * field, the value and the accepted range. */
int qp_gate_params_resolve(struct qp_gate_params *p, char *err, size_t errlen);
/* Start with a full bucket at the safe rate; @p must be resolved. */
void qp_gate_init(struct qp_gate *g, const struct qp_gate_params *p, qp_time_ns now);
/* Ask to hand on up to @want bytes of a message at @now. Returns 0 with v->bytes charged
 * (0 only when want is 0), or -EAGAIN with v->retry_ns and v->wait. */
int qp_gate_take(struct qp_gate *g, const struct qp_gate_input *in, uint64_t want,
		 unsigned flags, qp_time_ns now, struct qp_gate_verdict *v);
/* The last verdict again, for a caller that knows none of its inputs changed since (the
 * same slot contents, policy, bytes in flight, @want and @flags) and passes the table's
 * heartbeat now: true with *v and the counters as qp_gate_take would leave them at @now,
 * without its arithmetic; false when that is not certain (the last verdict was open, or
 * not in agent mode; the heartbeat went stale; the tokens are due by @now): call
 * qp_gate_take. Why it is the same verdict: the window and credits depend on inputs only;
 * the tokens grow linearly from the last refill, below the bucket until the time the
 * verdict named, so a refill now and another later leave what the later one alone does. */
bool qp_gate_closed_again(struct qp_gate *g, qp_time_ns heartbeat_ns, qp_time_ns now,
			  struct qp_gate_verdict *v);
/* The bucket depth in force: chunk_bytes + burst_bytes. */
uint64_t qp_gate_cap_bytes(const struct qp_gate *g);
/* A late sender's allowance beyond the bucket at the rate in force:
 * max(chunk_bytes, rate x catchup_ns). */
uint64_t qp_gate_catchup_bytes(const struct qp_gate *g);
const char *qp_gate_fallback_str(enum qp_gate_fallback f);
/* The fallback policy in force: the QP's own, else the agent's as last seen, else the
 * defaults; the safe rate already capped by the last agent rate and max_bps. */
qp_time_ns qp_gate_hold_ns(const struct qp_gate *g);
qp_rate_bps qp_gate_safe_bps(const struct qp_gate *g);
/* "agent", "hold", "safe". */
const char *qp_gate_mode_str(enum qp_gate_mode m);
/* Does the window cap apply to the next piece? (The shell then asks the backend for the
 * bytes in flight.) */
bool qp_gate_wants_inflight(const struct qp_gate *g, const struct qp_gate_input *in);

/* ---- shell: waiting ---- */

enum qp_wait_mode {
	QP_WAIT_HYBRID = 0,  /* sleep until spin_ns before the deadline, then spin (default) */
	QP_WAIT_SLEEP,       /* sleep only (cheap, late by a wakeup: ~40-80 us here) */
	QP_WAIT_SPIN,        /* spin only (one core busy) */
	QP_WAIT_MODE_COUNT
};

#define QP_WAIT_DEF_SPIN_NS (80 * QP_NS_PER_US)

struct qp_wait {
	enum qp_wait_mode mode;
	qp_time_ns spin_ns;  /* hybrid: spin the last spin_ns; 0 = QP_WAIT_DEF_SPIN_NS */
};

/* Wait until @deadline (CLOCK_MONOTONIC ns) or, with fd >= 0, until fd is readable; returns
 * the time on return. Adds to st->wait_ns / spin_ns / sleeps when st is not NULL. */
qp_time_ns qp_wait_until(const struct qp_wait *w, qp_time_ns deadline, int fd,
			 struct qp_gate_stats *st);
const char *qp_wait_mode_str(enum qp_wait_mode m);
/* "hybrid", "sleep", "spin" -> mode; -EINVAL when unknown. */
int qp_wait_mode_parse(const char *s, enum qp_wait_mode *out);

/* ---- shell: the rate source and the pacer ---- */

/* Where the rate table comes from: mapped lazily, reopened (at most once per retry_ns)
 * while absent or stale, so a restarted agent is picked up. Shared by a context's QPs. */
struct qp_rate_src {
	char name[128];                  /* "" = none: always the safe rate */
	struct qp_ratetable *table;
	bool owned;                      /* false: a caller's in-process table, never reopened */
	qp_time_ns retry_ns;             /* next reopen attempt */
	qp_time_ns stale_ns;             /* reopen when the heartbeat is older than this */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	char last_err[160];              /* the last open failure, logged once per change */
};

#define QP_RATE_SRC_RETRY_NS (100 * QP_NS_PER_MS)

/* @name as qp_ctx_attr.rate_table (NULL = default, "" = none). No I/O yet. */
void qp_rate_src_init(struct qp_rate_src *s, const char *name, qp_time_ns stale_ns,
		      void (*log)(void *, const char *), void *log_arg);
/* Use a caller's in-process table (qp_ratetable_create_mem); never closed or reopened. */
void qp_rate_src_init_table(struct qp_rate_src *s, struct qp_ratetable *t, qp_time_ns stale_ns,
			    void (*log)(void *, const char *), void *log_arg);
/* The table to read now (maybe NULL), reopening when due. */
struct qp_ratetable *qp_rate_src_get(struct qp_rate_src *s, qp_time_ns now);
void qp_rate_src_fini(struct qp_rate_src *s);

struct qp_pacer {
	struct qp_gate gate;
	struct qp_wait wait;
	struct qp_rate_src *src;         /* may be NULL: the safe rate */
	uint32_t qpn;
	uint32_t slot_hint;
	/* What the last closed verdict was given, so that an offer with none of it changed is
	 * answered by qp_gate_closed_again without reading the slot or doing the arithmetic
	 * (a virtual-time host offers its pending pieces at every turn, mostly in vain). */
	struct {
		bool valid;
		bool wants_inflight, have_inflight;
		const struct qp_ratetable *table;
		uint32_t slot, seq, unit_bytes, flags;
		uint64_t want, inflight_bytes;
		qp_time_ns at_ns;
	} memo;
	/* The QP's unacknowledged bytes and its packet size (path MTU), for the in-flight
	 * cap: 0, or -errno when not known. NULL = never known. */
	int (*inflight)(void *arg, uint64_t *bytes, uint32_t *unit_bytes);
	void *inflight_arg;
};

/* Set up a pacer for @qpn (params resolved by the caller). */
void qp_pacer_init(struct qp_pacer *p, const struct qp_gate_params *gp,
		   const struct qp_wait *w, struct qp_rate_src *src, uint32_t qpn,
		   qp_time_ns now);
/* Read the table slot for the pacer's QPN into gate input. */
void qp_pacer_input(struct qp_pacer *p, qp_time_ns now, struct qp_gate_input *in);
/* One non-blocking decision at @now (logs fallback changes once). */
int qp_pacer_try(struct qp_pacer *p, uint64_t want, unsigned flags, qp_time_ns now,
		 struct qp_gate_verdict *v);
/* Wait (qp_wait_until, waking early when fd is readable and calling @poll_fn then) until
 * a piece of @want passes; returns 0 with v->bytes. */
int qp_pacer_take(struct qp_pacer *p, uint64_t want, unsigned flags, int fd,
		  void (*poll_fn)(void *arg, qp_time_ns now), void *poll_arg,
		  struct qp_gate_verdict *v);

#endif
