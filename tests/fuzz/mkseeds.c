/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The binary seeds of the fuzz targets whose inputs start with a magic number or a
 * checksum a mutator rarely finds by itself: valid messages made by the codecs themselves
 * (fb_encode, ctl_encode, qp_wire_conn_encode, frame_build_*), written as
 * tests/fuzz/corpus/NAME/seed-*. `make fuzz-seeds` runs it; the files are checked in.
 * The text targets' seeds are written by hand; the script-driven targets' seeds (agent,
 * switch, soft_host) come from merged fuzzing runs (docs/testing.md, "Fuzzing").
 *
 *   mkseeds DIR      DIR = tests/fuzz/corpus */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fb_samples.h"
#include "frame6.h"
#include "qpace/ctl.h"
#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "qpace/pt_wire.h"
#include "qpace/qp_wire.h"

static const char *top;

static void put(const char *target, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/seed-%s", top, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void feedback(void)
{
	struct fb_msg m[FB_SAMPLES_MAX];
	uint8_t buf[FB_MAX_LEN];
	char name[32];
	size_t n;

	fb_samples(m, &n);
	for (size_t i = 0; i < n; i++) {
		int len = fb_encode(buf, sizeof(buf), &m[i]);

		if (len < 0)
			exit(1);
		snprintf(name, sizeof(name), "%s-%zu", fb_type_name(m[i].type), i);
		put("feedback", name, buf, (size_t)len);
	}
}

static const struct agent_qp_reg reg = {
	.qpn = 0x13, .peer_qpn = 0x23, .local_ip = 0x0a000001, .peer_ip = 0x0a000002,
	.mtu_bytes = 1024, .link_bps = 400000000, .base_rtt_ns = 10000, .algo = "hpcc",
};

/* One of each request, the agent's answers too (a client may send those by mistake). */
static size_t ctl_messages(struct ctl_msg *m)
{
	size_t k = 0;

	m[k++] = (struct ctl_msg){ .type = CTL_T_REGISTER, .id = 1, .u.reg = reg };
	m[k++] = (struct ctl_msg){ .type = CTL_T_EVENT, .id = 2,
				   .u.event = { .qpn = 0x13, .type = CTL_EV_RTT, .value = 20000 } };
	m[k++] = (struct ctl_msg){ .type = CTL_T_STATS, .id = 3,
				   .u.stats = { .qpn = 0x13, .tx_bytes = 1 << 20 } };
	m[k++] = (struct ctl_msg){ .type = CTL_T_LIST, .id = 4 };
	m[k++] = (struct ctl_msg){ .type = CTL_T_SHOW, .id = 5, .u.qpn = 0x13 };
	m[k++] = (struct ctl_msg){ .type = CTL_T_SET, .id = 6,
				   .u.set = { .qpn = 0x13, .what = CTL_SET_RATE,
					      .rate_bps = 100000000 } };
	m[k] = (struct ctl_msg){ .type = CTL_T_SET, .id = 7,
				 .u.set = { .qpn = 0x13, .what = CTL_SET_ALGO } };
	strcpy(m[k].u.set.algo, "dcqcn");
	strcpy(m[k++].u.set.params, "rate_ai=10M");
	m[k++] = (struct ctl_msg){ .type = CTL_T_STATUS, .id = 8 };
	m[k++] = (struct ctl_msg){ .type = CTL_T_UNREGISTER, .id = 9, .u.qpn = 0x13 };
	m[k++] = (struct ctl_msg){ .type = CTL_T_REPLY, .id = 10, .u.reply = { .status = -1 } };
	m[k++] = (struct ctl_msg){ .type = CTL_T_TXSTATE, .id = 11,
				   .u.txstate = { .qpn = 0x13, .psn = 0xfffffe,
						  .enforce = AGENT_ENF_NIC } };
	return k;
}

/* fuzz_ctl: one message each; fuzz_ctl_stream: scripts of (connection, u16 length,
 * message, clock step) in a session's order, and two connections crossing. */
static void ctl(void)
{
	struct ctl_msg m[16];
	uint8_t buf[CTL_MAX_LEN], script[16 * (CTL_MAX_LEN + 4)];
	size_t n = ctl_messages(m), at = 0, cross = 0;
	uint8_t cross_buf[4 * (CTL_MAX_LEN + 4)];

	for (size_t i = 0; i < n; i++) {
		int len = ctl_encode(buf, sizeof(buf), &m[i]);

		if (len < 0)
			exit(1);
		put("ctl", ctl_type_name(m[i].type), buf, (size_t)len);
		script[at++] = 0;
		script[at++] = (uint8_t)(len >> 8);
		script[at++] = (uint8_t)len;
		memcpy(script + at, buf, (size_t)len);
		at += (size_t)len;
		script[at++] = 1;
		/* the other connection tries to unregister and report for the first's QP */
		if (m[i].type == CTL_T_UNREGISTER || m[i].type == CTL_T_STATS ||
		    m[i].type == CTL_T_REGISTER) {
			cross_buf[cross++] = (uint8_t)(m[i].type == CTL_T_REGISTER ? 0 : 1);
			cross_buf[cross++] = (uint8_t)(len >> 8);
			cross_buf[cross++] = (uint8_t)len;
			memcpy(cross_buf + cross, buf, (size_t)len);
			cross += (size_t)len;
			cross_buf[cross++] = 1;
		}
	}
	put("ctl_stream", "session", script, at);
	put("ctl_stream", "cross", cross_buf, cross);
}

static void conn(void)
{
	const struct qp_conn_info ci = { .qpn = 0x11, .psn = 0xabcdef, .mtu_bytes = 4096,
					 .rkey = 0x1234, .addr = 0x7f0000001000, .len = 1 << 20,
					 .gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 } };
	uint8_t buf[QP_WIRE_CONN_BYTES];

	if (qp_wire_conn_encode(&ci, buf, sizeof(buf)) != QP_WIRE_CONN_BYTES)
		exit(1);
	put("qp_wire", "conn", buf, sizeof(buf));
	put("qp_tcp", "conn", buf, sizeof(buf));
}

static void frames(void)
{
	static const uint8_t payload[256] = { 1, 2, 3 };
	struct frame_addr a = { { 2, 0, 10, 0, 0, 1 }, 0x0a000001, 0xc123 };
	struct frame_addr b = { { 2, 0, 10, 0, 0, 2 }, 0x0a000002, 4792 };
	struct frame_roce_spec s = { .src = a, .dst = b, .payload = payload,
				     .payload_len = sizeof(payload) };
	uint8_t buf[2048];
	int n;

	s.bth = (struct frame_bth){ .opcode = FRAME_OP_RC_SEND_FIRST, .dest_qp = 0x12,
				    .psn = 7, .ackreq = true };
	s.reth = (struct frame_reth){ 0x1000, 0x1234, 256 };
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-send", buf, (size_t)n);
	s.bth.opcode = 0x0a;   /* RDMA WRITE only: with RETH */
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-write", buf, (size_t)n);
	s.bth.opcode = FRAME_OP_RC_READ_RESP_FIRST;   /* AETH, then data */
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-read-response", buf, (size_t)n);
	s.bth.opcode = 0x11;   /* ACK */
	s.payload_len = 0;
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-ack", buf, (size_t)n);
	s.bth.opcode = FRAME_OP_RC_READ_REQUEST;
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-read", buf, (size_t)n);
	s.bth.opcode = FRAME_OP_RC_CMP_SWAP;   /* AtomicETH */
	s.atomic = (struct frame_atomiceth){ 0x1008, 0x1234, 5, 4 };
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-cmp-swap", buf, (size_t)n);
	s.bth.opcode = FRAME_OP_RC_ATOMIC_ACK;   /* AETH, AtomicAckETH */
	s.atomic_orig = 4;
	if ((n = frame_build_roce(buf, sizeof(buf), &s)) > 0)
		put("frame", "roce-atomic-ack", buf, (size_t)n);
	if ((n = frame_build_arp(buf, sizeof(buf), 1, a.mac, a.ip, (uint8_t[6]){ 0 }, b.ip)) > 0)
		put("frame", "arp", buf, (size_t)n);
	if ((n = frame_build_udp(buf, sizeof(buf), &a, &b, NULL, payload, 64)) > 0)
		put("frame", "udp", buf, (size_t)n);
	struct frame6_spec s6 = {   /* RoCEv2 over IPv6, ECT(0) */
		.src_mac = { 2, 0, 10, 0, 0, 1 }, .dst_mac = { 2, 0, 10, 0, 0, 2 },
		.src = { 0xfe, 0x80, [15] = 1 }, .dst = { 0xfe, 0x80, [15] = 2 },
		.tclass = 2, .sport = 0xc123,
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = 0x12, .psn = 9 },
		.payload = payload, .payload_len = 64,
	};
	if ((n = frame6_build(buf, sizeof(buf), &s6)) > 0)
		put("frame", "roce-ipv6", buf, (size_t)n);
}

/* perftest's exchange: a key message, a version, an MTU, a report field. */
static void perftest(void)
{
	struct pt_key k = { .out_reads = 16, .qpn = 0x11, .psn = 0x123456, .rkey = 0x6b6,
			    .vaddr = 0x55d4ace75000ull,
			    .gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 } };
	uint8_t buf[PT_KEY_LEN];

	if (pt_key_encode(buf, &k) == PT_KEY_LEN)
		put("pt_wire", "key", buf, sizeof(buf));
	pt_version_encode(buf, PT_VERSION);
	put("pt_wire", "version", buf, PT_VERSION_LEN);
	pt_mtu_encode(buf, 1024);
	put("pt_wire", "mtu", buf, PT_MTU_LEN);
	pt_double_encode(buf, 1234.5);
	put("pt_wire", "report", buf, PT_REPORT_FIELD_LEN);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	top = argv[1];
	feedback();
	ctl();
	conn();
	frames();
	perftest();
	return 0;
}
