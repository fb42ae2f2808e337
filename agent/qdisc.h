/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device's qdiscs through rtnetlink (no `tc` binary): dump them as the kernel has them
 * (kind, handle, parent, the TCA_OPTIONS attribute's bytes as they are), add or replace
 * one (so a dumped qdisc goes back as it was: the same handle, kind and options), delete
 * one, and fq with the options qpaced gives it. qdisc_plan.h decides what goes where.
 *
 * The dump's parser is pure (qd_parse: bytes in, records out), every length checked: the
 * kernel's answer is input like any other (tests/fuzz/fuzz_qdisc.c). Errors: negative
 * errno, with a line in @err naming the operation. */
#ifndef QPACE_AGENT_QDISC_H
#define QPACE_AGENT_QDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/rate.h"

#define QD_KIND_MAX 16
#define QD_OPTS_MAX 1024             /* a TCA_OPTIONS bigger than this is not kept */
#define QD_MAX 64                    /* qdiscs of one device we look at */

struct qd {
	uint32_t handle, parent;     /* as tcm_handle, tcm_parent (TC_H_ROOT for the root) */
	char kind[QD_KIND_MAX];
	uint16_t opts_type;          /* TCA_OPTIONS' nla_type as dumped (NLA_F_NESTED kept) */
	uint16_t opts_len;           /* its payload bytes; 0 = none */
	bool has_opts;
	bool opts_cut;               /* longer than QD_OPTS_MAX: cannot be put back */
	uint8_t opts[QD_OPTS_MAX];
};

/* Parse one buffer of an RTM_GETQDISC dump reply: the RTM_NEWQDISC records of @ifindex are
 * appended to @out (@max entries, *@n so far); *@done when NLMSG_DONE was seen. 0, or a
 * negative errno: -EPROTO for a malformed message, -ENOSPC past @max, the kernel's error
 * for an NLMSG_ERROR. */
int qd_parse(const void *buf, size_t len, int ifindex, struct qd *out, unsigned max,
	     unsigned *n, bool *done);

/* The qdiscs of @ifindex, ingress and clsact left out. */
int qd_dump(int ifindex, struct qd *out, unsigned max, unsigned *n, char *err, size_t errlen);

/* Create or replace (@replace) @q on @ifindex at q->parent with q->handle (0: the kernel
 * picks one), its kind and options as given. */
int qd_put(int ifindex, const struct qd *q, bool replace, char *err, size_t errlen);

/* Delete the qdisc at @parent (its handle @handle, 0: whatever is there). */
int qd_del(int ifindex, uint32_t parent, uint32_t handle, char *err, size_t errlen);

/* fq at @parent with @handle, qpaced's options: a 2 s horizon that caps (not drops), 1000
 * packets a flow, 100000 in all, and per-flow @maxrate (0: none). @change: change the fq
 * there, not create one. */
int qd_fq(int ifindex, uint32_t parent, uint32_t handle, qp_rate_bps maxrate, bool change,
	  char *err, size_t errlen);

/* "1:10", "root", "ffff:fff1": @h as tc writes a handle or parent, into @buf. */
const char *qd_handle_fmt(uint32_t h, char *buf, size_t len);

#endif
