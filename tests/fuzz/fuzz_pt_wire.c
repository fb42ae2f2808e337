/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: perftest's out-of-band exchange (qpace/pt_wire.h), every decoder on
 * the input as a peer would send it. What decodes re-encodes to the same bytes (keys:
 * given lowercase hex); decoders never read past the length or write on failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/pt_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_key k;
	uint8_t again[PT_KEY_LEN];
	unsigned v;
	uint32_t u32;
	uint64_t u64;
	double d;

	if (pt_key_decode(&k, data, size) == PT_KEY_LEN) {
		int lower = 1;

		for (size_t i = 0; i < PT_KEY_LEN; i++)
			lower &= !(data[i] >= 'A' && data[i] <= 'F');
		if (pt_key_encode(again, &k) != PT_KEY_LEN ||
		    (lower && memcmp(again, data, PT_KEY_LEN)))
			abort();
	}
	if (pt_version_decode(&v, data, size) == PT_VERSION_LEN && v > 999999)
		abort();
	if (pt_mtu_decode(&u32, data, size) == PT_MTU_LEN &&
	    (u32 < 256 || u32 > 4096 || (u32 & (u32 - 1))))
		abort();
	pt_u32_decode(&u32, data, size);
	pt_u64_decode(&u64, data, size);
	if (pt_double_decode(&d, data, size) == PT_REPORT_FIELD_LEN && d != d)
		abort();
	return 0;
}
