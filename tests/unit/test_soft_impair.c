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
 *   READ and atomics          1% loss, reordering and duplication: each host READs the
 *                             other's region (64 KiB READs, 16 outstanding), every byte
 *                             checked, then FETCH_ADDs (8 at a time) and a COMPARE_SWAP
 *                             chain on the other's counter, every result the one a single
 *                             execution gives and the counter exact at the end
 * Skipped (reported) when build/bin/qpace-switch is missing. Size per direction:
 * QPACE_TEST_MB (default 16; 4 under ASan; READ: a quarter). */
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
#include "qpace/rc.h"
#include "qpace/soft.h"
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

/* ---- READ and atomics in real time ---- */

#define RD_MSG (64u << 10)
#define RD_OUTSTANDING 16u
#define ATOMICS 256u

static uint8_t rd_pattern(int side, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 9) + (unsigned)side * 77);
}

/* Progress both contexts once; a completion of @s into @wc (true), its status checked. */
static bool rd_poll(struct soft_side *s, struct qp_ctx **all, struct qp_wc *wc)
{
	for (int i = 0; i < 2; i++)
		assert_true(qp_ctx_progress(all[i], qp_now_ns()) >= 0);
	if (qp_poll(s->qp, wc, 1) != 1)
		return false;
	if (wc->status != QP_WC_SUCCESS)
		fail_msg("wr %llu: status %d", (unsigned long long)wc->wr_id, wc->status);
	return true;
}

/* @r READs @data bytes of @s's region into the second half of its own, then runs the
 * atomics on @s's counter; every byte and result checked. */
static void rd_one_way(struct soft_side *r, struct soft_side *s, struct qp_ctx **all,
		       size_t data)
{
	uint64_t *res = (uint64_t *)(void *)(r->buf + 2 * data + 64), sum = 0, old, remote_ctr;
	qp_time_ns end = qp_now_ns() + 60 * QP_NS_PER_S;
	size_t posted = 0, done = 0, nmsg = data / RD_MSG;
	struct qp_wc wc;

	remote_ctr = r->qp->remote.addr + 2 * data;
	while (done < nmsg) {
		assert_true(qp_now_ns() < end);
		if (posted < nmsg && posted - done < RD_OUTSTANDING) {
			int rc = qp_post_send(r->qp, &(struct qp_wr){
				.opcode = QP_OP_READ, .wr_id = posted, .mr = r->mr,
				.addr = r->buf + data + posted * RD_MSG, .length = RD_MSG,
				.remote_addr = r->qp->remote.addr + posted * RD_MSG,
				.rkey = r->qp->remote.rkey, .flags = QP_WR_SIGNALED });
			if (rc == 0)
				posted++;
			else
				assert_int_equal(rc, -EAGAIN);
		}
		if (rd_poll(r, all, &wc)) {
			assert_int_equal(wc.opcode, QP_WC_READ);
			assert_int_equal(wc.wr_id, done);
			done++;
		}
	}
	assert_memory_equal(r->buf + data, s->buf, data);
	/* FETCH_ADDs, 8 in flight: each returns the sum of the ones before it */
	for (uint32_t k = 0; k < ATOMICS; k += 8) {
		for (uint32_t j = 0; j < 8; j++) {
			res[j] = 0x5a5a5a5a5a5a5a5aull;
			assert_int_equal(qp_post_send(r->qp, &(struct qp_wr){
				.opcode = QP_OP_FETCH_ADD, .wr_id = j, .mr = r->mr, .addr = &res[j],
				.length = 8, .remote_addr = remote_ctr, .rkey = r->qp->remote.rkey,
				.compare_add = k + j + 1, .flags = QP_WR_SIGNALED }), 0);
		}
		for (uint32_t j = 0; j < 8;) {
			assert_true(qp_now_ns() < end);
			if (!rd_poll(r, all, &wc))
				continue;
			assert_int_equal(wc.opcode, QP_WC_FETCH_ADD);
			assert_int_equal(wc.wr_id, j);
			assert_int_equal(res[j], sum);
			sum += k + j + 1;
			j++;
		}
	}
	/* a COMPARE_SWAP chain: each swaps (it compares with the value it must find) */
	for (uint32_t k = 0; k < ATOMICS; k++) {
		res[0] = 0x5a5a5a5a5a5a5a5aull;
		assert_int_equal(qp_post_send(r->qp, &(struct qp_wr){
			.opcode = QP_OP_CMP_SWAP, .wr_id = k, .mr = r->mr, .addr = &res[0],
			.length = 8, .remote_addr = remote_ctr, .rkey = r->qp->remote.rkey,
			.compare_add = sum, .swap = sum ^ (k + 1), .flags = QP_WR_SIGNALED }), 0);
		while (!rd_poll(r, all, &wc))
			assert_true(qp_now_ns() < end);
		assert_int_equal(wc.opcode, QP_WC_COMP_SWAP);
		assert_int_equal(res[0], sum);
		sum ^= k + 1;
	}
	memcpy(&old, s->buf + 2 * data, 8);
	assert_int_equal(old, sum);   /* each executed exactly once */
}

static void test_read_atomics(void **state)
{
	static const unsigned access = QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_READ |
				       QP_ACCESS_REMOTE_ATOMIC;
	size_t data = test_size_bytes(4, 1) / RD_MSG * RD_MSG;
	unsigned base = soft_port_base(24);
	struct qp_attr attr = { .sq_depth = 64, .rq_depth = 16, .timeout = 12,
				.flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL };
	struct soft_side side[2];
	struct qp_ctx *all[2];
	struct counters c;
	char bp[16], o[2][160];
	(void)state;

	snprintf(bp, sizeof(bp), "%u", base);
	snprintf(stats_path, sizeof(stats_path), "/tmp/qpace-soft-impair-%d.json", (int)getpid());
	sw_pid = soft_switch_start((const char *const[]){
		"--star", "2", "--base-port", bp, "--rate", "1G", "--buffer", "4M",
		"--delay", "5us", "--int", "off", "--early", "off",
		"--impair", "loss=1%,reorder=1%,dup=1%,seed=11",
		"--duration", "300s", "--stats-json", stats_path, "--quiet", NULL });
	if (sw_pid < 0)
		skip();
	for (int i = 0; i < 2; i++) {
		snprintf(o[i], sizeof(o[i]), "attach=127.0.0.1:%u,ip=10.0.0.%d", base + 2 * i, i + 1);
		soft_side_open(&side[i], o[i], 2 * data + 64 + 64, access, &attr);
		for (size_t k = 0; k < data; k++)
			side[i].buf[k] = rd_pattern(i, k);
		memset(side[i].buf + 2 * data, 0, 8);   /* the counter */
		all[i] = side[i].ctx;
	}
	soft_connect(&side[0], &side[1]);
	for (int d = 0; d < 2; d++) {
		const struct rc_stats *rq = qp_soft_rc_stats(side[d].qp);
		const struct rc_stats *rs = qp_soft_rc_stats(side[!d].qp);

		rd_one_way(&side[d], &side[!d], all, data);
		print_message("%s: %zu KiB READ in %zu READs, %u FETCH_ADDs and %u COMPARE_SWAPs "
			      "exact; requester %llu READ requests sent, %llu implicit NAKs; "
			      "responder %llu READs served, %llu again, %llu atomics served, %llu "
			      "answered again\n", d ? "B reads A" : "A reads B", data >> 10,
			      data / RD_MSG, ATOMICS, ATOMICS,
			      (unsigned long long)rq->reads_tx, (unsigned long long)rq->implicit_naks,
			      (unsigned long long)rs->reads_rx, (unsigned long long)rs->reads_replayed,
			      (unsigned long long)rs->atomics_rx,
			      (unsigned long long)rs->atomics_replayed);
	}
	for (int i = 0; i < 2; i++)
		soft_side_close(&side[i]);
	assert_int_equal(soft_switch_stop(sw_pid), 0);
	sw_pid = -1;
	read_counters(&c);
	print_message("switch: lost %lld, reordered %lld, duplicated %lld\n", both(&c, C_LOSS),
		      both(&c, C_REORDER), both(&c, C_DUP));
	assert_true(both(&c, C_LOSS) > 0);
	assert_true(both(&c, C_DUP) > 0);
	assert_int_equal(both(&c, C_DROP_TAIL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_loss_and_reorder, teardown),
		cmocka_unit_test_teardown(test_corruption, teardown),
		cmocka_unit_test_teardown(test_bursts_dups_jitter, teardown),
		cmocka_unit_test_teardown(test_read_atomics, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
