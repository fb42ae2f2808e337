/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RDMA READ and the atomics on the RC state machine, two QPs back to back on an in-memory
 * wire in injected time (tests/support/rc_wire.h):
 *  - READs of every shape (0, 1, MTU +- 1, many packets) land byte-exact;
 *  - a stream of READs, WRITEs, FETCH_ADDs and COMPARE_SWAPs under loss, reordering and
 *    duplication: every READ byte exact, every atomic's result the one executing it once
 *    gives (FETCH_ADD k returns k; the swap chain never misses), the counters at the end
 *    exactly the count of atomics;
 *  - a response lost inside a READ: the READ is sent again from that PSN with its RETH
 *    moved on, and the responder answers from there (MIDDLE first), with no timeout;
 *  - a lost ATOMIC ACK: the duplicate atomic is answered from the saved result and not
 *    executed again;
 *  - implicit ACK (a READ response completes the WRITE before it when ACKs are lost) and
 *    implicit NAK (an ACK past a READ whose response was lost resends it at once);
 *  - max_rd_atomic bounds the READs in flight; a requester beyond the responder's
 *    max_dest_rd_atomic gets NAK invalid request, one lowered to it at connect none;
 *    access and alignment errors.
 * Size: QPACE_TEST_MB (default 32; 8 under AddressSanitizer) of READ data per stream. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/rc.h"
#include "rc_pair.h"
#include "test_size.h"

static struct rc_params params(void)
{
	struct rc_params p;

	rc_params_init(&p);
	p.rto_ns = 4096ULL << 9;   /* ~2.1 ms */
	return p;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i + seed) * 2654435761u >> 13);
}

/* ---- READ shapes ---- */

static void test_read_sizes(void **state)
{
	static const uint32_t sizes[] = { 0, 1, 255, 256, 257, 1023, 1024, 1025, 4096, 3079,
					  65536, 100001 };
	static const uint32_t mtus[] = { 256, 1024, 4096 };
	struct rc_params p = params();

	(void)state;
	for (size_t m = 0; m < sizeof(mtus) / sizeof(mtus[0]); m++) {
		struct rc_wire_params wp = { .seed = 20 + m };
		struct rc_pair pr;
		uint32_t rkey;
		uint8_t *src, *dst = malloc(100001);

		rc_pair_open(&pr, &p, mtus[m], &wp);
		rkey = rc_pair_mem_access(&pr, 1, 100001 + 64, QP_ACCESS_REMOTE_READ);
		src = rc_pair_buf(&pr, 1, rkey);
		fill(src, 100001 + 64, (uint32_t)m);
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct qp_wc wc;

			memset(dst, 0xee, 100001);
			rc_pair_post(&pr, 0, QP_OP_READ, k, dst, sizes[k],
				     rc_pair_va(&pr, 1, rkey) + 7 + k, rkey, 0);
			assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
			assert_int_equal(wc.status, QP_WC_SUCCESS);
			assert_int_equal(wc.opcode, QP_WC_READ);
			assert_int_equal(wc.wr_id, k);
			assert_int_equal(wc.byte_len, sizes[k]);
			assert_memory_equal(dst, src + 7 + k, sizes[k]);
			if (sizes[k] < 100001)
				assert_int_equal(dst[sizes[k]], 0xee);   /* nothing beyond */
		}
		assert_int_equal(rc_stats(pr.s[1].qp)->reads_rx, sizeof(sizes) / sizeof(sizes[0]));
		assert_int_equal(rc_stats(pr.s[0].qp)->retrans_pkts, 0);
		assert_int_equal(pr.w.bad, 0);
		free(dst);
		rc_pair_close(&pr);
	}
}

/* ---- a mixed stream under impairments ---- */

#define MIX_DEPTH 16u
#define MIX_READ_MAX (96u * 1024)
#define MIX_WRITE_MAX (16u * 1024)

enum { K_READ, K_WRITE, K_FADD, K_CAS };

struct mix_wr {
	uint8_t kind;
	uint32_t off, len;
	uint64_t expect;            /* an atomic's result */
};

struct mix {
	struct rc_pair *pr;
	uint32_t rsrc, wdst, ctr;       /* B's regions: READ from, WRITE to, two counters */
	uint8_t *src, *wimg;            /* B's READ source; what A wrote, as A sent it */
	uint8_t *slots;                 /* A's buffers, MIX_DEPTH of MIX_READ_MAX */
	size_t src_len, wdst_len;
	struct mix_wr wr[MIX_DEPTH];
	uint64_t posted, done, errors;
	uint64_t read_bytes, read_target, fadds, cases, writes;
	uint32_t rd_atomic;
};

/* Atomics posted and not completed: the soft SQ holds max_rd_atomic of them. */
static uint32_t mix_atomics(const struct mix *x)
{
	uint32_t n = 0;

	for (uint64_t k = x->done; k < x->posted; k++)
		n += x->wr[k % MIX_DEPTH].kind >= K_FADD;
	return n;
}

static void mix_post(struct mix *x)
{
	struct rc_pair *pr = x->pr;
	uint64_t k = x->posted;
	uint32_t slot = (uint32_t)(k % MIX_DEPTH);
	uint8_t *buf = x->slots + (size_t)slot * MIX_READ_MAX;
	double r = rc_wire_rand(&pr->w);
	uint64_t ctr = rc_pair_va(pr, 1, x->ctr);

	if (r >= 0.75 && mix_atomics(x) >= x->rd_atomic)
		r = 0;   /* a READ instead */

	if (r < 0.55) {
		uint32_t len = (uint32_t)rc_wire_randn(&pr->w, MIX_READ_MAX + 1);
		uint32_t off = (uint32_t)rc_wire_randn(&pr->w, x->src_len - len + 1);

		x->wr[slot] = (struct mix_wr){ K_READ, off, len, 0 };
		rc_pair_post(pr, 0, QP_OP_READ, k, buf, len, rc_pair_va(pr, 1, x->rsrc) + off,
			     x->rsrc, 0);
		x->read_bytes += len;
	} else if (r < 0.75) {
		uint32_t len = 1 + (uint32_t)rc_wire_randn(&pr->w, MIX_WRITE_MAX);
		uint32_t off = (uint32_t)rc_wire_randn(&pr->w, x->wdst_len - len + 1);

		fill(buf, len, (uint32_t)k);
		memcpy(x->wimg + off, buf, len);   /* later WRITEs win, in order */
		x->wr[slot] = (struct mix_wr){ K_WRITE, off, len, 0 };
		rc_pair_post(pr, 0, QP_OP_WRITE, k, buf, len, rc_pair_va(pr, 1, x->wdst) + off,
			     x->wdst, 0);
		x->writes++;
	} else if (r < 0.9) {
		x->wr[slot] = (struct mix_wr){ K_FADD, 0, 8, x->fadds * 3 };
		rc_pair_atomic(pr, 0, QP_OP_FETCH_ADD, k, (uint64_t *)(void *)buf, ctr, x->ctr, 3, 0);
		x->fadds++;
	} else {
		/* the chain: compare the value the last swap left, swap in the next */
		x->wr[slot] = (struct mix_wr){ K_CAS, 0, 8, x->cases };
		rc_pair_atomic(pr, 0, QP_OP_CMP_SWAP, k, (uint64_t *)(void *)buf, ctr + 8, x->ctr,
			       x->cases, x->cases + 1);
		x->cases++;
	}
	x->posted++;
}

static bool mix_step(void *arg)
{
	struct mix *x = arg;
	struct qp_wc wc[8];
	int n;

	while ((n = rc_poll_cq(x->pr->s[0].qp, wc, 8)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)(x->done % MIX_DEPTH);
			const uint8_t *buf = x->slots + (size_t)slot * MIX_READ_MAX;
			uint64_t v;

			if (wc[i].status != QP_WC_SUCCESS || wc[i].wr_id != x->done) {
				x->errors++;
				continue;
			}
			switch (x->wr[slot].kind) {
			case K_READ:
				x->errors += wc[i].opcode != QP_WC_READ ||
					     memcmp(buf, x->src + x->wr[slot].off, x->wr[slot].len);
				break;
			case K_FADD:
			case K_CAS:
				memcpy(&v, buf, 8);
				x->errors += v != x->wr[slot].expect ||
					     wc[i].opcode != (x->wr[slot].kind == K_FADD ?
							      QP_WC_FETCH_ADD : QP_WC_COMP_SWAP);
				break;
			default:
				x->errors += wc[i].opcode != QP_WC_WRITE;
			}
			x->done++;
		}
	}
	while (x->read_bytes < x->read_target && x->posted - x->done < MIX_DEPTH)
		mix_post(x);
	return x->errors || (x->done == x->posted && x->read_bytes >= x->read_target);
}

static void mix_run(const char *name, uint32_t mtu, const struct rc_wire_params *wp,
		    uint8_t rd_atomic)
{
	struct rc_params p = params();
	struct rc_pair pr;
	struct mix x = { .pr = &pr, .src_len = 1u << 20, .wdst_len = 1u << 18 };
	const struct rc_stats *sa, *sb;
	uint64_t c[2];

	p.sq_depth = MIX_DEPTH;
	p.max_rd_atomic = p.max_dest_rd_atomic = rd_atomic;
	rc_pair_open(&pr, &p, mtu, wp);
	x.read_target = test_size_bytes(32, 8);
	x.rd_atomic = rd_atomic;
	x.rsrc = rc_pair_mem_access(&pr, 1, x.src_len, QP_ACCESS_REMOTE_READ);
	x.wdst = rc_pair_mem_access(&pr, 1, x.wdst_len, QP_ACCESS_REMOTE_WRITE);
	x.ctr = rc_pair_mem_access(&pr, 1, 16, QP_ACCESS_REMOTE_ATOMIC);
	x.src = rc_pair_buf(&pr, 1, x.rsrc);
	fill(x.src, x.src_len, 99);
	x.wimg = calloc(1, x.wdst_len);
	x.slots = malloc((size_t)MIX_DEPTH * MIX_READ_MAX);
	assert_non_null(x.wimg);
	assert_non_null(x.slots);
	assert_true(rc_wire_run(&pr.w, mix_step, &x, pr.w.now + 600 * QP_NS_PER_S));
	sa = rc_stats(pr.s[0].qp);
	sb = rc_stats(pr.s[1].qp);
	memcpy(c, rc_pair_buf(&pr, 1, x.ctr), sizeof(c));
	print_message("%s, MTU %u, rd_atomic %u: %llu WRs (%llu MB READ, %llu WRITEs, %llu "
		      "FETCH_ADDs, %llu COMPARE_SWAPs) in %.1f ms simulated\n", name, mtu, rd_atomic,
		      (unsigned long long)x.done, (unsigned long long)(x.read_bytes >> 20),
		      (unsigned long long)x.writes, (unsigned long long)x.fadds,
		      (unsigned long long)x.cases, (double)(pr.w.now - QP_NS_PER_S) / 1e6);
	print_message("  wire: %llu frames, %llu lost, %llu reordered, %llu duplicated; A: %llu "
		      "READ requests (%llu resent packets), %llu implicit NAKs, %llu timeouts; B: "
		      "%llu READs executed again, %llu atomics answered from the saved result, %llu "
		      "duplicates without one\n",
		      (unsigned long long)pr.w.st.sent, (unsigned long long)pr.w.st.lost,
		      (unsigned long long)pr.w.st.reordered, (unsigned long long)pr.w.st.duplicated,
		      (unsigned long long)sa->reads_tx, (unsigned long long)sa->retrans_pkts,
		      (unsigned long long)sa->implicit_naks, (unsigned long long)sa->timeouts,
		      (unsigned long long)sb->reads_replayed, (unsigned long long)sb->atomics_replayed,
		      (unsigned long long)sb->drops[RC_DROP_NO_SAVED]);
	assert_int_equal(x.errors, 0);
	assert_int_equal(pr.w.bad, 0);
	/* each atomic executed exactly once */
	assert_true(c[0] == x.fadds * 3);
	assert_true(c[1] == x.cases);
	assert_int_equal(sb->atomics_rx, x.fadds + x.cases);
	assert_memory_equal(rc_pair_buf(&pr, 1, x.wdst), x.wimg, x.wdst_len);
	if (wp->loss > 0)
		assert_true(sb->reads_replayed > 0 && sa->retrans_pkts > 0);
	if (wp->dup > 0)
		assert_true(sb->atomics_replayed > 0 || sb->reads_replayed > 0);
	assert_int_equal(rc_state(pr.s[0].qp), RC_RTS);
	assert_int_equal(rc_state(pr.s[1].qp), RC_RTS);
	free(x.wimg);
	free(x.slots);
	rc_pair_close(&pr);
}

static void test_mix_clean(void **state)
{
	struct rc_wire_params wp = { .seed = 30 };

	(void)state;
	mix_run("no loss", 1024, &wp, 16);
}

static void test_mix_loss(void **state)
{
	struct rc_wire_params wp = { .loss = 0.01, .seed = 31 };

	(void)state;
	mix_run("1% loss", 1024, &wp, 16);
}

static void test_mix_reorder_dup(void **state)
{
	struct rc_wire_params wp = { .reorder = 0.02, .reorder_ns = 20 * QP_NS_PER_US,
				     .dup = 0.02, .seed = 32 };

	(void)state;
	mix_run("2% reordered, 2% duplicated", 4096, &wp, 4);
}

static void test_mix_all(void **state)
{
	struct rc_wire_params wp = { .loss = 0.01, .reorder = 0.01, .reorder_ns = 10000,
				     .dup = 0.01, .seed = 33 };

	(void)state;
	mix_run("1% loss, 1% reordered, 1% duplicated", 256, &wp, 2);
}

/* ---- one lost response inside a READ ---- */

struct capture {
	int drop_left;              /* drop this many frames that match */
	uint8_t drop_op;
	uint32_t drop_psn;
	bool drop_any_psn;
	int from;                   /* the side whose frames may be dropped */
	/* what crossed the wire, in order */
	uint8_t op[256];
	uint32_t psn[256];
	struct frame_reth reth[256];
	int n;
};

static bool capture_filter(void *arg, int from, const struct frame_parsed *p)
{
	struct capture *c = arg;

	if (c->n < 256) {
		c->op[c->n] = p->bth.opcode;
		c->psn[c->n] = p->bth.psn;
		c->reth[c->n] = p->reth;
		c->n++;
	}
	if (c->drop_left && from == c->from && p->bth.opcode == c->drop_op &&
	    (c->drop_any_psn || p->bth.psn == c->drop_psn)) {
		c->drop_left--;
		return true;
	}
	return false;
}

static void test_read_partial_retry(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 40 };
	struct rc_pair pr;
	struct capture cap = { .drop_left = 1, .drop_op = FRAME_OP_RC_READ_RESP_MIDDLE,
			       .from = 1 };
	uint8_t dst[10 * 1024];
	uint32_t rkey, first = 0xfffff0;   /* A's first PSN: the READ wraps the PSN space */
	struct qp_wc wc;
	int k, again = -1;

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, sizeof(dst), QP_ACCESS_REMOTE_READ);
	fill(rc_pair_buf(&pr, 1, rkey), sizeof(dst), 5);
	cap.drop_psn = rc_psn_add(first, 2);
	pr.w.filter = capture_filter;
	pr.w.filter_arg = &cap;
	rc_pair_post(&pr, 0, QP_OP_READ, 1, dst, sizeof(dst), rc_pair_va(&pr, 1, rkey), rkey, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_memory_equal(dst, rc_pair_buf(&pr, 1, rkey), sizeof(dst));
	/* The second READ request: from the lost PSN, its RETH moved on by two MTUs. */
	for (k = 1; k < cap.n; k++)
		if (cap.op[k] == FRAME_OP_RC_READ_REQUEST) {
			again = k;
			break;
		}
	assert_true(again > 0);
	assert_int_equal(cap.psn[again], cap.drop_psn);
	assert_true(cap.reth[again].va == rc_pair_va(&pr, 1, rkey) + 2048);
	assert_int_equal(cap.reth[again].dma_len, sizeof(dst) - 2048);
	assert_int_equal(cap.reth[again].rkey, rkey);
	/* The responder answers from there (after what was on its way already): MIDDLE at
	 * the lost PSN, then each PSN in order to the LAST. */
	for (k = again + 1; k < cap.n && cap.psn[k] != cap.drop_psn; k++)
		;
	assert_true(k < cap.n);
	assert_int_equal(cap.op[k], FRAME_OP_RC_READ_RESP_MIDDLE);
	for (uint32_t i = 1; i < 8; i++) {
		assert_int_equal(cap.psn[k + (int)i], rc_psn_add(cap.drop_psn, i));
		assert_int_equal(cap.op[k + (int)i], i == 7 ? FRAME_OP_RC_READ_RESP_LAST
							    : FRAME_OP_RC_READ_RESP_MIDDLE);
	}
	print_message("partial READ retry: resent from PSN 0x%06x, va + 2048, %u bytes; answer "
		      "from MIDDLE; %llu timeouts\n", cap.psn[again], cap.reth[again].dma_len,
		      (unsigned long long)rc_stats(pr.s[0].qp)->timeouts);
	assert_int_equal(rc_stats(pr.s[1].qp)->reads_replayed, 1);
	assert_int_equal(rc_stats(pr.s[0].qp)->timeouts, 0);   /* the gap said so at once */
	assert_int_equal(rc_stats(pr.s[0].qp)->drops[RC_DROP_RESPONSE_GAP] > 0, 1);
	rc_pair_close(&pr);
}

/* ---- a lost ATOMIC ACK: the duplicate is answered, not executed ---- */

static void test_atomic_duplicate(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 41 };
	struct rc_pair pr;
	struct capture cap = { .drop_left = 2, .drop_op = FRAME_OP_RC_ATOMIC_ACK, .from = 1,
			       .drop_any_psn = true };
	uint64_t result = 7, result2 = 7, v;
	uint32_t rkey;
	struct qp_wc wc;

	(void)state;
	p.rto_ns = 200 * QP_NS_PER_US;
	rc_pair_open(&pr, &p, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, 64, QP_ACCESS_REMOTE_ATOMIC);
	v = 1000;
	memcpy(rc_pair_buf(&pr, 1, rkey) + 8, &v, 8);
	pr.w.filter = capture_filter;
	pr.w.filter_arg = &cap;
	rc_pair_atomic(&pr, 0, QP_OP_FETCH_ADD, 1, &result, rc_pair_va(&pr, 1, rkey) + 8, rkey,
		       5, 0);
	rc_pair_atomic(&pr, 0, QP_OP_CMP_SWAP, 2, &result2, rc_pair_va(&pr, 1, rkey) + 8, rkey,
		       1005, 42);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.opcode, QP_WC_FETCH_ADD);
	assert_int_equal(wc.byte_len, 8);
	assert_true(result == 1000);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.opcode, QP_WC_COMP_SWAP);
	assert_true(result2 == 1005);
	memcpy(&v, rc_pair_buf(&pr, 1, rkey) + 8, 8);
	print_message("atomics: two ATOMIC ACKs lost; %llu executed, %llu answered again from "
		      "the saved result; final value %llu; %llu timeouts\n",
		      (unsigned long long)rc_stats(pr.s[1].qp)->atomics_rx,
		      (unsigned long long)rc_stats(pr.s[1].qp)->atomics_replayed,
		      (unsigned long long)v, (unsigned long long)rc_stats(pr.s[0].qp)->timeouts);
	assert_true(v == 42);   /* 1000 + 5 once, then swapped: never added twice */
	assert_int_equal(rc_stats(pr.s[1].qp)->atomics_rx, 2);
	assert_true(rc_stats(pr.s[1].qp)->atomics_replayed >= 2);
	assert_true(rc_stats(pr.s[0].qp)->timeouts >= 1);
	rc_pair_close(&pr);
}

/* ---- implicit ACK and implicit NAK ---- */

static void test_implicit_ack(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 42 };
	struct rc_pair pr;
	struct capture cap = { .drop_left = 1000, .drop_op = FRAME_OP_RC_ACK, .from = 1,
			       .drop_any_psn = true };
	uint8_t msg[3000], dst[2000];
	uint32_t wkey, rkey;
	struct qp_wc wc;

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	wkey = rc_pair_mem_access(&pr, 1, sizeof(msg), QP_ACCESS_REMOTE_WRITE);
	rkey = rc_pair_mem_access(&pr, 1, sizeof(dst), QP_ACCESS_REMOTE_READ);
	fill(msg, sizeof(msg), 1);
	fill(rc_pair_buf(&pr, 1, rkey), sizeof(dst), 2);
	pr.w.filter = capture_filter;
	pr.w.filter_arg = &cap;
	/* every ACK is lost: the WRITE completes through the READ's response */
	rc_pair_post(&pr, 0, QP_OP_WRITE, 1, msg, sizeof(msg), rc_pair_va(&pr, 1, wkey), wkey, 0);
	rc_pair_post(&pr, 0, QP_OP_READ, 2, dst, sizeof(dst), rc_pair_va(&pr, 1, rkey), rkey, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, 1 * QP_NS_PER_MS));
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.opcode, QP_WC_WRITE);
	assert_true(rc_pair_wait(&pr, 0, &wc, 1 * QP_NS_PER_MS));
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_memory_equal(dst, rc_pair_buf(&pr, 1, rkey), sizeof(dst));
	assert_memory_equal(msg, rc_pair_buf(&pr, 1, wkey), sizeof(msg));
	assert_true(cap.drop_left < 1000);   /* ACKs were sent, and lost */
	assert_int_equal(rc_stats(pr.s[0].qp)->timeouts, 0);
	assert_int_equal(rc_stats(pr.s[0].qp)->retrans_pkts, 0);
	rc_pair_close(&pr);
}

static void test_implicit_nak(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 43 };
	struct rc_pair pr;
	struct capture cap = { .drop_left = 1, .drop_op = FRAME_OP_RC_READ_RESP_ONLY, .from = 1,
			       .drop_any_psn = true };
	uint8_t msg[100], dst[500];
	uint32_t wkey, rkey;
	struct qp_wc wc;
	qp_time_ns t0;

	(void)state;
	p.rto_ns = 100 * QP_NS_PER_MS;   /* far beyond what the go-back takes */
	rc_pair_open(&pr, &p, 1024, &wp);
	wkey = rc_pair_mem_access(&pr, 1, sizeof(msg), QP_ACCESS_REMOTE_WRITE);
	rkey = rc_pair_mem_access(&pr, 1, sizeof(dst), QP_ACCESS_REMOTE_READ);
	fill(rc_pair_buf(&pr, 1, rkey), sizeof(dst), 3);
	pr.w.filter = capture_filter;
	pr.w.filter_arg = &cap;
	t0 = pr.w.now;
	/* the READ's only response is lost; the ACK of the WRITE after it says so */
	rc_pair_post(&pr, 0, QP_OP_READ, 1, dst, sizeof(dst), rc_pair_va(&pr, 1, rkey), rkey, 0);
	rc_pair_post(&pr, 0, QP_OP_WRITE, 2, msg, sizeof(msg), rc_pair_va(&pr, 1, wkey), wkey, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_memory_equal(dst, rc_pair_buf(&pr, 1, rkey), sizeof(dst));
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.wr_id, 2);
	print_message("implicit NAK: READ answered again after %.1f us (RTO %.0f ms), %llu "
		      "implicit NAKs\n", (double)(pr.w.now - t0) / 1e3, (double)p.rto_ns / 1e6,
		      (unsigned long long)rc_stats(pr.s[0].qp)->implicit_naks);
	assert_true(rc_stats(pr.s[0].qp)->implicit_naks >= 1);
	assert_int_equal(rc_stats(pr.s[0].qp)->timeouts, 0);
	assert_int_equal(rc_stats(pr.s[1].qp)->reads_replayed, 1);
	assert_true(pr.w.now - t0 < QP_NS_PER_MS);
	rc_pair_close(&pr);
}

/* ---- limits ---- */

struct inflight {
	int reads, max;               /* READ requests first seen less responses LAST/ONLY */
	uint32_t seen_psn[64];
	int nseen;
};

static bool count_inflight(void *arg, int from, const struct frame_parsed *p)
{
	struct inflight *f = arg;

	if (from == 0 && p->bth.opcode == FRAME_OP_RC_READ_REQUEST) {
		for (int i = 0; i < f->nseen; i++)
			if (f->seen_psn[i] == p->bth.psn)
				return false;
		f->seen_psn[f->nseen++] = p->bth.psn;
		if (++f->reads > f->max)
			f->max = f->reads;
	} else if (from == 1 && (p->bth.opcode == FRAME_OP_RC_READ_RESP_LAST ||
				 p->bth.opcode == FRAME_OP_RC_READ_RESP_ONLY)) {
		f->reads--;
	}
	return false;
}

static void test_max_rd_atomic(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 44, .delay_ns = 50 * QP_NS_PER_US };
	struct rc_pair pr;
	struct inflight f = { 0 };
	static uint8_t dst[8][4096];
	uint32_t rkey;
	struct qp_wc wc;

	(void)state;
	p.max_rd_atomic = 2;
	rc_pair_open(&pr, &p, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, 4096, QP_ACCESS_REMOTE_READ);
	pr.w.filter = count_inflight;
	pr.w.filter_arg = &f;
	for (int i = 0; i < 8; i++)
		rc_pair_post(&pr, 0, QP_OP_READ, (uint64_t)i, dst[i], 4096,
			     rc_pair_va(&pr, 1, rkey), rkey, 0);
	for (int i = 0; i < 8; i++) {
		assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
		assert_int_equal(wc.status, QP_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);
	}
	assert_int_equal(f.nseen, 8);
	assert_int_equal(f.max, 2);   /* two at a time on a long path, never more */
	rc_pair_close(&pr);
}

static void test_max_dest_rd_atomic(void **state)
{
	struct rc_params pa = params(), pb = params();
	struct rc_wire_params wp = { .seed = 45, .delay_ns = 50 * QP_NS_PER_US };
	struct rc_pair pr;
	static uint8_t dst[4][16384];
	uint32_t rkey;
	struct qp_wc wc;

	(void)state;
	pa.max_rd_atomic = 4;
	pb.max_dest_rd_atomic = 2;   /* the requester asks for more than the responder keeps */
	rc_pair_open2(&pr, &pa, &pb, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, 16384, QP_ACCESS_REMOTE_READ);
	for (int i = 0; i < 4; i++)
		rc_pair_post(&pr, 0, QP_OP_READ, (uint64_t)i, dst[i], 16384,
			     rc_pair_va(&pr, 1, rkey), rkey, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	while (wc.status == QP_WC_SUCCESS)
		assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_REM_INV_REQ_ERR);
	assert_int_equal(rc_stats(pr.s[1].qp)->errs_tx, 1);
	assert_int_equal(rc_state(pr.s[0].qp), RC_ERROR);
	assert_int_equal(rc_state(pr.s[1].qp), RC_ERROR);
	rc_pair_close(&pr);
	/* connected as verbs do, the requester's 4 lowered to the responder's 2: all served */
	rc_pair_open_rts(&pr, &pa, &pb, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, 16384, QP_ACCESS_REMOTE_READ);
	for (int i = 0; i < 4; i++)
		rc_pair_post(&pr, 0, QP_OP_READ, (uint64_t)i, dst[i], 16384,
			     rc_pair_va(&pr, 1, rkey), rkey, 0);
	for (int i = 0; i < 4; i++) {
		assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
		assert_int_equal(wc.status, QP_WC_SUCCESS);
	}
	assert_int_equal(rc_stats(pr.s[1].qp)->errs_tx, 0);
	rc_pair_close(&pr);
}

static void test_access_errors(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 46 };
	struct rc_pair pr;
	uint8_t dst[64];
	uint64_t res = 0;
	uint32_t wonly;
	struct qp_wc wc;
	struct qp_wr bad = { .opcode = QP_OP_FETCH_ADD, .addr = &res, .length = 8,
			     .remote_addr = 0x1004 };

	(void)state;
	/* READ of a region the peer may only write to */
	rc_pair_open(&pr, &p, 1024, &wp);
	wonly = rc_pair_mem_access(&pr, 1, 64, QP_ACCESS_REMOTE_WRITE);
	rc_pair_post(&pr, 0, QP_OP_READ, 1, dst, 64, rc_pair_va(&pr, 1, wonly), wonly, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_REM_ACCESS_ERR);
	rc_pair_close(&pr);
	/* an atomic on a region without remote atomic access */
	rc_pair_open(&pr, &p, 1024, &wp);
	wonly = rc_pair_mem_access(&pr, 1, 64, QP_ACCESS_REMOTE_READ | QP_ACCESS_REMOTE_WRITE);
	rc_pair_atomic(&pr, 0, QP_OP_FETCH_ADD, 2, &res, rc_pair_va(&pr, 1, wonly), wonly, 1, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_REM_ACCESS_ERR);
	/* misaligned or not 8 bytes: refused at the post */
	assert_int_equal(rc_post_send(pr.s[0].qp, &bad, pr.w.now), -EINVAL);
	bad.remote_addr = 0x1000;
	bad.length = 4;
	assert_int_equal(rc_post_send(pr.s[0].qp, &bad, pr.w.now), -EINVAL);
	bad.length = 8;
	bad.flags = QP_WR_INLINE;
	assert_int_equal(rc_post_send(pr.s[0].qp, &bad, pr.w.now), -EINVAL);
	rc_pair_close(&pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_sizes),
		cmocka_unit_test(test_mix_clean),
		cmocka_unit_test(test_mix_loss),
		cmocka_unit_test(test_mix_reorder_dup),
		cmocka_unit_test(test_mix_all),
		cmocka_unit_test(test_read_partial_retry),
		cmocka_unit_test(test_atomic_duplicate),
		cmocka_unit_test(test_implicit_ack),
		cmocka_unit_test(test_implicit_nak),
		cmocka_unit_test(test_max_rd_atomic),
		cmocka_unit_test(test_max_dest_rd_atomic),
		cmocka_unit_test(test_access_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
