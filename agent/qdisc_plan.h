/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Where qpaced puts fq on a device, and how it puts the device back (docs/enforce.md,
 * "What qpaced changes on a host"). Pure: the device's qdiscs in (qdisc.h's dump), a plan
 * out. The operator's root stays the root:
 *
 *   the kernel's own root (handle 0:, never set by anyone: fq_codel, pfifo_fast, noqueue)
 *                fq replaces it; put back by deleting the root, which makes the kernel
 *                attach its default again, exactly as it was
 *   mq           fq under each of its queues; put back by deleting the root when the mq
 *                and its leaves are the kernel's own, else each leaf as it was. The
 *                kernel's mq (handle 0:) has no handle its classes can be named by, so
 *                it is replaced by an mq of ours (QD_FQ_MAJOR:) first
 *   fq           (the root, or every mq leaf) used as it is; nothing changes
 *   a class     (--wire-fq-parent MAJ:MIN, any root) fq as that class's leaf; put back:
 *                the leaf there before, as it was, or (none shown: the class's default)
 *                by deleting ours
 *   the operator's classless root (fq_codel 8001:, tbf, ...): refused, naming it, unless
 *                --wire-qdisc replace: fq in its place while qpaced runs, the same qdisc
 *                (handle, kind, options) put back on exit
 *   a classful root without --wire-fq-parent (htb, prio, ...): refused, naming it; its
 *                classes and filters could not be put back, so it is never replaced
 *
 * Our fq: handle QD_FQ_MAJOR: (at the root or a class), QD_FQ_MAJOR + 1 + i: under mq's
 * i-th queue. */
#ifndef QPACE_AGENT_QDISC_PLAN_H
#define QPACE_AGENT_QDISC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qdisc.h"

#define QD_FQ_MAJOR 0x5150u           /* "QP" */

enum qd_policy { QD_KEEP = 0, QD_REPLACE = 1 };   /* --wire-qdisc keep|replace */

enum qd_undo_kind {
	QD_UNDO_DEL_ROOT = 1,        /* delete the root: the kernel's default comes back */
	QD_UNDO_PUT,                 /* put qd back (replace at its parent, its handle) */
	QD_UNDO_DEL,                 /* delete ours at parent: the class's default comes back */
};

struct qd_undo {
	unsigned kind;               /* enum qd_undo_kind */
	uint32_t parent, handle;     /* QD_UNDO_DEL: ours there */
	struct qd qd;                /* QD_UNDO_PUT */
};

struct qd_plan {
	bool mq_root;                /* first an mq at the root, handle QD_FQ_MAJOR: */
	unsigned nfq;                /* fq to put: at fq_parent[i] with fq_handle[i] */
	uint32_t fq_parent[QD_MAX], fq_handle[QD_MAX];
	unsigned nundo;              /* what puts the device back, in order */
	struct qd_undo undo[QD_MAX];
	char what[160];              /* what was there, for the log: "mq 0: (the kernel's ...)" */
};

/* Plan fq on a device whose qdiscs are @q[0..@n) (ingress and clsact left out) under
 * @policy and @classid (--wire-fq-parent; 0: none). 0 with *@p filled, or -EPERM with the
 * reason in @err (what is there and the flag that allows more), -EINVAL when there is no
 * root. */
int qd_plan(const struct qd *q, unsigned n, unsigned policy, uint32_t classid,
	    struct qd_plan *p, char *err, size_t errlen);

/* "1:10" -> 0x00010010: 0, or -EINVAL ("root", a bare major, anything else). */
int qd_classid_parse(const char *s, uint32_t *out);

#endif
