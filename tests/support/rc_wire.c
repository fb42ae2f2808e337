/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* In-memory wire between two RC QPs (see rc_wire.h). */
#include <stdlib.h>
#include <string.h>

#include "icrc_ref.h"
#include "rc_wire.h"

#define WIRE_FRAME_MAX 4200
#define WIRE_HEAP_MAX 65536u
#define WIRE_ICRC_SAMPLE 61    /* check every 61st frame with the bitwise CRC */

struct rc_wire_frame {
	qp_time_ns at;
	uint64_t seq;
	int to;
	uint16_t len;
	uint8_t buf[];
};

static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rc_wire_rand(struct rc_wire *w)
{
	return (double)(next_u64(&w->rng) >> 11) / 9007199254740992.0;
}

uint64_t rc_wire_randn(struct rc_wire *w, uint64_t n)
{
	return n ? next_u64(&w->rng) % n : 0;
}

static bool earlier(const struct rc_wire_frame *a, const struct rc_wire_frame *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_push(struct rc_wire *w, struct rc_wire_frame *f)
{
	uint32_t i = w->heap_len++;

	while (i) {
		uint32_t up = (i - 1) / 2;

		if (!earlier(f, w->heap[up]))
			break;
		w->heap[i] = w->heap[up];
		i = up;
	}
	w->heap[i] = f;
}

static struct rc_wire_frame *heap_pop(struct rc_wire *w)
{
	struct rc_wire_frame *top = w->heap[0], *last = w->heap[--w->heap_len];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= w->heap_len)
			break;
		if (c + 1 < w->heap_len && earlier(w->heap[c + 1], w->heap[c]))
			c++;
		if (!earlier(w->heap[c], last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (w->heap_len)
		w->heap[i] = last;
	return top;
}

static const struct frame_addr default_addr[2] = {
	{ .mac = { 0x02, 0, 0x0a, 0, 0, 1 }, .ip = 0x0a000001, .port = 0xc011 },
	{ .mac = { 0x02, 0, 0x0a, 0, 0, 2 }, .ip = 0x0a000002, .port = 0xc022 },
};

void rc_wire_init(struct rc_wire *w, const struct rc_wire_params *p, struct rc_qp *a,
		  struct rc_qp *b, qp_time_ns start)
{
	memset(w, 0, sizeof(*w));
	w->p = *p;
	if (!w->p.delay_ns)
		w->p.delay_ns = 2 * QP_NS_PER_US;
	if (!w->p.rate_bps)
		w->p.rate_bps = 10 * QP_GBPS;
	w->qp[0] = a;
	w->qp[1] = b;
	memcpy(w->addr, default_addr, sizeof(default_addr));
	w->now = w->link_free[0] = w->link_free[1] = start;
	w->rng = p->seed;
	w->heap_cap = WIRE_HEAP_MAX;
	w->heap = calloc(w->heap_cap, sizeof(*w->heap));
}

void rc_wire_fini(struct rc_wire *w)
{
	while (w->heap_len)
		free(heap_pop(w));
	free(w->heap);
	w->heap = NULL;
}

static void enqueue(struct rc_wire *w, int to, const uint8_t *buf, int len, qp_time_ns at)
{
	struct rc_wire_frame *f;

	if (w->heap_len == w->heap_cap) {
		w->st.lost++;
		return;
	}
	f = malloc(sizeof(*f) + (size_t)len);
	if (!f) {
		w->st.lost++;
		return;
	}
	f->at = at;
	f->seq = w->seq++;
	f->to = to;
	f->len = (uint16_t)len;
	memcpy(f->buf, buf, (size_t)len);
	heap_push(w, f);
}

static void transmit(struct rc_wire *w, int from, struct frame_roce_spec *s)
{
	uint8_t buf[WIRE_FRAME_MAX];
	struct frame_parsed p;
	qp_time_ns at;
	int len;

	s->src = w->addr[from];
	s->dst = w->addr[!from];
	s->ip = (struct frame_ip_opts){ .tos = w->tos[from] };
	len = frame_build_roce(buf, sizeof(buf), s);
	if (len < 0) {
		w->bad++;
		return;
	}
	w->st.sent++;
	if (w->link_free[from] < w->now)
		w->link_free[from] = w->now;
	w->link_free[from] += qp_tx_time_ns((uint64_t)len, w->p.rate_bps);
	at = w->link_free[from] + w->p.delay_ns;
	if (w->filter && frame_parse(&p, buf, (size_t)len) == 0 &&
	    w->filter(w->filter_arg, from, &p)) {
		w->st.filtered++;
		return;
	}
	if (from == 0 && w->p.bottleneck_bps) {   /* the switch: drop-tail, then egress */
		uint64_t queued = w->sw_free > at ? (w->sw_free - at) * w->p.bottleneck_bps / 8 /
							       QP_NS_PER_S : 0;

		if (queued + (uint64_t)len > w->p.buffer_bytes) {
			w->st.tail_drops++;
			return;
		}
		w->sw_free = (w->sw_free > at ? w->sw_free : at) +
			     qp_tx_time_ns((uint64_t)len, w->p.bottleneck_bps);
		at = w->sw_free;
	}
	if (w->p.loss > 0 && rc_wire_rand(w) < w->p.loss) {
		w->st.lost++;
		return;
	}
	if (w->p.reorder > 0 && rc_wire_rand(w) < w->p.reorder) {
		w->st.reordered++;
		at += rc_wire_randn(w, w->p.reorder_ns + 1);
	}
	enqueue(w, !from, buf, len, at);
	if (w->p.dup > 0 && rc_wire_rand(w) < w->p.dup) {
		w->st.duplicated++;
		enqueue(w, !from, buf, len, at + 1 + rc_wire_randn(w, w->p.delay_ns));
	}
}

static void deliver(struct rc_wire *w, struct rc_wire_frame *f)
{
	struct frame_parsed p;

	if (frame_parse(&p, f->buf, f->len) < 0 || !frame_icrc_ok(f->buf, &p)) {
		w->bad++;
		return;
	}
	if (w->st.delivered % WIRE_ICRC_SAMPLE == 0) {
		w->st.icrc_checked++;
		if (!icrc_ref_ok(f->buf, f->len))
			w->bad++;
	}
	w->st.delivered++;
	rc_rx(w->qp[f->to], f->buf, &p, w->now);
}

bool rc_wire_step(struct rc_wire *w)
{
	struct frame_roce_spec s;
	qp_time_ns next = QP_TIME_NEVER;

	for (int i = 0; i < 2; i++) {
		if (rc_deadline(w->qp[i]) <= w->now)
			rc_tick(w->qp[i], w->now);
		while (w->link_free[i] <= w->now && rc_tx_next(w->qp[i], w->now, &s))
			transmit(w, i, &s);
	}
	if (w->heap_len)
		next = w->heap[0]->at;
	for (int i = 0; i < 2; i++) {
		next = qp_time_min(next, rc_deadline(w->qp[i]));
		if (rc_tx_pending(w->qp[i]))
			next = qp_time_min(next, w->link_free[i]);
	}
	if (next == QP_TIME_NEVER)
		return false;
	if (next > w->now)
		w->now = next;
	while (w->heap_len && w->heap[0]->at <= w->now) {
		struct rc_wire_frame *f = heap_pop(w);

		deliver(w, f);
		free(f);
	}
	return true;
}

bool rc_wire_run(struct rc_wire *w, bool (*done)(void *arg), void *arg, qp_time_ns until)
{
	for (;;) {
		if (done(arg))
			return true;
		if (w->now > until || !rc_wire_step(w))
			return done(arg);
	}
}
