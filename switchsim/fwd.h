/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forwarding state of one switch: destination MAC -> port (static entries and learning),
 * and IPv4 -> (MAC, port) learned from IPv4 sources and ARP, for addressing telemetry.
 * Fixed-size tables (SW_FWD_SLOTS, or as sw_fwd_init is told; probe window of 8); a
 * learned entry moves when its address shows up on another port; when a window is full
 * the entry seen longest ago gives way. Static entries never move or age.
 * With computed routes (conf.h, a routes line) a host's MAC and address are looked up in
 * the switch's row of the route table, before the tables and without a hash, and are
 * never learned: the tables then hold what is not a host (the switches' own). */
#ifndef SW_FWD_H
#define SW_FWD_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/time.h"

#define SW_FWD_SLOTS 4096
#define SW_FWD_NONE (-1)

struct sw_mac_entry {
	uint8_t mac[6];
	bool used;
	bool is_static;
	int16_t port;
	uint32_t ip;         /* sw_fwd_ip_of_mac's last answer (checked before use) */
	qp_time_ns seen_ns;
};

struct sw_ip_entry {
	uint32_t ip;
	bool used;
	uint8_t mac[6];
	int16_t port;
	qp_time_ns seen_ns;
};

/* The requester's QP of a RoCEv2 connection, from the responder's ACKs and read
 * responses (their BTH destination QP), keyed by (requester IP, responder IP). */
struct sw_qp_entry {
	uint32_t requester_ip, responder_ip;
	uint32_t qp;
	bool used;
};
#define SW_QP_SLOTS 256

struct sw_fwd {
	struct sw_mac_entry *mac;     /* [mask + 1] */
	struct sw_ip_entry *ip;       /* [mask + 1] */
	uint32_t mask;
	const uint16_t *route;        /* this switch's row of the route table, or NULL */
	uint32_t first_ip, nroutes;   /* the hosts it covers */
	struct sw_qp_entry qp[SW_QP_SLOTS];
	uint64_t moves;      /* learned MAC seen on another port */
};

/* Tables of @slots entries (a power of two, at most SW_FWD_SLOTS), and @route (NULL: none)
 * for the @nroutes hosts from @first_ip: 0 or -ENOMEM. */
int sw_fwd_init(struct sw_fwd *f, uint32_t slots, const uint16_t *route, uint32_t first_ip,
		uint32_t nroutes);
void sw_fwd_free(struct sw_fwd *f);
int sw_fwd_static(struct sw_fwd *f, const uint8_t mac[6], int port);
void sw_fwd_learn(struct sw_fwd *f, const uint8_t mac[6], int port, qp_time_ns now);
void sw_fwd_learn_ip(struct sw_fwd *f, uint32_t ip, const uint8_t mac[6], int port,
		     qp_time_ns now);
/* Port for a unicast MAC, SW_FWD_NONE when unknown (flood). */
int sw_fwd_lookup(const struct sw_fwd *f, const uint8_t mac[6]);
const struct sw_ip_entry *sw_fwd_lookup_ip(const struct sw_fwd *f, uint32_t ip);
/* The IPv4 address learned for the host at @mac (what its IPv6 flows' telemetry goes to),
 * 0 when none: found in the IPv4 table and kept in the MAC's entry while it holds. */
uint32_t sw_fwd_ip_of_mac(struct sw_fwd *f, const uint8_t mac[6]);
/* Last writer wins: one QP per host pair is all a CNP needs to find. */
void sw_fwd_learn_qp(struct sw_fwd *f, uint32_t requester_ip, uint32_t responder_ip,
		     uint32_t qp);
const struct sw_qp_entry *sw_fwd_lookup_qp(const struct sw_fwd *f, uint32_t requester_ip,
					   uint32_t responder_ip);

#endif
