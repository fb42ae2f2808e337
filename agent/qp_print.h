/* Printing what the agent shows, for qpacectl (and anything else that prints QP views).
 *
 * One print helper writes each key once for both outputs (the iproute2 print_uint habit):
 * text "key value" lines or JSON, so the two cannot drift. One field table describes a QP
 * view: its JSON key (also the sort key), its column header in tables, and how to show it.
 */
#ifndef QPACE_QP_PRINT_H
#define QPACE_QP_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/agent.h"

enum qp_pr_mode { QP_PR_TEXT, QP_PR_JSON };

#define QP_PR_DEPTH 8

struct qp_pr {
	FILE *f;
	enum qp_pr_mode mode;
	unsigned depth;
	bool first[QP_PR_DEPTH];
	bool in_array[QP_PR_DEPTH];
};

void qp_pr_init(struct qp_pr *p, FILE *f, enum qp_pr_mode mode);
/* Open / close an object or array (@key NULL inside arrays and at the top). In text,
 * an object with a key prints "key:" and indents what it holds; arrays print nothing. */
void qp_pr_open(struct qp_pr *p, const char *key, bool array);
void qp_pr_close(struct qp_pr *p);
/* One key: @text is how text output shows it (JSON writes the raw value). */
void qp_pr_u64(struct qp_pr *p, const char *key, const char *text, uint64_t v);
void qp_pr_double(struct qp_pr *p, const char *key, const char *text, double v);
void qp_pr_str(struct qp_pr *p, const char *key, const char *v);
void qp_pr_bool(struct qp_pr *p, const char *key, bool v);

/* ---- QP views ---- */

enum qp_field_kind { QF_QPN, QF_IP, QF_STR, QF_U64, QF_RATE, QF_BYTES, QF_TIME, QF_RATIO,
		     QF_BOOL, QF_I32, QF_RECEIVER };

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
/* Every key of @v through the print helper, as one object. */
void qp_pr_view(struct qp_pr *p, const struct agent_qp_view *v);
/* The short text of one field ("10G", "12.5us", "64K", "0x000011"). */
const char *qp_view_cell(const struct qp_view_field *f, const struct agent_qp_view *v,
			 char *buf, size_t len);
/* Order two views by @f (numbers numerically, strings alphabetically). */
int qp_view_cmp(const struct qp_view_field *f, const struct agent_qp_view *a,
		const struct agent_qp_view *b);
/* The table header / one row: the fields with a column header, in table order. */
void qp_view_table_header(FILE *f, const struct qp_view_field *sorted_by, bool descending);
void qp_view_table_row(FILE *f, const struct agent_qp_view *v);

#endif
