/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC loss recovery end to end: two soft hosts through a real qpace-switch (--star 2 on
 * loopback, started and stopped here) whose links are impaired (--impair), a WRITE
 * transfer each way (A on port 0 to B on port 1, then the other way round):
 *   1% loss + 1% reordering   every byte arrives (CRC-32 of both sides equal), the
 *                             senders retransmit, the switch counts what it did
 *   0.1% corruption           data intact; every corrupted frame is refused by the host
 *                             it reaches (IPv4/UDP checksum, ICRC, ...), exactly as many
 *                             as the switch corrupted in bits a receiver checks
 *   bursty loss, duplicates   data intact, duplicates seen and dropped by the responder
 *   and jitter together
 * Skipped (reported) when build/bin/qpace-switch is missing. Size per direction:
 * QPACE_TEST_MB (default 16; 4 under ASan). */
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
static char stats_path[64];

/* The switch's per-port counters this test reads, for ports p0 and p1. */
enum { C_LOSS, C_GE_LOSS, C_REORDER, C_DUP, C_JITTER, C_CORRUPT, C_UNCHECKED, C_IP_CSUM,
       C_ICRC_BAD, C_DROP_TAIL, C_TX, C_N };
static const char *const cname[C_N] = {
	"impair_loss", "impair_ge_loss", "impair_reorder", "impair_dup", "impair_jitter",
	"impair_corrupt", "impair_corrupt_unchecked", "ip_csum_drops", "icrc_bad", "drop_tail",
	"tx_frames",
};

struct counters {
	long long v[2][C_N];
};

static void read_counters(struct counters *c)
{
	char err[256];

	if (soft_switch_port_counters(stats_path, cname, C_N, 2, &c->v[0][0], err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < C_N; k++)
			if (c->v[i][k] < 0)
				fail_msg("port %d: no %s in %s", i, cname[k], stats_path);
}

static long long both(const struct counters *c, int k)
{
	return c->v[0][k] + c->v[1][k];
}

/* The switch goes and its counters file with it, also after a failed assertion. */
static int teardown(void **state)
{
	(void)state;
	soft_switch_stop(sw_pid);
	sw_pid = -1;
	if (stats_path[0])
		unlink(stats_path);
	return 0;
}

/* Frames a host refused at its checks, before any QP saw them. */
static uint64_t refused(const struct soft_host_stats *h)
{
	static const enum soft_drop checks[] = {
		SOFT_DROP_MALFORMED, SOFT_DROP_NOT_FOR_US, SOFT_DROP_PROTO, SOFT_DROP_IP_CSUM,
		SOFT_DROP_FRAGMENT, SOFT_DROP_UDP_CSUM, SOFT_DROP_ICRC, SOFT_DROP_PORT,
	};
	uint64_t n = 0;

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		n += h->drops[checks[i]];
	return n;
}

struct dir_result {
	struct soft_bw_result r;
	uint64_t bytes;
};

/* A switch with @impair on every port, then a transfer A -> B and one B -> A, each
 * checked byte for byte; the switch's counters after it stopped. */
static void run_both_ways(unsigned salt, const char *impair, struct dir_result res[2],
			  struct counters *c)
{
	unsigned base = soft_port_base(salt);
	char bp[16], p0[160], p1[160];
	int rc;

	snprintf(bp, sizeof(bp), "%u", base);
	snprintf(stats_path, sizeof(stats_path), "/tmp/qpace-soft-impair-%d.json", (int)getpid());
	/* A 4 MB buffer holds any window (128 packets per QP): the switch's queue drops
	 * nothing, so every loss is an impairment. */
	sw_pid = soft_switch_start((const char *const[]){
		"--star", "2", "--base-port", bp, "--rate", "1G", "--buffer", "4M",
		"--delay", "5us", "--int", "off", "--early", "off", "--impair", impair,
		"--duration", "300s", "--stats-json", stats_path, "--quiet", NULL });
	if (sw_pid < 0)
		skip();   /* no qpace-switch in this build */
	snprintf(p0, sizeof(p0), "attach=127.0.0.1:%u,ip=10.0.0.1", base);
	snprintf(p1, sizeof(p1), "attach=127.0.0.1:%u,ip=10.0.0.2", base + 2);
	for (int d = 0; d < 2; d++) {
		/* The local ACK timeout is 16.8 ms (timeout 12): a lost last packet of a
		 * burst is recovered by it; NAKs recover the rest. */
		struct soft_bw_params p = { .opts_a = d ? p1 : p0, .opts_b = d ? p0 : p1,
					    .bytes = test_size_bytes(16, 4), .msg_bytes = 256 << 10,
					    .timeout = 12, .quiet = true,
					    .limit_ns = 120 * QP_NS_PER_S };
		rc = soft_bw_run(&p, &res[d].r);
		if (rc)
			fail_msg("%s: %s", d ? "B -> A" : "A -> B", res[d].r.err);
		res[d].bytes = p.bytes;
	}
	assert_int_equal(soft_switch_stop(sw_pid), 0);
	sw_pid = -1;
	read_counters(c);
	for (int d = 0; d < 2; d++) {
		const struct soft_bw_result *r = &res[d].r;
		print_message("%s %s: %llu MB in %.2f s; sender %llu packets, %llu retransmitted, "
			      "%llu NAKs, %llu timeouts; receiver %llu duplicates, %llu "
			      "out-of-sequence, refused %llu + %llu (data + ACK side)\n",
			      impair, d ? "B -> A" : "A -> B", (unsigned long long)(r->bytes >> 20),
			      (double)r->elapsed_ns / 1e9, (unsigned long long)r->ra.tx_pkts,
			      (unsigned long long)r->ra.retrans_pkts,
			      (unsigned long long)r->ra.naks_rx, (unsigned long long)r->ra.timeouts,
			      (unsigned long long)r->rb.drops[RC_DROP_DUPLICATE],
			      (unsigned long long)r->rb.drops[RC_DROP_OUT_OF_SEQ],
			      (unsigned long long)refused(&r->hb),
			      (unsigned long long)refused(&r->ha));
	}
	for (int i = 0; i < 2; i++)
		print_message("switch p%d: tx %lld, lost %lld + %lld (GE), reordered %lld, "
			      "duplicated %lld, jittered %lld, corrupted %lld (%lld unchecked), "
			      "ip_csum_drops %lld, icrc_bad %lld, drop_tail %lld\n", i,
			      c->v[i][C_TX], c->v[i][C_LOSS], c->v[i][C_GE_LOSS],
			      c->v[i][C_REORDER], c->v[i][C_DUP], c->v[i][C_JITTER],
			      c->v[i][C_CORRUPT], c->v[i][C_UNCHECKED], c->v[i][C_IP_CSUM],
			      c->v[i][C_ICRC_BAD], c->v[i][C_DROP_TAIL]);
	for (int d = 0; d < 2; d++) {
		const struct soft_bw_result *r = &res[d].r;
		assert_true(r->exact);
		assert_int_equal(r->crc_src, r->crc_dst);
		assert_int_equal(r->rb.rx_bytes, res[d].bytes);
	}
	/* The hosts send clean frames and the queue drops nothing: the switch's own checks
	 * find nothing, every loss is an impairment. */
	assert_int_equal(both(c, C_IP_CSUM), 0);
	assert_int_equal(both(c, C_ICRC_BAD), 0);
	assert_int_equal(both(c, C_DROP_TAIL), 0);
}

static void test_loss_and_reorder(void **state)
{
	struct dir_result res[2];
	struct counters c;

	(void)state;
	run_both_ways(21, "loss=1%,reorder=1%,seed=5", res, &c);
	for (int i = 0; i < 2; i++) {
		assert_true(c.v[i][C_LOSS] > 0);
		assert_true(c.v[i][C_REORDER] > 0);
	}
	for (int d = 0; d < 2; d++) {
		const struct soft_bw_result *r = &res[d].r;
		/* Each direction lost data on the receiver's port and sent it again. */
		assert_true(r->ra.retrans_pkts > 0);
		assert_true(r->ra.naks_rx + r->ra.timeouts > 0);
		assert_true(r->rb.drops[RC_DROP_OUT_OF_SEQ] > 0);   /* gaps: loss and reordering */
	}
}

static void test_corruption(void **state)
{
	struct dir_result res[2];
	struct counters c;
	uint64_t refused_all = 0;

	(void)state;
	run_both_ways(22, "corrupt=0.1%,seed=9", res, &c);
	for (int d = 0; d < 2; d++)
		refused_all += refused(&res[d].r.ha) + refused(&res[d].r.hb);
	print_message("corrupted %lld frames, %lld in unchecked bits; the hosts refused %llu\n",
		      both(&c, C_CORRUPT), both(&c, C_UNCHECKED), (unsigned long long)refused_all);
	assert_true(both(&c, C_CORRUPT) > 0);
	/* Every corrupted frame reached a host (a star: nothing after the impairment drops
	 * it) and each one a receiver can catch was refused, before any QP saw it. */
	assert_int_equal((long long)refused_all, both(&c, C_CORRUPT) - both(&c, C_UNCHECKED));
	for (int d = 0; d < 2; d++) {
		assert_int_equal(res[d].r.ha.drops[SOFT_DROP_NO_QP], 0);
		assert_int_equal(res[d].r.hb.drops[SOFT_DROP_NO_QP], 0);
		assert_int_equal(res[d].r.ha.drops[SOFT_DROP_SOURCE], 0);
		assert_int_equal(res[d].r.hb.drops[SOFT_DROP_SOURCE], 0);
	}
}

static void test_bursts_dups_jitter(void **state)
{
	struct dir_result res[2];
	struct counters c;
	uint64_t dups_seen = 0;

	(void)state;
	run_both_ways(23, "ge=0.2%:30%,dup=0.5%,jitter=20us,seed=3", res, &c);
	for (int d = 0; d < 2; d++) {
		assert_true(res[d].r.ra.retrans_pkts > 0);
		dups_seen += res[d].r.rb.drops[RC_DROP_DUPLICATE];
	}
	assert_true(both(&c, C_GE_LOSS) > 0);
	assert_true(both(&c, C_DUP) > 0);
	assert_true(both(&c, C_JITTER) > 0);
	assert_true(dups_seen > 0);   /* the second copies reached the responder */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_loss_and_reorder, teardown),
		cmocka_unit_test_teardown(test_corruption, teardown),
		cmocka_unit_test_teardown(test_bursts_dups_jitter, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
