/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the soft backend's options (verbs/soft_opts.h, qp_ctx_attr.options:
 * "attach=...,ip=...,mac=..."), which come from command lines and bench configurations.
 * Properties: no crash; a refusal says "soft: " and why; an accepted set has every value in
 * its documented range (a unicast IPv4 address, a unicast MAC, a power-of-two MTU in
 * 256..4096, a window in 1..4096, 1..65536 QPs, a telemetry port that is not 4791, a
 * sending port), and parsing it again gives the same result (no hidden state). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/frame.h"
#include "soft_opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[700], err[400];
	struct soft_opts o, again;
	int rc;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	rc = soft_opts_parse(&o, s, err, sizeof(err));
	if (rc) {
		if (strncmp(err, "soft: ", 6) != 0)
			abort();
		return 0;
	}
	if (!o.ip || o.ip == 0xffffffffu || (o.ip >> 28) == 0xe || (o.mac[0] & 1) ||
	    o.mtu_bytes < 256 || o.mtu_bytes > 4096 || (o.mtu_bytes & (o.mtu_bytes - 1)) ||
	    o.window_pkts < 1 || o.window_pkts > 4096 || o.max_qps < 1 || o.max_qps > 65536 ||
	    !o.telemetry_port || o.telemetry_port == FRAME_ROCEV2_PORT || !o.peer.sin_port)
		abort();
	if (soft_opts_parse(&again, s, err, sizeof(err)) || memcmp(&o, &again, sizeof(o)))
		abort();
	return 0;
}
