/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A growable text buffer for rendering (metrics, JSON): append with printf; an allocation
 * failure is remembered (oom) and later appends are dropped, so callers check once. */
#ifndef QPACE_STRBUF_H
#define QPACE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct qp_strbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

void qp_strbuf_printf(struct qp_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void qp_strbuf_reset(struct qp_strbuf *b);   /* length 0, memory kept */
void qp_strbuf_free(struct qp_strbuf *b);

#endif
