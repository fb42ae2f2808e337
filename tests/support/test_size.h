/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Size of the big transfers in tests: QPACE_TEST_MB when set (1..4096), else @plain_mb,
 * or @asan_mb under AddressSanitizer (where memory traffic costs several times more). */
#ifndef QPACE_TEST_SIZE_H
#define QPACE_TEST_SIZE_H

#include <stdint.h>

uint64_t test_size_bytes(unsigned plain_mb, unsigned asan_mb);

#endif
