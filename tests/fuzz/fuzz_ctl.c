/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target for the control-protocol decoder (qpace/ctl.h).
 * `make fuzz` builds and runs it.
 * Property: whatever decodes re-encodes, and that decodes to the same message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_msg a, b;
	uint8_t again[CTL_MAX_LEN];
	int n;

	if (ctl_decode(&a, data, size, NULL, 0) != 0)
		return 0;
	n = ctl_encode(again, sizeof(again), &a);
	if (n <= 0 || ctl_decode(&b, again, (size_t)n, NULL, 0) != 0 ||
	    memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	return 0;
}
