/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Replay windows (qpace/fb_replay.h): in order, reordered within the window, duplicates,
 * too old, far ahead of the clock, a fresh receiver, a full sender table; and against a
 * reference model (every number ever accepted kept) on random streams: the window accepts
 * exactly what the rule says and never the same number twice, evictions included. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/fb_replay.h"
#include "test_rng.h"

#define W FB_REPLAY_WINDOW
#define START 1000000000000ULL          /* the receiver's clock at start: 1000 s */
#define NOW (START + 5 * QP_NS_PER_S)
#define GAP 3000ULL                     /* sparse: a signer's clock between messages */

static void test_in_order_reorder_duplicate(void **state)
{
	struct fb_replay r;
	uint64_t s = START + 100;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 16, START), 0);
	for (unsigned i = 0; i < 3 * W; i++)          /* in order, far more than the window */
		assert_int_equal(fb_replay_check(&r, 1, s + i * GAP, NOW), 0);
	/* every one of them again: the last W are remembered, the rest are below the floor */
	for (unsigned i = 0; i < 3 * W; i++)
		assert_int_equal(fb_replay_check(&r, 1, s + i * GAP, NOW),
				 i >= 2 * W ? -EALREADY : -ESTALE);
	/* a message that was never received but lies inside the window is new (reordered) */
	assert_int_equal(fb_replay_check(&r, 1, s + (3 * W - 5) * GAP + 1, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 1, s + (3 * W - 5) * GAP + 1, NOW), -EALREADY);
	/* just below the window: too old */
	assert_int_equal(fb_replay_check(&r, 1, s + 2 * W * GAP - 1, NOW), -ESTALE);
	/* the same numbers from another sender are that sender's own */
	assert_int_equal(fb_replay_check(&r, 2, s + 10 * GAP, NOW), 0);
	assert_int_equal(r.senders, 2);
	fb_replay_fini(&r);
}

/* Reordering within the window: a burst of W numbers arriving in reverse is accepted
 * whole; one more late number beyond W behind is not. */
static void test_reorder_within_window(void **state)
{
	struct fb_replay r;
	uint64_t s = START + 7;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 1, START), 0);
	for (unsigned i = W; i-- > 0;)
		assert_int_equal(fb_replay_check(&r, 9, s + i * GAP, NOW), 0);
	for (unsigned i = 0; i < W; i++)
		assert_int_equal(fb_replay_check(&r, 9, s + i * GAP, NOW), -EALREADY);
	/* a new highest pushes the smallest out: it becomes too old */
	assert_int_equal(fb_replay_check(&r, 9, s + W * GAP, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 9, s, NOW), -ESTALE);
	/* late but above the floor and never seen: accepted though the window is full (it
	 * takes the place of the smallest) */
	assert_int_equal(fb_replay_check(&r, 9, s + GAP + 1, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 9, s + GAP, NOW), -ESTALE);
	fb_replay_fini(&r);
}

/* Freshness: nothing signed before the receiver started; nothing more than
 * FB_REPLAY_AHEAD_NS ahead of its clock; a number far ahead of the window but within the
 * clock's tolerance moves the window (a sender whose messages were lost). */
static void test_fresh_receiver_and_clock(void **state)
{
	struct fb_replay r;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 4, START), 0);
	assert_int_equal(fb_replay_check(&r, 3, START - 1, NOW), -ESTALE);
	assert_int_equal(fb_replay_check(&r, 3, 17, NOW), -ESTALE);
	assert_int_equal(r.senders, 0);                  /* refused: nothing kept */
	assert_int_equal(fb_replay_check(&r, 3, START, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 3, NOW + FB_REPLAY_AHEAD_NS + 1, NOW), -ERANGE);
	assert_int_equal(fb_replay_check(&r, 3, UINT64_MAX, NOW), -ERANGE);
	assert_int_equal(fb_replay_check(&r, 3, NOW + FB_REPLAY_AHEAD_NS, NOW), 0);
	/* behind it, in the window: still new */
	assert_int_equal(fb_replay_check(&r, 3, NOW, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 3, NOW, NOW), -EALREADY);
	/* invalid sizes */
	fb_replay_fini(&r);
	assert_int_equal(fb_replay_init(&r, 0, START), -EINVAL);
	assert_int_equal(fb_replay_init(&r, FB_REPLAY_MAX_SENDERS + 1, START), -EINVAL);
}

/* A full table: the least recently heard sender makes room, and is counted; its old
 * messages stay refused (the floor for new senders rose above its highest), while
 * messages signed after it are taken from anyone. */
static void test_sender_table_full(void **state)
{
	struct fb_replay r;
	uint64_t t = START + 50;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 4, START), 0);   /* one set of 4 */
	assert_int_equal(r.nsets * r.ways, 4);
	for (uint32_t id = 1; id <= 4; id++)
		assert_int_equal(fb_replay_check(&r, id, t + id, NOW), 0);
	assert_int_equal(fb_replay_check(&r, 1, t + 10, NOW), 0);  /* 1 heard again: 2 is LRU */
	assert_int_equal(r.evictions, 0);
	/* a fifth sender whose message is older than what 2 had: refused, nothing evicted */
	assert_int_equal(fb_replay_check(&r, 5, t + 1, NOW), -ESTALE);
	assert_int_equal(r.evictions, 0);
	assert_int_equal(fb_replay_check(&r, 5, t + 20, NOW), 0);
	assert_int_equal(r.evictions, 1);
	assert_int_equal(r.senders, 4);
	/* 2 was forgotten: its old message is refused, not taken as new */
	assert_int_equal(fb_replay_check(&r, 2, t + 2, NOW), -ESTALE);
	/* 2 comes back with a fresh message: it takes the place of the LRU (3) */
	assert_int_equal(fb_replay_check(&r, 2, t + 30, NOW), 0);
	assert_int_equal(r.evictions, 2);
	assert_int_equal(fb_replay_check(&r, 3, t + 3, NOW), -ESTALE);
	assert_int_equal(fb_replay_check(&r, 1, t + 10, NOW), -EALREADY);  /* 1 kept */
	fb_replay_fini(&r);
}

/* ---- against a reference: every accepted number kept, the rule applied directly ---- */

#define REF_MAX 2048

struct ref {
	uint64_t acc[REF_MAX];
	unsigned n;
	uint64_t floor;
};

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Too old below max(start, the (W+1)th largest accepted + 1); at or above it, new iff
 * never accepted. */
static int ref_check(struct ref *m, uint64_t seq)
{
	uint64_t floor = m->floor;

	qsort(m->acc, m->n, sizeof(m->acc[0]), cmp_desc);
	if (m->n > W && m->acc[W] + 1 > floor)
		floor = m->acc[W] + 1;
	if (seq < floor)
		return -ESTALE;
	for (unsigned i = 0; i < m->n; i++)
		if (m->acc[i] == seq)
			return -EALREADY;
	m->acc[m->n++] = seq;
	return 0;
}

static void test_against_reference(void **state)
{
	static struct ref m;
	static uint64_t gen[2 * REF_MAX];
	uint64_t seed = 12345, base = START + 1000, accepted = 0, dups = 0, old = 0;
	unsigned ngen = 0;
	struct fb_replay r;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 1, START), 0);
	m = (struct ref){ .floor = START };
	for (unsigned i = 0; i < 2 * REF_MAX && m.n < REF_MAX; i++) {
		uint64_t k = test_rng(&seed) % 10, seq;

		/* mostly forward, some reordered up to ~2W behind, some sent again (recently or
		 * long ago), some never sent and older than everything */
		if (k < 5)
			base += 1 + test_rng(&seed) % 5000;
		if (k == 8 && ngen)
			seq = gen[ngen - 1 - test_rng(&seed) % (ngen < 2 * W ? ngen : 2 * W)];
		else if (k == 9 && ngen)
			seq = gen[test_rng(&seed) % ngen];
		else if (k == 7)
			seq = START - 1 - test_rng(&seed) % 1000;
		else
			seq = base - (k >= 5 ? test_rng(&seed) % (2 * W * 2500) : 0);
		gen[ngen++] = seq;
		int want = ref_check(&m, seq), got = fb_replay_check(&r, 1, seq, NOW);

		assert_int_equal(got, want);
		accepted += got == 0;
		dups += got == -EALREADY;
		old += got == -ESTALE;
	}
	print_message("reference: %llu accepted, %llu replays, %llu too old: all as the rule\n",
		      (unsigned long long)accepted, (unsigned long long)dups,
		      (unsigned long long)old);
	assert_true(accepted > 1000 && dups > 50 && old > 50);
	fb_replay_fini(&r);
}

/* Many senders through a small table: nothing is ever accepted twice, whatever was
 * evicted. */
static void test_never_twice_with_evictions(void **state)
{
	enum { SENDERS = 40, PER = 300 };
	static uint64_t sent[SENDERS][PER];
	static uint8_t taken[SENDERS][PER];
	uint64_t seed = 777, clock = START + 1, evicted_before, replays = 0, took = 0;
	struct fb_replay r;
	(void)state;

	assert_int_equal(fb_replay_init(&r, 8, START), 0);
	for (unsigned i = 0; i < SENDERS * PER * 3; i++) {
		unsigned s = (unsigned)(test_rng(&seed) % SENDERS);
		unsigned j = (unsigned)(test_rng(&seed) % PER);

		if (!sent[s][j]) {            /* a new message of s: signed now */
			clock += 1 + test_rng(&seed) % 100;
			sent[s][j] = clock;
		}
		evicted_before = r.evictions;
		if (fb_replay_check(&r, s, sent[s][j], clock) == 0) {
			assert_int_equal(taken[s][j], 0);
			taken[s][j] = 1;
			took++;
		} else {
			replays++;
		}
		assert_true(r.evictions >= evicted_before);
	}
	print_message("40 senders, table of 8: %llu accepted, %llu refused, %llu evictions, "
		      "none twice\n", (unsigned long long)took, (unsigned long long)replays,
		      (unsigned long long)r.evictions);
	assert_true(r.evictions > 100);
	fb_replay_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_reorder_duplicate),
		cmocka_unit_test(test_reorder_within_window),
		cmocka_unit_test(test_fresh_receiver_and_clock),
		cmocka_unit_test(test_sender_table_full),
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_never_twice_with_evictions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
