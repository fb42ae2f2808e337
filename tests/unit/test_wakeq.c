/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The actors' wake-ups (sim/wakeq.h) against the engine they replace: one event pushed
 * per wake-up into the event queue, stale ones popped and ignored. Driven by the same
 * random reactions (wake an actor now, a few ns on, or at a shared deadline; queue other
 * events, many at the same ns), both run the same (time, what, whom) sequence, ties
 * included, and when nothing is left the old engine's clock (moved by the stale events it
 * popped last) is where the last ghost says. Each run is made with no solo actor and with
 * one (kept outside the heap: wakeq.h), first and last. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "evq.h"
#include "wakeq.h"
#include "test_rng.h"

enum { NA = 6, KIND_WAKE = 0, KIND_OTHER = 1 };

struct model {
	bool old;                  /* the old engine: wake-ups as events */
	struct sim_evq q;
	struct sim_wakeq w;        /* the new one's */
	qp_time_ns wake_at[NA];    /* the old one's */
	qp_time_ns now, cur_t;
	uint64_t cur_seq, rng, runs, pops;
};

static void model_init(struct model *m, bool old, uint64_t seed, uint32_t solo)
{
	memset(m, 0, sizeof(*m));
	m->old = old;
	m->rng = seed;
	m->now = 1000;
	assert_int_equal(sim_evq_init(&m->q, 4), 0);
	assert_int_equal(sim_wakeq_init(&m->w, NA, solo), 0);
	for (int i = 0; i < NA; i++)
		m->wake_at[i] = QP_TIME_NEVER;
}

static void model_fini(struct model *m)
{
	sim_evq_fini(&m->q);
	sim_wakeq_fini(&m->w);
}

static void wake(struct model *m, uint32_t a, qp_time_ns t)
{
	if (t < m->now)
		t = m->now;
	if (m->old) {
		if (t >= m->wake_at[a])
			return;
		m->wake_at[a] = t;
		assert_int_equal(sim_evq_push(&m->q, t, KIND_WAKE, a), 0);
		return;
	}
	if (t >= sim_wakeq_at(&m->w, a))
		return;
	assert_int_equal(sim_wakeq_move(&m->w, a, t, sim_evq_take_seq(&m->q), m->now, m->cur_t,
					m->cur_seq), 0);
}

/* What an actor or event does when it runs: a few wake-ups and events, drawn at random. */
static void react(struct model *m)
{
	uint64_t n = 1 + test_rng(&m->rng) % 3;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t r = test_rng(&m->rng);
		uint32_t a = (uint32_t)(r % NA);
		qp_time_ns grid = (m->now / 16 + 1 + (r >> 8) % 3) * 16;   /* shared deadlines */
		static const qp_time_ns near[] = { 0, 0, 1, 2, 7 };
		switch ((r >> 4) % 4) {
		case 0:
		case 1:
			wake(m, a, m->now + near[(r >> 12) % 5]);
			break;
		case 2:
			wake(m, a, grid);
			break;
		default:
			assert_int_equal(sim_evq_push(&m->q, m->now + (r >> 12) % 5, KIND_OTHER,
						      (uint32_t)(r >> 20) % 1000), 0);
		}
	}
}

/* The next event that does something (its kind and id out); false when none is left. */
static bool step(struct model *m, uint32_t *kind, uint32_t *id)
{
	struct sim_ev e;
	qp_time_ns wt;
	uint64_t ws;

	for (;;) {
		if (m->old) {
			if (!sim_evq_pop(&m->q, &e))
				return false;
			m->now = e.t;
			m->pops++;
			if (e.type == KIND_WAKE) {
				if (e.t != m->wake_at[e.id])
					continue;              /* stale */
				m->wake_at[e.id] = QP_TIME_NEVER;
			}
			break;
		}
		bool w = sim_wakeq_first(&m->w, &wt, &ws);
		if (w && (!m->q.n || wt < m->q.h[0].t || (wt == m->q.h[0].t && ws < m->q.h[0].seq))) {
			e = (struct sim_ev){ .t = wt, .seq = ws, .type = KIND_WAKE,
					     .id = sim_wakeq_pop(&m->w) };
		} else if (!sim_evq_pop(&m->q, &e)) {
			return false;
		}
		m->now = m->cur_t = e.t;
		m->cur_seq = e.seq;
		m->pops++;
		break;
	}
	*kind = e.type;
	*id = e.id;
	m->runs++;
	return true;
}

static void run_both(uint64_t seed, uint64_t steps, uint32_t solo)
{
	struct model o, n;
	uint32_t ko, io, kn, in;
	uint64_t solo_runs = 0;

	model_init(&o, true, seed, SIM_WAKEQ_NONE);
	model_init(&n, false, seed, solo);
	for (uint32_t a = 0; a < NA; a++) {
		wake(&o, a, 1000);
		wake(&n, a, 1000);
	}
	for (uint64_t s = 0; s < steps; s++) {
		bool go = step(&o, &ko, &io), gn = step(&n, &kn, &in);
		assert_int_equal(go, gn);
		if (!go)
			break;
		assert_int_equal(o.now, n.now);
		assert_int_equal(ko, kn);
		assert_int_equal(io, in);
		solo_runs += kn == KIND_WAKE && in == solo;
		react(&o);
		react(&n);
	}
	/* drained without reacting: the same runs, and the old clock ends at the last ghost */
	while (step(&o, &ko, &io)) {
		assert_true(step(&n, &kn, &in));
		assert_int_equal(ko, kn);
		assert_int_equal(io, in);
		assert_int_equal(o.now, n.now);
	}
	assert_false(step(&n, &kn, &in));
	qp_time_ns last = sim_wakeq_ghost_last(&n.w);
	assert_int_equal(o.now, last > n.now ? last : n.now);
	assert_int_equal(o.runs, n.runs);
	/* the stale wake-ups the old engine popped: the new one pops none */
	if (seed == 1)
		print_message("seed %llu: %llu runs, old engine %llu pops\n", (unsigned long long)seed, (unsigned long long)n.runs, (unsigned long long)o.pops);
	assert_true(o.pops > n.pops + steps / 20);
	assert_int_equal(n.pops, n.runs);
	if (solo != SIM_WAKEQ_NONE)
		assert_true(solo_runs > steps / (4 * NA));   /* the solo's slot was used */
	model_fini(&o);
	model_fini(&n);
}

static void test_same_order_as_stale_events(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		run_both(seed, 20000, SIM_WAKEQ_NONE);
		run_both(seed, 20000, NA - 1);
		run_both(seed, 20000, 0);
	}
}

/* One actor moved earlier and back to a time it had: the first event at that time (the
 * ghost's, the older sequence) runs it, ahead of an event queued in between. */
static void moved_back(uint32_t solo)
{
	struct model n;
	uint32_t k, id;

	model_init(&n, false, 1, solo);
	wake(&n, 0, 2000);                                  /* seq 0 at 2000 */
	assert_int_equal(sim_evq_push(&n.q, 2000, KIND_OTHER, 7), 0);   /* seq 1 */
	wake(&n, 0, 1500);                                  /* seq 2: 2000's is a ghost */
	assert_int_equal(sim_wakeq_at(&n.w, 0), 1500);
	assert_true(step(&n, &k, &id));
	assert_int_equal(k, KIND_WAKE);
	assert_int_equal(n.now, 1500);
	wake(&n, 0, 2000);                                  /* back: takes seq 0 */
	assert_true(step(&n, &k, &id));
	assert_int_equal(k, KIND_WAKE);                     /* before the other (seq 1) */
	assert_int_equal(n.cur_seq, 0);
	assert_true(step(&n, &k, &id));
	assert_int_equal(k, KIND_OTHER);
	assert_int_equal(id, 7);
	/* at 2000 again, now after the other: seq 3 (left as a ghost at the move back) runs */
	wake(&n, 0, 2000);
	assert_int_equal(n.w.h[n.w.a[0].pos].seq, 3);
	assert_true(step(&n, &k, &id));
	assert_int_equal(k, KIND_WAKE);
	assert_false(step(&n, &k, &id));
	model_fini(&n);
}

static void test_moved_back_keeps_older_sequence(void **state)
{
	(void)state;
	moved_back(SIM_WAKEQ_NONE);
	moved_back(0);   /* actor 0 the solo: the same, from its own slot */
}

static void test_solo_out_of_range(void **state)
{
	struct sim_wakeq w;
	(void)state;

	assert_int_equal(sim_wakeq_init(&w, 4, 4), -EINVAL);
	sim_wakeq_fini(&w);
	assert_int_equal(sim_wakeq_init(&w, 4, 3), 0);
	assert_int_equal(sim_wakeq_len(&w), 0);
	assert_int_equal(sim_wakeq_move(&w, 3, 10, 0, 0, 0, 0), 0);
	assert_int_equal(sim_wakeq_move(&w, 1, 20, 1, 0, 0, 0), 0);
	assert_int_equal(sim_wakeq_len(&w), 2);
	assert_int_equal(w.n, 1);                  /* the solo is not in the heap */
	assert_int_equal(sim_wakeq_pop(&w), 3);
	assert_int_equal(sim_wakeq_pop(&w), 1);
	assert_int_equal(sim_wakeq_len(&w), 0);
	sim_wakeq_fini(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_order_as_stale_events),
		cmocka_unit_test(test_moved_back_keeps_older_sequence),
		cmocka_unit_test(test_solo_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
