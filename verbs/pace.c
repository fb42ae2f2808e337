/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The pacing gate's shell: the rate source (maps the agent's table, reopens it after an
 * agent restart), the wait (sleep, spin, or sleep then spin), and the pacer, which feeds
 * table slots to the pure gate (verbs/gate.c), logs fallback once, and waits until the gate
 * opens.
 *
 * Why sleep *then* spin: on these machines a wakeup from sleep lands ~40-80 us late
 * (shared/notes/machine-facts.md); at 5 Gb/s one 4 KiB piece is due every 6.6 us, so a
 * sleep-only pacer falls far behind, while a spin-only one burns a core at 10 Mb/s. The
 * hybrid sleeps until spin_ns before the deadline and spins the rest. The timer slack of a
 * thread that waits here is set to 1 ns (PR_SET_TIMERSLACK, once per thread): the default
 * 50 us slack is added to every sleep otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "qpace/gate.h"
#include "qpace/units.h"

#define PACER_MAX_WAIT_NS QP_NS_PER_MS  /* re-read the table at least this often */
#define SPIN_FD_CHECK_NS (20 * QP_NS_PER_US)

static void set_timer_slack_once(void)
{
	static _Thread_local int done;

	if (!done) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		done = 1;
	}
}

static bool fd_readable(int fd, qp_time_ns timeout_ns)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / QP_NS_PER_S),
		.tv_nsec = (long)(timeout_ns % QP_NS_PER_S),
	};

	return ppoll(&pfd, 1, &ts, NULL) > 0;
}

/* Sleep until @until; false when fd became readable first. */
static bool sleep_until(qp_time_ns until, int fd, qp_time_ns now)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until / QP_NS_PER_S),
		.tv_nsec = (long)(until % QP_NS_PER_S),
	};

	set_timer_slack_once();
	if (fd >= 0)
		return !fd_readable(fd, qp_time_since(until, now));
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return true;
}

/* Spin until @until; false when fd became readable first (checked every 20 us). */
static bool spin_until(qp_time_ns until, int fd, qp_time_ns *now)
{
	qp_time_ns next_check = *now + SPIN_FD_CHECK_NS;

	while ((*now = qp_now_ns()) < until) {
		if (fd >= 0 && *now >= next_check) {
			if (fd_readable(fd, 0))
				return false;
			next_check = *now + SPIN_FD_CHECK_NS;
		}
		qp_cpu_relax();
	}
	return true;
}

qp_time_ns qp_wait_until(const struct qp_wait *w, qp_time_ns deadline, int fd,
			 struct qp_gate_stats *st)
{
	qp_time_ns start = qp_now_ns(), now = start, spin = w->spin_ns ? w->spin_ns
							       : QP_WAIT_DEF_SPIN_NS;
	qp_time_ns spin_from = w->mode == QP_WAIT_SPIN ? 0
			     : w->mode == QP_WAIT_SLEEP ? deadline
			     : (deadline > spin ? deadline - spin : 0);
	bool go_on = true;

	if (now < spin_from) {
		go_on = sleep_until(spin_from, fd, now);
		now = qp_now_ns();
		if (st)
			st->sleeps++;
	}
	if (go_on && now < deadline) {
		qp_time_ns spin_start = now;

		spin_until(deadline, fd, &now);
		if (st)
			st->spin_ns += now - spin_start;
	}
	if (st)
		st->wait_ns += now - start;
	return now;
}

static const char *const wait_mode_names[QP_WAIT_MODE_COUNT] = {
	[QP_WAIT_HYBRID] = "hybrid",
	[QP_WAIT_SLEEP] = "sleep",
	[QP_WAIT_SPIN] = "spin",
};

const char *qp_wait_mode_str(enum qp_wait_mode m)
{
	return (unsigned)m < QP_WAIT_MODE_COUNT ? wait_mode_names[m] : "UNKNOWN";
}

int qp_wait_mode_parse(const char *s, enum qp_wait_mode *out)
{
	for (unsigned m = 0; m < QP_WAIT_MODE_COUNT; m++) {
		if (strcmp(s, wait_mode_names[m]) == 0) {
			*out = (enum qp_wait_mode)m;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- the rate source ---- */

static void default_log(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "qpace: %s\n", line);
}

static void src_setup(struct qp_rate_src *s, qp_time_ns stale_ns,
		      void (*log)(void *, const char *), void *log_arg)
{
	s->stale_ns = stale_ns ? stale_ns : QP_GATE_DEF_STALE_NS;
	s->log = log ? log : default_log;
	s->log_arg = log_arg;
}

void qp_rate_src_init(struct qp_rate_src *s, const char *name, qp_time_ns stale_ns,
		      void (*log)(void *, const char *), void *log_arg)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name ? name : QP_RATETABLE_DEFAULT);
	s->owned = true;
	src_setup(s, stale_ns, log, log_arg);
}

void qp_rate_src_init_table(struct qp_rate_src *s, struct qp_ratetable *t, qp_time_ns stale_ns,
			    void (*log)(void *, const char *), void *log_arg)
{
	memset(s, 0, sizeof(*s));
	s->table = t;
	s->owned = false;
	src_setup(s, stale_ns, log, log_arg);
}

static bool src_fresh(const struct qp_rate_src *s, qp_time_ns now)
{
	qp_time_ns hb = qp_ratetable_heartbeat_ns(s->table);

	return hb && qp_time_since(now, hb) <= s->stale_ns;
}

struct qp_ratetable *qp_rate_src_get(struct qp_rate_src *s, qp_time_ns now)
{
	struct qp_ratetable *t;
	char err[sizeof(s->last_err)], line[sizeof(err) + 64];
	int rc;

	if (!s->owned || !s->name[0] || now < s->retry_ns || (s->table && src_fresh(s, now)))
		return s->table;
	s->retry_ns = now + QP_RATE_SRC_RETRY_NS;
	rc = qp_ratetable_open(s->name, &t, err, sizeof(err));
	if (rc == 0) {
		/* A new segment (agent restarted) or the same one: keep the one that beats. */
		if (s->table && qp_ratetable_epoch(t) == qp_ratetable_epoch(s->table)) {
			qp_ratetable_close(t);
			return s->table;
		}
		qp_ratetable_close(s->table);
		s->table = t;
		s->last_err[0] = 0;
		snprintf(line, sizeof(line), "rate table %s mapped (%u slots)", s->name,
			 qp_ratetable_nslots(t));
		s->log(s->log_arg, line);
		return t;
	}
	if (strcmp(err, s->last_err) != 0) {
		snprintf(s->last_err, sizeof(s->last_err), "%s", err);
		snprintf(line, sizeof(line), "%s; retrying every %llu ms", err,
			 (unsigned long long)(QP_RATE_SRC_RETRY_NS / QP_NS_PER_MS));
		s->log(s->log_arg, line);
	}
	return s->table;
}

void qp_rate_src_fini(struct qp_rate_src *s)
{
	if (s->owned)
		qp_ratetable_close(s->table);
	s->table = NULL;
}

/* ---- the pacer ---- */

void qp_pacer_init(struct qp_pacer *p, const struct qp_gate_params *gp,
		   const struct qp_wait *w, struct qp_rate_src *src, uint32_t qpn,
		   qp_time_ns now)
{
	memset(p, 0, sizeof(*p));
	qp_gate_init(&p->gate, gp, now);
	if (w)
		p->wait = *w;
	p->src = src;
	p->qpn = qpn;
}

static struct qp_ratetable *pacer_read(struct qp_pacer *p, qp_time_ns now,
				       struct qp_gate_input *in, bool *wanted)
{
	struct qp_ratetable *t = p->src ? qp_rate_src_get(p->src, now) : NULL;

	memset(in, 0, sizeof(*in));
	if (t) {
		in->have_table = true;
		in->heartbeat_ns = qp_ratetable_heartbeat_ns(t);
		qp_ratetable_fallback(t, &in->policy_hold_ns, &in->policy_safe_permille);
		in->have_slot = qp_ratetable_lookup(t, p->qpn, &p->slot_hint, &in->slot) == 0;
	}
	/* The window applies under the agent's cap and in a hold, even with no table left. */
	*wanted = p->inflight && qp_gate_wants_inflight(&p->gate, in);
	if (*wanted && p->inflight(p->inflight_arg, &in->inflight_bytes, &in->unit_bytes) == 0)
		in->have_inflight = true;
	return t;
}

void qp_pacer_input(struct qp_pacer *p, qp_time_ns now, struct qp_gate_input *in)
{
	bool wanted;

	pacer_read(p, now, in, &wanted);
}

/* After a verdict on @in from table @t (@wanted: the window was asked for): what
 * pacer_again compares, or nothing. Kept only where the gate, as this verdict left it,
 * would ask for the window on the same slot exactly as it did (the verdict may have put
 * the slot's cap in force). */
static void pacer_remember(struct qp_pacer *p, const struct qp_ratetable *t,
			   const struct qp_gate_input *in, bool wanted, uint64_t want,
			   unsigned flags, qp_time_ns now, int rc)
{
	p->memo.valid = false;
	if (rc == 0 || p->gate.closed == QP_GATE_OPEN || !t || !in->have_slot ||
	    wanted != (p->inflight && qp_gate_wants_inflight(&p->gate, in)))
		return;
	p->memo.wants_inflight = wanted;
	p->memo.have_inflight = in->have_inflight;
	p->memo.inflight_bytes = in->inflight_bytes;
	p->memo.unit_bytes = in->unit_bytes;
	p->memo.table = t;
	p->memo.slot = p->slot_hint;
	p->memo.seq = in->slot.seq;
	p->memo.want = want;
	p->memo.flags = flags;
	p->memo.at_ns = now;
	p->memo.valid = true;
}

/* The last closed verdict again when nothing it was given has changed: the same table and
 * slot sequence, policy, bytes in flight, want and flags, within PACER_MAX_WAIT_NS of it
 * (the slot's 32-bit sequence cannot come round in that time). */
static bool pacer_again(struct qp_pacer *p, uint64_t want, unsigned flags, qp_time_ns now,
			struct qp_gate_verdict *v)
{
	struct qp_ratetable *t;
	qp_time_ns hold;
	uint32_t pm, unit = 0;
	uint64_t bytes = 0;

	if (!p->memo.valid || want != p->memo.want || flags != p->memo.flags ||
	    now < p->memo.at_ns || now - p->memo.at_ns > PACER_MAX_WAIT_NS)
		return false;
	t = p->src ? qp_rate_src_get(p->src, now) : NULL;
	if (!t || t != p->memo.table || qp_ratetable_seq(t, p->memo.slot) != p->memo.seq)
		return false;
	qp_ratetable_fallback(t, &hold, &pm);
	if (hold != p->gate.policy_hold_ns || pm != p->gate.policy_safe_permille)
		return false;
	if (p->memo.wants_inflight &&
	    ((p->inflight(p->inflight_arg, &bytes, &unit) == 0) != p->memo.have_inflight ||
	     (p->memo.have_inflight &&
	      (bytes != p->memo.inflight_bytes || unit != p->memo.unit_bytes))))
		return false;
	return qp_gate_closed_again(&p->gate, qp_ratetable_heartbeat_ns(t), now, v);
}

static void pacer_log_events(struct qp_pacer *p, const struct qp_gate_verdict *v)
{
	char line[300], rate[32], safe[32];
	void (*log)(void *, const char *) = p->src ? p->src->log : default_log;
	const struct qp_gate *g = &p->gate;

	if (!(v->events & (QP_GATE_EV_FALLBACK | QP_GATE_EV_RECOVERED | QP_GATE_EV_SAFE)))
		return;
	qp_fmt_rate(v->rate_bps, rate, sizeof(rate));
	qp_fmt_rate(qp_gate_safe_bps(g), safe, sizeof(safe));
	if (v->events & QP_GATE_EV_RECOVERED)
		snprintf(line, sizeof(line), "qp 0x%06x: the agent's rate is in force again (%sb/s)",
			 p->qpn, rate);
	else if (v->events & QP_GATE_EV_FALLBACK && v->mode == QP_GATE_HOLD)
		snprintf(line, sizeof(line), "qp 0x%06x: %s: holding the agent's last rate %sb/s, "
			 "window and credits for %llu ms, then the safe rate %sb/s", p->qpn,
			 qp_gate_fallback_str(v->fallback), rate,
			 (unsigned long long)(qp_gate_hold_ns(g) / QP_NS_PER_MS), safe);
	else if (v->events & QP_GATE_EV_FALLBACK)
		snprintf(line, sizeof(line), "qp 0x%06x: pacing at the safe rate %sb/s: %s", p->qpn,
			 rate, qp_gate_fallback_str(v->fallback));
	else
		snprintf(line, sizeof(line), "qp 0x%06x: no agent for %llu ms: pacing at the safe "
			 "rate %sb/s, window and credits off", p->qpn,
			 (unsigned long long)(qp_gate_hold_ns(g) / QP_NS_PER_MS), rate);
	log(p->src ? p->src->log_arg : NULL, line);
}

int qp_pacer_try(struct qp_pacer *p, uint64_t want, unsigned flags, qp_time_ns now,
		 struct qp_gate_verdict *v)
{
	struct qp_gate_input in;
	struct qp_ratetable *t;
	bool wanted;
	int rc;

	if (pacer_again(p, want, flags, now, v))
		return -EAGAIN;
	t = pacer_read(p, now, &in, &wanted);
	rc = qp_gate_take(&p->gate, &in, want, flags, now, v);
	pacer_log_events(p, v);
	pacer_remember(p, t, &in, wanted, want, flags, now, rc);
	return rc;
}

int qp_pacer_take(struct qp_pacer *p, uint64_t want, unsigned flags, int fd,
		  void (*poll_fn)(void *arg, qp_time_ns now), void *poll_arg,
		  struct qp_gate_verdict *v)
{
	qp_time_ns now = qp_now_ns();

	while (qp_pacer_try(p, want, flags, now, v) < 0) {
		qp_time_ns until = qp_time_min(v->retry_ns, now + PACER_MAX_WAIT_NS);

		now = qp_wait_until(&p->wait, until, fd, &p->gate.stats);
		if (poll_fn)
			poll_fn(poll_arg, now);
	}
	return 0;
}
