/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PFC in real time: two soft hosts through a real qpace-switch (--star 2 on loopback,
 * started and stopped here) with --pfc lossless. An unpaced WRITE from A into B's 500 Mb/s
 * port with 32 KB of buffer, which drops frames without PFC (test_soft_switch.c), arrives
 * byte-exact with no drop: the switch sends PAUSEs and XONs to A, A obeys every one, and
 * tshark decodes what the switch sent as IEEE 802.1Qbb frames.
 *
 * What is asserted and why. A's window (128 packets, 138 KB on the wire) bounds what it
 * can have in the switch, and the headroom is set above it, so "no drop" holds however
 * late the processes run, as long as A does not time out: a retransmission timeout sends
 * the window again while its first copy still waits in the paused queue (seen: 180 KB of
 * A's frames queued, 13 headroom drops, with a 16.8 ms timeout at load 7). Lossless loses
 * nothing, so A's ACK timeout is 537 ms (exponent 17), above the stalls of a loaded
 * machine, not 16.8 ms; xoff is far below the window, so PAUSEs are always sent. How far A runs
 * past xoff before it reads a PAUSE is its process's reaction time (tens of us to ms on a
 * loaded machine), not a link round trip: it is printed (pfc_ingress_max_bytes), not
 * bounded; virtual time bounds it (test_pfc_switch.c). The soft backend's frames carry TOS
 * 0, so the class is priority 0.
 * Skipped (reported) when build/bin/qpace-switch is missing. Size: QPACE_TEST_MB (default
 * 16; 4 under ASan). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "qpace/soft_bw.h"
#include "soft_net.h"
#include "test_size.h"

static pid_t sw_pid = -1;
static char json_path[64], pcap_path[64];

/* Counters of ports p0 and p1 from --stats-json. */
static const char *const keys[] = {
	"drop_tail", "drop_store", "max_qbytes", "pfc_pause_tx", "pfc_xon_tx",
	"pfc_headroom_drops", "pfc_ingress_max_bytes", "pfc_xoff_ns", "pfc_ignored_rx",
};
enum { DROP_TAIL, DROP_STORE, MAX_Q, PAUSE_TX, XON_TX, HEADROOM_DROPS, INGRESS_MAX, XOFF_NS,
       IGNORED, NKEYS };

struct ports {
	long long v[2][NKEYS];
};

/* tshark's reading of the capture: PFC frames, and those that decode as anything else
 * (an opcode other than 0x0101, a vector other than class 0, a time other than 65535 or
 * 0, or an expert error). */
static bool tshark_pfc(const char *pcap, unsigned long *pfc, unsigned long *pauses,
		       unsigned long *bad)
{
	char cmd[320], line[128];
	FILE *f;

	if (system("command -v tshark >/dev/null 2>&1") != 0)
		return false;
	snprintf(cmd, sizeof(cmd), "tshark -r %s -Y macc -T fields -E separator=, -e "
		 "macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c0 -e "
		 "_ws.expert.severity 2>/dev/null", pcap);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned op, enbv, t;
		char tail[32] = "";

		(*pfc)++;
		if (sscanf(line, "%x,%x,%u,%31s", &op, &enbv, &t, tail) < 3 || op != 0x0101 ||
		    enbv != 0x0001 || (t != 65535 && t != 0) || tail[0])
			(*bad)++;
		else if (t)
			(*pauses)++;
	}
	return pclose(f) == 0;
}

static int teardown(void **state)
{
	(void)state;
	soft_switch_stop(sw_pid);
	sw_pid = -1;
	if (json_path[0])
		unlink(json_path);
	if (pcap_path[0])
		unlink(pcap_path);
	return 0;
}

static void test_lossless_write_through_switch(void **state)
{
	unsigned base = soft_port_base(13);
	char bp[16], a[200], b[200], err[256];
	struct soft_bw_params p = { .opts_a = a, .opts_b = b, .bytes = test_size_bytes(16, 4),
				    .msg_bytes = 256 << 10, .timeout = 17, .quiet = true,
				    .limit_ns = 120 * QP_NS_PER_S };
	struct soft_bw_result r;
	struct ports sw = { { { 0 } } };
	unsigned long pfc = 0, pauses = 0, bad = 0;
	bool decoded;

	(void)state;
	snprintf(bp, sizeof(bp), "%u", base);
	snprintf(json_path, sizeof(json_path), "/tmp/qpace-pfc-%d.json", (int)getpid());
	snprintf(pcap_path, sizeof(pcap_path), "/tmp/qpace-pfc-%d.pcap", (int)getpid());
	sw_pid = soft_switch_start((const char *const[]){
		"--star", "2", "--base-port", bp, "--rate", "500M", "--buffer", "32K",
		"--delay", "5us", "--int", "off", "--early", "off",
		"--pfc", "xoff=16K,xon=8K,headroom=160K,class=0,lossless", "--duration", "300s",
		"--stats-json", json_path, "--pcap", pcap_path, "--pcap-port", "p0", "--quiet", NULL });
	if (sw_pid < 0)
		skip();
	snprintf(a, sizeof(a), "attach=127.0.0.1:%u,ip=10.0.0.1,link_rate=500M", base);
	snprintf(b, sizeof(b), "attach=127.0.0.1:%u,ip=10.0.0.2,link_rate=500M", base + 2);
	if (soft_bw_run(&p, &r))
		fail_msg("%s", r.err);
	assert_int_equal(soft_switch_stop(sw_pid), 0);
	sw_pid = -1;
	if (soft_switch_port_counters(json_path, keys, NKEYS, 2, &sw.v[0][0], err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < NKEYS; k++)
			if (sw.v[i][k] < 0)
				fail_msg("port %d: no %s in %s", i, keys[k], json_path);
	decoded = tshark_pfc(pcap_path, &pfc, &pauses, &bad);
	print_message("switch (500M, 32K buffer, pfc xoff=16K xon=8K headroom=160K lossless): "
		      "%llu MB in %.2f s = %.0f Mb/s; p1 drops %lld, peak queue %lld B; p0 sent "
		      "%lld PAUSE + %lld XON, held A in xoff %.1f ms, A's frames peaked at %lld B "
		      "in the queue (%lld past xoff), %lld headroom drops; A obeyed %llu PFC "
		      "frames, retransmitted %llu packets, %llu timeouts\n",
		      (unsigned long long)(r.bytes >> 20), (double)r.elapsed_ns / 1e9, r.gbps * 1e3,
		      sw.v[1][DROP_TAIL] + sw.v[1][DROP_STORE], sw.v[1][MAX_Q], sw.v[0][PAUSE_TX],
		      sw.v[0][XON_TX], (double)sw.v[0][XOFF_NS] / 1e6, sw.v[0][INGRESS_MAX],
		      sw.v[0][INGRESS_MAX] - 16 * 1024, sw.v[0][HEADROOM_DROPS],
		      (unsigned long long)r.ha.pfc_rx, (unsigned long long)r.ra.retrans_pkts,
		      (unsigned long long)r.ra.timeouts);
	if (decoded)
		print_message("tshark: %lu MAC control frames out of p0, %lu PAUSE (class 0, "
			      "65535 quanta), %lu XON, %lu not as sent\n", pfc, pauses,
			      pfc - pauses - bad, bad);
	else
		print_message("tshark not found: the capture was not decoded\n");
	assert_true(r.exact);
	assert_int_equal(r.crc_src, r.crc_dst);
	/* Lossless: nothing dropped, at the egress or for the headroom. */
	assert_int_equal(sw.v[1][DROP_TAIL] + sw.v[1][DROP_STORE], 0);
	assert_int_equal(sw.v[0][HEADROOM_DROPS], 0);
	assert_true(sw.v[0][INGRESS_MAX] >= 16 * 1024);
	assert_true(sw.v[0][INGRESS_MAX] <= 176 * 1024);
	/* PAUSEs went to A, which received and obeyed each one (loopback loses none). */
	assert_true(sw.v[0][PAUSE_TX] > 0);
	assert_true(sw.v[0][XON_TX] > 0);
	assert_int_equal(r.ha.pfc_rx, (uint64_t)(sw.v[0][PAUSE_TX] + sw.v[0][XON_TX]));
	assert_int_equal(r.ha.drops[SOFT_DROP_PROTO] + r.ha.drops[SOFT_DROP_MALFORMED], 0);
	assert_int_equal(sw.v[1][IGNORED], 0);   /* B sent none, A sent none */
	if (decoded) {
		assert_int_equal(pfc, (unsigned long)(sw.v[0][PAUSE_TX] + sw.v[0][XON_TX]));
		assert_int_equal(pauses, (unsigned long)sw.v[0][PAUSE_TX]);
		assert_int_equal(bad, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lossless_write_through_switch, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
