/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the telemetry decoder; what it accepts must encode back to a message
 * that decodes to the same thing, and the agent's mapping onto a cc event (agent core)
 * takes it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/agent.h"      /* fb_to_cc_event */
#include "qpace/feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_msg m, back;
	struct cc_event ev;
	uint8_t buf[FB_MAX_LEN];
	int len;

	if (fb_decode(&m, data, size))
		return 0;
	if (m.length > size)
		abort();
	(void)fb_to_cc_event(&m, &ev);
	m.auth_len = 0;
	len = fb_encode(buf, sizeof(buf), &m);
	if (len < 0 || fb_decode(&back, buf, (size_t)len))
		abort();
	back.length = m.length;
	if (memcmp(&back.u, &m.u, sizeof(m.u)) || back.type != m.type || back.flags != m.flags)
		abort();
	return 0;
}
