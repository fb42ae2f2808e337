/* The virtual-time engine's event loop (qpace/sim.h): host wake-ups, NICs and their
 * links, the fabric's departures, timers. Nothing here reads the real clock except the
 * wall-clock figures of sim_run itself (the progress line and wall_s), which never reach
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

static inline void pending_peak(struct sim *s)
{
	uint64_t n = s->q.n + sim_wakeq_len(&s->wq);

	if (n > s->max_pending)
		s->max_pending = n;
}

void sim_push(struct sim *s, qp_time_ns t, enum sim_ev_type type, uint32_t id)
{
	if (sim_evq_push(&s->q, t, (uint32_t)type, id)) {
		s->nomem = true;
		s->stop = true;
	}
	pending_peak(s);
}

/* Actor @i (a host, or the fabric: s->nhosts) at @t if that is sooner than its wake-up:
 * moved there (wakeq.h), with the sequence number a new event would have had. */
static void actor_wake(struct sim *s, uint32_t i, qp_time_ns t)
{
	if (t < s->now)
		t = s->now;
	if (t >= sim_wakeq_at(&s->wq, i))
		return;
	if (sim_wakeq_move(&s->wq, i, t, sim_evq_take_seq(&s->q), s->now, s->cur_t,
			   s->cur_seq)) {
		s->nomem = true;
		s->stop = true;
	}
	pending_peak(s);
}

qp_time_ns sim_clock(void *arg)
{
	return ((const struct sim *)arg)->now;
}

void sim_wake(struct sim *s, size_t i, qp_time_ns t)
{
	actor_wake(s, (uint32_t)i, t);
}

int sim_at(struct sim *s, qp_time_ns t, sim_timer_fn fn, void *arg)
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
	sim_push(s, t < s->now ? s->now : t, SIM_EV_TIMER, i);
	return s->nomem ? -ENOMEM : 0;
}

/* ---- the fabric ---- */

/* After an ingress the next departure can only have moved to a frame queued since: the
 * fabric's hint says when the earliest of those leaves. After an emit, a full scan. */
static void fabric_schedule(struct sim *s, bool scan)
{
	/* PFC's own times (a PAUSE repeat) are in no hint: while anything is paused, scan */
	qp_time_ns t = scan || s->fab->pfc_xoff ? sw_fabric_next_ns(s->fab) : s->fab->next_hint;

	s->fab->next_hint = QP_TIME_NEVER;
	actor_wake(s, (uint32_t)s->nhosts, t);
}

static void fabric_run(struct sim *s)
{
	sw_fabric_emit(s->fab, s->now);
	fabric_schedule(s, true);
}

/* A sim port sends: the frame reaches the host behind it now, the model's leave time. */
void sim_deliver(void *arg, const uint8_t *frame, size_t len)
{
	struct sim_host *sh = arg;

	soft_host_input(sh->soft, frame, len, sh->s->now);
	sim_wake(sh->s, sh->idx, sh->s->now);
}

/* ---- host NICs and links ---- */

/* If the NIC is free, the next frame the host has goes on the wire now. */
static void nic_try(struct sim_host *sh)
{
	struct sim *s = sh->s;
	struct sim_pkt *k;
	uint64_t num;
	int len;

	if (sh->nic_busy)
		return;
	len = soft_host_output(sh->soft, s->now, sh->buf, sizeof(sh->buf));
	if (len <= 0)
		return;
	k = sim_pool_get(&s->pool, (size_t)len);
	if (!k) {
		s->nomem = s->stop = true;
		return;
	}
	memcpy(k->data, sh->buf, (size_t)len);
	if (s->now > sh->nic_free_ns)
		sh->nic_rem = 0;     /* idle since: a new busy period */
	num = (uint64_t)(len < 60 ? 60 : len) * 8u * QP_NS_PER_S + sh->nic_rem;
	sh->nic_free_ns = s->now + num / sh->nic_bps;
	sh->nic_rem = num % sh->nic_bps;
	sh->nic_busy = true;
	sh->tx_frames++;
	if (sh->fly_tail)
		sh->fly_tail->next = k;
	else
		sh->fly_head = k;
	sh->fly_tail = k;
	sim_push(s, sh->nic_free_ns, SIM_EV_NIC, sh->idx);
	sim_push(s, sh->nic_free_ns + sh->delay_ns, SIM_EV_ARRIVE, sh->idx);
}

void sim_nic_ready(void *arg)
{
	nic_try(arg);
}

/* The oldest frame on the host's link arrives at its switch port. */
static void arrive(struct sim *s, struct sim_host *sh)
{
	struct sim_pkt *k = sh->fly_head;

	sh->fly_head = k->next;
	if (!sh->fly_head)
		sh->fly_tail = NULL;
	sw_ingress(sh->port, k->data, k->len, NULL, s->now);
	sim_pool_put(&s->pool, k);
	fabric_schedule(s, false);
}

/* A host's turn, ordered as the real-time loop orders it: the context's progress when
 * due (frames in were handed to the host already), the application, the agent's service;
 * then its NIC, and its next wake-up. Nothing polls: a turn follows each event that can
 * open a gate (a grant or an ACK in, an agent timer), so pending pieces are offered to
 * their gates on every turn, before the application and again after the agent ran. */
static void host_run(struct sim *s, struct sim_host *sh)
{
	struct host *h = &sh->h;
	qp_time_ns next = QP_TIME_NEVER;

	if (qp_ctx_deadline(h->ctx) <= s->now)
		qp_ctx_progress(h->ctx, s->now);
	qp_ctx_retry(h->ctx, s->now);
	if (s->app)
		next = s->app(s->app_arg, sh->idx, s->now);
	host_service(h, s->now);
	qp_ctx_retry(h->ctx, s->now);
	nic_try(sh);
	next = qp_time_min(next, host_deadline(h));
	/* Something due now again (a gate that reopens this nanosecond): the next ns. */
	sim_wake(s, sh->idx, next <= s->now ? s->now + 1 : next);
}

static void timer_run(struct sim *s, uint32_t i)
{
	struct sim_timer t = s->timers[i];

	s->timers[i].next_free = s->free_timer;
	s->free_timer = i;
	t.fn(t.arg, s->now);
}

static void dispatch(struct sim *s, const struct sim_ev *e)
{
	switch ((enum sim_ev_type)e->type) {
	case SIM_EV_NIC:
		s->hosts[e->id].nic_busy = false;
		nic_try(&s->hosts[e->id]);
		break;
	case SIM_EV_ARRIVE:
		arrive(s, &s->hosts[e->id]);
		break;
	case SIM_EV_TIMER:
		timer_run(s, e->id);
		break;
	}
}

/* "sim: 12.5 ms simulated (52%), 2.1 M events/s, 1.3 s wall, ETA 1.2 s" */
static void progress(const struct sim *s, double wall, double elapsed, qp_time_ns start_ns,
		     uint64_t ev0, qp_time_ns eta_end)
{
	double sim_ms = (double)(s->now - SIM_START_NS) / 1e6;
	double rate = elapsed > 0 ? (double)(s->events - ev0) / elapsed : 0;

	fprintf(stderr, "\rqpace: virtual time %.1f ms, %.2f M events/s, %.1f s wall", sim_ms,
		rate / 1e6, wall);
	if (eta_end != QP_TIME_NEVER && eta_end > s->now && s->now > start_ns)
		fprintf(stderr, ", ETA %.0f s   ", elapsed * (double)(eta_end - s->now) /
						       (double)(s->now - start_ns));
	else
		fputs("   ", stderr);
}

/* No event left: the stale wake-ups the engine used to pop before it found its queue
 * empty moved its clock to the last of them (or to @until, past which it stopped). */
static enum sim_end idle_end(struct sim *s, qp_time_ns until)
{
	qp_time_ns last = sim_wakeq_ghost_last(&s->wq);

	if (last > until) {
		s->now = until;
		return SIM_END_TIME;
	}
	if (last > s->now)
		s->now = last;
	return SIM_END_IDLE;
}

enum sim_end sim_run(struct sim *s, qp_time_ns until, qp_time_ns eta_end_ns)
{
	double t0 = wall_s(), next_progress = t0 + SIM_PROGRESS_FIRST_S;
	qp_time_ns start_ns = s->now;
	uint64_t ev0 = s->events, check = 0;
	bool printed = false;
	enum sim_end end = SIM_END_TIME;
	struct sim_ev e;

	s->stop = false;
	qp_clock_forbid("virtual time runs (sim_run): use the context's clock");
	for (;;) {
		if (s->stop) {
			end = s->nomem ? SIM_END_NOMEM : SIM_END_STOPPED;
			break;
		}
		qp_time_ns wt = QP_TIME_NEVER;
		uint64_t wseq = 0;
		bool wake = sim_wakeq_first(&s->wq, &wt, &wseq);
		if (!s->q.n && !wake) {
			end = idle_end(s, until);
			break;
		}
		if (wake && (!s->q.n || wt < s->q.h[0].t ||
			     (wt == s->q.h[0].t && wseq < s->q.h[0].seq))) {
			if (wt > until) {
				s->now = until;
				break;
			}
			uint32_t i = sim_wakeq_pop(&s->wq);
			s->now = s->cur_t = wt;
			s->cur_seq = wseq;
			s->events++;
			if (i < s->nhosts)
				host_run(s, &s->hosts[i]);
			else
				fabric_run(s);
		} else {
			if (sim_evq_next(&s->q) > until) {
				s->now = until;
				break;
			}
			sim_evq_pop(&s->q, &e);
			s->now = s->cur_t = e.t;
			s->cur_seq = e.seq;
			s->events++;
			dispatch(s, &e);
		}
		if (++check == SIM_WALL_CHECK) {
			check = 0;
			if (s->interrupt && *s->interrupt)
				s->stop = true;
			if (!s->progress)
				continue;
			double w = wall_s();
			if (w >= next_progress) {
				progress(s, w - t0, w - t0, start_ns, ev0, eta_end_ns);
				printed = true;
				next_progress = w + SIM_PROGRESS_EVERY_S;
			}
		}
	}
	qp_clock_forbid(NULL);
	if (printed)
		fputc('\n', stderr);
	s->wall_s += wall_s() - t0;
	return end;
}

void sim_stop(struct sim *s)
{
	s->stop = true;
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
