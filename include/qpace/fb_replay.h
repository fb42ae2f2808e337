/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Replay protection for signed feedback (qpace/fb_auth.h): a window per sender.
 *
 * RFC 4303 §3.4.3 (IPsec ESP, and WireGuard likewise) keeps, per sender, the highest
 * sequence number accepted and a bitmap of the W numbers below it: a number above the
 * highest is new, one inside the window is new unless its bit is set, one below the window
 * is too old. qpace's sequence numbers are the signer's clock in ns (fb_signer_sign), so
 * they are sparse: a bitmap of W consecutive numbers would cover W ns. The window here is
 * the same rule over the W last accepted numbers instead of the W last integers: each
 * sender keeps the accepted numbers at or above its floor (at most W, sorted), and when a
 * W+1st arrives the smallest is forgotten and the floor rises above it. A number below
 * the floor is too old; one at or above it is a replay exactly when it is remembered,
 * because every accepted number at or above the floor is. For a dense sequence it is the
 * RFC's window; for qpace's, a message may arrive up to W messages late.
 *
 * Freshness. A receiver starts with a floor of its own clock at start: a message signed
 * before it existed (captured and replayed into a restarted receiver) is too old, as long
 * as the signers' clocks do not run behind the receiver's. A sequence more than
 * FB_REPLAY_AHEAD_NS ahead of the receiver's clock is refused (a signer's clock set
 * wrong would otherwise push its window, and the floor below, ahead of everyone).
 *
 * Bounded state: a table of at least max_senders senders in sets of FB_REPLAY_WAYS (by a
 * hash of the sender id). A new sender takes a free place in its set, or the place of the
 * set's least recently heard sender, and the floor for senders not in the table rises above
 * the highest number that sender had: forgetting a sender never lets its old messages
 * back in. Evictions are counted.
 *
 * Pure: no clock read, no allocation after init; the clock is passed in (ns, the same
 * clock the signers use: CLOCK_REALTIME in qpace's programs).
 */
#ifndef QPACE_FB_REPLAY_H
#define QPACE_FB_REPLAY_H

#include <stdint.h>
#include "qpace/time.h"

#define FB_REPLAY_WINDOW 64u
#define FB_REPLAY_WAYS 8u
#define FB_REPLAY_AHEAD_NS (10 * QP_NS_PER_S)
#define FB_REPLAY_MAX_SENDERS 65536u

struct fb_replay_sender {
	uint32_t id;
	uint8_t used;
	uint8_t head, n;                   /* the ring of accepted numbers, ascending */
	uint64_t floor;                    /* numbers below it are too old */
	uint64_t heard;                    /* the table's tick when last accepted (LRU) */
	uint64_t seen[FB_REPLAY_WINDOW];
};

struct fb_replay {
	struct fb_replay_sender *slots;    /* nsets * ways */
	uint32_t nsets, ways;
	uint64_t floor;                    /* for senders not in the table */
	uint64_t tick;
	uint32_t senders;                  /* in the table */
	uint64_t evictions;                /* senders forgotten to make room */
};

/* Room for at least @max_senders (1..FB_REPLAY_MAX_SENDERS) senders; nothing older than
 * @start_ns is accepted. 0, -EINVAL (@max_senders) or -ENOMEM. */
int fb_replay_init(struct fb_replay *r, uint32_t max_senders, uint64_t start_ns);
void fb_replay_fini(struct fb_replay *r);

/* Sequence @seq of @sender arrived (its tag already checked) at @clock_ns: 0 when it is
 * new (and now remembered), -EALREADY when it was accepted before, -ESTALE when it is too
 * old (below the sender's window, or signed before this receiver started or before a
 * forgotten sender's last), -ERANGE when it is more than FB_REPLAY_AHEAD_NS ahead of
 * @clock_ns. Nothing is changed unless it returns 0. */
int fb_replay_check(struct fb_replay *r, uint32_t sender, uint64_t seq, uint64_t clock_ns);

#endif
