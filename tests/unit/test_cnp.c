/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN without a CNP-sending switch, the pure part (agent/cnp.h): the CNP's UDP payload,
 * put behind the IPv4 and UDP headers the kernel writes for qpaced's socket (DF, id 0,
 * any TTL and TOS), parses as a RoCEv2 CNP with BECN, P-key 0xffff and the peer's QPN and
 * a right ICRC; an IP id other than 0 breaks the ICRC (why the socket stays unconnected
 * with DF); peer QPNs from the dump first, then --cnp-peer; --cnp-peer's parser; a report's
 * action in both directions; a CNP report halving a dcqcn QP's rate in the agent core.
 * IPv6: the CNP's payload against one built here by hand (every BTH byte, the ICRC from
 * zlib over the IBTA-masked IPv6 and UDP headers), the same ICRC for any hop limit,
 * traffic class and flow label the kernel writes; IPv6 reports translated with their
 * addresses, malformed ones (IPv4-mapped, ::) refused; an IPv6 CNP cutting an IPv6 QP,
 * which no IPv4 lookup of the same trailing bytes finds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "agent_fx.h"
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

static const uint8_t us6[16] = { 0xfe, 0x80, [8] = 0x02, [15] = 0x01 };   /* fe80::200:0:0:1 */
static const uint8_t x6[16] = { 0xfe, 0x80, [8] = 0x02, [15] = 0x02 };

/* The IPv6 packet the kernel sends for the payload: @hop, @tclass, @flow as it likes,
 * UDP checksum @csum (the kernel's); returns its length. */
static size_t on_wire6(uint8_t *f, const uint8_t *pl, uint8_t hop, uint8_t tclass,
		       uint32_t flow, uint16_t csum)
{
	size_t ulen = 8 + CNP_UDP_PAYLOAD;

	memset(f, 0, 40 + ulen);
	f[0] = (uint8_t)(0x60 | tclass >> 4);
	f[1] = (uint8_t)(tclass << 4 | (flow >> 16 & 0x0f));
	f[2] = (uint8_t)(flow >> 8);
	f[3] = (uint8_t)flow;
	f[5] = (uint8_t)ulen;
	f[6] = 17;
	f[7] = hop;
	memcpy(f + 8, us6, 16);
	memcpy(f + 24, x6, 16);
	f[40] = 40001 >> 8;
	f[41] = 40001 & 0xff;
	f[42] = 4791 >> 8;
	f[43] = 4791 & 0xff;
	f[45] = (uint8_t)ulen;
	f[46] = (uint8_t)(csum >> 8);
	f[47] = (uint8_t)csum;
	memcpy(f + 48, pl, CNP_UDP_PAYLOAD);
	return 40 + ulen;
}

static void test_payload6(void **state)
{
	static const uint8_t bth[12] = { 0x81, 0x00, 0xff, 0xff, 0x40, 0x12, 0x34, 0x56,
					 0, 0, 0, 0 };
	uint8_t pl[64], f[128], m[8 + 40 + 8 + 12];
	uLong crc;
	uint32_t icrc;

	(void)state;
	assert_int_equal(cnp_payload6(pl, sizeof(pl), us6, 40001, x6, 0x123456),
			 CNP_UDP_PAYLOAD);
	assert_memory_equal(pl, bth, 12);   /* CNP, BECN, P-key 0xffff, QPN, PSN 0 */
	for (int i = 12; i < 28; i++)
		assert_int_equal(pl[i], 0);     /* 16 reserved bytes */
	/* the ICRC by hand: 8 bytes of ones, the IPv6 header with traffic class, flow label
	 * and hop limit ones, the UDP header with its checksum ones, the BTH with byte 4
	 * ones, then the 16 reserved bytes */
	memset(m, 0xff, 8);
	on_wire6(f, pl, 0xff, 0xff, 0xfffff, 0xffff);
	memcpy(m + 8, f, 40 + 8 + 12);
	m[8 + 48 + 4] = 0xff;
	crc = crc32(0L, m, sizeof(m));
	crc = crc32(crc, pl + 12, 16);
	icrc = (uint32_t)pl[28] | (uint32_t)pl[29] << 8 | (uint32_t)pl[30] << 16 |
	       (uint32_t)pl[31] << 24;
	printf("  IPv6 CNP fe80::200:0:0:1 -> fe80::200:0:0:2 QPN 0x123456: ICRC 0x%08x, "
	       "zlib's 0x%08lx\n", icrc, crc);
	assert_int_equal(icrc, (uint32_t)crc);
	/* whatever the kernel writes in the masked fields, the ICRC holds */
	for (int k = 0; k < 3; k++) {
		static const uint8_t hops[] = { 64, 1, 255 }, tcs[] = { 0, 0x68, 0x03 };
		size_t n = on_wire6(f, pl, hops[k], tcs[k], k * 0x12345u, (uint16_t)(k * 777));

		assert_int_equal(frame_icrc_ipv6(f, n), icrc);
	}
	/* not masked: the addresses, the length and the BTH */
	{
		size_t n = on_wire6(f, pl, 64, 0, 0, 0);

		f[39] ^= 1;
		assert_int_not_equal(frame_icrc_ipv6(f, n), icrc);
		f[39] ^= 1;
		f[48 + 7] ^= 1;
		assert_int_not_equal(frame_icrc_ipv6(f, n), icrc);
		assert_int_equal(frame_icrc_ipv6(f, 40 + 8 + 12 + 3), 0);   /* too short */
	}
	assert_int_equal(cnp_payload6(pl, CNP_UDP_PAYLOAD - 1, us6, 1, x6, 1), -EMSGSIZE);
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

static struct qp_tci_report report(uint8_t kind, uint32_t src, uint32_t dst, uint32_t qpn)
{
	struct qp_tci_report r = { .kind = kind, .dqpn = qpn, .opcode = FRAME_OP_RC_SEND_ONLY };

	r.saddr[10] = r.saddr[11] = r.daddr[10] = r.daddr[11] = 0xff;
	for (int i = 0; i < 4; i++) {
		r.saddr[12 + i] = (uint8_t)(src >> (24 - 8 * i));
		r.daddr[12 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	return r;
}

/* Both directions: CE from X to L -> send from us to X for L's peer; CNP from X to L ->
 * the flow (us, X, L's peer); an unknown L; IPv6. */
static void test_translate(void **state)
{
	struct cnp_pair pairs[] = { { 0x11, 0x21 } };
	struct cnp_peers p = { NULL, 0, pairs, 1 };
	struct qp_tci_report r = report(QP_TCI_K_CE, HOST_B, HOST_A, 0x11);
	struct cnp_action a = cnp_translate(&r, &p);

	(void)state;
	assert_int_equal(a.what, CNP_DO_SEND);
	assert_int_equal(a.local_ip, HOST_A);
	assert_int_equal(a.peer_ip, HOST_B);
	assert_int_equal(a.peer_qpn, 0x21);
	r.kind = QP_TCI_K_CNP;
	a = cnp_translate(&r, &p);
	assert_int_equal(a.what, CNP_DO_EVENT);
	assert_int_equal(a.peer_qpn, 0x21);
	r.dqpn = 0x12;
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_UNMAPPED);
	r.dqpn = 0x11;
	r.saddr[0] = 0xfd;   /* not IPv4-mapped in an IPv4 report: malformed */
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_BAD_ADDR);
	/* IPv6: the same, with the 16-byte addresses */
	memcpy(r.saddr, x6, 16);
	memcpy(r.daddr, us6, 16);
	r.ipv6 = 1;
	r.kind = QP_TCI_K_CE;
	a = cnp_translate(&r, &p);
	assert_int_equal(a.what, CNP_DO_SEND);
	assert_true(a.ipv6);
	assert_memory_equal(a.local_ip6, us6, 16);
	assert_memory_equal(a.peer_ip6, x6, 16);
	assert_int_equal(a.peer_qpn, 0x21);
	r.kind = QP_TCI_K_CNP;
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_EVENT);
	r.dqpn = 0x12;
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_UNMAPPED);
	r.dqpn = 0x11;
	/* an IPv6 report with an IPv4-mapped or unspecified address: malformed */
	r = report(QP_TCI_K_CE, HOST_B, HOST_A, 0x11);
	r.ipv6 = 1;
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_BAD_ADDR);
	memset(r.saddr, 0, 16);
	memcpy(r.daddr, us6, 16);
	assert_int_equal(cnp_translate(&r, &p).what, CNP_DO_BAD_ADDR);
}

/* The sender's side end to end in the agent core: a CNP report for local QP 0x11 becomes a
 * CC_EV_CNP of the dcqcn QP registered towards HOST_B's 0x21, which halves its rate. */
static void test_cnp_cuts_dcqcn(void **state)
{
	struct agent_params ap = afx_params("dcqcn");
	struct afx *f = afx_new(&ap);
	struct agent_qp_reg reg = afx_reg(0x11, 0x21);
	struct cnp_pair pairs[] = { { 0x11, 0x21 } };
	struct cnp_peers p = { NULL, 0, pairs, 1 };
	struct qp_tci_report r = report(QP_TCI_K_CNP, HOST_B, HOST_A, 0x11);
	struct cnp_action a = cnp_translate(&r, &p);
	struct cc_event ev = { .type = CC_EV_CNP };
	struct agent_qp_view before, after;
	uint32_t qpn = 0;

	(void)state;
	afx_register(f, &reg);
	assert_int_equal(agent_qp_view(f->a, 0x11, &before), 0);
	assert_int_equal(a.what, CNP_DO_EVENT);
	assert_int_equal(agent_qp_find_flow(f->a, a.local_ip, a.peer_ip, a.peer_qpn, &qpn), 0);
	assert_int_equal(qpn, 0x11);
	assert_int_equal(agent_qp_event(f->a, qpn, &ev, T0 + 1000), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &after), 0);
	printf("  dcqcn QP 0x11: %llu -> %llu b/s on the CNP\n",
	       (unsigned long long)before.rate_bps, (unsigned long long)after.rate_bps);
	assert_int_equal(after.rate_bps, before.rate_bps / 2);
	afx_free(f);
}

/* The same over IPv6: the QP registered as an IPv6 flow (AGENT_QP_IPV6), the CNP report
 * of an IPv6 frame finds it; an IPv4 lookup whose addresses are the IPv6 ones' last four
 * bytes does not, nor does an IPv6 one of another peer. */
static void test_cnp_cuts_dcqcn6(void **state)
{
	struct agent_params ap = afx_params("dcqcn");
	struct afx *f = afx_new(&ap);
	struct agent_qp_reg reg = afx_reg(0x11, 0x21);
	struct cnp_pair pairs[] = { { 0x11, 0x21 } };
	struct cnp_peers p = { NULL, 0, pairs, 1 };
	struct qp_tci_report r = { .kind = QP_TCI_K_CNP, .dqpn = 0x11, .ipv6 = 1,
				   .opcode = FRAME_OP_CNP };
	struct cnp_action a;
	struct cc_event ev = { .type = CC_EV_CNP };
	struct agent_qp_view before, after;
	uint32_t qpn = 0;

	(void)state;
	reg.local_ip = reg.peer_ip = 0;
	reg.flags = AGENT_QP_IPV6;
	memcpy(reg.local_ip6, us6, 16);
	memcpy(reg.peer_ip6, x6, 16);
	afx_register(f, &reg);
	memcpy(r.saddr, x6, 16);
	memcpy(r.daddr, us6, 16);
	a = cnp_translate(&r, &p);
	assert_int_equal(a.what, CNP_DO_EVENT);
	assert_int_equal(agent_qp_find_flow(f->a, 0x00000001u, 0x00000002u, 0x21, &qpn), -ENOENT);
	assert_int_equal(agent_qp_find_flow6(f->a, a.local_ip6, x6, 0x22, &qpn), -ENOENT);
	assert_int_equal(agent_qp_find_flow6(f->a, a.local_ip6, a.peer_ip6, a.peer_qpn, &qpn), 0);
	assert_int_equal(qpn, 0x11);
	assert_int_equal(agent_qp_view(f->a, 0x11, &before), 0);
	assert_int_equal(agent_qp_event(f->a, qpn, &ev, T0 + 1000), 0);
	assert_int_equal(agent_qp_view(f->a, 0x11, &after), 0);
	assert_int_equal(after.rate_bps, before.rate_bps / 2);
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_payload6),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_pairs_parse),
		cmocka_unit_test(test_translate),
		cmocka_unit_test(test_cnp_cuts_dcqcn),
		cmocka_unit_test(test_cnp_cuts_dcqcn6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
