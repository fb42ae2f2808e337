/* libFuzzer target for the control-protocol decoder (qpace/ctl.h).
 * Not named fuzz_*.c yet: `make fuzz` links every fuzz_*.c with a fixed FUZZ_SRCS list
 * that lacks lib/ctl.c (see the agent handoff); build it by hand meanwhile:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude \
 *         tests/fuzz/agent_ctl_fuzz.c lib/ctl.c lib/errmsg.c -o build/fuzz-ctl
 *   build/fuzz-ctl -max_total_time=60 -dict=tests/fuzz/ctl.dict
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
