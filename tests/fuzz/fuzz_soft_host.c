/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the soft backend's receive path (qpace/soft_host.h) and the RC
 * requester and responder behind it (qpace/rc.h). A host 10.0.0.1 with two QPs connected to
 * a peer 10.0.0.2, a 64 KiB region the peer may WRITE, READ and run atomics on, receives
 * posted; the input is a script (fuzz_input.h) of frames from the wire (raw bytes, or RoCEv2
 * frames from the peer built with a valid ICRC around any opcode, QPN, PSN near the expected
 * one, RETH, AETH, AtomicETH, AtomicAckETH and payload, then maybe damaged: the peer's
 * requests, READ and atomics included, and responses to ours, READ responses and atomic
 * ACKs included; ARP; telemetry datagrams), of posts (WRITE, SEND, READ, atomics) and
 * receives by the application, and of clock steps that run the RC timers (retransmission,
 * RNR) and drain what the host sends.
 *
 * Properties: no crash, no undefined behaviour, no leak; every frame the host sends parses,
 * and a RoCEv2 one carries a good ICRC; a QP never has more send WRs outstanding than its
 * depth; every completion names a WR that was posted. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "qpace/frame.h"
#include "qpace/qp.h"
#include "qpace/rc.h"
#include "qpace/soft_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LOCAL_IP 0x0a000001u
#define PEER_IP 0x0a000002u
#define NQP 2
#define RKEY 0x1234u
#define SQ_DEPTH 16u
#define PEER_PSN 0x100u   /* the first PSN the peer sends to QP i: + 0x1000 * i */
#define MEM 65536u

struct host {
	struct soft_host *h;
	struct rc_qp *qp[NQP];
	uint32_t qpn[NQP];
	uint8_t mem[MEM];
	uint8_t src[MEM];
	uint64_t posted;         /* send wr_ids handed out: 1..posted */
	uint64_t recvs;          /* receive wr_ids: 1..recvs */
	qp_time_ns now;
};

static bool mem_find(void *arg, uint32_t rkey, struct rc_region *out)
{
	struct host *t = arg;

	if (rkey != RKEY)
		return false;
	*out = (struct rc_region){ .base = t->mem, .va = 0x10000, .len = MEM,
				   .remote_write = true, .remote_read = true,
				   .remote_atomic = true };
	return true;
}

static void telemetry(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *payload,
		      size_t len, qp_time_ns now)
{
	(void)arg, (void)src_ip, (void)src_port, (void)now;
	if (len && !payload)
		abort();
}

static const uint8_t opcodes[] = {
	FRAME_OP_RC_SEND_FIRST, FRAME_OP_RC_SEND_MIDDLE, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x81,
	0x64, 0x1f,
};

static void peer_addr(struct frame_addr *a, uint16_t port)
{
	*a = (struct frame_addr){ .ip = PEER_IP, .port = port };
	soft_mac_from_ip(PEER_IP, a->mac);
}

static void local_addr(struct host *t, struct frame_addr *a)
{
	*a = (struct frame_addr){ .ip = LOCAL_IP };
	memcpy(a->mac, soft_host_mac(t->h), FRAME_ETH_ALEN);
}

static int build_roce(struct host *t, struct fz *f, uint8_t *buf, size_t cap)
{
	static uint8_t payload[4096];
	unsigned q = fz_pick(f, NQP);
	struct frame_roce_spec s;
	uint8_t op = opcodes[fz_pick(f, sizeof(opcodes))];
	bool ack = op >= 0x0d && op <= 0x12;   /* responses: near what the QP sent */

	memset(&s, 0, sizeof(s));
	peer_addr(&s.src, 0xc000 | fz_u16(f));
	local_addr(t, &s.dst);
	s.bth.opcode = op;
	s.bth.dest_qp = fz_u8(f) % 8 ? t->qpn[q] : fz_u32(f) & 0xffffff;
	/* requests near the PSN the QP expects; ACKs near what it sent */
	s.bth.psn = ((ack ? 1000u * t->qpn[q] : PEER_PSN + 0x1000u * q) +
		     (uint32_t)(int8_t)fz_u8(f)) & 0xffffff;
	s.bth.ackreq = fz_u8(f) & 1;
	s.bth.se = fz_u8(f) & 1;
	s.reth = (struct frame_reth){ .va = fz_u8(f) % 4 ? 0x10000 + fz_u16(f) : fz_u64(f),
				      .rkey = fz_u8(f) % 4 ? RKEY : fz_u32(f),
				      .dma_len = fz_u8(f) % 4 ? fz_u16(f) : fz_u32(f) };
	s.aeth = (struct frame_aeth){ fz_u8(f), fz_u32(f) & 0xffffff };
	s.atomic = (struct frame_atomiceth){ .va = fz_u8(f) % 4 ? 0x10000 + (fz_u16(f) & ~7u)
								: fz_u64(f),
					     .rkey = fz_u8(f) % 4 ? RKEY : fz_u32(f),
					     .swap_add = fz_u64(f), .compare = fz_u64(f) };
	s.atomic_orig = fz_u64(f);
	s.imm = fz_u32(f);
	s.payload = payload;
	s.payload_len = fz_u16(f) % (sizeof(payload) + 1);
	if (op == FRAME_OP_RC_CMP_SWAP || op == FRAME_OP_RC_FETCH_ADD)
		s.payload_len = 0;   /* the builder refuses more; raw frames may carry some */
	return frame_build_roce(buf, cap, &s);
}

static int build_other(struct host *t, struct fz *f, uint8_t *buf, size_t cap)
{
	struct frame_addr src, dst;
	size_t got;
	const uint8_t *p;

	peer_addr(&src, fz_u16(f));
	local_addr(t, &dst);
	if (fz_pick(f, 2))
		return frame_build_arp(buf, cap, (uint16_t)(1 + fz_pick(f, 2)), src.mac,
				       fz_u8(f) % 4 ? PEER_IP : fz_u32(f), dst.mac,
				       fz_u8(f) % 4 ? LOCAL_IP : fz_u32(f));
	dst.port = fz_u8(f) % 4 ? 4792 : fz_u16(f);
	p = fz_bytes(f, fz_u16(f) % 1400, &got);
	return frame_build_udp(buf, cap, &src, &dst, NULL, p, got);
}

static void post(struct host *t, struct fz *f)
{
	static const enum qp_opcode ops[] = { QP_OP_WRITE, QP_OP_WRITE_IMM, QP_OP_SEND,
					      QP_OP_SEND_IMM, QP_OP_READ, QP_OP_CMP_SWAP,
					      QP_OP_FETCH_ADD };
	unsigned q = fz_pick(f, NQP);

	if (fz_pick(f, 2)) {
		enum qp_opcode op = ops[fz_pick(f, sizeof(ops) / sizeof(ops[0]))];
		struct qp_wr wr = { .opcode = op, .wr_id = t->posted + 1,
				    .addr = t->src, .length = fz_u16(f) % MEM,
				    .remote_addr = 0x10000 + fz_u16(f), .rkey = RKEY,
				    .imm = fz_u32(f), .flags = QP_WR_SIGNALED,
				    .compare_add = fz_u64(f), .swap = fz_u64(f) };

		if (qp_op_is_atomic(op)) {   /* READ and atomics write t->src: a scratch */
			wr.length = 8;
			wr.remote_addr &= ~7ull;
		}

		if (rc_post_send(t->qp[q], &wr, t->now) == 0)
			t->posted++;
	} else {
		struct qp_recv_wr rw = { .wr_id = t->recvs + 1, .addr = t->mem,
					 .length = fz_u16(f) % MEM };

		if (rc_post_recv(t->qp[q], &rw) == 0)
			t->recvs++;
	}
	soft_host_qp_changed(t->h, rc_qpn(t->qp[q]));   /* posted outside the host */
}

/* Run the timers, take every frame the host sends (each must parse; RoCEv2 with a good
 * ICRC), and every completion (each must name a posted WR). */
static void drain(struct host *t)
{
	static uint8_t out[SOFT_FRAME_MAX];
	struct frame_parsed fp;
	int n, guard = 0;

	if (t->now >= soft_host_deadline(t->h))
		soft_host_tick(t->h, t->now);
	while ((n = soft_host_output(t->h, t->now, out, sizeof(out))) > 0 && guard++ < 4096) {
		if (frame_parse(&fp, out, (size_t)n))
			abort();
		if ((fp.layers & FRAME_L_ROCE) && !frame_icrc_ok(out, &fp))
			abort();
	}
	if (n < 0)
		abort();
	for (unsigned q = 0; q < NQP; q++) {
		struct qp_wc wc[8];
		int k;

		if (rc_sq_outstanding(t->qp[q]) > SQ_DEPTH)
			abort();
		while ((k = rc_poll_cq(t->qp[q], wc, 8)) > 0)
			for (int i = 0; i < k; i++)
				if (!wc[i].wr_id || wc[i].wr_id > (t->posted > t->recvs
								    ? t->posted : t->recvs))
					abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct host t;
	static uint8_t frame[SOFT_FRAME_MAX + 64];
	struct soft_host_params hp = { .ip = LOCAL_IP, .telemetry = telemetry, .max_qps = 8 };
	struct fz f = { data, size };
	char err[200];

	memset(&t, 0, sizeof(t));
	t.now = QP_NS_PER_S;
	soft_mac_from_ip(LOCAL_IP, hp.mac);
	if (!(t.h = soft_host_create(&hp, err, sizeof(err))))
		abort();
	for (unsigned q = 0; q < NQP; q++) {
		struct rc_params p;
		int qpn = soft_host_qpn_reserve(t.h);

		rc_params_init(&p);
		p.qpn = (uint32_t)qpn;
		p.sq_psn = 1000u * (uint32_t)qpn;
		p.sq_depth = SQ_DEPTH;
		p.rq_depth = 16;
		p.window_pkts = 8 + 8 * q;
		p.ackreq_every = 4;
		p.ack_every = 2;
		p.rto_ns = QP_NS_PER_MS;
		p.mr_find = mem_find;
		p.mr_arg = &t;
		if (qpn < 0 || !(t.qp[q] = rc_create(&p, err, sizeof(err))) ||
		    soft_host_qp_attach(t.h, (uint32_t)qpn, t.qp[q]) ||
		    rc_connect(t.qp[q], &(struct rc_conn){ .dest_qpn = 0x21 + q,
							   .rq_psn = PEER_PSN + 0x1000u * q,
							   .mtu_bytes = q ? 4096 : 1024 }) ||
		    soft_host_qp_connect(t.h, (uint32_t)qpn, PEER_IP, 0x21 + q, 0))
			abort();
		t.qpn[q] = (uint32_t)qpn;
	}
	while (f.n) {
		int n = 0;

		t.now += (uint64_t)fz_u16(&f) << fz_pick(&f, 16);
		switch (fz_pick(&f, 5)) {
		case 0:
		case 1:
			n = build_roce(&t, &f, frame, sizeof(frame));
			if (n > 0 && fz_u8(&f) == 0x5a)
				frame[fz_u16(&f) % (unsigned)n] ^= (uint8_t)(1u << fz_pick(&f, 8));
			break;
		case 2:
			n = build_other(&t, &f, frame, sizeof(frame));
			break;
		case 3: {
			size_t got;
			const uint8_t *raw = fz_bytes(&f, fz_u16(&f) % sizeof(frame), &got);

			memcpy(frame, raw, got);
			n = (int)got;
			break;
		}
		default:
			post(&t, &f);
		}
		if (n > 0)
			soft_host_input(t.h, frame, (size_t)n, t.now);
		drain(&t);
	}
	for (unsigned q = 0; q < NQP; q++) {
		soft_host_qpn_release(t.h, t.qpn[q]);
		rc_destroy(t.qp[q]);
	}
	soft_host_destroy(t.h);
	return 0;
}
