/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IPv4 addresses and ADDRESS:PORT endpoints as text, for every command line, config file
 * and log line (qpaced, qpace-bench, qpace-switch's topologies, the soft backend's
 * options, qpace-probe). Addresses are host order; pure functions, no I/O.
 *
 *   address   "a.b.c.d": four decimal parts 0..255 of 1..3 digits, no leading zeros
 *             (inet_pton's form: "010" is octal to inet_aton, so it is refused), no spaces
 *   endpoint  "ADDRESS:PORT": PORT decimal digits in the caller's range (the last ':'
 *             splits); with QP_HOSTPORT_OFF also "off", with QP_HOSTPORT_BARE also
 *             "ADDRESS" alone (the port keeps its default)
 */
#ifndef QPACE_ADDR_H
#define QPACE_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QP_IPV4_STRLEN 16        /* "255.255.255.255" and its NUL */
#define QP_HOSTPORT_STRLEN 22    /* "255.255.255.255:65535" and its NUL */

/* The address at the start of @s; *@end points after it. 0 or -EINVAL. */
int qp_ipv4_scan(const char *s, const char **end, uint32_t *ip);
/* The whole of @s is an address. 0 or -EINVAL; *@ip written only on success. */
int qp_ipv4_parse(const char *s, uint32_t *ip);
/* "a.b.c.d" into @buf (QP_IPV4_STRLEN bytes hold any); returns @buf. */
const char *qp_ipv4_fmt(uint32_t ip, char *buf, size_t len);

#define QP_IPV6_STRLEN 46        /* INET6_ADDRSTRLEN */
/* An IPv6 address (16 bytes, network order) in RFC 5952's form ("fe80::1") into @buf
 * (QP_IPV6_STRLEN bytes hold any; "?" when @len is too short); returns @buf. */
const char *qp_ipv6_fmt(const uint8_t a[16], char *buf, size_t len);
/* Whether @a (16 bytes, network order) is IPv4-mapped (::ffff:a.b.c.d, the form an IPv4
 * RoCEv2 GID and the tc programs' addresses take); if so and @ip is not NULL, *@ip = the
 * IPv4 address in host order. */
bool qp_ipv6_v4mapped(const uint8_t a[16], uint32_t *ip);
/* Whether @a is :: (the unspecified address). */
bool qp_ipv6_unspecified(const uint8_t a[16]);

enum qp_hostport_flags {
	QP_HOSTPORT_OFF = 1u << 0,   /* "off" is accepted: ip 0, port 0 */
	QP_HOSTPORT_BARE = 1u << 1,  /* "ADDRESS" alone is accepted: *@port is left as it is */
};

/* An endpoint, PORT in @port_min..@port_max (at most 65535), @flags enum qp_hostport_flags.
 * 0, or -EINVAL with one line in @err (may be NULL), quoting the input:
 *   "S" is not ADDRESS:PORT (IPv4)[ or off]    no ':' (or the part before it is too long)
 *   "S": "A" is not an IPv4 address
 *   "P" is not a port in MIN..MAX
 * *@ip and *@port are written only on success. */
int qp_hostport_parse(const char *s, unsigned port_min, unsigned port_max, unsigned flags,
		      uint32_t *ip, uint16_t *port, char *err, size_t errlen);
/* "a.b.c.d:port" into @buf (QP_HOSTPORT_STRLEN bytes hold any); returns @buf. */
const char *qp_hostport_fmt(uint32_t ip, uint16_t port, char *buf, size_t len);

/* The socket address of @ip:@port (AF_INET, network order inside). */
struct sockaddr_in qp_sockaddr_in(uint32_t ip, uint16_t port);
/* "a.b.c.d:port" of a socket address; returns @buf. */
const char *qp_sockaddr_fmt(const struct sockaddr_in *a, char *buf, size_t len);
/* qp_hostport_parse into a socket address (with QP_HOSTPORT_BARE, *@out's port is kept). */
int qp_sockaddr_parse(const char *s, unsigned port_min, unsigned port_max, unsigned flags,
		      struct sockaddr_in *out, char *err, size_t errlen);

#endif
