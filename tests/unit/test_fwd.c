/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Forwarding tables: MAC learning and moves, static entries, multicast never learned,
 * a full table keeps working, IP->MAC/port and requester-QP learning; computed routes:
 * a host's MAC and address are the route's, never learned, and what is not a host (a
 * switch's MAC, an address outside the routed ones) is learned as before. */
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

	sw_fwd_free(&fwd);
	assert_int_equal(sw_fwd_init(&fwd, SW_FWD_SLOTS, NULL, 0, 0), 0);
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

	sw_fwd_free(&fwd);
	assert_int_equal(sw_fwd_init(&fwd, SW_FWD_SLOTS, NULL, 0, 0), 0);
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

	sw_fwd_free(&fwd);
	assert_int_equal(sw_fwd_init(&fwd, SW_FWD_SLOTS, NULL, 0, 0), 0);
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

/* Hosts 10.0.0.1 .. 10.0.0.4 routed: host i out of port route[i] (UINT16_MAX: none). */
static void test_routes(void **state)
{
	static const uint16_t route[4] = { 3, 7, UINT16_MAX, 1 };
	const uint8_t host[6] = { 0x02, 0x00, 10, 0, 0, 2 }, none[6] = { 0x02, 0x00, 10, 0, 0, 3 },
		      past[6] = { 0x02, 0x00, 10, 0, 0, 5 }, sw[6] = { 0x02, 0x51, 0x46, 0, 0, 9 };
	(void)state;

	sw_fwd_free(&fwd);
	assert_int_equal(sw_fwd_init(&fwd, 256, route, 0x0a000001, 4), 0);
	assert_int_equal(sw_fwd_lookup(&fwd, host), 7);
	assert_int_equal(sw_fwd_lookup(&fwd, none), SW_FWD_NONE);   /* no path: floods */
	sw_fwd_learn(&fwd, host, 2, 1);          /* a routed host is never learned */
	assert_int_equal(sw_fwd_lookup(&fwd, host), 7);
	sw_fwd_learn_ip(&fwd, 0x0a000002, host, 2, 1);
	assert_null(sw_fwd_lookup_ip(&fwd, 0x0a000002));
	for (uint32_t i = 0; i <= fwd.mask; i++)
		assert_false(fwd.mac[i].used || fwd.ip[i].used);
	sw_fwd_learn(&fwd, past, 5, 2);          /* past the routed hosts: learned */
	sw_fwd_learn(&fwd, sw, 6, 2);            /* a switch's MAC: learned */
	sw_fwd_learn_ip(&fwd, 0xa9feff09, sw, 6, 2);
	assert_int_equal(sw_fwd_lookup(&fwd, past), 5);
	assert_int_equal(sw_fwd_lookup(&fwd, sw), 6);
	assert_non_null(sw_fwd_lookup_ip(&fwd, 0xa9feff09));
	assert_int_equal(sw_fwd_static(&fwd, host, 4), 0);   /* the route wins over a mac line */
	assert_int_equal(sw_fwd_lookup(&fwd, host), 7);
}

static int teardown(void **state)
{
	(void)state;
	sw_fwd_free(&fwd);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_and_move),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_ip_and_qp),
		cmocka_unit_test(test_routes),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
