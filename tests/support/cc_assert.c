/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* cmocka checks shared by the congestion-control tests: see cc_assert.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cc_assert.h"

void cc_assert_rate_near(qp_rate_bps got, double want, double rel)
{
	if (fabs((double)got - want) > rel * want)
		fail_msg("rate %.6g bps, expected %.6g (within %g)", (double)got, want, rel);
}
