/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The virtual-time engine's event loop (qpace/sim.h): host wake-ups, NICs and their
 * links, the fabric's departures, timers; one lane, or two meeting every window
 * (sim_priv.h). Nothing here reads the real clock except the wall-clock figures of
 * sim_run itself (the progress line, wall_s, the lanes' busy seconds), which never reach
 * simulated state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qpace/soft.h"
#include "sim_priv.h"

#define SIM_PROGRESS_FIRST_S 2.0     /* a run shorter than this prints no progress */
#define SIM_PROGRESS_EVERY_S 1.0
#define SIM_WALL_CHECK 65536u        /* events between wall-clock reads */

/* Wall time for the figures above; CLOCK_MONOTONIC read directly because qp_now_ns() is
 * forbidden while the engine runs. */
static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void pending_peak(struct sim_lane *l)
{
	uint64_t n = l->q.n + sim_wakeq_len(&l->wq) + (l->in_n - l->in_head);

	if (n > l->max_pending)
		l->max_pending = n;
}

void sim_push(struct sim_lane *l, qp_time_ns t, enum sim_ev_type type, uint32_t id)
{
	if (sim_evq_push(&l->q, t, (uint32_t)type, id)) {
		l->nomem = true;
		l->stop = true;
	}
	pending_peak(l);
}

/* Actor @i (a host, or the fabric: s->nhosts) at @t if that is sooner than its wake-up:
 * moved there (wakeq.h), with the sequence number a new event would have had. */
static void actor_wake(struct sim_lane *l, uint32_t i, qp_time_ns t)
{
	if (t < l->now)
		t = l->now;
	if (t >= sim_wakeq_at(&l->wq, i))
		return;
	if (sim_wakeq_move(&l->wq, i, t, sim_evq_take_seq(&l->q), l->now, l->cur_t,
			   l->cur_seq)) {
		l->nomem = true;
		l->stop = true;
	}
	pending_peak(l);
}

qp_time_ns sim_clock(void *arg)
{
	return ((const struct sim_lane *)arg)->now;
}

void sim_wake(struct sim *s, size_t i, qp_time_ns t)
{
	actor_wake(&s->lane[0], (uint32_t)i, t);
}

static int timer_new(struct sim *s, sim_timer_fn fn, void *arg, uint32_t *out)
{
	uint32_t i = s->free_timer;

	if (i == UINT32_MAX) {
		struct sim_timer *tt = realloc(s->timers, (s->ntimers + 16) * sizeof(*tt));
		if (!tt)
			return -ENOMEM;
		s->timers = tt;
		for (uint32_t k = 0; k < 16; k++)
			tt[s->ntimers + k].next_free = k + 1 < 16 ? s->ntimers + k + 1 : UINT32_MAX;
		i = s->ntimers;
		s->ntimers += 16;
	}
	s->free_timer = s->timers[i].next_free;
	s->timers[i] = (struct sim_timer){ .fn = fn, .arg = arg };
	*out = i;
	return 0;
}

int sim_at(struct sim *s, qp_time_ns t, sim_timer_fn fn, void *arg)
{
	struct sim_lane *l = &s->lane[0];
	uint32_t i;

	if (timer_new(s, fn, arg, &i))
		return -ENOMEM;
	sim_push(l, t < l->now ? l->now : t, SIM_EV_TIMER, i);
	return l->nomem ? -ENOMEM : 0;
}

/* Split: the sync timers are a short list by time, those of one time in the order set
 * (a new one goes after them): samples, one or two. */
int sim_at_sync(struct sim *s, qp_time_ns t, sim_timer_fn fn, void *arg)
{
	size_t k;

	if (s->nlanes == 1)
		return sim_at(s, t, fn, arg);
	if (t < s->lane[0].now)
		t = s->lane[0].now;
	if (s->nsync == s->capsync) {
		size_t cap = s->capsync ? 2 * s->capsync : 4;
		struct sim_sync *n = realloc(s->sync, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->sync = n;
		s->capsync = cap;
	}
	for (k = s->nsync; k > 0 && s->sync[k - 1].t > t; k--)
		s->sync[k] = s->sync[k - 1];
	s->sync[k] = (struct sim_sync){ .t = t, .fn = fn, .arg = arg };
	s->nsync++;
	return 0;
}

/* Split: @m into @l's messages for the other lane. */
static void lane_send(struct sim_lane *l, const struct sim_msg *m)
{
	if (m->t < l->end) {
		/* an engine bug, not an input: the lookahead is what makes the split exact */
		fprintf(stderr, "qpace: virtual time: a frame due at %llu ns made in the "
			"window ending at %llu ns (lookahead %llu ns)\n",
			(unsigned long long)m->t, (unsigned long long)l->end,
			(unsigned long long)l->s->lookahead);
		abort();
	}
	if (l->nout == l->capout) {
		size_t cap = l->capout ? 2 * l->capout : 1024;
		struct sim_msg *n = realloc(l->out, cap * sizeof(*n));
		if (!n) {
			sim_pool_put(&l->pool, m->k);
			l->nomem = l->stop = true;
			return;
		}
		l->out = n;
		l->capout = cap;
	}
	l->out[l->nout++] = *m;
}

/* ---- the fabric ---- */

/* After an ingress the fabric's next work can only have moved to a frame queued since:
 * the fabric's hint says when the earliest of those is due (its key: split, the switches
 * hand frames to their hosts a lookahead early, tx_early_ns). After an emit, the exact
 * earliest key. */
static void fabric_schedule(struct sim_lane *l, bool scan)
{
	struct sw_fabric *f = l->s->fab;
	/* While anything is paused the exact key (the tree's first, sched.c), as before PFC's
	 * times were in the tree: a departure may let an ingress go (XON) and move keys later */
	qp_time_ns t = scan || f->pfc_xoff ? sw_fabric_next_key_ns(f) : f->next_hint;

	f->next_hint = QP_TIME_NEVER;
	actor_wake(l, (uint32_t)l->s->nhosts, t);
}

static void fabric_run(struct sim_lane *l)
{
	sw_fabric_emit(l->s->fab, l->now);
	fabric_schedule(l, true);
}

/* A frame from the switch reaches @sh now, and the host takes its turn. */
static inline void frame_in(struct sim_lane *l, struct sim_host *sh, const uint8_t *frame,
			    size_t len)
{
	soft_host_input(sh->soft, frame, len, l->now);
	actor_wake(l, sh->idx, l->now);
}

/* A sim port sends: the frame reaches the host behind it at @leave, the model's leave
 * time — now, unsplit; split, a lookahead or more ahead, so it goes to the hosts' lane. */
void sim_deliver(void *arg, const uint8_t *frame, size_t len, qp_time_ns leave)
{
	struct sim_host *sh = arg;
	struct sim *s = sh->s;
	struct sim_lane *l = s->fl;
	struct sim_pkt *k;

	if (s->nlanes == 1) {
		frame_in(l, sh, frame, len);
		return;
	}
	k = sim_pool_get(&l->pool, len);
	if (!k) {
		l->nomem = l->stop = true;
		return;
	}
	memcpy(k->data, frame, len);
	lane_send(l, &(struct sim_msg){ .t = leave, .type = SIM_EV_DELIVER, .id = sh->idx,
					.k = k });
}

/* ---- host NICs and links ---- */

/* If the NIC is free, the next frame the host has goes on the wire now: built by the
 * host straight into the buffer that crosses the link (no copy). */
static void nic_try(struct sim_host *sh)
{
	struct sim *s = sh->s;
	struct sim_lane *l = &s->lane[0];
	struct sim_pkt *k;
	uint64_t num;
	int len;

	if (sh->nic_busy)
		return;
	if (!(k = sim_pool_get(&l->pool, SOFT_FRAME_MAX))) {
		l->nomem = l->stop = true;
		return;
	}
	len = soft_host_output(sh->soft, l->now, k->data, SOFT_FRAME_MAX);
	if (len <= 0) {
		sim_pool_put(&l->pool, k);
		return;
	}
	k->len = (uint32_t)len;
	if (l->now > sh->nic_free_ns)
		sh->nic_rem = 0;     /* idle since: a new busy period */
	num = (uint64_t)(len < 60 ? 60 : len) * 8u * QP_NS_PER_S + sh->nic_rem;
	sh->nic_free_ns = l->now + num / sh->nic_bps;
	sh->nic_rem = num % sh->nic_bps;
	sh->nic_busy = true;
	sh->tx_frames++;
	sim_push(l, sh->nic_free_ns, SIM_EV_NIC, sh->idx);
	if (s->nlanes > 1) {
		lane_send(l, &(struct sim_msg){ .t = sh->nic_free_ns + sh->delay_ns,
						.type = SIM_EV_ARRIVE, .id = sh->idx, .k = k });
		return;
	}
	sim_fifo_add(&sh->fly_head, &sh->fly_tail, k);
	sim_push(l, sh->nic_free_ns + sh->delay_ns, SIM_EV_ARRIVE, sh->idx);
}

void sim_nic_ready(void *arg)
{
	nic_try(arg);
}

/* The oldest frame on the host's link arrives at its switch port. */
static void arrive(struct sim_lane *l, struct sim_host *sh)
{
	struct sim_pkt *k = sim_fifo_take(&sh->fly_head, &sh->fly_tail);

	sw_ingress(sh->port, k->data, k->len, NULL, l->now);
	sim_pool_put(&l->pool, k);
	fabric_schedule(l, false);
}

/* Split: the oldest frame from the switch reaches the host (as sim_deliver, unsplit). */
static void deliver(struct sim_lane *l, struct sim_host *sh)
{
	struct sim_pkt *k = sim_fifo_take(&sh->rx_head, &sh->rx_tail);

	frame_in(l, sh, k->data, k->len);
	sim_pool_put(&l->pool, k);
}

/* A host's turn, ordered as the real-time loop orders it: the context's progress when
 * due (frames in were handed to the host already), the application, the agent's service;
 * then its NIC, and its next wake-up. Nothing polls: a turn follows each event that can
 * open a gate (a grant or an ACK in, an agent timer), so pending pieces are offered to
 * their gates on every turn, before the application and again after the agent ran. */
static void host_run(struct sim_lane *l, struct sim_host *sh)
{
	struct sim *s = l->s;
	struct host *h = &sh->h;
	qp_time_ns now = l->now, next = QP_TIME_NEVER;

	if (qp_ctx_deadline(h->ctx) <= now)
		qp_ctx_progress(h->ctx, now);
	qp_ctx_retry(h->ctx, now);
	if (s->app)
		next = s->app(s->app_arg, sh->idx, now);
	host_service(h, now);
	qp_ctx_retry(h->ctx, now);
	nic_try(sh);
	next = qp_time_min(next, host_deadline(h));
	/* Something due now again (a gate that reopens this nanosecond): the next ns. */
	actor_wake(l, sh->idx, next <= now ? now + 1 : next);
}

static void timer_run(struct sim_lane *l, uint32_t i)
{
	struct sim *s = l->s;
	struct sim_timer t = s->timers[i];

	s->timers[i].next_free = s->free_timer;
	s->free_timer = i;
	t.fn(t.arg, l->now);
}

static void dispatch(struct sim_lane *l, const struct sim_ev *e)
{
	struct sim_host *hosts = l->s->hosts;   /* e->id is a host's, but a timer's index */

	switch ((enum sim_ev_type)e->type) {
	case SIM_EV_NIC:
		hosts[e->id].nic_busy = false;
		nic_try(&hosts[e->id]);
		break;
	case SIM_EV_ARRIVE:
		arrive(l, &hosts[e->id]);
		break;
	case SIM_EV_TIMER:
		timer_run(l, e->id);
		break;
	case SIM_EV_DELIVER:
		deliver(l, &hosts[e->id]);
		break;
	}
}

enum lane_ret { LANE_LIMIT, LANE_EMPTY, LANE_STOP, LANE_CHUNK };

static inline bool key_before(qp_time_ns t, uint64_t seq, qp_time_ns u, uint64_t useq)
{
	return t < u || (t == u && seq < useq);
}

/* @l's events, in (time, sequence) order, with times at most @limit: at most @max of
 * them, until one stops the lane. With @inbox, the lane's inbox (sim_lane.in: frames
 * from the other lane, in key order) is a third source beside the queue and the
 * wake-ups. Inlined twice: the one-lane loop has no inbox to look at. */
static inline __attribute__((always_inline)) enum lane_ret
lane_events_in(struct sim_lane *l, qp_time_ns limit, uint64_t max, bool inbox)
{
	struct sim *s = l->s;
	struct sim_ev e;

	for (uint64_t n = 0; n < max; n++) {
		if (l->stop)
			return LANE_STOP;
		qp_time_ns wt = QP_TIME_NEVER;
		uint64_t wseq = 0;
		bool wake = sim_wakeq_first(&l->wq, &wt, &wseq);
		const struct sim_ev *in = inbox && l->in_head < l->in_n ? &l->in[l->in_head] : NULL;
		if (!l->q.n && !wake && !in)
			return LANE_EMPTY;
		if (in && (!wake || key_before(in->t, in->seq, wt, wseq)) &&
		    (!l->q.n || key_before(in->t, in->seq, l->q.h[0].t, l->q.h[0].seq))) {
			if (in->t > limit)
				return LANE_LIMIT;
			e = *in;
			if (++l->in_head == l->in_n)
				l->in_head = l->in_n = 0;
		} else if (wake && (!l->q.n || key_before(wt, wseq, l->q.h[0].t, l->q.h[0].seq))) {
			if (wt > limit)
				return LANE_LIMIT;
			uint32_t i = sim_wakeq_pop(&l->wq);
			l->now = l->cur_t = wt;
			l->cur_seq = wseq;
			l->events++;
			if (i < s->nhosts)
				host_run(l, &s->hosts[i]);
			else
				fabric_run(l);
			continue;
		} else {
			if (sim_evq_next(&l->q) > limit)
				return LANE_LIMIT;
			sim_evq_pop(&l->q, &e);
		}
		l->now = l->cur_t = e.t;
		l->cur_seq = e.seq;
		l->events++;
		dispatch(l, &e);
	}
	return LANE_CHUNK;
}

static enum lane_ret lane_events(struct sim_lane *l, qp_time_ns limit, uint64_t max)
{
	return lane_events_in(l, limit, max, false);
}

void sim_lane_window(struct sim_lane *l, qp_time_ns until)
{
	double t0 = wall_s();

	lane_events_in(l, qp_time_min(l->end - 1, until), UINT64_MAX, true);
	l->busy_s += wall_s() - t0;
}

/* The earliest key in @l, QP_TIME_NEVER when nothing is pending. */
static qp_time_ns lane_first(const struct sim_lane *l)
{
	qp_time_ns wt = QP_TIME_NEVER;
	uint64_t wseq;

	sim_wakeq_first(&l->wq, &wt, &wseq);
	wt = qp_time_min(wt, sim_evq_next(&l->q));
	return l->in_head < l->in_n ? qp_time_min(wt, l->in[l->in_head].t) : wt;
}

static uint64_t events_all(const struct sim *s)
{
	return s->lane[0].events + (s->nlanes > 1 ? s->lane[1].events : 0);
}

/* "sim: 12.5 ms simulated (52%), 2.1 M events/s, 1.3 s wall, ETA 1.2 s" */
static void progress(const struct sim *s, double wall, double elapsed, qp_time_ns start_ns,
		     uint64_t ev0, qp_time_ns eta_end)
{
	qp_time_ns now = s->lane[0].now;
	double sim_ms = (double)(now - SIM_START_NS) / 1e6;
	double rate = elapsed > 0 ? (double)(events_all(s) - ev0) / elapsed : 0;

	fprintf(stderr, "\rqpace: virtual time %.1f ms, %.2f M events/s, %.1f s wall", sim_ms,
		rate / 1e6, wall);
	if (eta_end != QP_TIME_NEVER && eta_end > now && now > start_ns)
		fprintf(stderr, ", ETA %.0f s   ", elapsed * (double)(eta_end - now) /
						       (double)(now - start_ns));
	else
		fputs("   ", stderr);
}

/* No event left: the stale wake-ups the engine used to pop before it found its queue
 * empty moved its clock to the last of them (or to @until, past which it stopped). */
static enum sim_end idle_end(struct sim *s, qp_time_ns until)
{
	qp_time_ns last = 0, now = s->lane[0].now;
	enum sim_end end = SIM_END_IDLE;

	for (unsigned i = 0; i < s->nlanes; i++) {
		last = qp_time_max(last, sim_wakeq_ghost_last(&s->lane[i].wq));
		now = qp_time_max(now, s->lane[i].now);
	}
	if (last > until) {
		now = until;
		end = SIM_END_TIME;
	} else if (last > now) {
		now = last;
	}
	for (unsigned i = 0; i < s->nlanes; i++)
		s->lane[i].now = now;
	return end;
}

static enum sim_end stopped(const struct sim *s)
{
	for (unsigned i = 0; i < s->nlanes; i++)
		if (s->lane[i].nomem)
			return SIM_END_NOMEM;
	return SIM_END_STOPPED;
}

struct run_clock {
	double t0, next;
	qp_time_ns start_ns, eta_end;
	uint64_t ev0;
	bool printed;
};

static void run_tick(struct sim *s, struct run_clock *c)
{
	if (!s->progress)
		return;
	double w = wall_s();
	if (w >= c->next) {
		progress(s, w - c->t0, w - c->t0, c->start_ns, c->ev0, c->eta_end);
		c->printed = true;
		c->next = w + SIM_PROGRESS_EVERY_S;
	}
}

static enum sim_end run_one(struct sim *s, qp_time_ns until, struct run_clock *c)
{
	struct sim_lane *l = &s->lane[0];

	for (;;) {
		switch (lane_events(l, until, SIM_WALL_CHECK)) {
		case LANE_STOP:
			return stopped(s);
		case LANE_EMPTY:
			return idle_end(s, until);
		case LANE_LIMIT:
			l->now = until;
			return SIM_END_TIME;
		case LANE_CHUNK:
			break;
		}
		if (s->interrupt && *s->interrupt)
			l->stop = true;
		run_tick(s, c);
	}
}

/* @m into @l's inbox, which a lane reads in key order beside its queue: the switches
 * hand frames on in the order of their leave times less the lookahead, so the frames for
 * the hosts come in time order (with links of one delay) and are appended, sequence
 * numbers drawn from the queue's counter; one out of order (a longer link) goes into
 * the queue instead. Either way the same key: the same order. */
static void inbox_add(struct sim_lane *l, const struct sim_msg *m)
{
	if (l->in_head < l->in_n && m->t < l->in[l->in_n - 1].t) {
		sim_push(l, m->t, (enum sim_ev_type)m->type, m->id);
		return;
	}
	if (l->in_n == l->capin) {
		size_t cap = l->capin ? 2 * l->capin : 1024;
		struct sim_ev *n = realloc(l->in, cap * sizeof(*n));
		if (!n) {
			sim_push(l, m->t, (enum sim_ev_type)m->type, m->id);
			return;
		}
		l->in = n;
		l->capin = cap;
	}
	l->in[l->in_n++] = (struct sim_ev){ .t = m->t, .seq = sim_evq_take_seq(&l->q),
					    .type = m->type, .id = m->id };
	pending_peak(l);
}

/* Split: what each lane made in the last window, into the other's queue (the hosts' into
 * its inbox), in the order it was made; the buffers each let go of the other's, back. */
static void exchange(struct sim *s)
{
	struct sim_lane *h = &s->lane[0], *f = &s->lane[1];

	for (size_t i = 0; i < h->nout; i++) {
		struct sim_host *sh = &s->hosts[h->out[i].id];
		sim_fifo_add(&sh->fly_head, &sh->fly_tail, h->out[i].k);
		sim_push(f, h->out[i].t, SIM_EV_ARRIVE, h->out[i].id);
	}
	if (h->in_head && h->in_n + f->nout > h->capin) {   /* room at the front */
		memmove(h->in, h->in + h->in_head, (h->in_n - h->in_head) * sizeof(*h->in));
		h->in_n -= h->in_head;
		h->in_head = 0;
	}
	for (size_t i = 0; i < f->nout; i++) {
		const struct sim_msg *m = &f->out[i];
		struct sim_host *sh = &s->hosts[m->id];
		sim_fifo_add(&sh->rx_head, &sh->rx_tail, m->k);
		inbox_add(h, m);
	}
	h->nout = f->nout = 0;
	sim_pool_return(&h->pool, &f->pool);
	sim_pool_return(&f->pool, &h->pool);
}

/* Split: windows of the lookahead from the earliest pending key; a sync timer ends the
 * window before it and runs between two, both lanes at its time. */
static enum sim_end run_split(struct sim *s, qp_time_ns until, struct run_clock *c)
{
	struct sim_lane *h = &s->lane[0], *f = &s->lane[1];

	for (;;) {
		exchange(s);
		if (h->stop || f->stop)
			return stopped(s);
		if (s->interrupt && *s->interrupt)
			return SIM_END_STOPPED;
		qp_time_ns t0 = qp_time_min(lane_first(h), lane_first(f));
		qp_time_ns ts = s->nsync ? s->sync[0].t : QP_TIME_NEVER;
		if (t0 == QP_TIME_NEVER && ts == QP_TIME_NEVER)
			return idle_end(s, until);
		if (qp_time_min(t0, ts) > until) {
			h->now = f->now = until;
			return SIM_END_TIME;
		}
		if (ts <= t0) {
			struct sim_sync y = s->sync[0];
			memmove(s->sync, s->sync + 1, --s->nsync * sizeof(*s->sync));
			h->now = qp_time_max(h->now, y.t);
			f->now = qp_time_max(f->now, y.t);
			y.fn(y.arg, y.t);
			continue;
		}
		h->end = f->end = qp_time_min(t0 + s->lookahead, ts);
		s->windows++;
		if (s->th) {
			sim_threads_window(s, until);
		} else {
			sim_lane_window(h, until);
			sim_lane_window(f, until);
		}
		run_tick(s, c);
	}
}

enum sim_end sim_run(struct sim *s, qp_time_ns until, qp_time_ns eta_end_ns)
{
	struct run_clock c = { .t0 = wall_s(), .start_ns = s->lane[0].now,
			       .eta_end = eta_end_ns, .ev0 = events_all(s) };
	enum sim_end end;

	c.next = c.t0 + SIM_PROGRESS_FIRST_S;
	for (unsigned i = 0; i < s->nlanes; i++)
		s->lane[i].stop = false;
	qp_clock_forbid("virtual time runs (sim_run): use the context's clock");
	if (s->nlanes == 1) {
		end = run_one(s, until, &c);
	} else if (s->threads > 1 && !s->th && sim_threads_start(s)) {
		end = SIM_END_NOMEM;
	} else {
		end = run_split(s, until, &c);
	}
	qp_clock_forbid(NULL);
	if (c.printed)
		fputc('\n', stderr);
	s->wall_s += wall_s() - c.t0;
	return end;
}

void sim_stop(struct sim *s)
{
	s->lane[0].stop = true;
}

const char *sim_end_str(enum sim_end e)
{
	static const char *const names[] = {
		[SIM_END_TIME] = "time limit reached",
		[SIM_END_STOPPED] = "stopped",
		[SIM_END_IDLE] = "no event left",
		[SIM_END_NOMEM] = "out of memory for events or frames",
	};

	return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "UNKNOWN";
}
