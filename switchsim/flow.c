/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Bounded per-flow table (see flow.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

static uint32_t flow_hash(const struct sw_flow_key *k)
{
	uint64_t h = ((uint64_t)k->src_ip << 32 | k->dst_ip) * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)k->sport << 32 | k->qp) + (h >> 29);
	h *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(h ^ (h >> 32));
}

/* The notices' count is of RoCEv2 data flows: the other UDP "flows" (telemetry, credits,
 * INT wishes, a last window's announcement) share no bandwidth worth a share of it. */
static bool counted(const struct sw_flow *f)
{
	return !(f->key.qp & SW_FLOW_KEY_UDP) && !f->ending;
}

int sw_flowtab_init(struct sw_flowtab *t, uint32_t slots)
{
	if (slots < SW_FLOW_PROBE || (slots & (slots - 1)))
		return -EINVAL;
	t->slots = NULL;             /* at the first flow: many queues never see one */
	t->mask = slots - 1;
	t->active = t->live = 0;
	t->idle_ns = t->sweep_ns = 0;
	return 0;
}

void sw_flowtab_free(struct sw_flowtab *t)
{
	free(t->slots);
	t->slots = NULL;
}

static uint32_t find_hashed(const struct sw_flowtab *t, const struct sw_flow_key *k,
			    uint32_t h)
{
	if (!t->slots)
		return SW_FLOW_NONE;
	for (uint32_t i = 0; i < SW_FLOW_PROBE; i++) {
		uint32_t s = (h + i) & t->mask;

		if (!t->slots[s].used)
			break;   /* never used: the key is not further on (flow.h) */
		if (sw_flow_key_eq(&t->slots[s].key, k))
			return s;
	}
	return SW_FLOW_NONE;
}

uint32_t sw_flowtab_find(const struct sw_flowtab *t, const struct sw_flow_key *k)
{
	return find_hashed(t, k, flow_hash(k));
}

uint32_t sw_flowtab_get(struct sw_flowtab *t, const struct sw_flow_key *k, qp_time_ns now)
{
	uint32_t h = flow_hash(k), victim = SW_FLOW_NONE, s = find_hashed(t, k, h);
	struct sw_flow *f;

	if (!t->slots && !(t->slots = calloc((size_t)t->mask + 1, sizeof(*t->slots))))
		return SW_FLOW_NONE;   /* out of memory: not tracked (counted by the caller) */
	if (s != SW_FLOW_NONE) {
		f = &t->slots[s];
		f->last_ns = now;
		if (!f->live && counted(f)) {
			f->live = true;
			t->live++;
		}
		return s;
	}
	/* A free slot first, else the idle flow (no queued bytes) seen longest ago. */
	for (uint32_t i = 0; i < SW_FLOW_PROBE; i++) {
		s = (h + i) & t->mask;
		f = &t->slots[s];
		if (!f->used) {
			victim = s;
			break;
		}
		if (!f->bytes && (victim == SW_FLOW_NONE || f->last_ns < t->slots[victim].last_ns))
			victim = s;
	}
	if (victim == SW_FLOW_NONE)
		return SW_FLOW_NONE;
	f = &t->slots[victim];
	if (f->live)
		t->live--;
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->used = true;
	f->live = counted(f);
	t->live += f->live;
	f->level_acked = true;
	f->last_ns = now;
	f->notice_ns = QP_TIME_NEVER;
	f->int_ns = QP_TIME_NEVER;
	return victim;
}

void sw_flowtab_add(struct sw_flowtab *t, uint32_t i, uint64_t bytes)
{
	if (i == SW_FLOW_NONE)
		return;
	if (!t->slots[i].bytes && bytes && counted(&t->slots[i]))
		t->active++;
	t->slots[i].bytes += bytes;
}

void sw_flowtab_sub(struct sw_flowtab *t, uint32_t i, uint64_t bytes)
{
	struct sw_flow *f;

	if (i == SW_FLOW_NONE)
		return;
	f = &t->slots[i];
	if (!f->bytes)
		return;
	f->bytes = f->bytes > bytes ? f->bytes - bytes : 0;
	if (!f->bytes && counted(f))
		t->active--;
}

void sw_flowtab_ending(struct sw_flowtab *t, uint32_t i, bool on)
{
	struct sw_flow *f;

	if (i == SW_FLOW_NONE || t->slots[i].ending == on ||
	    (t->slots[i].key.qp & SW_FLOW_KEY_UDP))
		return;
	f = &t->slots[i];
	f->ending = on;
	if (f->bytes) {
		if (on)
			t->active--;
		else
			t->active++;
	}
	if (on && f->live) {
		f->live = false;
		t->live--;
	}
}

uint32_t sw_flowtab_count(struct sw_flowtab *t, qp_time_ns now)
{
	if (!t->idle_ns)
		return t->active;
	if (now >= t->sweep_ns) {
		for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
			struct sw_flow *f = &t->slots[i];
			if (f->live && !f->bytes && f->last_ns + t->idle_ns <= now) {
				f->live = false;
				t->live--;
			}
		}
		t->sweep_ns = now + (t->idle_ns / 4 ? t->idle_ns / 4 : 1);
	}
	return t->live;
}
