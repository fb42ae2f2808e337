/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The egress queue model (see queue.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/frame.h"
#include "queue.h"

#define RATE_MIN 1000ULL
#define RATE_MAX (10000ULL * QP_GBPS)
#define DELAY_MAX (10 * QP_NS_PER_S)
#define BUFFER_MIN 1514ULL
#define BUFFER_MAX (1ULL << 30)

/* Memory follows what a queue holds, not what it may hold. Its limits are a ring of
 * store_cap bytes, with the wrap rule of store_alloc, and ent_mask + 1 entries: every
 * decision (a store drop) is the one rings of that size take, to the byte. The bytes and
 * entries themselves sit in smaller power-of-two rings that double (copying what is
 * held) when what the limit ring holds would not fit: a record at linear position L (its
 * offset in the limit ring plus store_cap, rounded up to 8, for every wrap before it) sits
 * at L mod P; the records held span at most store_used + 7 linear bytes (one wrap among
 * them at most), so with P > store_used + 7 no two overlap, and one that begins near P
 * runs on into a pad the size of the largest record.
 * Why: at its limits a port of the 128-host leaf-spine (1 MB buffer at 100 Gb/s) has a
 * 2.1 MB store and 32,768 entries (2 MB), and a queue that is never quite empty marches
 * through both while holding a few frames: 384 such queues touched 1 GB, and its frames
 * were written to memory no cache held. An outgrown ring is freed at the next pop, so a
 * frame the caller still points at (a batch not yet sent, a frame being copied) stays. */
#define STORE_P0 (64u * 1024)
#define STORE_PAD (2u * 65536u + 8u)
#define ENTS_P0 64u
#define OLD_MAX 64

struct sw_queue {
	_Alignas(64) struct sw_queue_params p;   /* on a cache line: see old[] */
	struct sw_queue_stats st;
	struct sw_flowtab flows;
	struct sw_rng rng;
	struct sw_qent *ents;        /* ent_pmask + 1 of them */
	uint32_t ent_mask;           /* the limit: ent_mask + 1 entries */
	uint32_t ent_pmask;
	uint64_t head, mhead, tail;  /* handed-on head, model head, tail (ever-growing) */
	uint8_t *store;              /* store_pmask + 1 + STORE_PAD bytes */
	uint32_t store_cap, store_used, store_wpos;   /* the limit ring */
	uint32_t store_pmask;
	uint64_t store_base;         /* linear position of the limit ring's offset 0 */
	unsigned nold;               /* in old[] */
	uint64_t qbytes;             /* Q at model_ns */
	uint64_t cum_bytes;
	qp_time_ns model_ns;         /* the model has been advanced to here */
	qp_time_ns last_depart_ns;
	uint64_t rem;                /* bits*1e9 not yet turned into whole ns, this busy period */
	qp_time_ns hold_until;       /* PFC: nothing starts before this */
	qp_time_ns pop_depart_ns;    /* departure of the last frame handed on */
	sw_queue_depart_fn dep_fn;
	void *dep_arg;
	/* Last: the fields above are what every frame reads (allocated on a cache line) */
	void *old[OLD_MAX];          /* outgrown rings, freed at the next pop */
};

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* Bytes the queue may hold at once: B, what lossless frames add, what is in flight
 * over D. */
static uint64_t held_max(const struct sw_queue_params *p)
{
	return p->buffer_bytes + p->lossless_bytes + qp_bytes_in(p->rate_bps, p->delay_ns);
}

/* Bytes that can be stored: held_max with slack for metadata. */
static uint64_t store_need(const struct sw_queue_params *p)
{
	return 2 * held_max(p) + 65536;
}

static uint64_t ents_need(const struct sw_queue_params *p)
{
	return next_pow2(held_max(p) / SW_FRAME_MIN + 64);
}

int sw_queue_check(const struct sw_queue_params *p, char *err, size_t len)
{
	if (p->rate_bps < RATE_MIN || p->rate_bps > RATE_MAX)
		return qp_errmsg(-EINVAL, err, len, "rate %" PRIu64 " b/s outside 1K..10T",
				 p->rate_bps);
	if (p->delay_ns > DELAY_MAX)
		return qp_errmsg(-EINVAL, err, len, "delay %" PRIu64 " ns outside 0..10s",
				 p->delay_ns);
	if (p->buffer_bytes < BUFFER_MIN || p->buffer_bytes > BUFFER_MAX)
		return qp_errmsg(-EINVAL, err, len, "buffer %" PRIu64 " bytes outside 1514..1G",
				 p->buffer_bytes);
	if (p->flow_slots < SW_FLOW_PROBE || p->flow_slots > (1u << 20) ||
	    (p->flow_slots & (p->flow_slots - 1))) {
		return qp_errmsg(-EINVAL, err, len,
				 "flow table %" PRIu32 " slots: a power of two 8..1M",
				 p->flow_slots);
	}
	if (p->flow_idle_ns > QP_NS_PER_S)
		return qp_errmsg(-EINVAL, err, len, "flow-idle %" PRIu64 " ns outside 0..1s",
				 p->flow_idle_ns);
	if (p->lossless_bytes > BUFFER_MAX)
		return qp_errmsg(-EINVAL, err, len, "lossless allowance %" PRIu64
				 " bytes outside 0..1G", p->lossless_bytes);
	if (store_need(p) > UINT32_MAX || ents_need(p) > (1ULL << 26))
		return qp_errmsg(-EINVAL, err, len,
				 "buffer, lossless headroom and bytes in flight (rate x delay) "
				 "too large to store: at most ~1.5 GB");
	return sw_red_check(&p->red, p->buffer_bytes, err, len);
}

struct sw_queue *sw_queue_create(const struct sw_queue_params *p, char *err, size_t len)
{
	struct sw_queue *q;

	if (sw_queue_check(p, err, len))
		return NULL;
	q = aligned_alloc(_Alignof(struct sw_queue), sizeof(*q));   /* calloc aligns to 16 */
	if (!q)
		goto nomem;
	memset(q, 0, sizeof(*q));
	q->p = *p;
	q->rng.s = p->seed;
	q->ent_mask = (uint32_t)ents_need(p) - 1;
	q->ent_pmask = (q->ent_mask < ENTS_P0 - 1 ? q->ent_mask : ENTS_P0 - 1);
	q->ents = calloc((size_t)q->ent_pmask + 1, sizeof(*q->ents));
	q->store_cap = (uint32_t)store_need(p);
	q->store_pmask = (uint32_t)next_pow2(q->store_cap < STORE_P0 ? q->store_cap : STORE_P0) - 1;
	q->store = malloc((size_t)q->store_pmask + 1 + STORE_PAD);
	if (!q->ents || !q->store || sw_flowtab_init(&q->flows, p->flow_slots))
		goto nomem;
	q->flows.idle_ns = p->flow_idle_ns;
	return q;
nomem:
	qp_errmsg(-ENOMEM, err, len, "queue: out of memory");
	sw_queue_destroy(q);
	return NULL;
}

int sw_queue_change(struct sw_queue *q, const struct sw_queue_params *p, char *err, size_t len)
{
	int rc = sw_queue_check(p, err, len);

	if (rc)
		return rc;
	if (store_need(p) > q->store_cap || ents_need(p) > (uint64_t)q->ent_mask + 1 ||
	    p->flow_slots != q->p.flow_slots) {
		return qp_errmsg(-EINVAL, err, len,
				 "new buffer, rate x delay or flow table larger than the queue "
				 "was built for; restart to grow it");
	}
	q->flows.idle_ns = p->flow_idle_ns;
	q->p = *p;   /* vars (queue contents, model time) carry on under the new parameters */
	return 0;
}

void sw_queue_destroy(struct sw_queue *q)
{
	if (!q)
		return;
	sw_flowtab_free(&q->flows);
	while (q->nold)
		free(q->old[--q->nold]);
	free(q->ents);
	free(q->store);
	free(q);
}

const struct sw_queue_params *sw_queue_params(const struct sw_queue *q)
{
	return &q->p;
}

const struct sw_queue_stats *sw_queue_stats(const struct sw_queue *q)
{
	return &q->st;
}

struct sw_flowtab *sw_queue_flows(struct sw_queue *q)
{
	return &q->flows;
}

static struct sw_qent *ent(const struct sw_queue *q, uint64_t i)
{
	return &q->ents[i & q->ent_pmask];
}

static uint8_t *rec(const struct sw_queue *q, const struct sw_qent *e)
{
	return q->store + (e->store_lin & q->store_pmask);
}

/* A ring outgrown: freed once nothing can point into it (the next pop). The caller made
 * sure of room (nold < OLD_MAX) before it allocated the new ring. */
static void defer_free(struct sw_queue *q, void *p)
{
	q->old[q->nold++] = p;
}

/* Room for one more entry than the queue holds: double the ring, entries at i mod E'. */
static int ents_room(struct sw_queue *q)
{
	uint64_t e = (uint64_t)q->ent_pmask + 1;
	struct sw_qent *n;

	if (q->tail - q->head < e)
		return 0;
	if (q->nold == OLD_MAX || !(n = malloc(2 * e * sizeof(*n))))
		return -ENOMEM;
	for (uint64_t i = q->head; i < q->tail; i++)
		n[i & (2 * e - 1)] = q->ents[i & (e - 1)];
	defer_free(q, q->ents);
	q->ents = n;
	q->ent_pmask = (uint32_t)(2 * e - 1);
	return 0;
}

/* The records held, with the one to come, would span @used bytes, more than the store
 * ring: one of more than used + 7, records copied to their new places. */
static int store_grow(struct sw_queue *q, uint64_t used)
{
	uint64_t p = next_pow2(used + 8);
	uint8_t *n;

	if (q->nold == OLD_MAX || !(n = malloc(p + STORE_PAD)))
		return -ENOMEM;
	for (uint64_t i = q->head; i < q->tail; i++) {
		const struct sw_qent *e = ent(q, i);
		memcpy(n + (e->store_lin & (p - 1)), rec(q, e), (size_t)e->meta_len + e->frame_len);
	}
	defer_free(q, q->store);
	q->store = n;
	q->store_pmask = (uint32_t)(p - 1);
	return 0;
}

void sw_queue_on_depart(struct sw_queue *q, sw_queue_depart_fn fn, void *arg)
{
	q->dep_fn = fn;
	q->dep_arg = arg;
}

/* @e leaves Q. */
static void leave_q(struct sw_queue *q, const struct sw_qent *e)
{
	q->qbytes -= e->len;
	sw_flowtab_sub(&q->flows, e->flow, e->len);
	if (e->tag && q->dep_fn)
		q->dep_fn(q->dep_arg, e);
}

/* Frames whose departure is at or before @t leave Q. */
static void advance(struct sw_queue *q, qp_time_ns t)
{
	if (t > q->model_ns)
		q->model_ns = t;
	while (q->mhead < q->tail && ent(q, q->mhead)->depart_ns <= q->model_ns)
		leave_q(q, ent(q, q->mhead++));
}

uint64_t sw_queue_bytes(struct sw_queue *q, qp_time_ns now)
{
	advance(q, now);
	return q->qbytes;
}

uint64_t sw_queue_bytes_at(const struct sw_queue *q, qp_time_ns t)
{
	uint64_t bytes = q->qbytes;

	for (uint64_t i = q->mhead; i < q->tail && ent(q, i)->depart_ns <= t; i++)
		bytes -= ent(q, i)->len;
	return bytes;
}

/* Room for @n bytes, 8-byte aligned, in the limit ring; wraps to 0 when the end is too
 * short. -ENOBUFS when it is full, -ENOMEM when the store ring could not grow. */
static int store_alloc(struct sw_queue *q, uint32_t n, uint64_t *lin, uint32_t *span)
{
	uint32_t need = (n + 7u) & ~7u, skip = 0, off;
	/* wrap when it does not fit before the end: also when the last one ended exactly
	 * there (wpos == cap, skip 0), which must not hand out offset cap */
	bool wrap = (uint64_t)q->store_wpos + need > q->store_cap;

	if (wrap)
		skip = q->store_cap - q->store_wpos;
	if ((uint64_t)q->store_used + skip + need > q->store_cap)
		return -ENOBUFS;
	/* + 8: a wrap moves the linear position on by the cap rounded up to 8 bytes, so that
	 * records stay 8-byte aligned where they sit (held records span at most 7 more) */
	if ((uint64_t)q->store_used + skip + need + 8 > (uint64_t)q->store_pmask + 1 &&
	    store_grow(q, (uint64_t)q->store_used + skip + need))
		return -ENOMEM;
	if (wrap)
		q->store_base += ((uint64_t)q->store_cap + 7) & ~7ull;
	off = wrap ? 0 : q->store_wpos;
	*lin = q->store_base + off;
	*span = skip + need;
	q->store_wpos = off + need;
	q->store_used += *span;
	return 0;
}

/* s_i and d_i; the remainder keeps a long busy period exact at any rate. A PFC hold
 * delays the start. */
static void schedule(struct sw_queue *q, qp_time_ns a, uint32_t len, struct sw_qent *e)
{
	uint64_t num;

	if (a < q->hold_until)
		a = q->hold_until;
	if (a >= q->last_depart_ns) {
		e->start_ns = a;
		q->rem = 0;
	} else {
		e->start_ns = q->last_depart_ns;
	}
	num = (uint64_t)len * 8u * QP_NS_PER_S + q->rem;
	e->depart_ns = e->start_ns + num / q->p.rate_bps;
	q->rem = num % q->p.rate_bps;
	q->last_depart_ns = e->depart_ns;
}

int sw_queue_enqueue(struct sw_queue *q, qp_time_ns now, const struct sw_enq *in,
		     struct sw_enq_out *out)
{
	uint32_t len = in->frame_len < SW_FRAME_MIN ? SW_FRAME_MIN : in->frame_len;
	uint32_t span, meta = (in->meta_len + 7u) & ~7u;
	uint64_t lin;
	uint8_t *r;
	struct sw_qent *e;

	advance(q, now);
	memset(out, 0, sizeof(*out));
	out->arrival_ns = q->model_ns;
	out->flow = SW_FLOW_NONE;
	if (!in->lossless && q->qbytes + len > q->p.buffer_bytes) {
		q->st.drop_tail++;
		q->st.drop_tail_bytes += len;
		out->verdict = SW_ENQ_DROP_TAIL;
		goto done;
	}
	/* Out of memory growing a ring: counted as a full store (it is one). */
	if (q->tail - q->head > q->ent_mask || ents_room(q) ||
	    store_alloc(q, meta + in->frame_len, &lin, &span)) {
		q->st.drop_store++;
		out->verdict = SW_ENQ_DROP_STORE;
		goto done;
	}
	e = ent(q, q->tail);
	e->arrival_ns = q->model_ns;
	e->len = len;
	e->frame_len = in->frame_len;
	e->meta_len = (uint16_t)meta;
	e->store_lin = lin;
	e->store_span = span;
	e->tag = in->tag;
	schedule(q, e->arrival_ns, len, e);
	r = rec(q, e);
	if (in->meta_len)
		memcpy(r, in->meta, in->meta_len);
	memcpy(r + meta, in->frame, in->frame_len);
	e->flow = SW_FLOW_NONE;
	if (in->key) {
		e->flow = sw_flowtab_get(&q->flows, in->key, e->arrival_ns);
		if (e->flow == SW_FLOW_NONE)
			q->st.flow_untracked++;
	}
	q->tail++;
	q->qbytes += len;
	q->cum_bytes += len;
	e->cum_bytes = q->cum_bytes;
	sw_flowtab_add(&q->flows, e->flow, len);
	q->st.enq_frames++;
	q->st.enq_bytes += len;
	if (q->qbytes > q->st.max_qbytes)
		q->st.max_qbytes = q->qbytes;
	e->ecn_off = in->ect ? (uint16_t)(in->ip_off + 1) : 0;
	out->flow = e->flow;
	out->len = len;
	out->depart_ns = e->depart_ns;
	out->frame = r + meta;
done:
	out->qbytes = q->qbytes;
	{
		uint32_t n = sw_flowtab_count(&q->flows, q->model_ns);
		out->flows = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
	}
	return out->verdict == SW_ENQ_OK ? 0 : -ENOBUFS;
}

void sw_queue_hold(struct sw_queue *q, qp_time_ns now, qp_time_ns until, uint32_t committed)
{
	uint64_t i = q->head + committed;

	advance(q, now);
	/* What has not started by now starts at now at the earliest, even after an XON. */
	q->hold_until = until > q->model_ns ? until : q->model_ns;
	if (i < q->mhead)
		i = q->mhead;
	while (i < q->tail && ent(q, i)->start_ns < q->model_ns)   /* on the wire: finishes */
		i++;
	if (i == q->tail)
		return;
	q->last_depart_ns = i > q->head ? ent(q, i - 1)->depart_ns : q->pop_depart_ns;
	q->rem = 0;
	for (; i < q->tail; i++) {
		struct sw_qent *e = ent(q, i);
		schedule(q, e->arrival_ns, e->len, e);
	}
}

qp_time_ns sw_queue_next_depart_ns(const struct sw_queue *q)
{
	return q->mhead < q->tail ? ent(q, q->mhead)->depart_ns : QP_TIME_NEVER;
}

qp_time_ns sw_queue_next_ns(const struct sw_queue *q)
{
	if (q->head == q->tail)
		return QP_TIME_NEVER;
	return ent(q, q->head)->depart_ns + q->p.delay_ns;
}

const struct sw_qent *sw_queue_peek(const struct sw_queue *q, uint32_t i)
{
	return q->head + i < q->tail ? ent(q, q->head + i) : NULL;
}

uint8_t *sw_queue_frame(const struct sw_queue *q, const struct sw_qent *e)
{
	return rec(q, e) + e->meta_len;
}

const void *sw_queue_meta(const struct sw_queue *q, const struct sw_qent *e)
{
	return e->meta_len ? rec(q, e) : NULL;
}

void sw_queue_hop(const struct sw_queue *q, uint32_t i, struct qp_int_hop *h)
{
	const struct sw_qent *e = ent(q, q->head + i);
	uint64_t lo = q->head + i + 1, hi = q->tail;

	/* First frame behind e that arrived after e started: binary search (arrivals are
	 * in order). Every frame in [head+i+1, lo) arrived by s_i. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ent(q, mid)->arrival_ns <= e->start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	h->ts_ns = e->start_ns;
	h->tx_bytes = e->cum_bytes - e->len;
	h->qlen_bytes = 0;
	if (lo > q->head + i + 1) {
		uint64_t behind = ent(q, lo - 1)->cum_bytes - e->cum_bytes;
		h->qlen_bytes = behind > UINT32_MAX ? UINT32_MAX : (uint32_t)behind;
	}
	h->link_bps = q->p.rate_bps;
}

bool sw_queue_mark(struct sw_queue *q, uint32_t i)
{
	struct sw_qent *e = ent(q, q->head + i);
	struct qp_int_hop h;

	if (!q->p.red.kmax_bytes)
		return false;
	sw_queue_hop(q, i, &h);
	if (!sw_red_mark(&q->p.red, h.qlen_bytes, &q->rng))
		return false;
	if (!e->ecn_off) {
		q->st.ecn_not_ect++;
		return false;
	}
	frame_ip_set_ecn(sw_queue_frame(q, e) + e->ecn_off - 1, FRAME_ECN_CE);
	q->st.ecn_marked++;
	return true;
}

void sw_queue_pop(struct sw_queue *q, uint32_t n)
{
	while (n-- && q->head < q->tail) {
		struct sw_qent *e = ent(q, q->head);
		if (q->head == q->mhead) {   /* handed on before the model caught up */
			q->mhead++;
			leave_q(q, e);
		}
		q->pop_depart_ns = e->depart_ns;
		q->st.deq_frames++;
		q->st.deq_bytes += e->len;
		q->store_used -= e->store_span;
		q->head++;
	}
	/* Empty: start again at the front of both rings, so that a queue that stays short
	 * works in memory the cache still holds instead of marching through all of it. */
	if (q->head == q->tail) {
		q->head = q->mhead = q->tail = 0;
		q->store_wpos = 0;
		q->store_base = 0;
	}
	while (q->nold)
		free(q->old[--q->nold]);
}

uint32_t sw_queue_count(const struct sw_queue *q)
{
	return (uint32_t)(q->tail - q->head);
}
