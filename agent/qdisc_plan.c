/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Where qpaced puts fq on a device, and how it puts it back (qdisc_plan.h). Pure. */
#include "qdisc_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pkt_sched.h>

#include "qpace/errmsg.h"

/* Qdiscs that have classes: fq cannot take their place without their classes and filters,
 * which qpaced would not put back. */
static const char *const classful[] = { "htb", "hfsc", "prio", "drr", "qfq", "cbq", "ets",
					"multiq", "mqprio", "taprio", "atm", "dsmark" };

static bool is_classful(const char *kind)
{
	for (size_t i = 0; i < sizeof(classful) / sizeof(classful[0]); i++)
		if (!strcmp(kind, classful[i]))
			return true;
	return false;
}

static void add_fq(struct qd_plan *p, uint32_t parent, uint32_t major)
{
	p->fq_parent[p->nfq] = parent;
	p->fq_handle[p->nfq++] = major << 16;
}

static void add_undo(struct qd_plan *p, unsigned kind, uint32_t parent, uint32_t handle,
		     const struct qd *q)
{
	struct qd_undo *u = &p->undo[p->nundo++];

	u->kind = kind;
	u->parent = parent;
	u->handle = handle;
	if (q)
		u->qd = *q;
}

static void describe(struct qd_plan *p, const struct qd *root, const char *how)
{
	char h[16];

	snprintf(p->what, sizeof(p->what), "%s %s root (%s)", root->kind,
		 qd_handle_fmt(root->handle, h, sizeof(h)), how);
}

/* fq as the leaf of class @classid: the leaf shown there (if any) goes back on exit. */
static int plan_class(const struct qd *q, unsigned n, uint32_t classid, struct qd_plan *p)
{
	char c[16], h[16];

	for (unsigned i = 0; i < n; i++) {
		if (q[i].parent != classid)
			continue;
		if (!strcmp(q[i].kind, "fq")) {
			snprintf(p->what, sizeof(p->what), "fq %s under class %s (used as it is)",
				 qd_handle_fmt(q[i].handle, h, sizeof(h)),
				 qd_handle_fmt(classid, c, sizeof(c)));
			return 0;
		}
		add_fq(p, classid, QD_FQ_MAJOR);
		add_undo(p, QD_UNDO_PUT, classid, q[i].handle, &q[i]);
		snprintf(p->what, sizeof(p->what), "%s %s under class %s (put back on exit)",
			 q[i].kind, qd_handle_fmt(q[i].handle, h, sizeof(h)),
			 qd_handle_fmt(classid, c, sizeof(c)));
		return 0;
	}
	add_fq(p, classid, QD_FQ_MAJOR);
	add_undo(p, QD_UNDO_DEL, classid, QD_FQ_MAJOR << 16, NULL);
	snprintf(p->what, sizeof(p->what), "class %s's default leaf (back on exit)",
		 qd_handle_fmt(classid, c, sizeof(c)));
	return 0;
}

/* fq under each of mq's queues. */
static int plan_mq(const struct qd *q, unsigned n, const struct qd *root, struct qd_plan *p)
{
	unsigned leaves = 0, fq = 0, own = 0;

	for (unsigned i = 0; i < n; i++) {
		if (&q[i] == root || TC_H_MAJ(q[i].parent) != TC_H_MAJ(root->handle) ||
		    q[i].parent == TC_H_ROOT)
			continue;
		leaves++;
		fq += !strcmp(q[i].kind, "fq");
		own += q[i].handle == 0;
	}
	if (leaves && fq == leaves) {
		describe(p, root, "its queues' fq used as they are");
		return 0;
	}
	if (leaves > QD_MAX - 1 || leaves > 0xffffu - QD_FQ_MAJOR)
		return -E2BIG;
	/* the kernel's mq has handle 0:, which names no class: ours takes its place first,
	 * and deleting ours brings the kernel's tree back, which it cannot do for leaves an
	 * operator put under the kernel's mq */
	if (!root->handle && own != leaves)
		return -EPERM;
	p->mq_root = !root->handle;
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (&q[i] == root || TC_H_MAJ(q[i].parent) != TC_H_MAJ(root->handle) ||
		    q[i].parent == TC_H_ROOT)
			continue;
		add_fq(p, p->mq_root ? TC_H_MAKE(QD_FQ_MAJOR << 16, TC_H_MIN(q[i].parent))
				     : q[i].parent, QD_FQ_MAJOR + 1 + k++);
		if (root->handle || own != leaves)
			add_undo(p, QD_UNDO_PUT, q[i].parent, q[i].handle, &q[i]);
	}
	if (p->mq_root) {
		add_undo(p, QD_UNDO_DEL_ROOT, TC_H_ROOT, 0, NULL);
		describe(p, root, "the kernel's own: an mq of qpaced's with fq under each "
			 "queue, the default back on exit");
	} else {
		describe(p, root, "fq under its queues, each queue's qdisc put back on exit");
	}
	return 0;
}

int qd_plan(const struct qd *q, unsigned n, unsigned policy, uint32_t classid,
	    struct qd_plan *p, char *err, size_t errlen)
{
	const struct qd *root = NULL;
	char h[16];

	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < n && !root; i++)
		if (q[i].parent == TC_H_ROOT)
			root = &q[i];
	if (!root)
		return qp_errmsg(-EINVAL, err, errlen, "no root qdisc");
	if (classid)
		return plan_class(q, n, classid, p);
	if (!strcmp(root->kind, "fq")) {
		describe(p, root, "used as it is");
		return 0;
	}
	if (!strcmp(root->kind, "mq")) {
		int rc = plan_mq(q, n, root, p);

		if (rc == -EPERM)
			return qp_errmsg(rc, err, errlen, "the root qdisc is the kernel's mq 0: with "
					 "the operator's qdiscs under its queues: fq would need an mq of "
					 "its own, and those could not be put back; --wire-fq-parent "
					 "MAJ:MIN puts fq under one queue of an mq with a handle");
		return rc ? qp_errmsg(rc, err, errlen, "mq root with more than %d queues",
				      QD_MAX - 1) : 0;
	}
	qd_handle_fmt(root->handle, h, sizeof(h));
	if (is_classful(root->kind))
		return qp_errmsg(-EPERM, err, errlen, "the root qdisc is %s %s, classful: qpaced "
				 "keeps it and does not replace it (its classes and filters could "
				 "not be put back); --wire-fq-parent MAJ:MIN puts fq as the leaf "
				 "of one of its classes, the one RoCE takes (tc class show dev "
				 "IFACE)", root->kind, h);
	if (!root->handle) {   /* the kernel attached it: deleting ours brings it back */
		add_fq(p, TC_H_ROOT, QD_FQ_MAJOR);
		add_undo(p, QD_UNDO_DEL_ROOT, TC_H_ROOT, 0, NULL);
		describe(p, root, "the kernel's default: fq in its place, the default back on "
			 "exit");
		return 0;
	}
	if (policy != QD_REPLACE)
		return qp_errmsg(-EPERM, err, errlen, "the root qdisc is %s %s, set by the "
				 "operator and classless (fq cannot go under it): qpaced keeps it; "
				 "--wire-qdisc replace puts fq in its place while qpaced runs and "
				 "this %s back on exit", root->kind, h, root->kind);
	if (root->opts_cut)
		return qp_errmsg(-EPERM, err, errlen, "the root qdisc %s %s has options too long "
				 "to put back: not replaced", root->kind, h);
	add_fq(p, TC_H_ROOT, QD_FQ_MAJOR);
	add_undo(p, QD_UNDO_PUT, TC_H_ROOT, root->handle, root);
	describe(p, root, "the operator's: fq in its place (--wire-qdisc replace), put back on "
		 "exit");
	return 0;
}

int qd_classid_parse(const char *s, uint32_t *out)
{
	char *e;
	unsigned long maj, min;

	maj = strtoul(s, &e, 16);
	if (e == s || *e != ':' || maj > 0xfffe)
		return -EINVAL;
	s = e + 1;
	min = strtoul(s, &e, 16);
	if (e == s || *e || !min || min > 0xffff)
		return -EINVAL;
	*out = (uint32_t)(maj << 16 | min);
	return 0;
}
