/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft host's neighbour table (IPv4 -> MAC): bounded, least recently used entry
 * replaced, requests repeated every retry_ns SOFT_ARP_TRIES times, then failed until the
 * address is wanted again. Pure: time passed in. */
#ifndef QPACE_SOFT_ARP_H
#define QPACE_SOFT_ARP_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/soft_host.h"

enum soft_arp_state { SOFT_ARP_FREE = 0, SOFT_ARP_INCOMPLETE, SOFT_ARP_REACHABLE,
		      SOFT_ARP_FAILED };

struct soft_arp_entry {
	uint32_t ip;
	uint8_t mac[FRAME_ETH_ALEN];
	uint8_t state;           /* enum soft_arp_state */
	uint8_t tries;           /* requests sent in this round */
	qp_time_ns next_try_ns;  /* INCOMPLETE: when to ask again; FAILED: when to allow */
	qp_time_ns used_ns;      /* for replacement */
};

/* ip[i] mirrors e[i].ip (0 while free); at[] finds an address's entry by hash (an
 * address is written only where a lookup found none, so a non-zero one is in one entry at
 * most): a lookup is a short probe, not a scan of the entries, which grew with the peers
 * a host had ever had; incomplete counts INCOMPLETE entries, so the deadline of a table with none is found at once, and
 * the earliest retry is kept until an entry's state or retry time changes (all are asked
 * for on every frame and wake-up of a host with many peers). */
#define SOFT_ARP_HASH (2 * SOFT_ARP_ENTRIES)   /* a power of two */
struct soft_arp {
	uint32_t ip[SOFT_ARP_ENTRIES];
	uint16_t at[SOFT_ARP_HASH];  /* ip -> entry + 1 (0 empty): linear probing */
	struct soft_arp_entry e[SOFT_ARP_ENTRIES];
	uint32_t incomplete;
	bool retry_stale;        /* retry_min needs a scan */
	qp_time_ns retry_min;
	qp_time_ns retry_ns;
};

/* The MAC of @ip, or NULL. When NULL and a request should go out now, *ask is set. */
const uint8_t *soft_arp_lookup(struct soft_arp *t, uint32_t ip, qp_time_ns now, bool *ask);
/* Record ip -> mac. With @create false only an existing entry is updated (RFC 826's
 * merge for ARP not addressed to us). Returns true when an entry was written. */
bool soft_arp_learn(struct soft_arp *t, uint32_t ip, const uint8_t *mac, qp_time_ns now,
		    bool create);
/* Earliest retry of an incomplete entry. */
qp_time_ns soft_arp_deadline(struct soft_arp *t);
/* The next address due a repeated request at @now (0 when none); entries out of tries
 * become FAILED and are reported through *failed (0 when none). */
uint32_t soft_arp_due(struct soft_arp *t, qp_time_ns now, uint32_t *failed);
/* The entry of @ip is usable (REACHABLE) or failed, for the pending queue. */
enum soft_arp_state soft_arp_state(const struct soft_arp *t, uint32_t ip);

#endif
