/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* MAC and IPv4 tables (see fwd.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"

#define PROBE 8

static uint32_t mac_hash(const uint8_t *m)
{
	uint64_t v = 0;
	memcpy(&v, m, 6);
	v *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(v >> 40);
}

static uint32_t ip_hash(uint32_t ip)
{
	return (uint32_t)(((uint64_t)ip * 0x9e3779b97f4a7c15ULL) >> 40);
}

int sw_fwd_init(struct sw_fwd *f, uint32_t slots, const uint16_t *route, uint32_t first_ip,
		uint32_t nroutes)
{
	memset(f, 0, sizeof(*f));
	f->mask = slots - 1;
	f->route = route;
	f->first_ip = first_ip;
	f->nroutes = route ? nroutes : 0;
	f->mac = calloc(slots, sizeof(*f->mac));
	f->ip = calloc(slots, sizeof(*f->ip));
	return f->mac && f->ip ? 0 : -ENOMEM;
}

void sw_fwd_free(struct sw_fwd *f)
{
	free(f->mac);
	free(f->ip);
	f->mac = NULL;
	f->ip = NULL;
}

/* A routed host's index, or f->nroutes when @ip is none. */
static inline uint32_t routed_ip(const struct sw_fwd *f, uint32_t ip)
{
	uint32_t h = ip - f->first_ip;

	return h < f->nroutes ? h : f->nroutes;
}

/* A routed host's index from its MAC (the soft backend's: 02:00 and the address), or
 * f->nroutes. */
static inline uint32_t routed_mac(const struct sw_fwd *f, const uint8_t *m)
{
	if (!f->nroutes || m[0] != 0x02 || m[1] != 0x00)
		return f->nroutes;
	return routed_ip(f, (uint32_t)m[2] << 24 | (uint32_t)m[3] << 16 | (uint32_t)m[4] << 8 |
			    m[5]);
}

static struct sw_mac_entry *mac_slot(struct sw_fwd *f, const uint8_t *mac, bool add)
{
	uint32_t h = mac_hash(mac);
	struct sw_mac_entry *victim = NULL;

	for (uint32_t i = 0; i < PROBE; i++) {
		struct sw_mac_entry *e = &f->mac[(h + i) & f->mask];
		if (e->used && !memcmp(e->mac, mac, 6))
			return e;
		if (!add || e->is_static)
			continue;
		if (!e->used)
			add = false, victim = e;   /* the first free slot wins */
		else if (!victim || (victim->used && e->seen_ns < victim->seen_ns))
			victim = e;
	}
	return victim;
}

int sw_fwd_static(struct sw_fwd *f, const uint8_t mac[6], int port)
{
	struct sw_mac_entry *e = mac_slot(f, mac, true);

	if (!e)
		return -ENOSPC;
	memcpy(e->mac, mac, 6);
	e->used = true;
	e->is_static = true;
	e->port = (int16_t)port;
	return 0;
}

void sw_fwd_learn(struct sw_fwd *f, const uint8_t mac[6], int port, qp_time_ns now)
{
	struct sw_mac_entry *e;

	if ((mac[0] & 1) || routed_mac(f, mac) < f->nroutes)
		return;
	e = mac_slot(f, mac, true);
	if (!e || e->is_static)
		return;
	if (e->used && !memcmp(e->mac, mac, 6)) {
		if (e->port != port)
			f->moves++;
	}
	memcpy(e->mac, mac, 6);
	e->used = true;
	e->port = (int16_t)port;
	e->seen_ns = now;
}

int sw_fwd_lookup(const struct sw_fwd *f, const uint8_t mac[6])
{
	uint32_t h = routed_mac(f, mac);

	if (h < f->nroutes)
		return f->route[h] == UINT16_MAX ? SW_FWD_NONE : f->route[h];
	h = mac_hash(mac);

	for (uint32_t i = 0; i < PROBE; i++) {
		const struct sw_mac_entry *e = &f->mac[(h + i) & f->mask];
		if (e->used && !memcmp(e->mac, mac, 6))
			return e->port;
	}
	return SW_FWD_NONE;
}

void sw_fwd_learn_ip(struct sw_fwd *f, uint32_t ip, const uint8_t mac[6], int port,
		     qp_time_ns now)
{
	uint32_t h = ip_hash(ip);
	struct sw_ip_entry *victim = NULL;

	if (!ip || (mac[0] & 1) || routed_ip(f, ip) < f->nroutes)
		return;
	for (uint32_t i = 0; i < PROBE; i++) {
		struct sw_ip_entry *e = &f->ip[(h + i) & f->mask];
		if ((e->used && e->ip == ip) || !e->used) {
			victim = e;
			break;
		}
		if (!victim || e->seen_ns < victim->seen_ns)
			victim = e;
	}
	victim->ip = ip;
	victim->used = true;
	memcpy(victim->mac, mac, 6);
	victim->port = (int16_t)port;
	victim->seen_ns = now;
}

const struct sw_ip_entry *sw_fwd_lookup_ip(const struct sw_fwd *f, uint32_t ip)
{
	uint32_t h = ip_hash(ip);

	if (routed_ip(f, ip) < f->nroutes)
		return NULL;   /* a host: its MAC is its address's (the caller's) */
	for (uint32_t i = 0; i < PROBE; i++) {
		const struct sw_ip_entry *e = &f->ip[(h + i) & f->mask];
		if (e->used && e->ip == ip)
			return e;
	}
	return NULL;
}

uint32_t sw_fwd_ip_of_mac(struct sw_fwd *f, const uint8_t mac[6])
{
	struct sw_mac_entry *m = mac_slot(f, mac, false);
	const struct sw_ip_entry *e = m && m->ip ? sw_fwd_lookup_ip(f, m->ip) : NULL;

	if (e && !memcmp(e->mac, mac, 6))
		return e->ip;
	for (uint32_t i = 0; i < SW_FWD_SLOTS; i++) {   /* rare: a host's first IPv6 report */
		e = &f->ip[i];
		if (e->used && !memcmp(e->mac, mac, 6)) {
			if (m)
				m->ip = e->ip;
			return e->ip;
		}
	}
	return 0;
}

static struct sw_qp_entry *qp_slot(const struct sw_fwd *f, uint32_t req, uint32_t resp)
{
	uint32_t h = ip_hash(req ^ (resp * 0x9e3779b9u)) % SW_QP_SLOTS;
	return (struct sw_qp_entry *)&f->qp[h];
}

void sw_fwd_learn_qp(struct sw_fwd *f, uint32_t requester_ip, uint32_t responder_ip,
		     uint32_t qp)
{
	struct sw_qp_entry *e = qp_slot(f, requester_ip, responder_ip);

	*e = (struct sw_qp_entry){ requester_ip, responder_ip, qp, true };
}

const struct sw_qp_entry *sw_fwd_lookup_qp(const struct sw_fwd *f, uint32_t requester_ip,
					   uint32_t responder_ip)
{
	const struct sw_qp_entry *e = qp_slot(f, requester_ip, responder_ip);

	return e->used && e->requester_ip == requester_ip && e->responder_ip == responder_ip ?
	       e : NULL;
}
