/* DCQCN without a CNP-sending switch, the pure part (agent/cnp.h): the CNP's UDP payload,
 * put behind the IPv4 and UDP headers the kernel writes for qpaced's socket (DF, id 0,
 * any TTL and TOS), parses as a RoCEv2 CNP with BECN, P-key 0xffff and the peer's QPN and
 * a right ICRC; an IP id other than 0 breaks the ICRC (why the socket stays unconnected
 * with DF); peer QPNs from the dump first, then --cnp-peer; --cnp-peer's parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cnp.h"
#include "qpace/frame.h"

static const struct frame_addr rx = { { 2, 0, 0, 0, 0, 1 }, 0x0a000001, 40001 };  /* us */
static const struct frame_addr tx = { { 2, 0, 0, 0, 0, 2 }, 0x0a000002, 4791 };   /* X */

/* The datagram as it leaves qpaced's socket. */
static int on_wire(uint8_t *f, const uint8_t *pl, uint8_t ttl, uint8_t tos, uint16_t id)
{
	struct frame_ip_opts o = { .tos = tos, .ttl = ttl, .id = id };

	return frame_build_udp(f, 256, &rx, &tx, &o, pl, CNP_UDP_PAYLOAD);
}

static void test_payload(void **state)
{
	uint8_t pl[64], f[256];
	struct frame_parsed p;

	(void)state;
	assert_int_equal(cnp_payload(pl, sizeof(pl), rx.ip, rx.port, tx.ip, 0x123456),
			 CNP_UDP_PAYLOAD);
	for (int k = 0; k < 3; k++) {
		static const uint8_t ttls[] = { 64, 1, 255 }, toss[] = { 0, 0x68, 0x03 };
		int n = on_wire(f, pl, ttls[k], toss[k], 0);

		assert_true(n > 0);
		assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
		assert_true(p.layers & FRAME_L_ROCE);
		assert_int_equal(p.bth.opcode, FRAME_OP_CNP);
		assert_true(p.bth.becn);
		assert_false(p.bth.fecn);
		assert_int_equal(p.bth.pkey, 0xffff);
		assert_int_equal(p.bth.dest_qp, 0x123456);
		assert_int_equal(p.udp.dport, 4791);
		assert_int_equal(p.udp.len, 8 + CNP_UDP_PAYLOAD);
		assert_true(frame_icrc_ok(f, &p));
		if (k == 0)
			printf("  CNP %s -> %s QPN 0x123456: ICRC 0x%08x right\n", "10.0.0.1:40001",
			       "10.0.0.2:4791", p.icrc);
	}
	{
		int n = on_wire(f, pl, 64, 0, 0x1234);

		assert_int_equal(frame_parse(&p, f, (size_t)n), 0);
		assert_false(frame_icrc_ok(f, &p));   /* the id is in the ICRC */
	}
	assert_int_equal(cnp_payload(pl, CNP_UDP_PAYLOAD - 1, rx.ip, rx.port, tx.ip, 1),
			 -EMSGSIZE);
}

static void test_peers(void **state)
{
	struct rdma_nl_qp dump[2] = {
		{ .lqpn = 0x11, .rqpn = 0x21, .has = RDMA_NL_HAS_RQPN },
		{ .lqpn = 0x12, .type = 4 },    /* UD: no peer */
	};
	struct cnp_pair pairs[] = { { 0x11, 0x99 }, { 0x12, 0x22 }, { 0x13, 0x23 } };
	struct cnp_peers p = { dump, 2, pairs, 3 };
	uint32_t r = 0;

	(void)state;
	assert_int_equal(cnp_peer_qpn(&p, 0x11, &r), 0);
	assert_int_equal(r, 0x21);             /* the kernel's word first */
	assert_int_equal(cnp_peer_qpn(&p, 0x12, &r), 0);
	assert_int_equal(r, 0x22);
	assert_int_equal(cnp_peer_qpn(&p, 0x13, &r), 0);
	assert_int_equal(r, 0x23);
	assert_int_equal(cnp_peer_qpn(&p, 0x14, &r), -ENOENT);
	p.dump = NULL;
	p.ndump = 0;
	assert_int_equal(cnp_peer_qpn(&p, 0x11, &r), 0);
	assert_int_equal(r, 0x99);
}

static void test_pairs_parse(void **state)
{
	static const char *const bad[] = { "0x11", "0x11=", "=5", "a=b", "0x1000000=1",
					   "1=0x1000000", "1=2;3=4", "1=2,x", "1 = 2" };
	struct cnp_pair p[4];
	char err[200];

	(void)state;
	assert_int_equal(cnp_pairs_parse("0x11=0x21,18=34", p, 4, err, sizeof(err)), 2);
	assert_int_equal(p[0].lqpn, 0x11);
	assert_int_equal(p[0].rqpn, 0x21);
	assert_int_equal(p[1].lqpn, 18);
	assert_int_equal(p[1].rqpn, 34);
	assert_int_equal(cnp_pairs_parse("none", p, 4, err, sizeof(err)), 0);
	assert_int_equal(cnp_pairs_parse("1=1,2=2,3=3,4=4,5=5", p, 4, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "more than 4 pairs"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cnp_pairs_parse(bad[i], p, 4, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(strstr(err, "not LQPN=PEER_QPN"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_pairs_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
