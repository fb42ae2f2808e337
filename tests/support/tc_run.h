/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BPF_PROG_TEST_RUN of a tc program (clsact, direct action) over one frame, shared by the
 * tc tests (test_tc_egress, test_tc_ingress, test_tc_credit). Each fails the running
 * cmocka test with a message naming what went wrong. */
#ifndef QPACE_TEST_TC_RUN_H
#define QPACE_TEST_TC_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"

/* The tests' two hosts: A (10.0.0.1, UDP source port 49152) sends to B (10.0.0.2). */
extern const struct frame_addr tc_host_a, tc_host_b;

/* A RoCEv2 frame from A to @dst_ip, @opcode to @qpn (a PSN one above the last call's;
 * BECN set on a CNP), @payload
 * bytes, IPv4 TOS @tos, into @buf (@cap bytes); its length (asserted > 0). */
int tc_run_roce(uint8_t *buf, size_t cap, uint8_t opcode, uint8_t tos, uint32_t dst_ip,
		uint32_t qpn, size_t payload);

/* The frame @f (@len bytes), if RoCEv2 over IPv4 or IPv6, made the flow's next: its PSN
 * one more (the IPv4 ICRC recomputed). A request frame with a PSN the flow has sent is a
 * resend to the egress program. */
void tc_run_next_psn(uint8_t *f, size_t len);

/* What a tc test's group set-up makes of opening its program: @rc is qp_tc_open's or
 * qp_tci_open's (which leave the handle NULL on failure), @why its message. The kernel
 * refusing BPF (-ENOSYS, -EPERM) skips the tests (each checks its handle): said on stderr
 * as "TEST: SKIP: ...", 0. Any other error is said and returned, failing the group. */
int tc_run_opened(const char *test, int rc, const char *why);

/* CLOCK_MONOTONIC in ns: bpf_ktime_get_ns()'s clock. */
uint64_t tc_run_mono_ns(void);

/* Run @prog_fd over @frame (@len bytes) with skb->tstamp = @ts. Asserts the verdict is
 * TC_ACT_OK and the length is unchanged; the bytes it leaves with go to @out (@cap bytes),
 * or with @out NULL are asserted equal to @frame. Returns the departure time (skb->tstamp)
 * the frame leaves with. */
uint64_t tc_run(int prog_fd, const uint8_t *frame, size_t len, uint64_t ts, uint8_t *out,
		size_t cap);

#endif
