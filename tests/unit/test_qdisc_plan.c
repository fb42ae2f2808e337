/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Where qpaced puts fq and how it puts a device back (agent/qdisc_plan.h), and the
 * rtnetlink qdisc dump's parser (agent/qdisc.h), on dumps built here: the kernel's default
 * root replaced and deleted again; mq kept as the root with fq under each queue; fq used
 * as it is; the operator's classless root refused, or with replace put back with its
 * handle, kind and options; a classful root refused, or fq as one class's leaf; the dump's
 * other devices, clsact and malformed messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "qdisc.h"
#include "qdisc_plan.h"

static struct qd q[QD_MAX];
static struct qd_plan p;
static char err[300];

static struct qd mk(const char *kind, uint32_t handle, uint32_t parent)
{
	struct qd d = { .handle = handle, .parent = parent };

	strcpy(d.kind, kind);
	return d;
}

/* ---- the parser ---- */

static size_t put_msg(uint8_t *b, size_t at, uint16_t type, int ifindex, uint32_t handle,
		      uint32_t parent, const char *kind, const uint8_t *opts, uint16_t olen)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_MULTI };
	struct tcmsg t = { .tcm_ifindex = ifindex, .tcm_handle = handle, .tcm_parent = parent };
	size_t off = at + NLMSG_HDRLEN;

	memcpy(b + off, &t, sizeof(t));
	off += NLMSG_ALIGN(sizeof(t));
	if (kind) {
		struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + strlen(kind) + 1),
				    .nla_type = TCA_KIND };

		memcpy(b + off, &a, sizeof(a));
		memcpy(b + off + NLA_HDRLEN, kind, strlen(kind) + 1);
		off += NLA_ALIGN(a.nla_len);
	}
	if (opts) {
		struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + olen), .nla_type = TCA_OPTIONS };

		memcpy(b + off, &a, sizeof(a));
		memcpy(b + off + NLA_HDRLEN, opts, olen);
		off += NLA_ALIGN(a.nla_len);
	}
	h.nlmsg_len = (uint32_t)(off - at);
	memcpy(b + at, &h, sizeof(h));
	return off;
}

static void test_parse(void **state)
{
	static uint8_t b[4096];
	static const uint8_t opts[12] = { 8, 0, TCA_FQ_CODEL_LIMIT, 0, 0x40, 0x28, 0, 0, 1, 2, 3, 4 };
	struct nlmsghdr done = { .nlmsg_len = NLMSG_HDRLEN + 4, .nlmsg_type = NLMSG_DONE };
	unsigned n = 0;
	bool fin = false;
	size_t len;

	(void)state;
	len = put_msg(b, 0, RTM_NEWQDISC, 2, 0, TC_H_ROOT, "fq_codel", opts, sizeof(opts));
	len = put_msg(b, len, RTM_NEWQDISC, 2, 0xffff0000u, TC_H_CLSACT, "clsact", NULL, 0);
	len = put_msg(b, len, RTM_NEWQDISC, 3, 0, TC_H_ROOT, "noqueue", NULL, 0);
	memcpy(b + len, &done, sizeof(done));
	len += NLMSG_HDRLEN + 4;
	assert_int_equal(qd_parse(b, len, 2, q, QD_MAX, &n, &fin), 0);
	assert_true(fin);
	assert_int_equal(n, 1);                        /* clsact and device 3 left out */
	assert_string_equal(q[0].kind, "fq_codel");
	assert_int_equal(q[0].parent, TC_H_ROOT);
	assert_true(q[0].has_opts);
	assert_int_equal(q[0].opts_type, TCA_OPTIONS);
	assert_int_equal(q[0].opts_len, sizeof(opts));
	assert_memory_equal(q[0].opts, opts, sizeof(opts));
	/* full */
	n = 0;
	assert_int_equal(qd_parse(b, len, 2, q, 0, &n, &fin), -ENOSPC);
	/* an attribute longer than its message */
	len = put_msg(b, 0, RTM_NEWQDISC, 2, 0, TC_H_ROOT, "fq", NULL, 0);
	b[NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct tcmsg))] = 200;
	n = 0;
	assert_int_equal(qd_parse(b, len, 2, q, QD_MAX, &n, &fin), -EPROTO);
	/* a kind without its NUL, a message without a kind */
	len = put_msg(b, 0, RTM_NEWQDISC, 2, 0, TC_H_ROOT, "fq", NULL, 0);
	b[NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct tcmsg)) + NLA_HDRLEN + 2] = 'x';
	assert_int_equal(qd_parse(b, len, 2, q, QD_MAX, &n, &fin), -EPROTO);
	len = put_msg(b, 0, RTM_NEWQDISC, 2, 0, TC_H_ROOT, NULL, NULL, 0);
	assert_int_equal(qd_parse(b, len, 2, q, QD_MAX, &n, &fin), -EPROTO);
	/* the kernel's error */
	{
		struct nlmsghdr h = { .nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr),
				      .nlmsg_type = NLMSG_ERROR };
		struct nlmsgerr e = { .error = -EPERM };

		memcpy(b, &h, sizeof(h));
		memcpy(b + NLMSG_HDRLEN, &e, sizeof(e));
		assert_int_equal(qd_parse(b, h.nlmsg_len, 2, q, QD_MAX, &n, &fin), -EPERM);
	}
}

/* ---- plans ---- */

static void test_default_root(void **state)
{
	(void)state;
	q[0] = mk("fq_codel", 0, TC_H_ROOT);
	assert_int_equal(qd_plan(q, 1, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nfq, 1);
	assert_int_equal(p.fq_parent[0], TC_H_ROOT);
	assert_int_equal(p.fq_handle[0], QD_FQ_MAJOR << 16);
	assert_int_equal(p.nundo, 1);
	assert_int_equal(p.undo[0].kind, QD_UNDO_DEL_ROOT);
	assert_non_null(strstr(p.what, "fq_codel 0: root"));
	q[0] = mk("noqueue", 0, TC_H_ROOT);
	assert_int_equal(qd_plan(q, 1, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.undo[0].kind, QD_UNDO_DEL_ROOT);
	assert_int_equal(qd_plan(q, 0, QD_KEEP, 0, &p, err, sizeof(err)), -EINVAL);
}

static void test_mq(void **state)
{
	(void)state;
	/* the kernel's mq and leaves (handle 0: names no class): an mq of ours, fq under each
	 * of its queues, the root deleted on exit */
	q[0] = mk("mq", 0, TC_H_ROOT);
	for (uint32_t i = 1; i <= 4; i++)
		q[i] = mk("fq_codel", 0, TC_H_MAKE(0, i));
	assert_int_equal(qd_plan(q, 5, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_true(p.mq_root);
	assert_int_equal(p.nfq, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(p.fq_parent[i], TC_H_MAKE(QD_FQ_MAJOR << 16, i + 1));
		assert_int_equal(p.fq_handle[i], (QD_FQ_MAJOR + 1 + i) << 16);
	}
	assert_int_equal(p.nundo, 1);
	assert_int_equal(p.undo[0].kind, QD_UNDO_DEL_ROOT);
	/* ... with an operator's leaf under one of its queues: refused */
	q[2].handle = 0x80020000u;
	assert_int_equal(qd_plan(q, 5, QD_KEEP, 0, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "mq 0:"));
	/* the operator's mq 1: with leaves of their own: each put back */
	q[0] = mk("mq", 0x10000, TC_H_ROOT);
	for (uint32_t i = 1; i <= 4; i++)
		q[i] = mk("fq_codel", (0x8000 + i) << 16, TC_H_MAKE(0x10000, i));
	assert_int_equal(qd_plan(q, 5, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_false(p.mq_root);
	assert_int_equal(p.nfq, 4);
	assert_int_equal(p.fq_parent[2], TC_H_MAKE(0x10000, 3));
	assert_int_equal(p.nundo, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(p.undo[i].kind, QD_UNDO_PUT);
		assert_int_equal(p.undo[i].qd.handle, (0x8001 + i) << 16);
		assert_int_equal(p.undo[i].qd.parent, TC_H_MAKE(0x10000, i + 1));
	}
	/* fq under every queue already: nothing to do */
	for (uint32_t i = 1; i <= 4; i++)
		strcpy(q[i].kind, "fq");
	assert_int_equal(qd_plan(q, 5, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nfq, 0);
	assert_int_equal(p.nundo, 0);
}

static void test_operator_root(void **state)
{
	(void)state;
	q[0] = mk("fq", 0x80010000u, TC_H_ROOT);
	assert_int_equal(qd_plan(q, 1, QD_KEEP, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nfq, 0);
	q[0] = mk("fq_codel", 0x80010000u, TC_H_ROOT);
	q[0].has_opts = true;
	q[0].opts_len = 3;
	memcpy(q[0].opts, "abc", 3);
	assert_int_equal(qd_plan(q, 1, QD_KEEP, 0, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "fq_codel 8001:"));
	assert_non_null(strstr(err, "--wire-qdisc replace"));
	assert_int_equal(p.nfq, 0);
	assert_int_equal(qd_plan(q, 1, QD_REPLACE, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nfq, 1);
	assert_int_equal(p.fq_parent[0], TC_H_ROOT);
	assert_int_equal(p.nundo, 1);
	assert_int_equal(p.undo[0].kind, QD_UNDO_PUT);
	assert_int_equal(p.undo[0].qd.handle, 0x80010000u);
	assert_string_equal(p.undo[0].qd.kind, "fq_codel");
	assert_memory_equal(p.undo[0].qd.opts, "abc", 3);
	q[0].opts_cut = true;
	assert_int_equal(qd_plan(q, 1, QD_REPLACE, 0, &p, err, sizeof(err)), -EPERM);
}

static void test_classful(void **state)
{
	(void)state;
	q[0] = mk("htb", 0x10000, TC_H_ROOT);
	q[1] = mk("fq_codel", 0x100000, 0x10010);
	for (unsigned pol = QD_KEEP; pol <= QD_REPLACE; pol++) {
		assert_int_equal(qd_plan(q, 2, pol, 0, &p, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "htb 1:"));
		assert_non_null(strstr(err, "--wire-fq-parent"));
	}
	/* fq as the leaf of 1:10: its fq_codel 10: goes back on exit */
	assert_int_equal(qd_plan(q, 2, QD_KEEP, 0x10010, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nfq, 1);
	assert_int_equal(p.fq_parent[0], 0x10010);
	assert_int_equal(p.fq_handle[0], QD_FQ_MAJOR << 16);
	assert_int_equal(p.nundo, 1);
	assert_int_equal(p.undo[0].kind, QD_UNDO_PUT);
	assert_int_equal(p.undo[0].qd.handle, 0x100000);
	/* 1:20 shows no leaf (htb's default pfifo): deleting ours brings it back */
	assert_int_equal(qd_plan(q, 2, QD_KEEP, 0x10020, &p, err, sizeof(err)), 0);
	assert_int_equal(p.undo[0].kind, QD_UNDO_DEL);
	assert_int_equal(p.undo[0].parent, 0x10020);
	assert_int_equal(p.undo[0].handle, QD_FQ_MAJOR << 16);
}

static void test_classid(void **state)
{
	static const char *const bad[] = { "root", "1:", ":10", "1:0", "10000:1", "1:10000",
					   "x:1", "1:1x", "" };
	uint32_t c;

	(void)state;
	assert_int_equal(qd_classid_parse("1:10", &c), 0);
	assert_int_equal(c, 0x10010);
	assert_int_equal(qd_classid_parse("ff:ffff", &c), 0);
	assert_int_equal(c, 0xffffff);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(qd_classid_parse(bad[i], &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_default_root),
		cmocka_unit_test(test_mq),
		cmocka_unit_test(test_operator_root),
		cmocka_unit_test(test_classful),
		cmocka_unit_test(test_classid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
