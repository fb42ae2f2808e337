/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target for addresses as text (qpace/addr.h). The first byte picks the port
 * range and flags, the rest is the text. Properties: no crash; an IPv4 address is accepted
 * exactly when inet_pton accepts it, with the same value, and formats back to a string that
 * parses to it; an accepted endpoint has its port in range and formats back to itself (up
 * to leading zeros in the port); a refused one leaves the outputs alone and says why. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	unsigned lo, hi;
} ranges[] = { { 1, 65535 }, { 0, 65535 }, { 1, 65534 }, { 1, 65535 - 128 }, { 0, 0 } };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[128], buf[QP_HOSTPORT_STRLEN], err[200];
	unsigned flags, lo, hi;
	uint32_t ip = 0x5a5a5a5a, back;
	uint16_t port = 4789, p2;
	struct in_addr a;
	const char *end;
	int rc;

	if (size < 1 || size > sizeof(s))
		return 0;
	flags = data[0] & 3u;
	lo = ranges[(data[0] >> 2) % 5].lo;
	hi = ranges[(data[0] >> 2) % 5].hi;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;

	rc = qp_ipv4_parse(s, &ip);
	if ((rc == 0) != (inet_pton(AF_INET, s, &a) == 1))
		abort();
	if (rc == 0 && (ip != ntohl(a.s_addr) || qp_ipv4_parse(qp_ipv4_fmt(ip, buf, sizeof(buf)),
							       &back) || back != ip))
		abort();
	if (rc && ip != 0x5a5a5a5a)
		abort();
	if (qp_ipv4_scan(s, &end, &back) == 0 && (end < s || end > s + strlen(s)))
		abort();

	ip = 0x5a5a5a5a;
	err[0] = 0;
	rc = qp_hostport_parse(s, lo, hi, flags, &ip, &port, err, sizeof(err));
	if (rc) {
		if (ip != 0x5a5a5a5a || port != 4789 || !err[0])
			abort();
		return 0;
	}
	if ((flags & QP_HOSTPORT_OFF) && !strcmp(s, "off")) {
		if (ip || port)
			abort();
		return 0;
	}
	if (strchr(s, ':') && (port < lo || port > hi))
		abort();
	if (!strchr(s, ':') && port != 4789)
		abort();
	qp_hostport_fmt(ip, port, buf, sizeof(buf));
	if (qp_hostport_parse(buf, 0, 65535, 0, &back, &p2, NULL, 0) || back != ip || p2 != port)
		abort();
	return 0;
}
