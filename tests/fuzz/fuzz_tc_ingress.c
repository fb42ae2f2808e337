/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the tc ingress BPF program, run in the kernel with BPF_PROG_TEST_RUN
 * over each input as an arriving frame. Whatever the bytes: the verdict is TC_ACT_OK, the
 * frame comes back unchanged, exactly one of roce / pass moves, by one; at most one report
 * comes out, and a report is what the frame says: a CNP report for BTH opcode 0x81, a CE
 * report for a data frame whose IP ECN field is 11, with the frame's destination QPN and
 * source address as lib/frame.c's decoders (IPv4) or the fixed IPv6 header read them; a
 * data frame (not an ACK, atomic ACK or CNP) is counted in its receiving flow, no other.
 * Each report then goes through qpaced's translation (agent/cnp.h): one of the frame's
 * family with its addresses (an IPv6 CE builds an IPv6 CNP whose ICRC checks), or
 * refused as malformed when its addresses are not of that family.
 * Needs root; where the kernel refuses BPF, every input is a no-op and one line says why. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "cnp.h"
#include "qpace/frame.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct qp_tci *tci;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[300];
	/* every CE reported: checkable; data counted per receiving flow (--credits ia) */
	struct qp_tci_conf c = { .ce_gap_ns = 0, .flows = 1 };

	(void)argc;
	(void)argv;
	if (qp_tci_open(&tci, err, sizeof(err))) {
		fprintf(stderr, "fuzz_tc_ingress: the kernel refuses BPF, inputs not run: %s\n",
			err);
		tci = NULL;
		return 0;
	}
	qp_tci_set_conf(tci, &c);
	return 0;
}

struct got { int n; struct qp_tci_report r; };

static void on_report(void *ctx, const struct qp_tci_report *r)
{
	struct got *g = ctx;

	g->n++;
	g->r = *r;
}

/* qpaced's reading of the report (every local QPN mapped to peer 0x42). */
static void check_translate(const struct qp_tci_report *r)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff }, zero[16];
	struct cnp_pair pair = { r->dqpn, 0x42 };
	struct cnp_peers p = { NULL, 0, &pair, 1 };
	struct cnp_action a = cnp_translate(r, &p);
	bool v4s = !memcmp(r->saddr, mapped, 12), v4d = !memcmp(r->daddr, mapped, 12);
	bool ok = r->ipv6 ? !v4s && !v4d && memcmp(r->saddr, zero, 16) &&
				    memcmp(r->daddr, zero, 16)
			  : v4s && v4d;
	uint8_t pl[CNP_UDP_PAYLOAD], pkt[40 + 8 + CNP_UDP_PAYLOAD] = { 0x60, [5] = 40, [6] = 17 };

	if ((a.what == CNP_DO_BAD_ADDR) == ok || a.ipv6 != (r->ipv6 != 0))
		abort();
	if (!ok)
		return;
	if (a.what != (r->kind == QP_TCI_K_CE ? CNP_DO_SEND : CNP_DO_EVENT) ||
	    a.peer_qpn != 0x42 ||
	    (a.ipv6 && (memcmp(a.peer_ip6, r->saddr, 16) || memcmp(a.local_ip6, r->daddr, 16))))
		abort();
	if (!a.ipv6 || a.what != CNP_DO_SEND)
		return;
	if (cnp_payload6(pl, sizeof(pl), a.local_ip6, 40001, a.peer_ip6, a.peer_qpn) !=
	    CNP_UDP_PAYLOAD)
		abort();
	memcpy(pkt + 8, a.local_ip6, 16);
	memcpy(pkt + 24, a.peer_ip6, 16);
	pkt[40] = 40001 >> 8;
	pkt[41] = 40001 & 0xff;
	pkt[42] = 4791 >> 8;
	pkt[43] = 4791 & 0xff;
	pkt[45] = 40;
	memcpy(pkt + 48, pl, sizeof(pl));
	if (frame_icrc_ipv6(pkt, sizeof(pkt)) !=
	    ((uint32_t)pl[28] | (uint32_t)pl[29] << 8 | (uint32_t)pl[30] << 16 |
	     (uint32_t)pl[31] << 24))
		abort();
}

/* What the frame says a report must be: 0 (none), or kind, QPN, the source's IPv4 or
 * IPv6 bytes; checked only for frames the program classed RoCEv2. */
static void check_report(const uint8_t *data, size_t size, const struct qp_tci_report *r,
			 uint64_t flow_counted)
{
	uint16_t et = (uint16_t)(data[12] << 8 | data[13]);
	size_t l4;
	unsigned ecn;
	uint8_t src[16] = { [10] = 0xff, [11] = 0xff };

	if (et == FRAME_ETHERTYPE_IPV4) {
		struct frame_ipv4 ip;

		if (frame_ipv4_decode(&ip, data + FRAME_ETH_HLEN, size - FRAME_ETH_HLEN) <= 0)
			abort();
		l4 = FRAME_ETH_HLEN + ip.hlen;
		ecn = ip.tos & 3;
		memcpy(src + 12, data + FRAME_ETH_HLEN + 12, 4);
	} else if (et == 0x86dd) {
		l4 = FRAME_ETH_HLEN + 40;
		ecn = (data[FRAME_ETH_HLEN + 1] >> 4) & 3;
		memcpy(src, data + FRAME_ETH_HLEN + 8, 16);
	} else {
		abort();
	}
	if (l4 + FRAME_UDP_HLEN + FRAME_BTH_LEN > size)
		abort();
	const uint8_t *bth = data + l4 + FRAME_UDP_HLEN;
	uint32_t qpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
	unsigned want = bth[0] == FRAME_OP_CNP ? QP_TCI_K_CNP
		: ecn == FRAME_ECN_CE && bth[0] != FRAME_OP_RC_ACK &&
		  bth[0] != FRAME_OP_RC_ATOMIC_ACK ? QP_TCI_K_CE : 0;

	if (flow_counted != (bth[0] != FRAME_OP_CNP && bth[0] != FRAME_OP_RC_ACK &&
			     bth[0] != FRAME_OP_RC_ATOMIC_ACK))
		abort();   /* data counted in its flow (or the flow map full), nothing else */
	if (!r) {
		if (want)
			abort();   /* owed a report (the ring is drained every input) */
		return;
	}
	if (r->kind != want || r->dqpn != qpn || memcmp(r->saddr, src, 16) ||
	    r->len != size || r->opcode != bth[0] || r->ecn != ecn)
		abort();
	check_translate(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[4096];
	uint64_t before[QP_TCI_C_COUNT], after[QP_TCI_C_COUNT];
	struct got g = { 0 };

	if (!tci || size < FRAME_ETH_HLEN || size > sizeof(out))
		return 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)size,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	if (qp_tci_counters(tci, before))
		abort();
	if (bpf_prog_test_run_opts(qp_tci_prog_fd(tci), &o))
		return 0;   /* refused by the kernel itself (an IP ethertype without its header) */
	if (qp_tci_counters(tci, after) || qp_tci_reports_take(tci, on_report, &g) < 0)
		abort();
	if (o.retval != TC_ACT_OK || o.data_size_out != size || memcmp(out, data, size))
		abort();
	uint64_t roce = after[QP_TCI_C_ROCE] - before[QP_TCI_C_ROCE];
	uint64_t pass = after[QP_TCI_C_PASS] - before[QP_TCI_C_PASS];
	uint64_t flow = after[QP_TCI_C_FLOW_DATA] - before[QP_TCI_C_FLOW_DATA] +
			after[QP_TCI_C_FLOW_FULL] - before[QP_TCI_C_FLOW_FULL];

	if (roce + pass != 1 || g.n > 1 || (pass && g.n) || (pass && flow))
		abort();
	if (roce && after[QP_TCI_C_RING_FULL] == before[QP_TCI_C_RING_FULL] &&
	    after[QP_TCI_C_STATE_FULL] == before[QP_TCI_C_STATE_FULL])
		check_report(data, size, g.n ? &g.r : NULL, flow);
	return 0;
}
