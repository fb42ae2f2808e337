/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* See test_size.h. */
#include <stdlib.h>

#include "test_size.h"

uint64_t test_size_bytes(unsigned plain_mb, unsigned asan_mb)
{
	const char *e = getenv("QPACE_TEST_MB");
	long mb = e ? strtol(e, NULL, 10) : 0;

#ifdef __SANITIZE_ADDRESS__
	(void)plain_mb;
	if (mb < 1 || mb > 4096)
		mb = asan_mb;
#else
	(void)asan_mb;
	if (mb < 1 || mb > 4096)
		mb = plain_mb;
#endif
	return (uint64_t)mb << 20;
}
