/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC receive path against bad input: every drop reason by a crafted frame; every
 * truncation of real frames; byte mutations with a recomputed ICRC (so the RC core, not
 * the checksum, has to cope); parameter checking. Exact-size heap copies let ASan see any
 * read past the end. */
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

#define FRAME_MAX 4200

static struct rc_params params(void)
{
	struct rc_params p;

	rc_params_init(&p);
	return p;
}

/* ---- parameters ---- */

static void test_params_check(void **state)
{
	struct rc_params p = params(), c[8];
	const char *field[8];
	char err[160];
	int n = 0;

	(void)state;
	p.mr_find = (rc_mr_find_fn)1;
	assert_int_equal(rc_params_check(&p, err, sizeof(err)), 0);
	for (int i = 0; i < 8; i++)
		c[i] = p;
	field[n] = "qpn", c[n++].qpn = 0;
	field[n] = "sq_psn", c[n++].sq_psn = 1u << 24;
	field[n] = "sq_depth", c[n++].sq_depth = 0;
	field[n] = "window_pkts", c[n++].window_pkts = RC_WINDOW_MAX + 1;
	field[n] = "retry_cnt", c[n++].retry_cnt = 8;
	field[n] = "min_rnr_timer", c[n++].min_rnr_timer = 32;
	field[n] = "ackreq_every", c[n++].ackreq_every = 200;
	field[n] = "mr_find", c[n++].mr_find = NULL;
	for (int i = 0; i < n; i++) {
		assert_int_equal(rc_params_check(&c[i], err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, field[i]));
		assert_null(rc_create(&c[i], err, sizeof(err)));
		print_message("%s\n", err);
	}
}

/* ---- crafted frames ---- */

struct craft {
	uint8_t buf[FRAME_MAX];
	struct frame_parsed p;
};

/* Build a frame from side @from of @pr with @bth (dest_qp defaults to the peer). */
static void craft(struct craft *c, struct rc_pair *pr, int from, struct frame_bth bth,
		  const struct frame_aeth *aeth, const struct frame_reth *reth, uint32_t paylen)
{
	struct frame_roce_spec s = { .bth = bth, .payload_len = paylen };
	int len;

	s.src = pr->w.addr[from];
	s.dst = pr->w.addr[!from];
	if (!s.bth.dest_qp)
		s.bth.dest_qp = from ? 0x11 : 0x22;
	if (aeth)
		s.aeth = *aeth;
	if (reth)
		s.reth = *reth;
	len = frame_build_roce(c->buf, sizeof(c->buf), &s);
	assert_true(len > 0);
	assert_int_equal(frame_parse(&c->p, c->buf, (size_t)len), 0);
	assert_true(frame_icrc_ok(c->buf, &c->p));
}

static int rx(struct rc_pair *pr, int to, struct craft *c)
{
	return rc_rx(pr->s[to].qp, c->buf, &c->p, pr->w.now);
}

#define DROPPED(d) (-(1 + (int)(d)))

/* A READ's requester is the reaction point of its responses (rc.h): each CE-marked
 * response counts toward cnp_self, at most one per cnp_interval_ns, whether it is taken
 * or dropped; an unmarked one does not. */
static void test_read_response_ce(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 2 };
	struct rc_pair pr;
	struct craft c;
	uint8_t dst[4096];
	uint32_t rkey;
	const qp_time_ns gap = p.cnp_interval_ns;

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	rkey = rc_pair_mem_access(&pr, 1, sizeof(dst), QP_ACCESS_REMOTE_READ);
	struct frame_roce_spec out;

	rc_pair_post(&pr, 0, QP_OP_READ, 1, dst, sizeof(dst), rc_pair_va(&pr, 1, rkey), rkey, 0);
	assert_true(rc_tx_next(pr.s[0].qp, pr.w.now, &out));   /* the request: sent */
	for (int k = 0; k < 4; k++) {   /* four responses, the last two 1 ns and one gap apart */
		static const uint8_t ops[4] = { FRAME_OP_RC_READ_RESP_FIRST,
						FRAME_OP_RC_READ_RESP_MIDDLE,
						FRAME_OP_RC_READ_RESP_MIDDLE,
						FRAME_OP_RC_READ_RESP_LAST };

		craft(&c, &pr, 1, (struct frame_bth){ .opcode = ops[k],
						      .psn = rc_psn_add(0xfffff0, (uint32_t)k) },
		      &(struct frame_aeth){ .syndrome = RC_AETH_ACK | RC_AETH_ACK_UNLIMITED },
		      NULL, 1024);
		c.p.ip.tos = k == 1 ? 0 : FRAME_ECN_CE;
		pr.w.now += k == 3 ? gap : 1;
		rx(&pr, 0, &c);
	}
	/* responses 0 (counted), 2 (within the gap: not), 3 (a gap later: counted) */
	assert_int_equal(rc_stats(pr.s[0].qp)->cnp_self, 2);
	assert_int_equal(rc_stats(pr.s[0].qp)->ce_rx, 3);
	assert_int_equal(rc_stats(pr.s[0].qp)->read_rx_bytes, 4096);
	rc_pair_close(&pr);
}

static void test_drop_reasons(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 1 };
	struct rc_pair pr;
	struct craft c;
	struct frame_roce_spec out;
	const uint32_t a_psn = 0xfffff0, b_epsn = 0xfffff0;   /* A sends from 0xfffff0 */
	struct frame_aeth ack = { .syndrome = RC_AETH_ACK | RC_AETH_ACK_UNLIMITED };
	struct rc_qp *lone;
	char err[160];

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	/* Requester side (A gets ACKs, nothing sent yet). */
	craft(&c, &pr, 1, (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .psn = a_psn }, &ack,
	      NULL, 0);
	assert_int_equal(rx(&pr, 0, &c), DROPPED(RC_DROP_ACK_RANGE));
	craft(&c, &pr, 1, (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .psn = a_psn - 1 },
	      &ack, NULL, 0);
	assert_int_equal(rx(&pr, 0, &c), DROPPED(RC_DROP_ACK_STALE));
	craft(&c, &pr, 1, (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .psn = a_psn },
	      &(struct frame_aeth){ .syndrome = 0x40 }, NULL, 0);
	assert_int_equal(rx(&pr, 0, &c), DROPPED(RC_DROP_SYNDROME));
	craft(&c, &pr, 1, (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .psn = a_psn },
	      &(struct frame_aeth){ .syndrome = RC_AETH_NAK | 9 }, NULL, 0);
	assert_int_equal(rx(&pr, 0, &c), DROPPED(RC_DROP_SYNDROME));
	craft(&c, &pr, 1, (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .psn = a_psn }, &ack,
	      NULL, 8);
	assert_int_equal(rx(&pr, 0, &c), DROPPED(RC_DROP_HEADER));
	/* Header checks, on B. */
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_RC_SEND_ONLY, .psn = b_epsn },
	      NULL, NULL, 0);
	c.p.bth.tver = 1;
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_HEADER));
	c.p.bth.tver = 0;
	c.p.bth.pkey = 0x1234;
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_HEADER));
	c.p.bth.pkey = 0xffff;
	c.p.bth.dest_qp = 0x33;
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_QPN));
	c.p.layers &= ~FRAME_L_ROCE;
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_NOT_ROCE));
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_RC_SEND_ONLY_INV, .psn = b_epsn },
	      NULL, NULL, 0);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_OPCODE));
	c.p.bth.opcode = FRAME_OP_UD_SEND_ONLY;
	c.p.op = frame_opinfo(FRAME_OP_UD_SEND_ONLY);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_OPCODE));
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_CNP, .psn = 0 }, NULL, NULL, 0);
	assert_int_equal(rx(&pr, 1, &c), 0);
	assert_int_equal(rc_stats(pr.s[1].qp)->cnp_rx, 1);
	/* A gap: one NAK with the expected PSN, and no second NAK for the same gap. */
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_RC_SEND_ONLY,
					      .psn = rc_psn_add(b_epsn, 5) }, NULL, NULL, 0);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_OUT_OF_SEQ));
	assert_true(rc_tx_next(pr.s[1].qp, pr.w.now, &out));
	assert_int_equal(out.bth.opcode, FRAME_OP_RC_ACK);
	assert_int_equal(out.aeth.syndrome, RC_AETH_NAK | RC_NAK_PSN_SEQ);
	assert_int_equal(out.bth.psn, b_epsn);
	c.p.bth.psn = rc_psn_add(b_epsn, 6);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_OUT_OF_SEQ));
	assert_false(rc_tx_pending(pr.s[1].qp));
	/* A duplicate (just before the expected PSN, across the 24-bit wrap): re-ACK. */
	c.p.bth.psn = rc_psn_add(b_epsn, RC_PSN_MASK);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_DUPLICATE));
	assert_true(rc_tx_next(pr.s[1].qp, pr.w.now, &out));
	assert_int_equal(out.aeth.syndrome, RC_AETH_ACK | RC_AETH_ACK_UNLIMITED);
	assert_int_equal(out.bth.psn, rc_psn_add(b_epsn, RC_PSN_MASK));
	/* FIRST shorter than the MTU: invalid request, class C: NAK and error. */
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_RC_WRITE_FIRST, .psn = b_epsn },
	      NULL, &(struct frame_reth){ .dma_len = 5000 }, 100);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_INVALID));
	assert_int_equal(rc_state(pr.s[1].qp), RC_ERROR);
	assert_true(rc_tx_next(pr.s[1].qp, pr.w.now, &out));
	assert_int_equal(out.aeth.syndrome, RC_AETH_NAK | RC_NAK_INV_REQ);
	assert_false(rc_tx_next(pr.s[1].qp, pr.w.now, &out));
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_STATE));
	rc_pair_close(&pr);

	/* MIDDLE with no FIRST: invalid request too. */
	rc_pair_open(&pr, &p, 1024, &wp);
	craft(&c, &pr, 0, (struct frame_bth){ .opcode = FRAME_OP_RC_SEND_MIDDLE, .psn = b_epsn },
	      NULL, NULL, 1024);
	assert_int_equal(rx(&pr, 1, &c), DROPPED(RC_DROP_INVALID));
	/* A QP that is not connected drops everything. */
	p.mr_find = (rc_mr_find_fn)1;
	lone = rc_create(&p, err, sizeof(err));
	assert_non_null(lone);
	assert_int_equal(rc_rx(lone, c.buf, &c.p, 0), DROPPED(RC_DROP_STATE));
	assert_int_equal(rc_post_send(lone, &(struct qp_wr){ .opcode = QP_OP_SEND }, 0),
			 -ENOTCONN);
	assert_int_equal(rc_connect(lone, &(struct rc_conn){ .dest_qpn = 1, .mtu_bytes = 1000 }),
			 -EINVAL);
	rc_destroy(lone);
	for (int d = 0; d < RC_DROP_COUNT; d++)
		assert_string_not_equal(rc_drop_str((enum rc_drop)d), "UNKNOWN");
	assert_string_equal(rc_drop_str(RC_DROP_COUNT), "UNKNOWN");
	rc_pair_close(&pr);
}

/* PSN order stays unambiguous: at most RC_PSN_SPAN_MAX PSNs outstanding. */
static void test_psn_span_bounded(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 4 };
	struct rc_pair pr;
	static uint8_t byte;   /* never read: nothing is sent in this test */
	struct qp_wr wr = { .opcode = QP_OP_SEND, .addr = &byte };

	(void)state;
	rc_pair_open(&pr, &p, 256, &wp);
	wr.length = RC_MSG_MAX_BYTES;   /* 2^23 packets of 256 bytes */
	assert_int_equal(rc_post_send(pr.s[0].qp, &wr, 0), -EINVAL);
	wr.length = (RC_PSN_SPAN_MAX - 1) * 256;
	assert_int_equal(rc_post_send(pr.s[0].qp, &wr, 0), 0);
	wr.length = 512;   /* 2 more packets would pass the span */
	assert_int_equal(rc_post_send(pr.s[0].qp, &wr, 0), -ENOMEM);
	wr.length = 256;
	assert_int_equal(rc_post_send(pr.s[0].qp, &wr, 0), 0);
	rc_pair_close(&pr);
}

/* ---- real frames: truncations and mutations ---- */

#define NFRAMES 64

struct corpus {
	uint8_t *f[NFRAMES];
	size_t len[NFRAMES];
	int n;
};

/* Frames of a short exchange: a 3-MTU WRITE, a SEND_IMM, a WRITE_IMM, and B's ACKs. */
static void collect(struct corpus *k)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 2 };
	struct rc_pair pr;
	struct frame_roce_spec s;
	static uint8_t data[3000];
	uint8_t buf[FRAME_MAX], rbuf[4096];
	uint32_t rk;

	rc_pair_open(&pr, &p, 1024, &wp);
	rk = rc_pair_mem(&pr, 1, 4096, true);
	rc_pair_recv(&pr, 1, 1, rbuf, sizeof(rbuf));
	rc_pair_recv(&pr, 1, 2, rbuf, sizeof(rbuf));
	rc_pair_post(&pr, 0, QP_OP_WRITE, 1, data, sizeof(data), rc_pair_va(&pr, 1, rk), rk, 0);
	rc_pair_post(&pr, 0, QP_OP_SEND_IMM, 2, data, 700, 0, 0, 5);
	rc_pair_post(&pr, 0, QP_OP_WRITE_IMM, 3, data, 10, rc_pair_va(&pr, 1, rk), rk, 6);
	for (int side = 0; side < 2; side++) {
		while (k->n < NFRAMES && rc_tx_next(pr.s[side].qp, 0, &s)) {
			struct frame_parsed fp;
			int len;

			s.src = pr.w.addr[side];
			s.dst = pr.w.addr[!side];
			s.ip = (struct frame_ip_opts){ 0 };
			len = frame_build_roce(buf, sizeof(buf), &s);
			assert_true(len > 0);
			k->f[k->n] = malloc((size_t)len);
			memcpy(k->f[k->n], buf, (size_t)len);
			k->len[k->n++] = (size_t)len;
			if (side == 0) {   /* deliver to B so that B has ACKs to send */
				assert_int_equal(frame_parse(&fp, buf, (size_t)len), 0);
				assert_int_equal(rc_rx(pr.s[1].qp, buf, &fp, 0), 0);
			}
		}
	}
	rc_pair_close(&pr);
}

static void corpus_free(struct corpus *k)
{
	for (int i = 0; i < k->n; i++)
		free(k->f[i]);
}

static void test_truncations(void **state)
{
	struct corpus k = { .n = 0 };
	struct frame_parsed p;
	uint64_t tried = 0;

	(void)state;
	collect(&k);
	assert_true(k.n >= 6);
	for (int i = 0; i < k.n; i++) {
		for (size_t len = 0; len < k.len[i]; len++) {
			uint8_t *t = malloc(len ? len : 1);

			memcpy(t, k.f[i], len);
			/* A cut frame never reaches an RC QP: parse or ICRC stops it. */
			assert_false(frame_parse(&p, t, len) == 0 && (p.layers & FRAME_L_ROCE) &&
				     frame_icrc_ok(t, &p));
			tried++;
			free(t);
		}
	}
	print_message("%llu truncations of %d real frames: all stopped before the RC core\n",
		      (unsigned long long)tried, k.n);
	corpus_free(&k);
}

static void reseal(uint8_t *f, size_t len)
{
	struct frame_parsed p;
	uint32_t icrc;
	size_t end;

	if (frame_parse(&p, f, len) < 0 || !(p.layers & FRAME_L_ROCE))
		return;
	icrc = frame_icrc(f, &p);
	end = (size_t)p.udp_off + p.udp.len;
	for (int b = 0; b < 4; b++)
		f[end - 4 + b] = (uint8_t)(icrc >> (8 * b));
}

static uint64_t drops_total(const struct rc_qp *qp)
{
	uint64_t n = 0;

	for (int d = 0; d < RC_DROP_COUNT; d++)
		n += rc_stats(qp)->drops[d];
	return n;
}

static void test_mutations(void **state)
{
	struct corpus k = { .n = 0 };
	struct rc_params prm = params();
	struct rc_wire_params wp = { .seed = 3 };
	struct rc_pair pr;
	struct frame_roce_spec out;
	uint64_t calls = 0, accepted = 0, counted = 0, rng = 12345, errors = 0;
	uint8_t rbuf[2048];

	(void)state;
	collect(&k);
	rc_pair_open(&pr, &prm, 1024, &wp);
	for (int it = 0; it < 40000; it++) {
		int i = (int)(rng % (uint64_t)k.n), to;
		size_t len = k.len[i];
		uint8_t *f = malloc(len);
		struct frame_parsed p;
		int nflip, rc;

		if (it % 400 == 0) {   /* a fresh pair now and then: errors are legitimate */
			counted += drops_total(pr.s[0].qp) + drops_total(pr.s[1].qp);
			errors += rc_state(pr.s[0].qp) == RC_ERROR || rc_state(pr.s[1].qp) == RC_ERROR;
			rc_pair_close(&pr);
			rc_pair_open(&pr, &prm, 1024, &wp);
			rc_pair_mem(&pr, 1, 4096, true);
			for (int r = 0; r < 4; r++)
				rc_pair_recv(&pr, 1, (uint64_t)r, rbuf, sizeof(rbuf));
		}
		memcpy(f, k.f[i], len);
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		nflip = 1 + (int)(rng >> 60) % 4;
		for (int b = 0; b < nflip; b++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			/* Mostly the transport headers (BTH at 42), sometimes anywhere. */
			size_t off = (rng >> 33) % 4 ? 42 + (rng >> 40) % 32 : (rng >> 40) % len;
			if (off < len)
				f[off] ^= (uint8_t)(1u << ((rng >> 20) % 8));
		}
		reseal(f, len);
		if (frame_parse(&p, f, len) == 0 && (p.layers & FRAME_L_ROCE) &&
		    frame_icrc_ok(f, &p)) {
			to = p.bth.dest_qp == 0x11 ? 0 : 1;
			rc = rc_rx(pr.s[to].qp, f, &p, pr.w.now);
			calls++;
			assert_true(rc == 0 || (rc < 0 && rc >= DROPPED(RC_DROP_COUNT - 1)));
			accepted += rc == 0;
			for (int s = 0; s < 2; s++)
				while (rc_tx_next(pr.s[s].qp, pr.w.now, &out))
					;
			pr.w.now += 100 * QP_NS_PER_US;
			for (int s = 0; s < 2; s++)
				rc_tick(pr.s[s].qp, pr.w.now);
		}
		free(f);
	}
	counted += drops_total(pr.s[0].qp) + drops_total(pr.s[1].qp);
	print_message("mutations: %llu frames reached the RC core, %llu accepted, %llu dropped "
		      "and counted, %llu pairs ended in error (class C)\n",
		      (unsigned long long)calls, (unsigned long long)accepted,
		      (unsigned long long)counted, (unsigned long long)errors);
	assert_true(calls > 10000);
	assert_int_equal(accepted + counted, calls);
	rc_pair_close(&pr);
	corpus_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_drop_reasons),
		cmocka_unit_test(test_read_response_ce),
		cmocka_unit_test(test_psn_span_bounded),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
