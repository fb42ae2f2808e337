/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The virtual-time event queue: time order, ties in insertion order, growth, and the
 * same order as a sort of (time, sequence) over random schedules, near and far. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "evq.h"
#include "test_rng.h"

static void test_order_and_ties(void **state)
{
	struct sim_evq q;
	struct sim_ev e;
	(void)state;

	assert_int_equal(sim_evq_init(&q, 2), 0);
	assert_int_equal(sim_evq_next(&q), QP_TIME_NEVER);
	assert_false(sim_evq_pop(&q, &e));
	/* three at t=50 pushed as ids 1, 2, 3 between others: they come out 1, 2, 3 */
	assert_int_equal(sim_evq_push(&q, 50, 0, 1), 0);
	assert_int_equal(sim_evq_push(&q, 70, 0, 9), 0);
	assert_int_equal(sim_evq_push(&q, 50, 0, 2), 0);
	assert_int_equal(sim_evq_push(&q, 10, 7, 8), 0);
	assert_int_equal(sim_evq_push(&q, 50, 0, 3), 0);
	assert_int_equal(q.cap, 8);              /* grew 2 -> 4 -> 8 */
	assert_int_equal(sim_evq_next(&q), 10);
	static const uint32_t want[] = { 8, 1, 2, 3, 9 };
	for (size_t i = 0; i < 5; i++) {
		assert_true(sim_evq_pop(&q, &e));
		assert_int_equal(e.id, want[i]);
	}
	assert_int_equal(e.t, 70);
	assert_false(sim_evq_pop(&q, &e));
	assert_int_equal(q.pushed, 5);
	assert_int_equal(q.popped, 5);
	assert_int_equal(q.max_n, 5);
	sim_evq_fini(&q);
}

static int cmp_ev(const void *a, const void *b)
{
	const struct sim_ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Interleaved pushes and pops (times never before the last popped, as the engine does):
 * each pop is the earliest (time, sequence) of what is queued at that moment, found by a
 * linear scan of a reference list. */
static void test_matches_reference(void **state)
{
	enum { N = 4000 };
	struct sim_ev *ref = calloc(N, sizeof(*ref)), e;
	bool *queued = calloc(N, sizeof(*queued));
	struct sim_evq q;
	uint64_t seed = 12, now = 0;
	size_t pushed = 0, popped = 0;
	(void)state;

	assert_non_null(ref);
	assert_non_null(queued);
	assert_int_equal(sim_evq_init(&q, 0), 0);
	while (popped < N) {
		if (pushed < N && (q.n == 0 || test_rng(&seed) % 3)) {
			qp_time_ns t = now + test_rng(&seed) % 8;   /* few times: many ties */
			assert_int_equal(sim_evq_push(&q, t, 0, (uint32_t)pushed), 0);
			ref[pushed] = (struct sim_ev){ .t = t, .seq = pushed, .id = (uint32_t)pushed };
			queued[pushed++] = true;
			continue;
		}
		size_t best = N;
		for (size_t i = 0; i < pushed; i++)
			if (queued[i] && (best == N || cmp_ev(&ref[i], &ref[best]) < 0))
				best = i;
		assert_true(sim_evq_pop(&q, &e));
		assert_int_equal(e.id, best);
		assert_int_equal(e.t, ref[best].t);
		queued[best] = false;
		now = e.t;
		popped++;
	}
	assert_false(sim_evq_pop(&q, &e));
	sim_evq_fini(&q);
	free(ref);
	free(queued);
}

/* Times spread from a few ns to 2 s ahead (the engine's NIC and link events beside its
 * far timers and superseded wake-ups): each pop is still the earliest (time, sequence)
 * queued, found by a scan of a reference list. */
static void test_wide_times_match_reference(void **state)
{
	enum { N = 6000 };
	static const uint64_t span[] = { 8, 20000, 60000000, 2000000000 };
	struct sim_ev *ref = calloc(N, sizeof(*ref)), e;
	bool *queued = calloc(N, sizeof(*queued));
	struct sim_evq q;
	uint64_t seed = 7, now = 1000000000;
	size_t pushed = 0, popped = 0;
	(void)state;

	assert_non_null(ref);
	assert_non_null(queued);
	assert_int_equal(sim_evq_init(&q, 0), 0);
	while (popped < N) {
		if (pushed < N && (q.n == 0 || test_rng(&seed) % 3)) {
			qp_time_ns t = now + test_rng(&seed) % span[test_rng(&seed) % 4];
			assert_int_equal(sim_evq_push(&q, t, 1, (uint32_t)pushed), 0);
			ref[pushed] = (struct sim_ev){ .t = t, .seq = pushed, .id = (uint32_t)pushed };
			queued[pushed++] = true;
			continue;
		}
		size_t best = N;
		for (size_t i = 0; i < pushed; i++)
			if (queued[i] && (best == N || cmp_ev(&ref[i], &ref[best]) < 0))
				best = i;
		assert_int_equal(sim_evq_next(&q), ref[best].t);
		assert_true(sim_evq_pop(&q, &e));
		assert_int_equal(e.id, best);
		assert_int_equal(e.t, ref[best].t);
		queued[best] = false;
		now = e.t;
		popped++;
	}
	assert_false(sim_evq_pop(&q, &e));
	assert_true(q.max_n > 1000);
	sim_evq_fini(&q);
	free(ref);
	free(queued);
}

/* Pushed all first, then popped: exactly qsort's order on (time, sequence). */
static void test_bulk_equals_sort(void **state)
{
	enum { N = 50000 };
	struct sim_ev *all = calloc(N, sizeof(*all)), e;
	struct sim_evq q;
	uint64_t seed = 99;
	(void)state;

	assert_int_equal(sim_evq_init(&q, 16), 0);
	for (size_t i = 0; i < N; i++) {
		qp_time_ns t = test_rng(&seed) % 1000;
		all[i] = (struct sim_ev){ .t = t, .seq = i, .id = (uint32_t)i };
		assert_int_equal(sim_evq_push(&q, t, 3, (uint32_t)i), 0);
	}
	qsort(all, N, sizeof(*all), cmp_ev);
	for (size_t i = 0; i < N; i++) {
		assert_true(sim_evq_pop(&q, &e));
		assert_int_equal(e.id, all[i].id);
		assert_int_equal(e.t, all[i].t);
		assert_int_equal(e.type, 3);
	}
	assert_int_equal(q.n, 0);
	sim_evq_fini(&q);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_ties),
		cmocka_unit_test(test_matches_reference),
		cmocka_unit_test(test_bulk_equals_sort),
		cmocka_unit_test(test_wide_times_match_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
