/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the tc egress BPF program's parser, run in the kernel with
 * BPF_PROG_TEST_RUN over each input as a frame. Whatever the bytes, the verdict is
 * TC_ACT_OK, the frame comes back unchanged, and exactly one of the counters that classify
 * a frame (roce, pass_*) moves, by one; a frame classed RoCEv2 is UDP to 4791 as the
 * lib's decoders read it. Needs root; where the kernel refuses BPF, every input is a
 * no-op and one line says why. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "bpf/tc_egress.h"
#include "qpace/frame.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct qp_tc *tc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[300];
	struct qp_tc_conf c = qp_tc_conf_default();
	struct qp_tc_key k = qp_tc_key_ipv4(0x0a000002u, 0x123456);
	struct qp_tc_rate r = { .rate_bps = 1000000000ull, .flags = QP_TC_F_PACE };

	(void)argc;
	(void)argv;
	if (qp_tc_open(&tc, err, sizeof(err))) {
		fprintf(stderr, "fuzz_tc_egress: the kernel refuses BPF, inputs not run: %s\n",
			err);
		tc = NULL;
		return 0;
	}
	c.mode = QP_TC_MODE_ENFORCE;
	c.report_gap_ns = 0;
	qp_tc_set_conf(tc, &c);
	qp_tc_set_rate(tc, &k, &r);   /* the seeds' flow: paced */
	return 0;
}

/* One distinct branch per counter that moved, so libFuzzer (which cannot see the kernel's
 * coverage) keeps an input for each class of frame and each event it finds. */
static volatile uint64_t seen[QP_TC_C_COUNT];

static void note_classes(const uint64_t b[QP_TC_C_COUNT], const uint64_t a[QP_TC_C_COUNT])
{
	for (unsigned i = 0; i < QP_TC_C_COUNT; i++) {
		if (a[i] == b[i])
			continue;
		switch (i) {
		case QP_TC_C_ROCE: seen[0]++; break;
		case QP_TC_C_PASS_SHORT_ETH: seen[1]++; break;
		case QP_TC_C_PASS_VLAN: seen[2]++; break;
		case QP_TC_C_PASS_NOT_IP: seen[3]++; break;
		case QP_TC_C_PASS_SHORT_IP: seen[4]++; break;
		case QP_TC_C_PASS_BAD_IP: seen[5]++; break;
		case QP_TC_C_PASS_FRAGMENT: seen[6]++; break;
		case QP_TC_C_PASS_NOT_UDP: seen[7]++; break;
		case QP_TC_C_PASS_SHORT_UDP: seen[8]++; break;
		case QP_TC_C_PASS_NOT_ROCE: seen[9]++; break;
		case QP_TC_C_PASS_SHORT_BTH: seen[10]++; break;
		case QP_TC_C_UNKNOWN: seen[11]++; break;
		case QP_TC_C_PACED: seen[12]++; break;
		case QP_TC_C_HORIZON: seen[13]++; break;
		case QP_TC_C_REPORTS: seen[14]++; break;
		case QP_TC_C_REPORT_LIMITED: seen[15]++; break;
		case QP_TC_C_REPORT_FULL: seen[16]++; break;
		default: seen[17]++; break;
		}
	}
}

static uint64_t classified(const uint64_t c[QP_TC_C_COUNT])
{
	uint64_t n = c[QP_TC_C_ROCE];

	for (unsigned i = QP_TC_C_PASS_SHORT_ETH; i <= QP_TC_C_PASS_SHORT_BTH; i++)
		n += c[i];
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[4096];
	uint64_t before[QP_TC_C_COUNT], after[QP_TC_C_COUNT];
	struct __sk_buff ctx = { 0 }, ctx_out = { 0 };

	if (!tc || size < FRAME_ETH_HLEN || size > sizeof(out))
		return 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)size,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx_out,
		    .ctx_size_out = sizeof(ctx_out), .repeat = 1);
	if (qp_tc_counters(tc, before))
		abort();
	if (bpf_prog_test_run_opts(qp_tc_prog_fd(tc), &o))
		return 0;   /* refused by the kernel itself (an IP ethertype without its header) */
	if (qp_tc_counters(tc, after))
		abort();
	if (o.retval != TC_ACT_OK || o.data_size_out != size || memcmp(out, data, size))
		abort();
	if (classified(after) - classified(before) != 1)
		abort();
	note_classes(before, after);
	if (after[QP_TC_C_ROCE] != before[QP_TC_C_ROCE]) {
		uint16_t et = (uint16_t)(data[12] << 8 | data[13]);
		size_t l4 = 0;

		if (et == FRAME_ETHERTYPE_IPV4) {
			struct frame_ipv4 ip;

			if (frame_ipv4_decode(&ip, data + FRAME_ETH_HLEN, size - FRAME_ETH_HLEN) <= 0 ||
			    ip.proto != FRAME_IPPROTO_UDP || (ip.frag & (FRAME_IPV4_MF | FRAME_IPV4_OFFMASK)))
				abort();
			l4 = FRAME_ETH_HLEN + ip.hlen;
		} else if (et == 0x86dd) {
			if (size < FRAME_ETH_HLEN + 40 || data[FRAME_ETH_HLEN + 6] != FRAME_IPPROTO_UDP)
				abort();
			l4 = FRAME_ETH_HLEN + 40;
		} else {
			abort();
		}
		if (l4 + FRAME_UDP_HLEN + FRAME_BTH_LEN > size ||
		    (data[l4 + 2] << 8 | data[l4 + 3]) != FRAME_ROCEV2_PORT)
			abort();
	}
	return 0;
}
