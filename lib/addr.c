/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IPv4 addresses and endpoints as text, and IPv6 addresses (rules in qpace/addr.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"

#define HOST_MAX 32    /* the ADDRESS part of an endpoint, NUL included */

int qp_ipv4_scan(const char *s, const char **end, uint32_t *ip)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned part = 0, digits = 0;

		if (i && *s++ != '.')
			return -EINVAL;
		while (*s >= '0' && *s <= '9' && digits < 4) {
			part = part * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (!digits || digits > 3 || part > 255 || (digits > 1 && s[-(int)digits] == '0'))
			return -EINVAL;
		v = v << 8 | part;
	}
	*end = s;
	*ip = v;
	return 0;
}

int qp_ipv4_parse(const char *s, uint32_t *ip)
{
	const char *e;
	uint32_t v;

	if (qp_ipv4_scan(s, &e, &v) || *e)
		return -EINVAL;
	*ip = v;
	return 0;
}

const char *qp_ipv4_fmt(uint32_t ip, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

const char *qp_ipv6_fmt(const uint8_t a[16], char *buf, size_t len)
{
	if (len && !inet_ntop(AF_INET6, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

bool qp_ipv6_v4mapped(const uint8_t a[16], uint32_t *ip)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(a, prefix, sizeof(prefix)))
		return false;
	if (ip)
		*ip = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	return true;
}

bool qp_ipv6_unspecified(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, sizeof(zero));
}

int qp_hostport_parse(const char *s, unsigned port_min, unsigned port_max, unsigned flags,
		      uint32_t *ip, uint16_t *port, char *err, size_t errlen)
{
	const char *colon = strrchr(s, ':');
	size_t hlen = colon ? (size_t)(colon - s) : strlen(s);
	char host[HOST_MAX];
	uint32_t a;
	uint64_t p;

	if ((flags & QP_HOSTPORT_OFF) && strcmp(s, "off") == 0) {
		*ip = 0;
		*port = 0;
		return 0;
	}
	if ((!colon && !(flags & QP_HOSTPORT_BARE)) || hlen >= sizeof(host))
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not ADDRESS%s (IPv4)%s", s,
				 flags & QP_HOSTPORT_BARE ? "[:PORT]" : ":PORT",
				 flags & QP_HOSTPORT_OFF ? " or off" : "");
	memcpy(host, s, hlen);
	host[hlen] = 0;
	if (qp_ipv4_parse(host, &a))
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\": \"%s\" is not an IPv4 address", s,
				 host);
	if (colon && (qp_parse_u64(colon + 1, &p) || p < port_min || p > port_max || p > 65535))
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not a port in %u..%u", colon + 1,
				 port_min, port_max);
	*ip = a;
	if (colon)
		*port = (uint16_t)p;
	return 0;
}

const char *qp_hostport_fmt(uint32_t ip, uint16_t port, char *buf, size_t len)
{
	char a[QP_IPV4_STRLEN];

	snprintf(buf, len, "%s:%u", qp_ipv4_fmt(ip, a, sizeof(a)), port);
	return buf;
}

struct sockaddr_in qp_sockaddr_in(uint32_t ip, uint16_t port)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(ip);
	sa.sin_port = htons(port);
	return sa;
}

const char *qp_sockaddr_fmt(const struct sockaddr_in *a, char *buf, size_t len)
{
	return qp_hostport_fmt(ntohl(a->sin_addr.s_addr), ntohs(a->sin_port), buf, len);
}

int qp_sockaddr_parse(const char *s, unsigned port_min, unsigned port_max, unsigned flags,
		      struct sockaddr_in *out, char *err, size_t errlen)
{
	uint32_t ip;
	uint16_t port = flags & QP_HOSTPORT_BARE ? ntohs(out->sin_port) : 0;
	int rc = qp_hostport_parse(s, port_min, port_max, flags, &ip, &port, err, errlen);

	if (!rc)
		*out = qp_sockaddr_in(ip, port);
	return rc;
}
