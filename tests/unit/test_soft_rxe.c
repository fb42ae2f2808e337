/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend against kernel rxe's own frames (tests/vectors/rxe-rocev2.pcap, Linux
 * 6.1, two QEMU guests; see tests/vectors/README.md):
 *  - their ICRC checks with frame.c and with the independent bitwise CRC the RC tests use;
 *  - the UDP source port follows rdma_get_udp_sport (both guests number QPs from 0x11, so
 *    the local and remote QPN of each connection are equal: frame 14, an ACK from the
 *    other guest, carries the same QPN and port);
 *  - a soft host playing the sending guest, given the same QPNs, PSNs, keys and data,
 *    emits the same eight SEND and WRITE frames and the RDMA READ request byte for byte,
 *    given rxe's IPv4 ids (Linux draws them from a per-destination counter; the id enters
 *    the IP checksum and ICRC); rxe's READ responses complete its READ with their data;
 *  - a soft host playing the receiving guest takes rxe's frames, places the data, and
 *    answers with rxe's own ACK and rxe's own READ response FIRST, MIDDLE and LAST, byte
 *    for byte (same exception). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "pcap_frames.h"

#include "icrc_ref.h"
#include "qpace/soft_host.h"

#define VECTORS "tests/vectors/rxe-rocev2.pcap"
#define MAX_VEC 32
#define IP_G1 0x0a000001u   /* the guest that received SENDs and WRITEs */
#define IP_G2 0x0a000002u   /* the guest that sent them */
#define OFF_IP_ID 18        /* Ethernet 14 + 4 */
#define OFF_IP_CSUM 24      /* Ethernet 14 + 10 */

struct vec {
	uint8_t b[PCAP_FRAME_MAX_BYTES];
	size_t len;
	struct frame_parsed p;
};

static bool is_read_response(uint8_t op)
{
	return op >= FRAME_OP_RC_READ_RESP_FIRST && op <= FRAME_OP_RC_READ_RESP_ONLY;
}

static struct vec vecs[MAX_VEC];
static int nvec;

static int load(void **state)
{
	static struct pcap_frame raw[MAX_VEC];
	size_t nraw = 0;

	(void)state;
	if (pcap_frames_load(VECTORS, raw, MAX_VEC, &nraw))
		return -1;
	for (size_t i = 0; i < nraw; i++) {
		struct vec *v = &vecs[nvec];

		memcpy(v->b, raw[i].b, raw[i].len);
		v->len = raw[i].len;
		if (frame_parse(&v->p, v->b, v->len) == 0 && (v->p.layers & FRAME_L_ROCE))
			nvec++;
	}
	return nvec >= 14 ? 0 : -1;
}

/* The request frame (not an ACK, not a READ response) with this QPN and PSN. */
static const struct vec *by_qp_psn(uint32_t qpn, uint32_t psn)
{
	for (int i = 0; i < nvec; i++)
		if (vecs[i].p.bth.dest_qp == qpn && vecs[i].p.bth.psn == psn &&
		    vecs[i].p.bth.opcode != FRAME_OP_RC_ACK && !is_read_response(vecs[i].p.bth.opcode))
			return &vecs[i];
	return NULL;
}

/* The READ response with this QPN and PSN. */
static const struct vec *response_at(uint32_t qpn, uint32_t psn)
{
	for (int i = 0; i < nvec; i++)
		if (vecs[i].p.bth.dest_qp == qpn && vecs[i].p.bth.psn == psn &&
		    is_read_response(vecs[i].p.bth.opcode))
			return &vecs[i];
	return NULL;
}

static const struct vec *by_opcode(uint8_t op)
{
	for (int i = 0; i < nvec; i++)
		if (vecs[i].p.bth.opcode == op)
			return &vecs[i];
	return NULL;
}

/* Equal to rxe's frame once ours carries rxe's IPv4 id: the id is covered by the IPv4
 * header checksum and by the ICRC (only TOS, TTL and the checksum are masked), so both are
 * recomputed here with it; every other byte must already match. */
static void assert_same_frame(const uint8_t *mine, size_t len, const struct vec *v)
{
	uint8_t f[SOFT_FRAME_MAX];
	struct frame_parsed p;
	uint32_t icrc;

	assert_int_equal(len, v->len);
	memcpy(f, mine, len);
	f[OFF_IP_ID] = v->b[OFF_IP_ID];
	f[OFF_IP_ID + 1] = v->b[OFF_IP_ID + 1];
	f[OFF_IP_CSUM] = f[OFF_IP_CSUM + 1] = 0;
	icrc = frame_ipv4_csum(f + 14, 20);
	f[OFF_IP_CSUM] = (uint8_t)(icrc >> 8);
	f[OFF_IP_CSUM + 1] = (uint8_t)icrc;
	assert_int_equal(frame_parse(&p, f, len), 0);
	icrc = frame_icrc(f, &p);
	for (int b = 0; b < 4; b++)
		f[len - 4 + (size_t)b] = (uint8_t)(icrc >> (8 * b));
	for (size_t i = 0; i < len; i++)
		if (f[i] != v->b[i])
			fail_msg("byte %zu (opcode 0x%02x psn %u): soft 0x%02x, rxe 0x%02x", i,
				 v->p.bth.opcode, v->p.bth.psn, f[i], v->b[i]);
}

static void test_icrc_two_ways(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		uint8_t m[2048];
		struct frame_parsed p;

		assert_true(frame_icrc_ok(vecs[i].b, &vecs[i].p));
		assert_true(icrc_ref_ok(vecs[i].b, vecs[i].len));
		/* TTL is masked; the last payload byte before the ICRC is not. */
		memcpy(m, vecs[i].b, vecs[i].len);
		m[22] ^= 0x3f;
		assert_true(icrc_ref_ok(m, vecs[i].len));
		m[vecs[i].len - 5] ^= 1;
		assert_false(icrc_ref_ok(m, vecs[i].len));
		assert_int_equal(frame_parse(&p, m, vecs[i].len), 0);
		assert_false(frame_icrc_ok(m, &p));
	}
	print_message("%d rxe frames: ICRC right by frame.c and by the bitwise reference\n", nvec);
}

static void test_udp_source_port(void **state)
{
	(void)state;
	for (int i = 0; i < nvec; i++) {
		const struct frame_parsed *p = &vecs[i].p;

		assert_int_equal(p->udp.sport, soft_roce_sport(p->bth.dest_qp, p->bth.dest_qp));
		assert_int_equal(p->ip.ttl, 64);
		assert_int_equal(p->ip.frag, FRAME_IPV4_DF);
		assert_int_equal(p->udp.csum, 0);
	}
}

/* ---- a soft host in each guest's place ---- */

struct region {
	uint64_t va;
	uint32_t rkey;
	uint8_t buf[4096];
	uint32_t len;
};

#define NREGIONS 3
static struct region regions[NREGIONS] = {
	{ .va = 0x00005571cfdf7000ull, .rkey = 0x474, .len = 2500 },
	{ .va = 0x000055de924cc000ull, .rkey = 0x54c, .len = 64 },
	{ .va = 0x000055d4ace75000ull, .rkey = 0x6b6, .len = 2500 },   /* READ from */
};

static bool find_region(void *arg, uint32_t rkey, struct rc_region *out)
{
	(void)arg;
	for (int i = 0; i < NREGIONS; i++)
		if (regions[i].rkey == rkey) {
			*out = (struct rc_region){ .base = regions[i].buf, .va = regions[i].va,
						   .len = regions[i].len, .remote_write = true,
						   .remote_read = true };
			return true;
		}
	return false;
}

/* The connections of the capture: QPN (equal at both ends), first PSN, opcode. The fifth
 * carried an RDMA READ of 2500 bytes: three response packets. */
#define NCONN 5
#define NSERVED 5
#define READ_CONN 4
static const struct conn {
	uint32_t qpn, psn;
	enum qp_opcode op;
	uint32_t len;
	int region;
} conns[NCONN] = {
	{ 0x11, 8600312, QP_OP_SEND, 2500, -1 },
	{ 0x12, 2160132, QP_OP_SEND, 64, -1 },
	{ 0x13, 7762703, QP_OP_WRITE, 2500, 0 },
	{ 0x14, 847965, QP_OP_WRITE, 64, 1 },
	{ 0x15, 2927597, QP_OP_READ, 2500, 2 },
};

/* The message a connection carried, from the captured payloads (a READ's: its
 * responses'). */
static uint32_t message_of(const struct conn *c, uint8_t *out)
{
	uint32_t n = 0;

	for (uint32_t psn = c->psn; n < c->len; psn++) {
		const struct vec *v = c->op == QP_OP_READ ? response_at(c->qpn, psn)
							  : by_qp_psn(c->qpn, psn);

		assert_non_null(v);
		memcpy(out + n, v->b + v->p.payload_off, v->p.payload_len);
		n += v->p.payload_len;
	}
	assert_int_equal(n, c->len);
	return n;
}

/* A host in guest @ip's place with the capture's QPs, the peer's MAC learned. */
static struct soft_host *guest(uint32_t ip, bool responder, struct rc_qp *qps[NCONN])
{
	struct soft_host_params hp = { .ip = ip, .mac = { 0x52, 0x54, 0, 0, 0, (uint8_t)ip } };
	uint32_t peer = ip == IP_G1 ? IP_G2 : IP_G1;
	uint8_t arp[FRAME_ETH_MIN];
	char err[128];
	struct soft_host *h = soft_host_create(&hp, err, sizeof(err));
	int n;

	assert_non_null(h);
	for (int i = 0; i < NCONN; i++) {
		struct rc_params p;
		int qpn = soft_host_qpn_reserve(h);

		assert_int_equal(qpn, (int)conns[i].qpn);   /* both number from 0x11, like rxe */
		rc_params_init(&p);
		p.qpn = conns[i].qpn;
		p.sq_psn = responder ? 1 : conns[i].psn;
		p.mr_find = find_region;
		qps[i] = rc_create(&p, err, sizeof(err));
		assert_non_null(qps[i]);
		assert_int_equal(soft_host_qp_attach(h, conns[i].qpn, qps[i]), 0);
		assert_int_equal(rc_connect(qps[i], &(struct rc_conn){
			.dest_qpn = conns[i].qpn, .rq_psn = responder ? conns[i].psn : 1,
			.mtu_bytes = 1024 }), 0);
		assert_int_equal(soft_host_qp_connect(h, conns[i].qpn, peer, conns[i].qpn, 0), 0);
	}
	n = frame_build_arp(arp, sizeof(arp), FRAME_ARP_REPLY,
			    (const uint8_t[6]){ 0x52, 0x54, 0, 0, 0, (uint8_t)peer }, peer, hp.mac, ip);
	soft_host_input(h, arp, (size_t)n, 0);
	return h;
}

static void guest_free(struct soft_host *h, struct rc_qp *qps[NCONN])
{
	for (int i = 0; i < NCONN; i++)
		rc_destroy(qps[i]);
	soft_host_destroy(h);
}

static void test_soft_sends_what_rxe_sends(void **state)
{
	struct rc_qp *qps[NCONN];
	struct soft_host *h = guest(IP_G2, false, qps);
	uint8_t msg[NCONN][2500], out[SOFT_FRAME_MAX], got[2500];
	int frames = 0, n;
	struct qp_wc wc;

	(void)state;
	for (int i = 0; i < NSERVED; i++) {
		bool read = conns[i].op == QP_OP_READ;
		struct qp_wr wr = { .opcode = conns[i].op, .wr_id = (uint64_t)i,
				    .addr = read ? got : msg[i],
				    .length = message_of(&conns[i], msg[i]),
				    .flags = QP_WR_SIGNALED };

		if (conns[i].region >= 0) {
			wr.remote_addr = regions[conns[i].region].va;
			wr.rkey = regions[conns[i].region].rkey;
		}
		assert_int_equal(rc_post_send(qps[i], &wr, 0), 0);
		soft_host_qp_changed(h, rc_qpn(qps[i]));   /* a post outside the host */
	}
	while ((n = soft_host_output(h, 0, out, sizeof(out))) > 0) {
		struct frame_parsed p;
		const struct vec *v;

		assert_int_equal(frame_parse(&p, out, (size_t)n), 0);
		v = by_qp_psn(p.bth.dest_qp, p.bth.psn);
		assert_non_null(v);
		assert_same_frame(out, (size_t)n, v);
		frames++;
	}
	print_message("soft host as the sending guest: %d frames, each equal to rxe's\n", frames);
	assert_int_equal(frames, 9);
	/* rxe's READ responses complete the READ with their data. */
	for (int i = 0; i < nvec; i++)
		if (is_read_response(vecs[i].p.bth.opcode) &&
		    vecs[i].p.bth.dest_qp == conns[READ_CONN].qpn)
			soft_host_input(h, vecs[i].b, vecs[i].len, 0);
	assert_int_equal(rc_poll_cq(qps[READ_CONN], &wc, 1), 1);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.opcode, QP_WC_READ);
	assert_int_equal(wc.byte_len, 2500);
	assert_memory_equal(got, msg[READ_CONN], 2500);
	assert_int_equal(rc_stats(qps[READ_CONN])->read_rx_bytes, 2500);
	guest_free(h, qps);
}

static void test_soft_answers_like_rxe(void **state)
{
	struct rc_qp *qps[NCONN];
	struct soft_host *h = guest(IP_G1, true, qps);
	const struct soft_host_stats *st = soft_host_stats(h);
	static uint8_t rbuf[2][4096];
	uint8_t msg[2500], out[SOFT_FRAME_MAX];
	const struct vec *ack = by_opcode(FRAME_OP_RC_ACK);
	int acks = 0, matched = 0, responses = 0, n;
	struct qp_wc wc;

	(void)state;
	message_of(&conns[READ_CONN], regions[conns[READ_CONN].region].buf);   /* READ from */
	for (int i = 0; i < 2; i++) {
		struct qp_recv_wr rr = { .wr_id = (uint64_t)i, .addr = rbuf[i], .length = 4096 };

		assert_int_equal(rc_post_recv(qps[i], &rr), 0);
		soft_host_qp_changed(h, rc_qpn(qps[i]));
	}
	for (int i = 0; i < nvec; i++)   /* every frame of the capture, both directions */
		soft_host_input(h, vecs[i].b, vecs[i].len, 0);
	/* The data landed. */
	for (int i = 0; i < NSERVED; i++) {
		uint32_t len = message_of(&conns[i], msg);

		if (conns[i].op == QP_OP_READ)
			continue;
		if (conns[i].op == QP_OP_SEND) {
			assert_int_equal(rc_poll_cq(qps[i], &wc, 1), 1);
			assert_int_equal(wc.status, QP_WC_SUCCESS);
			assert_int_equal(wc.byte_len, len);
			assert_memory_equal(rbuf[i], msg, len);
		} else {
			assert_memory_equal(regions[conns[i].region].buf, msg, len);
		}
	}
	/* One ACK per SEND and WRITE, the one rxe captured ours byte for byte; the READ's
	 * three responses, each rxe's byte for byte. */
	while ((n = soft_host_output(h, 0, out, sizeof(out))) > 0) {
		struct frame_parsed p;

		assert_int_equal(frame_parse(&p, out, (size_t)n), 0);
		if (is_read_response(p.bth.opcode)) {
			assert_same_frame(out, (size_t)n, response_at(p.bth.dest_qp, p.bth.psn));
			responses++;
			continue;
		}
		assert_int_equal(p.bth.opcode, FRAME_OP_RC_ACK);
		acks++;
		if (p.bth.dest_qp == ack->p.bth.dest_qp) {
			assert_same_frame(out, (size_t)n, ack);
			matched++;
		}
	}
	print_message("soft host as the receiving guest: data placed, %d ACKs, rxe's ACK matched "
		      "%d time(s); %d READ responses, each rxe's; %llu frames refused by a QP, "
		      "%llu not for this host\n", acks, matched, responses,
		      (unsigned long long)st->drops[SOFT_DROP_RC],
		      (unsigned long long)st->drops[SOFT_DROP_NOT_FOR_US]);
	assert_int_equal(acks, NSERVED - 1);
	assert_int_equal(matched, 1);
	assert_int_equal(responses, 3);
	assert_int_equal(rc_stats(qps[READ_CONN])->reads_rx, 1);
	assert_int_equal(st->drops[SOFT_DROP_RC], 0);
	assert_int_equal(st->drops[SOFT_DROP_NOT_FOR_US], 5);   /* the other guest's frames */
	guest_free(h, qps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icrc_two_ways),
		cmocka_unit_test(test_udp_source_port),
		cmocka_unit_test(test_soft_sends_what_rxe_sends),
		cmocka_unit_test(test_soft_answers_like_rxe),
	};

	return cmocka_run_group_tests(tests, load, NULL);
}
