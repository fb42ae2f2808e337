/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch's table of flows that want INT reports, and the decision per frame
 * (int_want.h). */
#include <errno.h>
#include <stdlib.h>

#include "qpace/frame.h"
#include "int_want.h"
#include "sw.h"

static uint32_t want_hash(uint32_t src, uint32_t dst, uint32_t qp)
{
	uint64_t h = ((uint64_t)src << 32 | dst) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)qp * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static bool want_is(const struct sw_want *w, uint32_t src, uint32_t dst, uint32_t qp)
{
	return w->used && w->src_ip == src && w->dst_ip == dst && w->qp == qp;
}

static uint32_t want_slot(const struct sw_wants *t, uint32_t src, uint32_t dst, uint32_t qp)
{
	uint32_t i = want_hash(src, dst, qp) & (t->cap - 1);

	while (t->slots[i].used && !want_is(&t->slots[i], src, dst, qp))
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* Linear probing's deletion: shift back the entries of the run after @i that may move. */
static void want_del(struct sw_wants *t, uint32_t i)
{
	uint32_t mask = t->cap - 1, j = i;

	t->slots[i].used = false;
	t->n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].used)
			return;
		uint32_t home = want_hash(t->slots[j].src_ip, t->slots[j].dst_ip,
					  t->slots[j].qp) & mask;
		/* j's entry may fill hole i when its home is not in (i, j] (cyclically) */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			t->slots[j].used = false;
			i = j;
		}
	}
}

static bool expired(const struct sw_want *w, qp_time_ns now)
{
	return now > w->seen_ns && now - w->seen_ns > SW_WANT_HOLD_NS;
}

static void sweep(struct sw_wants *t, qp_time_ns now)
{
	for (uint32_t i = 0; i < t->cap; i++)
		while (t->slots[i].used && expired(&t->slots[i], now))
			want_del(t, i);   /* a shifted entry lands in i: look at it again */
}

static int grow(struct sw_wants *t, uint32_t cap)
{
	struct sw_want *old = t->slots;
	uint32_t ocap = t->cap;

	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->cap = cap;
	t->n = 0;
	for (uint32_t i = 0; i < ocap; i++) {
		if (old[i].used) {
			t->slots[want_slot(t, old[i].src_ip, old[i].dst_ip, old[i].qp)] = old[i];
			t->n++;
		}
	}
	free(old);
	return 0;
}

/* Room for one more entry at a load of at most one half. */
static int make_room(struct sw_wants *t, qp_time_ns now)
{
	if (!t->slots)
		return grow(t, SW_WANT_MIN);
	if (2 * (t->n + 1) <= t->cap)
		return 0;
	sweep(t, now);
	if (2 * (t->n + 1) <= t->cap)
		return 0;
	return t->cap < SW_WANT_MAX ? grow(t, 2 * t->cap) : -ENOSPC;
}

int sw_wants_take(struct sw_wants *t, const struct fb_want *w, qp_time_ns now)
{
	uint32_t src = w->flow.src_ip, dst = w->flow.dst_ip, qp = w->flow.dest_qp, i;
	int rc;

	if (!w->int_every) {
		if (t->slots && t->slots[i = want_slot(t, src, dst, qp)].used)
			want_del(t, i);
		return 0;
	}
	if (!t->slots || !t->slots[want_slot(t, src, dst, qp)].used) {
		if ((rc = make_room(t, now)))
			return rc;
		t->n++;
	}
	i = want_slot(t, src, dst, qp);
	t->slots[i] = (struct sw_want){ .src_ip = src, .dst_ip = dst, .qp = qp, .used = true,
					.every = w->int_every, .interval_ns = w->int_interval_ns,
					.seen_ns = now };
	return 0;
}

const struct sw_want *sw_wants_find(struct sw_wants *t, uint32_t src_ip, uint32_t dst_ip,
				    uint32_t qp, qp_time_ns now)
{
	uint32_t i;

	if (!t->n)
		return NULL;
	i = want_slot(t, src_ip, dst_ip, qp);
	if (!t->slots[i].used)
		return NULL;
	if (expired(&t->slots[i], now)) {
		want_del(t, i);
		return NULL;
	}
	return &t->slots[i];
}

void sw_wants_free(struct sw_wants *t)
{
	free(t->slots);
	*t = (struct sw_wants){ 0 };
}

/* The flow's last window is on its way (or, without the flag, a new message of it): out of
 * (back into) the flow count of every port of this switch that tracks it (the data's
 * egress among them), so the other flows' notices carry the smaller count at once. */
static void want_ending(struct sw_switch *sw, const struct fb_want *w)
{
	struct sw_flow_key k = { .src_ip = w->flow.src_ip, .dst_ip = w->flow.dst_ip,
				 .sport = w->flow.sport, .qp = w->flow.dest_qp };
	bool on = w->flags & FB_WANT_F_LAST;

	for (int i = 0; i < sw->nports; i++) {
		struct sw_flowtab *t = sw_queue_flows(sw->ports[i].q);

		sw_flowtab_ending(t, sw_flowtab_find(t, &k), on);
	}
}

void sw_want_ingress(struct sw_port *in, const uint8_t *f, const struct frame_parsed *p,
		     qp_time_ns now)
{
	struct sw_switch *sw = in->sw;
	struct fb_msg msg;

	if (fb_claimed_type(f + p->payload_off, p->payload_len) != FB_T_WANT ||
	    fb_decode(&msg, f + p->payload_off, p->payload_len) || msg.type != FB_T_WANT ||
	    sw_auth_take(&sw->auth, f + p->payload_off, p->payload_len, now))
		return;
	if (msg.flags & FB_F_IPV6) {   /* keyed as the data's frames are (sw_flow_fold6) */
		msg.u.want.flow.src_ip = sw_flow_fold6(msg.u.want.flow.src6);
		msg.u.want.flow.dst_ip = sw_flow_fold6(msg.u.want.flow.dst6);
	}
	want_ending(sw, &msg.u.want);
	if (sw_wants_take(&sw->wants, &msg.u.want, now))
		in->st.int_wants_refused++;
	else
		in->st.int_wants++;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

bool sw_int_report_due(struct sw_port *p, struct sw_flow *fl, const struct sw_flow_key *k,
		       qp_time_ns now)
{
	const struct sw_telem_params *tp = &p->telem;
	const struct sw_want *w;
	uint32_t every;
	qp_time_ns interval;

	if (tp->int_mode == SW_INT_OFF)
		return false;
	w = sw_wants_find(&p->sw->wants, k->src_ip, k->dst_ip, k->qp, now);
	if (!w) {
		if (tp->int_flows == SW_INT_FLOWS_ALL)
			return sw_telem_int_due(tp, fl, now);
		p->st.int_unwanted++;
		return false;
	}
	every = (uint32_t)max_u64(tp->int_every, w->every);
	interval = max_u64(tp->int_interval_ns, w->interval_ns);
	if (!fl)
		return every == 1 && !interval;
	return sw_telem_int_sample(fl, every, interval, now);
}
