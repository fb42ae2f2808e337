/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft host's neighbour table (see soft_arp.h). */
#include <string.h>

#include "soft_arp.h"

static uint32_t home(uint32_t ip)
{
	return (uint32_t)(((uint64_t)ip * 0x9e3779b97f4a7c15ULL) >> 32) & (SOFT_ARP_HASH - 1);
}

/* The slot of at[] that holds @ip's entry, or the empty slot that ends its probe. */
static uint32_t probe(const struct soft_arp *t, uint32_t ip)
{
	uint32_t h = home(ip);

	while (t->at[h] && t->ip[t->at[h] - 1] != ip)
		h = (h + 1) & (SOFT_ARP_HASH - 1);
	return h;
}

static int find_index(const struct soft_arp *t, uint32_t ip)
{
	uint32_t h;
	int i;

	if (!ip)
		return -1;
	h = probe(t, ip);
	i = (int)t->at[h] - 1;
	return i >= 0 && t->e[i].state != SOFT_ARP_FREE ? i : -1;
}

/* at[]'s slot @h empties: later entries of its run move back (backward-shift deletion). */
static void unindex(struct soft_arp *t, uint32_t h)
{
	for (uint32_t j = h;;) {
		uint32_t k;

		j = (j + 1) & (SOFT_ARP_HASH - 1);
		if (!t->at[j])
			break;
		k = home(t->ip[t->at[j] - 1]);
		/* the entry at j stays when its home lies cyclically in (h, j] */
		if (h <= j ? (k > h && k <= j) : (k > h || k <= j))
			continue;
		t->at[h] = t->at[j];
		h = j;
	}
	t->at[h] = 0;
}

static struct soft_arp_entry *find(struct soft_arp *t, uint32_t ip)
{
	int i = find_index(t, ip);

	return i < 0 ? NULL : &t->e[i];
}

/* Every state change goes through here, so the count of INCOMPLETE entries holds. */
static void set_state(struct soft_arp *t, struct soft_arp_entry *e, uint8_t state)
{
	t->incomplete -= e->state == SOFT_ARP_INCOMPLETE;
	t->incomplete += state == SOFT_ARP_INCOMPLETE;
	e->state = state;
	t->retry_stale = true;
}

/* @e now holds @ip, nothing else of it kept. */
static void reuse(struct soft_arp *t, struct soft_arp_entry *e, uint32_t ip)
{
	uint32_t i = (uint32_t)(e - t->e);

	set_state(t, e, SOFT_ARP_FREE);
	if (t->ip[i])
		unindex(t, probe(t, t->ip[i]));
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	t->ip[i] = ip;
	t->at[probe(t, ip)] = (uint16_t)(i + 1);
}

/* A free entry, or the least recently used one that is not being resolved. */
static struct soft_arp_entry *victim(struct soft_arp *t)
{
	struct soft_arp_entry *best = NULL;

	for (int i = 0; i < SOFT_ARP_ENTRIES; i++) {
		struct soft_arp_entry *e = &t->e[i];

		if (e->state == SOFT_ARP_FREE)
			return e;
		if (e->state != SOFT_ARP_INCOMPLETE && (!best || e->used_ns < best->used_ns))
			best = e;
	}
	return best ? best : &t->e[0];
}

const uint8_t *soft_arp_lookup(struct soft_arp *t, uint32_t ip, qp_time_ns now, bool *ask)
{
	struct soft_arp_entry *e = find(t, ip);

	*ask = false;
	if (e && e->state == SOFT_ARP_REACHABLE) {
		e->used_ns = now;
		return e->mac;
	}
	if (e && e->state == SOFT_ARP_INCOMPLETE)
		return NULL;   /* soft_arp_due repeats the request */
	if (e && now < e->next_try_ns)
		return NULL;   /* failed recently: do not flood */
	if (!e)
		reuse(t, e = victim(t), ip);
	set_state(t, e, SOFT_ARP_INCOMPLETE);
	e->tries = 1;
	e->used_ns = now;
	e->next_try_ns = now + t->retry_ns;
	t->retry_stale = true;
	*ask = true;
	return NULL;
}

bool soft_arp_learn(struct soft_arp *t, uint32_t ip, const uint8_t *mac, qp_time_ns now,
		    bool create)
{
	struct soft_arp_entry *e = find(t, ip);

	if (!e && !create)
		return false;
	if (!e)
		reuse(t, e = victim(t), ip);
	memcpy(e->mac, mac, FRAME_ETH_ALEN);
	set_state(t, e, SOFT_ARP_REACHABLE);
	e->tries = 0;
	e->used_ns = now;
	return true;
}

qp_time_ns soft_arp_deadline(struct soft_arp *t)
{
	qp_time_ns d = QP_TIME_NEVER;

	if (!t->incomplete)
		return d;
	if (!t->retry_stale)
		return t->retry_min;
	for (int i = 0; i < SOFT_ARP_ENTRIES; i++)
		if (t->e[i].state == SOFT_ARP_INCOMPLETE)
			d = qp_time_min(d, t->e[i].next_try_ns);
	t->retry_min = d;
	t->retry_stale = false;
	return d;
}

uint32_t soft_arp_due(struct soft_arp *t, qp_time_ns now, uint32_t *failed)
{
	*failed = 0;
	if (!t->incomplete)
		return 0;
	for (int i = 0; i < SOFT_ARP_ENTRIES; i++) {
		struct soft_arp_entry *e = &t->e[i];

		if (e->state != SOFT_ARP_INCOMPLETE || e->next_try_ns > now)
			continue;
		e->next_try_ns = now + t->retry_ns;
		t->retry_stale = true;
		if (e->tries >= SOFT_ARP_TRIES) {
			set_state(t, e, SOFT_ARP_FAILED);
			*failed = e->ip;
			return 0;
		}
		e->tries++;
		return e->ip;
	}
	return 0;
}

enum soft_arp_state soft_arp_state(const struct soft_arp *t, uint32_t ip)
{
	int i = find_index(t, ip);

	return i < 0 ? SOFT_ARP_FREE : (enum soft_arp_state)t->e[i].state;
}
