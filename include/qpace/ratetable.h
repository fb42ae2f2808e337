/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The per-host rate table: how the agent (qpaced) tells every local QP its rate and credits.
 *
 * A shared-memory segment — POSIX shm ("/qpace-rates") or, for tests, a plain file — of a
 * fixed header and a fixed array of 64-byte slots, one per registered QP:
 *
 *   header  magic "QPRT", version, header and slot sizes, slot count, a random epoch,
 *           the agent's heartbeat (CLOCK_MONOTONIC ns, stamped every few ms), its pid and
 *           its fallback policy for the gates (hold time, safe fraction; 0 = the gate's own)
 *   slot    QPN, rate (bits/s), in-flight cap (bytes; 0 = none), cumulative credit bytes
 *           granted, flags, the slot's generation, last update time; guarded by a per-slot
 *           sequence counter
 *
 * The in-flight cap (a window algorithm's W, e.g. HPCC's) sits in bytes that version 1
 * reserved as zero, so a table written without it reads as "no cap" and the version is
 * unchanged. The fallback policy likewise sits in header bytes version 1 reserved as zero
 * (zero = "no policy": each gate uses its own defaults).
 *
 * One writer (the agent; single-threaded) and any number of readers (the pacing gate in
 * each application), lock-free. A slot is a seqlock: the writer makes seq odd, writes the
 * fields, makes it even again; a reader reads seq, the fields, seq, and retries when the two
 * differ or are odd. Readers retry a bounded number of times (QP_RATETABLE_READ_TRIES) and
 * then report -EAGAIN, so a writer that died mid-update cannot stall a reader; the gate
 * then falls back to its safe rate. All fields are C11 atomics (relaxed inside the seqlock,
 * acquire/release on seq and the heartbeat): no torn 64-bit values, no data races.
 *
 * Credits are cumulative: the agent adds each grant to credit_bytes, and the gate compares
 * it with what it has spent since the slot's generation changed. So no one ever does a
 * read-modify-write across processes.
 *
 * Readers map the segment read-only and validate it once: the magic, the version, header and
 * slot sizes equal to this build's, a slot count within QP_RATETABLE_MAX_SLOTS and within the
 * bytes actually mapped. Afterwards they use their own copy of the slot count, never the
 * segment's. The writer never shrinks a segment that may be mapped (that would SIGBUS
 * readers): re-creating replaces it under the same name (shm_unlink or rename), readers keep
 * the old one, see its heartbeat go stale and reopen.
 */
#ifndef QPACE_RATETABLE_H
#define QPACE_RATETABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"
#include "qpace/time.h"

#define QP_RATETABLE_MAGIC 0x51505254u  /* "QPRT" */
#define QP_RATETABLE_VERSION 1u
#define QP_RATETABLE_DEFAULT "/qpace-rates"
#define QP_RATETABLE_DEF_SLOTS 1024u
#define QP_RATETABLE_MAX_SLOTS 65536u   /* 4 MiB of slots at most */
#define QP_RATETABLE_READ_TRIES 64u
#define QP_RATE_QPN_FREE 0xffffffffu
#define QP_RATE_QPN_MAX 0xffffffu       /* QPNs are 24 bits */
#define QP_RATETABLE_FB_MAX_HOLD_MS 60000u
#define QP_RATETABLE_FB_MAX_PERMILLE 1000u

/* Slot flags. */
enum qp_rate_flags {
	QP_RATE_F_CREDITS = 1u << 0,    /* the receiver paces: every chunk spends credits */
};

struct qp_rate_hdr {
	_Atomic uint32_t magic;         /* written last at creation (release) */
	uint16_t version;
	uint16_t hdr_bytes;             /* sizeof(struct qp_rate_hdr) */
	uint32_t slot_bytes;            /* sizeof(struct qp_rate_slot) */
	uint32_t nslots;
	uint64_t epoch;                 /* random, per creation */
	_Atomic uint64_t heartbeat_ns;  /* the writer's CLOCK_MONOTONIC; 0 = none yet */
	_Atomic uint32_t writer_pid;
	_Atomic uint32_t fb_hold_ms;    /* gates hold the last rate this long; 0 = their own */
	_Atomic uint32_t fb_safe_permille; /* then this share of the line rate; 0 = their own */
	uint32_t reserved[5];
};

struct qp_rate_slot {
	_Atomic uint32_t seq;           /* odd while the writer writes */
	_Atomic uint32_t qpn;           /* QP_RATE_QPN_FREE when unused */
	_Atomic uint64_t rate_bps;      /* 0 = no rate yet (the gate uses its fallback) */
	_Atomic uint64_t credit_bytes;  /* cumulative credits granted in this generation */
	_Atomic uint64_t updated_ns;
	_Atomic uint32_t flags;         /* enum qp_rate_flags */
	_Atomic uint32_t gen;           /* bumped each time the slot is given to a QP */
	_Atomic uint64_t cap_bytes;     /* bytes in flight at most (send while in flight +
					 * packet <= cap); 0 = no cap */
	uint8_t reserved[16];
};

_Static_assert(sizeof(struct qp_rate_hdr) == 64, "rate table header is 64 bytes");
_Static_assert(sizeof(struct qp_rate_slot) == 64, "rate table slot is 64 bytes");

/* A consistent copy of one slot. */
struct qp_rate_entry {
	uint32_t qpn;
	uint32_t flags;
	uint32_t gen;
	qp_rate_bps rate_bps;
	uint64_t cap_bytes;             /* 0 = no in-flight cap */
	uint64_t credit_bytes;
	qp_time_ns updated_ns;
	uint32_t seq;                   /* the slot's sequence when it was read: while
					 * qp_ratetable_seq() returns the same, nothing changed */
};

struct qp_ratetable;  /* a mapping: opaque */

/* ---- both sides ---- */

/* Bytes a table of nslots occupies. */
size_t qp_ratetable_bytes(uint32_t nslots);
/* Check a mapped segment of @mapped bytes; on success *nslots is the slot count to use.
 * -EBADMSG / -EPROTO with one line naming what is wrong and the accepted value. */
int qp_ratetable_validate(const void *map, size_t mapped, uint32_t *nslots,
			  char *err, size_t errlen);
void qp_ratetable_close(struct qp_ratetable *t);
uint32_t qp_ratetable_nslots(const struct qp_ratetable *t);
/* The name it was opened with ("" for an in-memory table). */
const char *qp_ratetable_name(const struct qp_ratetable *t);

/* ---- writer (the agent) ---- */

/* Create (replacing any old one) at @where: "/name" = POSIX shm, any other path = file,
 * NULL = QP_RATETABLE_DEFAULT. nslots 1..QP_RATETABLE_MAX_SLOTS (0 = default). */
int qp_ratetable_create(const char *where, uint32_t nslots, struct qp_ratetable **out,
			char *err, size_t errlen);
/* A table in this process only (the embedded agent of emulated hosts). */
int qp_ratetable_create_mem(uint32_t nslots, struct qp_ratetable **out, char *err,
			    size_t errlen);
/* Remove the name (shm_unlink or unlink); mappings stay valid. */
int qp_ratetable_unlink(const char *where);
/* Give a free slot to @qpn (or return its existing one); the slot's generation is bumped,
 * rate 0, credits 0. Returns the slot index, or -ENOSPC / -EINVAL. */
int qp_ratetable_assign(struct qp_ratetable *t, uint32_t qpn);
/* Free a slot. */
int qp_ratetable_release(struct qp_ratetable *t, uint32_t slot);
/* Publish a rate (bits/s), an in-flight cap (bytes, 0 = none) and flags for a slot, in one
 * consistent update. */
int qp_ratetable_set(struct qp_ratetable *t, uint32_t slot, qp_rate_bps rate_bps,
		     uint64_t cap_bytes, uint32_t flags, qp_time_ns now);
/* Add a credit grant (bytes) to a slot's cumulative counter. */
int qp_ratetable_grant(struct qp_ratetable *t, uint32_t slot, uint64_t bytes, qp_time_ns now);
/* Stamp the heartbeat. */
void qp_ratetable_heartbeat(struct qp_ratetable *t, qp_time_ns now);
/* Publish the fallback policy the gates follow when this agent is lost (qpace/gate.h):
 * hold the last rate @hold_ns (whole ms, QP_RATETABLE_FB_MAX_HOLD_MS at most), then pace at
 * @safe_permille / 1000 of the QP's line rate (1..1000). 0 for either = the gate's own.
 * -EINVAL out of range. */
int qp_ratetable_set_fallback(struct qp_ratetable *t, qp_time_ns hold_ns,
			      uint32_t safe_permille);

/* ---- readers (the gate) ---- */

/* Map @where read-only and validate it. -ENOENT when absent (no agent), -EBADMSG/-EPROTO
 * when malformed, each with one line in err. */
int qp_ratetable_open(const char *where, struct qp_ratetable **out, char *err,
		      size_t errlen);
/* The agent's last heartbeat (0 = none). */
qp_time_ns qp_ratetable_heartbeat_ns(const struct qp_ratetable *t);
/* The agent's fallback policy (0 = none published), as set by qp_ratetable_set_fallback. */
void qp_ratetable_fallback(const struct qp_ratetable *t, qp_time_ns *hold_ns,
			   uint32_t *safe_permille);
/* The table's creation epoch. */
uint64_t qp_ratetable_epoch(const struct qp_ratetable *t);
/* Consistent copy of slot @slot: 0, -EINVAL (index out of range), or -EAGAIN (the writer
 * kept it busy for QP_RATETABLE_READ_TRIES attempts). */
int qp_ratetable_read(const struct qp_ratetable *t, uint32_t slot, struct qp_rate_entry *out);
/* Slot @slot's sequence now (acquire); odd while the writer writes. Every write moves it,
 * so an even value equal to a copy's seq means the slot still holds that copy. Out of
 * range: an odd value, which no copy has. */
uint32_t qp_ratetable_seq(const struct qp_ratetable *t, uint32_t slot);
/* Find @qpn's slot, trying *hint first and updating it. 0, -ENOENT or -EAGAIN. */
int qp_ratetable_lookup(const struct qp_ratetable *t, uint32_t qpn, uint32_t *hint,
			struct qp_rate_entry *out);

#endif
