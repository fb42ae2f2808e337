/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* cmocka checks shared by the congestion-control tests. Each fails the running test with a
 * message that shows the figures. */
#ifndef QPACE_TEST_CC_ASSERT_H
#define QPACE_TEST_CC_ASSERT_H

#include <stddef.h>
#include "qpace/cc.h"

/* |got - want| <= rel * want. */
void cc_assert_rate_near(qp_rate_bps got, double want, double rel);

#endif
