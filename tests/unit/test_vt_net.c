/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The closed-loop network of the cc tests (tests/support/vt_net.h) checked on itself with
 * `none`: one flow alone takes the link's payload rate (97.8% measured) and its FCT is at
 * least its serialisation plus a base RTT; 16 -> 1 overflows a finite buffer and, with PFC lossless
 * on the same buffer, drops nothing and sends PAUSEs instead; bad configurations are
 * refused with a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "vt_net.h"

static void test_one_flow(void **state)
{
	struct vt_net_conf c = vt_net_defaults("none", 1, 4000000, 200000);
	struct vt_net_result r;
	(void)state;

	vt_net_assert_run(&c, &r);
	vt_net_print("1 flow, none", &r);
	double wire = 4000000.0 / 1024 * 1082 * 8 / 10.0;     /* ns at 10 Gb/s */
	double g = vt_goodput_bps(&r, 0, r.end_ns / 4, r.end_ns);
	print_message("goodput after the first quarter %.3f Gb/s, payload rate %.3f; FCT %.1f us, "
		      "serialisation %.1f us\n", g / 1e9, r.payload_bps / 1e9,
		      (double)r.flow[0].fct_ns / 1e3, wire / 1e3);
	assert_true(r.flow[0].done);
	assert_int_equal(r.drops, 0);
	assert_true((double)r.flow[0].fct_ns >= wire + (double)r.rtt_ns);
	assert_true((double)r.flow[0].fct_ns < 1.05 * wire + 2.0 * (double)r.rtt_ns);
	assert_true(g > 0.96 * r.payload_bps && g < 1.01 * r.payload_bps);   /* 97.8% */
	/* samples: every RTT, the bytes delivered never fall, all of them at the end */
	assert_true(r.nsamples >= r.end_ns / r.rtt_ns);
	for (unsigned i = 1; i < r.nsamples; i++)
		assert_true(r.s[i].delivered[0] >= r.s[i - 1].delivered[0]);
	assert_int_equal(r.s[r.nsamples - 1].delivered[0], 4000000);
	vt_net_free(&r);
}

static void test_incast_pfc(void **state)
{
	struct vt_net_conf c = vt_net_defaults("none", 16, 500000, 400000);
	struct vt_net_result r;
	uint64_t drops;
	(void)state;

	vt_net_assert_control_overflows(&c, &drops);
	c.extra[0] = "--pfc";
	c.extra[1] = "xoff=64K,headroom=auto,class=0,lossless";
	vt_net_assert_run(&c, &r);
	vt_net_print("16->1 none, PFC lossless", &r);
	assert_int_equal(r.all_drops, 0);
	assert_true(r.pauses > 0);
	assert_int_equal(r.flows_done, 16);
	vt_net_free(&r);
}

static void test_bad_conf(void **state)
{
	struct vt_net_conf c = vt_net_defaults("none", 2, 1000, 0);
	struct vt_net_result r;
	char err[200];
	(void)state;

	assert_int_equal(vt_net_run(&c, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "finite"));
	c = vt_net_defaults("nosuch", 2, 1000, 1000);
	assert_int_equal(vt_net_run(&c, &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nosuch"));
	c = vt_net_defaults("none", 0, 1000, 1000);
	assert_int_equal(vt_net_run(&c, &r, err, sizeof(err)), -EINVAL);
	c = vt_net_defaults("none", 2, 1000, 100000);
	c.extra[0] = "--rate";
	c.extra[1] = "0";
	assert_true(vt_net_run(&c, &r, err, sizeof(err)) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_flow),
		cmocka_unit_test(test_incast_pfc),
		cmocka_unit_test(test_bad_conf),
	};
	return cmocka_run_group_tests_name("vt_net", tests, NULL, NULL);
}
