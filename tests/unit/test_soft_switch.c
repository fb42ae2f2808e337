/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two soft hosts through a real qpace-switch (--star 2 on loopback, started and stopped
 * here): a WRITE through an egress buffer small enough to overflow arrives byte-exact,
 * the switch's tail drops show up as NAKs and retransmissions at the sender, and the INT
 * reports the switch sends to the sender reach its telemetry hook and decode; the same
 * write again through shm ports (--shm, shm=: the frames in shared-memory rings).
 * Skipped (reported) when build/bin/qpace-switch is missing.
 * Size: QPACE_TEST_MB (default 16; 4 under ASan). */
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

#include "qpace/feedback.h"
#include "qpace/jsonr.h"
#include "qpace/soft_bw.h"
#include "soft_net.h"
#include "test_size.h"

static pid_t sw_pid = -1;
static char stats_path[64];

struct telem {
	uint64_t datagrams, int_reports, bad, to_b, hops_ok;
	uint32_t qpn_b;
};

static void on_telemetry(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *p,
			 size_t len, qp_time_ns now)
{
	struct telem *t = arg;
	struct fb_msg m;

	(void)src_ip;
	(void)src_port;
	(void)now;
	t->datagrams++;
	/* One or more messages back to back (the switch packs one pass's reports). */
	while (len > 0) {
		if (fb_decode(&m, p, len) < 0 || m.length == 0 || m.length > len) {
			t->bad++;
			return;
		}
		p += m.length;
		len -= m.length;
		if (m.type != FB_T_INT)
			continue;
		t->int_reports++;
		/* A report about A's data towards B, with the switch's hop. */
		t->to_b += m.u.int_report.flow.dst_ip == 0x0a000002 &&
			   m.u.int_report.flow.src_ip == 0x0a000001;
		t->hops_ok += m.u.int_report.nhops == 1 &&
			      m.u.int_report.hops[0].switch_id == 1;
	}
}

/* "drop_tail" of port p1 from the switch's --stats-json file; -1 when absent. */
struct p1_walk {
	int idx;
	long long drops[16];
};

static void p1_stat(void *arg, const char *path, const struct jsonr_val *v)
{
	struct p1_walk *w = arg;
	unsigned i;
	int used = 0;

	if (sscanf(path, "switches.0.ports.%u.%n", &i, &used) != 1 || !used || i >= 16)
		return;
	if (!strcmp(path + used, "name") && v->type == JSONR_STR && !strcmp(v->str, "p1"))
		w->idx = (int)i;
	else if (!strcmp(path + used, "drop_tail") && v->is_u64)
		w->drops[i] = (long long)v->u64;
}

static long long p1_drops(const char *path)
{
	struct p1_walk w = { .idx = -1 };
	char err[256];

	for (int i = 0; i < 16; i++)
		w.drops[i] = -1;
	if (jsonr_walk_file(path, p1_stat, &w, err, sizeof(err)) || w.idx < 0)
		return -1;
	return w.drops[w.idx];
}

static char pcap_path[64];

static int teardown(void **state)
{
	(void)state;
	soft_switch_stop(sw_pid);   /* also after a failed assertion */
	sw_pid = -1;
	if (stats_path[0])
		unlink(stats_path);
	if (pcap_path[0])
		unlink(pcap_path);
	return 0;
}

static char shm_prefix[64];

/* The lossy WRITE through udp ports, or (@shm) through shm ports' rings. */
static void lossy_write(bool shm)
{
	unsigned base = soft_port_base(shm ? 13 : 11);
	char bp[16], a[260], b[260];
	struct telem t = { 0 };
	struct qp_soft_arg arg_a = { .telemetry = on_telemetry, .telemetry_arg = &t };
	struct soft_bw_params p = { .opts_a = a, .opts_b = b, .bytes = test_size_bytes(16, 4),
				    .msg_bytes = 256 << 10, .timeout = 12, .quiet = true,
				    .arg_a = &arg_a, .limit_ns = 120 * QP_NS_PER_S };
	struct soft_bw_result r;
	long long drops;
	int rc;

	snprintf(bp, sizeof(bp), "%u", base);
	snprintf(stats_path, sizeof(stats_path), "/tmp/qpace-soft-sw-%d.json", (int)getpid());
	snprintf(shm_prefix, sizeof(shm_prefix), "/tmp/qpace-soft-sw-%d", (int)getpid());
	/* An unpaced sender into a 500 Mb/s port with 32 KB of buffer: every window overflows
	 * it. Recovery is by NAK and go-back-N (tests/unit/test_rc.c shows the same in model
	 * time with no timeout at all). The local ACK timeout is 16.8 ms: on a loaded 2-core
	 * machine the real RTT through the switch process exceeds 2 ms now and then, and
	 * spurious timeouts then feed on themselves. */
	sw_pid = soft_switch_start((const char *const[]){
		"--star", "2", "--base-port", bp, "--rate", "500M", "--buffer", "32K",
		"--delay", "5us", "--int", "direct", "--int-flows", "all", "--early", "off",
		"--duration", "300s",
		"--stats-json", stats_path, "--quiet", shm ? "--shm" : NULL, shm_prefix, NULL });
	if (sw_pid < 0)
		skip();   /* no qpace-switch in this build */
	snprintf(a, sizeof(a), "attach=127.0.0.1:%u,ip=10.0.0.1%s%s%s", base, shm ? ",shm=" : "",
		 shm ? shm_prefix : "", shm ? ".p0" : "");
	snprintf(b, sizeof(b), "attach=127.0.0.1:%u,ip=10.0.0.2%s%s%s", base + 2,
		 shm ? ",shm=" : "", shm ? shm_prefix : "", shm ? ".p1" : "");
	rc = soft_bw_run(&p, &r);
	if (rc)
		fail_msg("%s", r.err);
	assert_int_equal(soft_switch_stop(sw_pid), 0);
	sw_pid = -1;
	drops = p1_drops(stats_path);
	print_message("%s switch (500M, 32K buffer): %llu MB in %.2f s = %.0f Mb/s; switch dropped "
		      "%lld frames; A: %llu packets, %llu retransmitted, %llu NAKs, %llu timeouts; "
		      "B: %llu NAKs sent, %llu out-of-sequence\n",
		      shm ? "shm" : "udp", (unsigned long long)(r.bytes >> 20),
		      (double)r.elapsed_ns / 1e9, r.gbps * 1e3,
		      drops, (unsigned long long)r.ra.tx_pkts, (unsigned long long)r.ra.retrans_pkts,
		      (unsigned long long)r.ra.naks_rx, (unsigned long long)r.ra.timeouts,
		      (unsigned long long)r.rb.naks_tx,
		      (unsigned long long)r.rb.drops[RC_DROP_OUT_OF_SEQ]);
	print_message("telemetry at A: %llu datagrams, %llu INT reports (%llu about A->B, %llu "
		      "with the switch's hop), %llu undecodable\n",
		      (unsigned long long)t.datagrams, (unsigned long long)t.int_reports,
		      (unsigned long long)t.to_b, (unsigned long long)t.hops_ok,
		      (unsigned long long)t.bad);
	assert_true(r.exact);
	assert_int_equal(r.crc_src, r.crc_dst);
	assert_true(drops > 0);
	/* Every frame the switch dropped was data from A (ACKs travel the idle direction), and
	 * it was sent again; the gaps were reported by NAKs. */
	assert_true(r.ra.retrans_pkts >= (uint64_t)drops);
	assert_true(r.ra.naks_rx > 0);
	assert_true(r.rb.naks_tx >= r.ra.naks_rx);
	assert_int_equal(r.rb.rx_bytes, p.bytes);
	/* INT reports: one per data frame dequeued, all decodable, all about this flow. */
	assert_true(t.int_reports > 0);
	assert_true(t.int_reports >= t.datagrams);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.to_b, t.int_reports);
	assert_int_equal(t.hops_ok, t.int_reports);
	assert_int_equal(r.ha.telemetry_rx, t.datagrams);
	if (shm) {   /* the links went with the switch */
		char l[80];
		snprintf(l, sizeof(l), "%s.p0", shm_prefix);
		assert_int_equal(access(l, F_OK), -1);
	}
}

static void test_write_through_lossy_switch(void **state)
{
	(void)state;
	lossy_write(false);
}

/* The same through shm ports: the rings carry every frame byte-exact, and tail drops are
 * recovered the same way. */
static void test_write_through_lossy_switch_shm(void **state)
{
	(void)state;
	lossy_write(true);
}

/* tshark's view of a capture: frames per BTH opcode, malformed or error-flagged frames. */
struct dissect {
	unsigned long by_opcode[256], roce, malformed, frames;
};

static bool run_tshark(const char *pcap, struct dissect *d)
{
	char cmd[256], line[256];
	FILE *f;

	if (system("command -v tshark >/dev/null 2>&1") != 0)
		return false;
	snprintf(cmd, sizeof(cmd), "tshark -r %s -T fields -E separator=, -e frame.number "
		 "-e infiniband.bth.opcode -e _ws.malformed -e _ws.expert.severity 2>/dev/null",
		 pcap);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *op = strchr(line, ','), *rest = op ? strchr(op + 1, ',') : NULL;

		d->frames++;
		if (op && op[1] != ',') {
			d->roce++;
			d->by_opcode[strtoul(op + 1, NULL, 0) & 255]++;
		}
		/* The malformed flag or an expert error (severity 8388608) after it. */
		if (rest && (rest[1] != ',' || strstr(rest, "8388608")))
			d->malformed++;
	}
	return pclose(f) == 0;
}

static void test_capture_decodes_as_infiniband(void **state)
{
	unsigned base = soft_port_base(12);
	char bp[16], a[160], b[160];
	struct soft_bw_params p = { .opts_a = a, .opts_b = b, .bytes = 1 << 20,
				    .msg_bytes = 100000, .quiet = true, .limit_ns = 60 * QP_NS_PER_S };
	struct soft_bw_result r;
	struct dissect d = { { 0 } };

	(void)state;
	snprintf(bp, sizeof(bp), "%u", base);
	snprintf(pcap_path, sizeof(pcap_path), "/tmp/qpace-soft-sw-%d.pcap", (int)getpid());
	sw_pid = soft_switch_start((const char *const[]){
		"--star", "2", "--base-port", bp, "--rate", "1G", "--buffer", "4M",
		"--int", "off", "--early", "off", "--duration", "300s", "--pcap", pcap_path, "--quiet",
		NULL });
	if (sw_pid < 0)
		skip();
	snprintf(a, sizeof(a), "attach=127.0.0.1:%u,ip=10.0.0.1", base);
	snprintf(b, sizeof(b), "attach=127.0.0.1:%u,ip=10.0.0.2", base + 2);
	if (soft_bw_run(&p, &r))
		fail_msg("%s", r.err);
	assert_true(r.exact);
	assert_int_equal(soft_switch_stop(sw_pid), 0);
	sw_pid = -1;
	if (!run_tshark(pcap_path, &d))
		skip();   /* no tshark here */
	print_message("tshark: %lu frames, %lu RoCEv2 (WRITE first %lu middle %lu last %lu "
		      "only %lu, ACK %lu), %lu malformed\n", d.frames, d.roce,
		      d.by_opcode[FRAME_OP_RC_WRITE_FIRST], d.by_opcode[FRAME_OP_RC_WRITE_MIDDLE],
		      d.by_opcode[FRAME_OP_RC_WRITE_LAST], d.by_opcode[FRAME_OP_RC_WRITE_ONLY],
		      d.by_opcode[FRAME_OP_RC_ACK], d.malformed);
	assert_int_equal(d.malformed, 0);
	/* The switch captures what its ports send: every packet B accepted went through it,
	 * and nothing the hosts did not send. */
	assert_true(d.roce >= r.rb.rx_pkts);
	assert_true(d.roce <= r.ra.tx_pkts + r.rb.acks_tx);
	assert_true(d.by_opcode[FRAME_OP_RC_WRITE_FIRST] > 0);
	assert_true(d.by_opcode[FRAME_OP_RC_WRITE_MIDDLE] > 0);
	assert_true(d.by_opcode[FRAME_OP_RC_WRITE_LAST] > 0);
	assert_true(d.by_opcode[FRAME_OP_RC_ACK] > 0);
	assert_true(d.by_opcode[FRAME_OP_RC_ACK] <= r.rb.acks_tx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_write_through_lossy_switch, teardown),
		cmocka_unit_test_teardown(test_write_through_lossy_switch_shm, teardown),
		cmocka_unit_test_teardown(test_capture_decodes_as_infiniband, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
