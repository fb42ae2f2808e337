/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Printing what the agent shows, for qpacectl (and anything else that prints QP views or
 * the agent's status): the records of the control socket through the one printer
 * (qpace/out.h), so text and JSON carry the same keys. One field table describes a QP view:
 * its key (also the sort key), its column header in tables, and how to show it.
 */
#ifndef QPACE_QP_PRINT_H
#define QPACE_QP_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/agent.h"
#include "qpace/ctl.h"
#include "qpace/out.h"
#include "qpace/rdma_nl.h"

/* ---- QP views ---- */

enum qp_field_kind { QF_QPN, QF_IP, QF_STR, QF_U64, QF_RATE, QF_BYTES, QF_TIME, QF_RATIO,
		     QF_BOOL, QF_I32, QF_RECEIVER, QF_ENFORCE };

struct qp_view_field {
	const char *key;       /* JSON key and sort key */
	const char *head;      /* table column header; NULL = not a column */
	int width;
	enum qp_field_kind kind;
	size_t off;            /* into struct agent_qp_view */
	size_t size;           /* of that member */
};

const struct qp_view_field *qp_view_fields(void);   /* ends with { .key = NULL } */
const struct qp_view_field *qp_view_field_find(const char *key);
/* Every key of @v, as one object; with @owner (the QP's entry in the rdma netlink dump,
 * NULL = none) also owner_pid, owner_comm, owner_dev, owner_lqpn. */
void qp_print_view(struct qp_out *o, const struct agent_qp_view *v);
void qp_print_view_owned(struct qp_out *o, const struct agent_qp_view *v,
			 const struct rdma_nl_qp *owner);
/* The dump's entry of the QP @v shows: a QP a program registered by its own (local) QPN;
 * a QP found on the wire (whose QPN qpaced made up) by the peer QPN it is connected to.
 * NULL when the dump does not know it. */
const struct rdma_nl_qp *qp_view_owner(const struct agent_qp_view *v,
				       const struct rdma_nl_qp *dump, size_t n);
/* "PID/COMM" of a user QP, "[NAME]" of a kernel one, "-" for none. */
const char *qp_owner_cell(const struct rdma_nl_qp *owner, char *buf, size_t len);
/* The agent's status (STATUS's AGENT record), as one object: pid, QPs, uptime, the
 * feedback delay and every counter by its name. */
void qp_print_status(struct qp_out *o, const struct ctl_agent *a);
/* The short text of one field ("10G", "12.5us", "64K", "0x000011"). */
const char *qp_view_cell(const struct qp_view_field *f, const struct agent_qp_view *v,
			 char *buf, size_t len);
/* Order two views by @f (numbers numerically, strings alphabetically). */
int qp_view_cmp(const struct qp_view_field *f, const struct agent_qp_view *a,
		const struct agent_qp_view *b);
/* The table header / one row: the fields with a column header, in table order, then
 * OWNER (qp_owner_cell of @owner). */
void qp_view_table_header(FILE *f, const struct qp_view_field *sorted_by, bool descending);
void qp_view_table_row(FILE *f, const struct agent_qp_view *v, const struct rdma_nl_qp *owner);

#endif
