/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft host's neighbour table (verbs/soft_arp.c) against scans of its entries after
 * each step of a random schedule: the earliest retry of an incomplete entry, kept between
 * calls, follows every change of an entry's state or retry time, and the address index
 * finds what a scan of the entries finds, for every address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "soft_arp.h"
#include "test_rng.h"

static qp_time_ns scan(const struct soft_arp *t)
{
	qp_time_ns d = QP_TIME_NEVER;

	for (int i = 0; i < SOFT_ARP_ENTRIES; i++)
		if (t->e[i].state == SOFT_ARP_INCOMPLETE && t->e[i].next_try_ns < d)
			d = t->e[i].next_try_ns;
	return d;
}

/* The state of @ip's entry as the table's scan found it before the index. */
static enum soft_arp_state scan_state(const struct soft_arp *t, uint32_t ip)
{
	for (int i = 0; ip && i < SOFT_ARP_ENTRIES; i++)
		if (t->ip[i] == ip && t->e[i].state != SOFT_ARP_FREE)
			return (enum soft_arp_state)t->e[i].state;
	return SOFT_ARP_FREE;
}

static void test_deadline_follows_changes(void **state)
{
	struct soft_arp *t = calloc(1, sizeof(*t));
	uint64_t seed = 5;
	qp_time_ns now = 1000;
	uint8_t mac[FRAME_ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	unsigned asked = 0, learned = 0, failed_n = 0;
	(void)state;

	assert_non_null(t);
	t->retry_ns = 100;
	assert_int_equal(soft_arp_deadline(t), QP_TIME_NEVER);
	for (int step = 0; step < 20000; step++) {
		uint64_t r = test_rng(&seed);
		uint32_t ip = 0x0a000001u + (uint32_t)(r % 300);   /* more peers than entries */
		bool ask;
		uint32_t failed;

		now += (r >> 16) % 40;
		switch ((r >> 10) % 3) {
		case 0:
			(void)soft_arp_lookup(t, ip, now, &ask);
			asked += ask;
			break;
		case 1:
			learned += soft_arp_learn(t, ip, mac, now, (r >> 12) & 1);
			break;
		default:
			while (soft_arp_due(t, now, &failed) || failed)
				failed_n += failed != 0;
		}
		assert_int_equal(soft_arp_deadline(t), scan(t));
		assert_int_equal(soft_arp_deadline(t), scan(t));   /* the kept value */
		if (step % 64 == 0)
			for (uint32_t a = 0x0a000000u; a < 0x0a000000u + 302; a++)
				assert_int_equal(soft_arp_state(t, a), scan_state(t, a));
		else
			assert_int_equal(soft_arp_state(t, ip), scan_state(t, ip));
	}
	/* the schedule reached every kind of change */
	assert_true(asked > 100);
	assert_true(learned > 100);
	assert_true(failed_n > 10);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_follows_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
