/* What each registered algorithm declares about itself: the feedback it needs (cc_needs,
 * ops->feedback). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc_algs.h"

static const struct cc_path path = {
	.line_bps = 100 * QP_GBPS, .base_rtt_ns = 10 * QP_NS_PER_US, .mtu_bytes = 1000,
};

/* ---- the feedback each algorithm needs ---- */

static void test_needs_pinned(void **state)
{
	(void)state;
	assert_int_equal(cc_needs(&cc_none_ops), 0);
	assert_int_equal(cc_needs(&cc_hpcc_ops), CC_NEED_INT);
	assert_int_equal(cc_needs(&cc_acc_ops), CC_NEED_INT | CC_NEED_NOTICE);
	assert_int_equal(cc_needs(&cc_dcqcn_ops), CC_NEED_CNP);
	assert_int_equal(cc_needs(&cc_ffd_ops), CC_NEED_LEVEL);
	assert_int_equal(cc_needs(&cc_idcc_ops), CC_NEED_INT | CC_NEED_RTT);

	assert_int_equal(cc_acc_ops.feedback.notice_bytes, 0);   /* one BDP */
	assert_string_equal(cc_acc_ops.feedback.params, "fair=1");
	assert_int_equal(cc_dcqcn_ops.feedback.notice_bytes, 16384);
	assert_int_equal(cc_dcqcn_ops.feedback.notice_interval_ns, 50 * QP_NS_PER_US);
	assert_int_equal(cc_ffd_ops.feedback.level_bytes[0], 8192);
	assert_int_equal(cc_ffd_ops.feedback.level_bytes[1], 24576);
	assert_int_equal(cc_ffd_ops.feedback.level_bytes[2], 49152);
}

/* For every registered algorithm: each declared value belongs to a kind of feedback it
 * needs, levels are ordered, and the parameters it runs with are its own and valid. */
static void test_needs_consistent(void **state)
{
	(void)state;
	for (const struct cc_ops *const *o = cc_all(); *o; o++) {
		const struct cc_ops *ops = *o;
		const struct cc_feedback *f = &ops->feedback;
		unsigned needs = cc_needs(ops);

		if (!(needs & (CC_NEED_NOTICE | CC_NEED_CNP))) {
			assert_int_equal(f->notice_bytes, 0);
			assert_int_equal(f->notice_interval_ns, 0);
		}
		if (needs & CC_NEED_LEVEL) {
			assert_true(f->level_bytes[0] > 0);
			assert_true(f->level_bytes[0] <= f->level_bytes[1]);
			assert_true(f->level_bytes[1] <= f->level_bytes[2]);
		} else {
			for (int i = 0; i < 3; i++)
				assert_int_equal(f->level_bytes[i], 0);
		}
		if (f->params) {
			char err[256];
			struct cc *cc = cc_create_ops(ops, &path, f->params, 0, err, sizeof(err));
			if (!cc)
				fail_msg("%s: feedback params \"%s\": %s", ops->name, f->params, err);
			cc_destroy(cc);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_needs_pinned),
		cmocka_unit_test(test_needs_consistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
