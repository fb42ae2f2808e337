/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BPF_PROG_TEST_RUN of a tc program over one frame: see tc_run.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "tc_run.h"

const struct frame_addr tc_host_a = { { 2, 0, 0, 0, 0, 1 }, 0x0a000001, 49152 };
const struct frame_addr tc_host_b = { { 2, 0, 0, 0, 0, 2 }, 0x0a000002, 0 };

int tc_run_roce(uint8_t *buf, size_t cap, uint8_t opcode, uint8_t tos, uint32_t dst_ip,
		uint32_t qpn, size_t payload)
{
	static uint32_t psn;   /* a new PSN each frame, as a sender's: the program takes a
			        * request frame whose PSN is not new for a resend */
	struct frame_roce_spec s = {
		.src = tc_host_a, .dst = tc_host_b, .ip = { .tos = tos },
		.bth = { .opcode = opcode, .dest_qp = qpn, .psn = ++psn & 0xffffff,
			 .becn = opcode == FRAME_OP_CNP },
		.payload_len = payload,
	};
	int n;

	s.dst.ip = dst_ip;
	n = frame_build_roce(buf, cap, &s);
	assert_true(n > 0);
	return n;
}

void tc_run_next_psn(uint8_t *f, size_t len)
{
	struct frame_parsed p;
	size_t bth;
	uint32_t psn, icrc;

	if (len < 14 + 40 + 8 + 12)
		return;
	if (f[12] == 0x86 && f[13] == 0xdd) {   /* IPv6 / UDP 4791: the PSN only */
		if (f[20] != 17 || f[56] != 0x12 || f[57] != 0xb7)
			return;
		bth = 62;
	} else if (frame_parse(&p, f, len) == 0 && (p.layers & FRAME_L_ROCE)) {
		bth = p.bth_off;
	} else {
		return;
	}
	psn = ((uint32_t)f[bth + 9] << 16 | (uint32_t)f[bth + 10] << 8 | f[bth + 11]) + 1;
	f[bth + 9] = (uint8_t)(psn >> 16);
	f[bth + 10] = (uint8_t)(psn >> 8);
	f[bth + 11] = (uint8_t)psn;
	if (bth != 62 && frame_parse(&p, f, len) == 0) {   /* IPv4: the ICRC kept right */
		icrc = frame_icrc(f, &p);
		memcpy(f + p.udp_off + p.udp.len - FRAME_ICRC_LEN, &icrc, 4);
	}
}

int tc_run_opened(const char *test, int rc, const char *why)
{
	if (rc == -ENOSYS || rc == -EPERM) {
		fprintf(stderr, "%s: SKIP: the kernel refuses BPF: %s\n", test, why);
		return 0;
	}
	if (rc)
		fprintf(stderr, "%s: %s\n", test, why);
	return rc;
}

uint64_t tc_run_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tc_run(int prog_fd, const uint8_t *frame, size_t len, uint64_t ts, uint8_t *out,
		size_t cap)
{
	uint8_t own[2048];
	struct __sk_buff ctx = { .tstamp = ts }, ctx_out = { 0 };

	if (!out) {
		out = own;
		cap = sizeof(own);
	}
	if (len > cap)
		fail_msg("a %zu-byte frame for a %zu-byte output buffer", len, cap);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = (uint32_t)cap, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx_out,
		    .ctx_size_out = sizeof(ctx_out), .repeat = 1);
	int rc = bpf_prog_test_run_opts(prog_fd, &o);

	if (rc)
		fail_msg("BPF_PROG_TEST_RUN over a %zu-byte frame: %s", len, strerror(-rc));
	assert_int_equal(o.retval, TC_ACT_OK);
	assert_int_equal(o.data_size_out, len);
	if (out == own)
		assert_memory_equal(out, frame, len);
	return ctx_out.tstamp;
}
