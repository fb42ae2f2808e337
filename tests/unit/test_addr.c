/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Addresses as text (qpace/addr.h): every accepted and refused IPv4 form with its
 * boundaries, formatting round trips, and endpoints with each port range and flag the
 * callers use, with their messages. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/addr.h"

static void test_ipv4_accepted(void **state)
{
	static const struct {
		const char *s;
		uint32_t ip;
	} ok[] = {
		{ "0.0.0.0", 0 },
		{ "255.255.255.255", 0xffffffffu },
		{ "10.0.0.1", 0x0a000001u },
		{ "127.0.0.1", 0x7f000001u },
		{ "1.2.3.4", 0x01020304u },
		{ "192.168.100.200", 0xc0a864c8u },
		{ "9.99.199.249", 0x0963c7f9u },
		{ "0.10.100.0", 0x000a6400u },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t ip = 0x5a5a5a5a;
		struct in_addr a;

		assert_int_equal(qp_ipv4_parse(ok[i].s, &ip), 0);
		assert_int_equal(ip, ok[i].ip);
		/* the same verdict and value as the C library */
		assert_int_equal(inet_pton(AF_INET, ok[i].s, &a), 1);
		assert_int_equal(ntohl(a.s_addr), ok[i].ip);
	}
}

static void test_ipv4_refused(void **state)
{
	static const char *const bad[] = {
		"", ".", "1", "1.2", "1.2.3", "1.2.3.", ".1.2.3", "1..2.3", "1.2.3.4.",
		"1.2.3.4.5", "256.0.0.0", "0.0.0.256", "1.2.3.999", "1.2.3.1000", "1.2.3.0004",
		"01.2.3.4", "1.2.3.04", "1.2.3.00", "00.0.0.0", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4x",
		"1.2.3.-4", "1.2.3.+4", "-1.2.3.4", "1.2.3.4/32", "1.2.3.4:80", "a.b.c.d",
		"0x7f.0.0.1", "any", "localhost", "1,2,3,4", "::1", "::ffff:1.2.3.4",
		"4294967295", "1.2.65535",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t ip = 0x5a5a5a5a;
		struct in_addr a;

		assert_int_equal(qp_ipv4_parse(bad[i], &ip), -EINVAL);
		assert_int_equal(ip, 0x5a5a5a5a);                 /* untouched */
		assert_int_not_equal(inet_pton(AF_INET, bad[i], &a), 1);
	}
}

static void test_ipv4_scan(void **state)
{
	const char *end = NULL;
	uint32_t ip = 0;
	(void)state;

	assert_int_equal(qp_ipv4_scan("10.1.2.0/24", &end, &ip), 0);
	assert_int_equal(ip, 0x0a010200u);
	assert_string_equal(end, "/24");
	assert_int_equal(qp_ipv4_scan("10.0.0.1,mtu=1000", &end, &ip), 0);
	assert_string_equal(end, ",mtu=1000");
	assert_int_equal(qp_ipv4_scan("1.2.3.4", &end, &ip), 0);
	assert_string_equal(end, "");
	assert_int_equal(qp_ipv4_scan("1.2.3", &end, &ip), -EINVAL);
	assert_int_equal(qp_ipv4_scan("1.2.3.1234", &end, &ip), -EINVAL);
}

static void test_ipv4_fmt(void **state)
{
	static const uint32_t ips[] = { 0, 1, 0x0a000001u, 0x7f000001u, 0xffffffffu, 0x00ff00ffu };
	char buf[QP_IPV4_STRLEN], small[8];
	uint32_t back;
	(void)state;

	assert_string_equal(qp_ipv4_fmt(0xffffffffu, buf, sizeof(buf)), "255.255.255.255");
	assert_int_equal(strlen(buf) + 1, QP_IPV4_STRLEN);
	assert_string_equal(qp_ipv4_fmt(0x0a000001u, buf, sizeof(buf)), "10.0.0.1");
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
		assert_int_equal(qp_ipv4_parse(qp_ipv4_fmt(ips[i], buf, sizeof(buf)), &back), 0);
		assert_int_equal(back, ips[i]);
	}
	assert_string_equal(qp_ipv4_fmt(0xc0a864c8u, small, sizeof(small)), "192.168");  /* cut */
}

/* One endpoint case: input, port range, flags; 0 with the values, or the message. */
struct hp_case {
	const char *s;
	unsigned lo, hi, flags;
	int rc;
	uint32_t ip;
	uint16_t port;
	const char *msg;
};

static void check_hostport(const struct hp_case *c)
{
	char err[160] = "";
	uint32_t ip = 0x5a5a5a5a;
	uint16_t port = 4789;       /* a default, for QP_HOSTPORT_BARE */
	int rc = qp_hostport_parse(c->s, c->lo, c->hi, c->flags, &ip, &port, err, sizeof(err));

	assert_int_equal(rc, c->rc);
	if (rc == 0) {
		assert_int_equal(ip, c->ip);
		assert_int_equal(port, c->port);
		assert_string_equal(err, "");
	} else {
		assert_int_equal(ip, 0x5a5a5a5a);
		assert_int_equal(port, 4789);
		assert_string_equal(err, c->msg);
	}
}

/* IPv4-mapped (::ffff:a.b.c.d) and :: among 16-byte addresses. */
static void test_ipv6_forms(void **state)
{
	uint8_t a[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 3, [15] = 1 };
	uint8_t zero[16] = { 0 }, ll[16] = { 0xfe, 0x80, [15] = 1 };
	uint32_t ip = 7;
	(void)state;

	assert_true(qp_ipv6_v4mapped(a, &ip));
	assert_int_equal(ip, 0x0a000301u);
	assert_true(qp_ipv6_v4mapped(a, NULL));
	assert_false(qp_ipv6_unspecified(a));
	ip = 7;
	assert_false(qp_ipv6_v4mapped(ll, &ip));
	assert_int_equal(ip, 7);                 /* untouched */
	assert_false(qp_ipv6_unspecified(ll));
	assert_false(qp_ipv6_v4mapped(zero, &ip));
	assert_true(qp_ipv6_unspecified(zero));
	a[9] = 1;                                /* ::1:ffff:... is not mapped */
	assert_false(qp_ipv6_v4mapped(a, &ip));
}

static void test_hostport(void **state)
{
	static const struct hp_case cases[] = {
		/* qpaced --feedback: 1..65535 */
		{ "0.0.0.0:4792", 1, 65535, 0, 0, 0, 4792, NULL },
		{ "10.0.0.1:1", 1, 65535, 0, 0, 0x0a000001u, 1, NULL },
		{ "10.0.0.1:65535", 1, 65535, 0, 0, 0x0a000001u, 65535, NULL },
		{ "10.0.0.1:00080", 1, 65535, 0, 0, 0x0a000001u, 80, NULL },
		{ "10.0.0.1:0", 1, 65535, 0, -EINVAL, 0, 0, "\"0\" is not a port in 1..65535" },
		{ "10.0.0.1:65536", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"65536\" is not a port in 1..65535" },
		{ "10.0.0.1:", 1, 65535, 0, -EINVAL, 0, 0, "\"\" is not a port in 1..65535" },
		{ "10.0.0.1:+80", 1, 65535, 0, -EINVAL, 0, 0, "\"+80\" is not a port in 1..65535" },
		{ "10.0.0.1:-1", 1, 65535, 0, -EINVAL, 0, 0, "\"-1\" is not a port in 1..65535" },
		{ "10.0.0.1: 80", 1, 65535, 0, -EINVAL, 0, 0, "\" 80\" is not a port in 1..65535" },
		{ "10.0.0.1:80x", 1, 65535, 0, -EINVAL, 0, 0, "\"80x\" is not a port in 1..65535" },
		{ "10.0.0.1:99999999999999999999", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"99999999999999999999\" is not a port in 1..65535" },
		{ "1.2.3.4", 1, 65535, 0, -EINVAL, 0, 0, "\"1.2.3.4\" is not ADDRESS:PORT (IPv4)" },
		{ "", 1, 65535, 0, -EINVAL, 0, 0, "\"\" is not ADDRESS:PORT (IPv4)" },
		{ "off", 1, 65535, 0, -EINVAL, 0, 0, "\"off\" is not ADDRESS:PORT (IPv4)" },
		{ "01234567890123456789012345678901:80", 1, 65535, 0, -EINVAL, 0, 0,  /* 32 */
		  "\"01234567890123456789012345678901:80\" is not ADDRESS:PORT (IPv4)" },
		{ "0123456789012345678901234567890:80", 1, 65535, 0, -EINVAL, 0, 0,   /* 31 */
		  "\"0123456789012345678901234567890:80\": \"0123456789012345678901234567890\" "
		  "is not an IPv4 address" },
		{ "localhost:80", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"localhost:80\": \"localhost\" is not an IPv4 address" },
		{ "any:80", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"any:80\": \"any\" is not an IPv4 address" },
		{ "1.2.3.4/32:80", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"1.2.3.4/32:80\": \"1.2.3.4/32\" is not an IPv4 address" },
		{ ":80", 1, 65535, 0, -EINVAL, 0, 0, "\":80\": \"\" is not an IPv4 address" },
		{ "1.2.3.4:5:6", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"1.2.3.4:5:6\": \"1.2.3.4:5\" is not an IPv4 address" },
		{ "256.1.1.1:80", 1, 65535, 0, -EINVAL, 0, 0,
		  "\"256.1.1.1:80\": \"256.1.1.1\" is not an IPv4 address" },
		/* qpaced --metrics: "off" too */
		{ "off", 1, 65535, QP_HOSTPORT_OFF, 0, 0, 0, NULL },
		{ "127.0.0.1:9100", 1, 65535, QP_HOSTPORT_OFF, 0, 0x7f000001u, 9100, NULL },
		{ "OFF", 1, 65535, QP_HOSTPORT_OFF, -EINVAL, 0, 0,
		  "\"OFF\" is not ADDRESS:PORT (IPv4) or off" },
		{ "off:80", 1, 65535, QP_HOSTPORT_OFF, -EINVAL, 0, 0,
		  "\"off:80\": \"off\" is not an IPv4 address" },
		/* the soft backend: attach 1..65534, bind 0..65535 */
		{ "127.0.0.1:65534", 1, 65534, 0, 0, 0x7f000001u, 65534, NULL },
		{ "127.0.0.1:65535", 1, 65534, 0, -EINVAL, 0, 0,
		  "\"65535\" is not a port in 1..65534" },
		{ "127.0.0.1:0", 0, 65535, 0, 0, 0x7f000001u, 0, NULL },
		/* qpace-bench --switch: 1..65407 */
		{ "127.0.0.1:65407", 1, 65535 - 128, 0, 0, 0x7f000001u, 65407, NULL },
		{ "127.0.0.1:65408", 1, 65535 - 128, 0, -EINVAL, 0, 0,
		  "\"65408\" is not a port in 1..65407" },
		/* topologies: the port may be left out */
		{ "10.0.0.9", 1, 65535, QP_HOSTPORT_BARE, 0, 0x0a000009u, 4789, NULL },
		{ "10.0.0.9:7000", 1, 65535, QP_HOSTPORT_BARE, 0, 0x0a000009u, 7000, NULL },
		{ "10.0.0", 1, 65535, QP_HOSTPORT_BARE, -EINVAL, 0, 0,
		  "\"10.0.0\": \"10.0.0\" is not an IPv4 address" },
		{ "0123456789012345678901234567890123", 1, 65535, QP_HOSTPORT_BARE, -EINVAL, 0, 0,
		  "\"0123456789012345678901234567890123\" is not ADDRESS[:PORT] (IPv4)" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_hostport(&cases[i]);
}

static void test_hostport_no_err_buffer(void **state)
{
	uint32_t ip;
	uint16_t port;
	(void)state;

	assert_int_equal(qp_hostport_parse("nope", 1, 65535, 0, &ip, &port, NULL, 0), -EINVAL);
	assert_int_equal(qp_hostport_parse("1.2.3.4:0", 1, 65535, 0, &ip, &port, NULL, 0),
			 -EINVAL);
}

static void test_hostport_fmt(void **state)
{
	char buf[QP_HOSTPORT_STRLEN];
	uint32_t ip;
	uint16_t port;
	(void)state;

	assert_string_equal(qp_hostport_fmt(0xffffffffu, 65535, buf, sizeof(buf)),
			    "255.255.255.255:65535");
	assert_int_equal(strlen(buf) + 1, QP_HOSTPORT_STRLEN);
	assert_int_equal(qp_hostport_parse(qp_hostport_fmt(0x0a000001u, 4792, buf, sizeof(buf)),
					   1, 65535, 0, &ip, &port, NULL, 0), 0);
	assert_int_equal(ip, 0x0a000001u);
	assert_int_equal(port, 4792);
}

static void test_sockaddr(void **state)
{
	struct sockaddr_in sa = qp_sockaddr_in(0x7f000001u, 7000), out;
	char buf[QP_HOSTPORT_STRLEN], err[120];
	(void)state;

	assert_int_equal(sa.sin_family, AF_INET);
	assert_int_equal(ntohl(sa.sin_addr.s_addr), 0x7f000001u);
	assert_int_equal(ntohs(sa.sin_port), 7000);
	assert_string_equal(qp_sockaddr_fmt(&sa, buf, sizeof(buf)), "127.0.0.1:7000");

	assert_int_equal(qp_sockaddr_parse("10.0.0.2:4791", 1, 65535, 0, &out, err, sizeof(err)),
			 0);
	assert_int_equal(out.sin_family, AF_INET);
	assert_int_equal(ntohl(out.sin_addr.s_addr), 0x0a000002u);
	assert_int_equal(ntohs(out.sin_port), 4791);
	/* a bare address keeps the port already in *out */
	out = qp_sockaddr_in(0, 4789);
	assert_int_equal(qp_sockaddr_parse("10.0.0.3", 1, 65535, QP_HOSTPORT_BARE, &out, err,
					   sizeof(err)), 0);
	assert_int_equal(ntohl(out.sin_addr.s_addr), 0x0a000003u);
	assert_int_equal(ntohs(out.sin_port), 4789);
	/* refused: *out untouched */
	assert_int_equal(qp_sockaddr_parse("10.0.0.4", 1, 65535, 0, &out, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "\"10.0.0.4\" is not ADDRESS:PORT (IPv4)");
	assert_int_equal(ntohl(out.sin_addr.s_addr), 0x0a000003u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_accepted),
		cmocka_unit_test(test_ipv4_refused),
		cmocka_unit_test(test_ipv4_scan),
		cmocka_unit_test(test_ipv4_fmt),
		cmocka_unit_test(test_ipv6_forms),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_hostport_no_err_buffer),
		cmocka_unit_test(test_hostport_fmt),
		cmocka_unit_test(test_sockaddr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
