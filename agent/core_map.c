/* The agent core's indexes (QPN -> QP, flow key -> QP) and its timer heap.
 *
 * Both indexes are open-addressing tables with linear probing and backward-shift deletion,
 * sized at create to a power of two of at least twice max_qps, so a lookup on the feedback
 * path is a hash and a short probe with no allocation. An entry holds a QP index + 1; keys
 * are read from the QP itself. The heap orders QPs with a pending deadline (controller
 * timer or credit expiry) by time; each QP knows its position, so an update is O(log n).
 */
#include <errno.h>
#include <stdlib.h>

#include "core_priv.h"

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser: every input bit affects every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_qpn(uint32_t qpn)
{
	return mix64(qpn);
}

static uint64_t hash_flow(uint32_t local_ip, uint32_t peer_ip, uint32_t peer_qpn)
{
	return mix64(((uint64_t)local_ip << 32 | peer_ip) ^ mix64(peer_qpn ^ 0x9e3779b9u));
}

static uint64_t hash_of(const struct agent *a, const struct agent_map *m, uint32_t idx)
{
	const struct agent_qp_reg *r = &a->qps[idx].reg;

	if (m == &a->by_qpn)
		return hash_qpn(r->qpn);
	return hash_flow(r->local_ip, r->peer_ip, r->peer_qpn);
}

int agent_map_init(struct agent_map *m, uint32_t max_entries)
{
	uint32_t cap = 16;

	while (cap < 2 * max_entries)
		cap <<= 1;
	m->slots = calloc(cap, sizeof(*m->slots));
	m->mask = cap - 1;
	return m->slots ? 0 : -ENOMEM;
}

void agent_map_fini(struct agent_map *m)
{
	free(m->slots);
	m->slots = NULL;
}

uint32_t agent_map_find_qpn(const struct agent *a, uint32_t qpn)
{
	const struct agent_map *m = &a->by_qpn;

	for (uint32_t i = (uint32_t)hash_qpn(qpn) & m->mask;; i = (i + 1) & m->mask) {
		uint32_t e = m->slots[i];

		if (!e)
			return AGENT_NO_IDX;
		if (a->qps[e - 1].reg.qpn == qpn)
			return e - 1;
	}
}

uint32_t agent_map_find_flow(const struct agent *a, uint32_t local_ip, uint32_t peer_ip,
			     uint32_t peer_qpn)
{
	const struct agent_map *m = &a->by_flow;
	uint32_t i = (uint32_t)hash_flow(local_ip, peer_ip, peer_qpn) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		uint32_t e = m->slots[i];
		const struct agent_qp_reg *r;

		if (!e)
			return AGENT_NO_IDX;
		r = &a->qps[e - 1].reg;
		if (r->local_ip == local_ip && r->peer_ip == peer_ip && r->peer_qpn == peer_qpn)
			return e - 1;
	}
}

void agent_map_add(struct agent *a, struct agent_map *m, uint32_t idx)
{
	uint32_t i = (uint32_t)hash_of(a, m, idx) & m->mask;

	while (m->slots[i])
		i = (i + 1) & m->mask;
	m->slots[i] = idx + 1;
}

void agent_map_del(struct agent *a, struct agent_map *m, uint32_t idx)
{
	uint32_t i = (uint32_t)hash_of(a, m, idx) & m->mask, j;

	while (m->slots[i] && m->slots[i] != idx + 1)
		i = (i + 1) & m->mask;
	if (!m->slots[i])
		return;
	/* Backward shift: move up every later entry of the run that may live at i. */
	for (j = i;;) {
		uint32_t home;

		j = (j + 1) & m->mask;
		if (!m->slots[j])
			break;
		home = (uint32_t)hash_of(a, m, m->slots[j] - 1) & m->mask;
		/* the entry at j stays when its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		i = j;
	}
	m->slots[i] = 0;
}

/* ---- timer heap ---- */

static qp_time_ns key_at(const struct agent *a, uint32_t pos)
{
	return a->qps[a->heap[pos]].deadline_ns;
}

static void heap_set(struct agent *a, uint32_t pos, uint32_t idx)
{
	a->heap[pos] = idx;
	a->qps[idx].heap_pos = pos;
}

static void sift_up(struct agent *a, uint32_t pos)
{
	uint32_t idx = a->heap[pos];
	qp_time_ns k = a->qps[idx].deadline_ns;

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (key_at(a, parent) <= k)
			break;
		heap_set(a, pos, a->heap[parent]);
		pos = parent;
	}
	heap_set(a, pos, idx);
}

static void sift_down(struct agent *a, uint32_t pos)
{
	uint32_t idx = a->heap[pos];
	qp_time_ns k = a->qps[idx].deadline_ns;

	for (;;) {
		uint32_t c = 2 * pos + 1;

		if (c >= a->heap_len)
			break;
		if (c + 1 < a->heap_len && key_at(a, c + 1) < key_at(a, c))
			c++;
		if (key_at(a, c) >= k)
			break;
		heap_set(a, pos, a->heap[c]);
		pos = c;
	}
	heap_set(a, pos, idx);
}

void agent_heap_remove(struct agent *a, uint32_t idx)
{
	uint32_t pos = a->qps[idx].heap_pos, last;

	if (pos == AGENT_NO_IDX)
		return;
	a->qps[idx].heap_pos = AGENT_NO_IDX;
	last = a->heap[--a->heap_len];
	if (pos == a->heap_len)
		return;
	heap_set(a, pos, last);
	sift_up(a, pos);
	sift_down(a, a->qps[last].heap_pos);
}

void agent_heap_update(struct agent *a, uint32_t idx)
{
	struct agent_qp *q = &a->qps[idx];

	if (q->deadline_ns == QP_TIME_NEVER) {
		agent_heap_remove(a, idx);
		return;
	}
	if (q->heap_pos == AGENT_NO_IDX) {
		heap_set(a, a->heap_len++, idx);
		sift_up(a, q->heap_pos);
		return;
	}
	sift_up(a, q->heap_pos);
	sift_down(a, q->heap_pos);
}
