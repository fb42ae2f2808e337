/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch's table of flows that want INT (switchsim/int_want.c): a wish is taken,
 * repeated, withdrawn, forgotten SW_WANT_HOLD_NS after it was last heard; the table grows
 * to SW_WANT_MAX and then refuses; entries survive the deletions around them (linear
 * probing's back shifts). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/int_want.h"

#define S QP_NS_PER_S

static struct fb_want want(uint32_t src, uint32_t dst, uint32_t qp, uint32_t every)
{
	return (struct fb_want){ .flow = { src, dst, 0xc000, qp }, .int_every = every,
				 .int_interval_ns = every * 1000u };
}

static void test_take_find_withdraw(void **state)
{
	struct sw_wants t = { 0 };
	struct fb_want w = want(1, 2, 0x11, 4);
	const struct sw_want *got;
	(void)state;

	assert_null(sw_wants_find(&t, 1, 2, 0x11, 0));
	assert_int_equal(sw_wants_take(&t, &w, 10), 0);
	got = sw_wants_find(&t, 1, 2, 0x11, 20);
	assert_non_null(got);
	assert_int_equal(got->every, 4);
	assert_int_equal(got->interval_ns, 4000);
	assert_null(sw_wants_find(&t, 2, 1, 0x11, 20));     /* the other direction */
	assert_null(sw_wants_find(&t, 1, 2, 0x12, 20));     /* another QP */
	w.int_every = 2;                                     /* repeated: updated, one entry */
	assert_int_equal(sw_wants_take(&t, &w, 30), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(sw_wants_find(&t, 1, 2, 0x11, 40)->every, 2);
	w.int_every = 0;                                     /* withdrawn */
	assert_int_equal(sw_wants_take(&t, &w, 50), 0);
	assert_null(sw_wants_find(&t, 1, 2, 0x11, 60));
	assert_int_equal(t.n, 0);
	assert_int_equal(sw_wants_take(&t, &w, 70), 0);   /* withdrawing nothing: fine */
	sw_wants_free(&t);
}

static void test_expiry(void **state)
{
	struct sw_wants t = { 0 };
	struct fb_want w = want(1, 2, 0x11, 1);
	(void)state;

	assert_int_equal(sw_wants_take(&t, &w, S), 0);
	assert_non_null(sw_wants_find(&t, 1, 2, 0x11, S + SW_WANT_HOLD_NS));
	assert_int_equal(sw_wants_take(&t, &w, 3 * S), 0);   /* heard again: held longer */
	assert_non_null(sw_wants_find(&t, 1, 2, 0x11, 3 * S + SW_WANT_HOLD_NS));
	assert_null(sw_wants_find(&t, 1, 2, 0x11, 3 * S + SW_WANT_HOLD_NS + 1));
	assert_int_equal(t.n, 0);
	sw_wants_free(&t);
}

/* Many flows, every other one withdrawn: the rest are all still found. */
static void test_many_and_deletions(void **state)
{
	struct sw_wants t = { 0 };
	const uint32_t n = 5000;
	(void)state;

	for (uint32_t i = 0; i < n; i++) {
		struct fb_want w = want(0x0a000000u + i % 7, 0x0a000100u + i % 13, i, 1 + i % 5);
		assert_int_equal(sw_wants_take(&t, &w, 1), 0);
	}
	assert_int_equal(t.n, n);
	for (uint32_t i = 0; i < n; i += 2) {
		struct fb_want w = want(0x0a000000u + i % 7, 0x0a000100u + i % 13, i, 0);
		assert_int_equal(sw_wants_take(&t, &w, 2), 0);
	}
	assert_int_equal(t.n, n / 2);
	for (uint32_t i = 0; i < n; i++) {
		const struct sw_want *got = sw_wants_find(&t, 0x0a000000u + i % 7,
							  0x0a000100u + i % 13, i, 3);
		if (i % 2) {
			assert_non_null(got);
			assert_int_equal(got->every, 1 + i % 5);
		} else {
			assert_null(got);
		}
	}
	sw_wants_free(&t);
}

/* Full at SW_WANT_MAX / 2 live entries (load one half): a new flow is refused, a known
 * one still updated; once the old ones expire, new flows are taken again. */
static void test_full(void **state)
{
	struct sw_wants t = { 0 };
	const uint32_t live = SW_WANT_MAX / 2;
	struct fb_want w;
	(void)state;

	for (uint32_t i = 0; i < live; i++) {
		w = want(1, 2, i, 1);
		assert_int_equal(sw_wants_take(&t, &w, S), 0);
	}
	assert_int_equal(t.cap, SW_WANT_MAX);
	w = want(1, 2, live, 1);
	assert_int_equal(sw_wants_take(&t, &w, 2 * S), -ENOSPC);
	w = want(1, 2, 7, 3);
	assert_int_equal(sw_wants_take(&t, &w, 2 * S), 0);
	w = want(1, 2, live, 1);
	assert_int_equal(sw_wants_take(&t, &w, 2 * S + SW_WANT_HOLD_NS), 0);   /* swept */
	assert_non_null(sw_wants_find(&t, 1, 2, 7, 2 * S + SW_WANT_HOLD_NS));  /* refreshed */
	assert_null(sw_wants_find(&t, 1, 2, 8, 2 * S + SW_WANT_HOLD_NS));
	sw_wants_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_find_withdraw),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_many_and_deletions),
		cmocka_unit_test(test_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
