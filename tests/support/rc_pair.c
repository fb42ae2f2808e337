/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two connected RC QPs on an in-memory wire (see rc_pair.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rc_pair.h"

static bool pair_find(void *arg, uint32_t rkey, struct rc_region *out)
{
	const struct rc_pair_side *s = arg;

	for (int i = 0; i < s->nmem; i++) {
		if (s->mem[i].rkey != rkey)
			continue;
		*out = (struct rc_region){ .base = s->mem[i].buf,
					   .va = (uint64_t)(uintptr_t)s->mem[i].buf,
					   .len = s->mem[i].len,
					   .remote_write = s->mem[i].access & QP_ACCESS_REMOTE_WRITE,
					   .remote_read = s->mem[i].access & QP_ACCESS_REMOTE_READ,
					   .remote_atomic = s->mem[i].access & QP_ACCESS_REMOTE_ATOMIC };
		return true;
	}
	return false;
}

static void pair_open(struct rc_pair *pr, const struct rc_params *pa,
		      const struct rc_params *pb, uint32_t mtu, const struct rc_wire_params *wp,
		      bool rts_limits)
{
	static const uint32_t qpn[2] = { 0x11, 0x22 }, psn[2] = { 0xfffff0, 0x123456 };
	const struct rc_params *base[2] = { pa, pb };
	char err[160];

	memset(pr, 0, sizeof(*pr));
	for (int i = 0; i < 2; i++) {
		struct rc_params p = *base[i];

		p.qpn = qpn[i];
		p.sq_psn = psn[i];
		p.mr_find = pair_find;
		p.mr_arg = &pr->s[i];
		pr->s[i].qp = rc_create(&p, err, sizeof(err));
		if (!pr->s[i].qp)
			fail_msg("%s", err);
	}
	for (int i = 0; i < 2; i++) {
		struct rc_conn c = { .dest_qpn = qpn[!i], .rq_psn = psn[!i], .mtu_bytes = mtu,
				     .max_rd_atomic = rts_limits ? base[!i]->max_dest_rd_atomic : 0 };

		assert_int_equal(rc_connect(pr->s[i].qp, &c), 0);
	}
	rc_wire_init(&pr->w, wp, pr->s[0].qp, pr->s[1].qp, QP_NS_PER_S);
}

void rc_pair_open2(struct rc_pair *pr, const struct rc_params *pa, const struct rc_params *pb,
		   uint32_t mtu, const struct rc_wire_params *wp)
{
	pair_open(pr, pa, pb, mtu, wp, false);
}

void rc_pair_open_rts(struct rc_pair *pr, const struct rc_params *pa,
		      const struct rc_params *pb, uint32_t mtu, const struct rc_wire_params *wp)
{
	pair_open(pr, pa, pb, mtu, wp, true);
}

void rc_pair_open(struct rc_pair *pr, const struct rc_params *base, uint32_t mtu,
		  const struct rc_wire_params *wp)
{
	rc_pair_open2(pr, base, base, mtu, wp);
}

void rc_pair_close(struct rc_pair *pr)
{
	rc_wire_fini(&pr->w);
	for (int i = 0; i < 2; i++) {
		rc_destroy(pr->s[i].qp);
		for (int m = 0; m < pr->s[i].nmem; m++)
			free(pr->s[i].mem[m].buf);
	}
}

uint32_t rc_pair_mem(struct rc_pair *pr, int i, size_t len, bool remote_write)
{
	return rc_pair_mem_access(pr, i, len, remote_write ? QP_ACCESS_REMOTE_WRITE |
					      QP_ACCESS_REMOTE_READ | QP_ACCESS_REMOTE_ATOMIC : 0);
}

uint32_t rc_pair_mem_access(struct rc_pair *pr, int i, size_t len, unsigned access)
{
	struct rc_pair_side *s = &pr->s[i];
	struct rc_pair_mem *m;

	assert_true(s->nmem < RC_PAIR_MEMS);
	m = &s->mem[s->nmem];
	m->buf = calloc(1, len ? len : 1);
	assert_non_null(m->buf);
	m->len = len;
	m->rkey = 0x1000u * (uint32_t)(i + 1) + (uint32_t)s->nmem + 7;
	m->access = access;
	s->nmem++;
	return m->rkey;
}

static const struct rc_pair_mem *mem_of(const struct rc_pair *pr, int i, uint32_t rkey)
{
	for (int m = 0; m < pr->s[i].nmem; m++)
		if (pr->s[i].mem[m].rkey == rkey)
			return &pr->s[i].mem[m];
	fail_msg("no region with rkey 0x%x on side %d", rkey, i);
	return NULL;
}

uint64_t rc_pair_va(const struct rc_pair *pr, int i, uint32_t rkey)
{
	return (uint64_t)(uintptr_t)mem_of(pr, i, rkey)->buf;
}

uint8_t *rc_pair_buf(const struct rc_pair *pr, int i, uint32_t rkey)
{
	return mem_of(pr, i, rkey)->buf;
}

void rc_pair_post(struct rc_pair *pr, int i, enum qp_opcode op, uint64_t wr_id,
		  const void *buf, uint32_t len, uint64_t remote_addr, uint32_t rkey,
		  uint32_t imm)
{
	struct qp_wr wr = { .opcode = op, .wr_id = wr_id, .addr = (void *)(uintptr_t)buf,
			    .length = len, .remote_addr = remote_addr, .rkey = rkey,
			    .imm = imm, .flags = QP_WR_SIGNALED };

	assert_int_equal(rc_post_send(pr->s[i].qp, &wr, pr->w.now), 0);
}

void rc_pair_atomic(struct rc_pair *pr, int i, enum qp_opcode op, uint64_t wr_id,
		    uint64_t *result, uint64_t remote_addr, uint32_t rkey, uint64_t compare_add,
		    uint64_t swap)
{
	struct qp_wr wr = { .opcode = op, .wr_id = wr_id, .addr = result, .length = 8,
			    .remote_addr = remote_addr, .rkey = rkey, .compare_add = compare_add,
			    .swap = swap, .flags = QP_WR_SIGNALED };

	assert_int_equal(rc_post_send(pr->s[i].qp, &wr, pr->w.now), 0);
}

void rc_pair_recv(struct rc_pair *pr, int i, uint64_t wr_id, void *buf, uint32_t len)
{
	struct qp_recv_wr wr = { .wr_id = wr_id, .addr = buf, .length = len };

	assert_int_equal(rc_post_recv(pr->s[i].qp, &wr), 0);
}

bool rc_pair_poll1(struct rc_pair *pr, int i, struct qp_wc *wc)
{
	return rc_poll_cq(pr->s[i].qp, wc, 1) == 1;
}

struct wait_arg {
	struct rc_pair *pr;
	int i;
	struct qp_wc *wc;
	bool got;
};

static bool wait_done(void *arg)
{
	struct wait_arg *a = arg;

	if (!a->got)
		a->got = rc_pair_poll1(a->pr, a->i, a->wc);
	return a->got;
}

bool rc_pair_wait(struct rc_pair *pr, int i, struct qp_wc *wc, qp_time_ns limit_ns)
{
	struct wait_arg a = { pr, i, wc, false };

	return rc_wire_run(&pr->w, wait_done, &a, pr->w.now + limit_ns);
}
