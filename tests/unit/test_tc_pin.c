/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The tc egress program's pinned maps (safe failure, docs/enforce.md), on a bpffs the test
 * mounts itself: a second loader on the same directory (a restarted qpaced) takes over what
 * the first left; unpinning removes the pins; a directory not on a bpffs loads unpinned.
 * Root; skips, with the kernel's reason, when BPF itself is refused or no bpffs can be
 * mounted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/tc_egress.h"
#include "qpace/frame.h"
#include "tc_run.h"

struct found { int n; struct qp_tc_key k; struct qp_tc_rate r; };

static void found_rate(void *ctx, const struct qp_tc_key *k, const struct qp_tc_rate *r)
{
	struct found *f = ctx;

	f->n++;
	f->k = *k;
	f->r = *r;
}

/* Pinned maps: a second loader on the same directory (a restarted qpaced) takes over the
 * rate entries, flow state, counters and heartbeat record the first left; unpinning
 * removes the pins; a directory that is not on a bpffs loads unpinned, saying why. */
static void test_pinned_takeover(void **state)
{
	char root[] = "/tmp/qpace-tcpin.XXXXXX", dir[96], plain[96], path[128], why[400];
	struct qp_tc *first, *second;
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000701u, 0x31);
	struct qp_tc_rate r = { .rate_bps = 20000000, .flags = QP_TC_F_PACE | QP_TC_F_DISCOVERED,
				.qpn = 0xf00001 };
	struct qp_tc_alive a = { .beat_ns = 1, .hold_ns = 1000000000ull, .safe_bps = 5000000,
				 .flags = QP_TC_A_CLSACT | QP_TC_A_FQ };
	struct qp_tc_state st;
	struct found f = { 0 };
	uint64_t c[QP_TC_C_COUNT];
	uint8_t fr[2048];
	int len;

	(void)state;
	assert_non_null(mkdtemp(root));
	if (mount("bpf", root, "bpf", 0, NULL)) {
		rmdir(root);
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/qpace/dev0", root);
	int rc = qp_tc_open_pinned(&first, dir, why, sizeof(why));
	if (tc_run_opened("test_tc_pin", rc, why) == 0 && !first) {   /* BPF refused */
		umount(root);
		rmdir(root);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_string_equal(why, "");
	assert_false(qp_tc_took_over(first));
	assert_string_equal(qp_tc_pin_dir(first), dir);
	assert_int_equal(qp_tc_set_rate(first, &k, &r), 0);
	a.pid = 4242;
	assert_int_equal(qp_tc_alive_set(first, &a), 0);
	struct qp_tc_conf conf = qp_tc_conf_default();   /* one frame through the first */
	conf.mode = QP_TC_MODE_ENFORCE;
	conf.report_gap_ns = 0;
	conf.report_retry_ns = 1000000000ull;
	conf.horizon_ns = 0;
	qp_tc_set_conf(first, &conf);
	len = tc_run_roce(fr, sizeof(fr), FRAME_OP_RC_SEND_ONLY, 0, 0x0a000701u, 0x31, 500);
	tc_run(qp_tc_prog_fd(first), fr, (size_t)len, tc_run_mono_ns() + 100000000000ull, NULL, 0);
	qp_tc_close(first);              /* gone without unpinning, as when qpaced dies */

	memset(&a, 0, sizeof(a));
	assert_int_equal(qp_tc_pinned_alive(dir, &a), 0);
	assert_int_equal(a.pid, 4242);
	assert_int_equal(qp_tc_open_pinned(&second, dir, why, sizeof(why)), 0);
	assert_true(qp_tc_took_over(second));
	assert_int_equal(qp_tc_rates(second, found_rate, &f), 1);
	assert_memory_equal(&f.k, &k, sizeof(k));
	assert_int_equal(f.r.rate_bps, 20000000);
	assert_int_equal(f.r.qpn, 0xf00001);
	assert_int_equal(f.r.flags, QP_TC_F_PACE | QP_TC_F_DISCOVERED);
	assert_int_equal(qp_tc_flow(second, &k, &st), 0);
	assert_int_equal(st.pkts, 1);
	assert_int_equal(st.bytes, (uint64_t)len);
	assert_int_equal(qp_tc_counters(second, c), 0);
	assert_int_equal(c[QP_TC_C_ROCE], 1);
	assert_int_equal(qp_tc_alive_get(second, &a), 0);
	assert_int_equal(a.flags, QP_TC_A_CLSACT | QP_TC_A_FQ);
	qp_tc_unpin(second);
	snprintf(path, sizeof(path), "%s/qp_rates", dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(dir, F_OK), -1);
	qp_tc_close(second);
	assert_int_equal(umount(root), 0);

	/* Not a bpffs: loaded unpinned, and the loader says why. */
	snprintf(plain, sizeof(plain), "%s/qpace/dev0", root);
	assert_int_equal(qp_tc_open_pinned(&first, plain, why, sizeof(why)), 0);
	assert_string_equal(qp_tc_pin_dir(first), "");
	assert_non_null(strstr(why, "not on a bpf filesystem"));
	qp_tc_close(first);
	snprintf(path, sizeof(path), "%s/qpace", root);
	rmdir(path);
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned_takeover),
	};
	return cmocka_run_group_tests_name("tc_pin", tests, NULL, NULL);
}
