/* libFuzzer target: the tc ingress BPF program, run in the kernel with BPF_PROG_TEST_RUN
 * over each input as an arriving frame. Whatever the bytes: the verdict is TC_ACT_OK, the
 * frame comes back unchanged, exactly one of roce / pass moves, by one; at most one report
 * comes out, and a report is what the frame says: a CNP report for BTH opcode 0x81, a CE
 * report for a data frame whose IP ECN field is 11, with the frame's destination QPN and
 * source address as lib/frame.c's decoders (IPv4) or the fixed IPv6 header read them; a
 * data frame (not an ACK, atomic ACK or CNP) is counted in its receiving flow, no other.
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
