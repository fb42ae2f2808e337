/* Closed-loop network model for congestion-control tests: see netmodel.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "netmodel.h"

enum nm_ev_type {
	NM_EV_SEND,    /* flow: try to send a packet */
	NM_EV_ARRIVE,  /* pkt: reaches the queue of path[hop] */
	NM_EV_DEPART,  /* pkt: leaves the queue of path[hop] */
	NM_EV_RECV,    /* pkt: reaches the receiver */
	NM_EV_ACK,     /* pkt: its ACK reaches the sender */
	NM_EV_LOSS,    /* pkt: the sender learns it was dropped */
	NM_EV_NOTICE,  /* flow: an early notice reaches the sender */
	NM_EV_TIMER,   /* flow: the controller's timer is due */
};

struct nm_pkt {
	unsigned flow;
	unsigned hop;       /* index into the flow's path */
	uint32_t size;
	uint64_t seq;       /* sender's transmit sequence at the end of this packet */
	qp_time_ns sent_ns;
	bool ce;
	unsigned nhops;
	struct qp_int_hop hops[NM_MAX_PATH];
};

struct nm_ev {
	qp_time_ns t;
	uint64_t order;     /* FIFO among equal times */
	enum nm_ev_type type;
	unsigned flow;
	uint64_t gen;       /* SEND/TIMER: valid only if it matches the flow's */
	struct nm_pkt *pkt;
	struct cc_notice notice;
};

struct nm_link_state {
	struct nm_link cfg;
	qp_time_ns last_departure;
	uint64_t queue_bytes;
	uint64_t max_queue_bytes;
	uint64_t tx_bytes;
	uint64_t drops, marks, notices;
	uint64_t flow_bytes[NM_MAX_FLOWS]; /* bytes of each flow in the queue */
	unsigned flows_queued;
	qp_time_ns last_notice[NM_MAX_FLOWS];
	bool noticed[NM_MAX_FLOWS];
};

struct nm_flow {
	struct cc *cc;
	unsigned path[NM_MAX_PATH];
	unsigned nhops;
	uint64_t bytes;          /* 0 = infinite */
	qp_time_ns start_ns;
	uint64_t new_sent;       /* new bytes sent */
	uint64_t retx_pending;   /* lost bytes still to resend */
	uint64_t tx_seq;         /* every byte transmitted, new or resent */
	uint64_t inflight;
	uint64_t acked;
	uint64_t delivered;
	uint64_t retransmits;
	qp_time_ns last_send_ns;
	uint32_t last_size;
	bool sending;            /* a SEND event chain is active */
	bool done;
	qp_time_ns fct_ns;
	uint64_t send_gen, timer_gen;
	qp_time_ns timer_sched;
	qp_rate_bps rate_seen;
};

struct nm {
	struct nm_link_state links[NM_MAX_LINKS];
	unsigned nlinks;
	struct nm_flow flows[NM_MAX_FLOWS];
	unsigned nflows;
	uint32_t mtu;
	uint64_t rng;
	qp_time_ns now;
	uint64_t order;
	struct nm_ev *heap;
	size_t heap_len, heap_cap;
};

/* ---- event heap ---- */

/* Time order; at equal times a departure goes first (the packet has left when the next
 * one arrives), then FIFO. */
static bool ev_before(const struct nm_ev *a, const struct nm_ev *b)
{
	bool ad = a->type == NM_EV_DEPART, bd = b->type == NM_EV_DEPART;

	if (a->t != b->t)
		return a->t < b->t;
	if (ad != bd)
		return ad;
	return a->order < b->order;
}

static void heap_push(struct nm *nm, struct nm_ev ev)
{
	size_t i;

	if (nm->heap_len == nm->heap_cap) {
		size_t cap = nm->heap_cap ? nm->heap_cap * 2 : 1024;
		struct nm_ev *h = realloc(nm->heap, cap * sizeof(*h));
		if (!h)
			abort(); /* test support: out of memory ends the test */
		nm->heap = h;
		nm->heap_cap = cap;
	}
	ev.order = nm->order++;
	i = nm->heap_len++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!ev_before(&ev, &nm->heap[parent]))
			break;
		nm->heap[i] = nm->heap[parent];
		i = parent;
	}
	nm->heap[i] = ev;
}

static struct nm_ev heap_pop(struct nm *nm)
{
	struct nm_ev top = nm->heap[0];
	struct nm_ev last = nm->heap[--nm->heap_len];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= nm->heap_len)
			break;
		if (c + 1 < nm->heap_len && ev_before(&nm->heap[c + 1], &nm->heap[c]))
			c++;
		if (!ev_before(&nm->heap[c], &last))
			break;
		nm->heap[i] = nm->heap[c];
		i = c;
	}
	if (nm->heap_len)
		nm->heap[i] = last;
	return top;
}

static void schedule(struct nm *nm, qp_time_ns t, enum nm_ev_type type, unsigned flow,
		     struct nm_pkt *pkt)
{
	struct nm_ev ev = { .t = t, .type = type, .flow = flow, .pkt = pkt };
	heap_push(nm, ev);
}

static double rng_unit(struct nm *nm)
{
	nm->rng ^= nm->rng << 13;
	nm->rng ^= nm->rng >> 7;
	nm->rng ^= nm->rng << 17;
	return (double)(nm->rng >> 11) / 9007199254740992.0;
}

/* ---- set-up ---- */

struct nm *nm_create(const struct nm_link *links, unsigned nlinks, uint32_t mtu_bytes,
		     uint64_t seed)
{
	struct nm *nm;

	if (nlinks == 0 || nlinks > NM_MAX_LINKS || mtu_bytes == 0)
		return NULL;
	for (unsigned i = 0; i < nlinks; i++)
		if (links[i].rate_bps == 0)
			return NULL;
	nm = calloc(1, sizeof(*nm));
	if (!nm)
		return NULL;
	for (unsigned i = 0; i < nlinks; i++)
		nm->links[i].cfg = links[i];
	nm->nlinks = nlinks;
	nm->mtu = mtu_bytes;
	nm->rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
	return nm;
}

void nm_destroy(struct nm *nm)
{
	if (!nm)
		return;
	for (size_t i = 0; i < nm->heap_len; i++)
		free(nm->heap[i].pkt); /* NULL for SEND, TIMER and NOTICE */
	free(nm->heap);
	free(nm);
}

qp_time_ns nm_path_rtt(const struct nm *nm, const unsigned *path, unsigned nhops)
{
	qp_time_ns rtt = 0;

	for (unsigned i = 0; i < nhops; i++) {
		const struct nm_link *l = &nm->links[path[i]].cfg;
		rtt += qp_tx_time_ns(nm->mtu, l->rate_bps) + 2 * l->prop_ns;
	}
	return rtt;
}

static qp_time_ns path_prop(const struct nm *nm, const struct nm_flow *f, unsigned upto)
{
	qp_time_ns d = 0;

	for (unsigned i = 0; i < upto; i++)
		d += nm->links[f->path[i]].cfg.prop_ns;
	return d;
}

static void sched_send(struct nm *nm, unsigned fi, qp_time_ns t)
{
	struct nm_flow *f = &nm->flows[fi];
	struct nm_ev ev = { .t = t, .type = NM_EV_SEND, .flow = fi, .gen = ++f->send_gen };
	heap_push(nm, ev);
}

int nm_add_flow(struct nm *nm, struct cc *cc, const unsigned *path, unsigned nhops,
		uint64_t bytes, qp_time_ns start_ns)
{
	struct nm_flow *f;
	struct cc_event ev = { .type = CC_EV_FLOW_START, .u.flow_bytes = bytes };

	if (!cc || nm->nflows == NM_MAX_FLOWS || nhops == 0 || nhops > NM_MAX_PATH)
		return -1;
	for (unsigned i = 0; i < nhops; i++)
		if (path[i] >= nm->nlinks)
			return -1;
	f = &nm->flows[nm->nflows];
	memset(f, 0, sizeof(*f));
	f->cc = cc;
	memcpy(f->path, path, nhops * sizeof(path[0]));
	f->nhops = nhops;
	f->bytes = bytes;
	f->start_ns = start_ns;
	f->fct_ns = QP_TIME_NEVER;
	f->timer_sched = QP_TIME_NEVER;
	f->last_send_ns = start_ns;
	cc_event(cc, &ev, start_ns);
	f->rate_seen = cc->rate_bps;
	f->sending = true;
	sched_send(nm, nm->nflows, start_ns);
	return (int)nm->nflows++;
}

/* ---- the sender ---- */

static bool may_send(const struct nm *nm, const struct nm_flow *f)
{
	uint32_t size = nm->mtu;

	if (f->done)
		return false;
	if (f->retx_pending == 0 && f->bytes && f->new_sent >= f->bytes)
		return false;
	return f->cc->cap_bytes == CC_CAP_NONE || f->inflight + size <= f->cc->cap_bytes ||
	       f->inflight == 0;
}

/* After anything that may let the flow send or change its pace: the next packet leaves
 * one packet time at the current rate after the last one (HPCC's ChangeRate), or now. */
static void resume(struct nm *nm, unsigned fi)
{
	struct nm_flow *f = &nm->flows[fi];
	qp_time_ns t = f->last_send_ns + qp_tx_time_ns(f->last_size ? f->last_size : nm->mtu,
						       f->cc->rate_bps);

	f->sending = true;
	sched_send(nm, fi, t > nm->now ? t : nm->now);
}

/* After the controller may have changed: follow its rate and timer. */
static void after_cc(struct nm *nm, unsigned fi)
{
	struct nm_flow *f = &nm->flows[fi];
	struct cc *cc = f->cc;
	bool rate_changed = cc->rate_bps != f->rate_seen;

	f->rate_seen = cc->rate_bps;
	if (!f->done && (rate_changed || !f->sending) && may_send(nm, f))
		resume(nm, fi);
	if (cc->timer_ns != f->timer_sched) {
		struct nm_ev ev = { .type = NM_EV_TIMER, .flow = fi, .gen = ++f->timer_gen };
		f->timer_sched = cc->timer_ns;
		if (cc->timer_ns != QP_TIME_NEVER) {
			ev.t = cc->timer_ns > nm->now ? cc->timer_ns : nm->now;
			heap_push(nm, ev);
		}
	}
}

static void on_send(struct nm *nm, const struct nm_ev *ev)
{
	struct nm_flow *f = &nm->flows[ev->flow];
	struct nm_pkt *p;
	uint32_t size = nm->mtu;

	if (ev->gen != f->send_gen || f->done)
		return;
	if (!may_send(nm, f)) {
		f->sending = false; /* the window, or nothing left: an ACK or loss resumes */
		return;
	}
	if (f->retx_pending) {
		if (f->retx_pending < size)
			size = (uint32_t)f->retx_pending;
		f->retx_pending -= size;
		f->retransmits++;
	} else {
		if (f->bytes && f->bytes - f->new_sent < size)
			size = (uint32_t)(f->bytes - f->new_sent);
		f->new_sent += size;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->flow = ev->flow;
	p->size = size;
	f->tx_seq += size;
	p->seq = f->tx_seq;
	p->sent_ns = nm->now;
	f->inflight += size;
	f->last_send_ns = nm->now;
	f->last_size = size;
	schedule(nm, nm->now, NM_EV_ARRIVE, ev->flow, p);
	sched_send(nm, ev->flow, nm->now + qp_tx_time_ns(size, f->cc->rate_bps));
}

static void deliver(struct nm *nm, unsigned fi, const struct cc_event *ev)
{
	cc_event(nm->flows[fi].cc, ev, nm->now);
}

static void on_ack(struct nm *nm, struct nm_pkt *p)
{
	struct nm_flow *f = &nm->flows[p->flow];
	struct cc_event ev = { .type = CC_EV_INT };

	f->inflight -= p->size;
	f->acked += p->size;
	ev.u.int_report.seq = p->seq;
	ev.u.int_report.snd_nxt = f->tx_seq;
	ev.u.int_report.hops = p->hops;
	ev.u.int_report.nhops = p->nhops;
	deliver(nm, p->flow, &ev);
	ev = (struct cc_event){ .type = CC_EV_RTT, .u.rtt_ns = nm->now - p->sent_ns };
	deliver(nm, p->flow, &ev);
	ev = (struct cc_event){ .type = CC_EV_ACKED, .u.acked_bytes = p->size };
	deliver(nm, p->flow, &ev);
	if (p->ce) {
		ev = (struct cc_event){ .type = CC_EV_CNP };
		deliver(nm, p->flow, &ev);
	}
	if (f->bytes && f->acked >= f->bytes && !f->done) {
		f->done = true;
		f->fct_ns = nm->now - f->start_ns;
		ev = (struct cc_event){ .type = CC_EV_FLOW_FINISH };
		deliver(nm, p->flow, &ev);
	}
	after_cc(nm, p->flow);
	free(p);
}

static void on_loss(struct nm *nm, struct nm_pkt *p)
{
	struct nm_flow *f = &nm->flows[p->flow];

	f->inflight -= p->size;
	f->retx_pending += p->size;
	if (!f->sending)
		resume(nm, p->flow);
	free(p);
}

/* ---- the links ---- */

static void on_arrive(struct nm *nm, struct nm_pkt *p)
{
	struct nm_flow *f = &nm->flows[p->flow];
	unsigned li = f->path[p->hop];
	struct nm_link_state *l = &nm->links[li];
	qp_time_ns start;

	if (l->cfg.buffer_bytes && l->queue_bytes + p->size > l->cfg.buffer_bytes) {
		l->drops++;
		schedule(nm, p->sent_ns + nm_path_rtt(nm, f->path, f->nhops), NM_EV_LOSS, p->flow, p);
		return;
	}
	start = l->last_departure > nm->now ? l->last_departure : nm->now;
	l->last_departure = start + qp_tx_time_ns(p->size, l->cfg.rate_bps);
	l->queue_bytes += p->size;
	if (l->queue_bytes > l->max_queue_bytes)
		l->max_queue_bytes = l->queue_bytes;
	if (l->flow_bytes[p->flow] == 0)
		l->flows_queued++;
	l->flow_bytes[p->flow] += p->size;
	schedule(nm, l->last_departure, NM_EV_DEPART, p->flow, p);

	if (l->cfg.early_threshold_bytes && l->queue_bytes >= l->cfg.early_threshold_bytes &&
	    (!l->noticed[p->flow] ||
	     nm->now - l->last_notice[p->flow] >= l->cfg.notice_interval_ns)) {
		struct nm_ev ev = {
			.t = nm->now + path_prop(nm, f, p->hop),
			.type = NM_EV_NOTICE,
			.flow = p->flow,
			.notice = {
				.switch_id = l->cfg.switch_id,
				.queue_bytes = (uint32_t)l->queue_bytes,
				.link_bps = l->cfg.rate_bps,
				.flows = (uint16_t)l->flows_queued,
				.reflected_ts_ns = nm->now,
			},
		};
		l->noticed[p->flow] = true;
		l->last_notice[p->flow] = nm->now;
		l->notices++;
		heap_push(nm, ev);
	}
}

static bool red_mark(struct nm *nm, const struct nm_link *c, uint64_t q)
{
	if (!c->ecn_kmax_bytes || q <= c->ecn_kmin_bytes)
		return false;
	if (q >= c->ecn_kmax_bytes)
		return true;
	return rng_unit(nm) < c->ecn_pmax * (double)(q - c->ecn_kmin_bytes) /
				      (double)(c->ecn_kmax_bytes - c->ecn_kmin_bytes);
}

static void on_depart(struct nm *nm, struct nm_pkt *p)
{
	struct nm_flow *f = &nm->flows[p->flow];
	struct nm_link_state *l = &nm->links[f->path[p->hop]];
	struct qp_int_hop *h;

	l->queue_bytes -= p->size;
	l->flow_bytes[p->flow] -= p->size;
	if (l->flow_bytes[p->flow] == 0)
		l->flows_queued--;
	if (p->nhops < NM_MAX_PATH) {
		h = &p->hops[p->nhops++];
		h->switch_id = l->cfg.switch_id;
		h->port = l->cfg.port;
		h->ts_ns = nm->now;
		h->tx_bytes = l->tx_bytes;
		h->qlen_bytes = (uint32_t)l->queue_bytes;
		h->link_bps = l->cfg.rate_bps;
	}
	l->tx_bytes += p->size;
	if (red_mark(nm, &l->cfg, l->queue_bytes)) {
		p->ce = true;
		l->marks++;
	}
	if (++p->hop < f->nhops)
		schedule(nm, nm->now + l->cfg.prop_ns, NM_EV_ARRIVE, p->flow, p);
	else
		schedule(nm, nm->now + l->cfg.prop_ns, NM_EV_RECV, p->flow, p);
}

static void on_recv(struct nm *nm, struct nm_pkt *p)
{
	struct nm_flow *f = &nm->flows[p->flow];

	f->delivered += p->size;
	schedule(nm, nm->now + path_prop(nm, f, f->nhops), NM_EV_ACK, p->flow, p);
}

/* ---- the loop ---- */

void nm_run_until(struct nm *nm, qp_time_ns t)
{
	while (nm->heap_len && nm->heap[0].t <= t) {
		struct nm_ev ev = heap_pop(nm);
		struct nm_flow *f = &nm->flows[ev.flow];

		nm->now = ev.t;
		switch (ev.type) {
		case NM_EV_SEND:
			on_send(nm, &ev);
			break;
		case NM_EV_ARRIVE:
			on_arrive(nm, ev.pkt);
			break;
		case NM_EV_DEPART:
			on_depart(nm, ev.pkt);
			break;
		case NM_EV_RECV:
			on_recv(nm, ev.pkt);
			break;
		case NM_EV_ACK:
			on_ack(nm, ev.pkt);
			break;
		case NM_EV_LOSS:
			on_loss(nm, ev.pkt);
			break;
		case NM_EV_NOTICE: {
			struct cc_event cev = { .type = CC_EV_NOTICE, .u.notice = ev.notice };
			deliver(nm, ev.flow, &cev);
			after_cc(nm, ev.flow);
			break;
		}
		case NM_EV_TIMER:
			if (ev.gen == f->timer_gen) {
				f->timer_sched = QP_TIME_NEVER;
				cc_timer(f->cc, nm->now);
				after_cc(nm, ev.flow);
			}
			break;
		}
	}
	nm->now = t;
}

qp_time_ns nm_now(const struct nm *nm)
{
	return nm->now;
}

uint64_t nm_queue_bytes(const struct nm *nm, unsigned link)
{
	return nm->links[link].queue_bytes;
}

uint64_t nm_max_queue_bytes(const struct nm *nm, unsigned link)
{
	return nm->links[link].max_queue_bytes;
}

void nm_reset_max_queue(struct nm *nm, unsigned link)
{
	nm->links[link].max_queue_bytes = nm->links[link].queue_bytes;
}

uint64_t nm_link_drops(const struct nm *nm, unsigned link)
{
	return nm->links[link].drops;
}

uint64_t nm_link_marks(const struct nm *nm, unsigned link)
{
	return nm->links[link].marks;
}

uint64_t nm_link_notices(const struct nm *nm, unsigned link)
{
	return nm->links[link].notices;
}

uint64_t nm_link_tx_bytes(const struct nm *nm, unsigned link)
{
	return nm->links[link].tx_bytes;
}

uint64_t nm_flow_delivered(const struct nm *nm, unsigned flow)
{
	return nm->flows[flow].delivered;
}

qp_time_ns nm_flow_fct(const struct nm *nm, unsigned flow)
{
	return nm->flows[flow].fct_ns;
}

uint64_t nm_flow_retransmits(const struct nm *nm, unsigned flow)
{
	return nm->flows[flow].retransmits;
}
