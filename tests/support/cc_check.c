/* cmocka checks shared by the congestion-control tests: see cc_check.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_check.h"

void cc_check_rejects(const struct cc_ops *ops, const struct cc_path *path,
		      const struct cc_bad_param *bad, size_t n)
{
	char err[256];

	for (size_t i = 0; i < n; i++) {
		err[0] = '\0';
		if (cc_create_ops(ops, path, bad[i].params, 0, err, sizeof(err)))
			fail_msg("%s: \"%s\" was accepted", ops->name, bad[i].params);
		if (!strstr(err, bad[i].word) || !strstr(err, ops->name))
			fail_msg("\"%s\": message \"%s\" does not name %s and %s", bad[i].params, err,
				 bad[i].word, ops->name);
	}
}

void cc_check_rate_near(qp_rate_bps got, double want, double rel)
{
	if (fabs((double)got - want) > rel * want)
		fail_msg("rate %.6g bps, expected %.6g (within %g)", (double)got, want, rel);
}

void cc_check_loop(const struct cc_loop_cfg *c, struct cc_loop_result *r)
{
	char err[256];

	if (cc_loop_run(c, r, err, sizeof(err)))
		fail_msg("%s", err);
}
