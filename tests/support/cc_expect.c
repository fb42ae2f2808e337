/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for algorithm tests; see cc_expect.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_expect.h"

struct cc *cc_expect_create(const struct cc_ops *ops, const struct cc_path *path,
			    const char *params)
{
	char err[256] = "";
	struct cc *cc = cc_create_ops(ops, path, params, 0, err, sizeof(err));

	if (!cc)
		print_message("%s create(%s): %s\n", ops->name, params ? params : "", err);
	assert_non_null(cc);
	return cc;
}

void cc_expect_bad_params(const struct cc_ops *ops, const struct cc_path *path,
			  const struct cc_expect_bad *bad, size_t n)
{
	char err[256] = "";

	for (size_t i = 0; i < n; i++) {
		err[0] = '\0';
		assert_null(cc_create_ops(ops, path, bad[i].params, 0, err, sizeof(err)));
		if (!strstr(err, bad[i].name) || !strstr(err, ops->name)) {
			print_message("%s: \"%s\" does not name %s\n", bad[i].params, err,
				      bad[i].name);
			fail();
		}
	}
	print_message("e.g. %s\n", err);
}
