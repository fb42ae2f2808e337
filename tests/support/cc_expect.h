/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for algorithm tests (tests/support/cc_expect.c): create-or-fail, and a table of
 * parameter strings that must be rejected with a message naming the parameter. */
#ifndef QPACE_TEST_CC_EXPECT_H
#define QPACE_TEST_CC_EXPECT_H

#include <stddef.h>
#include "qpace/cc.h"

/* cc_create_ops or fail the test, printing the error. */
struct cc *cc_expect_create(const struct cc_ops *ops, const struct cc_path *path,
			    const char *params);

struct cc_expect_bad {
	const char *params;  /* "key=value,..." */
	const char *name;    /* what the error message must name */
};

/* Each entry must fail to create, with a message naming the algorithm and the entry's
 * name; prints the last message as an example. */
void cc_expect_bad_params(const struct cc_ops *ops, const struct cc_path *path,
			  const struct cc_expect_bad *bad, size_t n);

#endif
