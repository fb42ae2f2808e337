/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forwarding tables: MAC learning and moves, static entries, multicast never learned,
 * a full table keeps working, IP->MAC/port and requester-QP learning. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/fwd.h"

static struct sw_fwd fwd;

static void mac_of(uint32_t i, uint8_t mac[6])
{
	const uint8_t m[6] = { 0x02, 0, (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8),
			       (uint8_t)i };
	memcpy(mac, m, 6);
}

static void test_learn_and_move(void **state)
{
	uint8_t a[6], b[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	(void)state;

	sw_fwd_init(&fwd);
	mac_of(1, a);
	mac_of(2, b);
	assert_int_equal(sw_fwd_lookup(&fwd, a), SW_FWD_NONE);
	sw_fwd_learn(&fwd, a, 3, 10);
	assert_int_equal(sw_fwd_lookup(&fwd, a), 3);
	sw_fwd_learn(&fwd, a, 5, 20);          /* the host moved */
	assert_int_equal(sw_fwd_lookup(&fwd, a), 5);
	assert_int_equal(fwd.moves, 1);
	sw_fwd_learn(&fwd, bcast, 1, 30);      /* a multicast source is never learned */
	assert_int_equal(sw_fwd_lookup(&fwd, bcast), SW_FWD_NONE);
	assert_int_equal(sw_fwd_static(&fwd, b, 7), 0);
	sw_fwd_learn(&fwd, b, 2, 40);          /* static entries do not move */
	assert_int_equal(sw_fwd_lookup(&fwd, b), 7);
}

static void test_full_table(void **state)
{
	uint8_t m[6];
	int found = 0;
	(void)state;

	sw_fwd_init(&fwd);
	for (uint32_t i = 0; i < 3 * SW_FWD_SLOTS; i++) {
		mac_of(i, m);
		sw_fwd_learn(&fwd, m, (int)(i % 8), i);
	}
	/* The most recent addresses are all there; older ones gave way. */
	for (uint32_t i = 3 * SW_FWD_SLOTS - 100; i < 3 * SW_FWD_SLOTS; i++) {
		mac_of(i, m);
		found += sw_fwd_lookup(&fwd, m) == (int)(i % 8);
	}
	assert_int_equal(found, 100);
}

static void test_ip_and_qp(void **state)
{
	uint8_t a[6];
	const struct sw_ip_entry *e;
	(void)state;

	sw_fwd_init(&fwd);
	mac_of(9, a);
	sw_fwd_learn_ip(&fwd, 0x0a000001, a, 4, 1);
	e = sw_fwd_lookup_ip(&fwd, 0x0a000001);
	assert_non_null(e);
	assert_int_equal(e->port, 4);
	assert_memory_equal(e->mac, a, 6);
	assert_null(sw_fwd_lookup_ip(&fwd, 0x0a000002));
	sw_fwd_learn_ip(&fwd, 0, a, 4, 1);      /* 0.0.0.0 is no host */
	assert_null(sw_fwd_lookup_ip(&fwd, 0));
	sw_fwd_learn_qp(&fwd, 0x0a000001, 0x0a000002, 0x123);
	assert_int_equal(sw_fwd_lookup_qp(&fwd, 0x0a000001, 0x0a000002)->qp, 0x123);
	assert_null(sw_fwd_lookup_qp(&fwd, 0x0a000002, 0x0a000001));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_and_move),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_ip_and_qp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
