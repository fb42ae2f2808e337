/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A shared-memory port between a soft host and qpace-switch on one machine: one region,
 * two single-producer single-consumer rings of frame slots (to the switch, from the
 * switch), lock-free with C11 atomics. It replaces the UDP datagram per frame of a udp
 * port (a loopback sendmmsg also runs the receiver's softirq: 71% of the real-time
 * incast's samples were the kernel's) with one copy into a slot and one out of it.
 *
 * The region. The switch makes it: a memfd sealed against shrinking and growing (so the
 * other side cannot truncate it under our mapping: a SIGBUS, not a counter), published
 * as a symbolic link PATH -> /proc/PID/fd/N that the host opens (the link is removed at
 * close). The host takes only a sealed region whose header is this version's. Layout,
 * native byte order (one machine):
 *
 *   0       header: magic "QPSR", version, slots per ring, slot bytes, region bytes,
 *           the offering port's address (or 0), attaches and detaches (counts a host
 *           adds 1 to at attach and at close)
 *   64      ring 0 control (to the switch): head, tail, waiting, each on its own cache line
 *   256     ring 1 control (from the switch)
 *   4096    ring 0's slots, then ring 1's; a slot: len (u32), 0 (u32), ts_ns (u64), frame
 *
 * A ring. The producer copies a frame into slot head & mask and, once per batch, stores
 * head + n with release order; the consumer loads head with acquire order, copies each
 * frame out, and stores tail with release order once per batch (the producer reuses a
 * slot only after it loads that tail, with acquire order). Head and tail run free (32
 * bits, wrapping); each side keeps its own copy of its index and of the geometry, and
 * reads the other's index as untrusted input.
 *
 * Wake-ups without a system call per frame (an eventcount): a consumer about to block
 * stores waiting = 1, fences (seq_cst) and looks at head again, and blocks only if the
 * ring is still empty; a producer, after publishing, fences (seq_cst) and, if waiting is
 * set, clears it and rings the doorbell once. The two fences make at least one side see
 * the other's store: either the consumer sees the new head and stays up, or the producer
 * sees the flag and wakes it. The doorbell is the caller's (the port's UDP socket: see
 * switchsim/io_shm.c); this file only says when to ring it.
 *
 * Untrusted: the peer can write anything anywhere in the region at any time. A head that
 * claims more than a ring's slots is counted (bad_index) and the consumer resyncs to it,
 * dropping what it claimed; a tail beyond what was produced is counted and the ring
 * treated as full; a slot length under an Ethernet header or over a slot is counted
 * (bad_len) and the slot skipped. Frames are copied out of the region before anything
 * parses them, so a peer that rewrites a slot meanwhile changes only bytes that are
 * checked like any datagram's. */
#ifndef QPACE_SHM_RING_H
#define QPACE_SHM_RING_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

#define SHM_RING_MAGIC 0x52535051u    /* "QPSR" */
#define SHM_RING_VERSION 2u
#define SHM_SLOT_BYTES 4416u          /* 16-byte slot header + a 4352-byte frame, to 64 */
#define SHM_SLOT_HDR 16u
#define SHM_FRAME_MAX (SHM_SLOT_BYTES - SHM_SLOT_HDR)
#define SHM_FRAME_MIN 14u             /* an Ethernet header */
#define SHM_SLOTS_DEFAULT 512u        /* per ring: 2.2 MB each way */
#define SHM_SLOTS_MAX 65536u
#define SHM_PATH_MAX 96

enum shm_ring_dir { SHM_TO_SWITCH = 0, SHM_FROM_SWITCH = 1 };

struct shm_ring_stats {
	uint64_t frames;      /* produced, or consumed intact */
	uint64_t batches;     /* publishes (head or tail stores) */
	uint64_t full;        /* producer: no free slot for a frame */
	uint64_t bad_len;     /* consumer: slots skipped for their length */
	uint64_t bad_index;   /* the peer's index out of range (resynced, or taken as full) */
	uint64_t doorbells;   /* producer: publishes that found the consumer waiting */
	uint64_t arms;        /* consumer: times it armed before blocking */
};

struct shm_ctl;

/* One side's view of one ring. */
struct shm_ring {
	struct shm_ctl *ctl;      /* shared */
	uint8_t *slots;           /* shared */
	uint32_t nslots, mask;    /* private copies of the geometry */
	uint32_t pos;             /* producer: the next head; consumer: the next tail */
	uint32_t published;       /* the last index stored in the region */
	uint32_t seen;            /* producer: the tail last loaded; consumer: the head */
	bool producer;
	struct shm_ring_stats st;
};

struct shm_region {
	int fd;
	void *map;
	size_t bytes;
	struct shm_ring tx, rx;   /* this side's */
	char link[SHM_PATH_MAX];  /* creator: the link it made ("" when none) */
	bool attached;            /* host: counted in the header's attaches (close counts the
				   * detach) */
};

/* The region's size for @nslots per ring. */
size_t shm_region_bytes(uint32_t nslots);
/* Switch side: a sealed memfd for @nslots (a power of two, 2..SHM_SLOTS_MAX) per ring,
 * published at @path (a symbolic link; a stale link there is replaced, anything else is
 * an error). 0 or -errno with a message naming @path. */
int shm_region_create(struct shm_region *r, const char *path, uint32_t nslots, char *err,
		      size_t errlen);
/* Host side: open @path, check the seals and the header, map it. */
int shm_region_attach(struct shm_region *r, const char *path, char *err, size_t errlen);
/* Offered rings: a switch's udp port that a soft host on this machine may take instead of
 * a datagram per frame, found from the port's address alone (the host's attach=), at
 * $QPACE_SHM_DIR (default /dev/shm)/qpace-sw-NETNS-A.B.C.D-PORT (NETNS: the network
 * namespace's inode, as addresses are per namespace). 0, or -ENAMETOOLONG. */
int shm_offer_path(const struct sockaddr_in *a, char *buf, size_t len);
/* Switch side, after create: the region is offered for port address @a. */
void shm_region_offer(struct shm_region *r, const struct sockaddr_in *a);
/* Host side: the region offered for @a, taken only when its link and memfd are this
 * user's or root's and its header names @a. -ENOENT (no message) when none is offered;
 * another -errno, with a message, when one is there but not taken. */
int shm_region_attach_offer(struct shm_region *r, const struct sockaddr_in *a, char *err,
			    size_t errlen);
/* Switch side: how many times a host attached so far (it changes when one comes), and
 * how many of those are attached still (a host that closed is not; one killed is). */
uint32_t shm_region_attaches(const struct shm_region *r);
uint32_t shm_region_attached(const struct shm_region *r);
/* Unmap, close; the creator removes its link. A zeroed region is a no-op. */
void shm_region_close(struct shm_region *r);
/* For tests: the rings over memory the caller owns (shm_region_bytes(@nslots), zeroed,
 * 64-byte aligned), as @creator (the switch) or not. */
void shm_region_over(struct shm_region *r, void *mem, uint32_t nslots, bool creator);

/* ---- producer ---- */
/* The next free slot's frame bytes (SHM_FRAME_MAX of room), or NULL when the ring is
 * full (or its tail is corrupt: counted). Nothing is visible until shm_ring_commit and
 * shm_ring_publish. */
uint8_t *shm_ring_slot(struct shm_ring *r);
/* The frame written into shm_ring_slot's bytes is @len long (<= SHM_FRAME_MAX), sent at
 * @ts_ns. */
void shm_ring_commit(struct shm_ring *r, uint32_t len, qp_time_ns ts_ns);
/* Copy @len bytes in: 0, -ENOBUFS when full, -EMSGSIZE when too long. */
int shm_ring_push(struct shm_ring *r, const void *frame, size_t len, qp_time_ns ts_ns);
/* Make the committed frames visible; true when the consumer was waiting and must be
 * woken (the flag is cleared: one doorbell). */
bool shm_ring_publish(struct shm_ring *r);

/* ---- consumer ---- */
/* The next frame copied into @buf (room @cap): its length; 0 when the ring is empty;
 * -EMSGSIZE for a slot skipped for its length, -EPROTO for a head out of range (resynced;
 * what it claimed is dropped). *@ts_ns: the producer's time stamp (untrusted). */
int shm_ring_pop(struct shm_ring *r, void *buf, size_t cap, qp_time_ns *ts_ns);
/* Give the slots popped so far back to the producer (one store). */
void shm_ring_release(struct shm_ring *r);
/* Does the ring hold frames not yet popped (one load)? Also true for a corrupt head, so
 * that the next pop counts and resyncs it. */
bool shm_ring_pending(const struct shm_ring *r);
/* About to block: set the waiting flag and look again. True: the ring is empty, block
 * (the producer will ring); false: frames came meanwhile, do not. */
bool shm_ring_arm(struct shm_ring *r);
/* Awake again: clear the flag; whether it was set. */
bool shm_ring_disarm(struct shm_ring *r);

#endif
