/* cmocka checks shared by the congestion-control tests. Each fails the running test with a
 * message that shows the figures. */
#ifndef QPACE_TEST_CC_CHECK_H
#define QPACE_TEST_CC_CHECK_H

#include <stddef.h>
#include "qpace/cc.h"
#include "cc_loop.h"

struct cc_bad_param {
	const char *params; /* "key=value" that cc_create_ops must refuse */
	const char *word;   /* what the message must name */
};

/* Every entry is refused with a message naming its word and the algorithm. */
void cc_check_rejects(const struct cc_ops *ops, const struct cc_path *path,
		      const struct cc_bad_param *bad, size_t n);

/* |got - want| <= rel * want. */
void cc_check_rate_near(qp_rate_bps got, double want, double rel);

/* cc_loop_run, failing the test on a set-up error. */
void cc_check_loop(const struct cc_loop_cfg *c, struct cc_loop_result *r);

#endif
