/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch queue's flow table (switchsim/flow.c): its lookup, which stops at the first
 * never-used slot of a key's window, finds what a walk of every slot finds, for every
 * key, after each step of a random schedule of new flows, evictions and bytes queued and
 * leaving, in a table small enough that windows overlap and fill. The notices' count:
 * RoCEv2 data flows only, and a flow whose sender announced its last window leaves it at
 * once and stays out until a new message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../switchsim/flow.h"
#include "test_rng.h"

/* Every slot of the table compared. */
static uint32_t walk(const struct sw_flowtab *t, const struct sw_flow_key *k)
{
	for (uint32_t s = 0; s <= t->mask; s++)
		if (t->slots[s].used && sw_flow_key_eq(&t->slots[s].key, k))
			return s;
	return SW_FLOW_NONE;
}

static struct sw_flow_key key(uint32_t n)
{
	return (struct sw_flow_key){ .src_ip = 0x0a000001u + n % 7, .dst_ip = 0x0a000100u,
				     .sport = (uint16_t)(49152 + n), .qp = n };
}

static void test_find_matches_walk(void **state)
{
	struct sw_flowtab t;
	uint64_t seed = 12;
	uint32_t bytes[64] = { 0 }, slot[200], found = 0, untracked = 0;
	(void)state;

	assert_int_equal(sw_flowtab_init(&t, 64), 0);
	for (uint32_t n = 0; n < 200; n++)
		slot[n] = SW_FLOW_NONE;
	for (int step = 0; step < 20000; step++) {
		uint64_t r = test_rng(&seed);
		uint32_t n = (uint32_t)(r % 200);
		struct sw_flow_key k = key(n);

		if ((r >> 20) % 4 == 0 && slot[n] != SW_FLOW_NONE &&
		    sw_flow_key_eq(&t.slots[slot[n]].key, &k) && bytes[slot[n]]) {
			sw_flowtab_sub(&t, slot[n], bytes[slot[n]]);   /* its bytes leave */
			bytes[slot[n]] = 0;
		} else {
			uint32_t s = sw_flowtab_get(&t, &k, (qp_time_ns)step);

			untracked += s == SW_FLOW_NONE;
			if (s != SW_FLOW_NONE && (r >> 24) % 3 == 0) {
				sw_flowtab_add(&t, s, 100);
				bytes[s] += 100;
			}
			slot[n] = s;
		}
		for (uint32_t m = 0; m < 200; m++) {
			struct sw_flow_key km = key(m);
			uint32_t s = sw_flowtab_find(&t, &km);

			assert_int_equal(s, walk(&t, &km));
			found += s != SW_FLOW_NONE;
		}
	}
	/* the schedule filled windows (untracked flows) and found flows at every step */
	assert_true(untracked > 100);
	assert_true(found > 20000 * 30);
	sw_flowtab_free(&t);
}

static void test_count_data_flows_and_last_window(void **state)
{
	struct sw_flowtab t;
	struct sw_flow_key a = key(1), b = key(2), udp = key(3);
	uint32_t sa, sb;
	(void)state;

	udp.qp = SW_FLOW_KEY_UDP | 4792;
	assert_int_equal(sw_flowtab_init(&t, 64), 0);
	t.idle_ns = 1000;
	sa = sw_flowtab_get(&t, &a, 10);
	sb = sw_flowtab_get(&t, &b, 10);
	sw_flowtab_add(&t, sa, 100);
	sw_flowtab_add(&t, sw_flowtab_get(&t, &udp, 10), 100);   /* telemetry: no flow */
	assert_int_equal(sw_flowtab_count(&t, 20), 2);
	sw_flowtab_ending(&t, sa, true);                         /* a's last window */
	assert_int_equal(sw_flowtab_count(&t, 21), 1);
	assert_int_equal(t.active, 0);                           /* its bytes: not counted */
	assert_int_equal(sw_flowtab_get(&t, &a, 22), sa);        /* its frames: still out */
	assert_int_equal(sw_flowtab_count(&t, 22), 1);
	sw_flowtab_sub(&t, sa, 100);
	assert_int_equal(t.active, 0);
	sw_flowtab_ending(&t, sa, false);                        /* a new message */
	sw_flowtab_get(&t, &a, 23);
	assert_int_equal(sw_flowtab_count(&t, 23), 2);
	(void)sb;
	sw_flowtab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_matches_walk),
		cmocka_unit_test(test_count_data_flows_and_last_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
